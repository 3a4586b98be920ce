"""Listening TCP sockets: asked of the kernel by state (sock_diag, see
Host.tcp_listeners), or read from /proc/net/tcp and /proc/net/tcp6."""

from __future__ import annotations

import contextlib
import os

from ztsa.host import Host, ProbeError
from ztsa.records import NamedTuple

LISTEN = "0A"


class Listener(NamedTuple):
    address: bytes  # 4 or 16 bytes, network order
    port: int
    inode: str
    table: str

    def _v4(self) -> bytes | None:
        """The IPv4 address, also for an IPv4-mapped IPv6 one."""
        a = self.address
        if len(a) == 4:
            return a
        return a[12:] if a[:12] == _MAPPED else None

    @property
    def wildcard(self) -> bool:
        v4 = self._v4()
        return v4 == bytes(4) if v4 is not None else self.address == bytes(16)

    @property
    def loopback(self) -> bool:
        v4 = self._v4()
        return v4[0] == 127 if v4 is not None else self.address == _V6_LOOPBACK

    def show(self) -> str:
        import ipaddress  # only when reporting

        if len(self.address) == 4:
            return f"{ipaddress.IPv4Address(self.address)}:{self.port}"
        v4 = self._v4()
        if v4 is not None:
            return f"[::ffff:{ipaddress.IPv4Address(v4)}]:{self.port}"
        return f"[{ipaddress.IPv6Address(self.address)}]:{self.port}"


_MAPPED = bytes(10) + b"\xff\xff"
_V6_LOOPBACK = bytes(15) + b"\x01"


def _addr(hexaddr: str) -> bytes:
    raw = bytes.fromhex(hexaddr)
    if len(raw) not in (4, 16):
        raise ValueError(f"bad address length {len(raw)}")
    # the kernel prints each 32-bit word in host (little-endian) order
    return b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))


def listeners(host: Host) -> list[Listener]:
    """Every TCP socket in LISTEN state. Raises ProbeError if neither table is there."""
    cached = host.cache.get("listeners")
    if cached is not None:
        return list(cached)
    asked = host.tcp_listeners()
    if asked is not None:
        out = [Listener(addr, port, inode, "/proc/net/tcp" if fam == 2 else "/proc/net/tcp6")
               for fam, addr, port, inode in asked]
        host.cache["listeners"] = tuple(out)
        return out
    out = []
    seen = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        text = host.read_text(table)
        if text is None:
            continue
        seen += 1
        for lineno, line in enumerate(text.splitlines()[1:], start=2):
            parts = line.split()
            if len(parts) < 10:
                continue
            if parts[3] != LISTEN:
                continue
            try:
                hexaddr, hexport = parts[1].split(":")
                out.append(Listener(_addr(hexaddr), int(hexport, 16), parts[9], table))
            except ValueError as exc:
                raise ProbeError(table, f"line {lineno}: {exc}") from exc
    if not seen:
        raise ProbeError("/proc/net/tcp", "neither /proc/net/tcp nor /proc/net/tcp6 exists")
    host.cache["listeners"] = tuple(out)
    return out


def owners(host: Host, inodes: set[str]) -> dict[str, str]:
    """inode -> "pid N (comm)" for the sockets whose owner is visible to us."""
    found: dict[str, str] = {}
    if not inodes:
        return found
    wanted = {f"socket:[{i}]": i for i in inodes}
    for pid in host.pids():
        fd_dir = host.path(f"/proc/{pid}/fd")
        try:
            fds = os.listdir(fd_dir)
        except OSError:
            continue
        for fd in fds:
            try:
                target = os.readlink(os.path.join(fd_dir, fd))
            except OSError:
                continue
            inode = wanted.get(target)
            if inode and inode not in found:
                comm = ""
                with contextlib.suppress(ProbeError):
                    comm = (host.read_text(f"/proc/{pid}/comm") or "").strip()
                found[inode] = f"pid {pid} ({comm})" if comm else f"pid {pid}"
        if len(found) == len(wanted):
            break
    return found

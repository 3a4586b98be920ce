"""Listening sockets from /proc/net/tcp and /proc/net/tcp6."""

from __future__ import annotations

import contextlib
import ipaddress
import os
from typing import NamedTuple

from ztsa.host import Host, ProbeError

LISTEN = "0A"


class Listener(NamedTuple):
    address: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int
    inode: str
    table: str

    @property
    def wildcard(self) -> bool:
        a = self.address
        if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:
            return a.ipv4_mapped.is_unspecified
        return a.is_unspecified

    @property
    def loopback(self) -> bool:
        a = self.address
        if isinstance(a, ipaddress.IPv6Address) and a.ipv4_mapped is not None:
            return a.ipv4_mapped.is_loopback
        return a.is_loopback

    def show(self) -> str:
        a = self.address
        if isinstance(a, ipaddress.IPv6Address):
            mapped = a.ipv4_mapped
            return f"[::ffff:{mapped}]:{self.port}" if mapped else f"[{a}]:{self.port}"
        return f"{a}:{self.port}"


def _addr(hexaddr: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    raw = bytes.fromhex(hexaddr)
    # the kernel prints each 32-bit word in host (little-endian) order
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, len(raw), 4))
    if len(words) == 4:
        return ipaddress.IPv4Address(words)
    if len(words) == 16:
        return ipaddress.IPv6Address(words)
    raise ValueError(f"bad address length {len(raw)}")


def listeners(host: Host) -> list[Listener]:
    """Every TCP socket in LISTEN state. Raises ProbeError if neither table is there."""
    out: list[Listener] = []
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

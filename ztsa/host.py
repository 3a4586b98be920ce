"""The host view: the only way rules read the machine.

Every path a rule asks for is an absolute path on the audited machine; the host maps
it under ``root`` (``/`` in real use, a temporary tree in tests). ``/proc`` lives
under ``proc`` and the environment is ``environ``. Nothing here writes, mounts or
starts a process.

Errors: a path that does not exist reads as ``None``/absent. Anything else that stops
a probe from deciding (permission denied, a symlink loop, undecodable bytes, a file
too large) raises :class:`ProbeError`; the engine turns an uncaught one into
``unknown`` for that rule.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator, Mapping
from functools import cached_property

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

MAX_READ = 16 * 1024 * 1024
_ABSENT = (errno.ENOENT, errno.ENOTDIR)


class ProbeError(Exception):
    """A probe could not decide; the message says what and why."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"cannot read {path}: {reason}")
        self.path = path
        self.reason = reason


def _reason(exc: OSError) -> str:
    return exc.strerror or exc.__class__.__name__


class Mount(NamedTuple):
    mount_point: str
    options: frozenset[str]  # per-mount options (ro/rw, nosuid, ...)
    super_options: frozenset[str]  # superblock options
    fstype: str
    source: str
    root: str


class Host:
    def __init__(
        self,
        root: str = "/",
        proc: str = "/proc",
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.root = os.path.abspath(root)
        self.proc = os.path.abspath(proc)
        self.environ: Mapping[str, str] = dict(os.environ if environ is None else environ)
        # memo of parsed files that several rules read (status, mountinfo, listeners)
        self.cache: dict[str, Any] = {}

    # -- paths -------------------------------------------------------------------------
    def path(self, p: str) -> str:
        """Map an absolute path of the audited machine to a real path."""
        if p.startswith("/proc/") or p == "/proc":
            return self.proc + p[5:]
        if self.root == "/":
            return p
        return self.root + p if p.startswith("/") else os.path.join(self.root, p)

    @cached_property
    def home(self) -> str | None:
        """The audited user's home (``$HOME``), as a path on the audited machine."""
        home = self.environ.get("HOME")
        return home if home and home.startswith("/") else None

    # -- metadata ----------------------------------------------------------------------
    def lstat(self, p: str) -> os.stat_result | None:
        try:
            return os.lstat(self.path(p))
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            raise ProbeError(p, _reason(exc)) from exc

    def stat(self, p: str) -> os.stat_result | None:
        try:
            return os.stat(self.path(p))
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            if exc.errno == errno.ELOOP:
                raise ProbeError(p, "symlink loop") from exc
            raise ProbeError(p, _reason(exc)) from exc

    def exists(self, p: str) -> bool:
        return self.lstat(p) is not None

    def is_socket(self, p: str) -> bool:
        st = self.stat(p)
        return st is not None and stat.S_ISSOCK(st.st_mode)

    def is_dir(self, p: str) -> bool:
        st = self.stat(p)
        return st is not None and stat.S_ISDIR(st.st_mode)

    def access(self, p: str, mode: int) -> bool | None:
        """``os.access`` on an existing path; ``None`` when the path is absent."""
        if self.stat(p) is None:
            return None
        return os.access(self.path(p), mode)

    # -- contents ----------------------------------------------------------------------
    def read_bytes(self, p: str, limit: int = MAX_READ) -> bytes | None:
        return self.read_real(self.path(p), limit, shown=p)

    def read_real(self, real: str, limit: int = MAX_READ, shown: str | None = None) -> bytes | None:
        """Read a real path (already mapped, e.g. in the workspace)."""
        p = shown or real
        try:
            # O_NONBLOCK: a FIFO planted where a file is expected must not hang the audit
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            if exc.errno == errno.EISDIR:
                raise ProbeError(p, "is a directory") from exc
            if exc.errno == errno.ELOOP:
                raise ProbeError(p, "symlink loop") from exc
            raise ProbeError(p, _reason(exc)) from exc
        try:
            st = os.fstat(fd)
            if stat.S_ISDIR(st.st_mode):
                raise ProbeError(p, "is a directory")
            if not stat.S_ISREG(st.st_mode):
                raise ProbeError(p, "not a regular file")
            if st.st_size > limit:
                raise ProbeError(p, f"larger than {limit} bytes ({st.st_size})")
            # sized by fstat, not a buffer of `limit` bytes per file; a file that grows
            # meanwhile is read on until it passes the limit
            chunks = [os.read(fd, min(max(st.st_size, 65536), limit) + 1)]  # /proc: size 0
            got = len(chunks[0])
            while chunks[-1] and got <= limit:
                chunks.append(os.read(fd, min(1 << 20, limit + 1 - got)))
                got += len(chunks[-1])
            data = b"".join(chunks) if len(chunks) > 1 else chunks[0]
        except OSError as exc:
            raise ProbeError(p, _reason(exc)) from exc
        finally:
            if fd >= 0:
                os.close(fd)
        if len(data) > limit:
            raise ProbeError(p, f"larger than {limit} bytes")
        return data

    def read_head(self, real: str, n: int, shown: str | None = None) -> bytes | None:
        """The first ``n`` bytes of a regular file (real path); None if absent."""
        p = shown or real
        try:
            fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            raise ProbeError(p, _reason(exc)) from exc
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise ProbeError(p, "not a regular file")
            return os.read(fd, n)
        except OSError as exc:
            raise ProbeError(p, _reason(exc)) from exc
        finally:
            os.close(fd)

    def read_text(self, p: str, limit: int = MAX_READ) -> str | None:
        data = self.read_bytes(p, limit)
        return None if data is None else decode(data, p)

    def listdir(self, p: str) -> list[str] | None:
        try:
            return sorted(os.listdir(self.path(p)))
        except OSError as exc:
            if exc.errno in _ABSENT:
                return None
            raise ProbeError(p, _reason(exc)) from exc

    # -- /proc -------------------------------------------------------------------------
    def proc_status(self, pid: str = "self") -> dict[str, str] | None:
        """``/proc/PID/status`` as a dict of field name to raw value (memoised for self)."""
        key = f"status:{pid}"
        if pid == "self" and key in self.cache:
            return dict(self.cache[key]) if self.cache[key] is not None else None
        text = self.read_text(f"/proc/{pid}/status")
        out: dict[str, str] | None = None
        if text is not None:
            out = {}
            for line in text.splitlines():
                name, sep, value = line.partition(":")
                if sep:
                    out[name.strip()] = value.strip()
        if pid == "self":
            self.cache[key] = out
        return dict(out) if out is not None else None

    def tcp_listeners(self) -> list[tuple[int, bytes, int, str]] | None:
        """(family, address in network order, port, inode) of every listening TCP socket,
        asked of the kernel through NETLINK_SOCK_DIAG, which filters by state itself: on a
        host with tens of thousands of connections, /proc/net/tcp lists them all, to be
        read and parsed for the two or three listeners wanted. None when the answer must
        come from the files instead: a /proc other than the real one (tests), or netlink
        unavailable or answering anything unexpected."""
        if self.proc != "/proc":
            return None
        import _socket  # the C module: socket.py's import is start-up cost
        import struct

        out: list[tuple[int, bytes, int, str]] = []
        try:
            nl = _socket.socket(16, _socket.SOCK_DGRAM | _socket.SOCK_CLOEXEC,
                                4)  # AF_NETLINK, NETLINK_SOCK_DIAG
        except OSError:
            return None
        try:
            nl.settimeout(2.0)
            for seq, family in enumerate((2, 10), start=1):  # AF_INET, AF_INET6
                # inet_diag_req_v2: family, IPPROTO_TCP, no extensions, states =
                # 1 << TCP_LISTEN, and an all-zero inet_diag_sockid (48 bytes)
                req = struct.pack("=BBBBI48x", family, 6, 0, 0, 1 << 10)
                # SOCK_DIAG_BY_FAMILY, NLM_F_REQUEST | NLM_F_DUMP
                nl.send(struct.pack("=IHHII", 16 + len(req), 20, 0x301, seq, 0) + req)
                if not _diag_replies(nl, seq, family, out):
                    return None
        except (OSError, struct.error, ValueError):
            return None
        finally:
            nl.close()
        return out

    def pids(self) -> Iterator[str]:
        for name in self.listdir("/proc") or []:
            if name.isdigit():
                yield name

    def ancestors(self, limit: int = 64) -> list[tuple[str, list[str]]]:
        """(pid, argv) of this process's parent, grandparent, ... up to pid 1."""
        out: list[tuple[str, list[str]]] = []
        pid = "self"
        for _ in range(limit):
            stat_line = self.read_text(f"/proc/{pid}/stat")
            if stat_line is None:
                if pid == "self":
                    raise ProbeError("/proc/self/stat", "absent")
                break  # the ancestor exited meanwhile
            fields = stat_line[stat_line.rfind(")") + 2 :].split()
            if len(fields) < 2 or not fields[1].isdigit():
                raise ProbeError(f"/proc/{pid}/stat", "malformed")
            ppid = fields[1]
            if ppid == "0":
                break
            raw = self.read_bytes(f"/proc/{ppid}/cmdline") or b""
            argv = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
            out.append((ppid, argv))
            pid = ppid
        return out

    def mounts(self) -> list[Mount] | None:
        """``/proc/self/mountinfo`` parsed; ``None`` if it is absent."""
        if "mounts" in self.cache:
            cached = self.cache["mounts"]
            return list(cached) if cached is not None else None
        found = self._mounts()
        self.cache["mounts"] = tuple(found) if found is not None else None
        return found

    def _mounts(self) -> list[Mount] | None:
        text = self.read_text("/proc/self/mountinfo")
        if text is None:
            return None
        out = []
        for line in text.splitlines():
            left, sep, right = line.partition(" - ")
            fields = left.split()
            rest = right.split()
            if not sep or len(fields) < 6 or len(rest) < 2:
                raise ProbeError("/proc/self/mountinfo", f"malformed line: {line[:80]!r}")
            out.append(
                Mount(
                    mount_point=_unescape(fields[4]),
                    options=frozenset(fields[5].split(",")),
                    super_options=frozenset(rest[2].split(",") if len(rest) > 2 else ()),
                    fstype=rest[0],
                    source=_unescape(rest[1]),
                    root=_unescape(fields[3]),
                )
            )
        return out

    def uid_map(self) -> list[tuple[int, int, int]] | None:
        text = self.read_text("/proc/self/uid_map")
        if text is None:
            return None
        rows = []
        for line in text.splitlines():
            parts = line.split()
            if len(parts) != 3 or not all(x.isdigit() for x in parts):
                raise ProbeError("/proc/self/uid_map", f"malformed line: {line!r}")
            rows.append((int(parts[0]), int(parts[1]), int(parts[2])))
        return rows

    # -- network (only NET004, only with --probe-network) ----------------------------
    def tcp_probe(self, address: str, port: int, timeout: float) -> str | None:
        """One TCP connect to an IP literal: None if it completed, else why not."""
        import socket

        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        try:
            with socket.socket(family, socket.SOCK_STREAM) as s:
                s.settimeout(timeout)
                s.connect((address, port))
        except TimeoutError:
            return f"no answer within {timeout:g} s"
        except OSError as exc:
            return errno.errorcode.get(exc.errno or 0, str(exc))
        return None

    def registry_scripts(self, registry: str, packages: list[tuple[str, str]],
                         timeout: float = 5.0) -> dict[tuple[str, str], bool]:
        """--lookup only (SUP003): for each (name, version), does the npm registry's
        metadata of that version name an install script (preinstall, install,
        postinstall, or a binding.gyp's implied `node-gyp rebuild`)? A package whose
        metadata cannot be had raises ProbeError: the rule is then unknown."""
        import json
        import urllib.parse
        import urllib.request
        from concurrent.futures import ThreadPoolExecutor

        def one(pkg: tuple[str, str]) -> bool:
            name, version = pkg
            url = (f"{registry.rstrip('/')}/{urllib.parse.quote(name, safe='@')}/"
                   f"{urllib.parse.quote(version, safe='')}")
            try:
                with urllib.request.urlopen(url, timeout=timeout) as r:
                    doc = json.loads(r.read(8 << 20))
            except (OSError, ValueError) as exc:
                raise ProbeError(url, f"registry metadata: {exc}") from None
            scripts = doc.get("scripts") if isinstance(doc, dict) else None
            if not isinstance(scripts, dict):
                return bool(isinstance(doc, dict) and doc.get("hasInstallScript"))
            return any(scripts.get(k) for k in ("preinstall", "install", "postinstall")) or \
                bool(doc.get("hasInstallScript"))

        with ThreadPoolExecutor(max_workers=8) as pool:
            return dict(zip(packages, pool.map(one, packages), strict=True))

    def group_names(self) -> dict[int, str] | None:
        """gid to name from ``/etc/group``; ``None`` if the file is absent."""
        text = self.read_text("/etc/group")
        if text is None:
            return None
        out: dict[int, str] = {}
        for line in text.splitlines():
            parts = line.split(":")
            if len(parts) >= 3 and parts[2].isdigit():
                out.setdefault(int(parts[2]), parts[0])
        return out


def decode(data: bytes, shown: str, encoding: str = "utf-8") -> str:
    """UTF-8 text, or a ProbeError saying where it is not."""
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        raise ProbeError(shown, f"not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def _unescape(s: str) -> str:
    """mountinfo escapes space, tab, newline and backslash as octal."""
    if "\\" not in s:
        return s
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 3 < len(s) + 0 and s[i + 1 : i + 4].isdigit():
            out.append(chr(int(s[i + 1 : i + 4], 8)))
            i += 4
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _diag_replies(nl: Any, seq: int, family: int,
                  out: list[tuple[int, bytes, int, str]]) -> bool:
    """Read one sock_diag dump into ``out``; False on an error or a malformed reply."""
    import struct

    while True:
        data = nl.recv(65536)
        off = 0
        while off + 16 <= len(data):
            length, kind, _flags, rseq, _pid = struct.unpack_from("=IHHII", data, off)
            if length < 16 or off + length > len(data) or rseq != seq:
                return False
            if kind == 3:  # NLMSG_DONE
                return True
            if kind != 20 or length < 16 + 72:  # SOCK_DIAG_BY_FAMILY, inet_diag_msg
                return False  # NLMSG_ERROR included: the files decide instead
            body = off + 16
            fam, state = data[body], data[body + 1]
            sport = struct.unpack_from(">H", data, body + 4)[0]
            src = data[body + 8 : body + 24]
            inode = struct.unpack_from("=I", data, body + 68)[0]
            if fam != family or state != 10:
                return False
            out.append((fam, bytes(src[:4] if fam == 2 else src), sport, str(inode)))
            off += (length + 3) & ~3
        if off != len(data):
            return False

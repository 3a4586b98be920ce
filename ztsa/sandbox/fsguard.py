"""The tracer's side of agent-file protection (see ztsa/sandbox/protect.py).

At a name-creating syscall the tracer copies the path arguments out of the tracee once,
sends them with the directory descriptors (pidfd_getfd, or the tracee's cwd) to the
helper that runs inside the tree's confinement, and answers the tracee with the
helper's result. The helper decides on its own resolution of the parent directory and
on the name the tracer copied, so nothing the tree rewrites afterwards reaches a
decision or an operation.
"""

from __future__ import annotations

import errno
import os
import socket
import struct
from typing import NamedTuple

from ztsa.sandbox import native as nat

AT_FDCWD = -100
AT_EMPTY_PATH = 0x1000
O_CREAT, O_EXCL, O_WRONLY, O_TRUNC = 0o100, 0o200, 0o1, 0o1000
PATH_MAX = 4096
PAGE = 4096

OP_CREATE, OP_MKDIR, OP_MKNOD, OP_SYMLINK, OP_LINK, OP_RENAME, OP_CHMOD = range(1, 8)
FS_DONE, FS_PROTECTED, FS_CREATED, FS_EXISTS = range(4)
REQUEST = struct.Struct("=iiIIQII")
REPLY = struct.Struct("=iiIi")

SYS_OPEN, SYS_CREAT, SYS_OPENAT, SYS_UMASK = 2, 85, 257, 95
# nr -> (name, op, path args as (dirfd index or None, path index), flags index, mode index)
CALLS: dict[int, tuple[str, int, tuple[tuple[int | None, int], ...], int | None,
                       int | None]] = {
    2: ("open", OP_CREATE, ((None, 0),), 1, 2),
    85: ("creat", OP_CREATE, ((None, 0),), None, 1),
    257: ("openat", OP_CREATE, ((0, 1),), 2, 3),
    83: ("mkdir", OP_MKDIR, ((None, 0),), None, 1),
    258: ("mkdirat", OP_MKDIR, ((0, 1),), None, 2),
    133: ("mknod", OP_MKNOD, ((None, 0),), None, 1),
    259: ("mknodat", OP_MKNOD, ((0, 1),), None, 2),
    88: ("symlink", OP_SYMLINK, ((None, 1),), None, None),
    266: ("symlinkat", OP_SYMLINK, ((1, 2),), None, None),
    86: ("link", OP_LINK, ((None, 0), (None, 1)), None, None),
    265: ("linkat", OP_LINK, ((0, 1), (2, 3)), 4, None),
    82: ("rename", OP_RENAME, ((None, 0), (None, 1)), None, None),
    264: ("renameat", OP_RENAME, ((0, 1), (2, 3)), None, None),
    316: ("renameat2", OP_RENAME, ((0, 1), (2, 3)), 4, None),
}


class Pending(NamedTuple):
    """A file created for an O_CREAT open whose final mode waits for the open."""
    dirfd: int
    path: bytes
    mode: int


class HelperError(RuntimeError):
    pass


def read_cstring(tid: int, addr: int, limit: int = PATH_MAX) -> bytes:
    """A NUL-terminated string of the tracee, read page by page (a string may end just
    before an unmapped page). Longer than limit: ENAMETOOLONG, as the kernel says."""
    out = b""
    while len(out) <= limit:
        chunk = PAGE - (addr % PAGE)
        data = nat.readmem(tid, addr, chunk)
        end = data.find(b"\0")
        if end >= 0:
            out += data[:end]
            break
        out += data
        addr += len(data)
    if len(out) > limit - 1:
        raise nat.NativeError(errno.ENAMETOOLONG, "path too long")
    return out


def umask_of(tid: int) -> int:
    try:
        with open(f"/proc/{tid}/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


def _s32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value & 0x80000000 else value


class FsGuard:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.pending: dict[int, Pending] = {}  # tid -> chmod after its open returns
        # tgid -> umask: read from /proc once per process, followed at umask(2) stops (the
        # umask only shapes the modes of the tree's own new files)
        self.umasks: dict[int, int] = {}

    def close(self) -> None:
        self.sock.close()
        for p in self.pending.values():
            os.close(p.dirfd)
        self.pending.clear()

    def _dirfd(self, tid: int, fd: int | None, path: bytes) -> int:
        if fd is None or _s32(fd) == AT_FDCWD or path.startswith(b"/"):
            return os.open(f"/proc/{tid}/cwd", os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
        return nat.pidfd_getfd(tid, _s32(fd))

    def ask(self, op: int, flags: int, mode: int, umask: int, dev: int, p1: bytes,
            p2: bytes, fds: list[int]) -> tuple[int, int, int]:
        msg = REQUEST.pack(op, flags, mode, umask, dev, len(p1), len(p2)) + \
            p1 + b"\0" + p2 + b"\0"
        try:
            socket.send_fds(self.sock, [msg], fds)
            reply = self.sock.recv(REPLY.size)
        except OSError as exc:
            raise HelperError(f"the file helper failed: {exc}") from exc
        if len(reply) != REPLY.size:
            raise HelperError("the file helper is gone")
        err, verdict, fixmode, _ = REPLY.unpack(reply)
        return err, verdict, fixmode

    def umask(self, tid: int, tgid: int) -> int:
        mask = self.umasks.get(tgid)
        if mask is None:
            mask = self.umasks[tgid] = umask_of(tid)
        return mask

    def forget(self, tgid: int) -> None:
        self.umasks.pop(tgid, None)

    def handle(self, tid: int, nr: int, args: list[int],
               tgid: int | None = None) -> tuple[str, int, str | None]:
        """('return', value, denied) to skip the syscall and answer value (denied names
        the refused paths), ('run', 0, None) to let the rewritten open run, or
        ('run-exit', ...) when after(tid) must follow at its syscall-exit stop."""
        if nr == SYS_UMASK:
            self.umasks[tid if tgid is None else tgid] = args[0] & 0o777
            return "run", 0, None
        name, op, specs, flags_i, mode_i = CALLS[nr]
        flags = args[flags_i] & 0xFFFFFFFF if flags_i is not None else 0
        if nr == SYS_CREAT:
            flags = O_CREAT | O_WRONLY | O_TRUNC
        mode = args[mode_i] & 0xFFFFFFFF if mode_i is not None else 0
        paths: list[bytes] = []
        fds: list[int] = []
        try:
            target = read_cstring(tid, args[0]) if op == OP_SYMLINK else b""
            for fd_i, path_i in specs:
                path = read_cstring(tid, args[path_i])
                if not path and not (op == OP_LINK and flags & AT_EMPTY_PATH and not paths):
                    return "return", -errno.ENOENT, None
                paths.append(path)
                fds.append(self._dirfd(tid, args[fd_i] if fd_i is not None else None, path))
            dev = args[3] if nr == 259 else args[2] if nr == 133 else 0
            p2 = target if op == OP_SYMLINK else paths[1] if len(paths) > 1 else b""
            umask = self.umask(tid, tid if tgid is None else tgid)
            err, verdict, fixmode = self.ask(op, flags, mode, umask, dev, paths[0], p2, fds)
        finally:
            for fd in fds:
                os.close(fd)
        if verdict == FS_PROTECTED:
            return "return", -errno.EACCES, f"{name} " + " -> ".join(map(os.fsdecode, paths))
        if op != OP_CREATE or err:
            return "return", -err, None
        if verdict == FS_EXISTS and flags & O_EXCL:
            return "return", -errno.EEXIST, None
        # the name exists now: let the tracee's open run without O_CREAT, so it can only
        # open an existing file, whatever its path argument says by then
        if nr == SYS_CREAT:
            nat.syscall_rewrite(tid, SYS_OPEN, 1, O_WRONLY | O_TRUNC)
        else:
            assert flags_i is not None
            nat.syscall_rewrite(tid, nr, flags_i, flags & ~(O_CREAT | O_EXCL))
        if verdict == FS_CREATED and fixmode & 0o600 != 0o600:
            fd_i = specs[0][0]
            dirfd = self._dirfd(tid, args[fd_i] if fd_i is not None else None, paths[0])
            self.pending[tid] = Pending(dirfd, paths[0], fixmode)
            return "run-exit", 0, None
        return "run", 0, None

    def after(self, tid: int) -> None:
        """At the syscall-exit stop of an open that created a file: its final mode."""
        p = self.pending.pop(tid, None)
        if p is None:
            return
        try:
            self.ask(OP_CHMOD, 0, p.mode, 0, 0, p.path, b"", [p.dirfd])
        finally:
            os.close(p.dirfd)

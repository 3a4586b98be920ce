"""The only wrapper of ztsa's native module (native/ztsa_native.c, built with cffi)."""

from __future__ import annotations

import errno
import os

import ztsa._native as _native

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ffi: Any = _native.ffi
lib: Any = _native.lib

# ptrace requests and options python-ptrace lacks (linux/ptrace.h)
PTRACE_CONT = 7
PTRACE_KILL = 8
PTRACE_GETEVENTMSG = 0x4201
PTRACE_SEIZE = 0x4206
PTRACE_INTERRUPT = 0x4207
PTRACE_LISTEN = 0x4208
O_TRACEFORK = 1 << 1
O_TRACEVFORK = 1 << 2
O_TRACECLONE = 1 << 3
O_TRACEEXEC = 1 << 4
O_TRACESECCOMP = 1 << 7
O_EXITKILL = 1 << 20
EVENT_FORK = 1
EVENT_VFORK = 2
EVENT_CLONE = 3
EVENT_EXEC = 4
EVENT_SECCOMP = 7
EVENT_STOP = 128
WALL = 0x40000000


class NativeError(OSError):
    pass


def _check(result: int, what: str) -> int:
    if result < 0:
        raise NativeError(-result, f"{what}: {os.strerror(-result)}")
    return result


def _strings(items: list[str]) -> tuple[list[Any], Any]:
    """A C array of strings, and the strings it points to (keep both alive)."""
    owned = [ffi.new("char[]", os.fsencode(i)) for i in items]
    return owned, ffi.new("char *[]", owned or [ffi.NULL])


def spawn(path: str, argv: list[str], env: dict[str, str], cwd: str, filter_code: bytes,
          drop_caps: bool, keep_caps: int, keep_fds: list[int],
          write_rules: list[tuple[str, int]], handled_fs: int, ns_mode: int = 0,
          ro_paths: list[str] | None = None, protect: bool = False, log_fd: int = -1,
          workspace: str = "/", protected: list[str] | None = None) -> tuple[int, int, int]:
    """(pid, sync_fd, err_fd); see ztsa_spawn in native/ztsa_native.h."""
    c_argv = [ffi.new("char[]", os.fsencode(a)) for a in argv]
    c_env = [ffi.new("char[]", os.fsencode(f"{k}={v}")) for k, v in env.items()]
    argv_arr = ffi.new("char *[]", [*c_argv, ffi.NULL])
    env_arr = ffi.new("char *[]", [*c_env, ffi.NULL])
    n = len(filter_code) // 8
    insns = ffi.new("struct ztsa_filter_insn[]", n)
    ffi.memmove(insns, filter_code, len(filter_code))
    fds = ffi.new("int[]", keep_fds or [0])
    _alive, paths = _strings([p for p, _ in write_rules])  # kept until the call returns
    rights = ffi.new("unsigned long long[]", [r for _, r in write_rules] or [0])
    c_ro, ro_arr = _strings(ro_paths or [])
    c_prot, prot_arr = _strings(protected or [])
    sync_fd = ffi.new("int *")
    err_fd = ffi.new("int *")
    pid = lib.ztsa_spawn(os.fsencode(path), argv_arr, env_arr, os.fsencode(cwd), insns, n,
                         int(drop_caps), keep_caps, fds, len(keep_fds), paths, rights,
                         len(write_rules), handled_fs, ns_mode, ro_arr, len(c_ro), int(protect),
                         log_fd, os.fsencode(workspace), prot_arr, len(c_prot), sync_fd, err_fd)
    _check(pid, "spawn")
    return pid, sync_fd[0], err_fd[0]


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    r = int(lib.ztsa_landlock_abi())
    return r if r > 0 else 0


_userns: list[bool] = []


def userns_available() -> bool:
    """Can this process create a user namespace (probed once, in a short-lived child)?"""
    if not _userns:
        _userns.append(int(lib.ztsa_userns_probe()) == 0)
    return _userns[0]


def fs_denials() -> int:
    """Name-creating syscalls the file helper of the last spawn refused."""
    return int(lib.ztsa_fs_denials())


def fast_set(rules: list[tuple[int, int, int, int]] | None) -> None:
    """The tracer loop's fast path: allowed connects to these (version, network int,
    mask int, port or 0) are performed in C; None turns it off."""
    if rules is None:
        _check(lib.ztsa_fast_set(ffi.NULL, -1), "fast path")
        return
    arr = ffi.new("struct ztsa_net_allow[]", max(len(rules), 1))
    for i, (version, net, mask, port) in enumerate(rules):
        size = 4 if version == 4 else 16
        arr[i].version = version
        arr[i].net[0:size] = list(net.to_bytes(size, "big"))
        arr[i].mask[0:size] = list(mask.to_bytes(size, "big"))
        arr[i].port = port
    _check(lib.ztsa_fast_set(arr, len(rules)), "fast path")


def fast_connects() -> int:
    return int(lib.ztsa_fast_connects())


def net_set_unix(entries: list[str], workspace: str) -> None:
    """--allow-unix entries and the resolved workspace, for connects the file helper
    answers (set before spawn: the helper inherits them)."""
    c, arr = _strings(entries)
    _check(lib.ztsa_net_set_unix(arr, len(c), os.fsencode(workspace)), "allow-unix")


def fs_set_creation(make: list[str] | None, chain: list[str], closed: list[str],
                    cont: bool) -> None:
    """CMD's second Landlock ruleset (make None: none; `closed`, the directories outside
    the workspace it makes no name in) and whether the file helper lets O_CREAT opens
    where the ruleset allows names run in the caller; set before spawn."""
    if make is None:
        _check(lib.ztsa_fs_set_creation(ffi.NULL, -1, ffi.NULL, 0, ffi.NULL, 0, 0),
               "creation rules")
        return
    c_make, make_arr = _strings(make)
    c_chain, chain_arr = _strings(chain)
    c_closed, closed_arr = _strings(closed)
    _check(lib.ztsa_fs_set_creation(make_arr, len(c_make), chain_arr, len(c_chain),
                                    closed_arr, len(c_closed), int(cont)),
           "creation rules")


def helper_connects() -> int:
    """Connects the file helper of the last spawn decided (allowed or denied)."""
    return int(lib.ztsa_helper_connects())


def wait(tag_exec: int, tag_net: int) -> tuple[int, int]:
    """waitpid(-1, __WALL), with the fast path's stops handled in C; EINTR retried
    after Python's signal handlers ran."""
    status = ffi.new("int *")
    while True:
        pid = int(lib.ztsa_wait(status, tag_exec, tag_net))
        if pid == -errno.EINTR:
            continue  # returning to Python ran the handlers
        if pid == -errno.ECHILD:
            raise ChildProcessError(errno.ECHILD, "no child processes")
        _check(pid, "waitpid")
        return pid, int(status[0])


_events = ffi.new("int[]", 3 * 4096)


def fast_events() -> list[tuple[int, int, int]]:
    """What the fast path answered since the last call, oldest first: (EVENT_FORK or
    EVENT_VFORK, parent, child), (EVENT_STOP, tid, 0) for a first stop, (FAST_NEW, tid,
    0) for a first stop before the fork event, (EVENT_EXEC, tid, former tid), (FAST_EXIT,
    tid, wait status)."""
    out: list[tuple[int, int, int]] = []
    while n := int(lib.ztsa_fast_events(_events, 4096)):
        out += [(_events[3 * i], _events[3 * i + 1], _events[3 * i + 2]) for i in range(n)]
    return out


def fast_reset(helper: bool) -> None:
    """A new run: the fast path has seen nothing of the tree (helper: the file helper
    exists, so a call interrupted while waiting for it restarts)."""
    lib.ztsa_fast_reset(int(helper))


FAST_EXIT = int(lib.ZTSA_FAST_EXIT)  # (FAST_EXIT, tid, wait status): an exit it took in
FAST_NEW = int(lib.ZTSA_FAST_NEW)  # (FAST_NEW, tid, 0): a first stop before the fork event


def fast_roles(main: int, helper: int) -> None:
    """Exits of main (CMD; 0 while unknown: then every exit) and helper come to the
    tracer; the fast path records the others (FAST_EXIT)."""
    lib.ztsa_fast_roles(main, helper)


def fast_started(tid: int) -> None:
    """The tracer handled tid's first stop itself (the fast path must not take a later
    stop of it for a first one)."""
    lib.ztsa_fast_started(tid)


def ptrace(request: int, pid: int, addr: int = 0, data: int = 0) -> int:
    return _check(lib.ztsa_ptrace(request, pid, addr, data), f"ptrace({request:#x}, {pid})")


def geteventmsg(pid: int) -> int:
    msg = ffi.new("unsigned long *")
    _check(lib.ztsa_ptrace(PTRACE_GETEVENTMSG, pid, 0, int(ffi.cast("uintptr_t", msg))),
           "PTRACE_GETEVENTMSG")
    return int(msg[0])


def syscall_get(pid: int) -> tuple[int, list[int]]:
    nr = ffi.new("long *")
    args = ffi.new("unsigned long long[6]")
    _check(lib.ztsa_syscall_get(pid, nr, args), "GETREGS")
    return int(nr[0]), [int(a) for a in args]


def syscall_return(pid: int, result: int) -> None:
    _check(lib.ztsa_syscall_return(pid, result), "SETREGS")


def restart_interrupted(pid: int) -> None:
    lib.ztsa_restart_interrupted(pid)  # a tracee that vanished meanwhile is not an error


def readmem(pid: int, addr: int, length: int) -> bytes:
    buf = ffi.new("char[]", max(length, 1))
    n = _check(lib.ztsa_readmem(pid, addr, buf, length), "process_vm_readv")
    return bytes(ffi.buffer(buf, n))


def pidfd_getfd(tid: int, fd: int) -> int:
    return _check(lib.ztsa_pidfd_getfd(tid, fd), "pidfd_getfd")


def set_dumpable(on: bool) -> None:
    _check(lib.ztsa_set_dumpable(int(on)), "PR_SET_DUMPABLE")


def writemem(pid: int, addr: int, data: bytes) -> int:
    return _check(lib.ztsa_writemem(pid, addr, data, len(data)), "process_vm_writev")


def connect(fd: int, addr: bytes) -> int:
    """0 or -errno: the raw result the tracee's connect will see."""
    return int(lib.ztsa_connect(fd, addr, len(addr)))


def sendto(fd: int, data: bytes, flags: int, addr: bytes | None) -> int:
    a = addr if addr is not None else ffi.NULL
    return int(lib.ztsa_sendto(fd, data, len(data), flags, a, len(addr or b"")))


def sendmsg1(fd: int, name: bytes | None, data: bytes, flags: int) -> int:
    n = name if name is not None else ffi.NULL
    return int(lib.ztsa_sendmsg1(fd, n, len(name or b""), data, len(data), flags))


def sockopt_int(fd: int, level: int, name: int) -> int:
    return int(lib.ztsa_sockopt_int(fd, level, name))

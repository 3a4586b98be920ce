"""The only wrapper of ztsa's native module (native/*.c, built with cffi; the
interface is native/ztsa_native.h)."""

from __future__ import annotations

import errno
import os

import ztsa._native as _native
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ztsa.sandbox.plan import RunPlan

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


class AllowTable:
    """The allow table ztsa_decide reads (struct ztsa_allow): address rules as
    (version, network int, mask int, port or 0, id), --allow-unix entries (resolved;
    "@name" abstract) and the workspace. The memory is owned here."""

    def __init__(self, rules: list[tuple[int, int, int, int, int]], unix: list[str],
                 workspace: str, programs: dict[int, tuple[str, ...]] | None = None) -> None:
        """programs: rule id -> the executables that rule is for (a policy's binaries);
        such a rule matches only a caller whose exe ztsa_decide is told."""
        self.c = ffi.new("struct ztsa_allow *")
        self._unix = _strings(unix)
        self._workspace = ffi.new("char[]", os.fsencode(workspace))
        self.c.unix_paths = self._unix[1]
        self.c.n_unix = len(unix)
        self.c.workspace = self._workspace
        if programs:
            n = max(programs) + 1
            self._lists = [ffi.new("char[]", b"".join(os.fsencode(p) + b"\0" for p in
                                                      programs[i]) + b"\0")
                           if i in programs else ffi.NULL for i in range(n)]
            self._programs = ffi.new("char *[]", self._lists)
            self.c.programs, self.c.n_programs = self._programs, n
        self._rule = ffi.new("int *")
        self.replace(rules)

    def replace(self, rules: list[tuple[int, int, int, int, int]]) -> None:
        arr = ffi.new("struct ztsa_net_rule[]", max(len(rules), 1))
        for i, (version, net, mask, port, rule_id) in enumerate(rules):
            size = 4 if version == 4 else 16
            arr[i].version = version
            arr[i].net[0:size] = list(net.to_bytes(size, "big"))
            arr[i].mask[0:size] = list(mask.to_bytes(size, "big"))
            arr[i].port = port
            arr[i].id = rule_id
        self._net = arr
        self.c.net = arr
        self.c.n_net = len(rules)

    def decide(self, call: int, domain: int, sockaddr: bytes,
               unix_real: str | None) -> tuple[int, int]:
        """(why, rule): ztsa_decide's verdict (> 0 allowed) and the rule's id or index."""
        real = os.fsencode(unix_real) if unix_real else ffi.NULL
        why = int(lib.ztsa_decide(self.c, call, domain, sockaddr, len(sockaddr), real,
                                  self._rule))
        return why, int(self._rule[0])


def unix_open(tid: int, path: bytes) -> tuple[int, str]:
    """(O_PATH descriptor, real path) of a socket path resolved as tid's connect would
    resolve it (ztsa_unix_open); the real path is "" when unknown. NativeError."""
    real = ffi.new("char[]", 4097)
    fd = _check(lib.ztsa_unix_open(tid, path, len(path), real, 4097), "socket path")
    return fd, os.fsdecode(ffi.string(real))


def spawn(plan: RunPlan, allow: AllowTable) -> tuple[int, int, int]:
    """(pid, sync_fd, err_fd): the plan as one struct ztsa_plan (ztsa_native.h), set up
    by ztsa-ns (plan.ns) or in the fork itself. Every buffer lives until ztsa_spawn
    returns, and the child has its own copy by then (the fork's, or the memfd's)."""
    keep: list[Any] = []
    c = _plan_struct(plan, allow, keep)
    sync_fd = ffi.new("int *")
    err_fd = ffi.new("int *")
    ns = ffi.new("char[]", os.fsencode(plan.ns)) if plan.setup and plan.ns else ffi.NULL
    pid = lib.ztsa_spawn(c, ns, sync_fd, err_fd)
    keep.append(ns)  # alive until here
    _check(pid, "spawn")
    return pid, sync_fd[0], err_fd[0]


def plan_bytes(plan: RunPlan, allow: AllowTable) -> bytes:
    """The plan as ztsa-ns reads it on its memfd (native/planwire.c)."""
    keep: list[Any] = []
    c = _plan_struct(plan, allow, keep)
    n = _check(lib.ztsa_plan_encode(c, ffi.NULL, 0), "plan")
    out = ffi.new("unsigned char[]", n)
    _check(lib.ztsa_plan_encode(c, out, n), "plan")
    return bytes(ffi.buffer(out, n))


def plan_reencode(data: bytes) -> bytes:
    """data decoded as ztsa-ns decodes a plan, and encoded again. NativeError (EINVAL:
    it does not decode; EPROTO: another version's)."""
    n = _check(lib.ztsa_plan_reencode(data, len(data), ffi.NULL, 0), "plan")
    out = ffi.new("unsigned char[]", max(n, 1))
    _check(lib.ztsa_plan_reencode(data, len(data), out, n), "plan")
    return bytes(ffi.buffer(out, n))


def _plan_struct(plan: RunPlan, allow: AllowTable, keep: list[Any]) -> Any:
    """The plan as one struct ztsa_plan, whose buffers keep holds."""

    def strings(items: list[str]) -> tuple[Any, int]:
        owned, arr = _strings(items)
        keep.append((owned, arr))
        return arr, len(items)

    def cstr(text: str) -> Any:
        buf = ffi.new("char[]", os.fsencode(text))
        keep.append(buf)
        return buf

    c = ffi.new("struct ztsa_plan *")
    c.path = cstr(plan.program)
    argv = [cstr(a) for a in plan.argv]
    envp = [cstr(f"{k}={v}") for k, v in plan.env]
    c.argv = arr_argv = ffi.new("char *[]", [*argv, ffi.NULL])
    c.envp = arr_env = ffi.new("char *[]", [*envp, ffi.NULL])
    c.cwd = cstr(plan.cwd)
    n = len(plan.filter) // 8
    insns = ffi.new("struct ztsa_filter_insn[]", n)
    ffi.memmove(insns, plan.filter, len(plan.filter))
    c.filter, c.filter_len = insns, n
    c.drop_caps, c.keep_caps = int(plan.drop_caps), plan.keep_caps
    fds = ffi.new("int[]", list(plan.keep_fds) or [0])
    c.keep_fds, c.n_keep_fds = fds, len(plan.keep_fds)
    c.write_paths, c.n_write = strings([path for path, _ in plan.landlock.rules])
    rights = ffi.new("unsigned long long[]", [r for _, r in plan.landlock.rules] or [0])
    c.write_rights, c.handled_fs = rights, plan.landlock.handled
    c.namespaces = int(plan.namespaces)
    guard = plan.protection
    c.ro_paths, c.n_ro = strings(guard.ro_paths if guard else [])
    c.git_configs, c.n_git_configs = strings(list(plan.git_configs))
    c.helper, c.log_fd = int(plan.helper), plan.log_fd
    c.workspace = cstr(plan.workspace)
    c.protected_paths, c.n_protected = strings(guard.entries if guard else [])
    creation = plan.creation
    c.make, c.n_make = strings(creation.make or [])
    if creation.make is None:
        c.n_make = -1
    c.chain, c.n_chain = strings(creation.chain)
    c.closed, c.n_closed = strings(creation.closed)
    c.cont, c.connects = int(plan.cont), int(plan.connects)
    if plan.kept is not None:  # the agent's kept state: CMD's layer, the helper's view
        c.kept_handled = plan.kept.handled
        c.kept_rules, c.n_kept_rules = strings([path for path, _ in plan.kept.rules])
        kept_rights = ffi.new("unsigned long long[]", [r for _, r in plan.kept.rules] or [0])
        keep.append(kept_rights)
        c.kept_rights = kept_rights
        c.kept, c.n_kept = strings(plan.kept.paths)
        c.kept_way, c.n_kept_way = strings(plan.kept.way)
    c.allow = allow.c[0]
    c.pid_ns, c.scoped = int(plan.pid_ns), plan.landlock.scoped
    c.run_id = cstr(plan.run_id)
    c.max_procs, c.max_memory = plan.max_procs, plan.max_memory
    c.private_dir, c.max_disk = cstr(plan.private_dir), plan.max_disk
    c.inotify_instances, c.inotify_watches = plan.inotify
    c.own_session = int(plan.own_session)
    c.netns = int(plan.netns)
    c.tell = int(plan.tell)
    if plan.netns:
        net = plan.net
        names = ffi.new("struct ztsa_dns_name[]", max(len(net.names), 1))
        for i, (name, suffix, port, rule, deny, carries) in enumerate(net.names):
            names[i].name = cstr(name)
            names[i].suffix, names[i].port, names[i].rule = int(suffix), port, rule
            names[i].deny, names[i].carries = int(deny), carries
        denied = ffi.new("struct ztsa_net_rule[]", max(len(net.deny_nets), 1))
        for i, (version, packed, mask) in enumerate(net.deny_nets):
            denied[i].version = version
            denied[i].net[0:len(packed)] = list(packed)
            denied[i].mask[0:len(mask)] = list(mask)
        keep.append(denied)
        c.deny_nets, c.n_deny_nets = denied, len(net.deny_nets)
        onlink = _prefixes(net.onlink)
        keep.append(onlink)
        c.onlink, c.n_onlink = onlink, len(net.onlink)
        resolvers = ffi.new("struct ztsa_net_rule[]", max(len(net.resolvers), 1))
        for i, (version, packed) in enumerate(net.resolvers):
            resolvers[i].version = version
            resolvers[i].net[0:len(packed)] = list(packed)
            resolvers[i].port = 53
        ports = ffi.new("int[]", list(net.listen) or [0])
        keep.append((names, resolvers, ports))
        c.dns_names, c.n_dns_names = names, len(net.names)
        c.resolvers, c.n_resolvers = resolvers, len(net.resolvers)
        c.rule_specs, c.n_rule_specs = strings(list(net.rule_specs))
        c.listen_ports, c.n_listen = ports, len(net.listen)
    if plan.secrets:
        c.secrets, c.n_secrets = strings([value for _, value in plan.secrets])
        c.secret_names, _ = strings([name for name, _ in plan.secrets])
    if plan.home is not None:
        c.hide_homes, c.n_hide_homes = strings(list(plan.home.homes))
        # the agents' state after what the homes show: bound where the private home is
        shown = [(path, path, rw) for path, rw in plan.home.show] + list(plan.home.binds)
        c.show, c.n_show = strings([path for path, _, _ in shown])
        targets = [cstr(at) if at != path else ffi.NULL for path, at, _ in shown]
        show_at = ffi.new("char *[]", targets or [ffi.NULL])
        show_rw = ffi.new("int[]", [int(rw) for _, _, rw in shown] or [0])
        keep.append((show_rw, show_at, targets))
        c.show_rw, c.show_at = show_rw, show_at
    c.audit = int(plan.audit)
    if plan.shm_show:
        c.shm_show, c.n_shm_show = strings(list(plan.shm_show))
    if plan.deny_paths:
        c.deny_paths, c.n_deny_paths = strings(list(plan.deny_paths))
        c.empty_file = cstr(plan.empty_file)
    if plan.audit_view:
        c.audit_paths, c.n_audit = strings([path for path, _ in plan.audit_view])
        kinds = ffi.new("int[]", [kind for _, kind in plan.audit_view])
        keep.append(kinds)
        c.audit_kinds = kinds
    keep.append((c, arr_argv, arr_env, insns, fds, rights, allow))
    return c


def _prefixes(prefixes: tuple[tuple[int, bytes, bytes], ...]) -> Any:
    out = ffi.new("struct ztsa_net_rule[]", max(len(prefixes), 1))
    for i, (version, packed, mask) in enumerate(prefixes):
        out[i].version = version
        out[i].net[0:len(packed)] = list(packed)
        out[i].mask[0:len(mask)] = list(mask)
    return out


def learnable(onlink: tuple[tuple[int, bytes, bytes], ...], version: int,
              packed: bytes) -> bool:
    """The range guard (native/allow.c, ztsa_learnable): may an address a name's answer
    gave open the name's rule? The same function as the file helper's DNS service."""
    table = _prefixes(onlink)
    addr = ffi.new("unsigned char[16]", packed[:16])
    return bool(lib.ztsa_learnable(table, len(onlink), version, addr))


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is unavailable."""
    r = int(lib.ztsa_landlock_abi())
    return r if r > 0 else 0


# ns (ztsa-ns's path, "" for this process) -> (ztsa_ns_probe's answer, 1 if it made a
# user namespace)
_probe: dict[str, tuple[int, int]] = {}


def _probe_once(ns: str, user: bool) -> int:
    """ztsa_ns_probe's answer in a child of ztsa-ns (its `--probe`), as the run's set-up
    will be (where AppArmor lets only a program a profile names make user namespaces, a
    fork of this interpreter cannot), or of this process (ns "")."""
    if not ns:
        return int(lib.ztsa_ns_probe(int(user)))
    try:
        pid = os.posix_spawn(ns, ["ztsa-ns", "--probe", str(int(user))], {})
        code = os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])
    except OSError as e:
        code = -(e.errno or 1)
    return code if code in (0, 1, 2) else -1


def _namespaces(ns: str = "") -> int:
    """ztsa_ns_probe's answer, probed once in a short-lived child (0: everything). Root
    makes a mount namespace with its own capabilities; a root without CAP_SYS_ADMIN (a
    container's, under the runtimes' default capabilities) cannot, and is then probed as
    an ordinary user: a user namespace of its own."""
    if ns not in _probe:
        user = os.geteuid() != 0
        code = _probe_once(ns, user)
        if code == 1 and not user:
            user, code = True, _probe_once(ns, True)
        _probe[ns] = (code, int(user))
    return _probe[ns][0]


def userns_available(ns: str = "") -> bool:
    """Can this process (or ztsa-ns, ns) create a user namespace (as root: a mount
    namespace, or failing that a user namespace)?"""
    code = _namespaces(ns)
    return code >= 0 and code != 1


def pidfd_getfd_available() -> bool:
    """Can this process take a duplicate of a descriptor of a process it may trace (its
    own, here)? A seccomp profile may refuse pidfd_getfd whatever its arguments
    (Docker's default does without CAP_SYS_PTRACE, with EPERM), so the call is made."""
    r, w = os.pipe()
    try:
        dup = int(lib.ztsa_pidfd_getfd(os.getpid(), r))
        if dup >= 0:
            os.close(dup)
        return dup >= 0
    finally:
        os.close(r)
        os.close(w)


def root_mount_namespace(ns: str = "") -> bool:
    """As root: are the tree's namespaces made with root's own capabilities (a mount
    namespace in this user namespace)? False where root lacks CAP_SYS_ADMIN."""
    _namespaces(ns)
    return not _probe[ns][1]


def pidns_available(ns: str = "") -> bool:
    """...and in it PID and IPC namespaces whose init mounts a /proc of its own?"""
    return _namespaces(ns) == 0


def helper_first_denials() -> list[tuple[str, str, str]]:
    """The file helper's first denials of the last spawn: (syscall, what, rule)."""
    out = []
    for i in range(3):
        text = ffi.string(lib.ztsa_helper_first_denial(i)).decode("utf-8", "replace")
        parts = text.split("\x1f")
        if len(parts) == 3:
            out.append((parts[0], parts[1], parts[2]))
    return out


def helper_denials() -> int:
    """Name-creating syscalls and connects the file helper of the last spawn refused."""
    return int(lib.ztsa_helper_denials())


def procs_unlimited() -> bool:
    """The tree's PID namespace refused --max-procs as its pid_max (a kernel before 6.14):
    RLIMIT_NPROC stood in, which does not bind root."""
    return bool(lib.ztsa_procs_unlimited())


def inotify_unbounded() -> bool:
    """The tree of the last spawn got no inotify limits of its own (no user namespace
    of its own could take them)."""
    return bool(lib.ztsa_inotify_unbounded())


def helper_would_deny() -> int:
    """--audit-only: the calls the helper let through that the enforced run refuses."""
    return int(lib.ztsa_helper_would_deny())


def helper_connects() -> int:
    """Connects the file helper of the last spawn decided (allowed or denied)."""
    return int(lib.ztsa_helper_connects())


# the tracer's wait loop (native/supervisor.c), which owns the process table
EV_SYSCALL = int(lib.ZTSA_EV_SYSCALL)  # a traced syscall stop for Python to decide
EV_EXEC = int(lib.ZTSA_EV_EXEC)  # an exec, tracee stopped (logging runs only)
EV_EXIT = int(lib.ZTSA_EV_EXIT)  # a process ended (CMD, the helper, or any when logging)
EV_SIGNAL = int(lib.ZTSA_EV_SIGNAL)  # a signal came to ztsa: status is its number
EV_GONE = int(lib.ZTSA_EV_GONE)  # no process of the tree is left
EV_TRACE = int(lib.ZTSA_EV_TRACE)  # --trace-syscalls: a system call's entry or exit
ROLE_CMD = int(lib.ZTSA_ROLE_CMD)
ROLE_HELPER = int(lib.ZTSA_ROLE_HELPER)
ROLE_KEEPER = int(lib.ZTSA_ROLE_KEEPER)


class Event(NamedTuple):
    kind: int
    tid: int
    tgid: int
    status: int
    role: int


def trace_begin(root: int, helper: bool, init: bool, log: bool, wake_fd: int,
                tag_exec: int, tag_net: int, tag_pid: int, syscalls: bool = False,
                setup_exec: bool = False) -> None:
    """helper: root is the file helper; init: with a PID namespace, root is the keeper
    and its first child the helper (pid 1 of the tree's namespace); syscalls: the tree
    stops at every system call (EV_TRACE); setup_exec: root's first exec is ztsa-ns's
    (the set-up's: neither logged nor counted)."""
    _check(lib.ztsa_trace_begin(root, int(helper), int(init), int(log), wake_fd, tag_exec,
                                tag_net, tag_pid, int(syscalls), int(setup_exec)), "tracer")


def trace_end() -> None:
    lib.ztsa_trace_end()


_event = ffi.new("struct ztsa_event *")


def wait(allow: AllowTable | None) -> Event:
    """The next event the C loop leaves to Python; with allow, it performs the
    connects the table allows itself."""
    _check(lib.ztsa_wait(allow.c if allow is not None else ffi.NULL, _event), "waitpid")
    e = _event
    return Event(int(e.kind), int(e.tid), int(e.tgid), int(e.status), int(e.role))


def resume(tid: int) -> None:
    r = int(lib.ztsa_resume(tid))
    if r < 0 and r != -errno.ESRCH:  # killed meanwhile: its exit follows
        _check(r, "PTRACE_CONT")


_procs: list[Any] = [ffi.new("int[]", 1024)]


def procs() -> list[int]:
    """The live processes of the tree (thread group ids), the keeper and helper excluded."""
    while True:
        buf = _procs[0]
        n = int(lib.ztsa_procs(buf, len(buf)))
        if n <= len(buf):
            return [int(buf[i]) for i in range(n)]
        _procs[0] = ffi.new("int[]", 2 * n)


def trace_killing() -> None:
    """CMD has exited: the C loop kills every process of the tree born from now on."""
    lib.ztsa_trace_killing()


def helper_pid() -> int:
    """The file helper (0: none, or not seen yet)."""
    return int(lib.ztsa_trace_helper())


def tgid(tid: int) -> int:
    return int(lib.ztsa_tgid(tid))


def trace_counts() -> tuple[int, int]:
    """(execs seen, connects the C loop performed) since trace_begin."""
    return int(lib.ztsa_trace_execs()), int(lib.ztsa_trace_connects())


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


_info = (ffi.new("int *"), ffi.new("long *"), ffi.new("unsigned long long[6]"),
         ffi.new("long long *"))


def syscall_info(pid: int) -> tuple[int, int, list[int], int]:
    """At an EV_TRACE stop: (op, nr, args, result); op 1 is an entry (nr, args), 2 an
    exit (result)."""
    op, nr, args, rval = _info
    _check(lib.ztsa_syscall_info(pid, op, nr, args, rval), "PTRACE_GET_SYSCALL_INFO")
    return int(op[0]), int(nr[0]), list(args), int(rval[0])


def syscall_return(pid: int, result: int) -> None:
    _check(lib.ztsa_syscall_return(pid, result), "SETREGS")


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

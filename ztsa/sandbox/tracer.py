"""The tracer: one waitpid(-1, __WALL) loop over every process of the tree.

All ptrace requests come from this thread (the kernel refuses them from any other
thread than the one that attached). Network syscalls are never allowed to run in the
tracee: the supervisor reads the destination once into its own memory, decides, and
performs the connect or send itself on a duplicate of the tracee's socket (pidfd_getfd)
with that copy, then skips the tracee's syscall and hands it the result. No other
thread or process can change what the kernel sees between the check and the use.
"""

from __future__ import annotations

import _socket as socket  # constants and inet_*, without socket.py's import
import contextlib
import errno
import os
import struct
from collections.abc import Callable

from ztsa.records import NamedTuple
from ztsa.sandbox import native as nat
from ztsa.sandbox.auditlog import AuditLog
from ztsa.sandbox.filter import NR, PID_FIRST, TAG_EXEC, TAG_NET, TAG_PID
from ztsa.sandbox.policy import ALLOW_PEER, CONNECT, DENY_UNNAMED, SEND, Decision, Policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal

    from ztsa.sandbox.syscalls import Decoder
else:  # the constants, without signal.py's enum conversions at import
    import _signal

SYS_CONNECT, SYS_SENDTO, SYS_SENDMSG, SYS_SENDMMSG = (
    NR["connect"], NR["sendto"], NR["sendmsg"], NR["sendmmsg"])
MAX_SEND = 1 << 20  # bytes copied per emulated send; a short count is legal for send
MAX_IOV = 1024
MSG_FASTOPEN = 0x20000000
SOL_SOCKET, SO_DOMAIN, SO_TYPE = 1, 39, 3

FAMILIES: dict[int, str] = {int(socket.AF_INET): "inet", int(socket.AF_INET6): "inet6",
                            int(socket.AF_UNIX): "unix"}
TYPES: dict[int, str] = {int(socket.SOCK_STREAM): "tcp", int(socket.SOCK_DGRAM): "udp"}

MAPPED_PREFIX = bytes(10) + b"\xff\xff"

# the calls that change a process named by a pid (filter.py's check_pids), and which
# argument names it; the C loop lets through those that name a process of the tree
PID_CALLS: dict[int, tuple[str, int]] = {
    NR[name]: (name, 1 if name in ("setpriority", "ioprio_set") else 0)
    for name in ("setpriority", "ioprio_set", "prlimit64", *PID_FIRST)}
OUTSIDE = "a process outside the tree (no PID namespace hides it)"

# --trace-syscalls: lines a run writes at most (every call is still counted), so that a
# tree calling in a loop cannot fill the disk through ztsa's log
MAX_SYSCALL_LINES = 500_000
# TRACESYSGOOD: a system call stop (--trace-syscalls) is SIGTRAP | 0x80, no real SIGTRAP
OPTIONS = (nat.O_TRACEFORK | nat.O_TRACEVFORK | nat.O_TRACECLONE | nat.O_TRACEEXEC
           | nat.O_TRACESECCOMP | nat.O_EXITKILL | 0x1)


class Destination(NamedTuple):
    family: int
    shown: str  # for the log
    decision: Decision
    ip: str | None
    port: int | None
    pathfd: int | None = None  # AF_UNIX path sockets: the socket file, resolved once
    error: int = 0  # the errno the tracee gets without a syscall (e.g. ENOENT)
    peer: bool = False  # an address the kernel ignores: sent with none, to the peer


class TracerError(RuntimeError):
    pass


def signal_name(number: int) -> str:
    """SIGTERM for 15 (for the audit log)."""
    import signal

    try:
        return signal.Signals(number).name
    except ValueError:
        return f"SIG{number}"


def _proc(pid: int, name: str) -> bytes:
    try:
        with open(f"/proc/{pid}/{name}", "rb") as f:
            return f.read(1 << 20)
    except OSError:
        return b""


def _readlink(pid: int, name: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/{name}")
    except OSError:
        return None


def argv_of(pid: int) -> list[str]:
    return [a.decode("utf-8", "replace") for a in _proc(pid, "cmdline").split(b"\0") if a]


def ppid_of(pid: int) -> int | None:
    stat = _proc(pid, "stat")
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


class Tracer:
    """The Python side of the tracer. The C wait loop (native/supervisor.c) owns the
    process table and answers every process event itself; it hands this class only a
    traced syscall to decide, an exec or exit to log, CMD's and the helper's exits, and
    a signal that came to ztsa."""

    def __init__(self, policy: Policy, log: AuditLog, root: int, helper: bool,
                 connects_in_loop: bool, init: bool = False,
                 syscalls: Decoder | None = None, setup_exec: bool = False) -> None:
        """root: the spawned child: CMD, or (helper) the file helper whose first child is
        CMD; the helper is traced (it is an ancestor of the tree) but never logged.
        connects_in_loop: the C loop performs the connects the policy allows; syscalls:
        --trace-syscalls' decoder, for the calls the filter stops with TAG_SYSCALL;
        setup_exec: root execs ztsa-ns first (the set-up's exec, not the tree's)."""
        self.setup_exec = setup_exec
        self.syscalls = syscalls
        self._cmd_ran = False  # CMD's first exec seen: calls before it are ztsa's set-up
        # tid -> (tgid, nr, name, args) of a call under way
        self._calls: dict[int, tuple[int, int, str, list[str]]] = {}
        self.policy = policy
        self.log = log
        self.root = root
        self.helper = helper
        self.init = init  # a PID namespace: root is the keeper, its child the helper
        self.helper_lost = False  # the helper died while CMD ran: the tree was killed
        self.main_status: int | None = None
        self._allow = policy.table if connects_in_loop else None
        self._handlers: dict[int, Callable[[int, list[int]], int]] = {
            SYS_CONNECT: self._connect, SYS_SENDTO: self._sendto,
            SYS_SENDMSG: self._sendmsg, SYS_SENDMMSG: self._sendmmsg,
            **{nr: self._other_process_call(nr) for nr in PID_CALLS},
        }

    # -- the loop ------------------------------------------------------------------------
    def run(self, wake_fd: int) -> int:
        """Trace until every process of the tree is gone; return CMD's wait status.
        wake_fd: where the signal module writes the number of each signal ztsa gets."""
        nat.trace_begin(self.root, self.helper, self.init, self.log.enabled, wake_fd, TAG_EXEC,
                        TAG_NET, TAG_PID, syscalls=self.syscalls is not None,
                        setup_exec=self.setup_exec)
        try:
            while True:
                ev = nat.wait(self._allow)
                if ev.kind == nat.EV_GONE:
                    break
                if ev.kind == nat.EV_SYSCALL:
                    self._syscall(ev.tid)
                    nat.resume(ev.tid)
                elif ev.kind == nat.EV_EXEC:
                    self._exec(ev.tid)
                    nat.resume(ev.tid)
                elif ev.kind == nat.EV_TRACE:
                    self._traced(ev.tid, ev.tgid)
                    nat.resume(ev.tid)
                elif ev.kind == nat.EV_EXIT:
                    self._gone(ev)
                elif ev.kind == nat.EV_SIGNAL:
                    self._forward(ev.status)
        finally:
            nat.trace_end()
        execs, connects = nat.trace_counts()
        self.log.counts["exec"] = execs
        self.log.counts["connect"] += connects
        if self.main_status is None:
            raise TracerError("CMD vanished without an exit status")
        return self.main_status

    def _forward(self, sig: int) -> None:
        """A signal that came to ztsa goes to every process of the tree."""
        pids = sorted(nat.procs())
        self.log.event("signal", signal=signal_name(sig), target="tree", pids=pids)
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, sig)

    def kill_all(self, reason: str) -> None:
        """SIGKILL every remaining process of the tree, logging what it was; then ztsa's
        own, unlogged: the helper (whose end, as pid 1, ends the tree's PID namespace,
        and so whatever the table missed) and the keeper."""
        for tgid in sorted(nat.procs()):
            argv = argv_of(tgid)
            # an exec in progress: its new memory holds no arguments until the loader
            # has placed them (a few microseconds later)
            for _ in range(20 if not argv else 0):
                import time

                time.sleep(0.002)
                argv = argv_of(tgid)
                if argv:
                    break
            try:
                os.kill(tgid, _signal.SIGKILL)
            except ProcessLookupError:
                continue
            self.log.event("kill", pid=tgid, argv=argv, reason=reason)
        for own in (nat.helper_pid(), self.root if self.helper else 0):
            if own:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(own, _signal.SIGKILL)

    def _gone(self, ev: nat.Event) -> None:
        if ev.role == nat.ROLE_HELPER:
            # the helper leaves by itself (status 0) once no process of the tree uses the
            # filter, which can be just before the C loop sees CMD's exit; without it the
            # tree's name-creating syscalls fail (ENOSYS): a confinement component that
            # fails ends the run, as the tracer's own failure would
            if ev.status != 0 and self.main_status is None and nat.procs():
                self.helper_lost = True
                self.kill_all("ztsa's file helper died")
            return
        code = os.waitstatus_to_exitcode(ev.status)
        for tid in [t for t, c in self._calls.items() if c[0] == ev.tid] if self._calls else ():
            _, nr, name, texts = self._calls.pop(tid)  # exit_group: a call with no return
            self.log.event("syscall", pid=ev.tid, tid=tid, nr=nr, name=name, args=texts,
                           result=None)
        self.log.event("exit", pid=ev.tid, status=code if code >= 0 else 128 - code,
                       signal=signal_name(-code) if code < 0 else None)
        if ev.role == nat.ROLE_CMD:
            self.main_status = ev.status
            nat.trace_killing()  # and what is born while the rest is killed
            if nat.procs():
                self.kill_all("CMD exited")

    def _exec(self, pid: int) -> None:
        self._cmd_ran = True
        self.log.event("exec", pid=pid, ppid=ppid_of(pid), executable=_readlink(pid, "exe"),
                       argv=argv_of(pid), cwd=_readlink(pid, "cwd"))

    # -- syscalls ------------------------------------------------------------------------
    def _traced(self, tid: int, tgid: int) -> None:
        """--trace-syscalls: a call decoded at its entry, logged with its result at its
        exit (one at a time per thread; ztsa's set-up before CMD's exec is not logged)."""
        assert self.syscalls is not None
        try:
            op, nr, args, result = nat.syscall_info(tid)
        except nat.NativeError as exc:
            if exc.errno == errno.ESRCH:
                return
            raise
        if op == 1:
            if self._cmd_ran:
                self._calls[tid] = (tgid, nr, *self.syscalls.decode(tid, nr, args))
            return
        call = self._calls.pop(tid, None)
        if op == 2 and call is not None:
            _, nr, name, texts = call
            if self.log.counts["syscall"] >= MAX_SYSCALL_LINES:
                self.log.counts["syscall"] += 1  # counted in the summary, not logged
                return
            self.log.event("syscall", pid=tgid, tid=tid, nr=nr, name=name, args=texts,
                           result=result if result >= 0 or result < -4095
                           else f"-{errno.errorcode.get(-result, -result)}")

    def _syscall(self, tid: int) -> None:
        try:
            nr, args = nat.syscall_get(tid)
        except nat.NativeError as exc:
            if exc.errno == errno.ESRCH:
                return  # killed while stopped: its exit follows
            raise
        handler = self._handlers.get(nr)
        if handler is None:
            return  # only the network calls stop for Python
        try:
            result = handler(tid, args)
        except nat.NativeError as exc:
            if exc.errno == errno.ESRCH:
                return
            result = -(exc.errno or errno.EPERM)  # e.g. unreadable memory: EFAULT/EPERM
        try:
            nat.syscall_return(tid, result)
        except nat.NativeError as exc:
            if exc.errno != errno.ESRCH:
                raise

    def _other_process_call(self, nr: int) -> Callable[[int, list[int]], int]:
        return lambda tid, args: self._other_process(tid, nr, args)

    def _other_process(self, tid: int, nr: int, args: list[int]) -> int:
        """A call that would change another process, which the C loop did not find in
        the tree: ESRCH, as where a PID namespace hides what is outside it."""
        name, which = PID_CALLS[nr]
        target = int(args[which] & 0xFFFFFFFF)
        target -= (target >> 31) << 32  # a pid_t: -1 is -1
        self.log.note_denial(name, f"pid {target}", OUTSIDE)
        self.log.count(name)
        if self.log.enabled:
            self.log.event("deny", pid=nat.tgid(tid), tid=tid, syscall=name, target=target,
                           decision="deny", rule=OUTSIDE)
        else:
            self.log.count("denied")
        return -errno.ESRCH

    def _destination(self, tid: int, raw: bytes, call: int, dup: int = -1) -> Destination:
        """Where a connect or send (CONNECT, SEND) to the sockaddr copy raw would go, and
        the native decision on it (ztsa_decide, as in the C loop and the file helper).
        dup: for a send, the duplicate the send goes out on: the family of that very
        socket decides an AF_UNSPEC address (the tree may swap its descriptor)."""
        family = struct.unpack_from("<H", raw)[0] if len(raw) >= 2 else 0
        domain = 0
        if family == 0 and call == SEND and len(raw) >= 2:
            # the kernel may read it as the socket's own family (UDPv4)
            domain = nat.sockopt_int(dup, SOL_SOCKET, SO_DOMAIN)
        pathfd, real = None, None
        if family == socket.AF_UNIX and len(raw) > 2 and raw[2] != 0:
            try:  # resolved once; the decision is on where it really is
                pathfd, real = nat.unix_open(tid, raw[2:])
            except nat.NativeError as exc:  # no such socket: the tracee's call fails so too
                shown = os.fsdecode(raw[2:].split(b"\0", 1)[0])
                return Destination(family, shown, Decision(True, "no such socket"), None, None,
                                   error=exc.errno or errno.ENOENT)
        why, rule = self.policy.table.decide(call, domain, raw, real)
        decision = Decision(why > 0, self.policy.explain(why, rule))
        if why == DENY_UNNAMED:
            return Destination(family, "", decision, None, None, error=errno.EINVAL)
        if why == ALLOW_PEER:
            return Destination(family, "AF_UNSPEC", decision, None, None, peer=True)
        if family == 0 and domain == socket.AF_INET and len(raw) >= 8:
            family = socket.AF_INET  # a UDPv4 send to the address
        if family == socket.AF_INET and len(raw) >= 8:
            port = struct.unpack_from(">H", raw, 2)[0]
            if not self.log.enabled and decision.allowed:
                return Destination(family, "", decision, None, port)  # no strings built
            ip = socket.inet_ntop(socket.AF_INET, raw[4:8])
            return Destination(family, f"{ip}:{port}", decision, ip, port)
        if family == socket.AF_INET6 and len(raw) >= 24:
            port = struct.unpack_from(">H", raw, 2)[0]
            if not self.log.enabled and decision.allowed:
                return Destination(family, "", decision, None, port)
            a = raw[8:24]
            shown = socket.inet_ntop(socket.AF_INET, a[12:]) if a[:12] == MAPPED_PREFIX else \
                socket.inet_ntop(socket.AF_INET6, a)
            full = socket.inet_ntop(socket.AF_INET6, a)
            return Destination(family, f"[{full}]:{port}", decision, shown, port)
        if family == socket.AF_UNIX:
            if pathfd is not None:
                return Destination(family, real or os.fsdecode(raw[2:].split(b"\0", 1)[0]),
                                   decision, None, None, pathfd=pathfd)
            name = raw[3:].decode("utf-8", "replace")
            return Destination(family, f"@{name}", decision, None, None)
        if family == 0:
            return Destination(0, "AF_UNSPEC", decision, None, None)
        return Destination(family, f"family {family}", decision, None, None)

    @staticmethod
    def _unix_target(dest: Destination) -> bytes:
        return struct.pack("<H", socket.AF_UNIX) + f"/proc/self/fd/{dest.pathfd}".encode() + \
            b"\0"

    @staticmethod
    def _release(dest: Destination) -> None:
        if dest.pathfd is not None:
            os.close(dest.pathfd)

    def _record(self, kind: str, tid: int, dest: Destination, proto: str, result: int) -> None:
        if not dest.decision.allowed:
            self.log.note_denial(kind, dest.shown, str(dest.decision.rule))
        if not self.log.enabled:
            self.log.count(kind)
            if not dest.decision.allowed:
                self.log.count("denied")
            return
        family = FAMILIES.get(dest.family, str(dest.family))
        if not dest.decision.allowed:
            # one event per decision: a denial is a deny line like the file system's,
            # with the destination as written ("ip:port"), and counted as its call
            self.log.count(kind)
            self.log.event("deny", pid=nat.tgid(tid), tid=tid, syscall=kind,
                           address=dest.shown, family=family, port=dest.port,
                           protocol=proto, decision="deny", rule=dest.decision.rule)
            return
        self.log.event(kind, pid=nat.tgid(tid), tid=tid, family=family,
                       address=dest.ip if dest.ip is not None else dest.shown, port=dest.port,
                       protocol=proto, decision="allow", rule=dest.decision.rule,
                       result=0 if result >= 0 else errno.errorcode.get(-result, str(-result)))

    def _proto(self, dup: int) -> str:
        if not self.log.enabled:
            return "?"  # only the log shows it
        t = nat.sockopt_int(dup, SOL_SOCKET, SO_TYPE)
        return TYPES.get(t, str(t))

    def _connect(self, tid: int, args: list[int]) -> int:
        fd, addr, length = int(args[0] & 0xFFFFFFFF), args[1], args[2] & 0xFFFFFFFF
        raw = nat.readmem(tid, addr, min(length, 128)) if length else b""
        dest = self._destination(tid, raw, CONNECT)
        try:
            if dest.error:
                return -dest.error
            dup = nat.pidfd_getfd(tid, fd)
            try:
                proto = self._proto(dup)
                if not dest.decision.allowed:
                    self._record("connect", tid, dest, proto, -errno.EPERM)
                    return -errno.EPERM
                target = self._unix_target(dest) if dest.pathfd is not None else raw
                result = nat.connect(dup, target)
            finally:
                os.close(dup)
        finally:
            self._release(dest)
        self._record("connect", tid, dest, proto, result)
        return result

    def _learn_wildcard(self, dup: int, raw: bytes | None, data: bytes) -> None:
        """A DNS query for a name under an allowed wildcard: learn its addresses."""
        from ztsa.sandbox import dns

        name = dns.query_name(data)
        rule = self.policy.wildcard_for(name) if name else None
        if rule is None or name is None:
            return
        if raw is None:  # a connected socket (glibc's resolver): ask who the peer is
            import socket as pysocket  # only here: socket.py's import is not free

            with pysocket.socket(fileno=os.dup(dup)) as s:
                try:
                    peer = s.getpeername()
                except OSError:
                    return
            try:
                packed = socket.inet_pton(socket.AF_INET6 if ":" in peer[0] else
                                          socket.AF_INET, peer[0])
            except OSError:
                return
            port = int(peer[1])
        else:
            family = struct.unpack_from("<H", raw)[0] if len(raw) >= 2 else 0
            if family == socket.AF_INET and len(raw) >= 8:
                packed, port = raw[4:8], struct.unpack_from(">H", raw, 2)[0]
            elif family == socket.AF_INET6 and len(raw) >= 24:
                packed, port = raw[8:24], struct.unpack_from(">H", raw, 2)[0]
            else:
                return
        if packed[:12] == MAPPED_PREFIX:
            packed = packed[12:]
        version = 4 if len(packed) == 4 else 6
        if not self.policy.is_resolver(version, int.from_bytes(packed, "big"), port):
            return
        answer = dns.ask((version, packed), data)
        learnt = dns.answer_addresses(answer) if answer else []
        kept = self.policy.learn(rule, name, learnt)

        def shown(addrs: list[tuple[int, bytes]]) -> list[str]:
            return [socket.inet_ntop(socket.AF_INET if v == 4 else socket.AF_INET6, a)
                    for v, a in addrs]

        self.log.event("learn", name=name, rule=rule.spec, addresses=shown(kept),
                       refused=shown([a for a in learnt if a not in kept]))

    def _send_common(self, tid: int, fd: int, raw: bytes | None, data: bytes, flags: int,
                     use_msg: bool) -> int:
        dup = nat.pidfd_getfd(tid, fd)
        try:
            proto = self._proto(dup)
            if self.policy.wildcards:
                self._learn_wildcard(dup, raw, data)
            if raw is None:  # no destination: the connected peer (checked at connect)
                result = (nat.sendmsg1(dup, None, data, flags) if use_msg
                          else nat.sendto(dup, data, flags, None))
                self._sigpipe(tid, result)
                return result
            dest = self._destination(tid, raw, SEND, dup)
            try:
                if dest.error:
                    return -dest.error
                if not dest.decision.allowed:
                    self._record("send", tid, dest, proto, -errno.EPERM)
                    return -errno.EPERM
                target = (None if dest.peer else self._unix_target(dest)
                          if dest.pathfd is not None else raw)
                result = (nat.sendmsg1(dup, target, data, flags) if use_msg
                          else nat.sendto(dup, data, flags, target))
            finally:
                self._release(dest)
        finally:
            os.close(dup)
        self._record("send", tid, dest, proto, result)
        self._sigpipe(tid, result)
        return result

    def _sigpipe(self, tid: int, result: int) -> None:
        if result == -errno.EPIPE:
            with contextlib.suppress(ProcessLookupError):
                os.kill(nat.tgid(tid), _signal.SIGPIPE)

    def _sendto(self, tid: int, args: list[int]) -> int:
        fd, buf, length = int(args[0] & 0xFFFFFFFF), args[1], args[2]
        flags, addr, alen = int(args[3] & 0xFFFFFFFF), args[4], args[5] & 0xFFFFFFFF
        data = nat.readmem(tid, buf, min(length, MAX_SEND)) if length else b""
        raw = nat.readmem(tid, addr, min(alen, 128)) if addr and alen else None
        if addr and raw is None:
            raw = b""
        return self._send_common(tid, fd, raw, data, flags, use_msg=False)

    def _read_msghdr(self, tid: int, addr: int) -> tuple[bytes | None, bytes] | int:
        """(name copy or None, data copy) of a struct msghdr, or -errno."""
        hdr = nat.readmem(tid, addr, 56)
        if len(hdr) < 56:
            return -errno.EFAULT
        name, namelen, iov, iovlen, control, controllen, _flags = struct.unpack(
            "<QI4xQQQQi4x", hdr)
        if controllen and control:
            return -errno.EPERM  # ancillary data (SCM_RIGHTS, ...) is not relayed
        if iovlen > MAX_IOV:
            return -errno.EMSGSIZE
        chunks = []
        total = 0
        if iovlen:
            vec = nat.readmem(tid, iov, 16 * iovlen)
            for i in range(iovlen):
                base, length = struct.unpack_from("<QQ", vec, 16 * i)
                take = min(length, MAX_SEND - total)
                if take:
                    chunks.append(nat.readmem(tid, base, take))
                    total += take
        raw = nat.readmem(tid, name, min(namelen, 128)) if name and namelen else None
        return raw, b"".join(chunks)

    def _sendmsg(self, tid: int, args: list[int]) -> int:
        fd, msg, flags = int(args[0] & 0xFFFFFFFF), args[1], int(args[2] & 0xFFFFFFFF)
        parsed = self._read_msghdr(tid, msg)
        if isinstance(parsed, int):
            return parsed
        raw, data = parsed
        return self._send_common(tid, fd, raw, data, flags, use_msg=True)

    def _sendmmsg(self, tid: int, args: list[int]) -> int:
        fd, vec, vlen = int(args[0] & 0xFFFFFFFF), args[1], int(args[2] & 0xFFFFFFFF)
        flags = int(args[3] & 0xFFFFFFFF)
        sent = 0
        for i in range(min(vlen, MAX_IOV)):
            entry = vec + 64 * i
            parsed = self._read_msghdr(tid, entry)
            if isinstance(parsed, int):
                return sent if sent else parsed
            raw, data = parsed
            result = self._send_common(tid, fd, raw, data, flags, use_msg=True)
            if result < 0:
                return sent if sent else result
            nat.writemem(tid, entry + 56, struct.pack("<I", result))
            sent += 1
        return sent

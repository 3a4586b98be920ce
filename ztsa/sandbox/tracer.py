"""The tracer: one waitpid(-1, __WALL) loop over every process of the tree.

All ptrace requests come from this thread (the kernel refuses them from any other
thread than the one that attached). Network syscalls are never allowed to run in the
tracee: the supervisor reads the destination once into its own memory, decides, and
performs the connect or send itself on a duplicate of the tracee's socket (pidfd_getfd)
with that copy, then skips the tracee's syscall and hands it the result. No other
thread or process can change what the kernel sees between the check and the use.
"""

from __future__ import annotations

import _socket as socket  # constants and inet_*: socket.py's import costs ms
import contextlib
import errno
import os
import struct
from collections.abc import Callable

from ztsa.records import NamedTuple
from ztsa.sandbox import native as nat
from ztsa.sandbox.auditlog import AuditLog
from ztsa.sandbox.filter import TAG_EXEC, TAG_NET
from ztsa.sandbox.policy import Decision, Policy

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
else:  # the constants, without signal.py's enum conversions (a millisecond at import)
    import _signal

SYS_CONNECT, SYS_SENDTO, SYS_SENDMSG, SYS_SENDMMSG = 42, 44, 46, 307
SYS_EXECVE, SYS_EXECVEAT = 59, 322
STOP_SIGNALS = {_signal.SIGSTOP, _signal.SIGTSTP, _signal.SIGTTIN, _signal.SIGTTOU}
MAX_SEND = 1 << 20  # bytes copied per emulated send; a short count is legal for send
MAX_IOV = 1024
MSG_FASTOPEN = 0x20000000
SOL_SOCKET, SO_DOMAIN, SO_TYPE = 1, 39, 3

FAMILIES: dict[int, str] = {int(socket.AF_INET): "inet", int(socket.AF_INET6): "inet6",
                            int(socket.AF_UNIX): "unix"}
TYPES: dict[int, str] = {int(socket.SOCK_STREAM): "tcp", int(socket.SOCK_DGRAM): "udp"}

MAPPED_PREFIX = bytes(10) + b"\xff\xff"

OPTIONS = (nat.O_TRACEFORK | nat.O_TRACEVFORK | nat.O_TRACECLONE | nat.O_TRACEEXEC
           | nat.O_TRACESECCOMP | nat.O_EXITKILL)


class Destination(NamedTuple):
    family: int
    shown: str  # for the log
    decision: Decision
    ip: str | None
    port: int | None
    pathfd: int | None = None  # AF_UNIX path sockets: the socket file, resolved once
    error: int = 0  # the errno the tracee gets without a syscall (e.g. ENOENT)


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


def tgid_of(tid: int) -> int:
    for line in _proc(tid, "status").splitlines():
        if line.startswith(b"Tgid:"):
            return int(line.split()[1])
    return tid


def ppid_of(pid: int) -> int | None:
    stat = _proc(pid, "stat")
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


class Tracer:
    def __init__(self, policy: Policy, log: AuditLog, main_pid: int,
                 helper: bool = False) -> None:
        """helper: main_pid is the file helper, whose one child is CMD; the helper is
        traced (it is an ancestor of the tree) but never logged."""
        self.policy = policy
        self.helper = main_pid if helper else None
        self.helper_lost = False  # the helper died while CMD ran: the tree was killed
        self.log = log
        self.main = main_pid
        self.tgid: dict[int, int] = {main_pid: main_pid}  # live tid -> tgid
        self.started: set[int] = set()  # tids whose first stop was seen
        nat.fast_reset(helper)  # the C loop's view of the tree starts empty too
        # with a helper, CMD is not known yet: the C loop leaves every exit to us
        nat.fast_roles(0 if helper else main_pid, main_pid if helper else 0)
        self.main_status: int | None = None
        self.pending_signals: list[int] = []
        self._handlers: dict[int, Callable[[int, list[int]], int]] = {
            SYS_CONNECT: self._connect, SYS_SENDTO: self._sendto,
            SYS_SENDMSG: self._sendmsg, SYS_SENDMMSG: self._sendmmsg,
        }

    # -- the loop ------------------------------------------------------------------------
    def run(self) -> int:
        """Trace until every process of the tree is gone; return CMD's wait status."""
        while self.tgid:
            try:
                tid, status = nat.wait(TAG_EXEC, TAG_NET)
            except ChildProcessError:
                self._drain()  # the exits the C loop took in last
                break
            self._drain()
            if self.pending_signals:
                self._forward_signals()
            if os.WIFEXITED(status) or os.WIFSIGNALED(status):
                self._gone(tid, status)
            elif os.WIFSTOPPED(status):
                self._stopped(tid, status)
        if self.main_status is None:
            raise TracerError("CMD vanished without an exit status")
        return self.main_status

    def on_signal(self, sig: int) -> None:
        """Signal handler: remember; forwarded from the loop (never ptrace from here)."""
        self.pending_signals.append(sig)
        self._drain()  # the processes the fast path has seen born since
        for tgid in set(self.tgid.values()):
            with contextlib.suppress(ProcessLookupError):
                os.kill(tgid, sig)

    def _forward_signals(self) -> None:
        while self.pending_signals:
            sig = self.pending_signals.pop(0)
            self.log.event("signal", signal=signal_name(sig), target="tree",
                           pids=sorted(set(self.tgid.values()) - {self.helper}))

    def kill_all(self, reason: str) -> None:
        """SIGKILL every remaining process of the tree, logging what it was."""
        for tgid in sorted(set(self.tgid.values())):
            if tgid == self.helper:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(tgid, _signal.SIGKILL)
                continue
            argv = argv_of(tgid)
            try:
                os.kill(tgid, _signal.SIGKILL)
            except ProcessLookupError:
                continue
            self.log.event("kill", pid=tgid, argv=argv, reason=reason)

    # -- events --------------------------------------------------------------------------
    def _drain(self) -> None:
        """Take in what the C loop answered by itself (forks, first stops, execs, exits
        other than CMD's and the helper's), in order, as if each had come through
        _stopped or _gone."""
        for kind, tid, other in nat.fast_events():
            if kind in (nat.EVENT_FORK, nat.EVENT_VFORK):
                self._born(other, kind)
            elif kind == nat.EVENT_STOP:
                self.tgid.setdefault(tid, tid)
                self.started.add(tid)
            elif kind == nat.FAST_NEW:  # a process (the C loop checked) not yet born
                if tid not in self.tgid:
                    self.tgid[tid] = tid
                    self._adopt(tid)
                self.started.add(tid)
            elif kind == nat.EVENT_EXEC:
                self._execed(tid, other)
            elif kind == nat.FAST_EXIT:
                self._gone(tid, other)

    def _born(self, child: int, event: int) -> None:
        if child not in self.tgid:
            # fork and vfork make a process; clone may make a thread
            self.tgid[child] = child if event != nat.EVENT_CLONE else tgid_of(child)
            self._adopt(child)

    def _execed(self, tid: int, former: int) -> None:
        if former != tid:  # exec from a non-leader thread: that tid is gone
            self.tgid.pop(former, None)
            self.started.discard(former)
        self.tgid[tid] = tid
        self._exec(tid)

    def _adopt(self, tid: int) -> None:
        """The first process after the helper is CMD."""
        if self.main == self.helper and self.tgid.get(tid) == tid and tid != self.helper:
            self.main = tid
            nat.fast_roles(tid, self.helper or 0)

    def _gone(self, tid: int, status: int) -> None:
        tgid = self.tgid.pop(tid, tid)
        self.started.discard(tid)
        # the helper leaves by itself (status 0) once no process of the tree uses the
        # filter, which can be just before the tracer sees CMD's exit
        if tid == self.helper and self.main != self.helper and self.main_status is None \
                and status != 0:
            # without its helper the tree's name-creating syscalls fail (ENOSYS); a
            # confinement component that fails ends the run, as the tracer's own failure
            self.helper_lost = True
            self.kill_all("ztsa's file helper died")
        if tid != tgid or tid == self.helper:
            return  # a thread, or the file helper
        code = os.waitstatus_to_exitcode(status)
        self.log.event("exit", pid=tid, status=code if code >= 0 else 128 - code,
                       signal=signal_name(-code) if code < 0 else None)
        if tid == self.main:
            self.main_status = status
            if self.tgid:
                self.kill_all("CMD exited")

    def _cont(self, tid: int, sig: int = 0, request: int = nat.PTRACE_CONT) -> None:
        try:
            nat.ptrace(request, tid, 0, sig)
        except nat.NativeError as exc:
            if exc.errno != errno.ESRCH:  # killed meanwhile: its exit follows
                raise

    def _stopped(self, tid: int, status: int) -> None:
        if tid not in self.tgid:  # a new child whose stop beat its parent's event
            self.tgid[tid] = tgid_of(tid)
            self._adopt(tid)
        event = status >> 16
        sig = os.WSTOPSIG(status)
        if event == nat.EVENT_SECCOMP:
            if nat.geteventmsg(tid) != TAG_EXEC:  # execve is logged at the exec event
                self._syscall(tid)
            self._cont(tid)
        elif event in (nat.EVENT_FORK, nat.EVENT_VFORK, nat.EVENT_CLONE):
            self._born(nat.geteventmsg(tid), event)
            self._cont(tid)
        elif event == nat.EVENT_EXEC:
            self._execed(tid, nat.geteventmsg(tid))
            self._cont(tid)
        elif event == nat.EVENT_STOP:
            if tid not in self.started:
                self.started.add(tid)  # first stop of a new tracee
                nat.fast_started(tid)
                self._cont(tid)
            elif sig in STOP_SIGNALS:
                self._cont(tid, request=nat.PTRACE_LISTEN)  # group stop: stay stopped
            else:
                self._cont(tid)
        else:
            self.started.add(tid)
            nat.fast_started(tid)
            if self.helper is not None:
                # a call waiting for the file helper must restart after the handler,
                # not fail with EINTR (it never would without ztsa)
                nat.restart_interrupted(tid)
            self._cont(tid, sig)  # deliver the signal

    def _exec(self, pid: int) -> None:
        if not self.log.enabled:
            self.log.count("exec")  # /proc reads only when someone reads the log
            return
        self.log.event("exec", pid=pid, ppid=ppid_of(pid), executable=_readlink(pid, "exe"),
                       argv=argv_of(pid), cwd=_readlink(pid, "cwd"))

    # -- syscalls ------------------------------------------------------------------------
    def _syscall(self, tid: int) -> None:
        nr, args = nat.syscall_get(tid)
        handler = self._handlers.get(nr)
        if handler is None:
            return  # execve/execveat: logged at the exec event
        try:
            result = handler(tid, args)
        except nat.NativeError as exc:
            if exc.errno == errno.ESRCH:
                return
            result = -(exc.errno or errno.EPERM)  # e.g. unreadable memory: EFAULT/EPERM
        nat.syscall_return(tid, result)

    def _destination(self, tid: int, fd: int, raw: bytes) -> Destination:
        family = struct.unpack_from("<H", raw)[0] if len(raw) >= 2 else 0
        if family == 0:
            try:
                dup = nat.pidfd_getfd(tid, fd)
            except nat.NativeError:
                return Destination(0, "?", Decision(False, "socket unavailable"), None, None)
            try:
                family = nat.sockopt_int(dup, SOL_SOCKET, SO_DOMAIN)
            finally:
                os.close(dup)
            if len(raw) < 2:
                return Destination(family, "AF_UNSPEC", Decision(True, "no destination"),
                                   None, None)
        # Decide on integers; format addresses only for the log or a denial (the hot
        # path of an allowed connect builds no strings).
        if family == socket.AF_INET and len(raw) >= 8:
            port = struct.unpack_from(">H", raw, 2)[0]
            decision = self.policy.decide_int(4, int.from_bytes(raw[4:8], "big"), port)
            if not self.log.enabled and decision.allowed:
                return Destination(family, "", decision, None, port)
            ip = socket.inet_ntop(socket.AF_INET, raw[4:8])
            return Destination(family, f"{ip}:{port}", decision, ip, port)
        if family == socket.AF_INET6 and len(raw) >= 24:
            port = struct.unpack_from(">H", raw, 2)[0]
            a = raw[8:24]
            mapped = a[:12] == MAPPED_PREFIX  # ::ffff:a.b.c.d is a.b.c.d
            decision = (self.policy.decide_int(4, int.from_bytes(a[12:], "big"), port)
                        if mapped else self.policy.decide_int(6, int.from_bytes(a, "big"), port))
            if not self.log.enabled and decision.allowed:
                return Destination(family, "", decision, None, port)
            shown = socket.inet_ntop(socket.AF_INET, a[12:]) if mapped else \
                socket.inet_ntop(socket.AF_INET6, a)
            full = socket.inet_ntop(socket.AF_INET6, a)
            return Destination(family, f"[{full}]:{port}", decision, shown, port)
        if family == socket.AF_UNIX:
            path = raw[2:]
            if path[:1] == b"\0":
                name = path[1:].decode("utf-8", "replace")
                return Destination(family, f"@{name}", self.policy.decide_unix(name, True),
                                   None, None)
            return self._unix_path(tid, path.split(b"\0", 1)[0])
        if family == 0 and len(raw) >= 2:
            return Destination(0, "AF_UNSPEC", Decision(True, "disconnect"), None, None)
        return Destination(family, f"family {family}", Decision(False, "unsupported family"),
                           None, None)

    def _unix_path(self, tid: int, path: bytes) -> Destination:
        """Resolve a socket path once, as the tracee's connect would (relative to its cwd,
        following symlinks), into an O_PATH descriptor; decide on where it really is, and
        let the supervisor connect through /proc/self/fd/N, which names that same file.
        A symlink swapped after the check cannot redirect the connection."""
        if not path:
            return Destination(socket.AF_UNIX, "", Decision(False, "unnamed Unix socket"),
                               None, None, error=errno.EINVAL)
        where = path if path.startswith(b"/") else f"/proc/{tid}/cwd/".encode() + path
        shown = os.fsdecode(path)
        try:
            pathfd = os.open(where, os.O_PATH | os.O_CLOEXEC)
        except OSError as exc:
            return Destination(socket.AF_UNIX, shown, Decision(True, "no such socket"),
                               None, None, error=exc.errno or errno.ENOENT)
        try:
            real = os.readlink(f"/proc/self/fd/{pathfd}")
        except OSError:
            os.close(pathfd)
            return Destination(socket.AF_UNIX, shown, Decision(False, "unresolvable path"),
                               None, None)
        decision = self.policy.decide_unix(real, False)
        return Destination(socket.AF_UNIX, real, decision, None, None, pathfd=pathfd)

    @staticmethod
    def _unix_target(dest: Destination) -> bytes:
        return struct.pack("<H", socket.AF_UNIX) + f"/proc/self/fd/{dest.pathfd}".encode() + \
            b"\0"

    @staticmethod
    def _release(dest: Destination) -> None:
        if dest.pathfd is not None:
            os.close(dest.pathfd)

    def _record(self, kind: str, tid: int, dest: Destination, proto: str, result: int) -> None:
        if not self.log.enabled:
            self.log.count(kind)
            if not dest.decision.allowed:
                self.log.count("denied")
            return
        self.log.event(kind, pid=self.tgid.get(tid, tid), tid=tid,
                       family=FAMILIES.get(dest.family, str(dest.family)),
                       address=dest.ip if dest.ip is not None else dest.shown, port=dest.port,
                       protocol=proto, decision="allow" if dest.decision.allowed else "deny",
                       rule=dest.decision.rule,
                       result=0 if result >= 0 else errno.errorcode.get(-result, str(-result)))
        if not dest.decision.allowed:
            self.log.event("deny", pid=self.tgid.get(tid, tid), syscall=kind,
                           address=dest.shown, rule=dest.decision.rule)

    def _proto(self, dup: int) -> str:
        if not self.log.enabled:
            return "?"  # only the log shows it
        t = nat.sockopt_int(dup, SOL_SOCKET, SO_TYPE)
        return TYPES.get(t, str(t))

    def _connect(self, tid: int, args: list[int]) -> int:
        fd, addr, length = int(args[0] & 0xFFFFFFFF), args[1], args[2] & 0xFFFFFFFF
        raw = nat.readmem(tid, addr, min(length, 128)) if length else b""
        dest = self._destination(tid, fd, raw)
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
            import socket as pysocket  # only here: its import costs milliseconds

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
        self.policy.learn(rule, name, learnt)
        self.log.event("learn", name=name, rule=rule.spec,
                       addresses=[socket.inet_ntop(socket.AF_INET if v == 4 else
                                                   socket.AF_INET6, a) for v, a in learnt])

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
            dest = self._destination(tid, fd, raw)
            try:
                if dest.error:
                    return -dest.error
                if not dest.decision.allowed:
                    self._record("send", tid, dest, proto, -errno.EPERM)
                    return -errno.EPERM
                target = self._unix_target(dest) if dest.pathfd is not None else raw
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
                os.kill(self.tgid.get(tid, tid), _signal.SIGPIPE)

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

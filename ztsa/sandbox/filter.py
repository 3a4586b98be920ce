"""The seccomp filter of `ztsa exec`, as classic BPF.

Hand-assembled rather than built with libseccomp at run time: pyseccomp's import runs
`ldconfig` through ctypes (a subprocess before every command), and its default kill
action kills a thread, not the process. libseccomp is its independent check instead:
tests/sandbox/test_filter_oracle.py builds the same policy with it and compares the
verdicts of both programs for every syscall number and deciding argument.

What it does (x86_64 and aarch64, each with its own numbers from the one table; a call
the architecture lacks, as aarch64 lacks open, mkdir, chmod and the other calls with an
*at form, is left out of every list below):
- any other architecture: kill the process. On x86_64, i386 (`int 0x80`) and any x32
  syscall number; on aarch64, 32-bit ARM (compat) calls;
- io_uring, ptrace, process_vm_readv/writev, seccomp, and prctl(PR_SET_SECCOMP):
  EPERM (no way around the tracer, no nested filter or listener);
- the key management calls keyctl, add_key and request_key: EPERM (the tree reads no
  keyring, its own fresh session keyring included, and leaves no key behind);
- pidfd_getfd: EPERM (another process's descriptors: the agent's own, opened by the
  file helper on its kept state, which no other process of the tree may write);
- chmod, fchmod, fchmodat and fchmodat2 with the setuid or setgid bit: EPERM (a tree
  started by root keeps uid 0: a setuid-root file it left would make anyone root
  after the run); without the file helper (which strips the bits from the modes of
  what it creates) so are open/openat with O_CREAT, creat, mknod and mknodat with them;
- clone with CLONE_UNTRACED: EPERM; clone3: ENOSYS, so libc falls back to clone;
- socket families other than AF_UNIX, AF_INET, AF_INET6: EAFNOSUPPORT; and for the two
  IP families, protocols other than TCP, UDP and ICMP (ping sockets): EPROTONOSUPPORT.
  SCTP's socket options connect and bind to further addresses (SCTP_SOCKOPT_CONNECTX,
  BINDX_ADD) that no connect or bind the tracer or the helper decides names, and MPTCP
  adds subflows of its own;
- ioctl TIOCSTI and TIOCLINUX (terminal injection), and the terminal requests whose
  effect outlives the run on the caller's terminal, which the tree shares: TIOCEXCL
  (every later open of it EBUSY), TIOCSETD (a line discipline that drops all I/O),
  TCXONC (output stopped: ztsa's own last line would block for ever), TIOCCONS,
  TIOCVHANGUP and TIOCSLCKTRMIOS, a serial line's settings (modem lines, a held break,
  the port's configuration), and every request of a Linux console's (linux/kd.h
  and linux/vt.h: keyboard mode, keymaps and function-key strings of every console,
  fonts, a switch or lock of the consoles): EPERM;
- the file systems' ioctls that change an inode (their families: 'f' as FS_IOC_SETFLAGS,
  EXT4_IOC_* and fscrypt's and fs-verity's, 'v' as FS_IOC_SETVERSION, 'X' as
  FS_IOC_FSSETXATTR and XFS's, btrfs's and f2fs's): EPERM, but for the ones that only
  read (FS_IOC_GETFLAGS, FS_IOC_FIEMAP, FS_IOC_FSGETXATTR, ...) or change only content
  the descriptor may write (FICLONE, FICLONERANGE, FIDEDUPERANGE). On a descriptor the
  tree inherits, opened on the caller's writable mounts, no read-only view or Landlock
  right stops them (a file's flags, generation or project, a subvolume made in a
  passed directory); an ioctl of those families this list does not know is refused;
- fcntl F_SETLEASE and F_NOTIFY: EPERM. A lease on a file the tree may only read
  blocks every outside open of it (root's too) for up to the lease-break time and tells
  the tree when one happens; dnotify tells it when outside processes change a
  directory;
- with the file helper, flock (but an unlock) and fcntl's F_SETLK, F_SETLKW, F_OFD_SETLK
  and F_OFD_SETLKW: SECCOMP_RET_USER_NOTIF. A lock needs only a readable descriptor, and
  one the tree held on an outside file would make the host's lockers wait: the helper
  takes it only on a file in the writable places (native/locks.c);
- signal-driven I/O: fcntl F_SETFL with O_ASYNC, F_SETSIG and ioctl FIOASYNC: EPERM. A
  file's SIGIO (or the F_SETSIG signal) goes to the owner F_SETOWN named, and Landlock's
  signal scope judges whoever set that owner: on a file the tree inherits (its stdio,
  --pass-fd) whose owner a process outside set, the tree could otherwise turn delivery
  on, pick SIGKILL, and kill that process with a write;
- setsockopt of source routes: IPV6_RTHDR, IPV6_2292RTHDR, IPV6_2292PKTOPTIONS and
  IP_OPTIONS: EPERM (a routing header sends a packet to an allowed address on to any
  other, and needs no privilege for IPv6);
- setpriority and ioprio_set on a process group or a user (PRIO_PGRP, PRIO_USER,
  IOPRIO_WHO_PGRP, IOPRIO_WHO_USER): EPERM. A process group is not bounded by a PID
  namespace (on a terminal, CMD shares the caller's job's group), nor a user without
  one; nothing a build runs needs them;
- without a PID namespace of the tree's own (check_pids), the calls that change another
  process named by its pid (setpriority, ioprio_set, sched_setaffinity,
  sched_setscheduler, sched_setparam, sched_setattr, and prlimit64 with new limits)
  stop in the tracer when that pid is not 0 (the caller): it lets through a process of
  the tree and answers ESRCH for any other, as a PID namespace would. Landlock covers
  signals and ptrace-like access, but not these: an outside process of the same user
  could be reniced, pinned, given a one-second CPU limit (and so killed);
- prctl(PR_SET_DUMPABLE): succeeds without effect. A non-dumpable process could not be
  read by ztsa's file helper (which copies path arguments out of the caller), so its
  file creations would fail; the tree is one trust domain and nothing in it may ptrace
  or use process_vm_readv, but other processes of the tree can then read its memory
  through /proc/PID/mem, as they could any of the tree's processes;
- connect, sendmsg, sendmmsg, execve, execveat, and sendto with a destination address:
  SECCOMP_RET_TRACE, so the tracer decides. A process that somehow runs untraced gets
  ENOSYS for these (the kernel's answer to RET_TRACE without a tracer): it fails
  closed. With the tree's own network namespace, connect, addressed sends, sendmsg,
  sendmmsg, bind and listen go to the file helper instead (SECCOMP_RET_USER_NOTIF),
  which makes each call itself (native/net.c);
- with agent-file protection: open and openat with O_CREAT, creat, mkdir(at),
  mknod(at), symlink(at), link(at), rename(at/at2) and bind: SECCOMP_RET_USER_NOTIF, so
  the file helper performs them or lets them run (see ztsa/sandbox/protect.py); umask
  too, which the helper notes and lets run (it applies the caller's umask); and the
  calls that change a file in place or may be refused outside the writable places: the
  opens for writing, chmod (but with setuid or setgid), chown, utime(s), utimensat,
  setxattr, removexattr and their l-/f-/-at forms, truncate, unlink(at), rmdir
  (native/metadata.c); a process whose helper is gone gets ENOSYS; openat2, whose
  flags lie in memory the tree could rewrite after a check, setxattrat and
  removexattrat: ENOSYS, so libc falls back to openat and the older calls; under
  --audit-only every open too, for the helper to judge (native/audit.c);
- file_setattr (Linux 6.17), which sets what FS_IOC_FSSETXATTR does, and every system
  call numbered after the last one this filter knows (LAST_KNOWN): ENOSYS, as a kernel
  without them answers, so libc falls back to the calls above. A call added to a later
  kernel is not let through before someone has judged it here;
- everything else: allowed.
Arguments are compared on their low 32 bits (the kernel's int flags and requests);
sendto's pointer argument on both halves.
"""

from __future__ import annotations

import errno
import struct

from ztsa.sandbox.native import ffi, lib

AUDIT_ARCH_X86_64 = lib.ZTSA_AUDIT_ARCH_X86_64  # 0xC000003E
AUDIT_ARCH_AARCH64 = lib.ZTSA_AUDIT_ARCH_AARCH64  # 0xC00000B7
X32_BIT = 0x40000000

RET_KILL_PROCESS = 0x80000000
RET_TRACE = 0x7FF00000
# SECCOMP_RET_DATA tags, read back with PTRACE_GETEVENTMSG: the tracer knows what stopped
# without fetching registers
TAG_EXEC = 1
TAG_NET = 2
TAG_PID = 3
RET_USER_NOTIF = 0x7FC00000
RET_ALLOW = 0x7FFF0000
RET_ERRNO = 0x00050000



def _table(arch: int) -> tuple[dict[str, int], dict[str, tuple[int, ...]]]:
    """An architecture's system calls' numbers (only those it has) and their arguments'
    roles (enum ztsa_arg, the same on every architecture), from the table the C code
    reads too (native/ztsa_nr.h, through ztsa_syscalls_of())."""
    n = ffi.new("int *")
    rows = lib.ztsa_syscalls_of(arch, n)
    if rows == ffi.NULL:
        raise ValueError(f"no table of system calls for AUDIT_ARCH {arch:#x}")
    nr: dict[str, int] = {}
    roles: dict[str, tuple[int, ...]] = {}
    for i in range(n[0]):
        name = ffi.string(rows[i].name).decode()
        roles[name] = tuple(rows[i].arg)
        if rows[i].nr >= 0:
            nr[name] = rows[i].nr
    return nr, roles


ARCH = lib.ztsa_audit_arch()  # the architecture ztsa runs on (the filter's default)
NR, _ROLES = _table(ARCH)
ARCHES = (AUDIT_ARCH_X86_64, AUDIT_ARCH_AARCH64)


def numbers(arch: int) -> dict[str, int]:
    """The numbers of an architecture (an AUDIT_ARCH value), of the calls it has."""
    return NR if arch == ARCH else _table(arch)[0]


def arg(name: str, role: int) -> int:
    """The index of call name's first argument of role (lib.ZTSA_ARG_*)."""
    return _ROLES[name].index(role)


OFLAGS, MODE, PID = lib.ZTSA_ARG_OFLAGS, lib.ZTSA_ARG_MODE, lib.ZTSA_ARG_PID
FS_TRACED = ("umask", "creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat",
             "link", "linkat", "rename", "renameat", "renameat2", "bind")
# what the helper changes itself when the file lies on a writable mount of the tree
# (mode, owner, times, xattrs), or only counts when the kernel refuses it (native/metadata.c)
META_TRACED = ("chown", "fchown", "lchown", "fchownat", "utime", "utimes", "futimesat",
               "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
               "lremovexattr", "fremovexattr", "truncate", "unlink", "unlinkat", "rmdir")
META_ENOSYS = ("setxattrat", "removexattrat")  # libc falls back to the calls above
LAST_KNOWN = 469  # file_setattr, Linux 6.17: every later number is ENOSYS
O_WRITES = 0o1 | 0o2 | 0o1000  # O_WRONLY | O_RDWR | O_TRUNC
O_CREAT = 0o100
SET_ID = 0o6000  # S_ISUID | S_ISGID
CHMODS = ("chmod", "fchmod", "fchmodat", "fchmodat2")
TRACED = ("connect", "sendmsg", "sendmmsg", "execve", "execveat")
# pidfd_getfd: another process's descriptors (the agent's own, on its kept state, which
# its tools may not write: --agent)
DENIED = ("ptrace", "process_vm_readv", "process_vm_writev", "seccomp", "keyctl", "add_key",
          "request_key", "io_uring_setup",
          "io_uring_enter", "io_uring_register", "pidfd_getfd")
CLONE_UNTRACED = 0x00800000
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
# IPPROTO_IP (the type's default), ICMP, TCP, UDP, ICMPV6
IP_PROTOCOLS = (0, 1, 6, 17, 58)
TIOCSTI, TIOCLINUX, FIOASYNC = 0x5412, 0x541C, 0x5452
# TCXONC, TIOCEXCL, TIOCCONS, TIOCSETD, TIOCVHANGUP, TIOCSLCKTRMIOS; and a serial line's
# (a serial console as the terminal): TIOCMBIS, TIOCMBIC, TIOCMSET (DTR dropped hangs the
# line up), TIOCSSOFTCAR, TIOCSSERIAL, TIOCSBRK (a break held), TIOCSRS485, TIOCSERCONFIG,
# TIOCSERSWILD, TIOCSERSETMULTI, TIOCSISO7816
TTY_LASTING = (0x540A, 0x540C, 0x541D, 0x5423, 0x5437, 0x5457,
               0x5416, 0x5417, 0x5418, 0x541A, 0x541F, 0x5427, 0x542F, 0x5453, 0x5455,
               0x545B, 0xC0285443)
# a console's requests: 'K' (KDSKBMODE, KDSKBENT, PIO_FONT, ...) and 'V' (VT_ACTIVATE,
# VT_LOCKSWITCH, ...), numbered without a size (video4linux's 'V' requests have one)
CONSOLE_IOCTLS = (0x4B00, 0x5600)
F_SETFL, F_SETSIG, O_ASYNC = 4, 10, 0o20000
F_SETLEASE, F_NOTIFY = 1024, 1026
F_LOCKS = (6, 7, 37, 38)  # F_SETLK, F_SETLKW, F_OFD_SETLK, F_OFD_SETLKW
LOCK_NB, LOCK_UN = 4, 8
# the ioctl type bytes of the file systems' own requests, and what of them the tree may
# use: requests that read, and the clones that write only what the descriptor may
FS_IOCTL_TYPES = (0x66, 0x76, 0x58, 0x94, 0xF5)  # 'f', 'v', 'X', btrfs, f2fs
FS_IOCTL_ALLOWED = (
    0x80086601, 0x80046601,  # FS_IOC_GETFLAGS, FS_IOC32_GETFLAGS
    0x80087601, 0x80047601,  # FS_IOC_GETVERSION, FS_IOC32_GETVERSION
    0xC020660B,  # FS_IOC_FIEMAP
    0x801C581F,  # FS_IOC_FSGETXATTR
    0xC0C0583B,  # FS_IOC_GETFSMAP
    0x81009431,  # FS_IOC_GETFSLABEL
    0x400C6615, 0xC0096616,  # FS_IOC_GET_ENCRYPTION_POLICY(_EX)
    0xC0046686, 0xC0286687,  # FS_IOC_MEASURE_VERITY, FS_IOC_READ_VERITY_METADATA
    0x40049409, 0x4020940D, 0xC0189436,  # FICLONE, FICLONERANGE, FIDEDUPERANGE
)
AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
IPPROTO_IP, IP_OPTIONS = 0, 4
IPPROTO_IPV6, IPV6_ROUTES = 41, (57, 5, 6)  # IPV6_RTHDR, IPV6_2292RTHDR, ..._2292PKTOPTIONS
PR_SET_SECCOMP = 22
PR_SET_DUMPABLE = 4
PRIO_PROCESS, IOPRIO_WHO_PROCESS = 0, 1
# the calls that change a process named by their first argument (pid 0: the caller)
PID_FIRST = ("sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr")

LD_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE = 0x35
JSET = 0x45
RET = 0x06  # BPF_RET | BPF_K

OFF_NR, OFF_ARCH = 0, 4


def arg_lo(i: int) -> int:
    return 16 + 8 * i


def arg_hi(i: int) -> int:
    return 20 + 8 * i


Insn = tuple[int, object, object, int]  # code, jt label/offset, jf label/offset, k


def ld(name: str, role: int, high: bool = False) -> Insn:
    """Load the low (or high) 32 bits of call name's argument of role."""
    i = arg(name, role)
    return (LD_ABS, 0, 0, arg_hi(i) if high else arg_lo(i))


def _assemble(prog: list[Insn | str]) -> bytes:
    """Resolve string labels to relative jumps; a str entry marks a label."""
    labels: dict[str, int] = {}
    insns: list[Insn] = []
    for item in prog:
        if isinstance(item, str):
            labels[item] = len(insns)
        else:
            insns.append(item)
    out = bytearray()
    for pc, (code, jt, jf, k) in enumerate(insns):
        def rel(target: object, pc: int = pc) -> int:
            if isinstance(target, int):
                return target
            off = labels[str(target)] - pc - 1
            if not 0 <= off <= 255:
                raise ValueError(f"jump to {target} out of range ({off})")
            return off
        out += struct.pack("<HBBI", code, rel(jt), rel(jf), k & 0xFFFFFFFF)
    return bytes(out)


def _set_id_check(i: int, ok: str) -> list[Insn | str]:
    """Label chmod_I: a mode in argument i with the setuid or setgid bit is EPERM, any
    other goes to ok."""
    return [f"chmod_{i}", (LD_ABS, 0, 0, arg_lo(i)), (JSET, "eperm", ok, SET_ID)]


def build(trace_all_sends: bool = False, trace_fs: bool = False,
          notify_connect: bool = False, notify_net: bool = False,
          notify_reads: bool = False, check_pids: bool = False,
          arch: int | None = None) -> bytes:
    """trace_all_sends: also stop sendto without an address (a connected socket), so
    that DNS queries for wildcard names (--allow-net '*.example.com') are seen; it costs a
    stop per send, so only that mode asks for it. trace_fs: stop the name-creating
    syscalls for agent-file protection (user notifications to the file helper).
    notify_connect (with trace_fs): connect goes to the file helper too, instead of a
    ptrace stop. notify_net (with notify_connect): the tree has a network namespace of its
    own, and sendto with an address, sendmsg, sendmmsg and listen go to the helper too:
    no network call stops in the tracer. notify_reads (with trace_fs, --audit-only):
    every open goes to the helper, which judges it and lets it run. check_pids: no PID
    namespace hides outside processes, so a call that changes another process by its
    pid stops in the tracer, which allows only the tree's own. arch: the AUDIT_ARCH of
    the program (default: this machine's); a call it lacks is in no check."""
    if notify_connect and not trace_fs:
        raise ValueError("notify_connect needs the file helper (trace_fs)")
    if notify_net and not notify_connect:
        raise ValueError("notify_net needs notify_connect")
    if notify_reads and not trace_fs:
        raise ValueError("notify_reads needs the file helper (trace_fs)")
    arch = ARCH if arch is None else arch
    nr = numbers(arch)

    def eq(target: object, names: tuple[str, ...] | list[str]) -> list[Insn | str]:
        """A jump to target for each of names the architecture has."""
        return [(JEQ, target, 0, nr[name]) for name in names if name in nr]

    # an O_CREAT open goes to the file helper, or, with none to strip the setuid and
    # setgid bits from new files' modes, to the check of its mode argument
    creates = (("trace_fs", "trace_fs") if trace_fs else
               tuple(f"chmod_{arg(name, MODE)}" for name in ("open", "openat")))
    # with the helper, so does an open for writing (counted when refused), and every
    # chmod the setuid check lets pass
    plain = "trace_fs" if notify_reads else "writes" if trace_fs else "allow"
    chmod_ok = "trace_fs" if trace_fs else "allow"
    fs_checks: list[Insn | str] = [*eq("open", ["open"]), *eq("openat", ["openat"])]
    fs: list[Insn | str] = [
        "open",
        ld("open", OFLAGS),
        (JSET, creates[0], plain, O_CREAT),
    ] if "open" in nr else []
    fs += [
        "openat",
        ld("openat", OFLAGS),
        (JSET, creates[1], plain, O_CREAT),
    ]
    fs_tail: list[Insn | str] = []
    if trace_fs:
        fs_checks += eq("enosys", ["openat2", *META_ENOSYS])
        fs_checks += eq("trace_fs", [*FS_TRACED, *META_TRACED])
        # after every block that jumps here (jumps only go forward)
        fs_tail += ["writes", (JSET, "trace_fs", "allow", O_WRITES),
                    "trace_fs", (RET, 0, 0, RET_USER_NOTIF)]
    else:
        fs_checks += [insn for name in ("creat", "mknod", "mknodat")
                      for insn in eq(f"chmod_{arg(name, MODE)}", [name])]
        fs += _set_id_check(arg("openat", MODE), "allow")
    addressed = "trace_fs" if notify_net else "trace"
    sendto: list[Insn | str] = [
        "sendto",
        ld("sendto", lib.ZTSA_ARG_ADDR),
        (JEQ, 0, addressed, 0),
        ld("sendto", lib.ZTSA_ARG_ADDR, high=True),
        (JEQ, "allow", addressed, 0),
    ] if not trace_all_sends else ["sendto", (RET, 0, 0, RET_TRACE | TAG_NET)]
    if arch not in ARCHES:
        raise ValueError(f"no filter for AUDIT_ARCH {arch:#x}")
    prog: list[Insn | str] = [
        (LD_ABS, 0, 0, OFF_ARCH),
        (JEQ, 0, "kill", arch),
        (LD_ABS, 0, 0, OFF_NR),
        # x86_64's x32 numbers (aarch64 has no such range: past LAST_KNOWN is ENOSYS)
        *([(JGE, "kill", 0, X32_BIT)] if arch == AUDIT_ARCH_X86_64 else []),
        (JGE, "enosys", 0, LAST_KNOWN + 1),
        (JEQ, "enosys", 0, nr["file_setattr"]),
        (JEQ, "clone", 0, nr["clone"]),
        (JEQ, "socket", 0, nr["socket"]),
        (JEQ, "sendto", 0, nr["sendto"]),
        (JEQ, "ioctl", 0, nr["ioctl"]),
        (JEQ, "fcntl", 0, nr["fcntl"]),
        (JEQ, "setsockopt", 0, nr["setsockopt"]),
        (JEQ, "prctl", 0, nr["prctl"]),
        (JEQ, "enosys", 0, nr["clone3"]),
        *(insn for name in CHMODS for insn in eq(f"chmod_{arg(name, MODE)}", [name])),
        (JEQ, "setpriority", 0, nr["setpriority"]),
        (JEQ, "ioprio_set", 0, nr["ioprio_set"]),
    ]
    # a process named by its pid: the caller's own (0) runs; another is the tracer's to
    # judge without a PID namespace, and unreachable outside the tree with one
    other = "trace_pid" if check_pids else "allow"
    # one load of the pid for the calls that share its place (ValueError if they do not)
    (who,) = {arg(name, PID) for name in ("setpriority", "ioprio_set")}
    (pid_first,) = {arg(name, PID) for name in (*PID_FIRST, "prlimit64")}
    pids: list[Insn | str] = [
        "setpriority",
        ld("setpriority", lib.ZTSA_ARG_WHICH),
        (JEQ, "pid_who", "eperm", PRIO_PROCESS),
        "ioprio_set",
        ld("ioprio_set", lib.ZTSA_ARG_WHICH),
        (JEQ, "pid_who", "eperm", IOPRIO_WHO_PROCESS),
        "pid_who",
        (LD_ABS, 0, 0, arg_lo(who)),
        (JEQ, "allow", other, 0),
    ]
    if check_pids:
        prog += eq("pid_first", PID_FIRST)
        prog += [(JEQ, "prlimit", 0, nr["prlimit64"])]
        pids += [
            "prlimit",  # only with new limits: reading another's is no change
            ld("prlimit64", lib.ZTSA_ARG_NEWLIMIT),
            (JEQ, 0, "pid_first", 0),
            ld("prlimit64", lib.ZTSA_ARG_NEWLIMIT, high=True),
            (JEQ, "allow", 0, 0),
            "pid_first",
            (LD_ABS, 0, 0, arg_lo(pid_first)),
            (JEQ, "allow", "trace_pid", 0),
        ]
    # a lock but an unlock goes to the helper, which refuses one on a file outside the
    # writable places (native/locks.c)
    flock: list[Insn | str] = [
        "flock",
        ld("flock", lib.ZTSA_ARG_LOCKOP),
        (JEQ, "allow", 0, LOCK_UN),
        (JEQ, "allow", "trace_fs", LOCK_UN | LOCK_NB),
    ] if trace_fs else []
    if trace_fs:
        prog += [(JEQ, "flock", 0, nr["flock"])]
    if notify_connect:  # before the TRACED checks: the first equal number decides
        prog += [(JEQ, "trace_fs", 0, nr["connect"])]
    if notify_net:
        prog += [(JEQ, "trace_fs", 0, nr[name]) for name in ("sendmsg", "sendmmsg", "listen")]
    prog += [(JEQ, "trace_exec" if name.startswith("exec") else "trace", 0, nr[name])
             for name in TRACED]
    prog += eq("eperm", DENIED)
    prog += fs_checks
    prog += [
        (RET, 0, 0, RET_ALLOW),
        *fs,
        "clone",
        ld("clone", lib.ZTSA_ARG_CLONEFLAGS),
        (JSET, "eperm", "allow", CLONE_UNTRACED),
        "socket",
        ld("socket", lib.ZTSA_ARG_DOMAIN),
        (JEQ, "allow", 0, AF_UNIX),
        (JEQ, "inet", 0, AF_INET),
        (JEQ, "inet", 0, AF_INET6),
        (RET, 0, 0, RET_ERRNO | errno.EAFNOSUPPORT),
        "inet",
        ld("socket", lib.ZTSA_ARG_PROTOCOL),
        *((JEQ, "allow", 0, proto) for proto in IP_PROTOCOLS),
        (RET, 0, 0, RET_ERRNO | errno.EPROTONOSUPPORT),
        *sendto,
        "ioctl",
        ld("ioctl", lib.ZTSA_ARG_REQUEST),
        (JEQ, "eperm", 0, TIOCSTI),
        (JEQ, "eperm", 0, FIOASYNC),
        (JEQ, "eperm", 0, TIOCLINUX),
        *((JEQ, "eperm", 0, req) for req in TTY_LASTING),
        (AND_K, 0, 0, 0xFFFFFF00),
        *((JEQ, "eperm", 0, base) for base in CONSOLE_IOCTLS),
        ld("ioctl", lib.ZTSA_ARG_REQUEST),
        *((JEQ, "allow", 0, req) for req in FS_IOCTL_ALLOWED),
        (AND_K, 0, 0, 0xFF00),
        *((JEQ, "eperm", 0, t << 8) for t in FS_IOCTL_TYPES[:-1]),
        (JEQ, "eperm", "allow", FS_IOCTL_TYPES[-1] << 8),
        "fcntl",
        ld("fcntl", lib.ZTSA_ARG_FCMD),
        (JEQ, "eperm", 0, F_SETSIG),
        (JEQ, "eperm", 0, F_SETLEASE),
        (JEQ, "eperm", 0, F_NOTIFY),
        *((JEQ, "trace_fs", 0, cmd) for cmd in (F_LOCKS if trace_fs else ())),
        (JEQ, 0, "allow", F_SETFL),
        ld("fcntl", lib.ZTSA_ARG_CMDARG),
        (JSET, "eperm", "allow", O_ASYNC),
        *flock,
        "setsockopt",
        ld("setsockopt", lib.ZTSA_ARG_LEVEL),
        (JEQ, "sockopt_ip", 0, IPPROTO_IP),
        (JEQ, 0, "allow", IPPROTO_IPV6),
        ld("setsockopt", lib.ZTSA_ARG_OPTNAME),
        *((JEQ, "eperm", 0, opt) for opt in IPV6_ROUTES),
        (RET, 0, 0, RET_ALLOW),
        "sockopt_ip",
        ld("setsockopt", lib.ZTSA_ARG_OPTNAME),
        (JEQ, "eperm", "allow", IP_OPTIONS),
        *(insn for i in sorted({arg(name, MODE) for name in CHMODS})
          for insn in _set_id_check(i, chmod_ok)),
        "prctl",
        ld("prctl", lib.ZTSA_ARG_OPTION),
        (JEQ, "eperm", 0, PR_SET_SECCOMP),
        (JEQ, "fake_ok", "allow", PR_SET_DUMPABLE),
        *pids,
        *fs_tail,
        "allow",
        (RET, 0, 0, RET_ALLOW),
        "trace",
        (RET, 0, 0, RET_TRACE | TAG_NET),
        "trace_exec",
        (RET, 0, 0, RET_TRACE | TAG_EXEC),
        "trace_pid",
        (RET, 0, 0, RET_TRACE | TAG_PID),
        "eperm",
        (RET, 0, 0, RET_ERRNO | errno.EPERM),
        "fake_ok",
        (RET, 0, 0, RET_ERRNO | 0),
        "enosys",
        (RET, 0, 0, RET_ERRNO | errno.ENOSYS),
        "kill",
        (RET, 0, 0, RET_KILL_PROCESS),
    ]
    return _assemble(prog)

"""ztsa's hand-assembled seccomp filter against libseccomp as an oracle.

The test writes the policy of ztsa/sandbox/filter.py's docstring a second time, as
libseccomp rules (through pyseccomp), exports libseccomp's BPF, and runs both programs
in the classic-BPF interpreter below over every syscall number of every architecture
and over the arguments the policy looks at, in every mode of build(), for x86_64 and
for aarch64 (whose program filter.py builds from the table's aarch64 column on any
machine: it lacks open, mkdir, chmod and the other calls with an *at form). Syscall numbers
and names come from libseccomp's tables, constants from the standard library where it
has them, so that the oracle shares nothing with filter.py but the policy's wording and
the RET_TRACE data tags (an interface with the tracer, not a policy decision).
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import socket
import stat
import struct
import tempfile
import termios
from collections.abc import Callable, Iterator
from typing import NamedTuple

import pytest

from ztsa.sandbox import filter as flt

try:
    import pyseccomp as scmp
except (ImportError, OSError, RuntimeError) as exc:  # RuntimeError: no libseccomp found
    pytest.skip(f"pyseccomp or libseccomp unavailable: {exc}", allow_module_level=True)

X86_64, I386, X32 = scmp.Arch.X86_64, scmp.Arch.X86, scmp.Arch.X32  # AUDIT_ARCH_* values
AARCH64, ARM = scmp.Arch.AARCH64, scmp.Arch.ARM
X32_BIT = 0x40000000

# seccomp return values (linux/seccomp.h)
KILL_PROCESS, KILL_THREAD, TRAP = 0x80000000, 0x00000000, 0x00030000
ERRNO, USER_NOTIF, TRACE, LOG, ALLOW = 0x00050000, 0x7FC00000, 0x7FF00000, 0x7FFC0000, 0x7FFF0000
NET, EXEC, PID = TRACE | flt.TAG_NET, TRACE | flt.TAG_EXEC, TRACE | flt.TAG_PID

# argument constants of the policy, from the standard library where it has them
CLONE_UNTRACED = 0x00800000  # linux/sched.h (os.CLONE_* only from Python 3.12)
F_SETSIG = 10  # linux/fcntl.h (not in Python's fcntl module)
# requests whose effect on a shared terminal outlives the run (asm-generic/ioctls.h)
TTY_LASTING = (termios.TCXONC, termios.TIOCEXCL, termios.TIOCCONS, termios.TIOCSETD,
               0x5437, 0x5457,  # TIOCVHANGUP, TIOCSLCKTRMIOS
               # a serial line's: modem lines, soft carrier, the port, a held break, ...
               termios.TIOCMBIS, termios.TIOCMBIC, termios.TIOCMSET, termios.TIOCSSOFTCAR,
               termios.TIOCSSERIAL, 0x5427, 0x542F, termios.TIOCSERCONFIG,
               termios.TIOCSERSWILD, termios.TIOCSERSETMULTI, 0xC0285443)
CLONE_THREAD_FLAGS = 0x003D0F00  # glibc's pthread_create: VM|FS|FILES|SIGHAND|THREAD|...
SIGCHLD = 17
PR_SET_DUMPABLE, PR_SET_SECCOMP, PR_SET_NO_NEW_PRIVS = 4, 22, 38  # linux/prctl.h
FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)
AF_NETLINK, AF_PACKET = 16, 17
AT_FDCWD = -100 & 0xFFFFFFFFFFFFFFFF

# ---- the policy, from filter.py's docstring, as libseccomp rules ----

DENIED = ("io_uring_setup", "io_uring_enter", "io_uring_register", "ptrace",
          "process_vm_readv", "process_vm_writev", "seccomp", "keyctl", "add_key",
          "request_key", "pidfd_getfd")
NOTIFIED_FS = ("creat", "mkdir", "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link",
               "linkat", "rename", "renameat", "renameat2", "bind", "umask")
# changed by the helper itself on a writable mount (mode, owner, times, xattrs), or
# counted when the kernel refuses them
META_TRACED = ("chown", "fchown", "lchown", "fchownat", "utime", "utimes", "futimesat",
               "utimensat", "setxattr", "lsetxattr", "fsetxattr", "removexattr",
               "lremovexattr", "fremovexattr", "truncate", "unlink", "unlinkat", "rmdir")
SET_ID_BITS = stat.S_ISUID | stat.S_ISGID
# setxattrat and removexattrat (Linux 6.13), by number: libseccomp 2.5 has no names
META_ENOSYS = (463, 466)

_lib = ctypes.CDLL(scmp._libseccomp._name)  # the handle pyseccomp loaded; own prototypes
_lib.seccomp_syscall_resolve_name_arch.argtypes = (ctypes.c_uint32, ctypes.c_char_p)
_lib.seccomp_syscall_resolve_name_arch.restype = ctypes.c_int


def sysno(name: str, arch: int = X86_64) -> int:
    nr = _lib.seccomp_syscall_resolve_name_arch(arch, name.encode())
    assert nr >= 0, f"libseccomp does not know {name}"
    return int(nr)


def has(name: str, arch: int) -> bool:
    """Whether arch has the call (libseccomp answers a negative pseudo-number if not)."""
    return int(_lib.seccomp_syscall_resolve_name_arch(arch, name.encode())) >= 0


def syscall_name(arch: int, nr: int) -> str:
    try:
        return scmp.resolve_syscall(arch, nr).decode()
    except ValueError:
        return "?"


def low32_eq(arg: int, value: int) -> scmp.Arg:
    """The low half of an argument equals value: the kernel reads an int argument there."""
    return scmp.Arg(arg, scmp.MASKED_EQ, 0xFFFFFFFF, value)


def bit_set(arg: int, bit: int) -> scmp.Arg:
    return scmp.Arg(arg, scmp.MASKED_EQ, bit, bit)


def low32_not(arg: int, value: int) -> list[scmp.Arg]:
    """The ways the low half of an argument differs from value, one rule's comparison
    each (libseccomp compares a low half only for equality, masked): a bit of the low
    half set that value lacks, or, for a value with bits, one of them clear."""
    ways = [scmp.Arg(arg, scmp.MASKED_EQ, 1 << b, 1 << b)
            for b in range(32) if not value >> b & 1]
    return ways + [scmp.Arg(arg, scmp.MASKED_EQ, 1 << b, 0) for b in range(32) if value >> b & 1]


def libseccomp_bpf(trace_all_sends: bool, trace_fs: bool, notify_connect: bool,
                   optimize: int, notify_net: bool = False, notify_reads: bool = False,
                   check_pids: bool = False, arch: int = X86_64) -> bytes:
    if scmp.get_api() < 5:  # user notification; the kernel here need not support it
        scmp.set_api(5)
    f = scmp.SyscallFilter(ALLOW)
    if scmp.system_arch() != arch:
        f.add_arch(arch)
        f.remove_arch(scmp.Arch.NATIVE)
    # any other arch (i386, arm's compat calls); on x86_64, x32 numbers
    f.set_attr(scmp.Attr.ACT_BADARCH, KILL_PROCESS)
    f.set_attr(scmp.Attr.CTL_OPTIMIZE, optimize)
    native = scmp.system_arch()

    def add(action: int, nr: int) -> None:
        """A rule by number: libseccomp reads it as the native architecture's and
        translates it by name to the filter's, so a number it cannot name (past
        libseccomp 2.5's tables) has a rule only on the native architecture."""
        try:
            f.add_rule(action, nr)
        except OSError as exc:
            if arch == native or exc.errno != errno.EFAULT:
                raise

    def rule(action: int, name: str, *args: scmp.Arg) -> None:
        if has(name, arch):  # aarch64 has no open, creat, mkdir, chmod, ...
            f.add_rule(action, sysno(name, native), *args)

    eperm = ERRNO | errno.EPERM
    enosys = ERRNO | errno.ENOSYS
    for name in DENIED:
        rule(eperm, name)
    rule(eperm, "prctl", low32_eq(0, PR_SET_SECCOMP))
    rule(ERRNO | 0, "prctl", low32_eq(0, PR_SET_DUMPABLE))  # succeeds without effect
    rule(eperm, "clone", bit_set(0, CLONE_UNTRACED))
    rule(enosys, "clone3")
    # file_setattr, and the numbers after the last the hand filter knows, up to the end
    # of the numbers asked (past that: KNOWN)
    for nr in range(flt.LAST_KNOWN, max(NUMBERS) + 1):
        add(enosys, nr)
    # socket(family) for a family not in FAMILIES: a rule holds one comparison per
    # argument, so the complement is spelled as equalities below the largest family
    # and one range above it (64-bit comparisons: see KNOWN)
    eafnosupport = ERRNO | errno.EAFNOSUPPORT
    for family in range(max(FAMILIES)):
        if family not in FAMILIES:
            rule(eafnosupport, "socket", scmp.Arg(0, scmp.EQ, family))
    rule(eafnosupport, "socket", scmp.Arg(0, scmp.GT, max(FAMILIES)))
    # the IP families: TCP, UDP and ICMP only (protocol 0 is the type's own), spelled as
    # the bits above those of the five, and each other value below them
    eprotonosupport = ERRNO | errno.EPROTONOSUPPORT
    allowed = (0, socket.IPPROTO_ICMP, socket.IPPROTO_TCP, socket.IPPROTO_UDP,
               socket.IPPROTO_ICMPV6)
    bits = max(allowed).bit_length()
    for family in (socket.AF_INET, socket.AF_INET6):
        for b in range(bits, 32):
            rule(eprotonosupport, "socket", low32_eq(0, family), bit_set(2, 1 << b))
        for proto in range(1 << bits):
            if proto not in allowed:
                rule(eprotonosupport, "socket", low32_eq(0, family), low32_eq(2, proto))
    for name, arg in (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("fchmodat2", 2)):
        for bit in (stat.S_ISUID, stat.S_ISGID):  # no setuid or setgid bit
            rule(eperm, name, bit_set(arg, bit))
    if not trace_fs:  # nor a new file with one, where no helper strips the bits
        for bit in (stat.S_ISUID, stat.S_ISGID):
            for name, arg in (("creat", 1), ("mknod", 1), ("mknodat", 2)):
                rule(eperm, name, bit_set(arg, bit))
            rule(eperm, "open", bit_set(1, os.O_CREAT), bit_set(2, bit))
            rule(eperm, "openat", bit_set(2, os.O_CREAT), bit_set(3, bit))
    rule(eperm, "setsockopt", low32_eq(1, 0), low32_eq(2, 4))  # IP_OPTIONS
    for opt in (57, 5, 6):  # IPV6_RTHDR, IPV6_2292RTHDR, IPV6_2292PKTOPTIONS
        rule(eperm, "setsockopt", low32_eq(1, 41), low32_eq(2, opt))
    rule(eperm, "ioctl", low32_eq(1, termios.TIOCSTI))
    rule(eperm, "ioctl", low32_eq(1, termios.TIOCLINUX))
    rule(eperm, "ioctl", low32_eq(1, termios.FIOASYNC))  # no signal-driven I/O
    for req in TTY_LASTING:
        rule(eperm, "ioctl", low32_eq(1, req))
    for base in flt.CONSOLE_IOCTLS:  # a Linux console's requests, by their sizeless range
        rule(eperm, "ioctl", scmp.Arg(1, scmp.MASKED_EQ, 0xFFFFFF00, base))
    rule(eperm, "fcntl", low32_eq(1, fcntl.F_SETLEASE))
    rule(eperm, "fcntl", low32_eq(1, fcntl.F_NOTIFY))
    for t in flt.FS_IOCTL_TYPES:  # the file systems' inode changes (reads: KNOWN)
        rule(eperm, "ioctl", scmp.Arg(1, scmp.MASKED_EQ, 0xFF00, t << 8))
    rule(eperm, "fcntl", low32_eq(1, F_SETSIG))
    rule(eperm, "fcntl", low32_eq(1, fcntl.F_SETFL), bit_set(2, os.O_ASYNC))
    # a process group or a user: never (a process group reaches outside a PID namespace)
    for way in low32_not(0, 0):  # PRIO_PROCESS
        rule(eperm, "setpriority", way)
    for way in low32_not(0, 1):  # IOPRIO_WHO_PROCESS
        rule(eperm, "ioprio_set", way)
    if check_pids:  # no PID namespace: another process by its pid goes to the tracer
        for way in low32_not(1, 0):
            rule(PID, "setpriority", low32_eq(0, 0), way)
            rule(PID, "ioprio_set", low32_eq(0, 1), way)
        for way in low32_not(0, 0):
            for name in ("sched_setaffinity", "sched_setscheduler", "sched_setparam",
                         "sched_setattr"):
                rule(PID, name, way)
            rule(PID, "prlimit64", way, scmp.Arg(2, scmp.NE, 0))  # with new limits
    rule(USER_NOTIF if notify_connect else NET, "connect")
    # the tree's own network namespace: every addressed send goes to the helper
    sends = USER_NOTIF if notify_net else NET
    for name in ("sendmsg", "sendmmsg"):
        rule(sends, name)
    if notify_net:
        rule(USER_NOTIF, "listen")
    for name in ("execve", "execveat"):
        rule(EXEC, name)
    if trace_all_sends:
        rule(NET, "sendto")
    else:  # only with a destination address
        rule(sends, "sendto", scmp.Arg(4, scmp.NE, 0))
    if trace_fs:
        # creations, and opens for writing (the helper counts what the kernel refuses)
        for bit in (os.O_CREAT, os.O_WRONLY, os.O_RDWR, os.O_TRUNC):
            rule(USER_NOTIF, "open", bit_set(1, bit))
            rule(USER_NOTIF, "openat", bit_set(2, bit))
        if notify_reads:  # --audit-only: every open, for the helper to judge
            rule(USER_NOTIF, "open")
            rule(USER_NOTIF, "openat")
        rule(enosys, "openat2")
        for name in (*NOTIFIED_FS, *META_TRACED):
            rule(USER_NOTIF, name)
        for name, arg in (("chmod", 1), ("fchmod", 1), ("fchmodat", 2), ("fchmodat2", 2)):
            # the rest of the chmods: neither the setuid nor the setgid bit
            rule(USER_NOTIF, name, scmp.Arg(arg, scmp.MASKED_EQ, SET_ID_BITS, 0))
        for nr in META_ENOSYS:
            add(enosys, nr)
        # locks to the helper (native/locks.c): fcntl's lock requests, and flock but an
        # unlock (LOCK_UN, with LOCK_NB or not: any other low bit set, or LOCK_UN's clear)
        for cmd in flt.F_LOCKS:
            rule(USER_NOTIF, "fcntl", low32_eq(1, cmd))
        for b in range(32):
            if b not in (2, 3):
                rule(USER_NOTIF, "flock", scmp.Arg(1, scmp.MASKED_EQ, 1 << b, 1 << b))
        rule(USER_NOTIF, "flock", scmp.Arg(1, scmp.MASKED_EQ, flt.LOCK_UN, 0))
    with tempfile.TemporaryFile() as out:
        f.export_bpf(out)
        out.seek(0)
        return out.read()


# ---- a classic-BPF interpreter over struct seccomp_data ----

# struct seccomp_data, as sixteen little-endian 32-bit words: nr, arch, the instruction
# pointer's low and high halves, then each argument's low and high halves
Data = tuple[int, ...]
Insn = tuple[int, int, int, int]

# the opcodes the two programs emit (libseccomp 2.5: no X register or scratch memory in
# a filter this small; a long jump, JA, where its binary tree outgrows the 8-bit offsets
# of the conditional jumps); decode() refuses any other
LD_W_ABS, AND_K, RET_K, JA = 0x20, 0x54, 0x06, 0x05
JEQ_K, JGT_K, JGE_K, JSET_K = 0x15, 0x25, 0x35, 0x45
JUMPS = {JEQ_K, JGT_K, JGE_K, JSET_K}
KNOWN_CODES = {LD_W_ABS, AND_K, RET_K, JA, *JUMPS}


def decode(prog: bytes) -> list[Insn]:
    """The instructions, checked as the kernel's seccomp checker would: known opcodes,
    aligned loads inside seccomp_data, jumps inside the program, a return at the end."""
    assert prog and len(prog) % 8 == 0 and len(prog) // 8 <= 4096, len(prog)
    insns = [struct.unpack_from("<HBBI", prog, i) for i in range(0, len(prog), 8)]
    for pc, (code, jt, jf, k) in enumerate(insns):
        where = f"insn {pc}: {code:#06x} {jt} {jf} {k:#x}"
        assert code in KNOWN_CODES, f"opcode the interpreter does not know, {where}"
        if code == LD_W_ABS:
            assert k % 4 == 0 and k < 64, where
        elif code in JUMPS:
            assert pc + 1 + max(jt, jf) < len(insns), where
        elif code == JA:
            assert pc + 1 + k < len(insns), where
    assert insns[-1][0] == RET_K, "the program can run off its end"
    return insns


def run(insns: list[Insn], data: Data) -> int:
    a = pc = 0
    while True:
        code, jt, jf, k = insns[pc]
        pc += 1
        if code == JEQ_K:
            pc += jt if a == k else jf
        elif code == LD_W_ABS:
            a = data[k >> 2]
        elif code == RET_K:
            return k
        elif code == JGE_K:
            pc += jt if a >= k else jf
        elif code == JGT_K:
            pc += jt if a > k else jf
        elif code == JSET_K:
            pc += jt if a & k else jf
        elif code == AND_K:
            a &= k
        elif code == JA:
            pc += k
        else:  # decode() admits only the codes above
            raise AssertionError(f"unhandled opcode {code:#06x} at {pc - 1}")


# ---- the syscalls asked ----

ARCH_NAMES = {X86_64: "x86_64", I386: "i386", AARCH64: "aarch64", ARM: "arm"}


class Case(NamedTuple):
    arch: int
    nr: int  # as the 32-bit word the filter loads
    args: tuple[int, ...]  # six

    def data(self) -> Data:
        words = struct.unpack("<16I", struct.pack("<IIQ6Q", self.nr, self.arch, 0, *self.args))
        return tuple(words)

    def __str__(self) -> str:
        arch = ARCH_NAMES.get(self.arch, f"arch {self.arch:#x}")
        if self.arch == X86_64 and self.nr & X32_BIT and self.nr < 0xFFFFFFFF:
            arch = "x32"
        name = syscall_name({"x32": X32, "i386": I386}.get(arch, self.arch), self.nr)
        args = ", ".join(f"{v:#x}" for v in self.args)
        return f"{name} (nr {self.nr:#x}, {arch}) ({args})"


ZERO = (0,) * 6
ONES = (0xFFFFFFFFFFFFFFFF,) * 6
MIXED = (0xFFFFFFFF00000000, 0x00000000FFFFFFFF, 0x0000000100000000, 1, 0x7FFF00000000, 0x41)
HIGH_HALVES = (0, 1 << 32, 0xFFFFFFFF << 32)
# every value the policy compares against, its neighbours, and a few bit patterns
TRIGGERS = (*FAMILIES, AF_NETLINK, AF_PACKET, termios.TIOCSTI, termios.TIOCLINUX,
            termios.FIOASYNC, F_SETSIG, fcntl.F_SETFL, os.O_ASYNC, *flt.FS_IOCTL_ALLOWED,
            *TTY_LASTING, *flt.CONSOLE_IOCTLS, 0x4B45, 0x4BFF, 0x560B, 0x40085600,
            fcntl.F_SETLEASE, fcntl.F_NOTIFY, fcntl.F_GETLEASE, *flt.F_LOCKS, flt.LOCK_UN,
            flt.LOCK_UN | flt.LOCK_NB, fcntl.LOCK_EX, fcntl.LOCK_SH | flt.LOCK_NB,
            *(t << 8 for t in flt.FS_IOCTL_TYPES), 0x40086602, 0x401C5820, 0x40087602,
            0x50009418, 0x40806685,
            PR_SET_SECCOMP, PR_SET_DUMPABLE, os.O_CREAT, os.O_WRONLY, os.O_RDWR, os.O_TRUNC,
            CLONE_UNTRACED, stat.S_ISUID,
            stat.S_ISGID, 0o4755, 0o2755, 0o755)
VALUES = sorted({
    0, 3, 9, 11, 0x1000, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, SIGCHLD, PR_SET_NO_NEW_PRIVS,
    *TRIGGERS, *(v + 1 for v in TRIGGERS), *(v - 1 for v in TRIGGERS),
    termios.TCGETS, termios.TIOCGWINSZ, os.O_CREAT | os.O_WRONLY | os.O_TRUNC,
    os.O_RDONLY | os.O_CLOEXEC, os.O_CREAT | os.O_EXCL | os.O_RDWR, CLONE_UNTRACED | SIGCHLD,
    CLONE_THREAD_FLAGS, CLONE_THREAD_FLAGS | CLONE_UNTRACED, ~CLONE_UNTRACED & 0xFFFFFFFF,
    ~os.O_CREAT & 0xFFFFFFFF,
})
# the syscalls whose verdict depends on an argument, and which argument
ARG_DEPENDENT = {"clone": 0, "socket": 0, "ioctl": 1, "fcntl": 1, "flock": 1, "prctl": 0,
                 "open": 1,
                 "openat": 2, "sendto": 4, "chmod": 1, "fchmod": 1, "fchmodat": 2, "fchmodat2": 2,
                 "creat": 1, "mknod": 1, "mknodat": 2}
NUMBERS = range(512)  # past the last syscall of both tables (456 in libseccomp 2.5.4)
OUT_OF_RANGE = (512, 600, 1000, 0xFFFF, 0x3FFFFFFF, 0x7FFFFFFF, 0x80000000, 0xBFFFFFFF,
                0xFFFFFFFE, 0xFFFFFFFF)
OTHER_ARCHES = (0, X32, 0xC00000B7, 0x80000028, 0xFFFFFFFF, X86_64 ^ 1)  # aarch64, arm


def cases(arch: int) -> Iterator[Case]:
    if arch == X86_64:
        yield from x86_64_only_cases()
    else:
        for nr in NUMBERS:
            for args in (ZERO, ONES, MIXED):
                yield Case(AARCH64, nr, args)
            yield Case(ARM, nr, ZERO)
        for nr in OUT_OF_RANGE:
            yield Case(AARCH64, nr, ZERO)
            yield Case(ARM, nr, ZERO)
        for other in (0, X86_64, I386, 0xFFFFFFFF, AARCH64 ^ 1):
            for nr in (0, sysno("socket", arch), sysno("execve", arch)):
                yield Case(other, nr, ZERO)
    yield from argument_cases(arch)


def x86_64_only_cases() -> Iterator[Case]:
    for nr in NUMBERS:
        for args in (ZERO, ONES, MIXED):
            yield Case(X86_64, nr, args)
        yield Case(I386, nr, ZERO)
        yield Case(I386, nr, ONES)
    for nr in range(600):  # x32's own numbers run to 547
        yield Case(X86_64, X32_BIT | nr, ZERO)
    for nr in OUT_OF_RANGE:
        yield Case(X86_64, nr, ZERO)
        yield Case(I386, nr, ZERO)
    for arch in OTHER_ARCHES:
        for nr in (0, sysno("socket"), sysno("execve"), X32_BIT | sysno("execve")):
            yield Case(arch, nr, ZERO)


def argument_cases(arch: int) -> Iterator[Case]:
    """The calls whose verdict depends on their arguments, by arch's numbers."""
    def sysno(name: str) -> int:
        return globals()["sysno"](name, arch)

    X86_64 = arch  # the cases below were written for x86_64
    for name, at in ARG_DEPENDENT.items():
        if not has(name, arch):
            continue
        for i in range(6):
            # every value in the compared argument, the triggers in the others (a filter
            # reading the wrong argument, or the wrong half, differs)
            values = VALUES if i == at else TRIGGERS
            for v in values:
                for high in HIGH_HALVES:
                    args = [0] * 6
                    args[i] = high | v
                    yield Case(X86_64, sysno(name), tuple(args))
    if has("open", arch):
        yield Case(X86_64, sysno("open"), (0x7FFC0000, os.O_CREAT | os.O_WRONLY, 0o644, 0, 0, 0))
    yield Case(X86_64, sysno("openat"), (AT_FDCWD, 0x7FFC0000, os.O_CREAT, 0o600, 0, 0))
    yield Case(X86_64, sysno("openat"), (AT_FDCWD, 0x7FFC0000, os.O_RDONLY, 0, 0, 0))
    for mode in (0o4755, 0o2755, 0o755, 0o6000 | (0xFFFF << 32)):
        if has("open", arch):
            yield Case(X86_64, sysno("open"),
                       (0x7FFC0000, os.O_CREAT | os.O_WRONLY, mode, 0, 0, 0))
        yield Case(X86_64, sysno("openat"), (AT_FDCWD, 0x7FFC0000, os.O_CREAT, mode, 0, 0))
        yield Case(X86_64, sysno("openat"), (AT_FDCWD, 0x7FFC0000, os.O_RDONLY, mode, 0, 0))
    yield Case(X86_64, sysno("sendto"), (3, 0x7FFC0000, 12, 0, 0, 0))
    # setsockopt's level and option together: every source-route option at each level,
    # their neighbours, and both halves
    for level in (0, 1, 6, 40, 41, 42, 0xFFFFFFFF):
        for opt in (3, 4, 5, 6, 7, 56, 57, 58, 0):
            for high in HIGH_HALVES:
                yield Case(X86_64, sysno("setsockopt"), (3, high | level, high | opt, 0, 0, 0))
    yield Case(X86_64, sysno("sendto"), (3, 0x7FFC0000, 12, 0, 0x7FFC1000, 16))
    yield Case(X86_64, sysno("sendto"), (3, 0x7FFC0000, 12, 0, 0x7FFF00000000, 16))  # high only
    yield Case(X86_64, sysno("ioctl"), (0, 0xFFFFFFFF00000000 | termios.TIOCSTI, 0, 0, 0, 0))
    # fcntl's command and flags together: each command near F_SETFL and F_SETSIG with
    # O_ASYNC set or not, in both halves
    for cmd in (fcntl.F_GETFL, fcntl.F_SETFL, fcntl.F_SETFL + 1, fcntl.F_SETOWN, 9, F_SETSIG,
                11, 0):
        for flags in (0, os.O_ASYNC, os.O_ASYNC | os.O_NONBLOCK, os.O_NONBLOCK,
                      ~os.O_ASYNC & 0xFFFFFFFF, 0xFFFFFFFF):
            for high in HIGH_HALVES:
                yield Case(X86_64, sysno("fcntl"), (1, high | cmd, high | flags, 0, 0, 0))
    yield Case(X86_64, sysno("clone"), (CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0, 0))
    # socket's family and protocol together, in both halves
    for family in (0, *FAMILIES, AF_NETLINK):
        for proto in (0, 1, 5, 6, 7, 17, 58, 59, 63, 64, 132, 136, 255, 262, 0xFFFFFFFF):
            for high in HIGH_HALVES:
                yield Case(X86_64, sysno("socket"), (family, 2, high | proto, 0, 0, 0))
    # a process named by its pid: which kind of target and who, in both halves
    targets = (0, 1, 2, 3, 4, 12345, 0x7FFFFFFF, 0xFFFFFFFF)
    for name in ("setpriority", "ioprio_set"):
        for which in targets:
            for who in targets:
                for high in HIGH_HALVES:
                    yield Case(X86_64, sysno(name), (high | which, high | who, 10, 0, 0, 0))
    for name in ("sched_setaffinity", "sched_setscheduler", "sched_setparam", "sched_setattr",
                 "prlimit64"):
        for pid in targets:
            for high in HIGH_HALVES:
                for limits in (0, 0x7FFC0000, 1 << 32, 0x7FFC0000 | 1 << 32):
                    yield Case(X86_64, sysno(name), (high | pid, 7, limits, 0, 0, 0))


CASES = {arch: [(case, case.data()) for case in cases(arch)] for arch in (X86_64, AARCH64)}


# ---- by-design differences: (what, why, which cases, hand verdict, libseccomp verdict) ----

class Known(NamedTuple):
    what: str
    why: str
    applies: Callable[[Case], bool]
    hand: int
    libseccomp: int
    arches: tuple[int, ...] = (X86_64, AARCH64)  # the programs that show it


KNOWN = (
    Known("socket(family) with high bits set over AF_UNIX, AF_INET or AF_INET6",
          "the kernel's family is an int: the hand filter compares its low half, so "
          "(1 << 32) | AF_INET is AF_INET and allowed; libseccomp can compare a low half "
          "only for equality (masked), so the range rule above AF_INET6 is 64-bit and "
          "refuses it, which is stricter and harmless",
          lambda c: (c.arch in (X86_64, AARCH64) and c.nr == sysno("socket", c.arch)
                     and c.args[0] >> 32 != 0 and c.args[0] & 0xFFFFFFFF in FAMILIES),
          ALLOW, ERRNO | errno.EAFNOSUPPORT),
    Known("the file systems' ioctls that only read, or clone into the descriptor",
          "the hand filter allows a short list of exact requests (FS_IOC_GETFLAGS, "
          "FS_IOC_FIEMAP, FICLONE, ...) before it refuses their families by type byte; "
          "libseccomp cannot allow within a rule of the default action, so its rules "
          "refuse the whole families, which is stricter",
          lambda c: (c.arch in (X86_64, AARCH64) and c.nr == sysno("ioctl", c.arch)
                     and c.args[1] & 0xFFFFFFFF in flt.FS_IOCTL_ALLOWED),
          ALLOW, ERRNO | errno.EPERM),
    Known("x86_64 numbers past the last asked, below x32's",
          "the hand filter answers ENOSYS for every number after the last it knows; "
          "libseccomp's rules name numbers one by one, and these cases lie past the "
          "ones named",
          lambda c: (c.arch == X86_64 and max(NUMBERS) < c.nr < X32_BIT),
          ERRNO | errno.ENOSYS, ALLOW, (X86_64,)),
    Known("aarch64 numbers libseccomp cannot name, and those past the last asked",
          "libseccomp takes a rule's number as the native architecture's (x86_64 here) and "
          "translates it by name, so the numbers its tables lack (setxattrat, "
          "removexattrat, file_setattr and on) get no rule for aarch64; and as on x86_64 "
          "up to 0xFFFFFFFF (-1), aarch64 having no x32 range to kill: the hand filter "
          "answers ENOSYS for all of them",
          lambda c: (c.arch == AARCH64 and (c.nr >= flt.LAST_KNOWN or c.nr in META_ENOSYS)),
          ERRNO | errno.ENOSYS, ALLOW, (AARCH64,)),
    Known("syscall number -1 on x86_64",
          "libseccomp lets nr -1 past its x32 check on purpose (a tracer skips a syscall "
          "by setting it to -1 at a syscall-entry stop, and seccomp then sees -1); the hand "
          "filter treats 0xFFFFFFFF as an x32 number and kills. ztsa's tracer only skips at "
          "RET_TRACE stops (PTRACE_EVENT_SECCOMP), after which the kernel does not rerun the "
          "filter for -1, so only a direct syscall(-1) in the tree sees this: killed "
          "instead of ENOSYS",
          lambda c: c.arch == X86_64 and c.nr == 0xFFFFFFFF,
          KILL_PROCESS, ALLOW, (X86_64,)),
)


def verdict(ret: int) -> str:
    action, value = ret & 0xFFFF0000, ret & 0xFFFF
    if ret == KILL_PROCESS:
        return "KILL_PROCESS"
    if action == ERRNO:
        return f"ERRNO({errno.errorcode.get(value, value)})"
    names = {KILL_THREAD: "KILL_THREAD", TRAP: "TRAP", USER_NOTIF: "USER_NOTIF",
             TRACE: "TRACE", LOG: "LOG", ALLOW: "ALLOW"}
    return f"{names.get(action, hex(action))}({value})" if value else names.get(action, hex(ret))


MODES = [
    dict(trace_all_sends=sends, trace_fs=fs, notify_connect=notify)
    for sends in (False, True) for fs in (False, True) for notify in (False, True)
    if fs or not notify  # notify_connect needs trace_fs
] + [dict(trace_all_sends=False, trace_fs=True, notify_connect=True, notify_net=True),
      dict(trace_all_sends=False, trace_fs=True, notify_connect=True, notify_net=True,
           notify_reads=True),
      # without a PID namespace (and so without the file helper)
      dict(trace_all_sends=False, trace_fs=False, notify_connect=False, check_pids=True),
      dict(trace_all_sends=True, trace_fs=False, notify_connect=False, check_pids=True)]


def compare(hand: list[Insn], lib: list[Insn], arch: int = X86_64
            ) -> tuple[list[str], set[str]]:
    failures: list[str] = []
    seen: set[str] = set()
    for case, data in CASES[arch]:
        h, s = run(hand, data), run(lib, data)
        if h == s:
            continue
        known = next((k for k in KNOWN if k.applies(case)), None)
        if known and (h, s) == (known.hand, known.libseccomp):
            seen.add(known.what)
            continue
        failures.append(f"{case}: filter.py {verdict(h)}, libseccomp {verdict(s)}"
                        + (f" (known difference expects {verdict(known.hand)} and "
                           f"{verdict(known.libseccomp)})" if known else ""))
    return failures, seen


# aarch64's program with libseccomp's priority layout only: its binary tree checks the
# same rules in another order, which x86_64's runs cover
@pytest.mark.parametrize(("arch", "optimize"), [(X86_64, 1), (X86_64, 2), (AARCH64, 1)],
                         ids=["priority", "btree", "aarch64"])
@pytest.mark.parametrize("mode", MODES, ids=lambda m: "-".join(k for k, v in m.items() if v)
                         or "default")
def test_filter_matches_libseccomp(mode: dict[str, bool], arch: int, optimize: int) -> None:
    hand = decode(flt.build(**mode, arch=arch))
    lib = decode(libseccomp_bpf(**mode, optimize=optimize, arch=arch))
    failures, seen = compare(hand, lib, arch)
    if failures:
        pytest.fail(f"{len(failures)} verdicts differ:\n" + "\n".join(failures[:40]))
    # each listed difference still exists: a stale entry would hide nothing, but mislead
    missing = [k.what for k in KNOWN if arch in k.arches and k.what not in seen]
    assert not missing, f"known differences no longer seen: {missing}"


def test_oracle_sees_the_policy() -> None:
    """The libseccomp program is not trivially permissive: spot checks of its verdicts."""
    lib = decode(libseccomp_bpf(False, True, False, 1))

    def ask(name: str, *args: int, arch: int = X86_64) -> int:
        return run(lib, Case(arch, sysno(name), (*args, *(0,) * (6 - len(args)))).data())

    assert ask("read") == ALLOW
    assert ask("read", arch=I386) == KILL_PROCESS
    assert ask("ioctl", 0, termios.TIOCSTI) == ERRNO | errno.EPERM
    assert ask("socket", AF_PACKET) == ERRNO | errno.EAFNOSUPPORT
    assert ask("execve") == EXEC
    assert ask("openat", AT_FDCWD, 0, os.O_CREAT) == USER_NOTIF
    assert ask("setpriority", 1, 0, 19) == ERRNO | errno.EPERM  # PRIO_PGRP
    assert ask("setpriority", 0, 0, 19) == ALLOW
    pids = decode(libseccomp_bpf(False, False, False, 1, check_pids=True))
    assert run(pids, Case(X86_64, sysno("prlimit64"), (42, 0, 0x7FFC0000, 0, 0, 0)).data()) \
        == PID
    assert run(lib, Case(X86_64, X32_BIT | 1, ZERO).data()) == KILL_PROCESS


@pytest.mark.parametrize("arch", [X86_64, AARCH64], ids=["x86_64", "aarch64"])
def test_table_numbers_are_libseccomp_s(arch: int) -> None:
    """Every number of the table of system calls (native/ztsa_nr.h, which the filter and
    the helper read) is the one libseccomp knows by that name on each architecture, and
    a call the table says aarch64 lacks is one libseccomp does not number there; names
    newer than this libseccomp are left to util.c's compile-time check against the C
    library (for aarch64, when it is compiled for aarch64)."""
    numbers = flt.numbers(arch)
    known = {name: int(_lib.seccomp_syscall_resolve_name_arch(arch, name.encode()))
             for name in flt.numbers(X86_64)}
    wrong = {name: (nr, known[name]) for name, nr in numbers.items()
             if known[name] >= 0 and known[name] != nr}
    assert not wrong
    assert sum(known[name] >= 0 for name in numbers) >= len(numbers) - 8  # most were checked
    absent = set(flt.numbers(X86_64)) - set(numbers)
    assert {name for name in absent if known[name] >= 0} == set()
    if arch == AARCH64:
        assert {"open", "mkdir", "chmod", "rename", "unlink"} <= absent

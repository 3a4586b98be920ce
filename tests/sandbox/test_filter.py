"""The seccomp program, run in a small classic-BPF interpreter: every decision the
docstring of ztsa/sandbox/filter.py promises. (The escape suite checks the same
decisions against the kernel.)"""

import errno
import struct

import pytest

from ztsa.sandbox import filter as flt

X86_64 = flt.AUDIT_ARCH_X86_64
I386 = 0x40000003


def run(prog: bytes, nr: int, args=(0, 0, 0, 0, 0, 0), arch=X86_64) -> int:
    args = (*args, *(0,) * (6 - len(args)))
    data = struct.pack("<iIQ6Q", nr, arch, 0, *args)
    insns = [struct.unpack_from("<HBBI", prog, i) for i in range(0, len(prog), 8)]
    pc, acc = 0, 0
    while True:
        code, jt, jf, k = insns[pc]
        if code == flt.LD_ABS:
            acc = struct.unpack_from("<I", data, k)[0]
            pc += 1
        elif code == flt.RET:
            return k
        elif code == flt.AND_K:
            acc &= k
            pc += 1
        else:
            cond = {flt.JEQ: acc == k, flt.JGE: acc >= k, flt.JSET: bool(acc & k)}[code]
            pc += 1 + (jt if cond else jf)


PROG = flt.build()
NR = flt.NR
ERRNO = flt.RET_ERRNO
NET = flt.RET_TRACE | flt.TAG_NET
EXEC = flt.RET_TRACE | flt.TAG_EXEC


@pytest.mark.parametrize(("nr", "args", "expected"), [
    (0, (), flt.RET_ALLOW),  # read
    (NR["connect"], (), NET),
    (NR["sendmsg"], (), NET),
    (NR["sendmmsg"], (), NET),
    (NR["execve"], (), EXEC),
    (NR["execveat"], (), EXEC),
    (NR["sendto"], (3, 0, 1, 0, 0, 0), flt.RET_ALLOW),  # no address: connected peer
    (NR["sendto"], (3, 0, 1, 0, 0x7FFF00000000, 16), NET),  # high half only
    (NR["sendto"], (3, 0, 1, 0, 0x1000, 16), NET),
    (NR["socket"], (2, 1, 0), flt.RET_ALLOW),
    (NR["socket"], (10, 2, 0), flt.RET_ALLOW),
    (NR["socket"], (1, 1, 0), flt.RET_ALLOW),
    (NR["socket"], (17, 3, 0), ERRNO | errno.EAFNOSUPPORT),  # AF_PACKET
    (NR["socket"], (16, 3, 0), ERRNO | errno.EAFNOSUPPORT),  # AF_NETLINK
    (NR["socket"], ((1 << 32) | 2, 1, 0), flt.RET_ALLOW),  # 32-bit compare of int domain
    (NR["clone"], (0x11, 0), flt.RET_ALLOW),
    (NR["clone"], (flt.CLONE_UNTRACED | 0x11, 0), ERRNO | errno.EPERM),
    (NR["clone3"], (), ERRNO | errno.ENOSYS),
    (NR["ptrace"], (), ERRNO | errno.EPERM),
    (NR["io_uring_setup"], (), ERRNO | errno.EPERM),
    (NR["process_vm_writev"], (), ERRNO | errno.EPERM),
    (NR["seccomp"], (), ERRNO | errno.EPERM),
    (NR["keyctl"], (), ERRNO | errno.EPERM),  # no keyring: read, changed or left behind
    (NR["add_key"], (), ERRNO | errno.EPERM),
    (NR["request_key"], (), ERRNO | errno.EPERM),
    (NR["prctl"], (flt.PR_SET_SECCOMP, 2), ERRNO | errno.EPERM),
    (NR["prctl"], (38, 1), flt.RET_ALLOW),  # PR_SET_NO_NEW_PRIVS
    (NR["ioctl"], (0, flt.TIOCSTI), ERRNO | errno.EPERM),
    (NR["ioctl"], (0, flt.TIOCLINUX), ERRNO | errno.EPERM),
    (NR["ioctl"], (0, 0x5401), flt.RET_ALLOW),  # TCGETS
    (NR["ioctl"], (0, 0x540C), ERRNO | errno.EPERM),  # TIOCEXCL: the terminal stays busy
    (NR["ioctl"], (0, 0x5423), ERRNO | errno.EPERM),  # TIOCSETD: a discipline that drops I/O
    (NR["ioctl"], (0, 0x5417), ERRNO | errno.EPERM),  # TIOCMBIC: DTR dropped, line hung up
    (NR["ioctl"], (0, 0x5415), flt.RET_ALLOW),  # TIOCMGET: only reads
    (NR["ioctl"], (0, 0x4B45), ERRNO | errno.EPERM),  # KDSKBMODE: a console's keyboard
    (NR["ioctl"], (0, 0x5606), ERRNO | errno.EPERM),  # VT_ACTIVATE: another console shown
    (NR["ioctl"], (0, 0xC0585609), flt.RET_ALLOW),  # VIDIOC_QUERYBUF: 'V' with a size
    (NR["ioctl"], (0, 0x540A), ERRNO | errno.EPERM),  # TCXONC: output stopped for good
    (NR["ioctl"], (0, 0x540D), flt.RET_ALLOW),  # TIOCNXCL
    (NR["ioctl"], (0, flt.FIOASYNC), ERRNO | errno.EPERM),  # no signal-driven I/O
    (NR["ioctl"], (3, 0x40086602), ERRNO | errno.EPERM),  # FS_IOC_SETFLAGS
    (NR["ioctl"], (3, 0x401C5820), ERRNO | errno.EPERM),  # FS_IOC_FSSETXATTR
    (NR["ioctl"], (3, 0x40087602), ERRNO | errno.EPERM),  # FS_IOC_SETVERSION
    (NR["ioctl"], (3, 0x5000940E), ERRNO | errno.EPERM),  # BTRFS_IOC_SUBVOL_CREATE
    (NR["ioctl"], (3, 0x80086601), flt.RET_ALLOW),  # FS_IOC_GETFLAGS
    (NR["ioctl"], (3, 0x40049409), flt.RET_ALLOW),  # FICLONE
    (NR["ioctl"], (3, 0x541B), flt.RET_ALLOW),  # FIONREAD
    (NR["file_setattr"], (), ERRNO | errno.ENOSYS),  # libc falls back to the ioctl
    (NR["file_getattr"], (), flt.RET_ALLOW),
    (flt.LAST_KNOWN + 1, (), ERRNO | errno.ENOSYS),  # a call of a later kernel
    (0x3FFFFFFF, (), ERRNO | errno.ENOSYS),
    (NR["fcntl"], (0, flt.F_SETSIG, 9), ERRNO | errno.EPERM),
    (NR["fcntl"], (0, flt.F_SETFL, flt.O_ASYNC | 0o4000), ERRNO | errno.EPERM),
    (NR["fcntl"], (0, flt.F_SETFL, 0o4000), flt.RET_ALLOW),  # O_NONBLOCK
    (NR["fcntl"], (0, 3, 0), flt.RET_ALLOW),  # F_GETFL
    (NR["fcntl"], (0, 1024, 1), ERRNO | errno.EPERM),  # F_SETLEASE
    (NR["fcntl"], (0, 1026, 0), ERRNO | errno.EPERM),  # F_NOTIFY
    (NR["fcntl"], (0, 1025, 0), flt.RET_ALLOW),  # F_GETLEASE
    (flt.X32_BIT | NR["socket"], (), flt.RET_KILL_PROCESS),
])
def test_decisions(nr, args, expected):
    args = tuple(args) + (0,) * (6 - len(args))
    assert run(PROG, nr, args) == expected


def test_foreign_architecture_is_killed():
    assert run(PROG, 102, arch=I386) == flt.RET_KILL_PROCESS  # i386 socketcall
    assert run(PROG, 0, arch=I386) == flt.RET_KILL_PROCESS


FS_PROG = flt.build(trace_fs=True)
FS = flt.RET_USER_NOTIF


@pytest.mark.parametrize(("nr", "args", "expected"), [
    (NR["openat"], (0, 0, 0o2000000, 0), flt.RET_ALLOW),  # O_RDONLY|O_CLOEXEC
    (NR["openat"], (0, 0, 0o2, 0), FS),  # O_RDWR, no O_CREAT: counted when refused
    (NR["openat"], (0, 0, 0o101, 0o644), FS),  # O_WRONLY|O_CREAT
    (NR["openat"], (0, 0, (1 << 32) | 0, 0), flt.RET_ALLOW),  # 32-bit flags compare
    (NR["open"], (0, 0o1101, 0o644), FS),
    (NR["open"], (0, 0o1000), FS),  # O_TRUNC alone
    (NR["open"], (0, 0o0), flt.RET_ALLOW),
    (NR["chmod"], (0, 0o755), FS),
    (NR["fchmodat"], (0, 0, 0o4755), ERRNO | errno.EPERM),
    *((NR[name], (), FS) for name in flt.META_TRACED),
    *((NR[name], (), ERRNO | errno.ENOSYS) for name in flt.META_ENOSYS),
    (NR["openat2"], (), ERRNO | errno.ENOSYS),
    *((NR[name], (), FS) for name in flt.FS_TRACED),
    (NR["connect"], (), NET),
    (0, (), flt.RET_ALLOW),
])
def test_fs_decisions(nr, args, expected):
    assert run(FS_PROG, nr, args) == expected


def test_set_dumpable_is_a_successful_no_op():
    assert run(PROG, NR["prctl"], (4, 0)) == ERRNO | 0
    assert run(PROG, NR["prctl"], (22, 2)) == ERRNO | errno.EPERM  # PR_SET_SECCOMP
    assert run(PROG, NR["prctl"], (15, 0)) == flt.RET_ALLOW  # PR_SET_NAME


def test_without_protection_name_syscalls_run_untraced():
    for name in (*flt.FS_TRACED, "open", "openat", "openat2"):
        assert run(PROG, NR[name], (0, 0o101, 0o101, 0)) == flt.RET_ALLOW


def test_with_the_helper_answering_connects_only_connect_changes():
    prog = flt.build(trace_fs=True, notify_connect=True)
    assert run(prog, NR["connect"], ()) == flt.RET_USER_NOTIF
    for name in ("sendto", "sendmsg", "sendmmsg", "execve", "execveat"):
        args = (3, 0, 1, 0, 0x1000, 16)
        assert run(prog, NR[name], args) == run(FS_PROG, NR[name], args)
    assert run(prog, NR["openat"], (0, 0, 0o101, 0o644)) == FS
    with pytest.raises(ValueError):
        flt.build(notify_connect=True)  # no helper to answer


def test_aarch64_program() -> None:
    """aarch64's program (built here from the table's aarch64 column): its own arch is
    checked, 32-bit ARM compat calls and every other arch are killed, there is no x32
    range, and the calls are judged by aarch64's numbers."""
    arm64 = flt.AUDIT_ARCH_AARCH64
    nr = flt.numbers(arm64)
    prog = flt.build(trace_fs=True, arch=arm64)
    assert run(prog, 63, arch=arm64) == flt.RET_ALLOW  # read
    assert run(prog, 63, arch=0x40000028) == flt.RET_KILL_PROCESS  # ARM compat
    assert run(prog, 63, arch=X86_64) == flt.RET_KILL_PROCESS
    assert run(prog, flt.X32_BIT | 63, arch=arm64) == ERRNO | errno.ENOSYS
    assert run(prog, nr["execve"], arch=arm64) == EXEC
    assert run(prog, nr["mkdirat"], arch=arm64) == flt.RET_USER_NOTIF
    assert run(prog, nr["ptrace"], arch=arm64) == ERRNO | errno.EPERM
    assert run(prog, nr["fchmodat"], (0, 0, 0o4755), arch=arm64) == ERRNO | errno.EPERM
    # 83: aarch64's fdatasync, a plain call; x86_64's mkdir, which the helper judges
    assert run(prog, 83, arch=arm64) == flt.RET_ALLOW
    assert run(flt.build(arch=X86_64), 83) == flt.RET_ALLOW  # mkdir, without the helper
    assert run(flt.build(trace_fs=True, arch=X86_64), 83) == flt.RET_USER_NOTIF

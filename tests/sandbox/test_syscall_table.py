"""The table of system calls (native/ztsa_nr.h) that the filter, the file helper's
creations, metadata and audit-only code and the tracer read their arguments by: each
role it gives an argument is what python-ptrace's prototypes (the kernel's own argument
names) call that argument, and every file name, directory descriptor and flags argument
of a call the helper handles has a role. A role at a wrong index would make the helper
read a path from a mode, or the filter check the wrong register."""

from __future__ import annotations

import pytest

from ztsa.sandbox import filter as flt
from ztsa.sandbox.native import ffi, lib

prototypes = pytest.importorskip("ptrace.syscall.prototypes").SYSCALL_PROTOTYPES

ROLE = {name.removeprefix("ZTSA_ARG_"): value for name, value in
        ffi.typeof("enum ztsa_arg").relements.items()}
NAME = {value: name for name, value in ROLE.items()}
OP = {name.removeprefix("ZTSA_OP_"): value for name, value in
      ffi.typeof("enum ztsa_op").relements.items()}

# what the kernel (python-ptrace's prototypes) calls an argument of each role
KERNEL_NAMES = {
    "FD": {"fd", "sockfd"}, "DIRFD": {"dfd", "dirfd", "olddfd", "newdfd"},
    "PATH": {"filename", "pathname", "path", "oldname", "newname", "new"},
    "DIRFD2": {"newdfd"}, "PATH2": {"newname"}, "TARGET": {"oldname", "old"},
    "OFLAGS": {"flags"}, "ATFLAGS": {"flags", "flag"}, "RFLAGS": {"flags"},
    "MODE": {"mode", "mask"}, "DEV": {"dev"}, "UID": {"user"}, "GID": {"group"},
    "TIMES": {"times", "utimes"}, "XNAME": {"name"}, "XVALUE": {"value"},
    "XSIZE": {"size"}, "XFLAGS": {"flags"}, "LENGTH": {"length"},
    "ADDR": {"addr", "dest_addr"}, "ADDRLEN": {"addrlen"}, "BUF": {"buf"}, "LEN": {"len"},
    "MSGFLAGS": {"flags"}, "MSGHDR": {"msg"}, "MMSGHDR": {"msg"}, "VLEN": {"vlen"},
    "BACKLOG": {"backlog"}, "DOMAIN": {"domain"}, "TYPE": {"type"},
    "PROTOCOL": {"protocol"}, "LEVEL": {"level"}, "OPTNAME": {"optname"},
    "OPTVAL": {"optval"}, "OPTLEN": {"optlen"}, "REQUEST": {"cmd"}, "FCMD": {"cmd"},
    "CMDARG": {"arg"}, "OPTION": {"option"}, "WHICH": {"which"}, "PID": {"pid", "who"},
    "CLONEFLAGS": {"flags"}, "RESOURCE": {"resource"}, "NEWLIMIT": {"new_rlim"},
    "ARGV": {"argv"}, "ENVP": {"envp"}, "LOCKOP": {"cmd"},
}
# the arguments that name a file or qualify how it is named
FILE_ARGS = {"filename", "pathname", "path", "oldname", "newname", "old", "new", "dfd",
             "dirfd", "olddfd", "newdfd", "flags", "flag"}


def rows() -> list[tuple[str, int, int, int, tuple[int, ...]]]:
    n = ffi.new("int *")
    table = lib.ztsa_syscalls(n)
    return [(ffi.string(table[i].name).decode(), table[i].nr, table[i].op,
             table[i].nofollow, tuple(table[i].arg)) for i in range(n[0])]


def test_every_role_is_the_kernels_argument() -> None:
    wrong = []
    for name, _nr, _op, _nofollow, roles in rows():
        proto = prototypes.get(name)
        if proto is None:
            continue  # newer than python-ptrace (fchmodat2, file_setattr, ...)
        args = [arg_name for _type, arg_name in proto[1]]
        for i, role in enumerate(roles):
            if role == ROLE["NONE"]:
                continue
            if i >= len(args) or args[i] not in KERNEL_NAMES[NAME[role]]:
                wrong.append(f"{name} argument {i}: {NAME[role]} is "
                             f"{args[i] if i < len(args) else 'absent'}")
    assert not wrong
    assert set(KERNEL_NAMES) == set(ROLE) - {"NONE"}  # every role is checked


def test_helper_calls_name_every_file_argument() -> None:
    """A call the helper handles (an op other than OTHER) gives each of its file names,
    directory descriptors and flags a role: none is left unread by accident."""
    missing = []
    for name, _nr, op, _nofollow, roles in rows():
        proto = prototypes.get(name)
        if op == OP["OTHER"] or proto is None or op == OP["EXEC"]:
            continue
        for i, (_type, arg_name) in enumerate(proto[1]):
            if arg_name in FILE_ARGS and roles[i] == ROLE["NONE"]:
                missing.append(f"{name} argument {i} ({arg_name})")
    assert not missing


def test_table_is_the_filters() -> None:
    """One row a number, in order, and the filter's NR is the table."""
    table = rows()
    numbers = [nr for _name, nr, _op, _nofollow, _roles in table]
    assert numbers == sorted(set(numbers))
    assert {name: nr for name, nr, _op, _nofollow, _roles in table} == flt.NR
    assert flt.arg("openat", ROLE["OFLAGS"]) == 2
    assert flt.arg("sendto", ROLE["ADDR"]) == 4
    with pytest.raises(ValueError):
        flt.arg("chmod", ROLE["OFLAGS"])


def test_nofollow_calls() -> None:
    """The calls that act on the last component of their name itself, never on where a
    symlink there leads (audit-only and the metadata handler place them so): the
    l-forms, what makes or removes a name, and link's and rename's new names."""
    assert {name for name, _nr, _op, nofollow, _roles in rows() if nofollow} == {
        "lchown", "lsetxattr", "lremovexattr", "unlink", "unlinkat", "rmdir", "mkdir",
        "mkdirat", "mknod", "mknodat", "symlink", "symlinkat", "link", "linkat", "rename",
        "renameat", "renameat2"}


def test_aarch64_column() -> None:
    """aarch64's table: the same rows with the same roles, one row a number, and none for
    exactly the calls that have only an *at form there (util.c checks the numbers
    against aarch64's libc when compiled for it, the oracle against libseccomp's)."""
    n = ffi.new("int *")
    x86, arm = (lib.ztsa_syscalls_of(arch, n) for arch in flt.ARCHES)
    assert lib.ztsa_syscalls_of(0x40000003, n) == ffi.NULL  # i386: no table
    names = [ffi.string(x86[i].name) for i in range(n[0])]
    assert names == [ffi.string(arm[i].name) for i in range(n[0])]
    assert all(tuple(x86[i].arg) == tuple(arm[i].arg) and x86[i].op == arm[i].op
               for i in range(n[0]))
    numbers = flt.numbers(flt.AUDIT_ARCH_AARCH64)
    assert len(set(numbers.values())) == len(numbers)
    assert set(flt.NR) - set(numbers) == {
        "open", "creat", "mkdir", "rmdir", "link", "unlink", "symlink", "rename", "mknod",
        "chmod", "chown", "lchown", "utime", "utimes", "futimesat"}
    assert numbers["openat"] == 56 and numbers["connect"] == 203  # asm-generic/unistd.h

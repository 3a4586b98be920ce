/* The x86_64 system calls that ztsa's filter, file helper and tracer name: the one
   table of them, for C and Python. A row is
     X(name, number, what it does (enum ztsa_op), nofollow, the roles of arguments 0-5)
   with the roles of enum ztsa_arg (ztsa_native.h, without the ZTSA_ARG_ prefix; `_`:
   one no part of ztsa reads, as for the calls the filter refuses by number alone).
   nofollow: the call acts on the last component of its name (the new one, for link
   and rename) itself, never on where a symlink there leads. C reads the numbers as ZTSA_NR_<name> and the rows through ztsa_sys() and
   sys_arg() (common.h, syscalls.c); Python through ztsa_syscalls() (the filter,
   ztsa/sandbox/filter.py, builds its NR table and its argument offsets from it).
   util.c checks the numbers against <sys/syscall.h> at compile time, and
   tests/sandbox/test_filter_oracle.py against libseccomp's. */
#ifndef ZTSA_NR_H
#define ZTSA_NR_H

/* clang-format off */
#define ZTSA_SYSCALLS(X) \
    X(open,               2, OPEN,        0, PATH, OFLAGS, MODE, _, _, _) \
    X(ioctl,             16, OTHER,       0, FD, REQUEST, CMDARG, _, _, _) \
    X(socket,            41, OTHER,       0, DOMAIN, TYPE, PROTOCOL, _, _, _) \
    X(connect,           42, CONNECT,     0, FD, ADDR, ADDRLEN, _, _, _) \
    X(sendto,            44, SEND,        0, FD, BUF, LEN, MSGFLAGS, ADDR, ADDRLEN) \
    X(sendmsg,           46, SEND,        0, FD, MSGHDR, MSGFLAGS, _, _, _) \
    X(bind,              49, BIND,        0, FD, ADDR, ADDRLEN, _, _, _) \
    X(listen,            50, LISTEN,      0, FD, BACKLOG, _, _, _, _) \
    X(setsockopt,        54, OTHER,       0, FD, LEVEL, OPTNAME, OPTVAL, OPTLEN, _) \
    X(clone,             56, OTHER,       0, CLONEFLAGS, _, _, _, _, _) \
    X(execve,            59, EXEC,        0, PATH, ARGV, ENVP, _, _, _) \
    X(fcntl,             72, LOCK,        0, FD, FCMD, CMDARG, _, _, _) \
    X(flock,             73, LOCK,        0, FD, LOCKOP, _, _, _, _) \
    X(truncate,          76, TRUNCATE,    0, PATH, LENGTH, _, _, _, _) \
    X(rename,            82, RENAME,      1, PATH, PATH2, _, _, _, _) \
    X(mkdir,             83, MKDIR,       1, PATH, MODE, _, _, _, _) \
    X(rmdir,             84, UNLINK,      1, PATH, _, _, _, _, _) \
    X(creat,             85, CREAT,       0, PATH, MODE, _, _, _, _) \
    X(link,              86, LINK,        1, PATH, PATH2, _, _, _, _) \
    X(unlink,            87, UNLINK,      1, PATH, _, _, _, _, _) \
    X(symlink,           88, SYMLINK,     1, TARGET, PATH, _, _, _, _) \
    X(chmod,             90, CHMOD,       0, PATH, MODE, _, _, _, _) \
    X(fchmod,            91, CHMOD,       0, FD, MODE, _, _, _, _) \
    X(chown,             92, CHOWN,       0, PATH, UID, GID, _, _, _) \
    X(fchown,            93, CHOWN,       0, FD, UID, GID, _, _, _) \
    X(lchown,            94, CHOWN,       1, PATH, UID, GID, _, _, _) \
    X(umask,             95, UMASK,       0, MODE, _, _, _, _, _) \
    X(ptrace,           101, OTHER,       0, _, _, _, _, _, _) \
    X(utime,            132, UTIME,       0, PATH, TIMES, _, _, _, _) \
    X(mknod,            133, MKNOD,       1, PATH, MODE, DEV, _, _, _) \
    X(setpriority,      141, OTHER,       0, WHICH, PID, _, _, _, _) \
    X(sched_setparam,   142, OTHER,       0, PID, _, _, _, _, _) \
    X(sched_setscheduler, 144, OTHER,     0, PID, _, _, _, _, _) \
    X(prctl,            157, OTHER,       0, OPTION, _, _, _, _, _) \
    X(setxattr,         188, SETXATTR,    0, PATH, XNAME, XVALUE, XSIZE, XFLAGS, _) \
    X(lsetxattr,        189, SETXATTR,    1, PATH, XNAME, XVALUE, XSIZE, XFLAGS, _) \
    X(fsetxattr,        190, SETXATTR,    0, FD, XNAME, XVALUE, XSIZE, XFLAGS, _) \
    X(removexattr,      197, REMOVEXATTR, 0, PATH, XNAME, _, _, _, _) \
    X(lremovexattr,     198, REMOVEXATTR, 1, PATH, XNAME, _, _, _, _) \
    X(fremovexattr,     199, REMOVEXATTR, 0, FD, XNAME, _, _, _, _) \
    X(sched_setaffinity, 203, OTHER,      0, PID, _, _, _, _, _) \
    X(utimes,           235, UTIMES,      0, PATH, TIMES, _, _, _, _) \
    X(add_key,          248, OTHER,       0, _, _, _, _, _, _) \
    X(request_key,      249, OTHER,       0, _, _, _, _, _, _) \
    X(keyctl,           250, OTHER,       0, _, _, _, _, _, _) \
    X(ioprio_set,       251, OTHER,       0, WHICH, PID, _, _, _, _) \
    X(openat,           257, OPEN,        0, DIRFD, PATH, OFLAGS, MODE, _, _) \
    X(mkdirat,          258, MKDIR,       1, DIRFD, PATH, MODE, _, _, _) \
    X(mknodat,          259, MKNOD,       1, DIRFD, PATH, MODE, DEV, _, _) \
    X(fchownat,         260, CHOWN,       0, DIRFD, PATH, UID, GID, ATFLAGS, _) \
    X(futimesat,        261, UTIMES,      0, DIRFD, PATH, TIMES, _, _, _) \
    X(unlinkat,         263, UNLINK,      1, DIRFD, PATH, ATFLAGS, _, _, _) \
    X(renameat,         264, RENAME,      1, DIRFD, PATH, DIRFD2, PATH2, _, _) \
    X(linkat,           265, LINK,        1, DIRFD, PATH, DIRFD2, PATH2, ATFLAGS, _) \
    X(symlinkat,        266, SYMLINK,     1, TARGET, DIRFD, PATH, _, _, _) \
    X(fchmodat,         268, CHMOD,       0, DIRFD, PATH, MODE, _, _, _) \
    X(utimensat,        280, UTIMENS,     0, DIRFD, PATH, TIMES, ATFLAGS, _, _) \
    X(prlimit64,        302, OTHER,       0, PID, RESOURCE, NEWLIMIT, _, _, _) \
    X(sendmmsg,         307, SEND,        0, FD, MMSGHDR, VLEN, MSGFLAGS, _, _) \
    X(process_vm_readv, 310, OTHER,       0, _, _, _, _, _, _) \
    X(process_vm_writev, 311, OTHER,      0, _, _, _, _, _, _) \
    X(sched_setattr,    314, OTHER,       0, PID, _, _, _, _, _) \
    X(renameat2,        316, RENAME,      1, DIRFD, PATH, DIRFD2, PATH2, RFLAGS, _) \
    X(seccomp,          317, OTHER,       0, _, _, _, _, _, _) \
    X(execveat,         322, EXEC,        0, DIRFD, PATH, ARGV, ENVP, ATFLAGS, _) \
    X(io_uring_setup,   425, OTHER,       0, _, _, _, _, _, _) \
    X(io_uring_enter,   426, OTHER,       0, _, _, _, _, _, _) \
    X(io_uring_register, 427, OTHER,      0, _, _, _, _, _, _) \
    X(clone3,           435, OTHER,       0, _, _, _, _, _, _) \
    X(openat2,          437, OTHER,       0, _, _, _, _, _, _) \
    X(pidfd_getfd,      438, OTHER,       0, _, _, _, _, _, _) \
    X(fchmodat2,        452, CHMOD,       0, DIRFD, PATH, MODE, ATFLAGS, _, _) \
    X(setxattrat,       463, OTHER,       0, _, _, _, _, _, _) \
    X(removexattrat,    466, OTHER,       0, _, _, _, _, _, _) \
    X(file_getattr,     468, OTHER,       0, _, _, _, _, _, _) \
    X(file_setattr,     469, OTHER,       0, _, _, _, _, _, _)
/* clang-format on */

enum ztsa_nr {
#define ZTSA_NR_ROW(name, nr, ...) ZTSA_NR_##name = nr,
    ZTSA_SYSCALLS(ZTSA_NR_ROW)
#undef ZTSA_NR_ROW
};

#endif

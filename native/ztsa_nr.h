/* The system calls that ztsa's filter, file helper and tracer name: the one table of
   them, for C and Python, for x86_64 and aarch64. A row is
     X(name, x86_64 number, aarch64 number, what it does (enum ztsa_op), nofollow,
       the roles of arguments 0-5)
   with -1 for a call the architecture lacks (aarch64 has only the *at forms: no open,
   mkdir, rename, chmod, chown, utime(s), ...: its libc makes openat of open), and
   the roles of enum ztsa_arg (ztsa_native.h, without the ZTSA_ARG_ prefix; `_`: one
   no part of ztsa reads, as for the calls the filter refuses by number alone); the
   roles are the same on both (the *at calls' arguments are). nofollow: the call acts
   on the last component of its name (the new one, for link and rename) itself, never
   on where a symlink there leads. C reads the numbers of the architecture it is
   compiled for as ZTSA_NR_<name> (-1: none) and the rows through ztsa_sys() and
   sys_arg() (common.h, syscalls.c); Python through ztsa_syscalls() (the filter,
   ztsa/sandbox/filter.py, builds its NR table and its argument offsets from it), and
   either architecture's through ztsa_syscalls_of(). util.c checks the numbers against
   <sys/syscall.h> at compile time, and tests/sandbox/test_filter_oracle.py against
   libseccomp's, for both architectures. */
#ifndef ZTSA_NR_H
#define ZTSA_NR_H

/* clang-format off */
#define ZTSA_SYSCALLS(X) \
    X(open,                 2,   -1, OPEN,        0, PATH, OFLAGS, MODE, _, _, _) \
    X(ioctl,               16,   29, OTHER,       0, FD, REQUEST, CMDARG, _, _, _) \
    X(socket,              41,  198, OTHER,       0, DOMAIN, TYPE, PROTOCOL, _, _, _) \
    X(connect,             42,  203, CONNECT,     0, FD, ADDR, ADDRLEN, _, _, _) \
    X(sendto,              44,  206, SEND,        0, FD, BUF, LEN, MSGFLAGS, ADDR, ADDRLEN) \
    X(sendmsg,             46,  211, SEND,        0, FD, MSGHDR, MSGFLAGS, _, _, _) \
    X(bind,                49,  200, BIND,        0, FD, ADDR, ADDRLEN, _, _, _) \
    X(listen,              50,  201, LISTEN,      0, FD, BACKLOG, _, _, _, _) \
    X(setsockopt,          54,  208, OTHER,       0, FD, LEVEL, OPTNAME, OPTVAL, OPTLEN, _) \
    X(clone,               56,  220, OTHER,       0, CLONEFLAGS, _, _, _, _, _) \
    X(execve,              59,  221, EXEC,        0, PATH, ARGV, ENVP, _, _, _) \
    X(fcntl,               72,   25, LOCK,        0, FD, FCMD, CMDARG, _, _, _) \
    X(flock,               73,   32, LOCK,        0, FD, LOCKOP, _, _, _, _) \
    X(truncate,            76,   45, TRUNCATE,    0, PATH, LENGTH, _, _, _, _) \
    X(rename,              82,   -1, RENAME,      1, PATH, PATH2, _, _, _, _) \
    X(mkdir,               83,   -1, MKDIR,       1, PATH, MODE, _, _, _, _) \
    X(rmdir,               84,   -1, UNLINK,      1, PATH, _, _, _, _, _) \
    X(creat,               85,   -1, CREAT,       0, PATH, MODE, _, _, _, _) \
    X(link,                86,   -1, LINK,        1, PATH, PATH2, _, _, _, _) \
    X(unlink,              87,   -1, UNLINK,      1, PATH, _, _, _, _, _) \
    X(symlink,             88,   -1, SYMLINK,     1, TARGET, PATH, _, _, _, _) \
    X(chmod,               90,   -1, CHMOD,       0, PATH, MODE, _, _, _, _) \
    X(fchmod,              91,   52, CHMOD,       0, FD, MODE, _, _, _, _) \
    X(chown,               92,   -1, CHOWN,       0, PATH, UID, GID, _, _, _) \
    X(fchown,              93,   55, CHOWN,       0, FD, UID, GID, _, _, _) \
    X(lchown,              94,   -1, CHOWN,       1, PATH, UID, GID, _, _, _) \
    X(umask,               95,  166, UMASK,       0, MODE, _, _, _, _, _) \
    X(ptrace,             101,  117, OTHER,       0, _, _, _, _, _, _) \
    X(utime,              132,   -1, UTIME,       0, PATH, TIMES, _, _, _, _) \
    X(mknod,              133,   -1, MKNOD,       1, PATH, MODE, DEV, _, _, _) \
    X(setpriority,        141,  140, OTHER,       0, WHICH, PID, _, _, _, _) \
    X(sched_setparam,     142,  118, OTHER,       0, PID, _, _, _, _, _) \
    X(sched_setscheduler, 144,  119, OTHER,     0, PID, _, _, _, _, _) \
    X(prctl,              157,  167, OTHER,       0, OPTION, _, _, _, _, _) \
    X(setxattr,           188,    5, SETXATTR,    0, PATH, XNAME, XVALUE, XSIZE, XFLAGS, _) \
    X(lsetxattr,          189,    6, SETXATTR,    1, PATH, XNAME, XVALUE, XSIZE, XFLAGS, _) \
    X(fsetxattr,          190,    7, SETXATTR,    0, FD, XNAME, XVALUE, XSIZE, XFLAGS, _) \
    X(removexattr,        197,   14, REMOVEXATTR, 0, PATH, XNAME, _, _, _, _) \
    X(lremovexattr,       198,   15, REMOVEXATTR, 1, PATH, XNAME, _, _, _, _) \
    X(fremovexattr,       199,   16, REMOVEXATTR, 0, FD, XNAME, _, _, _, _) \
    X(sched_setaffinity,  203,  122, OTHER,      0, PID, _, _, _, _, _) \
    X(utimes,             235,   -1, UTIMES,      0, PATH, TIMES, _, _, _, _) \
    X(add_key,            248,  217, OTHER,       0, _, _, _, _, _, _) \
    X(request_key,        249,  218, OTHER,       0, _, _, _, _, _, _) \
    X(keyctl,             250,  219, OTHER,       0, _, _, _, _, _, _) \
    X(ioprio_set,         251,   30, OTHER,       0, WHICH, PID, _, _, _, _) \
    X(openat,             257,   56, OPEN,        0, DIRFD, PATH, OFLAGS, MODE, _, _) \
    X(mkdirat,            258,   34, MKDIR,       1, DIRFD, PATH, MODE, _, _, _) \
    X(mknodat,            259,   33, MKNOD,       1, DIRFD, PATH, MODE, DEV, _, _) \
    X(fchownat,           260,   54, CHOWN,       0, DIRFD, PATH, UID, GID, ATFLAGS, _) \
    X(futimesat,          261,   -1, UTIMES,      0, DIRFD, PATH, TIMES, _, _, _) \
    X(unlinkat,           263,   35, UNLINK,      1, DIRFD, PATH, ATFLAGS, _, _, _) \
    X(renameat,           264,   38, RENAME,      1, DIRFD, PATH, DIRFD2, PATH2, _, _) \
    X(linkat,             265,   37, LINK,        1, DIRFD, PATH, DIRFD2, PATH2, ATFLAGS, _) \
    X(symlinkat,          266,   36, SYMLINK,     1, TARGET, DIRFD, PATH, _, _, _) \
    X(fchmodat,           268,   53, CHMOD,       0, DIRFD, PATH, MODE, _, _, _) \
    X(utimensat,          280,   88, UTIMENS,     0, DIRFD, PATH, TIMES, ATFLAGS, _, _) \
    X(prlimit64,          302,  261, OTHER,       0, PID, RESOURCE, NEWLIMIT, _, _, _) \
    X(sendmmsg,           307,  269, SEND,        0, FD, MMSGHDR, VLEN, MSGFLAGS, _, _) \
    X(process_vm_readv,   310,  270, OTHER,       0, _, _, _, _, _, _) \
    X(process_vm_writev,  311,  271, OTHER,      0, _, _, _, _, _, _) \
    X(sched_setattr,      314,  274, OTHER,       0, PID, _, _, _, _, _) \
    X(renameat2,          316,  276, RENAME,      1, DIRFD, PATH, DIRFD2, PATH2, RFLAGS, _) \
    X(seccomp,            317,  277, OTHER,       0, _, _, _, _, _, _) \
    X(execveat,           322,  281, EXEC,        0, DIRFD, PATH, ARGV, ENVP, ATFLAGS, _) \
    X(io_uring_setup,     425,  425, OTHER,       0, _, _, _, _, _, _) \
    X(io_uring_enter,     426,  426, OTHER,       0, _, _, _, _, _, _) \
    X(io_uring_register,  427,  427, OTHER,      0, _, _, _, _, _, _) \
    X(clone3,             435,  435, OTHER,       0, _, _, _, _, _, _) \
    X(openat2,            437,  437, OTHER,       0, _, _, _, _, _, _) \
    X(pidfd_getfd,        438,  438, OTHER,       0, _, _, _, _, _, _) \
    X(fchmodat2,          452,  452, CHMOD,       0, DIRFD, PATH, MODE, ATFLAGS, _, _) \
    X(setxattrat,         463,  463, OTHER,       0, _, _, _, _, _, _) \
    X(removexattrat,      466,  466, OTHER,       0, _, _, _, _, _, _) \
    X(file_getattr,       468,  468, OTHER,       0, _, _, _, _, _, _) \
    X(file_setattr,       469,  469, OTHER,       0, _, _, _, _, _, _)
/* clang-format on */

#if defined(__x86_64__)
#define ZTSA_NR_OF(x86_64, aarch64) (x86_64)
#elif defined(__aarch64__)
#define ZTSA_NR_OF(x86_64, aarch64) (aarch64)
#else
#error "ztsa's table of system calls knows x86_64 and aarch64 only"
#endif

enum ztsa_nr {
#define ZTSA_NR_ROW(name, x86_64, aarch64, ...) ZTSA_NR_##name = ZTSA_NR_OF(x86_64, aarch64),
    ZTSA_SYSCALLS(ZTSA_NR_ROW)
#undef ZTSA_NR_ROW
};

#endif

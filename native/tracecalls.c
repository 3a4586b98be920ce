/* Runs in the supervisor, ztsa's own process: the calls the Python tracer makes on the
   tree beside the wait loop (supervisor.c), which keep no state: ptrace requests, a
   stop's system-call record, the tracee's memory through process_vm_readv/writev, and
   the connects and sends the tracer performs on its own duplicates of the tree's
   sockets. */
#include "common.h"

#include <errno.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

long ztsa_ptrace(long request, int pid, unsigned long addr, unsigned long data) {
    errno = 0;
    long r = ptrace((ztsa_ptrace_req)request, pid, (void *)addr, (void *)data);
    if (r == -1 && errno)
        return -errno;
    return r;
}

/* PTRACE_GET_SYSCALL_INFO's record (linux/ptrace.h, which clashes with sys/ptrace.h) */
struct syscall_info_ {
    unsigned char op, pad[3];
    unsigned int arch;
    unsigned long long ip, sp;
    union {
        struct { unsigned long long nr, args[6]; } entry;
        struct { long long rval; unsigned char is_error; } exit;
    };
};

int ztsa_syscall_info(int pid, int *op, long *nr, unsigned long long args[6], long long *rval) {
    struct syscall_info_ info;
    memset(&info, 0, sizeof info);
    if (ptrace((ztsa_ptrace_req)0x420e, pid, (void *)sizeof info, &info) < 0)
        return -errno;
    *op = info.op; /* 1: entry, 2: exit, 3: a seccomp stop */
    if (info.op == 1) {
        *nr = (long)info.entry.nr;
        memcpy(args, info.entry.args, sizeof info.entry.args);
    } else if (info.op == 2) {
        *rval = info.exit.rval;
    }
    return 0;
}

long ztsa_readmem(int pid, unsigned long long addr, void *buf, unsigned long len) {
    struct iovec local = {buf, len};
    struct iovec remote = {(void *)(unsigned long)addr, len};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    return n < 0 ? -errno : n;
}

long ztsa_writemem(int pid, unsigned long long addr, const void *buf, unsigned long len) {
    struct iovec local = {(void *)buf, len};
    struct iovec remote = {(void *)(unsigned long)addr, len};
    ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    return n < 0 ? -errno : n;
}

int ztsa_set_dumpable(int on) {
    return prctl(PR_SET_DUMPABLE, on, 0, 0, 0) < 0 ? -errno : 0;
}

long ztsa_connect(int fd, const void *addr, unsigned int addrlen) {
    long r = syscall(SYS_connect, fd, addr, addrlen);
    return r < 0 ? -errno : r;
}

long ztsa_sendto(int fd, const void *buf, unsigned long len, int flags,
                 const void *addr, unsigned int addrlen) {
    /* MSG_NOSIGNAL: a broken pipe must not kill the supervisor; the tracer re-delivers
       SIGPIPE to the tracee itself */
    long r = syscall(SYS_sendto, fd, buf, len, flags | MSG_NOSIGNAL, addr, addrlen);
    return r < 0 ? -errno : r;
}

long ztsa_sendmsg1(int fd, const void *name, unsigned int namelen, const void *buf,
                   unsigned long len, int flags) {
    struct iovec iov = {(void *)buf, len};
    struct msghdr msg;
    memset(&msg, 0, sizeof msg);
    msg.msg_name = (void *)name;
    msg.msg_namelen = namelen;
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    long r = syscall(SYS_sendmsg, fd, &msg, flags | MSG_NOSIGNAL);
    return r < 0 ? -errno : r;
}

int ztsa_sockopt_int(int fd, int level, int name) {
    int v = 0;
    socklen_t l = sizeof v;
    if (getsockopt(fd, level, name, &v, &l) < 0)
        return -errno;
    return v;
}

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define ZTSA_LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#define ZTSA_LANDLOCK_RULE_PATH_BENEATH 1

struct ztsa_ll_ruleset_attr {
    unsigned long long handled_access_fs;
};

struct ztsa_ll_path_beneath_attr {
    unsigned long long allowed_access;
    int parent_fd;
} __attribute__((packed));

int ztsa_landlock_abi(void) {
    long r = syscall(SYS_landlock_create_ruleset, NULL, 0,
                     ZTSA_LANDLOCK_CREATE_RULESET_VERSION);
    return r < 0 ? -errno : (int)r;
}

/* In the child: allow the handled (write) rights only beneath the given paths. */
static int apply_landlock(const char *const *paths, const unsigned long long *rights, int n,
                          unsigned long long handled) {
    struct ztsa_ll_ruleset_attr attr = {handled};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (ruleset < 0)
        return -errno;
    for (int i = 0; i < n; i++) {
        int fd = open(paths[i], O_PATH | O_CLOEXEC);
        if (fd < 0)
            continue; /* an allowed path that does not exist allows nothing */
        struct ztsa_ll_path_beneath_attr pb = {rights[i] & handled, fd};
        long r = syscall(SYS_landlock_add_rule, ruleset, ZTSA_LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
        int e = errno;
        close(fd);
        if (r < 0) {
            close(ruleset);
            return -e;
        }
    }
    long r = syscall(SYS_landlock_restrict_self, ruleset, 0);
    int e = errno;
    close(ruleset);
    return r < 0 ? -e : 0;
}

static void child_fail(int err_fd, int err) {
    /* async-signal-safe: write the errno and leave */
    ssize_t ignored = write(err_fd, &err, sizeof err);
    (void)ignored;
    _exit(127);
}

static int drop_capabilities(unsigned long long keep) {
    int last = 63;
    for (int cap = 0; cap <= last; cap++) {
        if (keep & (1ULL << cap))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return -errno;
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    for (int i = 0; i < 2; i++) {
        unsigned int k = (unsigned int)(keep >> (32 * i));
        data[i].effective = k;
        data[i].permitted = k;
        data[i].inheritable = k;
    }
    if (syscall(SYS_capset, &hdr, data) < 0)
        return -errno;
    return 0;
}

int ztsa_spawn(const char *path, char *const argv[], char *const envp[],
               const char *cwd, const struct ztsa_filter_insn *filter,
               unsigned short filter_len, int drop_caps,
               unsigned long long keep_caps, const int *keep_fds, int n_keep_fds,
               const char *const *write_paths, const unsigned long long *write_rights,
               int n_write_paths, unsigned long long handled_fs,
               int *sync_fd, int *err_fd) {
    int sync_pipe[2], err_pipe[2];
    if (pipe2(sync_pipe, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(err_pipe, O_CLOEXEC) < 0) {
        int e = errno;
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        return -e;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sync_pipe[0]); close(sync_pipe[1]);
        close(err_pipe[0]); close(err_pipe[1]);
        return -e;
    }
    if (pid == 0) {
        int efd = err_pipe[1];
        close(sync_pipe[1]);
        close(err_pipe[0]);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
            _exit(127);
        /* wait until the tracer has seized us */
        char go;
        ssize_t n;
        do {
            n = read(sync_pipe[0], &go, 1);
        } while (n < 0 && errno == EINTR);
        if (n != 1)
            _exit(127);
        close(sync_pipe[0]);
        /* nothing but stdio (and the named fds) reaches CMD */
        for (int fd = 3; fd < 1024; fd++) {
            int keep = (fd == efd);
            for (int i = 0; i < n_keep_fds; i++)
                if (keep_fds[i] == fd)
                    keep = 1;
            if (!keep)
                close(fd);
        }
        syscall(SYS_close_range, 1024, ~0U, 0);
        for (int i = 0; i < n_keep_fds; i++) {
            int flags = fcntl(keep_fds[i], F_GETFD);
            if (flags >= 0)
                fcntl(keep_fds[i], F_SETFD, flags & ~FD_CLOEXEC);
        }
        if (cwd && chdir(cwd) < 0)
            child_fail(efd, errno);
        if (drop_caps) {
            int r = drop_capabilities(keep_caps);
            if (r < 0)
                child_fail(efd, -r);
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            child_fail(efd, errno);
        if (handled_fs) {
            int r = apply_landlock(write_paths, write_rights, n_write_paths, handled_fs);
            if (r < 0)
                child_fail(efd, -r);
        }
        struct sock_fprog prog = {filter_len, (struct sock_filter *)filter};
        if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
            child_fail(efd, errno);
        execve(path, argv, envp);
        child_fail(efd, errno);
    }
    close(sync_pipe[0]);
    close(err_pipe[1]);
    *sync_fd = sync_pipe[1];
    *err_fd = err_pipe[0];
    return pid;
}

long ztsa_ptrace(long request, int pid, unsigned long addr, unsigned long data) {
    errno = 0;
    long r = ptrace((enum __ptrace_request)request, pid, (void *)addr, (void *)data);
    if (r == -1 && errno)
        return -errno;
    return r;
}

#if defined(__x86_64__)
/* The registers of the last ztsa_syscall_get: the tracee stays stopped until the tracer
   answers, so ztsa_syscall_return can reuse them instead of fetching them again. */
static struct user_regs_struct cached_regs;
static int cached_pid = -1;
#endif

int ztsa_syscall_get(int pid, long *nr, unsigned long long args[6]) {
#if defined(__x86_64__)
    struct user_regs_struct *regs = &cached_regs;
    cached_pid = -1;
    if (ptrace(PTRACE_GETREGS, pid, 0, regs) < 0)
        return -errno;
    cached_pid = pid;
    *nr = (long)regs->orig_rax;
    args[0] = regs->rdi; args[1] = regs->rsi; args[2] = regs->rdx;
    args[3] = regs->r10; args[4] = regs->r8; args[5] = regs->r9;
    return 0;
#else
    (void)pid; (void)nr; (void)args;
    return -ENOSYS;
#endif
}

int ztsa_syscall_return(int pid, long result) {
#if defined(__x86_64__)
    struct user_regs_struct regs;
    if (pid == cached_pid) {
        regs = cached_regs;
    } else if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0) {
        return -errno;
    }
    cached_pid = -1;
    regs.orig_rax = (unsigned long long)-1; /* skip the syscall ... */
    regs.rax = (unsigned long long)result;  /* ... and return this */
    if (ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
        return -errno;
    return 0;
#else
    (void)pid; (void)result;
    return -ENOSYS;
#endif
}

long ztsa_readmem(int pid, unsigned long long addr, void *buf, unsigned long len) {
    struct iovec local = {buf, len};
    struct iovec remote = {(void *)(unsigned long)addr, len};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    return n < 0 ? -errno : n;
}

int ztsa_pidfd_getfd(int tid, int fd) {
    int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (pidfd < 0)
        return -errno;
    int dup = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int e = errno;
    close(pidfd);
    return dup < 0 ? -e : dup;
}

int ztsa_set_dumpable(int on) {
    return prctl(PR_SET_DUMPABLE, on, 0, 0, 0) < 0 ? -errno : 0;
}

long ztsa_writemem(int pid, unsigned long long addr, const void *buf, unsigned long len) {
    struct iovec local = {(void *)buf, len};
    struct iovec remote = {(void *)(unsigned long)addr, len};
    ssize_t n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
    return n < 0 ? -errno : n;
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

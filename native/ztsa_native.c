#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
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

#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
struct ztsa_mount_attr {
    unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

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


/* ---- agent files: read-only bind mounts, and a confined helper for name creation ---- */

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? e : EIO);
}

/* A private mount namespace (with a user namespace mapping only our own ids when not
   root) where every path of ro_paths is bind-mounted read-only onto itself: writing,
   truncating, chmod (EROFS), unlinking and renaming over it (EBUSY) all fail. */
static int protect_mounts(int userns, const char *const *ro_paths, int n_ro) {
    char map[64];
    unsigned int uid = getuid(), gid = getgid();
    if (unshare(CLONE_NEWNS | (userns ? CLONE_NEWUSER : 0)) < 0)
        return -errno;
    if (userns) {
        int r;
        snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
        if ((r = write_file("/proc/self/uid_map", map)) < 0)
            return r;
        if ((r = write_file("/proc/self/setgroups", "deny")) < 0)
            return r;
        snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
        if ((r = write_file("/proc/self/gid_map", map)) < 0)
            return r;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return -errno;
    for (int i = 0; i < n_ro; i++) {
        if (mount(ro_paths[i], ro_paths[i], NULL, MS_BIND | MS_REC, NULL) < 0)
            return -errno;
        struct ztsa_mount_attr attr = {MOUNT_ATTR_RDONLY, 0, 0, 0};
        if (syscall(SYS_mount_setattr, AT_FDCWD, ro_paths[i], AT_RECURSIVE, &attr,
                    sizeof attr) < 0)
            return -errno;
    }
    return 0;
}

struct ztsa_fs_request {
    int op;
    int flags;
    unsigned int mode;
    unsigned int umask;
    unsigned long long dev;
    unsigned int len1, len2;
};

struct ztsa_fs_reply {
    int err;       /* 0 or an errno */
    int verdict;   /* ZTSA_FS_* */
    unsigned int fixmode; /* CREATE: the mode to set once the tracee has opened it */
    int pad;
};

enum { OP_CREATE = 1, OP_MKDIR, OP_MKNOD, OP_SYMLINK, OP_LINK, OP_RENAME, OP_CHMOD };
enum { FS_DONE = 0, FS_PROTECTED = 1, FS_CREATED = 2, FS_EXISTS = 3 };

static int helper_root = -1;
static const char *const *helper_protected;
static int helper_n_protected;

static int same_as(int fd, const char *name, int follow, const struct stat *want) {
    struct stat st;
    int r = name ? fstatat(fd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) : fstat(fd, &st);
    return r == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* Is the directory parentfd the workspace-relative directory dir ("" for the root)? */
static int parent_is(int parentfd, const char *dir, size_t dirlen) {
    struct stat st;
    char buf[4096];
    if (dirlen == 0)
        return fstat(helper_root, &st) == 0 && same_as(parentfd, NULL, 0, &st);
    if (dirlen >= sizeof buf)
        return 0;
    memcpy(buf, dir, dirlen);
    buf[dirlen] = 0;
    return fstatat(helper_root, buf, &st, 0) == 0 && same_as(parentfd, NULL, 0, &st);
}

/* 1: (parentfd, name) is a protected path; 2: a directory on the way to one, or the
   workspace itself; 0: neither. */
static int classify(int parentfd, const char *name) {
    int result = 0;
    struct stat root;
    if (fstat(helper_root, &root) == 0 && same_as(parentfd, name, 0, &root))
        result = 2;
    for (int i = 0; i < helper_n_protected; i++) {
        const char *entry = helper_protected[i];
        const char *start = entry;
        for (;;) {
            const char *end = strchr(start, '/');
            size_t len = end ? (size_t)(end - start) : strlen(start);
            if (len == strlen(name) && memcmp(start, name, len) == 0 &&
                parent_is(parentfd, entry, start == entry ? 0 : (size_t)(start - entry - 1))) {
                if (!end || end[1] == 0)
                    return 1;
                result = 2;
            }
            if (!end || end[1] == 0)
                break;
            start = end + 1;
        }
    }
    return result;
}

/* Split path into its parent directory (opened O_PATH relative to dirfd, as the kernel
   would resolve it) and its last component. */
static int open_parent(int dirfd, const char *path, char *name, size_t name_size, int *slash) {
    char buf[4097];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return -(n ? ENAMETOOLONG : ENOENT);
    memcpy(buf, path, n + 1);
    *slash = 0;
    while (n > 1 && buf[n - 1] == '/') {
        buf[--n] = 0;
        *slash = 1;
    }
    char *last = strrchr(buf, '/');
    const char *dir = ".";
    const char *base = buf;
    if (last == buf) {
        dir = "/";
        base = last + 1;
    } else if (last) {
        *last = 0;
        dir = buf;
        base = last + 1;
    }
    if (*base == 0)
        base = ".";
    if (strlen(base) >= name_size)
        return -ENAMETOOLONG;
    strcpy(name, base);
    int fd = openat(dirfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

static void fs_op(const struct ztsa_fs_request *rq, const char *p1, const char *p2,
                  int fd1, int fd2, struct ztsa_fs_reply *out) {
    char name1[256], name2[256];
    int slash1 = 0, slash2 = 0, par1 = -1, par2 = -1, r = 0;
    memset(out, 0, sizeof *out);
    umask(rq->umask & 0777);
    int empty_link = rq->op == OP_LINK && (rq->flags & AT_EMPTY_PATH) && *p1 == 0;
    if (!empty_link && rq->op != OP_SYMLINK) {
        par1 = open_parent(fd1, p1, name1, sizeof name1, &slash1);
        if (par1 < 0) {
            out->err = -par1;
            return;
        }
    }
    if (rq->op == OP_LINK || rq->op == OP_RENAME || rq->op == OP_SYMLINK) {
        const char *np = rq->op == OP_SYMLINK ? p1 : p2;
        int nfd = rq->op == OP_SYMLINK ? fd1 : fd2;
        par2 = open_parent(nfd, np, name2, sizeof name2, &slash2);
        if (par2 < 0) {
            out->err = -par2;
            goto done;
        }
    }
    switch (rq->op) {
    case OP_CREATE: {
        if (slash1) {
            out->err = EISDIR;
            break;
        }
        if (classify(par1, name1) == 1) {
            out->verdict = FS_PROTECTED;
            break;
        }
        unsigned int want = rq->mode & 07777 & ~rq->umask;
        umask(0);
        int fd = openat(par1, name1, O_CREAT | O_EXCL | O_NOFOLLOW | O_RDONLY | O_CLOEXEC,
                        want | S_IRUSR | S_IWUSR);
        if (fd >= 0) {
            close(fd);
            out->verdict = FS_CREATED;
            out->fixmode = want;
        } else if (errno == EEXIST) {
            out->verdict = FS_EXISTS;
        } else {
            out->err = errno;
        }
        break;
    }
    case OP_MKDIR:
    case OP_MKNOD:
    case OP_CHMOD:
        if (classify(par1, name1) == 1) {
            out->verdict = FS_PROTECTED;
            break;
        }
        if (rq->op == OP_MKDIR)
            r = mkdirat(par1, name1, rq->mode);
        else if (rq->op == OP_MKNOD)
            r = mknodat(par1, name1, rq->mode, (dev_t)rq->dev);
        else
            r = fchmodat(par1, name1, rq->mode & 07777, 0);
        out->err = r < 0 ? errno : 0;
        break;
    case OP_SYMLINK:
        if (classify(par2, name2) == 1) {
            out->verdict = FS_PROTECTED;
            break;
        }
        out->err = symlinkat(p2, par2, name2) < 0 ? errno : 0;
        break;
    case OP_LINK:
        if ((!empty_link && classify(par1, name1) == 1) || classify(par2, name2) == 1) {
            out->verdict = FS_PROTECTED;
            break;
        }
        r = empty_link ? linkat(fd1, "", par2, name2, AT_EMPTY_PATH)
                       : linkat(par1, name1, par2, name2, rq->flags & AT_SYMLINK_FOLLOW);
        out->err = r < 0 ? errno : 0;
        break;
    case OP_RENAME: {
        int src = classify(par1, name1), dst = classify(par2, name2);
        struct stat st;
        int src_dir = fstatat(par1, name1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        /* never move a protected path or a directory on the way to one; never move a
           directory into such a place (it could bring the protected names with it) */
        if (src || dst == 1 || (dst == 2 && (src_dir || (rq->flags & 2 /* EXCHANGE */)))) {
            out->verdict = FS_PROTECTED;
            break;
        }
        r = (int)syscall(SYS_renameat2, par1, name1, par2, name2, (unsigned int)rq->flags);
        out->err = r < 0 ? errno : 0;
        break;
    }
    default:
        out->err = ENOSYS;
    }
done:
    if (par1 >= 0)
        close(par1);
    if (par2 >= 0)
        close(par2);
}

/* The helper's loop: one request (header, two NUL-terminated paths, two fds), one reply.
   It runs with the tree's credentials, namespace and Landlock domain, but no seccomp
   filter and no tracer; it leaves when the supervisor closes its end. */
static void fs_helper(int sock) {
    static char buf[sizeof(struct ztsa_fs_request) + 2 * 4097];
    for (;;) {
        char cbuf[CMSG_SPACE(2 * sizeof(int))];
        struct iovec iov = {buf, sizeof buf};
        struct msghdr msg;
        memset(&msg, 0, sizeof msg);
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cbuf;
        msg.msg_controllen = sizeof cbuf;
        ssize_t n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            _exit(0);
        int fds[2] = {-1, -1};
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        if (c && c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
            size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            memcpy(fds, CMSG_DATA(c), (k > 2 ? 2 : k) * sizeof(int));
        }
        struct ztsa_fs_reply reply;
        memset(&reply, 0, sizeof reply);
        struct ztsa_fs_request rq;
        if ((size_t)n < sizeof rq) {
            reply.err = EINVAL;
        } else {
            memcpy(&rq, buf, sizeof rq);
            size_t need = sizeof rq + (size_t)rq.len1 + 1 + (size_t)rq.len2 + 1;
            if (rq.len1 > 4096 || rq.len2 > 4096 || (size_t)n != need) {
                reply.err = EINVAL;
            } else {
                char *p1 = buf + sizeof rq, *p2 = p1 + rq.len1 + 1;
                p1[rq.len1] = 0;
                p2[rq.len2] = 0;
                fs_op(&rq, p1, p2, fds[0], fds[1] >= 0 ? fds[1] : fds[0], &reply);
            }
        }
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        if (send(sock, &reply, sizeof reply, MSG_NOSIGNAL) != sizeof reply)
            _exit(0);
    }
}

/* Start the helper as an orphan (double fork, the first with CLONE_UNTRACED): it is not
   part of the traced tree, and CMD never sees it as a child. */
static int start_fs_helper(int sock, const char *workspace,
                           const char *const *protected_paths, int n_protected, int cpu) {
    int root = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (root < 0)
        return -errno;
    long mid = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
    if (mid < 0) {
        int e = errno;
        close(root);
        return -e;
    }
    if (mid == 0) {
        pid_t helper = fork();
        if (helper == 0) {
            for (int fd = 0; fd < 1024; fd++)
                if (fd != sock && fd != root)
                    close(fd);
            if (cpu >= 0) {
                /* beside the tracer: a request is a switch on one CPU, not a wake-up
                   across CPUs */
                cpu_set_t set;
                CPU_ZERO(&set);
                CPU_SET(cpu, &set);
                sched_setaffinity(0, sizeof set, &set);
            }
            helper_root = root;
            helper_protected = protected_paths;
            helper_n_protected = n_protected;
            fs_helper(sock);
        }
        _exit(helper < 0 ? 1 : 0);
    }
    int status;
    while (waitpid((pid_t)mid, &status, __WALL) < 0 && errno == EINTR)
        ;
    close(root);
    close(sock);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -ECHILD;
}

int ztsa_userns_probe(void) {
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0)
        _exit(unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0 ? 1 : 0);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
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
               int ns_mode, const char *const *ro_paths, int n_ro, int fs_sock,
               const char *workspace, const char *const *protected_paths, int n_protected,
               int helper_cpu, int *sync_fd, int *err_fd) {
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
            int keep = (fd == efd || fd == fs_sock);
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
        if (ns_mode) {
            int r = protect_mounts(ns_mode == 2, ro_paths, n_ro);
            if (r < 0)
                child_fail(efd, -r);
        }
        if (cwd && chdir(cwd) < 0)
            child_fail(efd, errno);
        if (drop_caps || ns_mode == 2) {
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
        if (fs_sock >= 0) {
            int r = start_fs_helper(fs_sock, workspace, protected_paths, n_protected,
                                    helper_cpu);
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

int ztsa_syscall_rewrite(int pid, long nr, int index, unsigned long long value) {
#if defined(__x86_64__)
    struct user_regs_struct regs;
    if (pid == cached_pid) {
        regs = cached_regs;
    } else if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0) {
        return -errno;
    }
    cached_pid = -1;
    regs.orig_rax = (unsigned long long)nr;
    switch (index) {
    case 0: regs.rdi = value; break;
    case 1: regs.rsi = value; break;
    case 2: regs.rdx = value; break;
    case 3: regs.r10 = value; break;
    case 4: regs.r8 = value; break;
    case 5: regs.r9 = value; break;
    default: return -EINVAL;
    }
    if (ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0)
        return -errno;
    return 0;
#else
    (void)pid; (void)nr; (void)index; (void)value;
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

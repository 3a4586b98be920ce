#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <sys/un.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ztsa_native.h"

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
#define ZTSA_WAIT_KILLABLE_RECV (1UL << 5)
#define ZTSA_NOTIF_SET_FLAGS _IOW('!', 4, unsigned long long)
#define ZTSA_NOTIF_SYNC_WAKE_UP 1ULL

#define ZTSA_WAIT_KILLABLE_RECV (1UL << 5)
#define ZTSA_NOTIF_SET_FLAGS _IOW('!', 4, unsigned long long)
#define ZTSA_NOTIF_SYNC_WAKE_UP 1ULL

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

/* A ruleset handling `handled` that grants rights[i] (every handled right when rights
   is NULL) beneath fds[i], restricting this process. The fds are closed here; -1 is a
   path that did not exist, which allows nothing. */
static int restrict_beneath(unsigned long long handled, int *fds,
                            const unsigned long long *rights, int n) {
    struct ztsa_ll_ruleset_attr attr = {handled};
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    int err = ruleset < 0 ? errno : 0;
    for (int i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        struct ztsa_ll_path_beneath_attr pb = {(rights ? rights[i] : handled) & handled,
                                               fds[i]};
        if (!err && syscall(SYS_landlock_add_rule, ruleset, ZTSA_LANDLOCK_RULE_PATH_BENEATH,
                            &pb, 0) < 0)
            err = errno;
        close(fds[i]);
    }
    if (!err && syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
        err = errno;
    if (ruleset >= 0)
        close(ruleset);
    return -err;
}

/* In the child: allow the handled (write) rights only beneath the given paths. */
static int apply_landlock(const char *const *paths, const unsigned long long *rights, int n,
                          unsigned long long handled) {
    int *fds = calloc((size_t)(n ? n : 1), sizeof *fds);
    if (!fds)
        return -ENOMEM;
    for (int i = 0; i < n; i++)
        fds[i] = open(paths[i], O_PATH | O_CLOEXEC);
    int r = restrict_beneath(handled, fds, rights, n);
    free(fds);
    return r;
}


/* ---- agent files: read-only bind mounts, and a confined helper for name creation ---- */

#define ZTSA_LL_MAKE (0x7FULL << 6) /* LANDLOCK_ACCESS_FS_MAKE_CHAR ... MAKE_SYM */

int ztsa_pidfd_getfd(int tid, int fd) {
    int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (pidfd < 0)
        return -errno;
    int dup = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int e = errno;
    close(pidfd);
    return dup < 0 ? -e : dup;
}

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

enum { OP_CREATE = 1, OP_MKDIR, OP_MKNOD, OP_SYMLINK, OP_LINK, OP_RENAME };
static void cover_flush(void);
static int cont_mode; /* no audit log: creations may run in the caller (see below) */

static int helper_root = -1;
static int helper_lfd = -1;
static const struct seccomp_notif *helper_req;
static size_t helper_resp_size;
#define ANSWERED 2 /* fs_notification: the reply was sent elsewhere */
#define ANSWERED_ERR 100000 /* fs_op: likewise */
static void answer(int lfd, const struct seccomp_notif *req, long result, int fd,
                   struct seccomp_notif_resp *resp, size_t resp_size);
static const char *const *helper_protected;
static int helper_n_protected;
static int helper_log = -1;
static unsigned long *helper_denials; /* shared with the supervisor (MAP_SHARED) */

static int same_as(int fd, const char *name, int follow, const struct stat *want) {
    struct stat st;
    int r = name ? fstatat(fd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) : fstat(fd, &st);
    return r == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* Is the directory parentfd the workspace-relative directory dir ("" for the root)? */
static struct stat helper_root_st; /* the workspace never moves during a run */

static int parent_is(int parentfd, const char *dir, size_t dirlen) {
    struct stat st;
    char buf[4096];
    if (dirlen == 0)
        return same_as(parentfd, NULL, 0, &helper_root_st);
    if (dirlen >= sizeof buf)
        return 0;
    memcpy(buf, dir, dirlen);
    buf[dirlen] = 0;
    return fstatat(helper_root, buf, &st, 0) == 0 && same_as(parentfd, NULL, 0, &st);
}

/* 1: (parentfd, name) is a protected path; 2: a directory on the way to one; 0:
   neither. */
static int classify(int parentfd, const char *name) {
    int result = 0;
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

/* Is the last component of path (trailing slashes aside) a component of a protected
   path? Only then can creating it make a protected path. */
static int protected_name(const char *path) {
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    size_t len = end - start;
    if (len == 0)
        return 1; /* "/" or "": let the slow path decide */
    for (int i = 0; i < helper_n_protected; i++) {
        const char *c = helper_protected[i];
        while (*c) {
            const char *slash = strchr(c, '/');
            size_t n = slash ? (size_t)(slash - c) : strlen(c);
            if (n == len && memcmp(c, path + start, len) == 0)
                return 1;
            if (!slash)
                break;
            c = slash + 1;
        }
    }
    return 0;
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


/* The start of a small /proc file, NUL-terminated; 0 when unreadable. */
static int read_proc(const char *path, char *buf, size_t size) {
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    return n > 0;
}

static unsigned long tty_of(const char *stat_path) {
    char buf[1024];
    if (!read_proc(stat_path, buf, sizeof buf))
        return 0;
    char *p = strrchr(buf, ')');
    /* after ") ": state ppid pgrp session tty_nr */
    unsigned long tty = 0;
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %lu", &tty) != 1)
        tty = 0;
    return tty;
}

/* open("/dev/tty") on behalf of pid: its own controlling terminal (ENXIO without one) */
static int caller_tty(pid_t pid, int flags) {
    char where[64];
    snprintf(where, sizeof where, "/proc/%d/stat", pid);
    unsigned long tty = tty_of(where);
    if (!tty)
        return -ENXIO;
    int fd;
    if (tty == tty_of("/proc/self/stat")) {
        fd = open("/dev/tty", (flags & ~(O_CREAT | O_EXCL)) | O_CLOEXEC);
    } else {
        unsigned int major = (unsigned int)((tty >> 8) & 0xfff);
        unsigned int minor = (unsigned int)((tty & 0xff) | ((tty >> 12) & 0xfff00));
        if (major < 136 || major > 143)
            return -ENXIO; /* not a pseudo-terminal: not reachable from here */
        char pts[64];
        snprintf(pts, sizeof pts, "/dev/pts/%u", (major - 136) * 256 + minor);
        fd = open(pts, (flags & ~(O_CREAT | O_EXCL)) | O_CLOEXEC | O_NOCTTY);
    }
    return fd < 0 ? -errno : fd;
}

/* Can opening this file wait (a FIFO without its other end, a serial line without
   carrier)? Memory devices (null, zero, ...), ttys and pseudo-terminals do not. */
static int may_block(const struct stat *st) {
    if (S_ISFIFO(st->st_mode))
        return 1;
    if (!S_ISCHR(st->st_mode))
        return 0;
    unsigned int major = major(st->st_rdev);
    return !(major == 1 || major == 5 || (major >= 136 && major <= 143));
}

/* One name-creating syscall of the tree, performed by the helper. *fd_out receives the
   opened file of OP_CREATE. Returns 0 or an errno; *denied is set for a protected
   name. */
static int fs_op(int op, int flags, unsigned int mode, unsigned long long dev,
                 const char *p1, const char *p2, int fd1, int fd2, int *fd_out,
                 int *denied) {
    char name1[256], name2[256];
    int slash1 = 0, slash2 = 0, par1 = -1, par2 = -1, r = 0, err = 0;
    const char *n1 = name1; /* the name relative to dir1 */
    int dir1 = -1;          /* par1, or the caller's fd1 when no parent was opened */
    *denied = 0;
    int empty_link = op == OP_LINK && (flags & AT_EMPTY_PATH) && *p1 == 0;
    if ((op == OP_CREATE || op == OP_MKDIR || op == OP_MKNOD) && !protected_name(p1)) {
        /* a last component that no protected path has cannot make one: the kernel
           resolves the whole path for us (trailing slashes included), as for the caller */
        dir1 = fd1;
        n1 = p1;
    } else if (!empty_link && op != OP_SYMLINK) {
        par1 = open_parent(fd1, p1, name1, sizeof name1, &slash1);
        if (par1 < 0)
            return -par1;
        dir1 = par1;
    }
    if (op == OP_LINK || op == OP_RENAME || op == OP_SYMLINK) {
        par2 = open_parent(op == OP_SYMLINK ? fd1 : fd2, op == OP_SYMLINK ? p1 : p2, name2,
                           sizeof name2, &slash2);
        if (par2 < 0) {
            err = -par2;
            goto done;
        }
    }
    switch (op) {
    case OP_CREATE: {
        if (slash1) {
            err = EISDIR;
            break;
        }
        if (par1 >= 0 && classify(par1, name1) == 1) {
            *denied = 1;
            break;
        }
        /* what the name is now, if anything (one lookup for both checks below) */
        struct stat fst;
        int exists = helper_req && fstatat(dir1, n1, &fst, 0) == 0;
        /* /dev/tty is the caller's controlling terminal, not the helper's */
        if (exists && S_ISCHR(fst.st_mode) && fst.st_rdev == makedev(5, 0)) {
            int r = caller_tty((pid_t)helper_req->pid, flags);
            if (r < 0)
                err = -r;
            else
                *fd_out = r;
            break;
        }
        /* an open that may wait (a FIFO for its other end, ...) runs in a child of the
           helper, which answers itself, so the tree's other calls are not held up */
        int in_child = 0;
        if (exists && may_block(&fst)) {
            /* untraced: it is ztsa's, not part of the tree */
            pid_t opener = (pid_t)syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
            if (opener > 0) {
                err = ANSWERED_ERR;
                break;
            }
            in_child = opener == 0; /* fork failed: open here, blocking */
        }
        /* never follow a final symlink while creating: a dangling one could name a
           protected path; an existing target is opened without O_CREAT */
        int fd = openat(dir1, n1, flags | O_NOFOLLOW, mode);
        if (fd < 0 && errno == ELOOP && !(flags & (O_NOFOLLOW | O_EXCL)))
            fd = openat(dir1, n1, flags & ~O_CREAT, mode);
        if (fd < 0)
            err = errno;
        else
            *fd_out = fd;
        if (in_child) {
            static char resp_buf[4096];
            answer(helper_lfd, helper_req, fd < 0 ? -err : 0, fd,
                   (struct seccomp_notif_resp *)resp_buf, helper_resp_size);
            _exit(0);
        }
        break;
    }
    case OP_MKDIR:
    case OP_MKNOD:
        if (par1 >= 0 && classify(par1, name1) == 1) {
            *denied = 1;
            break;
        }
        r = op == OP_MKDIR ? mkdirat(dir1, n1, mode)
                           : mknodat(dir1, n1, mode, (dev_t)dev);
        err = r < 0 ? errno : 0;
        break;
    case OP_SYMLINK:
        if (classify(par2, name2) == 1) {
            *denied = 1;
            break;
        }
        err = symlinkat(p2, par2, name2) < 0 ? errno : 0;
        break;
    case OP_LINK:
        if ((!empty_link && classify(par1, name1) == 1) || classify(par2, name2) == 1) {
            *denied = 1;
            break;
        }
        r = empty_link ? linkat(fd1, "", par2, name2, AT_EMPTY_PATH)
                       : linkat(par1, name1, par2, name2, flags & AT_SYMLINK_FOLLOW);
        err = r < 0 ? errno : 0;
        break;
    case OP_RENAME: {
        int src = classify(par1, name1), dst = classify(par2, name2);
        if (same_as(par1, name1, 0, &helper_root_st))
            src = 2; /* the workspace itself */
        struct stat st;
        int src_dir = fstatat(par1, name1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        /* never move a protected path, a directory on the way to one, or the workspace;
           never move a directory into such a place (it could bring protected names) */
        if (src || dst == 1 || (dst == 2 && (src_dir || (flags & 2 /* EXCHANGE */)))) {
            *denied = 1;
            break;
        }
        r = (int)syscall(SYS_renameat2, par1, name1, par2, name2, (unsigned int)flags);
        err = r < 0 ? errno : 0;
        if (r == 0 && (src_dir || (flags & 2)))
            cover_flush(); /* a directory moved: what lies beneath it may be elsewhere now */
        break;
    }
    default:
        err = ENOSYS;
    }
done:
    if (par1 >= 0)
        close(par1);
    if (par2 >= 0)
        close(par2);
    return err;
}

/* A NUL-terminated string of the tracee, read page by page. 0 or an errno. */
static int read_string(pid_t pid, unsigned long long addr, char *buf, size_t size) {
    size_t got = 0;
    while (got < size) {
        size_t chunk = 4096 - (size_t)((addr + got) % 4096);
        if (chunk > size - got)
            chunk = size - got;
        struct iovec local = {buf + got, chunk};
        struct iovec remote = {(void *)(unsigned long)(addr + got), chunk};
        ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
        if (n <= 0)
            return n < 0 ? errno : EFAULT;
        if (memchr(buf + got, 0, (size_t)n))
            return 0;
        got += (size_t)n;
    }
    return ENAMETOOLONG;
}

static void close_dirfd(int fd) {
    if (fd >= 0 && fd != helper_root)
        close(fd);
}

static int tracee_dirfd(pid_t pid, long long fd, const char *path) {
    if (path[0] == '/')
        return helper_root; /* ignored by the kernel for an absolute path; never closed */
    if ((int)fd == AT_FDCWD) {
        char where[64];
        snprintf(where, sizeof where, "/proc/%d/cwd", pid);
        int r = open(where, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return r < 0 ? -errno : r;
    }
    return ztsa_pidfd_getfd(pid, (int)fd);
}

/* The callers' umasks, read from /proc once per thread and kept for a second. A umask(2)
   of the tree reaches the helper too (it needs no check: its argument is a register):
   the calling thread's entry becomes the new value at once (it cannot make another call
   before its umask(2) has run), and every other entry is dropped, since threads and
   CLONE_FS processes share a umask. For 50 ms after one, values read from /proc for
   other threads are not kept, so a value read while that umask(2) was still under way
   is not kept either. A stale umask could only shape the modes of the tree's own new
   files, never what the tree may reach. */
#define UMASK_SLOTS 4096
struct umask_slot {
    pid_t pid;
    unsigned int mask;
    unsigned long long since, gen;
};
static struct umask_slot umask_cache[UMASK_SLOTS];
static unsigned long long umask_changed, umask_gen = 1;

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static unsigned int tracee_umask_read(pid_t pid);

static unsigned int tracee_umask(pid_t pid) {
    unsigned long long now = now_ns();
    struct umask_slot *slot = &umask_cache[(unsigned int)pid % UMASK_SLOTS];
    if (slot->pid == pid && now - slot->since < 1000000000ULL && slot->gen == umask_gen)
        return slot->mask;
    unsigned int mask = tracee_umask_read(pid);
    if (now - umask_changed > 50000000ULL) {
        slot->pid = pid;
        slot->mask = mask;
        slot->since = now;
        slot->gen = umask_gen;
    }
    return mask;
}

/* The helper's own umask becomes the caller's (umask(2) only when it changes). */
static void use_umask_of(pid_t pid) {
    static int now = -1;
    int want = (int)tracee_umask(pid);
    if (want != now)
        umask((mode_t)(now = want));
}

static unsigned int tracee_umask_read(pid_t pid) {
    char where[64], buf[2048];
    snprintf(where, sizeof where, "/proc/%d/status", pid);
    if (!read_proc(where, buf, sizeof buf))
        return 022;
    char *line = strstr(buf, "\nUmask:");
    return line ? (unsigned int)strtoul(line + 7, NULL, 8) & 0777 : 022;
}

/* JSON string body: quotes, backslashes and control bytes escaped; bytes of invalid
   UTF-8 as \u00XX. */
static size_t json_escape(const char *in, char *out, size_t size) {
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)in;
    while (*s && o + 8 < size) {
        unsigned char c = *s;
        int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int ok = len > 1;
        for (int i = 1; ok && i < len; i++)
            ok = (s[i] & 0xC0) == 0x80;
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
            s++;
        } else if (c < 0x20 || (c >= 0x80 && !ok)) {
            o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
            s++;
        } else {
            memcpy(out + o, s, (size_t)len);
            o += (size_t)len;
            s += len;
        }
    }
    out[o] = 0;
    return o;
}

static void log_denial(pid_t pid, const char *syscall_name, const char *p1, const char *p2) {
    __atomic_fetch_add(helper_denials, 1, __ATOMIC_RELAXED);
    if (helper_log < 0)
        return;
    static char e1[4 * 4096 * 2], e2[4 * 4096 * 2], line[sizeof e1 + sizeof e2 + 512];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_escape(p1, e1, sizeof e1);
    json_escape(p2, e2, sizeof e2);
    int n = snprintf(line, sizeof line,
                     "{\"schema\":\"ztsa.audit/v1\",\"time\":%lld.%06ld,\"event\":\"deny\","
                     "\"pid\":%d,\"syscall\":\"%s\",\"path\":\"%s%s%s\","
                     "\"rule\":\"protected agent file\"}\n",
                     (long long)ts.tv_sec, ts.tv_nsec / 1000, pid, syscall_name, e1,
                     *p2 ? " -> " : "", e2);
    if (n > 0) {
        ssize_t ignored = write(helper_log, line, (size_t)n < sizeof line ? (size_t)n
                                                                          : sizeof line - 1);
        (void)ignored;
    }
}

struct fs_call {
    int nr;
    const char *name;
    int op;
    int dirfd1, path1, dirfd2, path2; /* argument indexes, -1: none (AT_FDCWD) */
    int flags, mode;
};

static const struct fs_call FS_CALLS[] = {
    {2, "open", OP_CREATE, -1, 0, -1, -1, 1, 2},
    {85, "creat", OP_CREATE, -1, 0, -1, -1, -1, 1},
    {257, "openat", OP_CREATE, 0, 1, -1, -1, 2, 3},
    {83, "mkdir", OP_MKDIR, -1, 0, -1, -1, -1, 1},
    {258, "mkdirat", OP_MKDIR, 0, 1, -1, -1, -1, 2},
    {133, "mknod", OP_MKNOD, -1, 0, -1, -1, -1, 1},
    {259, "mknodat", OP_MKNOD, 0, 1, -1, -1, -1, 2},
    {88, "symlink", OP_SYMLINK, -1, 1, -1, -1, -1, -1},
    {266, "symlinkat", OP_SYMLINK, 1, 2, -1, -1, -1, -1},
    {86, "link", OP_LINK, -1, 0, -1, 1, -1, -1},
    {265, "linkat", OP_LINK, 0, 1, 2, 3, 4, -1},
    {82, "rename", OP_RENAME, -1, 0, -1, 1, -1, -1},
    {264, "renameat", OP_RENAME, 0, 1, 2, 3, -1, -1},
    {316, "renameat2", OP_RENAME, 0, 1, 2, 3, 4, -1},
};

/* The caller's names for its own descriptors (/dev/stdout, /dev/fd/N, /proc/self/...)
   would mean the helper's here: rewritten to /proc/PID/... of the caller. */
static void own_proc_paths(pid_t pid, char *path, size_t size) {
    static const struct { const char *from; const char *to; } map[] = {
        {"/dev/stdin", "fd/0"}, {"/dev/stdout", "fd/1"}, {"/dev/stderr", "fd/2"},
        {"/dev/fd/", "fd/"}, {"/proc/self/", ""}, {"/proc/thread-self/", ""},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t n = strlen(map[i].from);
        int exact = map[i].from[n - 1] != '/';
        if (strncmp(path, map[i].from, n) != 0 || (exact && path[n] != 0))
            continue;
        char out[4200];
        int k = snprintf(out, sizeof out, "/proc/%d/%s%s", pid, map[i].to, path + n);
        if (k > 0 && (size_t)k < size)
            memcpy(path, out, (size_t)k + 1);
        return;
    }
}

/* ---- connects answered by the helper (the fast mode: no audit log, no wildcards) ---- */

static int fast_allowed(int version, const unsigned char *a, int port);

/* An IPv4 or IPv6 sockaddr (an IPv4-mapped IPv6 address decided as IPv4) against the
   static rules: 1 allowed, 0 denied, -1 not an IPv4/IPv6 address. */
static int inet_allowed(const unsigned char *sa, unsigned int len) {
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    unsigned short family = 0xffff;
    if (len >= 2)
        memcpy(&family, sa, 2);
    int port = len >= 4 ? (sa[2] << 8) | sa[3] : 0;
    if (family == AF_INET && len >= 8)
        return fast_allowed(4, sa + 4, port);
    if (family == AF_INET6 && len >= 24)
        return memcmp(sa + 8, mapped, 12) == 0 ? fast_allowed(4, sa + 20, port)
                                               : fast_allowed(6, sa + 8, port);
    return -1;
}
static char **net_unix;        /* --allow-unix entries ("@name" for abstract sockets) */
static int n_net_unix;
static char *net_workspace;    /* the workspace, resolved */
static unsigned long *helper_connects; /* shared with the supervisor (MAP_SHARED) */

static void free_list(char **list, int n) {
    for (int i = 0; i < n; i++)
        free(list[i]);
    free(list);
}

static char **copy_list(const char *const *in, int n) {
    char **out = calloc((size_t)(n ? n : 1), sizeof *out);
    for (int i = 0; out && i < n; i++)
        if (!(out[i] = strdup(in[i]))) {
            free_list(out, i);
            return NULL;
        }
    return out;
}

int ztsa_net_set_unix(const char *const *entries, int n, const char *workspace) {
    if (net_unix)
        free_list(net_unix, n_net_unix);
    free(net_workspace);
    n_net_unix = 0;
    net_unix = copy_list(entries, n);
    net_workspace = strdup(workspace);
    if (!net_unix || !net_workspace)
        return -ENOMEM;
    n_net_unix = n;
    return 0;
}

/* ---- creations the kernel confines by itself (CMD's second Landlock ruleset) ----

   CMD (and so the whole tree) gets a second ruleset on top of the first: the MAKE_*
   rights (creating any kind of name) only beneath cont_make: the writable roots outside
   the workspace and, inside it, the directories that existed at spawn below each
   "chain" directory (the workspace root and the directories on the way to a protected
   path, e.g. .github and .git). No name at all can be made by the tree itself in a
   chain directory, so no protected name can be, whatever a racing thread writes into a
   path after the helper read it. The helper still performs the creations it must
   (every mkdir, link, rename and symlink, and opens in chain directories); without an
   audit log (cont_mode) an O_CREAT open elsewhere is let through to the kernel
   (SECCOMP_USER_NOTIF_FLAG_CONTINUE) instead of being performed by the helper and its
   file sent back with ADDFD, whose reply wakes the caller on another CPU (20-30 us on
   these VMs). The helper's choice only decides speed: a wrong "covered" would give
   the caller EACCES, never a name the rules forbid. */
static char **cont_make;  /* absolute paths: the MAKE_* rules of CMD's own ruleset */
static int n_cont_make = -1; /* -1: no second ruleset */
static char **cont_chain; /* workspace-relative chain directories; "" is the root */
static int n_cont_chain;
static struct stat *cont_ids; /* the helper's view of cont_make (same files as CMD's rules) */
static int n_cont_ids;
static char **cont_closed; /* absolute: outside the workspace, no name made by the tree */
static int n_cont_closed;

int ztsa_fs_set_creation(const char *const *make, int n_make, const char *const *chain,
                         int n_chain, const char *const *closed, int n_closed, int cont) {
    if (cont_make)
        free_list(cont_make, n_cont_make);
    if (cont_chain)
        free_list(cont_chain, n_cont_chain);
    if (cont_closed)
        free_list(cont_closed, n_cont_closed);
    cont_make = NULL;
    cont_chain = NULL;
    cont_closed = NULL;
    n_cont_make = -1;
    n_cont_chain = 0;
    n_cont_closed = 0;
    cont_mode = 0;
    if (n_make < 0)
        return 0;
    if (!(cont_make = copy_list(make, n_make)) || !(cont_chain = copy_list(chain, n_chain)) ||
        !(cont_closed = copy_list(closed, n_closed)))
        return -ENOMEM;
    n_cont_make = n_make;
    n_cont_chain = n_chain;
    n_cont_closed = n_closed;
    cont_mode = cont;
    return 0;
}

static int is_chain(const char *rel, size_t len) {
    for (int i = 0; i < n_cont_chain; i++)
        if (strlen(cont_chain[i]) == len && memcmp(cont_chain[i], rel, len) == 0)
            return 1;
    return 0;
}

/* Is path (relative to at, not followed) one of the directories of CMD's make rules? */
static int has_make_rule(int at, const char *path) {
    struct stat st;
    if (fstatat(at, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return 0;
    for (int i = 0; i < n_cont_ids; i++)
        if (cont_ids[i].st_dev == st.st_dev && cont_ids[i].st_ino == st.st_ino)
            return 1;
    return 0;
}

/* Does CMD's ruleset let the tree make names in this directory (opened O_PATH)? Outside
   the workspace the second ruleset grants what the first does, except in the directories
   on the way to the workspace from a writable root that contains it (cont_closed);
   inside, only beneath a directory that was a non-chain entry of a chain directory at
   spawn. */
static int make_allowed_in(int dirfd) {
    char link[64], real[4097], ws[4097];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, real, sizeof real - 1);
    snprintf(link, sizeof link, "/proc/self/fd/%d", helper_root);
    ssize_t w = readlink(link, ws, sizeof ws - 1);
    if (n <= 0 || w <= 0)
        return 0;
    real[n] = 0;
    ws[w] = 0;
    if (strcmp(ws, "/") == 0)
        w = 0; /* a workspace of "/": everything is inside it */
    if (strncmp(real, ws, (size_t)w) != 0 || (real[w] != '/' && real[w] != 0)) {
        /* outside the workspace: below the deepest directory on the way to it, names
           are made beneath the entries that existed there at spawn only */
        size_t deepest = 0;
        int below = 0;
        for (int i = 0; i < n_cont_closed; i++) {
            size_t c = strlen(cont_closed[i]);
            size_t cut = strcmp(cont_closed[i], "/") == 0 ? 0 : c;
            if (strncmp(real, cont_closed[i], c) != 0)
                continue;
            if (real[c] == 0)
                return 0; /* a directory on the way itself */
            if (real[cut] == '/' && (!below || cut >= deepest)) {
                deepest = cut;
                below = 1;
            }
        }
        if (!below)
            return 1; /* beneath a writable root of its own */
        const char *slash = strchr(real + deepest + 1, '/');
        char entry[4097];
        size_t end = slash ? (size_t)(slash - real) : strlen(real);
        memcpy(entry, real, end);
        entry[end] = 0;
        return has_make_rule(AT_FDCWD, entry);
    }
    const char *rel = real[w] == '/' ? real + w + 1 : real + w;
    size_t at = 0, len = strlen(rel);
    for (;;) {
        if (at >= len)
            return 0; /* a chain directory itself */
        const char *slash = strchr(rel + at, '/');
        size_t end = slash ? (size_t)(slash - rel) : len;
        if (!is_chain(rel, end)) {
            char cand[4097];
            memcpy(cand, rel, end);
            cand[end] = 0;
            return has_make_rule(helper_root, cand);
        }
        at = end + 1;
    }
}

/* The helper's verdicts per directory, keyed by its file handle (inode and generation:
   a reused inode number is another key); forgotten when the helper moves a directory. */
#define COVER_SLOTS 2048
#define COVER_HANDLE 40
struct cover_slot {
    int used, verdict, mount_id;
    unsigned int type, bytes;
    unsigned char h[COVER_HANDLE];
};
static struct cover_slot cover_cache[COVER_SLOTS];
static int cover_count;

static void cover_flush(void) {
    memset(cover_cache, 0, sizeof cover_cache);
    cover_count = 0;
}

static struct cover_slot *cover_find(int mount_id, const struct file_handle *fh, int *hit) {
    unsigned long long hsh = 1469598103934665603ULL ^ (unsigned int)mount_id ^
                             ((unsigned long long)fh->handle_type << 32);
    for (unsigned int i = 0; i < fh->handle_bytes; i++)
        hsh = (hsh ^ fh->f_handle[i]) * 1099511628211ULL;
    for (unsigned int k = 0; k < COVER_SLOTS; k++) {
        struct cover_slot *s = &cover_cache[(hsh + k) % COVER_SLOTS];
        if (!s->used) {
            *hit = 0;
            return s;
        }
        if (s->mount_id == mount_id && s->type == (unsigned int)fh->handle_type &&
            s->bytes == fh->handle_bytes && memcmp(s->h, fh->f_handle, fh->handle_bytes) == 0) {
            *hit = 1;
            return s;
        }
    }
    *hit = 0;
    return NULL;
}

/* Would CMD's second ruleset let the tree make this path's name itself (its directory
   lies where names may be made), or does the name exist? Decides only who performs a
   creation, never whether it is allowed. */
static int made_in_caller(pid_t pid, long long dirfd, const char *path) {
    size_t n = strlen(path);
    if (n == 0 || path[n - 1] == '/')
        return 0;
    char full[4200], dir[4200];
    if (path[0] == '/')
        snprintf(full, sizeof full, "%s", path);
    else if ((int)dirfd == AT_FDCWD)
        snprintf(full, sizeof full, "/proc/%d/cwd/%s", pid, path);
    else
        snprintf(full, sizeof full, "/proc/%d/fd/%d/%s", pid, (int)dirfd, path);
    size_t cut = (size_t)(strrchr(full, '/') - full);
    memcpy(dir, full, cut);
    dir[cut ? cut : 1] = 0;
    if (cut == 0)
        dir[0] = '/';
    union {
        struct file_handle fh;
        char buf[sizeof(struct file_handle) + COVER_HANDLE];
    } u;
    u.fh.handle_bytes = COVER_HANDLE;
    int mount_id, hit = 0, verdict = -1;
    if (name_to_handle_at(AT_FDCWD, dir, &u.fh, &mount_id, AT_SYMLINK_FOLLOW) == 0) {
        struct cover_slot *slot = cover_find(mount_id, &u.fh, &hit);
        if (hit)
            verdict = slot->verdict;
    }
    if (verdict < 0) {
        /* decided on the directory opened, and kept under that directory's own handle:
           a path that a racing thread swaps meanwhile cannot file a verdict elsewhere */
        int fd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        verdict = fd >= 0 && make_allowed_in(fd);
        u.fh.handle_bytes = COVER_HANDLE;
        if (fd >= 0 && name_to_handle_at(fd, "", &u.fh, &mount_id, AT_EMPTY_PATH) == 0) {
            if (cover_count >= COVER_SLOTS / 2)
                cover_flush();
            struct cover_slot *slot = cover_find(mount_id, &u.fh, &hit);
            if (slot && !hit) {
                slot->used = 1;
                slot->verdict = verdict;
                slot->mount_id = mount_id;
                slot->type = (unsigned int)u.fh.handle_type;
                slot->bytes = u.fh.handle_bytes;
                memcpy(slot->h, u.fh.f_handle, u.fh.handle_bytes);
                cover_count++;
            }
        }
        if (fd >= 0)
            close(fd);
    }
    struct stat st;
    return verdict || stat(full, &st) == 0;
}

/* An O_CREAT open the caller may perform itself (1), or one for the helper (0): its
   last name is none a protected path has, and the kernel would let the tree make a
   name in its directory, or the name exists (opening it makes none). */
static int create_in_caller(pid_t pid, long long dirfd, const char *path) {
    return cont_mode && !protected_name(path) && made_in_caller(pid, dirfd, path);
}

static void log_denial(pid_t pid, const char *syscall_name, const char *p1, const char *p2);
static int tracee_dirfd(pid_t pid, long long fd, const char *path);
static void close_dirfd(int fd);

/* bind(2) of a Unix socket to a path makes a name without any other syscall the filter
   sees. Where the second ruleset lets the tree make names, the kernel binds for the
   caller; in a chain directory (where it would refuse), and everywhere without a second
   ruleset or with a log, the helper refuses a protected name and binds the others
   itself, on a duplicate of the caller's socket, from its own copy of the address.
   Other families, abstract names and autobind name nothing. */
static long bind_notification(int lfd, const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    unsigned int len = (unsigned int)req->data.args[2];
    struct sockaddr_un sa;
    size_t head = offsetof(struct sockaddr_un, sun_path);
    if (len <= head || len > sizeof sa)
        return 1; /* no path: the kernel answers (EINVAL for a bad length) */
    memset(&sa, 0, sizeof sa);
    struct iovec local = {&sa, len};
    struct iovec remote = {(void *)(unsigned long)req->data.args[1], len};
    if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
        return 1; /* the kernel reads it again and answers EFAULT */
    if (sa.sun_family != AF_UNIX || sa.sun_path[0] == 0)
        return 1;
    char path[sizeof sa.sun_path + 1];
    size_t plen = strnlen(sa.sun_path, len - head);
    memcpy(path, sa.sun_path, plen);
    path[plen] = 0;
    if (create_in_caller(pid, AT_FDCWD, path))
        return 1;
    int fd1 = tracee_dirfd(pid, AT_FDCWD, path);
    if (fd1 < 0)
        return fd1;
    int sock = ztsa_pidfd_getfd(pid, (int)(unsigned int)req->data.args[0]);
    unsigned long long id = req->id;
    if (sock < 0 || ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
        close_dirfd(fd1);
        if (sock >= 0)
            close(sock);
        return sock < 0 ? sock : -ESRCH; /* not a socket: bind(2) below would say so */
    }
    char name[256];
    int slash = 0;
    int par = open_parent(fd1, path, name, sizeof name, &slash);
    close_dirfd(fd1);
    long result;
    if (par < 0) {
        result = par;
    } else if (slash) {
        result = -ENOENT; /* as the kernel answers a socket path with a trailing slash */
    } else if (classify(par, name) == 1) {
        log_denial(pid, "bind", path, "");
        result = -EACCES;
    } else {
        use_umask_of(pid);
        struct sockaddr_un mine = {AF_UNIX, {0}};
        snprintf(mine.sun_path, sizeof mine.sun_path, "%s", name);
        /* the helper's cwd is its own: bound by name in the parent it opened */
        long r = fchdir(par) == 0 ? bind(sock, (struct sockaddr *)&mine, sizeof mine) : -1;
        result = r < 0 ? -errno : 0;
        if (fchdir(helper_root) < 0)
            _exit(1);
    }
    if (par >= 0)
        close(par);
    close(sock);
    return result;
}

static int unix_listed(const char *name, size_t len) {
    for (int i = 0; i < n_net_unix; i++)
        if (strlen(net_unix[i]) == len && memcmp(net_unix[i], name, len) == 0)
            return 1;
    return 0;
}

/* A connect, decided exactly as the tracer's Python path decides it (Policy.decide and
   decide_unix) and performed here on a duplicate of the caller's socket, from the
   helper's own copy of the address: nothing the tree rewrites afterwards reaches the
   kernel. Answers the result; denials are counted for the summary. */
static long net_notification(int lfd, const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    int fd = (int)(unsigned int)req->data.args[0];
    unsigned int len = (unsigned int)req->data.args[2];
    unsigned char sa[128];
    char target[128];
    if (len > sizeof sa)
        return -EINVAL;
    if (len) {
        struct iovec local = {sa, len};
        struct iovec remote = {(void *)(unsigned long)req->data.args[1], len};
        if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
            return -EFAULT;
    }
    int dup = ztsa_pidfd_getfd(pid, fd);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    unsigned long long id = req->id;
    if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
        close(dup);
        return -ESRCH;
    }
    unsigned short family = 0xffff;
    if (len >= 2)
        memcpy(&family, sa, 2);
    const void *addr = sa;
    unsigned int addrlen = len;
    int allowed = inet_allowed(sa, len), pathfd = -1;
    long result;
    if (allowed < 0 && family == AF_UNIX) {
        const char *path = (const char *)sa + 2;
        size_t plen = len - 2;
        if (plen && path[0] == 0) { /* abstract: only a name --allow-unix gives */
            char name[130];
            name[0] = '@';
            memcpy(name + 1, path + 1, plen - 1);
            allowed = unix_listed(name, plen);
        } else {
            size_t n = strnlen(path, plen);
            if (n == 0) {
                close(dup);
                return -EINVAL; /* an unnamed address: as the tracer answers it */
            }
            /* resolved once, as the caller's connect would resolve it; the decision is
               on where it really is, and the connect goes through /proc/self/fd/N,
               which names that same file */
            char where[200];
            if (path[0] == '/')
                snprintf(where, sizeof where, "%.*s", (int)n, path);
            else
                snprintf(where, sizeof where, "/proc/%d/cwd/%.*s", pid, (int)n, path);
            pathfd = open(where, O_PATH | O_CLOEXEC);
            if (pathfd < 0) {
                int e = errno;
                close(dup);
                return -e; /* no such socket: the caller's connect fails the same way */
            }
            char link[64], real[4097];
            snprintf(link, sizeof link, "/proc/self/fd/%d", pathfd);
            ssize_t r = readlink(link, real, sizeof real - 1);
            if (r > 0) {
                real[r] = 0;
                size_t w = strlen(net_workspace);
                allowed = unix_listed(real, (size_t)r) ||
                          strcmp(real, net_workspace) == 0 ||
                          (strncmp(real, net_workspace, w) == 0 && real[w] == '/');
            }
            struct sockaddr_un *un = (struct sockaddr_un *)target;
            memset(un, 0, sizeof *un);
            un->sun_family = AF_UNIX;
            int k = snprintf(un->sun_path, sizeof un->sun_path, "/proc/self/fd/%d", pathfd);
            addr = un;
            addrlen = (unsigned int)(offsetof(struct sockaddr_un, sun_path) + (size_t)k + 1);
        }
    } else if (allowed < 0) {
        allowed = family == AF_UNSPEC && len >= 2; /* a disconnect; other families: no */
    }
    if (allowed) {
        long r = syscall(SYS_connect, dup, addr, addrlen);
        result = r < 0 ? -errno : r;
    } else {
        result = -EPERM;
        if (helper_denials)
            __atomic_fetch_add(helper_denials, 1, __ATOMIC_RELAXED);
    }
    if (helper_connects)
        __atomic_fetch_add(helper_connects, 1, __ATOMIC_RELAXED);
    if (pathfd >= 0)
        close(pathfd);
    close(dup);
    return result;
}

/* Answer one notification: 0, or -errno for the tracee, with *fd_out set for an open;
   1: let the kernel run the call (umask, and opens create_in_caller lets through). */
static long fs_notification(int lfd, const struct seccomp_notif *req, int *fd_out) {
    static char p1[4097], p2[4097];
    if (req->data.nr == 42) /* connect, when the filter sends it here */
        return net_notification(lfd, req);
    if (req->data.nr == 49)
        return bind_notification(lfd, req);
    if (req->data.nr == 95) { /* umask: noted, then run by the kernel as asked */
        umask_changed = now_ns();
        umask_gen++;
        struct umask_slot *slot = &umask_cache[(unsigned int)req->pid % UMASK_SLOTS];
        slot->pid = (pid_t)req->pid;
        slot->mask = (unsigned int)req->data.args[0] & 0777;
        slot->since = umask_changed;
        slot->gen = umask_gen;
        return 1;
    }
    const struct fs_call *call = NULL;
    for (size_t i = 0; i < sizeof FS_CALLS / sizeof FS_CALLS[0]; i++)
        if (FS_CALLS[i].nr == req->data.nr)
            call = &FS_CALLS[i];
    if (!call)
        return -ENOSYS;
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    int flags = call->flags >= 0 ? (int)a[call->flags] : 0;
    if (call->nr == 85)
        flags = O_CREAT | O_WRONLY | O_TRUNC;
    unsigned int mode = call->mode >= 0 ? (unsigned int)a[call->mode] : 0;
    int err = read_string(pid, a[call->path1], p1, sizeof p1);
    if (!err && call->path2 >= 0)
        err = read_string(pid, a[call->path2], p2, sizeof p2);
    if (!err && call->op == OP_SYMLINK)
        err = read_string(pid, a[0], p2, sizeof p2); /* the link's target */
    if (err)
        return -err;
    if (call->path2 < 0 && call->op != OP_SYMLINK)
        p2[0] = 0;
    if (call->op == OP_CREATE &&
        create_in_caller(pid, call->dirfd1 >= 0 ? (long long)a[call->dirfd1] : AT_FDCWD, p1))
        return 1; /* the kernel performs it, as the caller's ruleset allows */
    if (call->op == OP_CREATE)
        own_proc_paths(pid, p1, sizeof p1);
    int empty_ok = call->op == OP_LINK && (flags & AT_EMPTY_PATH);
    if ((!p1[0] && !empty_ok) || (call->path2 >= 0 && !p2[0]))
        return -ENOENT;
    int fd1 = tracee_dirfd(pid, call->dirfd1 >= 0 ? (long long)a[call->dirfd1] : AT_FDCWD,
                           p1);
    if (fd1 < 0)
        return fd1;
    int fd2 = -1;
    if (call->path2 >= 0) {
        fd2 = tracee_dirfd(pid, call->dirfd2 >= 0 ? (long long)a[call->dirfd2] : AT_FDCWD, p2);
        if (fd2 < 0) {
            close_dirfd(fd1);
            return fd2;
        }
    }
    /* the paths and descriptors are ours now; is the request still the one we read? */
    unsigned long long id = req->id;
    if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
        close_dirfd(fd1);
        close_dirfd(fd2);
        return -ESRCH;
    }
    use_umask_of(pid);
    int denied = 0;
    unsigned long long dev = call->nr == 133 ? a[2] : call->nr == 259 ? a[3] : 0;
    err = fs_op(call->op, flags, mode, dev, p1, p2, fd1, fd2 >= 0 ? fd2 : fd1, fd_out,
                &denied);
    close_dirfd(fd1);
    close_dirfd(fd2);
    if (err == ANSWERED_ERR)
        return ANSWERED;
    if (denied) {
        log_denial(pid, call->name, p1, call->op == OP_SYMLINK ? "" : p2);
        return -EACCES;
    }
    return -err;
}

/* Reply to a notification: with the opened file (ADDFD, returned as the syscall's
   result), with an error or 0, or by letting the kernel run the call (result 1). */
static void answer(int lfd, const struct seccomp_notif *req, long result, int fd,
                   struct seccomp_notif_resp *resp, size_t resp_size) {
    if (fd >= 0) {
        struct seccomp_notif_addfd add;
        memset(&add, 0, sizeof add);
        add.id = req->id;
        add.flags = SECCOMP_ADDFD_FLAG_SEND;
        add.srcfd = (unsigned int)fd;
        add.newfd_flags = req->data.nr == 85 ? 0 : (unsigned int)(
            req->data.args[req->data.nr == 257 ? 2 : 1] & O_CLOEXEC);
        int r = ioctl(lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
        close(fd);
        if (r >= 0 || errno == ENOENT)
            return;
        result = -errno;
    }
    memset(resp, 0, resp_size);
    resp->id = req->id;
    resp->val = 0;
    resp->error = result == 1 ? 0 : (int)result;
    if (result == 1)
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

/* The helper's loop: it leaves when no process uses the filter any more. */
static void fs_helper(int lfd) {
    struct seccomp_notif_sizes sizes;
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
        _exit(1);
    size_t req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif)
                          ? sizes.seccomp_notif : sizeof(struct seccomp_notif);
    size_t resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
                           ? sizes.seccomp_notif_resp : sizeof(struct seccomp_notif_resp);
    static char req_buf[4096], resp_buf[4096];
    if (req_size > sizeof req_buf || resp_size > sizeof resp_buf)
        _exit(1);
    struct seccomp_notif *req = (struct seccomp_notif *)req_buf;
    /* Linux 6.6+: the caller and the helper switch on one CPU instead of waking each
       other across CPUs (an interprocessor interrupt per syscall); older: ignored */
    int sync = ioctl(lfd, ZTSA_NOTIF_SET_FLAGS,
                     (unsigned long long)ZTSA_NOTIF_SYNC_WAKE_UP) == 0;
    struct seccomp_notif_resp *resp = (struct seccomp_notif_resp *)resp_buf;
    for (;;) {
        /* Linux 6.6+ (the kernels with SYNC_WAKE_UP): RECV itself waits, and returns
           (ENOENT) once no process uses the filter; a poll before each RECV would be
           one more syscall per notification. Older: poll for POLLHUP first. */
        struct pollfd pfd = {lfd, POLLIN, 0};
        if (!sync && poll(&pfd, 1, -1) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        if (!sync && !(pfd.revents & POLLIN))
            _exit(0); /* POLLHUP: the tree is gone */
        memset(req, 0, req_size);
        if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
            if (sync && errno != EINTR && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))
                _exit(0);
            continue; /* EINTR, or the caller died (ENOENT) */
        }
        int fd = -1;
        helper_lfd = lfd;
        helper_req = req;
        helper_resp_size = resp_size;
        long result = fs_notification(lfd, req, &fd);
        if (result != ANSWERED)
            answer(lfd, req, result, fd, resp, resp_size);
    }
}

static unsigned long *shared_denials;

unsigned long ztsa_fs_denials(void) {
    return shared_denials ? __atomic_load_n(shared_denials, __ATOMIC_RELAXED) : 0;
}

unsigned long ztsa_helper_connects(void) {
    return shared_denials ? __atomic_load_n(shared_denials + 1, __ATOMIC_RELAXED) : 0;
}

int ztsa_userns_probe(void) {
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) /* what the child will do, without mounts (AppArmor may allow the
                     namespace but deny what comes after) */
        _exit(protect_mounts(1, NULL, 0) < 0 ? 1 : 0);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
}

/* what failed in the child, in the high bits of what it writes on the error pipe */
enum { STEP_EXEC = 0, STEP_NAMESPACES, STEP_CHDIR, STEP_CAPS, STEP_NNP, STEP_LANDLOCK,
       STEP_HELPER, STEP_FILTER };

/* Close every fd from 3 up but those in keep and more (-1 entries ignored): the gaps
   between them a range at a time (one close_range each instead of one close per
   number: about a thousand calls, a millisecond, in the helper). */
static void close_all_but(const int *keep, int n, const int *more, int n_more) {
    int lo = 3;
    for (;;) {
        int next = -1; /* the lowest fd kept at or above lo */
        for (int i = 0; i < n + n_more; i++) {
            int fd = i < n ? keep[i] : more[i - n];
            if (fd >= lo && (next < 0 || fd < next))
                next = fd;
        }
        unsigned int last = next < 0 ? ~0U : (unsigned int)next - 1;
        if (next != lo && syscall(SYS_close_range, (unsigned int)lo, last, 0) < 0) {
            /* before Linux 5.9: one by one, as far as 1024 */
            for (int fd = lo; fd <= (next < 0 ? 1023 : next - 1); fd++)
                close(fd);
        }
        if (next < 0)
            break;
        lo = next + 1;
    }
}

static void child_fail_at(int err_fd, int step, int err) {
    /* async-signal-safe: write the step and errno and leave */
    int code = (step << 16) | (err & 0xFFFF);
    ssize_t ignored = write(err_fd, &code, sizeof code);
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
               int ns_mode, const char *const *ro_paths, int n_ro, int protect, int log_fd,
               const char *workspace, const char *const *protected_paths, int n_protected,
               int *sync_fd, int *err_fd) {
    int sync_pipe[2], err_pipe[2];
    if (protect && !shared_denials) {
        void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -errno;
        shared_denials = m;
    }
    if (shared_denials)
        shared_denials[0] = shared_denials[1] = 0; /* denials, connects */
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
        int keep_here[2] = {efd, protect ? log_fd : -1};
        close_all_but(keep_here, 2, keep_fds, n_keep_fds);
        for (int i = 0; i < n_keep_fds; i++) {
            int flags = fcntl(keep_fds[i], F_GETFD);
            if (flags >= 0)
                fcntl(keep_fds[i], F_SETFD, flags & ~FD_CLOEXEC);
        }
        if (ns_mode) {
            int r = protect_mounts(ns_mode == 2, ro_paths, n_ro);
            if (r < 0)
                child_fail_at(efd, STEP_NAMESPACES, -r);
        }
        if (cwd && chdir(cwd) < 0)
            child_fail_at(efd, STEP_CHDIR, errno);
        if (drop_caps || ns_mode == 2) {
            int r = drop_capabilities(keep_caps);
            if (r < 0)
                child_fail_at(efd, STEP_CAPS, -r);
        }
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
            child_fail_at(efd, STEP_NNP, errno);
        if (handled_fs) {
            int r = apply_landlock(write_paths, write_rights, n_write_paths, handled_fs);
            if (r < 0)
                child_fail_at(efd, STEP_LANDLOCK, -r);
        }
        struct sock_fprog prog = {filter_len, (struct sock_filter *)filter};
        if (!protect) {
            if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
                child_fail_at(efd, STEP_FILTER, errno);
            execve(path, argv, envp);
            child_fail_at(efd, STEP_EXEC, errno);
        }
        /* This process stays as the file helper, CMD's parent (an ancestor of the whole
           tree, so it may read the tree's memory even under Yama); CMD installs the
           filter, whose listener it hands back, and execs. */
        int root = open(workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int pair[2];
        if (root < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
            child_fail_at(efd, STEP_HELPER, errno);
        /* the directories of CMD's second ruleset, opened once for both: CMD's rules and
           the helper's idea of them are the same files */
        int *make_fds = NULL;
        if ((handled_fs & ZTSA_LL_MAKE) != ZTSA_LL_MAKE)
            n_cont_make = -1; /* no Landlock to build it on */
        if (n_cont_make >= 0) {
            make_fds = calloc((size_t)(n_cont_make ? n_cont_make : 1), sizeof *make_fds);
            if (!make_fds)
                child_fail_at(efd, STEP_HELPER, ENOMEM);
            for (int i = 0; i < n_cont_make; i++)
                make_fds[i] = open(cont_make[i],
                                   O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        pid_t cmd = fork();
        if (cmd < 0)
            child_fail_at(efd, STEP_HELPER, errno);
        if (cmd == 0) {
            close(pair[0]);
            close(root);
            if (log_fd >= 0)
                close(log_fd);
            if (make_fds) {
                int r = restrict_beneath(handled_fs & ZTSA_LL_MAKE, make_fds, NULL, n_cont_make);
                if (r < 0)
                    child_fail_at(efd, STEP_LANDLOCK, -r);
            }
            /* WAIT_KILLABLE_RECV (Linux 5.19+): once the helper has taken a call, only a
               fatal signal interrupts the wait, so a call the helper performed is never
               restarted and performed twice (a second mkdir would say EEXIST) */
            int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                   SECCOMP_FILTER_FLAG_NEW_LISTENER | ZTSA_WAIT_KILLABLE_RECV,
                                   &prog);
            if (lfd < 0 && errno == EINVAL)
                lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                                   SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
            if (lfd < 0)
                child_fail_at(efd, STEP_FILTER, errno);
            /* the filter is on: sendmsg would stop in the tracer, so say the number and
               let the helper take the listener (pidfd_getfd), then exec */
            char ack;
            if (write(pair[1], &lfd, sizeof lfd) != sizeof lfd || read(pair[1], &ack, 1) != 1)
                child_fail_at(efd, STEP_HELPER, EPIPE);
            close(lfd);
            close(pair[1]);
            execve(path, argv, envp);
            child_fail_at(efd, STEP_EXEC, errno);
        }
        close(pair[1]);
        close(efd);
        /* nothing in the tree may take the listener (pidfd_getfd) or read or write the
           helper through /proc: only an attached tracer (ztsa) keeps its access */
        if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
            kill(cmd, SIGKILL);
            _exit(127);
        }
        /* CMD's exit reaches the tracer first, then is reaped here automatically; the
           signals that ztsa forwards to the tree must not end the helper */
        signal(SIGCHLD, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
        signal(SIGPIPE, SIG_IGN);
        int lfd = -1, theirs = -1;
        if (read(pair[0], &theirs, sizeof theirs) == sizeof theirs) {
            lfd = ztsa_pidfd_getfd(cmd, theirs);
        }
        if (lfd < 0) {
            kill(cmd, SIGKILL); /* no helper, no CMD: its creations could not be checked */
            _exit(127);
        }
        ssize_t sent = write(pair[0], "k", 1);
        (void)sent;
        close(pair[0]);
        if (make_fds) {
            cont_ids = calloc((size_t)(n_cont_make ? n_cont_make : 1), sizeof *cont_ids);
            if (!cont_ids)
                _exit(127);
            for (int i = 0; i < n_cont_make; i++)
                if (make_fds[i] >= 0 && fstat(make_fds[i], &cont_ids[n_cont_ids]) == 0)
                    n_cont_ids++;
        } else {
            cont_mode = 0; /* no second ruleset: every creation is the helper's */
        }
        int keep_helper[3] = {lfd, root, log_fd};
        close_all_but(keep_helper, 3, NULL, 0);
        helper_root = root;
        if (fstat(root, &helper_root_st) < 0)
            _exit(127);
        helper_protected = protected_paths;
        helper_n_protected = n_protected;
        helper_log = log_fd;
        helper_denials = shared_denials;
        helper_connects = shared_denials + 1;
        prctl(PR_SET_NAME, "ztsa-helper", 0, 0, 0); /* for ps and perf, as ztsa's child */
        fs_helper(lfd);
        _exit(0);
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

/* ---- the fast path of the tracer loop: stops decided without Python ---- */

static struct ztsa_net_allow *fast_rules;
static int n_fast_rules = -1; /* -1: no fast path */
static unsigned long fast_connects;

int ztsa_fast_set(const struct ztsa_net_allow *rules, int n) {
    free(fast_rules);
    fast_rules = NULL;
    n_fast_rules = -1;
    fast_connects = 0;
    if (n < 0)
        return 0;
    fast_rules = calloc((size_t)(n ? n : 1), sizeof *rules);
    if (!fast_rules)
        return -ENOMEM;
    memcpy(fast_rules, rules, (size_t)n * sizeof *rules);
    n_fast_rules = n;
    return 0;
}

unsigned long ztsa_fast_connects(void) {
    return fast_connects;
}

static int fast_allowed(int version, const unsigned char *a, int port) {
    int len = version == 4 ? 4 : 16;
    for (int i = 0; i < n_fast_rules; i++) {
        const struct ztsa_net_allow *r = &fast_rules[i];
        if (r->version != version || (r->port && r->port != port))
            continue;
        int match = 1;
        for (int k = 0; k < len && match; k++)
            match = (a[k] & r->mask[k]) == r->net[k];
        if (match)
            return 1;
    }
    return 0;
}

#if defined(__x86_64__)
/* An allowed IPv4/IPv6 connect, performed here on a duplicate of the tracee's socket
   from our own copy of the address, exactly as the Python path does. 1: done and the
   tracee resumed; 0: Python decides (denials, Unix sockets, anything unusual). */
static int fast_connect(pid_t tid) {
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0 || regs.orig_rax != 42)
        return 0;
    unsigned int len = (unsigned int)regs.rdx;
    unsigned char sa[128];
    if (len < 16 || len > sizeof sa)
        return 0;
    struct iovec local = {sa, len};
    struct iovec remote = {(void *)(unsigned long)regs.rsi, len};
    if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)len)
        return 0;
    if (inet_allowed(sa, len) != 1)
        return 0; /* denials, Unix sockets, anything else: Python decides */
    int dup = ztsa_pidfd_getfd(tid, (int)regs.rdi);
    if (dup < 0)
        return 0;
    long r = syscall(SYS_connect, dup, sa, len);
    long result = r < 0 ? -errno : r;
    close(dup);
    cached_pid = -1;
    regs.orig_rax = (unsigned long long)-1;
    regs.rax = (unsigned long long)result;
    if (ptrace(PTRACE_SETREGS, tid, 0, &regs) < 0)
        return 0;
    fast_connects++;
    ptrace(PTRACE_CONT, tid, 0, 0);
    return 1;
}
#endif

/* Process events the fast path handles (no log): a fork or vfork, a new tracee's first
   stop, an exec, a signal delivery. Each is answered here and recorded for the tracer,
   which drains the records (ztsa_fast_events) before it handles anything itself, so its
   process table stays what it would have been. Clone (threads), group stops, exits and
   anything unusual go to Python as before. */
#define FAST_EVENTS 4096
#define TID_BITS (1 << 22) /* pid_max's largest value */
static int fast_ev[FAST_EVENTS][3];
static int n_fast_ev;
static unsigned char expect_bm[TID_BITS / 8];  /* forked, first stop not seen yet */
static unsigned char started_bm[TID_BITS / 8]; /* first stop seen */
static int fast_helper;
/* The bitmaps are 1 MB of zeroed BSS: clearing them on every reset touched all 256
   pages (about 0.45 ms of page faults per run); only bytes a bit was set in are
   cleared, from the lowest to the highest set since the last reset */
static pid_t bm_lo = TID_BITS, bm_hi = -1;

static int bit(unsigned char *bm, pid_t t) {
    return t > 0 && t < TID_BITS && (bm[t >> 3] >> (t & 7)) & 1;
}

static void set_bit(unsigned char *bm, pid_t t, int on) {
    if (t <= 0 || t >= TID_BITS)
        return;
    if (on) {
        bm[t >> 3] |= (unsigned char)(1 << (t & 7));
        if (t < bm_lo)
            bm_lo = t;
        if (t > bm_hi)
            bm_hi = t;
    } else
        bm[t >> 3] &= (unsigned char)~(1 << (t & 7));
}

static void record(int kind, pid_t tid, long other) {
    fast_ev[n_fast_ev][0] = kind;
    fast_ev[n_fast_ev][1] = tid;
    fast_ev[n_fast_ev][2] = (int)other;
    n_fast_ev++;
}

int ztsa_fast_events(int *out, int max) {
    int n = n_fast_ev < max ? n_fast_ev : max;
    memcpy(out, fast_ev, (size_t)n * sizeof fast_ev[0]);
    if (n < n_fast_ev)
        memmove(fast_ev, fast_ev + n, (size_t)(n_fast_ev - n) * sizeof fast_ev[0]);
    n_fast_ev -= n;
    return n;
}

static pid_t fast_main, fast_helper_pid; /* their exits always go to the tracer */

void ztsa_fast_reset(int helper) {
    if (bm_hi >= bm_lo) {
        size_t from = (size_t)bm_lo >> 3, len = ((size_t)bm_hi >> 3) - from + 1;
        memset(started_bm + from, 0, len);
        memset(expect_bm + from, 0, len);
    }
    bm_lo = TID_BITS;
    bm_hi = -1;
    n_fast_ev = 0;
    fast_helper = helper;
    fast_main = fast_helper_pid = 0;
}

void ztsa_fast_roles(int main, int helper) {
    fast_main = (pid_t)main;
    fast_helper_pid = (pid_t)helper;
}

void ztsa_fast_started(int tid) {
    set_bit(started_bm, (pid_t)tid, 1);
    set_bit(expect_bm, (pid_t)tid, 0);
}

int ztsa_restart_interrupted(int pid);

/* 1: the stop was answered here (and recorded); 0: Python decides. */
static int fast_event(pid_t pid, int st) {
    if (n_fast_ev >= FAST_EVENTS)
        return 0;
    int event = st >> 16;
    unsigned long msg = 0;
    if (event == PTRACE_EVENT_FORK || event == PTRACE_EVENT_VFORK) {
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) < 0)
            return 0;
        pid_t child = (pid_t)msg;
        if (!bit(started_bm, child))
            set_bit(expect_bm, child, 1);
        record(event, pid, child);
        ptrace(PTRACE_CONT, pid, 0, 0);
        return 1;
    }
    if (event == PTRACE_EVENT_STOP && bit(expect_bm, pid)) { /* a new tracee's first stop */
        set_bit(expect_bm, pid, 0);
        set_bit(started_bm, pid, 1);
        record(PTRACE_EVENT_STOP, pid, 0);
        ptrace(PTRACE_CONT, pid, 0, 0);
        return 1;
    }
    /* A tracee that never stopped before: its first stop, before its parent's fork event
       (the tracer never interrupts, and a group stop comes only after the first stop).
       Taken here only for a process (a thread group leader: tgkill with signal 0 finds
       tid in the group of that same number); a thread's goes to the tracer, which reads
       its thread group. */
    if (event == PTRACE_EVENT_STOP && !bit(started_bm, pid) && pid > 0 && pid < TID_BITS &&
        syscall(SYS_tgkill, pid, pid, 0) == 0) {
        set_bit(started_bm, pid, 1);
        record(ZTSA_FAST_NEW, pid, 0);
        ptrace(PTRACE_CONT, pid, 0, 0);
        return 1;
    }
    if (event == PTRACE_EVENT_EXEC && bit(started_bm, pid)) {
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) < 0)
            return 0;
        if ((pid_t)msg != pid) { /* exec from a non-leader thread: that tid is gone */
            set_bit(started_bm, (pid_t)msg, 0);
            set_bit(expect_bm, (pid_t)msg, 0);
        }
        record(PTRACE_EVENT_EXEC, pid, (long)msg);
        ptrace(PTRACE_CONT, pid, 0, 0);
        return 1;
    }
    if (event == 0 && bit(started_bm, pid)) { /* a signal on its way: deliver it */
        if (fast_helper)
            ztsa_restart_interrupted(pid);
        ptrace(PTRACE_CONT, pid, 0, WSTOPSIG(st));
        return 1;
    }
    return 0;
}

int ztsa_wait(int *status, unsigned long tag_exec, unsigned long tag_net) {
    for (;;) {
        int st;
        pid_t pid = waitpid(-1, &st, __WALL);
        if (pid < 0)
            return -errno;
        if (WIFEXITED(st) || WIFSIGNALED(st)) {
            set_bit(started_bm, pid, 0);
            set_bit(expect_bm, pid, 0);
            /* any exit but CMD's and the helper's, once CMD is known: the tracer takes
               the record in before it handles anything else */
            if (n_fast_rules >= 0 && fast_main > 0 && pid != fast_main &&
                pid != fast_helper_pid && n_fast_ev < FAST_EVENTS) {
                record(ZTSA_FAST_EXIT, pid, st);
                continue;
            }
        }
        if (n_fast_rules >= 0 && WIFSTOPPED(st) && (st >> 16) != PTRACE_EVENT_SECCOMP &&
            fast_event(pid, st))
            continue;
        if (n_fast_rules >= 0 && WIFSTOPPED(st) && (st >> 16) == PTRACE_EVENT_SECCOMP) {
            unsigned long msg = 0;
            if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0) {
                if (msg == tag_exec) { /* logged at the exec event */
                    ptrace(PTRACE_CONT, pid, 0, 0);
                    continue;
                }
#if defined(__x86_64__)
                if (msg == tag_net && fast_connect(pid))
                    continue;
#else
                (void)tag_net;
#endif
            }
        }
        *status = st;
        return pid;
    }
}

int ztsa_restart_interrupted(int pid) {
#if defined(__x86_64__)
    struct user_regs_struct regs;
    cached_pid = -1;
    if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
        return -errno;
    if ((long long)regs.rax != -512) /* -ERESTARTSYS */
        return 0;
    /* one of the helper's syscalls (FS_CALLS, umask, and connect, which under ztsa never
       runs in the kernel: the helper or the tracer performs it on a duplicate), interrupted
       waiting for it */
    int helper_call = regs.orig_rax == 95 || regs.orig_rax == 42;
    for (size_t i = 0; i < sizeof FS_CALLS / sizeof FS_CALLS[0]; i++)
        helper_call |= (long long)regs.orig_rax == FS_CALLS[i].nr;
    if (helper_call) {
        regs.rax = (unsigned long long)-513; /* -ERESTARTNOINTR */
        return ptrace(PTRACE_SETREGS, pid, 0, &regs) < 0 ? -errno : 1;
    }
    return 0;
#else
    (void)pid;
    return 0;
#endif
}

long ztsa_readmem(int pid, unsigned long long addr, void *buf, unsigned long len) {
    struct iovec local = {buf, len};
    struct iovec remote = {(void *)(unsigned long)addr, len};
    ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    return n < 0 ? -errno : n;
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

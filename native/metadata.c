/* Runs in the file helper (helper.c's loop calls it): the
   notifications of the calls that change a file without making a name, and of those
   the kernel may refuse outside the writable places.

   Mode, owner, times and extended attributes (chmod, chown, utime(s), utimensat,
   setxattr, removexattr and their l-, f- and -at forms): Landlock does not cover them,
   and the read-only system view holds only for files the tree reaches through its own
   mounts. A descriptor it inherited (the caller's terminal, the host's /dev/null, a
   file its stdout was redirected to) or a /proc magic link reaches the caller's mounts
   instead. So the helper resolves the file itself, once, to a descriptor of its own
   (the caller's descriptor through pidfd_getfd; a path as the caller's kernel would
   resolve it, magic links only through the caller's own names), and changes it only
   when it lies on a writable mount of the tree's mount namespace (or of a namespace the
   caller made itself); otherwise the call fails with EROFS and a deny line. What is
   changed is the file the decision was made on: nothing the tree rewrites afterwards
   reaches it.

   A write open without O_CREAT, truncate, unlink, unlinkat and rmdir are only counted:
   the helper tries the same access on its own (an open for writing it closes again;
   for a name, whether its directory is writable), logs a refusal with its path and
   returns the kernel's answer, and otherwise lets the caller's kernel perform the call
   (CONTINUE), which enforces the same rules itself. A race can then only make a count
   wrong, never let a change through. */
#include "helper.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>

#ifndef XATTR_NAME_MAX /* musl: only in <linux/limits.h>, whose other limits clash */
#define XATTR_NAME_MAX 255
#endif

#define PIPEFS_MAGIC_ 0x50495045
#define SOCKFS_MAGIC_ 0x534F434B
#define ANON_INODE_FS_MAGIC_ 0x09041934
#define XATTR_SIZE_MAX_ 65536
#define TMPFS_MAGIC_ 0x01021994 /* memfd and shmem files too */


/* The calls here, by the table's op (ztsa_nr.h): CHMOD to REMOVEXATTR change the
   file; OPEN (a write open), TRUNCATE and UNLINK are only checked. */
static int check_only_op(int op) {
    return op == ZTSA_OP_OPEN || op == ZTSA_OP_TRUNCATE || op == ZTSA_OP_UNLINK;
}

int meta_op(int op) {
    return check_only_op(op) || (op >= ZTSA_OP_CHMOD && op <= ZTSA_OP_REMOVEXATTR);
}

/* the argument c names the file by (a descriptor, or the directory of its path), its
   path and its flags, -1 each when it has none */
struct meta_args {
    int dirfd, path, flags;
};

/* the rw mounts of the helper's (the tree's) mount namespace, read once: its mounts are
   all made before CMD starts, and the tree cannot change them */
static struct {
    int loaded, n;
    unsigned long long id[4096];
} RW;

static int mount_is_rw(const char *mountinfo, unsigned long long id) {
    for (const char *line = mountinfo; line && *line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        char *end;
        unsigned long long mid = strtoull(line, &end, 10);
        if (end == line || mid != id)
            continue;
        /* fields: id parent major:minor root mountpoint options ... */
        const char *p = end;
        for (int field = 0; field < 4 && p; field++)
            p = strchr(p + 1, ' ');
        return p && strncmp(p + 1, "rw", 2) == 0 && (p[3] == ',' || p[3] == ' ');
    }
    return 0;
}

static char *read_all(int dirfd, const char *path) {
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t size = 1 << 16, got = 0;
    char *buf = malloc(size);
    while (buf) {
        ssize_t n = read(fd, buf + got, size - got - 1);
        if (n <= 0)
            break;
        got += (size_t)n;
        if (got + 1 == size) {
            char *bigger = realloc(buf, size * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            size *= 2;
        }
    }
    close(fd);
    if (buf)
        buf[got] = 0;
    return buf;
}

static void load_writable(int proc) {
    RW.loaded = 1;
    char *info = read_all(proc, "self/mountinfo");
    for (const char *line = info; line && *line && RW.n < 4096; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        char *end;
        unsigned long long id = strtoull(line, &end, 10);
        if (end != line && mount_is_rw(line, id))
            RW.id[RW.n++] = id;
    }
    free(info);
}

/* Does fd lie on a writable mount of the tree's mount namespace, or of one the caller
   made itself (a nested sandbox)? Pipes, sockets and anonymous inodes have no mount in
   any namespace and no name anywhere: their metadata is the tree's own. */
static int known_writable(int proc, unsigned long long id) {
    if (!RW.loaded)
        load_writable(proc);
    for (int i = 0; i < RW.n; i++)
        if (RW.id[i] == id)
            return 1;
    return 0;
}

static int writable(int proc, int fd, pid_t pid) {
    struct statfs sfs;
    if (fstatfs(fd, &sfs) == 0 && (sfs.f_type == PIPEFS_MAGIC_ || sfs.f_type == SOCKFS_MAGIC_ ||
                                   sfs.f_type == ANON_INODE_FS_MAGIC_))
        return 1;
    unsigned long long id;
    if (!ztsa_mount_id(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, &id))
        return 0;
    if (known_writable(proc, id))
        return 1;
    char where[64];
    snprintf(where, sizeof where, "%d/mountinfo", pid);
    char *info = read_all(proc, where);
    int rw = info && mount_is_rw(info, id);
    free(info);
    return rw;
}

int meta_writable_fd(const struct helper *h, int fd, pid_t pid) {
    return writable(h->proc, fd, pid);
}

/* Is path (from dirfd, links followed, as an open follows them) on a writable mount of
   the tree's namespace? Unknown (no STATX_MNT_ID): yes, as before it was asked. */
int meta_writable_at(int dirfd, const char *path) {
    unsigned long long id;
    return !ztsa_mount_id(dirfd, path, 0, &id) || known_writable(helper_proc(), id);
}

/* The file a path names, as the caller's kernel would resolve it: an O_PATH descriptor
   of the helper's own, or -errno. The caller's own names (/proc/self/..., /dev/stdout)
   are resolved beneath its own /proc directory; any other magic link is refused
   (ELOOP): it could lead out of the tree's mounts. */
/* path with "//" and "/./" collapsed, as the kernel reads it (so that //proc/self is
   the caller's own name too, and never the helper's) */
static void collapse(const char *path, char *out, size_t size) {
    size_t n = 0;
    for (const char *p = path; *p && n + 1 < size; p++) {
        if (*p == '/' && n > 0 && out[n - 1] == '/')
            continue;
        if (*p == '.' && n > 0 && out[n - 1] == '/' && p[1] == '/') {
            p++; /* "/./" */
            continue;
        }
        out[n++] = *p;
    }
    out[n] = 0;
}

static int resolve(int proc, pid_t pid, long long dirfd, const char *given, int nofollow) {
    char rest[4097], path[4097];
    collapse(given, path, sizeof path);
    struct open_how_ how = {O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0), 0,
                            RESOLVE_NO_MAGICLINKS_};
    int own = helper_own_path(path, rest, sizeof rest);
    if (own) {
        char dir[32];
        snprintf(dir, sizeof dir, "%d", pid);
        int d = openat(proc, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (d < 0)
            return -errno;
        int fd;
        if (own == HELPER_OWN_FD) {
            fd = openat(d, rest, (int)how.flags);
        } else {
            how.resolve |= RESOLVE_BENEATH_;
            fd = (int)syscall(SYS_openat2_, d, rest, &how, sizeof how);
        }
        int e = errno;
        close(d);
        return fd < 0 ? -e : fd;
    }
    if (path[0] == '/') { /* from the caller's root, which a chroot may have moved */
        int root = helper_caller_root(pid);
        if (root >= 0) {
            how.resolve |= RESOLVE_IN_ROOT_;
            int fd = (int)syscall(SYS_openat2_, root, path, &how, sizeof how);
            int e = errno;
            close(root);
            return fd < 0 ? -e : fd;
        }
    }
    int d = helper_dirfd(pid, dirfd, path);
    if (d < 0)
        return d;
    int fd = (int)syscall(SYS_openat2_, d, path, &how, sizeof how);
    int e = errno;
    helper_close_dirfd(d);
    return fd < 0 ? -e : fd;
}

static void deny(pid_t pid, const char *name, const char *path, const char *rule) {
    helper_log_denial(pid, name, path, "", rule);
}

/* Perform a change on t, the helper's own descriptor of the file (O_PATH or not). */
static long change(const struct helper *h, const struct seccomp_notif *req,
                   const struct ztsa_syscall *c, int flags, int t, int is_link) {
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", t);
    long r;
    int times = sys_arg(c, ZTSA_ARG_TIMES), xname = sys_arg(c, ZTSA_ARG_XNAME);
    switch (c->op) {
    case ZTSA_OP_CHMOD:
        if (is_link && (flags & AT_SYMLINK_NOFOLLOW))
            return -EOPNOTSUPP;
        r = fchmodat(h->proc, self + 6, (mode_t)(a[sys_arg(c, ZTSA_ARG_MODE)] & 07777), 0);
        return r < 0 ? -errno : 0;
    case ZTSA_OP_CHOWN:
        r = fchownat(t, "", (uid_t)a[sys_arg(c, ZTSA_ARG_UID)],
                     (gid_t)a[sys_arg(c, ZTSA_ARG_GID)], AT_EMPTY_PATH);
        return r < 0 ? -errno : 0;
    case ZTSA_OP_UTIMENS:
    case ZTSA_OP_UTIMES:
    case ZTSA_OP_UTIME: {
        struct timespec ts[2], *tsp = NULL;
        if (a[times]) {
            int e;
            if (c->op == ZTSA_OP_UTIMENS) {
                e = caller_read(pid, a[times], ts, sizeof ts);
            } else if (c->op == ZTSA_OP_UTIMES) {
                struct timeval tv[2];
                e = caller_read(pid, a[times], tv, sizeof tv);
                for (int i = 0; i < 2 && !e; i++) {
                    if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
                        return -EINVAL;
                    ts[i].tv_sec = tv[i].tv_sec;
                    ts[i].tv_nsec = tv[i].tv_usec * 1000;
                }
            } else {
                struct utimbuf ub;
                e = caller_read(pid, a[times], &ub, sizeof ub);
                ts[0].tv_sec = ub.actime;
                ts[1].tv_sec = ub.modtime;
                ts[0].tv_nsec = ts[1].tv_nsec = 0;
            }
            if (e)
                return e;
            tsp = ts;
        }
        r = utimensat(t, "", tsp, AT_EMPTY_PATH);
        return r < 0 ? -errno : 0;
    }
    case ZTSA_OP_SETXATTR:
    case ZTSA_OP_REMOVEXATTR: {
        char name[XATTR_NAME_MAX + 2];
        int e = caller_read_string(pid, a[xname], name, sizeof name);
        if (e)
            return e == -ENAMETOOLONG ? -ERANGE : e;
        if (is_link)
            return -EPERM; /* no user.* attribute on a symlink; the rest need privilege */
        if (c->op == ZTSA_OP_REMOVEXATTR) {
            r = removexattr(self, name);
            return r < 0 ? -errno : 0;
        }
        size_t size = (size_t)a[sys_arg(c, ZTSA_ARG_XSIZE)];
        if (size > XATTR_SIZE_MAX_)
            return -E2BIG;
        void *value = malloc(size ? size : 1);
        if (!value)
            return -ENOMEM;
        e = size ? caller_read(pid, a[sys_arg(c, ZTSA_ARG_XVALUE)], value, size) : 0;
        r = e ? e : (setxattr(self, name, value, size, (int)a[sys_arg(c, ZTSA_ARG_XFLAGS)]) < 0
                         ? -errno : 0);
        free(value);
        return r;
    }
    default:
        return -ENOSYS;
    }
}

#define KEPT_RULE "the agent's kept state, written by the agent's own process alone (--agent)"

/* --agent: a write open or truncate of t (the helper's descriptor of the file the
   caller names) where the tree's kernel refuses it: in a kept entry (the kept-state
   layer), or directly in a directory on the way to one (made during the run: no rule
   of that layer names it). The helper performs it for the agent's own process (a kept
   file) or for anyone (a file on the way, which is no kept state), on t itself, so
   nothing rewritten meanwhile reaches it: an opened file (*fd_out) or the result; any
   other process is refused. */
static long kept_write(const struct helper *h, const struct seccomp_notif *req,
                       const struct ztsa_syscall *c, const char *path, int t, int flags,
                       int *fd_out) {
    pid_t pid = (pid_t)req->pid;
    int kept = creation_kept_fd(t);
    int agent = kept && creation_is_agent(pid);
    if (!helper_still_valid(req->id))
        return -ESRCH;
    if (kept && !agent) {
        deny(pid, c->name, path, KEPT_RULE);
        return -EACCES;
    }
    char self[64];
    snprintf(self, sizeof self, "self/fd/%d", t);
    int how = c->op == ZTSA_OP_OPEN ? (flags & ~(O_CREAT | O_EXCL | O_NOFOLLOW)) : O_WRONLY;
    int fd = openat(h->proc, self, how | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) {
        int e = errno;
        if (e == EROFS || e == EACCES || e == EPERM)
            deny(pid, c->name, path, e == EROFS ? "read-only outside the writable places"
                                                : "refused by the kernel (Landlock or permissions)");
        return -e;
    }
    if (c->op == ZTSA_OP_OPEN) {
        *fd_out = fd;
        return 0;
    }
    int a = sys_arg(c, ZTSA_ARG_LENGTH);
    long r = a < 0 ? -ENOSYS : ftruncate(fd, (off_t)req->data.args[a]) < 0 ? -errno : 0;
    close(fd);
    return r;
}

/* A write open, truncate, unlink or rmdir: 1 when the caller's kernel may perform it
   (CONTINUE), else the refusal (-errno) it would give, logged; a write open the helper
   performed (kept_write): 2, the file in *fd_out. */
static long check_only(const struct helper *h, const struct seccomp_notif *req,
                       const struct ztsa_syscall *c, const struct meta_args *at,
                       const char *path, int flags, int *fd_out) {
    pid_t pid = (pid_t)req->pid;
    long long dirfd = at->dirfd >= 0 ? (long long)req->data.args[at->dirfd] : AT_FDCWD;
    if (c->op == ZTSA_OP_UNLINK) {
        /* the directory holding the name decides; a protected file is a mount point */
        char parent[4097];
        const char *slash = strrchr(path, '/');
        const char *name = slash ? slash + 1 : path;
        if (!*name || strcmp(name, ".") == 0 || strcmp(name, "..") == 0)
            return 1;
        size_t n = slash ? (size_t)(slash - path) : 0;
        if (slash && n == 0)
            n = 1;
        memcpy(parent, slash ? path : ".", slash ? n : 1);
        parent[slash ? n : 1] = 0;
        int d = resolve(h->proc, pid, dirfd, parent, 0);
        if (d < 0)
            return 1;
        int dir_rw = writable(h->proc, d, pid);
        unsigned long long outer, inner;
        int mounted = ztsa_mount_id(d, "", AT_EMPTY_PATH, &outer) &&
                      ztsa_mount_id(d, name, AT_SYMLINK_NOFOLLOW, &inner) && outer != inner;
        close(d);
        if (!dir_rw) {
            deny(pid, c->name, path, "read-only outside the writable places");
            return -EROFS;
        }
        if (mounted) {
            deny(pid, c->name, path, "protected agent file");
            return -EBUSY;
        }
        return 1;
    }
    int t = resolve(h->proc, pid, dirfd, path, c->op == ZTSA_OP_OPEN && (flags & O_NOFOLLOW));
    if (t < 0)
        return 1; /* the kernel's own resolution gives its own answer */
    struct stat st;
    if (fstat(t, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(t); /* a device, FIFO or directory: opening it may act, and is no write */
        return 1;
    }
    if (creation_kept() && creation_helper_only(t)) {
        long r = kept_write(h, req, c, path, t, flags, fd_out);
        close(t);
        return *fd_out >= 0 ? 2 : r;
    }
    char self[64];
    snprintf(self, sizeof self, "self/fd/%d", t);
    int access = c->op == ZTSA_OP_OPEN && (flags & O_ACCMODE) == O_RDWR ? O_RDWR : O_WRONLY;
    if (c->op == ZTSA_OP_OPEN)
        access |= flags & O_APPEND; /* an append-only file opens for appending only */
    int probe = openat(h->proc, self, access | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    int e = errno;
    close(t);
    if (probe >= 0) {
        close(probe);
        return 1;
    }
    if (e == EROFS || e == EACCES || e == EPERM) {
        deny(pid, c->name, path, e == EROFS ? "read-only outside the writable places"
                                            : "refused by the kernel (Landlock or permissions)");
        return -e;
    }
    return 1;
}

/* One notification of a call meta_op() names: sets *cont when the caller's kernel
   performs it, else returns its result (0 or -errno). */
long meta_notification(const struct helper *h, const struct seccomp_notif *req,
                       const struct ztsa_syscall *c, int *cont) {
    *cont = 0;
    if (!meta_op(c->op))
        return -ENOSYS;
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    struct meta_args at = {sys_dirfd_arg(c), sys_arg(c, ZTSA_ARG_PATH), sys_flags_arg(c)};
    int flags = at.flags >= 0 ? (int)a[at.flags] : 0;
    static char path[4097];
    path[0] = 0;
    /* the descriptor form: no path, a NULL one (utimensat, futimesat), or "" with
       AT_EMPTY_PATH */
    int fd_form = at.path < 0 || ((c->op == ZTSA_OP_UTIMENS || c->op == ZTSA_OP_UTIMES) &&
                                  at.dirfd >= 0 && a[at.path] == 0);
    if (!fd_form) {
        int e = caller_read_string(pid, a[at.path], path, sizeof path);
        if (e)
            return e;
        if (!path[0]) {
            if (!(flags & AT_EMPTY_PATH) || at.flags < 0 || check_only_op(c->op))
                return check_only_op(c->op) ? (*cont = 1, 0) : -ENOENT;
            fd_form = 1;
        }
    }
    if (check_only_op(c->op)) {
        int fd = -1;
        long r = check_only(h, req, c, &at, path, flags, &fd);
        if (r == 1 || r == 2)
            *cont = (int)r;
        return r == 2 ? fd : r == 1 ? 0 : r;
    }
    int t;
    if (fd_form) {
        long long fd = (long long)a[at.dirfd];
        t = (int)fd == AT_FDCWD ? helper_dirfd(pid, AT_FDCWD, "")
                                : helper_getfd(pid, (int)fd);
        if (t < 0)
            return t == -ESRCH ? -ESRCH : -EBADF;
        snprintf(path, sizeof path, "(descriptor %lld)", fd);
    } else {
        int nofollow = c->nofollow || (flags & AT_SYMLINK_NOFOLLOW);
        t = resolve(h->proc, pid, at.dirfd >= 0 ? (long long)a[at.dirfd] : AT_FDCWD, path,
                    nofollow);
        if (t == -ELOOP && !nofollow) {
            deny(pid, c->name, path, "a /proc link that could lead out of the tree's files");
            return -EACCES;
        }
        if (t < 0)
            return t;
    }
    /* --agent: the kept state's modes, times and attributes are the agent's too */
    int kept_other = creation_kept() && creation_kept_fd(t) && !creation_is_agent(pid);
    if (!helper_still_valid(req->id)) {
        close(t);
        return -ESRCH;
    }
    long r;
    struct stat st;
    struct statfs sfs;
    int fl = fd_form ? fcntl(t, F_GETFL) : 0;
    if (fstatat(t, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0) {
        r = -errno;
    } else if (kept_other) {
        deny(pid, c->name, path, KEPT_RULE);
        r = -EACCES;
    } else if (fd_form && fl >= 0 && (fl & O_PATH) && (int)a[at.dirfd] != AT_FDCWD &&
               at.path < 0) {
        r = -EBADF; /* as the kernel answers fchmod, fchown, f*xattr on an O_PATH fd */
    } else if (fstatfs(t, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_) {
        /* the tree's /proc is a writable mount, but a mode set on a /proc entry is the
           kernel's, for every namespace, until reboot */
        deny(pid, c->name, path, "a /proc entry (its mode is the whole host's)");
        r = -EACCES;
    } else if (fd_form && st.st_nlink == 0 && !S_ISDIR(st.st_mode) &&
               sfs.f_type == TMPFS_MAGIC_) {
        r = change(h, req, c, flags, t, 0); /* a memfd or O_TMPFILE: named nowhere */
    } else if (!writable(h->proc, t, pid)) {
        deny(pid, c->name, path, fd_form ? "a file outside the tree's writable places "
                                           "(an inherited descriptor)"
                                         : "read-only outside the writable places");
        r = -EROFS;
    } else {
        r = change(h, req, c, flags, t, S_ISLNK(st.st_mode));
    }
    close(t);
    return r;
}

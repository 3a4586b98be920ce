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

#define PIPEFS_MAGIC_ 0x50495045
#define SOCKFS_MAGIC_ 0x534F434B
#define ANON_INODE_FS_MAGIC_ 0x09041934
#define XATTR_SIZE_MAX_ 65536
#define TMPFS_MAGIC_ 0x01021994 /* memfd and shmem files too */


enum meta_kind { M_CHMOD, M_CHOWN, M_UTIMENS, M_UTIMES, M_UTIME, M_SETXATTR, M_REMOVEXATTR,
                 M_OPEN, M_TRUNCATE, M_UNLINK };

/* argument indexes: dirfd (-1: AT_FDCWD), path (-1: none, the call names a descriptor
   in the dirfd slot), flags (-1: none); nofollow: the call never follows a last symlink */
struct meta_call {
    int nr;
    const char *name;
    enum meta_kind kind;
    int dirfd, path, flags, nofollow;
};

static const struct meta_call CALLS[] = {
    {ZTSA_NR_chmod, "chmod", M_CHMOD, -1, 0, -1, 0},
    {ZTSA_NR_fchmod, "fchmod", M_CHMOD, 0, -1, -1, 0},
    {ZTSA_NR_fchmodat, "fchmodat", M_CHMOD, 0, 1, -1, 0},
    {ZTSA_NR_fchmodat2, "fchmodat2", M_CHMOD, 0, 1, 3, 0},
    {ZTSA_NR_chown, "chown", M_CHOWN, -1, 0, -1, 0},
    {ZTSA_NR_fchown, "fchown", M_CHOWN, 0, -1, -1, 0},
    {ZTSA_NR_lchown, "lchown", M_CHOWN, -1, 0, -1, 1},
    {ZTSA_NR_fchownat, "fchownat", M_CHOWN, 0, 1, 4, 0},
    {ZTSA_NR_utime, "utime", M_UTIME, -1, 0, -1, 0},
    {ZTSA_NR_utimes, "utimes", M_UTIMES, -1, 0, -1, 0},
    {ZTSA_NR_futimesat, "futimesat", M_UTIMES, 0, 1, -1, 0},
    {ZTSA_NR_utimensat, "utimensat", M_UTIMENS, 0, 1, 3, 0},
    {ZTSA_NR_setxattr, "setxattr", M_SETXATTR, -1, 0, -1, 0},
    {ZTSA_NR_lsetxattr, "lsetxattr", M_SETXATTR, -1, 0, -1, 1},
    {ZTSA_NR_fsetxattr, "fsetxattr", M_SETXATTR, 0, -1, -1, 0},
    {ZTSA_NR_removexattr, "removexattr", M_REMOVEXATTR, -1, 0, -1, 0},
    {ZTSA_NR_lremovexattr, "lremovexattr", M_REMOVEXATTR, -1, 0, -1, 1},
    {ZTSA_NR_fremovexattr, "fremovexattr", M_REMOVEXATTR, 0, -1, -1, 0},
    {ZTSA_NR_open, "open", M_OPEN, -1, 0, 1, 0},
    {ZTSA_NR_openat, "openat", M_OPEN, 0, 1, 2, 0},
    {ZTSA_NR_truncate, "truncate", M_TRUNCATE, -1, 0, -1, 0},
    {ZTSA_NR_unlink, "unlink", M_UNLINK, -1, 0, -1, 1},
    {ZTSA_NR_unlinkat, "unlinkat", M_UNLINK, 0, 1, 2, 1},
    {ZTSA_NR_rmdir, "rmdir", M_UNLINK, -1, 0, -1, 1},
};

const char *meta_call_name(int nr) {
    for (size_t i = 0; i < sizeof CALLS / sizeof CALLS[0]; i++)
        if (CALLS[i].nr == nr)
            return CALLS[i].name;
    return NULL;
}

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

static void load_writable(void) {
    RW.loaded = 1;
    char *info = read_all(helper_proc(), "self/mountinfo");
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
/* the mount id of path from dirfd (flags: statx's), and 1, or 0 when statx cannot say */
static int mount_id_of(int dirfd, const char *path, int flags, unsigned long long *id) {
    struct statx stx;
    memset(&stx, 0, sizeof stx);
    if (statx(dirfd, path, flags, STATX_MNT_ID, &stx) < 0 || !(stx.stx_mask & STATX_MNT_ID))
        return 0;
    *id = stx.stx_mnt_id;
    return 1;
}

static int known_writable(unsigned long long id) {
    if (!RW.loaded)
        load_writable();
    for (int i = 0; i < RW.n; i++)
        if (RW.id[i] == id)
            return 1;
    return 0;
}

static int writable(int fd, pid_t pid) {
    struct statfs sfs;
    if (fstatfs(fd, &sfs) == 0 && (sfs.f_type == PIPEFS_MAGIC_ || sfs.f_type == SOCKFS_MAGIC_ ||
                                   sfs.f_type == ANON_INODE_FS_MAGIC_))
        return 1;
    unsigned long long id;
    if (!mount_id_of(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, &id))
        return 0;
    if (known_writable(id))
        return 1;
    char where[64];
    snprintf(where, sizeof where, "%d/mountinfo", pid);
    char *info = read_all(helper_proc(), where);
    int rw = info && mount_is_rw(info, id);
    free(info);
    return rw;
}

int meta_writable_fd(int fd, pid_t pid) { return writable(fd, pid); }

/* Is path (from dirfd, links followed, as an open follows them) on a writable mount of
   the tree's namespace? Unknown (no STATX_MNT_ID): yes, as before it was asked. */
int meta_writable_at(int dirfd, const char *path) {
    unsigned long long id;
    return !mount_id_of(dirfd, path, 0, &id) || known_writable(id);
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

static int resolve(pid_t pid, long long dirfd, const char *given, int nofollow) {
    char rest[4097], path[4097];
    collapse(given, path, sizeof path);
    struct open_how_ how = {O_PATH | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0), 0,
                            RESOLVE_NO_MAGICLINKS_};
    int own = helper_own_path(path, rest, sizeof rest);
    if (own) {
        char dir[32];
        snprintf(dir, sizeof dir, "%d", pid);
        int d = openat(helper_proc(), dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
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
static long change(const struct seccomp_notif *req, const struct meta_call *c, int base,
                   int flags, int t, int is_link) {
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", t);
    long r;
    switch (c->kind) {
    case M_CHMOD:
        if (is_link && (flags & AT_SYMLINK_NOFOLLOW))
            return -EOPNOTSUPP;
        r = fchmodat(helper_proc(), self + 6, (mode_t)(a[base] & 07777), 0);
        return r < 0 ? -errno : 0;
    case M_CHOWN:
        r = fchownat(t, "", (uid_t)a[base], (gid_t)a[base + 1], AT_EMPTY_PATH);
        return r < 0 ? -errno : 0;
    case M_UTIMENS:
    case M_UTIMES:
    case M_UTIME: {
        struct timespec ts[2], *tsp = NULL;
        if (a[base]) {
            int e;
            if (c->kind == M_UTIMENS) {
                e = caller_read(pid, a[base], ts, sizeof ts);
            } else if (c->kind == M_UTIMES) {
                struct timeval tv[2];
                e = caller_read(pid, a[base], tv, sizeof tv);
                for (int i = 0; i < 2 && !e; i++) {
                    if (tv[i].tv_usec < 0 || tv[i].tv_usec >= 1000000)
                        return -EINVAL;
                    ts[i].tv_sec = tv[i].tv_sec;
                    ts[i].tv_nsec = tv[i].tv_usec * 1000;
                }
            } else {
                struct utimbuf ub;
                e = caller_read(pid, a[base], &ub, sizeof ub);
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
    case M_SETXATTR:
    case M_REMOVEXATTR: {
        char name[XATTR_NAME_MAX + 2];
        int e = caller_read_string(pid, a[base], name, sizeof name);
        if (e)
            return e == -ENAMETOOLONG ? -ERANGE : e;
        if (is_link)
            return -EPERM; /* no user.* attribute on a symlink; the rest need privilege */
        if (c->kind == M_REMOVEXATTR) {
            r = removexattr(self, name);
            return r < 0 ? -errno : 0;
        }
        size_t size = (size_t)a[base + 2];
        if (size > XATTR_SIZE_MAX_)
            return -E2BIG;
        void *value = malloc(size ? size : 1);
        if (!value)
            return -ENOMEM;
        e = size ? caller_read(pid, a[base + 1], value, size) : 0;
        r = e ? e : (setxattr(self, name, value, size, (int)a[base + 3]) < 0 ? -errno : 0);
        free(value);
        return r;
    }
    default:
        return -ENOSYS;
    }
}

/* A write open, truncate, unlink or rmdir: 1 when the caller's kernel may perform it
   (CONTINUE), else the refusal (-errno) it would give, logged. */
static long check_only(const struct seccomp_notif *req, const struct meta_call *c,
                       const char *path, int flags) {
    pid_t pid = (pid_t)req->pid;
    long long dirfd = c->dirfd >= 0 ? (long long)req->data.args[c->dirfd] : AT_FDCWD;
    if (c->kind == M_UNLINK) {
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
        int d = resolve(pid, dirfd, parent, 0);
        if (d < 0)
            return 1;
        int dir_rw = writable(d, pid);
        struct statx outer, inner;
        memset(&outer, 0, sizeof outer);
        memset(&inner, 0, sizeof inner);
        int mounted = statx(d, "", AT_EMPTY_PATH, STATX_MNT_ID, &outer) == 0 &&
                      statx(d, name, AT_SYMLINK_NOFOLLOW, STATX_MNT_ID, &inner) == 0 &&
                      outer.stx_mnt_id != inner.stx_mnt_id;
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
    int t = resolve(pid, dirfd, path, c->kind == M_OPEN && (flags & O_NOFOLLOW));
    if (t < 0)
        return 1; /* the kernel's own resolution gives its own answer */
    struct stat st;
    if (fstat(t, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(t); /* a device, FIFO or directory: opening it may act, and is no write */
        return 1;
    }
    char self[64];
    snprintf(self, sizeof self, "self/fd/%d", t);
    int access = c->kind == M_OPEN && (flags & O_ACCMODE) == O_RDWR ? O_RDWR : O_WRONLY;
    if (c->kind == M_OPEN)
        access |= flags & O_APPEND; /* an append-only file opens for appending only */
    int probe = openat(helper_proc(), self, access | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
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

/* One notification of CALLS: sets *cont when the caller's kernel performs it, else
   returns its result (0 or -errno). */
long meta_notification(const struct seccomp_notif *req, int *cont) {
    const struct meta_call *c = NULL;
    for (size_t i = 0; i < sizeof CALLS / sizeof CALLS[0]; i++)
        if (CALLS[i].nr == req->data.nr)
            c = &CALLS[i];
    *cont = 0;
    if (!c)
        return -ENOSYS;
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    int flags = c->flags >= 0 ? (int)a[c->flags] : 0;
    static char path[4097];
    path[0] = 0;
    /* the descriptor form: no path, a NULL one (utimensat, futimesat), or "" with
       AT_EMPTY_PATH */
    int fd_form = c->path < 0 || ((c->kind == M_UTIMENS || c->kind == M_UTIMES) &&
                                  c->dirfd >= 0 && a[c->path] == 0);
    if (!fd_form) {
        int e = caller_read_string(pid, a[c->path], path, sizeof path);
        if (e)
            return e;
        if (!path[0]) {
            if (!(flags & AT_EMPTY_PATH) || c->flags < 0 || c->kind >= M_OPEN)
                return c->kind >= M_OPEN ? (*cont = 1, 0) : -ENOENT;
            fd_form = 1;
        }
    }
    if (c->kind >= M_OPEN) {
        long r = check_only(req, c, path, flags);
        if (r == 1)
            *cont = 1;
        return r == 1 ? 0 : r;
    }
    int base = c->path >= 0 ? c->path + 1 : 1;
    int t;
    if (fd_form) {
        long long fd = (long long)a[c->dirfd];
        t = (int)fd == AT_FDCWD ? helper_dirfd(pid, AT_FDCWD, "")
                                : helper_getfd(pid, (int)fd);
        if (t < 0)
            return t == -ESRCH ? -ESRCH : -EBADF;
        snprintf(path, sizeof path, "(descriptor %lld)", fd);
    } else {
        int nofollow = c->nofollow || (flags & AT_SYMLINK_NOFOLLOW);
        t = resolve(pid, c->dirfd >= 0 ? (long long)a[c->dirfd] : AT_FDCWD, path, nofollow);
        if (t == -ELOOP && !nofollow) {
            deny(pid, c->name, path, "a /proc link that could lead out of the tree's files");
            return -EACCES;
        }
        if (t < 0)
            return t;
    }
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
    } else if (fd_form && fl >= 0 && (fl & O_PATH) && (int)a[c->dirfd] != AT_FDCWD &&
               c->path < 0) {
        r = -EBADF; /* as the kernel answers fchmod, fchown, f*xattr on an O_PATH fd */
    } else if (fstatfs(t, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_) {
        /* the tree's /proc is a writable mount, but a mode set on a /proc entry is the
           kernel's, for every namespace, until reboot */
        deny(pid, c->name, path, "a /proc entry (its mode is the whole host's)");
        r = -EACCES;
    } else if (fd_form && st.st_nlink == 0 && !S_ISDIR(st.st_mode) &&
               sfs.f_type == TMPFS_MAGIC_) {
        r = change(req, c, base, flags, t, 0); /* a memfd or O_TMPFILE: named nowhere */
    } else if (!writable(t, pid)) {
        deny(pid, c->name, path, fd_form ? "a file outside the tree's writable places "
                                           "(an inherited descriptor)"
                                         : "read-only outside the writable places");
        r = -EROFS;
    } else {
        r = change(req, c, base, flags, t, S_ISLNK(st.st_mode));
    }
    close(t);
    return r;
}

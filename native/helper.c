/* Runs in the file helper: the process the spawned child becomes once it has forked
   CMD. It is CMD's parent and an ancestor of the whole tree, with the tree's
   credentials, namespaces and first Landlock domain, and no filter. It answers the
   filter's user notifications: the name-creating syscalls (open/openat/creat with
   O_CREAT, mkdir, mknod, symlink, link, rename and their *at forms, bind of a Unix
   socket path), umask, and connect when the plan gives it connects. For each it copies
   the arguments once into its own memory, takes the directory descriptors, checks that
   the notification is still live, and then decides and performs on its own copies only:
   nothing the tree rewrites afterwards reaches a decision or an operation. Its state (H
   and U below) is its own; it shares only the counters in struct ztsa_shared with the
   supervisor, and writes deny lines to the plan's log fd. Two of its readers of the
   tree's strings (json_escape, own_path) have entry points for the tests, which call
   them outside any run (ztsa_json_escape, ztsa_own_path). */
#include "internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NOTIF_SET_FLAGS _IOW('!', 4, unsigned long long)
#define NOTIF_SYNC_WAKE_UP 1ULL
#ifndef CLONE_UNTRACED
#define CLONE_UNTRACED 0x00800000
#endif
#define PROC_SUPER_MAGIC_ 0x9fa0
#define SYS_openat2_ 437
#define RESOLVE_NO_MAGICLINKS_ 0x02
#define RESOLVE_BENEATH_ 0x08

struct open_how_ {
    unsigned long long flags, mode, resolve;
};

/* How the helper answers a notification. */
enum reply_kind {
    REPLY_RESULT,    /* the syscall returns result: 0 or -errno */
    REPLY_FD,        /* an opened file, placed in the caller as the syscall's result */
    REPLY_CONTINUE,  /* the caller's own kernel performs the call */
    REPLY_ELSEWHERE  /* another process (an opener child) answers */
};

struct reply {
    enum reply_kind kind;
    long result;
    int fd;
};

#define RESULT(r) ((struct reply){REPLY_RESULT, (r), -1})
#define CONTINUE ((struct reply){REPLY_CONTINUE, 0, -1})

enum { OP_CREATE = 1, OP_MKDIR, OP_MKNOD, OP_SYMLINK, OP_LINK, OP_RENAME };

/* how an open names the caller itself (own_path) */
enum { OWN_NONE, OWN_FD, OWN_BENEATH };

static struct {
    const struct ztsa_plan *plan; /* the helper's copy (the fork's): protected paths,
                                     allow table, log fd */
    int lfd;                      /* the listener */
    int root;                     /* the workspace, O_PATH; it never moves during a run */
    int proc;                     /* the /proc whose pids are the notifications' */
    pid_t self;
    int host_proc;                /* the host's /proc (a PID namespace), else -1 */
    struct stat root_st;
    size_t resp_size;
    size_t req_size;
    struct ztsa_shared *shared;
} H;

static void answer(const struct seccomp_notif *req, struct reply r);

/* The directories on the way to the workspace and to the read-only paths (the audit
   log, protected files outside the workspace): renaming one would put another tree in
   their place (under --audit-only, where nothing outside is read-only, or below an
   --allow-write directory that holds the workspace). (device, inode), at the start. */
static struct ancestor { dev_t dev; ino_t ino; } *ancestors;
static size_t n_ancestors, ancestors_room;

static int is_ancestor(const struct stat *st) {
    for (size_t i = 0; i < n_ancestors; i++)
        if (ancestors[i].dev == st->st_dev && ancestors[i].ino == st->st_ino)
            return 1;
    return 0;
}

/* 0, or -1 when there was no memory for them (the helper then does not start: a
   directory left out could be moved) */
static int note_ancestors(const char *path) {
    char buf[4097];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *slash = strrchr(buf, '/'); slash && slash != buf; slash = strrchr(buf, '/')) {
        *slash = 0;
        struct stat st;
        if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (is_ancestor(&st))
            break; /* noted with every directory above it: protected paths share parents */
        if (n_ancestors == ancestors_room) {
            size_t room = ancestors_room ? 2 * ancestors_room : 64;
            struct ancestor *more = realloc(ancestors, room * sizeof *more);
            if (!more)
                return -1;
            ancestors = more;
            ancestors_room = room;
        }
        ancestors[n_ancestors].dev = st.st_dev;
        ancestors[n_ancestors].ino = st.st_ino;
        n_ancestors++;
    }
    return 0;
}

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
        return same_as(parentfd, NULL, 0, &H.root_st);
    if (dirlen >= sizeof buf)
        return 0;
    memcpy(buf, dir, dirlen);
    buf[dirlen] = 0;
    return fstatat(H.root, buf, &st, 0) == 0 && same_as(parentfd, NULL, 0, &st);
}

/* git's rewrite of a protected config: src is `NAME.lock` beside the protected
   (dst_dir, NAME), and NAME one of the configs the child opened; that descriptor, or
   -1 for any other rename. */
static int git_rewrite(int src_dir, const char *src, int dst_dir, const char *dst) {
    size_t n = strlen(dst);
    struct stat a, b, target;
    if (strncmp(src, dst, n) != 0 || strcmp(src + n, ".lock") != 0 ||
        fstat(src_dir, &a) < 0 || fstat(dst_dir, &b) < 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino || fstatat(dst_dir, dst, &target, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    for (int i = 0; i < ztsa_n_git_config_fds; i++) {
        struct stat st;
        if (fstat(ztsa_git_config_fds[i], &st) == 0 && st.st_dev == target.st_dev &&
            st.st_ino == target.st_ino)
            return ztsa_git_config_fds[i];
    }
    return -1;
}

/* Perform git's rewrite from the helper's own copy of the lock file, when every line
   it adds is a key git writes in ordinary work (gitconfig.c); 0 or an errno (EACCES:
   refused). */
static int git_config_write(int cfg, int dir, const char *lock) {
    enum { LIMIT = 1 << 20 };
    static char old[LIMIT], new_text[LIMIT];
    int fd = openat(dir, lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, new_text, LIMIT) : -1;
    close(fd);
    ssize_t m = pread(cfg, old, LIMIT, 0);
    if (n < 0 || m < 0 || n == LIMIT || m == LIMIT)
        return EACCES;
    char link[64], gitdir[4097];
    snprintf(link, sizeof link, "self/fd/%d", dir);
    ssize_t g = readlinkat(H.proc, link, gitdir, sizeof gitdir - 1);
    if (g > 0)
        gitdir[g] = 0;
    if (!gitconfig_acceptable(old, (size_t)m, new_text, (size_t)n, g > 0 ? gitdir : NULL,
                              H.plan->workspace))
        return EACCES;
    if (ftruncate(cfg, 0) < 0)
        return errno;
    for (ssize_t done = 0; done < n;) {
        ssize_t w = pwrite(cfg, new_text + done, (size_t)(n - done), done);
        if (w <= 0)
            return w < 0 ? errno : EIO;
        done += w;
    }
    return unlinkat(dir, lock, 0) < 0 ? errno : 0;
}

/* 1: (parentfd, name) is a protected path; 2: a directory on the way to one; 0:
   neither. */
static int classify(int parentfd, const char *name) {
    int result = 0;
    for (int i = 0; i < H.plan->n_protected; i++) {
        const char *entry = H.plan->protected_paths[i];
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
/* the answer for a path reached through a magic link or on procfs */
#define PARENT_PROC (-100000)

/* (dirfd, path) opened O_PATH with flags, with no magic link on the way
   (/proc/self/cwd, /proc/1/fd/N: through one the helper would reach its own files, not
   the caller's) and not on /proc: the descriptor, -errno, or PARENT_PROC. */
static int open_off_proc(int dirfd, const char *path, int flags) {
    struct open_how_ how = {(unsigned long long)flags, 0, RESOLVE_NO_MAGICLINKS_};
    int fd = (int)syscall(SYS_openat2_, dirfd, path, &how, sizeof how);
    if (fd < 0 && errno == ELOOP) {
        int plain = openat(dirfd, path, flags);
        if (plain < 0)
            return -ELOOP; /* a loop of ordinary links */
        close(plain);
        return PARENT_PROC;
    }
    struct statfs sfs;
    if (fd >= 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_) {
        close(fd);
        return PARENT_PROC;
    }
    return fd < 0 ? -errno : fd;
}

/* The directory holding path's last component, opened O_PATH, and that component in
   name (*slash: the path ended in '/'). -errno, or PARENT_PROC. */
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
    return open_off_proc(dirfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}


/* The tty_nr of a /proc stat file (relative to the helper's /proc of host pids). */
static unsigned long tty_of(const char *stat_path) {
    char buf[1024];
    if (!read_proc_at(H.proc, stat_path, buf, sizeof buf))
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
    snprintf(where, sizeof where, "%d/stat", pid);
    unsigned long tty = tty_of(where);
    if (!tty)
        return -ENXIO;
    int fd;
    if (tty == tty_of("self/stat")) {
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

/* linkat(AT_SYMLINK_FOLLOW) of (dir, name) to (to_dir, to_name), the source resolved
   without magic links and not on /proc (*denied = 2 for either), then linked by the
   helper's own name for it. 0 or errno. */
static int link_followed(int dir, const char *name, int to_dir, const char *to_name,
                         int *denied) {
    int src = open_off_proc(dir, name, O_PATH | O_CLOEXEC);
    if (src == PARENT_PROC) {
        *denied = 2;
        return 0;
    }
    if (src < 0)
        return -src;
    char own[32];
    snprintf(own, sizeof own, "self/fd/%d", src);
    int err = linkat(H.proc, own, to_dir, to_name, AT_SYMLINK_FOLLOW) < 0 ? errno : 0;
    close(src);
    return err;
}

/* One name-creating syscall of req, performed by the helper. Returns 0 or an errno;
   *denied is set for a protected name; out becomes REPLY_FD for the opened file of
   OP_CREATE, or REPLY_ELSEWHERE when an opener child answers. */
static int fs_op(const struct seccomp_notif *req, int op, int flags, unsigned int mode,
                 unsigned long long dev, const char *p1, const char *p2, int fd1, int fd2,
                 int own, struct reply *out, int *denied, int *made) {
    char name1[256], name2[256];
    int slash1 = 0, slash2 = 0, par1 = -1, par2 = -1, r = 0, err = 0;
    const char *n1 = name1; /* the name relative to dir1 */
    int dir1 = -1;          /* par1, or the caller's fd1 when no parent was opened */
    *denied = 0;
    *made = 0;
    int empty_link = op == OP_LINK && (flags & AT_EMPTY_PATH) && *p1 == 0;
    if (own || (op == OP_CREATE && !creation_protected_name(p1))) {
        /* a last component that no protected path has cannot make one: the kernel
           resolves the whole path for us (trailing slashes included), as for the caller,
           without magic links (openat2 below) */
        dir1 = fd1;
        n1 = p1;
    } else if (!empty_link && op != OP_SYMLINK) {
        par1 = open_parent(fd1, p1, name1, sizeof name1, &slash1);
        if (par1 == PARENT_PROC) {
            *denied = 2;
            return 0;
        }
        if (par1 < 0)
            return -par1;
        dir1 = par1;
    }
    if (op == OP_LINK || op == OP_RENAME || op == OP_SYMLINK) {
        par2 = open_parent(op == OP_SYMLINK ? fd1 : fd2, op == OP_SYMLINK ? p1 : p2, name2,
                           sizeof name2, &slash2);
        if (par2 == PARENT_PROC) {
            par2 = -1;
            *denied = 2;
            goto done;
        }
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
        int exists = fstatat(dir1, n1, &fst, 0) == 0;
        /* /dev/tty is the caller's controlling terminal, not the helper's */
        if (exists && S_ISCHR(fst.st_mode) && fst.st_rdev == makedev(5, 0)) {
            int r = caller_tty((pid_t)req->pid, flags);
            if (r < 0)
                err = -r;
            else
                *out = (struct reply){REPLY_FD, 0, r};
            break;
        }
        /* an open that may wait (a FIFO for its other end, ...) runs in a child of the
           helper, which answers itself, so the tree's other calls are not held up */
        int in_child = 0;
        if (exists && may_block(&fst)) {
            /* untraced: it is ztsa's, not part of the tree */
            pid_t opener = (pid_t)syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
            if (opener > 0) {
                *out = (struct reply){REPLY_ELSEWHERE, 0, -1};
                break;
            }
            in_child = opener == 0; /* fork failed: open here, blocking */
            /* the opener ends with the helper (which ends with the tree): it must not
               hold the caller's file, or ztsa's stdout, after the run */
            if (in_child && (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
                             getppid() != H.self))
                _exit(0);
        }
        /* never follow a final symlink while creating: a dangling one could name a
           protected path; an existing target is opened without O_CREAT */
        int fd;
        if (own == OWN_BENEATH) {
            struct open_how_ how = {(unsigned long long)flags | O_CLOEXEC, mode,
                                    RESOLVE_BENEATH_ | RESOLVE_NO_MAGICLINKS_};
            fd = (int)syscall(SYS_openat2_, dir1, n1, &how, sizeof how);
        } else if (own == OWN_FD) {
            fd = openat(dir1, n1, flags | O_NOFOLLOW, mode);
            if (fd < 0 && errno == ELOOP && !(flags & (O_NOFOLLOW | O_EXCL)))
                fd = openat(dir1, n1, flags & ~O_CREAT, mode);
        } else {
            /* no magic link on the way (/proc/1/fd/N, /proc/PID/root, ...): through one
               the helper would reach what it holds, not what the caller does */
            struct open_how_ how = {(unsigned long long)(flags | O_NOFOLLOW) | O_CLOEXEC, mode,
                                    RESOLVE_NO_MAGICLINKS_};
            fd = (int)syscall(SYS_openat2_, dir1, n1, &how, sizeof how);
            if (fd < 0 && errno == ELOOP && !(flags & (O_NOFOLLOW | O_EXCL))) {
                how.flags = (unsigned long long)(flags & ~O_CREAT) | O_CLOEXEC;
                how.mode = 0; /* openat2 takes a mode only with O_CREAT */
                fd = (int)syscall(SYS_openat2_, dir1, n1, &how, sizeof how);
                /* a magic link, not a loop of ordinary links (those fail here too) */
                int plain = fd < 0 && errno == ELOOP ? openat(dir1, n1, O_PATH | O_CLOEXEC)
                                                     : -2;
                if (plain >= 0) {
                    close(plain);
                    *denied = 2;
                }
                if (plain != -2)
                    errno = plain >= 0 ? EACCES : ELOOP;
            }
        }
        struct statfs sfs;
        if (fd >= 0 && !own && fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_) {
            close(fd); /* some spelling of /proc: what it names is the helper's view */
            fd = -1;
            errno = EACCES;
            *denied = 2;
        }
        if (fd < 0)
            err = errno;
        else
            *out = (struct reply){REPLY_FD, 0, fd};
        *made = fd >= 0 && !exists && !in_child;
        if (in_child) {
            answer(req, fd < 0 ? (struct reply){REPLY_RESULT, -err, -1} : *out);
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
        if (slash1 && op == OP_MKNOD) {
            err = ENOENT; /* as the kernel answers "name/" for anything but a directory */
            break;
        }
        r = op == OP_MKDIR ? mkdirat(dir1, n1, mode)
                           : mknodat(dir1, n1, mode, (dev_t)dev);
        err = r < 0 ? errno : 0;
        break;
    case OP_SYMLINK:
        /* nor a link named like a directory on the way to one: its target (made beforehand
           anywhere, with the protected names in it) would stand in for that directory */
        if (classify(par2, name2) != 0) {
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
        if (empty_link || !(flags & AT_SYMLINK_FOLLOW)) {
            r = empty_link ? linkat(fd1, "", par2, name2, AT_EMPTY_PATH)
                           : linkat(par1, name1, par2, name2, 0);
            err = r < 0 ? errno : 0;
            break;
        }
        /* the source's last link is followed, but never through a magic link
           (/proc/self/fd/N would be one of the helper's own files): the file is taken
           first, then linked by the helper's own name for it */
        err = link_followed(par1, name1, par2, name2, denied);
        break;
    case OP_RENAME: {
        int src = classify(par1, name1), dst = classify(par2, name2);
        int cfg = dst == 1 && !src ? git_rewrite(par1, name1, par2, name2) : -1;
        if (cfg >= 0) {
            err = git_config_write(cfg, par1, name1);
            if (err == EACCES)
                *denied = 3;
            break;
        }
        /* both names move with RENAME_EXCHANGE, and a rename replaces what the second
           names: the workspace and the directories on the way to it or to a read-only
           path are refused on either side */
        if (same_as(par1, name1, 0, &H.root_st) || same_as(par2, name2, 0, &H.root_st))
            src = 2; /* the workspace itself */
        struct stat st, dst_st;
        int src_dir = fstatat(par1, name1, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
        if ((src_dir && is_ancestor(&st)) ||
            (fstatat(par2, name2, &dst_st, AT_SYMLINK_NOFOLLOW) == 0 &&
             S_ISDIR(dst_st.st_mode) && is_ancestor(&dst_st))) {
            *denied = 4;
            break;
        }
        /* never move a protected path, a directory on the way to one, or the workspace;
           never move a directory into such a place (it could bring protected names) */
        if (src || dst == 1 || (dst == 2 && (src_dir || (flags & 2 /* EXCHANGE */)))) {
            *denied = 1;
            break;
        }
        r = (int)syscall(SYS_renameat2, par1, name1, par2, name2, (unsigned int)flags);
        err = r < 0 ? errno : 0;
        if (r == 0 && (src_dir || (flags & 2)))
            creation_forget(); /* a directory moved: what lies beneath it may be elsewhere now */
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

/* The caller's root as an O_PATH descriptor when it is not the helper's own (a chroot
   or pivot_root inside the tree: a nested sandbox), else -1. */
int helper_caller_root(pid_t pid) {
    char where[32];
    snprintf(where, sizeof where, "%d/root", pid);
    int fd = openat(H.proc, where, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat theirs, mine;
    if (fstat(fd, &theirs) == 0 && stat("/", &mine) == 0 && theirs.st_dev == mine.st_dev &&
        theirs.st_ino == mine.st_ino) {
        close(fd);
        return -1;
    }
    return fd;
}

/* An absolute path of a caller whose root is not the helper's: made relative to a
   descriptor of the caller's root (returned; -1 when nothing changed). The helper then
   works where the caller's kernel would. A ".." above that root is not held at it, as
   the kernel would: it reaches only what the tree reaches anyway. */
static int rebase_absolute(pid_t pid, char *path) {
    if (path[0] != '/')
        return -1;
    int root = helper_caller_root(pid);
    if (root < 0)
        return -1;
    size_t skip = strspn(path, "/");
    memmove(path, path + skip, strlen(path + skip) + 1);
    if (!*path)
        strcpy(path, ".");
    return root;
}

static void close_dirfd(int fd) {
    if (fd >= 0 && fd != H.root)
        close(fd);
}

static int tracee_dirfd(pid_t pid, long long fd, const char *path) {
    if (path[0] == '/')
        return H.root; /* ignored by the kernel for an absolute path; never closed */
    if ((int)fd == AT_FDCWD) {
        char where[64];
        snprintf(where, sizeof where, "%d/cwd", pid);
        int r = openat(H.proc, where, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return r < 0 ? -errno : r;
    }
    return helper_getfd(pid, (int)fd);
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
static struct {
    struct umask_slot slot[UMASK_SLOTS];
    unsigned long long changed, gen;
} U = {.gen = 1};

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static unsigned int tracee_umask_read(pid_t pid);

static unsigned int tracee_umask(pid_t pid) {
    unsigned long long now = now_ns();
    struct umask_slot *slot = &U.slot[(unsigned int)pid % UMASK_SLOTS];
    if (slot->pid == pid && now - slot->since < 1000000000ULL && slot->gen == U.gen)
        return slot->mask;
    unsigned int mask = tracee_umask_read(pid);
    if (now - U.changed > 50000000ULL) {
        slot->pid = pid;
        slot->mask = mask;
        slot->since = now;
        slot->gen = U.gen;
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
    return (unsigned int)proc_status_field(H.proc, pid, "Umask", 8, 022) & 0777;
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
        /* strict UTF-8: no overlong forms (C0, C1, E0 80-9F, F0 80-8F), no surrogates
           (ED A0-BF), nothing past U+10FFFF (F4 90-BF, F5-F7) */
        if (ok && (c == 0xC0 || c == 0xC1 || (c == 0xE0 && s[1] < 0xA0) ||
                   (c == 0xED && s[1] >= 0xA0) || (c == 0xF0 && s[1] < 0x90) ||
                   (c == 0xF4 && s[1] >= 0x90) || c > 0xF4))
            ok = 0;
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

/* pid, of the helper's PID namespace, as the host's /proc numbers it: a pidfd's fdinfo
   shows its pid in the namespace of the /proc it is read through */
static pid_t host_pid(pid_t pid) {
    if (H.host_proc < 0)
        return pid;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return pid;
    char where[64], buf[1024];
    snprintf(where, sizeof where, "self/fdinfo/%d", pidfd);
    int ok = read_proc_at(H.host_proc, where, buf, sizeof buf);
    close(pidfd);
    char *line = ok ? strstr(buf, "\nPid:") : NULL;
    return line ? (pid_t)strtol(line + 5, NULL, 10) : pid;
}

/* deny lines a run writes at most (every denial is still counted): a tree that fails
   in a loop must not fill the disk through ztsa's log */
#define DENY_LINES 10000

static const char *redacted(const char *line);

/* the destinations said on stderr so far (tell_refused): each once */
#define TOLD_MAX 64
static struct {
    char what[TOLD_MAX][160];
    int n;
} told;

/* a name whose last label is digits or 0x-hex (inet_aton reads it as an address), or one
   with a colon: as ztsa.sandbox.policy.is_host_name judges it */
static int address_like(const char *name) {
    if (strchr(name, ':'))
        return 1;
    size_t n = strlen(name);
    while (n && name[n - 1] == '.')
        n--;
    size_t start = n;
    while (start && name[start - 1] != '.')
        start--;
    if (start == n)
        return 0;
    int hex = n - start > 2 && name[start] == '0' && (name[start + 1] | 0x20) == 'x';
    for (size_t i = start + (hex ? 2 : 0); i < n; i++) {
        char c = (char)(name[i] | 0x20);
        if (!(c >= '0' && c <= '9') && !(hex && c >= 'a' && c <= 'f'))
            return 0;
    }
    return 1;
}

static int network_call(const char *call) {
    return strcmp(call, "connect") == 0 || strncmp(call, "send", 4) == 0 ||
           strcmp(call, "dns") == 0;
}

/* A refused destination, on the stderr the tree shares with ztsa, the first time it is
   refused (a person, or an agent waiting on a tool's retries, sees it at once), with
   the flag that would allow it. Never blocks the helper for long: only when the stream
   has room (a line is shorter than PIPE_BUF); after TOLD_MAX destinations, the summary
   names the rest. */
static void tell_refused(const char *call, const char *what, const char *rule) {
    if (!H.plan->tell || !network_call(call) || strncmp(what, "unix:", 5) == 0)
        return;
    for (int i = 0; i < told.n; i++)
        if (strncmp(told.what[i], what, sizeof told.what[0] - 1) == 0)
            return;
    if (told.n == TOLD_MAX)
        return;
    snprintf(told.what[told.n++], sizeof told.what[0], "%s", what);
    char line[512];
    int dns = strcmp(call, "dns") == 0;
    int allow = strncmp(rule, "not in --allow-net", 18) == 0;
    if (allow && dns && address_like(what)) /* a rule for it opens an address, every port */
        allow = 0, rule = "not in --allow-net; an address asked as a name";
    snprintf(line, sizeof line, "ztsa: refused %s %s (%s%s%s)\n", dns ? "the name" : call,
             what, rule, allow ? ": --allow-net " : "", allow ? what : "");
    const char *shown = redacted(line); /* a --secret value in a name is its name */
    size_t n = strlen(shown);
    struct pollfd out = {2, POLLOUT, 0};
    if (n && poll(&out, 1, 0) == 1 && (out.revents & POLLOUT)) {
        ssize_t w = write(2, shown, n < 512 ? n : 511);
        (void)w;
    }
}

void helper_note_denial(unsigned long count, const char *syscall_name, const char *what,
                        const char *rule) {
    tell_refused(syscall_name, what, rule);
    if (count == 0)
        return;
    /* the summary's first few, each destination or path once */
    char entry[512];
    snprintf(entry, sizeof entry, "%s\x1f%s\x1f%s", syscall_name, what, rule);
    for (int i = 0; i < ZTSA_FIRST_DENIALS; i++) {
        char *slot = H.shared->first[i];
        const char *sep = strchr(slot, '\x1f');
        const char *its = sep ? sep + 1 : NULL;
        size_t wl = strlen(what);
        if (its && strncmp(its, what, wl) == 0 && its[wl] == '\x1f')
            return; /* the same destination or path: once */
        if (!slot[0]) {
            snprintf(slot, sizeof H.shared->first[0], "%s", entry);
            return;
        }
    }
}

/* line with every --secret value in it replaced by "[secret NAME]" (a value is plain
   text: an environment value escapes to itself unless it holds quotes or controls) */
static const char *redacted(const char *line) {
    static char out[1 << 17]; /* a 4-byte value may become "[secret NAME]" */
    const char *from = line;
    int any = 0;
    for (int i = 0; i < H.plan->n_secrets && !any; i++)
        any = strlen(H.plan->secrets[i]) >= 4 && strstr(line, H.plan->secrets[i]);
    if (!any)
        return line;
    size_t o = 0;
    while (*from && o + 1 < sizeof out) {
        int hit = -1;
        for (int i = 0; i < H.plan->n_secrets && hit < 0; i++) {
            size_t k = strlen(H.plan->secrets[i]);
            if (k >= 4 && strncmp(from, H.plan->secrets[i], k) == 0)
                hit = i;
        }
        if (hit < 0) {
            out[o++] = *from++;
            continue;
        }
        int n = snprintf(out + o, sizeof out - o, "[secret %s]", H.plan->secret_names[hit]);
        o = n > 0 && (size_t)n < sizeof out - o ? o + (size_t)n : sizeof out - 1;
        from += strlen(H.plan->secrets[hit]);
    }
    out[o] = 0;
    return out;
}

/* One audit line: the schema, time and run, then event and fields (JSON members,
   already escaped); --secret values redacted. */
void helper_log_event(const char *event, const char *fields) {
    if (H.plan->log_fd < 0)
        return;
    static char line[16384];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int n = snprintf(line, sizeof line,
                     "{\"schema\":\"ztsa.audit/v1\",\"time\":%lld.%06ld,\"run\":\"%s\","
                     "\"event\":\"%s\",%s}\n",
                     (long long)ts.tv_sec, ts.tv_nsec / 1000, H.plan->run_id ? H.plan->run_id : "",
                     event, fields);
    if (n > 0 && (size_t)n < sizeof line) {
        const char *out = redacted(line);
        ssize_t ignored = write(H.plan->log_fd, out, strlen(out));
        (void)ignored;
    }
}

unsigned long helper_count_denial(void) {
    return __atomic_add_fetch(&H.shared->denials, 1, __ATOMIC_RELAXED);
}

int helper_may_log(unsigned long count) { return count <= DENY_LINES; }

unsigned long helper_count_would(void) {
    return __atomic_add_fetch(&H.shared->would, 1, __ATOMIC_RELAXED);
}

const struct ztsa_plan *helper_plan(void) { return H.plan; }

void helper_count_connect(void) { __atomic_fetch_add(&H.shared->connects, 1, __ATOMIC_RELAXED); }

void helper_json(const char *in, char *out, size_t size) { json_escape(in, out, size); }

int helper_tgid(pid_t pid) {
    return (int)proc_status_field(H.proc, pid, "Tgid", 10, pid);
}

/* The host's numbers of a thread of the tree and of its process, for log lines: found
   once (two /proc reads), then kept with a pidfd of the thread, whose poll says whether
   that thread still lives (a pid of the tree's namespace is reused only after) */
#define NAMES 64
static struct thread_entry {
    pid_t tree;
    int pidfd;              /* of that very thread (PIDFD_THREAD), 0: free */
    int host_tid, host_tgid; /* 0: not found yet */
    unsigned long long used;
} names[NAMES];
static unsigned long long names_clock;

/* the entry of a live thread pid (fresh: a new pidfd, for a thread that may be another
   one than the entry's, its pid reused); NULL when no pidfd can be had */
static struct thread_entry *thread_entry(pid_t pid, int fresh) {
    int oldest = 0;
    for (int i = 0; i < NAMES; i++) {
        if (names[i].pidfd > 0 && names[i].tree == pid) {
            if (!fresh) {
                names[i].used = ++names_clock;
                return &names[i];
            }
            oldest = i;
            break;
        }
        if (names[i].used < names[oldest].used)
            oldest = i;
    }
    int pidfd = (int)syscall(SYS_pidfd_open, pid, PIDFD_THREAD);
    if (pidfd < 0)
        return NULL;
    struct thread_entry *e = &names[oldest];
    if (e->pidfd > 0)
        close(e->pidfd);
    *e = (struct thread_entry){pid, pidfd, 0, 0, ++names_clock};
    return e;
}

/* a descriptor of a thread of the tree, through the thread's kept pidfd: one system
   call where pidfd_open, pidfd_getfd and close were three. A pidfd of a thread that
   ended answers ESRCH (or EBADF), and is then made anew: the pid may be another
   thread's now. */
int helper_getfd(pid_t pid, int fd) {
    for (int fresh = 0; fresh < 2; fresh++) {
        struct thread_entry *e = thread_entry(pid, fresh);
        if (!e)
            return ztsa_pidfd_getfd(pid, fd);
        int got = (int)syscall(SYS_pidfd_getfd, e->pidfd, fd, 0);
        if (got >= 0)
            return got;
        if (errno != ESRCH && (errno != EBADF || fresh))
            return -errno; /* EBADF of a kept pidfd: its thread may have ended */
    }
    return -ESRCH;
}

static void host_names(pid_t pid, int *tid, int *tgid) {
    if (H.host_proc < 0) { /* no PID namespace: the numbers are the host's already */
        *tid = pid;
        *tgid = helper_tgid(pid);
        return;
    }
    struct thread_entry *e = thread_entry(pid, 0);
    struct pollfd p = {e ? e->pidfd : -1, POLLIN, 0};
    if (e && poll(&p, 1, 0) != 0) /* ended: the pid may be another thread's now */
        e = thread_entry(pid, 1);
    if (e && e->host_tid) {
        *tid = e->host_tid;
        *tgid = e->host_tgid;
        return;
    }
    *tid = host_pid(pid);
    *tgid = host_pid(helper_tgid(pid));
    if (e) {
        e->host_tid = *tid;
        e->host_tgid = *tgid;
    }
}

int helper_host_pid(pid_t pid) {
    int tid, tgid;
    host_names(pid, &tid, &tgid);
    return tid;
}

int helper_host_tgid(pid_t pid) {
    int tid, tgid;
    host_names(pid, &tid, &tgid);
    return tgid;
}

const char *helper_errno_name(int e) {
    switch (e) {
    case 0: return "0";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EINPROGRESS: return "EINPROGRESS";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ENETUNREACH: return "ENETUNREACH";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case EADDRINUSE: return "EADDRINUSE";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EPIPE: return "EPIPE";
    case EAGAIN: return "EAGAIN";
    case EBADF: return "EBADF";
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EISCONN: return "EISCONN";
    case EMSGSIZE: return "EMSGSIZE";
    default: return "error";
    }
}

static int fd_dir = -1;

int helper_enter_fd_dir(void) {
    fd_dir = openat(H.proc, "self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd_dir < 0 || fchdir(fd_dir) < 0)
        return -EACCES;
    return 0;
}

void helper_leave_fd_dir(void) {
    if (fd_dir >= 0)
        close(fd_dir);
    fd_dir = -1;
    if (fchdir(H.root) < 0)
        _exit(1);
}

static void log_denial(pid_t pid, const char *syscall_name, const char *p1, const char *p2,
                       const char *rule) {
    unsigned long count = __atomic_add_fetch(&H.shared->denials, 1, __ATOMIC_RELAXED);
    helper_note_denial(count, syscall_name, p1, rule);
    if (H.plan->log_fd < 0 || count > DENY_LINES + 1)
        return;
    if (count == DENY_LINES + 1) {
        syscall_name = "(more)";
        p1 = p2 = "";
        rule = "later denials are counted in the summary, not logged";
    }
    pid = helper_host_pid(pid);
    static char e1[4 * 4096 * 2], e2[4 * 4096 * 2], line[sizeof e1 + sizeof e2 + 512];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_escape(p1, e1, sizeof e1);
    json_escape(p2, e2, sizeof e2);
    int n = snprintf(line, sizeof line,
                     "{\"schema\":\"ztsa.audit/v1\",\"time\":%lld.%06ld,\"run\":\"%s\","
                     "\"event\":\"deny\",\"pid\":%d,\"syscall\":\"%s\","
                     "\"path\":\"%s%s%s\",\"rule\":\"%s\"}\n",
                     (long long)ts.tv_sec, ts.tv_nsec / 1000, H.plan->run_id ? H.plan->run_id : "",
                     pid, syscall_name, e1, *p2 ? " -> " : "", e2, rule);
    if (n > 0) {
        ssize_t ignored = write(H.plan->log_fd, line, (size_t)n < sizeof line ? (size_t)n
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
    {ZTSA_NR_open, "open", OP_CREATE, -1, 0, -1, -1, 1, 2},
    {ZTSA_NR_creat, "creat", OP_CREATE, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_openat, "openat", OP_CREATE, 0, 1, -1, -1, 2, 3},
    {ZTSA_NR_mkdir, "mkdir", OP_MKDIR, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_mkdirat, "mkdirat", OP_MKDIR, 0, 1, -1, -1, -1, 2},
    {ZTSA_NR_mknod, "mknod", OP_MKNOD, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_mknodat, "mknodat", OP_MKNOD, 0, 1, -1, -1, -1, 2},
    {ZTSA_NR_symlink, "symlink", OP_SYMLINK, -1, 1, -1, -1, -1, -1},
    {ZTSA_NR_symlinkat, "symlinkat", OP_SYMLINK, 1, 2, -1, -1, -1, -1},
    {ZTSA_NR_link, "link", OP_LINK, -1, 0, -1, 1, -1, -1},
    {ZTSA_NR_linkat, "linkat", OP_LINK, 0, 1, 2, 3, 4, -1},
    {ZTSA_NR_rename, "rename", OP_RENAME, -1, 0, -1, 1, -1, -1},
    {ZTSA_NR_renameat, "renameat", OP_RENAME, 0, 1, 2, 3, -1, -1},
    {ZTSA_NR_renameat2, "renameat2", OP_RENAME, 0, 1, 2, 3, 4, -1},
};

/* The caller's names for itself (/dev/stdout, /dev/fd/N, /proc/self/..., and
   /proc/thread-self/...) would mean the helper if the helper opened them: each becomes a
   path beneath the caller's own directory of the helper's /proc. OWN_FD: "fd/N", whose
   magic link is the caller's file; OWN_BENEATH: anything else there, opened with neither
   ".." nor magic links. Every other open the helper makes that lands on procfs is
   refused (fs_op), whatever its spelling. */
static int own_path(const char *path, char *rest, size_t size) {
    static const struct { const char *from; const char *to; } map[] = {
        {"/dev/stdin", "fd/0"}, {"/dev/stdout", "fd/1"}, {"/dev/stderr", "fd/2"},
        {"/dev/fd/", "fd/"}, {"/proc/self/", ""}, {"/proc/thread-self/", ""},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t n = strlen(map[i].from);
        int exact = map[i].from[n - 1] != '/';
        if (strncmp(path, map[i].from, n) != 0 || (exact && path[n] != 0))
            continue;
        int k = snprintf(rest, size, "%s%s", map[i].to, path + n);
        if (k <= 0 || (size_t)k >= size)
            return OWN_BENEATH; /* too long: openat2 gets the truncated name, and fails */
        const char *d = rest + 3;
        if (strncmp(rest, "fd/", 3) != 0 || !*d)
            return OWN_BENEATH;
        while (*d >= '0' && *d <= '9')
            d++;
        return *d ? OWN_BENEATH : OWN_FD;
    }
    return OWN_NONE;
}

/* ---- connects answered by the helper (the fast mode: no audit log, no wildcards) ---- */

/* bind(2) of a Unix socket to a path makes a name without any other syscall the filter
   sees. Where the second ruleset lets the tree make names, the kernel binds for the
   caller; in a chain directory (where it would refuse), and everywhere without a second
   ruleset or with a log, the helper refuses a protected name and binds the others
   itself, on a duplicate of the caller's socket, from its own copy of the address.
   Other families, abstract names and autobind name nothing. */
/* With a network namespace, a bind the kernel would answer by itself is made here on
   the helper's duplicate, from the copy: a CONTINUE would let the kernel look the
   descriptor up again (another thread may have put a host socket there) */
static struct reply bind_here(const struct seccomp_notif *req, const void *sa,
                              unsigned int len) {
    int sock = helper_getfd((pid_t)req->pid, (int)(unsigned int)req->data.args[0]);
    if (sock < 0)
        return RESULT(sock == -ESRCH ? -ESRCH : -EBADF);
    long r = net_is_host(sock) ? -EINVAL /* bound already: a socket the helper connected */
             : bind(sock, sa, len) < 0 ? -errno : 0;
    close(sock);
    return RESULT(r);
}

static struct reply bind_notification(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    unsigned int len = (unsigned int)req->data.args[2];
    struct sockaddr_un sa;
    size_t head = offsetof(struct sockaddr_un, sun_path);
    if (len > sizeof sa)
        return H.plan->netns ? RESULT(-EINVAL) : CONTINUE;
    if (len <= head && !H.plan->netns) /* no path: the kernel answers (EINVAL for a bad
                                           length, or an autobind) */
        return CONTINUE;
    memset(&sa, 0, sizeof sa);
    struct iovec local = {&sa, len};
    struct iovec remote = {(void *)(unsigned long)req->data.args[1], len};
    if (len && process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
        return H.plan->netns ? RESULT(-EFAULT) : CONTINUE;
    if (len <= head)
        return bind_here(req, &sa, len);
    if (sa.sun_family != AF_UNIX || sa.sun_path[0] == 0)
        return H.plan->netns ? bind_here(req, &sa, len) : CONTINUE;
    char path[sizeof sa.sun_path + 1];
    size_t plen = strnlen(sa.sun_path, len - head);
    memcpy(path, sa.sun_path, plen);
    path[plen] = 0;
    /* with a network namespace, never the caller's kernel: it would look the
       descriptor and the address up again (a host socket there, AF_INET in the bytes) */
    if (!H.plan->netns && creation_in_caller(pid, AT_FDCWD, path))
        return CONTINUE;
    int fd1 = tracee_dirfd(pid, AT_FDCWD, path);
    if (fd1 < 0)
        return RESULT(fd1);
    int sock = helper_getfd(pid, (int)(unsigned int)req->data.args[0]);
    unsigned long long id = req->id;
    if (sock < 0 || ioctl(H.lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
        close_dirfd(fd1);
        if (sock >= 0)
            close(sock);
        return RESULT(sock < 0 ? sock : -ESRCH); /* not a socket: bind(2) would say so */
    }
    char name[256];
    int slash = 0;
    int par = open_parent(fd1, path, name, sizeof name, &slash);
    close_dirfd(fd1);
    long result;
    if (H.plan->netns && net_is_host(sock)) {
        result = -EINVAL; /* bound already: a socket the helper connected */
    } else if (par == PARENT_PROC) {
        log_denial(pid, "bind", path, "", "a /proc file the helper would open as itself");
        result = -EACCES;
    } else if (par < 0) {
        result = par;
    } else if (slash) {
        result = -ENOENT; /* as the kernel answers a socket path with a trailing slash */
    } else if (classify(par, name) == 1) {
        log_denial(pid, "bind", path, "", "protected agent file");
        result = -EACCES;
    } else {
        use_umask_of(pid);
        struct sockaddr_un mine = {AF_UNIX, {0}};
        snprintf(mine.sun_path, sizeof mine.sun_path, "%.*s", (int)sizeof mine.sun_path - 1, name);
        /* the helper's cwd is its own: bound by name in the parent it opened */
        long r = fchdir(par) == 0 ? bind(sock, (struct sockaddr *)&mine, sizeof mine) : -1;
        result = r < 0 ? -errno : 0;
        if (fchdir(H.root) < 0)
            _exit(1);
    }
    if (par >= 0)
        close(par);
    close(sock);
    return RESULT(result);
}

/* A connect, decided by ztsa_decide (allow.c, the decision every path uses) and
   performed here on a duplicate of the caller's socket from the helper's own copy of
   the address: nothing the tree rewrites afterwards reaches the kernel. A Unix path is
   resolved once (ztsa_unix_open) and connected through /proc/self/fd/N, the same file. */
static long connect_notification(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    int fd = (int)(unsigned int)req->data.args[0];
    unsigned int len = (unsigned int)req->data.args[2];
    unsigned char sa[128];
    if (len > sizeof sa)
        return -EINVAL;
    if (len) {
        struct iovec local = {sa, len};
        struct iovec remote = {(void *)(unsigned long)req->data.args[1], len};
        if (process_vm_readv(pid, &local, 1, &remote, 1, 0) != (ssize_t)len)
            return -EFAULT;
    }
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    unsigned long long id = req->id;
    if (ioctl(H.lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
        close(dup);
        return -ESRCH;
    }
    unsigned short family = 0xffff;
    if (len >= 2)
        memcpy(&family, sa, 2);
    const void *addr = sa;
    unsigned int addrlen = len;
    int pathfd = -1;
    char real[4097] = "";
    struct sockaddr_un target;
    if (family == AF_UNIX && len > 2 && sa[2] != 0) {
        pathfd = unix_open_at(H.proc, pid, (const char *)sa + 2, len - 2, real, sizeof real);
        if (pathfd < 0) {
            close(dup);
            return pathfd; /* no such socket: the caller's connect fails the same way */
        }
        /* connected as "N" from the helper's own fd directory of its /proc (the tree's
           /proc does not show the helper) */
        memset(&target, 0, sizeof target);
        target.sun_family = AF_UNIX;
        int k = snprintf(target.sun_path, sizeof target.sun_path, "%d", pathfd);
        addr = &target;
        addrlen = (unsigned int)(offsetof(struct sockaddr_un, sun_path) + (size_t)k + 1);
    }
    int rule;
    int why = ztsa_decide(&H.plan->allow, ZTSA_CALL_CONNECT, -1, sa, len,
                          pathfd >= 0 ? real : NULL, &rule);
    const char *why_text = NULL;
    if (H.plan->netns && pathfd >= 0)
        why = net_unix_decide(pid, pathfd, ZTSA_CALL_CONNECT, sa, len, real, &why_text);
    else if (H.plan->audit && why < 0 && why != ZTSA_DENY_UNNAMED && family == AF_UNIX)
        why = net_audit_unix(pid, why, len > 3 ? "(abstract)" : "", ZTSA_CALL_CONNECT,
                             &why_text);
    long result;
    int host = H.plan->netns && net_is_host(dup);
    int abstract = family == AF_UNIX && len > 2 && sa[2] == 0;
    if (H.plan->netns && abstract && (why > 0 ? !host : host)) {
        /* an abstract name: the tree's own namespace has its own (connected on the tree's
           socket, below); one --allow-unix names is the host's, reached by a socket of
           the helper's; a host socket reaches no other */
        result = why > 0 ? net_swap_connect(req, dup, fd, sa, len,
                                            why_text ? why_text : "--allow-unix")
                         : -EPERM;
    } else if (why == ZTSA_DENY_UNNAMED) {
        result = -EINVAL; /* as the kernel answers an address without a path */
    } else if (why > 0 || (H.plan->netns && abstract)) {
        int here = pathfd >= 0 ? openat(H.proc, "self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC)
                               : -1;
        /* never blocking the helper: a full backlog is tried again soon (NET_WAIT) */
        int flags = fcntl(dup, F_GETFL);
        if (flags >= 0 && !(flags & O_NONBLOCK))
            fcntl(dup, F_SETFL, flags | O_NONBLOCK);
        long r = pathfd >= 0 && (here < 0 || fchdir(here) < 0)
                     ? -1 : syscall(SYS_connect, dup, addr, addrlen);
        result = r < 0 ? -errno : r;
        if (flags >= 0 && !(flags & O_NONBLOCK))
            fcntl(dup, F_SETFL, flags);
        if ((result == -EAGAIN || result == -EINPROGRESS) && flags >= 0 && !(flags & O_NONBLOCK))
            result = net_wait(-1);
        if (here >= 0) {
            close(here);
            if (fchdir(H.root) < 0)
                _exit(1);
        }
        if (why <= 0)
            why = 1; /* the tree's own abstract name */
    } else {
        result = -EPERM;
        unsigned long count = __atomic_add_fetch(&H.shared->denials, 1, __ATOMIC_RELAXED);
        char shown[4200] = "";
        if (family == AF_INET && len >= sizeof(struct sockaddr_in)) {
            const struct sockaddr_in *in = (const void *)sa;
            char ip[INET_ADDRSTRLEN] = "";
            inet_ntop(AF_INET, &in->sin_addr, ip, sizeof ip);
            snprintf(shown, sizeof shown, "%s:%u", ip, ntohs(in->sin_port));
        } else if (family == AF_INET6 && len >= sizeof(struct sockaddr_in6)) {
            const struct sockaddr_in6 *in6 = (const void *)sa;
            char ip[INET6_ADDRSTRLEN] = "";
            inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof ip);
            snprintf(shown, sizeof shown, "[%s]:%u", ip, ntohs(in6->sin6_port));
        } else if (family == AF_UNIX) {
            snprintf(shown, sizeof shown, "unix:%s", real[0] ? real : "(abstract)");
        }
        helper_note_denial(count, "connect", shown, why == -1 ? "not in --allow-net"
                                                    : why_text ? why_text
                                                               : "Unix socket not allowed");
    }
    __atomic_fetch_add(&H.shared->connects, 1, __ATOMIC_RELAXED);
    if (H.plan->netns && H.plan->log_fd >= 0 && family == AF_UNIX && why != ZTSA_DENY_UNNAMED) {
        /* the helper decides every connect of the tree's: its line too */
        char where[4200];
        if (pathfd >= 0)
            snprintf(where, sizeof where, "%s", real);
        else
            snprintf(where, sizeof where, "@%.*s", len > 3 ? (int)(len - 3) : 0,
                     (const char *)sa + 3);
        int type = -1;
        socklen_t tl = sizeof type;
        getsockopt(dup, SOL_SOCKET, SO_TYPE, &type, &tl);
        const char *text = why_text ? why_text : why > 0 ? "allowed" : "Unix socket not allowed";
        if (result != NET_WAIT)
            net_log(why > 0 ? "connect" : "deny", pid, "connect", AF_UNIX, where, type,
                    text, result);
    }
    if (pathfd >= 0)
        close(pathfd);
    close(dup);
    return result;
}

/* A umask(2) of the tree: noted (its argument is a register, nothing to race), then
   run by the kernel as asked. */
static struct reply umask_notification(const struct seccomp_notif *req) {
    U.changed = now_ns();
    U.gen++;
    struct umask_slot *slot = &U.slot[(unsigned int)req->pid % UMASK_SLOTS];
    slot->pid = (pid_t)req->pid;
    slot->mask = (unsigned int)req->data.args[0] & 0777;
    slot->since = U.changed;
    slot->gen = U.gen;
    return CONTINUE;
}

static struct reply decide(const struct seccomp_notif *req);

/* How to answer one notification. */
static struct reply decide(const struct seccomp_notif *req) {
    static char p1[4097], p2[4097];
    int nr = (int)req->data.nr;
    if (H.plan->netns && (nr == ZTSA_NR_connect || nr == ZTSA_NR_bind || nr == ZTSA_NR_sendto ||
                          nr == ZTSA_NR_sendmsg || nr == ZTSA_NR_sendmmsg ||
                          nr == ZTSA_NR_listen)) {
        long r = net_notification(req);
        if (r == NET_WAIT)
            return waits_later(req) < 0 ? RESULT(-EAGAIN)
                                        : (struct reply){REPLY_ELSEWHERE, 0, -1};
        if (r == NET_DEFER)
            return (struct reply){REPLY_ELSEWHERE, 0, -1};
        if (r != NET_UNIX)
            return RESULT(r);
    }
    if (req->data.nr == ZTSA_NR_connect) { /* when the plan gives the helper connects */
        long r = connect_notification(req);
        return r == NET_WAIT    ? (waits_later(req) < 0 ? RESULT(-EAGAIN)
                                                    : (struct reply){REPLY_ELSEWHERE, 0, -1})
               : r == NET_DEFER ? (struct reply){REPLY_ELSEWHERE, 0, -1}
                                : RESULT(r);
    }
    if (req->data.nr == ZTSA_NR_bind)
        return bind_notification(req);
    if (req->data.nr == ZTSA_NR_umask)
        return umask_notification(req);
    if (H.plan->audit) {
        audit_fs(req);
        int at = req->data.nr == ZTSA_NR_open ? 1 : 2;
        if ((req->data.nr == ZTSA_NR_open || req->data.nr == ZTSA_NR_openat) &&
            !(req->data.args[at] & (O_CREAT | O_WRONLY | O_RDWR | O_TRUNC)))
            return CONTINUE; /* a read, sent here only to be judged */
    }
    if ((req->data.nr == ZTSA_NR_open || req->data.nr == ZTSA_NR_openat) &&
        (req->data.args[req->data.nr == ZTSA_NR_open ? 1 : 2] & O_PATH))
        return CONTINUE; /* open and openat drop O_CREAT (and O_TRUNC) beside O_PATH: the
                            kernel makes and writes nothing, and the flags are registers
                            of the waiting caller, which no thread can rewrite */
    if (meta_call_name((int)req->data.nr) &&
        !((req->data.nr == ZTSA_NR_open || req->data.nr == ZTSA_NR_openat) &&
          (req->data.args[req->data.nr == ZTSA_NR_open ? 1 : 2] & O_CREAT))) {
        int cont;
        long r = meta_notification(req, &cont);
        return cont ? CONTINUE : RESULT(r);
    }
    const struct fs_call *call = NULL;
    for (size_t i = 0; i < sizeof FS_CALLS / sizeof FS_CALLS[0]; i++)
        if (FS_CALLS[i].nr == req->data.nr)
            call = &FS_CALLS[i];
    if (!call)
        return RESULT(-ENOSYS);
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    int flags = call->flags >= 0 ? (int)a[call->flags] : 0;
    if (call->nr == ZTSA_NR_creat)
        flags = O_CREAT | O_WRONLY | O_TRUNC;
    unsigned int mode = call->mode >= 0 ? (unsigned int)a[call->mode] : 0;
    int err = read_string(pid, a[call->path1], p1, sizeof p1);
    if (!err && call->path2 >= 0)
        err = read_string(pid, a[call->path2], p2, sizeof p2);
    if (!err && call->op == OP_SYMLINK)
        err = read_string(pid, a[0], p2, sizeof p2); /* the link's target */
    if (err)
        return RESULT(-err);
    if (call->path2 < 0 && call->op != OP_SYMLINK)
        p2[0] = 0;
    /* no setuid or setgid file is made (the filter refuses chmod to them): a tree of
       root's would leave a way to root for anyone */
    int set_id = (call->op == OP_CREATE || call->op == OP_MKNOD) && (mode & 06000);
    mode &= set_id ? ~06000U : ~0U;
    if (call->op == OP_CREATE && !set_id &&
        creation_in_caller(pid, call->dirfd1 >= 0 ? (long long)a[call->dirfd1] : AT_FDCWD, p1))
        return CONTINUE; /* the kernel performs it, as the caller's ruleset allows */
    static char rest[4097];
    int own = call->op == OP_CREATE ? own_path(p1, rest, sizeof rest) : OWN_NONE;
    int empty_ok = call->op == OP_LINK && (flags & AT_EMPTY_PATH);
    if ((!p1[0] && !empty_ok) || (call->path2 >= 0 && !p2[0]))
        return RESULT(-ENOENT);
    int fd1;
    if (own) { /* beneath the caller's own directory of the helper's /proc */
        char dir[32];
        snprintf(dir, sizeof dir, "%d", pid);
        fd1 = openat(H.proc, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        fd1 = fd1 < 0 ? -errno : fd1;
        memcpy(p1, rest, sizeof rest);
    } else {
        fd1 = rebase_absolute(pid, p1);
        if (fd1 == -1)
            fd1 = tracee_dirfd(pid, call->dirfd1 >= 0 ? (long long)a[call->dirfd1] : AT_FDCWD,
                               p1);
    }
    if (fd1 < 0)
        return RESULT(fd1);
    int fd2 = -1;
    if (call->path2 >= 0) {
        fd2 = rebase_absolute(pid, p2);
        if (fd2 == -1)
            fd2 = tracee_dirfd(pid, call->dirfd2 >= 0 ? (long long)a[call->dirfd2] : AT_FDCWD,
                               p2);
        if (fd2 < 0) {
            close_dirfd(fd1);
            return RESULT(fd2);
        }
    }
    /* the paths and descriptors are ours now; is the request still the one we read? */
    unsigned long long id = req->id;
    if (ioctl(H.lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0) {
        close_dirfd(fd1);
        close_dirfd(fd2);
        return RESULT(-ESRCH);
    }
    use_umask_of(pid);
    int denied = 0;
    unsigned long long dev = call->nr == ZTSA_NR_mknod     ? a[2]
                             : call->nr == ZTSA_NR_mknodat ? a[3]
                                                           : 0;
    struct reply out = RESULT(0);
    int made = 0;
    err = fs_op(req, call->op, flags, mode, dev, p1, p2, fd1, fd2 >= 0 ? fd2 : fd1, own, &out,
                &denied, &made);
    close_dirfd(fd1);
    close_dirfd(fd2);
    if (made && !set_id && out.kind == REPLY_FD && !own && creation_may_continue() &&
        !(flags & (O_EXCL | O_DIRECTORY)) && (flags & O_TMPFILE) != O_TMPFILE) {
        /* the helper made the file (a name its checks allow); the caller's kernel opens
           it, now existing, with the caller's flags: an ADDFD reply costs a wake-up of the
           caller on another CPU, a CONTINUE does not. A path rewritten meanwhile reaches
           only what CMD's second ruleset lets the tree make or open itself, as for every
           CONTINUE'd creation (creation.c). Never for a set-id mode: the caller's kernel
           would create a rewritten path with the mode in the caller's registers, which
           only the helper's copy has without those bits. Only when the file's mode lets
           its owner open it so: opening an existing file checks what creating it did not
           (0444 with O_RDWR) */
        struct stat st;
        int acc = flags & O_ACCMODE;
        unsigned int need = (acc == O_RDONLY ? 0400U : acc == O_WRONLY ? 0200U : 0600U) |
                            (flags & O_TRUNC ? 0200U : 0U);
        int reopenable = fstat(out.fd, &st) == 0 && S_ISREG(st.st_mode) &&
                         (st.st_mode & need) == need;
        if (reopenable) {
            close(out.fd);
            return CONTINUE;
        }
    }
    if (denied) {
        log_denial(pid, call->name, p1, call->op == OP_SYMLINK ? "" : p2,
                   denied == 2   ? "a /proc file the helper would open as itself"
                   : denied == 3 ? "a git config key that git does not write in ordinary "
                                   "work (it could run a program)"
                   : denied == 4 ? "a directory on the way to the workspace or the audit log"
                                 : "protected agent file");
        return RESULT(-EACCES);
    }
    if (out.kind == REPLY_RESULT && (err == EACCES || err == EROFS || err == EPERM))
        /* the kernel refused it (Landlock, the read-only system, permissions): the
           file system's denials the helper sees are counted and logged too */
        log_denial(pid, call->name, p1, call->op == OP_SYMLINK ? "" : p2,
                   err == EROFS ? "read-only outside the writable places"
                                : "refused by the kernel (Landlock or permissions)");
    return out.kind == REPLY_RESULT ? RESULT(-err) : out;
}

/* Send the reply: the opened file (ADDFD, placed as the syscall's result), a result,
   or CONTINUE (the caller's kernel performs the call). */
static void answer(const struct seccomp_notif *req, struct reply r) {
    static char resp_buf[4096];
    struct seccomp_notif_resp *resp = (struct seccomp_notif_resp *)resp_buf;
    if (r.kind == REPLY_ELSEWHERE)
        return;
    if (r.kind == REPLY_FD) {
        struct seccomp_notif_addfd add;
        memset(&add, 0, sizeof add);
        add.id = req->id;
        add.flags = SECCOMP_ADDFD_FLAG_SEND;
        add.srcfd = (unsigned int)r.fd;
        add.newfd_flags = req->data.nr == ZTSA_NR_creat ? 0 : (unsigned int)(
            req->data.args[req->data.nr == ZTSA_NR_openat ? 2 : 1] & O_CLOEXEC);
        int ok = ioctl(H.lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
        close(r.fd);
        if (ok >= 0 || errno == ENOENT)
            return;
        r = RESULT(-errno);
    }
    memset(resp, 0, H.resp_size);
    resp->id = req->id;
    resp->val = 0;
    resp->error = r.kind == REPLY_CONTINUE ? 0 : (int)r.result;
    if (r.kind == REPLY_CONTINUE)
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(H.lfd, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

void helper_main(const struct ztsa_plan *plan, int lfd, int root, int proc, int host_proc,
                 struct ztsa_shared *shared, const int *net) {
    H.host_proc = host_proc;
    H.plan = plan;
    H.self = getpid();
    H.lfd = lfd;
    H.root = root;
    H.proc = proc;
    H.shared = shared;
    if (fstat(root, &H.root_st) < 0)
        _exit(127);
    int noted = note_ancestors(plan->workspace);
    for (int i = 0; noted == 0 && i < plan->n_ro; i++)
        noted = note_ancestors(plan->ro_paths[i]);
    if (noted < 0)
        _exit(127);
    /* the kernel's sizes first: the deferred answers (waits.c) keep whole copies of
       notifications, so they must know a notification's size before anything defers */
    struct seccomp_notif_sizes sizes;
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
        _exit(1);
    size_t req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif)
                          ? sizes.seccomp_notif : sizeof(struct seccomp_notif);
    H.req_size = req_size;
    H.resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
                      ? sizes.seccomp_notif_resp : sizeof(struct seccomp_notif_resp);
    static char req_buf[4096];
    if (req_size > sizeof req_buf || H.resp_size > 4096)
        _exit(1);
    if (plan->netns) {
        net_init(plan, lfd, net);
        if (waits_init(lfd, req_size) < 0)
            _exit(1);
    }
    struct seccomp_notif *req = (struct seccomp_notif *)req_buf;
    /* Linux 6.6+: the caller and the helper switch on one CPU instead of waking each
       other across CPUs (an interprocessor interrupt per syscall); older: ignored. The
       flag wakes a poll on the listener the same way. */
    int sync = ioctl(lfd, NOTIF_SET_FLAGS, (unsigned long long)NOTIF_SYNC_WAKE_UP) == 0;
    if (plan->netns)
        sync = 0; /* still poll: the DNS service's sockets are polled beside the listener */
    for (;;) {
        /* with SYNC_WAKE_UP (Linux 6.6+), RECV itself waits, and returns (ENOENT) once
           no process uses the filter: no poll before each RECV. Older: poll for POLLHUP
           first. */
        static struct pollfd fds[1 + 32 + 256 + 256];
        fds[0] = (struct pollfd){lfd, POLLIN, 0};
        int n_dns = plan->netns ? dns_poll_fds(fds + 1, 32) : 0;
        int n_net = plan->netns ? waits_connect_fds(fds + 1 + n_dns, 256) : 0;
        int timeout = -1;
        if (plan->netns) {
            int t1 = dns_timeout_ms(), t2 = waits_connect_timeout_ms();
            timeout = t1 < 0 ? t2 : t2 < 0 ? t1 : t1 < t2 ? t1 : t2;
        }
        int n_retry = plan->netns ? waits_later_fds(fds + 1 + n_dns + n_net, 256, &timeout) : 0;
        int nfds = 1 + n_dns + n_net + n_retry;
        if (!sync && poll(fds, (nfds_t)nfds, timeout) < 0) {
            if (errno == EINTR)
                continue;
            _exit(1);
        }
        if (plan->netns) {
            dns_ready(fds + 1, n_dns);
            waits_connect_ready(fds + 1 + n_dns, n_net);
            waits_later_ready(fds + 1 + n_dns + n_net, n_retry);
        }
        struct pollfd pfd = fds[0];
        if (!sync && !(pfd.revents & POLLIN)) {
            if (pfd.revents & (POLLHUP | POLLERR))
                _exit(0); /* the tree is gone */
            continue;
        }
        memset(req, 0, req_size);
        if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0) {
            if (sync && errno != EINTR && poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP))
                _exit(0);
            continue; /* EINTR, or the caller died (ENOENT) */
        }
        answer(req, decide(req));
    }
}

/* ---- for metadata.c, which runs in the helper too ---- */

int helper_proc(void) { return H.proc; }

int helper_read_string(pid_t pid, unsigned long long addr, char *buf, size_t size) {
    return read_string(pid, addr, buf, size);
}

int helper_dirfd(pid_t pid, long long fd, const char *path) {
    return tracee_dirfd(pid, fd, path);
}

void helper_close_dirfd(int fd) { close_dirfd(fd); }

/* for the tests (ztsa_native.h): the escaping of the tree's names and paths in log
   lines, and the reading of a path that names the caller's own /proc entries */
void ztsa_json_escape(const char *in, char *out, size_t size) {
    if (size)
        json_escape(in, out, size);
}

int ztsa_own_path(const char *path, char *rest, size_t size) {
    return size ? helper_own_path(path, rest, size) : -1;
}

int helper_own_path(const char *path, char *rest, size_t size) {
    int own = own_path(path, rest, size);
    return own == OWN_NONE ? 0 : own == OWN_FD ? HELPER_OWN_FD : HELPER_OWN_BENEATH;
}

void helper_log_denial(pid_t pid, const char *syscall_name, const char *p1, const char *p2,
                       const char *rule) {
    log_denial(pid, syscall_name, p1, p2, rule);
}

void helper_redo(const struct seccomp_notif *req) { answer(req, decide(req)); }

int helper_still_valid(unsigned long long id) {
    return ioctl(H.lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

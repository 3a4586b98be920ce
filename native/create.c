/* Runs in the file helper: the name-creating system calls of the tree (open/openat/
   creat with O_CREAT, mkdir, mknod, symlink, link, rename and their *at forms),
   performed by the helper from its own copies of the arguments, one function per
   operation. It creates, links and renames names in the tree's file systems, as the
   tree's credentials and first Landlock domain allow, never a protected name
   (paths.c); an open that may wait runs in an opener child of the helper's. */
#include "helper.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#ifndef CLONE_UNTRACED
#define CLONE_UNTRACED 0x00800000
#endif

/* the operations are the table's (ztsa_nr.h): ZTSA_OP_OPEN (with O_CREAT) and
   ZTSA_OP_CREAT make a file, then MKDIR, MKNOD, SYMLINK, LINK, RENAME */
static int makes_file(int op) { return op == ZTSA_OP_OPEN || op == ZTSA_OP_CREAT; }

/* The tty_nr of a /proc stat file (relative to the helper's /proc, proc). */
static unsigned long tty_of(int proc, const char *stat_path) {
    char buf[1024];
    if (!read_proc_at(proc, stat_path, buf, sizeof buf))
        return 0;
    char *p = strrchr(buf, ')');
    /* after ") ": state ppid pgrp session tty_nr */
    unsigned long tty = 0;
    if (p && sscanf(p + 2, "%*c %*d %*d %*d %lu", &tty) != 1)
        tty = 0;
    return tty;
}

/* open("/dev/tty") on behalf of pid: its own controlling terminal (ENXIO without one) */
static int caller_tty(int proc, pid_t pid, int flags) {
    char where[64];
    snprintf(where, sizeof where, "%d/stat", pid);
    unsigned long tty = tty_of(proc, where);
    if (!tty)
        return -ENXIO;
    int fd;
    if (tty == tty_of(proc, "self/stat")) {
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
static int link_followed(int proc, int dir, const char *name, int to_dir,
                         const char *to_name, int *denied) {
    int src = paths_open_off_proc(dir, name, O_PATH | O_CLOEXEC);
    if (src == PARENT_PROC) {
        *denied = 2;
        return 0;
    }
    if (src < 0)
        return -src;
    char own[32];
    snprintf(own, sizeof own, "self/fd/%d", src);
    int err = linkat(proc, own, to_dir, to_name, AT_SYMLINK_FOLLOW) < 0 ? errno : 0;
    close(src);
    return err;
}

/* One name-creating call, its copies and what the helper made of them. */
struct fs_op {
    const struct helper *h;
    const struct seccomp_notif *req;
    int op, flags; /* enum ztsa_op */
    unsigned int mode;
    unsigned long long dev;
    const char *p1, *p2; /* the helper's copies of the paths */
    int fd1, fd2;        /* the directories they are relative to */
    int own;             /* how p1 names the caller itself (HELPER_OWN_*), 0: not */
    /* the parents opened (-1: none), the last components, trailing slashes */
    int par1, par2, slash1, slash2;
    char name1[256], name2[256];
    const char *n1; /* the name relative to dir1 */
    int dir1;       /* par1, or the caller's fd1 when no parent was opened */
    int empty_link; /* linkat(AT_EMPTY_PATH) of fd1 itself */
    /* what happened: REPLY_FD for the file an open or creat opened, or REPLY_ELSEWHERE when
       an opener child answers; denied: why a protected name was refused (1: protected,
       2: a /proc file, 3: a git config key, 4: an ancestor); made: a new file */
    struct reply out;
    int denied, made;
    int agent; /* the caller is the agent's own process: 1, 0, or -1 not asked yet */
};

/* Is the caller the agent's own process? Asked only where it decides (a kept entry is
   reached), then the notification checked again, so the thread read was the caller;
   a caller gone meanwhile is no agent (its answer goes nowhere). */
static int is_agent(struct fs_op *o) {
    if (o->agent < 0)
        o->agent = creation_is_agent((pid_t)o->req->pid) && helper_still_valid(o->req->id);
    return o->agent;
}

/* --agent: does the operation reach into the agent's kept state (fd: a directory it
   makes a name in, or a file it opened) from another process than the agent's own?
   Then it is refused (denied 5). */
static int kept_refused(struct fs_op *o, int fd) {
    if (fd < 0 || !creation_kept_fd(fd) || is_agent(o))
        return 0;
    o->denied = 5;
    return 1;
}

/* The same for a name made in dir: an existing name is EEXIST first, as the kernel
   answers before it asks Landlock (`mkdir -p` of an existing directory succeeds). */
static int kept_make_refused(struct fs_op *o, int dir, const char *name, int *err) {
    struct stat st;
    if (dir < 0 || !creation_kept_fd(dir) || is_agent(o))
        return 0;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0) {
        *err = EEXIST;
        return 1;
    }
    o->denied = 5;
    return 1;
}

/* A file the helper just made in the kept state for another process: unlinked again,
   by its parent and only if that name is still this file (nothing but the helper makes
   or moves names there, so nothing else can have taken it meanwhile). */
static void unmake(int proc, int fd) {
    char link[64], path[4097];
    snprintf(link, sizeof link, "self/fd/%d", fd);
    ssize_t n = readlinkat(proc, link, path, sizeof path - 1);
    char *slash = n > 0 ? memrchr(path, '/', (size_t)n) : NULL;
    if (!slash || slash == path)
        return;
    path[n] = 0;
    *slash = 0;
    struct stat mine, there;
    int dir = open(path, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (dir >= 0 && fstat(fd, &mine) == 0 &&
        fstatat(dir, slash + 1, &there, AT_SYMLINK_NOFOLLOW) == 0 &&
        mine.st_dev == there.st_dev && mine.st_ino == there.st_ino)
        unlinkat(dir, slash + 1, 0);
    if (dir >= 0)
        close(dir);
}

/* an open of (dir1, n1) by the helper, never following a final symlink while creating
   (a dangling one could name a protected path; an existing target is opened without
   O_CREAT), never through a magic link (/proc/1/fd/N, /proc/PID/root, ...: through one
   the helper would reach what it holds, not what the caller does) */
static int open_as_caller(struct fs_op *o) {
    int flags = o->flags;
    int fd;
    if (o->own == HELPER_OWN_BENEATH) {
        struct open_how_ how = {(unsigned long long)flags | O_CLOEXEC, o->mode,
                                RESOLVE_BENEATH_ | RESOLVE_NO_MAGICLINKS_};
        return (int)syscall(SYS_openat2_, o->dir1, o->n1, &how, sizeof how);
    }
    if (o->own == HELPER_OWN_FD) {
        fd = openat(o->dir1, o->n1, flags | O_NOFOLLOW, o->mode);
        if (fd < 0 && errno == ELOOP && !(flags & (O_NOFOLLOW | O_EXCL)))
            fd = openat(o->dir1, o->n1, flags & ~O_CREAT, o->mode);
        return fd;
    }
    struct open_how_ how = {(unsigned long long)(flags | O_NOFOLLOW) | O_CLOEXEC, o->mode,
                            RESOLVE_NO_MAGICLINKS_};
    fd = (int)syscall(SYS_openat2_, o->dir1, o->n1, &how, sizeof how);
    if (fd < 0 && errno == ELOOP && !(flags & (O_NOFOLLOW | O_EXCL))) {
        how.flags = (unsigned long long)(flags & ~O_CREAT) | O_CLOEXEC;
        how.mode = 0; /* openat2 takes a mode only with O_CREAT */
        fd = (int)syscall(SYS_openat2_, o->dir1, o->n1, &how, sizeof how);
        /* a magic link, not a loop of ordinary links (those fail here too) */
        int plain = fd < 0 && errno == ELOOP ? openat(o->dir1, o->n1, O_PATH | O_CLOEXEC)
                                             : -2;
        if (plain >= 0) {
            close(plain);
            o->denied = 2;
        }
        if (plain != -2)
            errno = plain >= 0 ? EACCES : ELOOP;
    }
    struct statfs sfs;
    if (fd >= 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_) {
        close(fd); /* some spelling of /proc: what it names is the helper's view */
        fd = -1;
        errno = EACCES;
        o->denied = 2;
    }
    return fd;
}

static int op_create(struct fs_op *o) {
    if (o->slash1)
        return EISDIR;
    if (o->par1 >= 0 && paths_classify(o->par1, o->name1) == 1) {
        o->denied = 1;
        return 0;
    }
    /* what the name is now, if anything (one lookup for both checks below) */
    struct stat fst;
    int exists = fstatat(o->dir1, o->n1, &fst, 0) == 0;
    if (!exists && kept_refused(o, o->par1))
        return 0; /* a new name in the kept state (an existing one: judged as opened) */
    /* /dev/tty is the caller's controlling terminal, not the helper's */
    if (exists && S_ISCHR(fst.st_mode) && fst.st_rdev == makedev(5, 0)) {
        int r = caller_tty(o->h->proc, (pid_t)o->req->pid, o->flags);
        if (r < 0)
            return -r;
        o->out = (struct reply){REPLY_FD, 0, r};
        return 0;
    }
    /* an open that may wait (a FIFO for its other end, ...) runs in a child of the
       helper, which answers itself, so the tree's other calls are not held up */
    int in_child = 0;
    if (exists && may_block(&fst)) {
        /* untraced: it is ztsa's, not part of the tree */
        pid_t opener = (pid_t)syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
        if (opener > 0) {
            o->out = ELSEWHERE;
            return 0;
        }
        in_child = opener == 0; /* fork failed: open here, blocking */
        /* the opener ends with the helper (which ends with the tree): it must not
           hold the caller's file, or ztsa's stdout, after the run */
        if (in_child && (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 ||
                         getppid() != o->h->self))
            _exit(0);
    }
    int fd = open_as_caller(o);
    int err = fd < 0 ? errno : 0;
    /* the file the whole path, a link or the caller's own /proc names: judged as opened
       (reading an existing one is no write) */
    int writes = (o->flags & O_ACCMODE) != O_RDONLY || (o->flags & O_TRUNC) || !exists;
    if (fd >= 0 && writes && kept_refused(o, fd)) {
        if (!exists)
            unmake(o->h->proc, fd);
        close(fd);
        fd = -1;
        err = EACCES; /* denied: what an opener child answers too */
    }
    if (fd >= 0)
        o->out = (struct reply){REPLY_FD, 0, fd};
    o->made = fd >= 0 && !exists && !in_child;
    if (in_child) {
        helper_answer(o->h, o->req, fd < 0 ? RESULT(-err) : o->out);
        _exit(0);
    }
    return err;
}

static int op_mknod(struct fs_op *o) {
    if (o->par1 >= 0 && paths_classify(o->par1, o->name1) == 1) {
        o->denied = 1;
        return 0;
    }
    int err = 0;
    if (kept_make_refused(o, o->dir1, o->n1, &err))
        return err;
    if (o->slash1 && o->op == ZTSA_OP_MKNOD)
        return ENOENT; /* as the kernel answers "name/" for anything but a directory */
    int r = o->op == ZTSA_OP_MKDIR ? mkdirat(o->dir1, o->n1, o->mode)
                              : mknodat(o->dir1, o->n1, o->mode, (dev_t)o->dev);
    return r < 0 ? errno : 0;
}

static int op_symlink(struct fs_op *o) {
    /* nor a link named like a directory on the way to one: its target (made beforehand
       anywhere, with the protected names in it) would stand in for that directory */
    if (paths_classify(o->par2, o->name2) != 0) {
        o->denied = 1;
        return 0;
    }
    int err = 0;
    if (kept_make_refused(o, o->par2, o->name2, &err))
        return err;
    return symlinkat(o->p2, o->par2, o->name2) < 0 ? errno : 0;
}

static int op_link(struct fs_op *o) {
    if ((!o->empty_link && paths_classify(o->par1, o->name1) == 1) ||
        paths_classify(o->par2, o->name2) == 1) {
        o->denied = 1;
        return 0;
    }
    if (kept_refused(o, o->par2))
        return 0;
    if (o->empty_link || !(o->flags & AT_SYMLINK_FOLLOW)) {
        int r = o->empty_link ? linkat(o->fd1, "", o->par2, o->name2, AT_EMPTY_PATH)
                              : linkat(o->par1, o->name1, o->par2, o->name2, 0);
        return r < 0 ? errno : 0;
    }
    /* the source's last link is followed, but never through a magic link
       (/proc/self/fd/N would be one of the helper's own files): the file is taken
       first, then linked by the helper's own name for it */
    return link_followed(o->h->proc, o->par1, o->name1, o->par2, o->name2, &o->denied);
}

static int op_rename(struct fs_op *o) {
    if (kept_refused(o, o->par1) || kept_refused(o, o->par2))
        return 0;
    int src = paths_classify(o->par1, o->name1), dst = paths_classify(o->par2, o->name2);
    int cfg = dst == 1 && !src ? gitconfig_rewrite(o->h, o->par1, o->name1, o->par2, o->name2)
                               : -1;
    if (cfg >= 0) {
        int err = gitconfig_write(o->h, cfg, o->par1, o->name1);
        if (err == EACCES)
            o->denied = 3;
        return err == EACCES ? 0 : err;
    }
    /* both names move with RENAME_EXCHANGE, and a rename replaces what the second
       names: the workspace and the directories on the way to it or to a read-only
       path are refused on either side */
    if (paths_same_as(o->par1, o->name1, 0, &o->h->root_st) ||
        paths_same_as(o->par2, o->name2, 0, &o->h->root_st))
        src = 2; /* the workspace itself */
    struct stat st, dst_st;
    int src_dir = fstatat(o->par1, o->name1, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                  S_ISDIR(st.st_mode);
    if ((src_dir && paths_is_ancestor(&st)) ||
        (fstatat(o->par2, o->name2, &dst_st, AT_SYMLINK_NOFOLLOW) == 0 &&
         S_ISDIR(dst_st.st_mode) && paths_is_ancestor(&dst_st))) {
        o->denied = 4;
        return 0;
    }
    /* never move a protected path, a directory on the way to one, or the workspace;
       never move a directory into such a place (it could bring protected names) */
    if (src || dst == 1 || (dst == 2 && (src_dir || (o->flags & 2 /* EXCHANGE */)))) {
        o->denied = 1;
        return 0;
    }
    int r = (int)syscall(SYS_renameat2, o->par1, o->name1, o->par2, o->name2,
                         (unsigned int)o->flags);
    if (r == 0 && (src_dir || (o->flags & 2)))
        creation_forget(); /* a directory moved: what lies beneath it may be elsewhere now */
    return r < 0 ? errno : 0;
}

/* The parent of (fd, path) opened into *par (-1: none): 0, an errno, or -1 with
   o->denied set (a path through a magic link or on /proc). */
static int open_parent_into(struct fs_op *o, int fd, const char *path, char *name,
                            size_t size, int *slash, int *par) {
    int r = paths_open_parent(fd, path, name, size, slash);
    *par = r >= 0 ? r : -1;
    if (r == PARENT_PROC)
        o->denied = 2;
    return r == PARENT_PROC ? -1 : r < 0 ? -r : 0;
}

/* The parents of the names o creates, opened as the kernel would resolve them: 0, an
   errno, or -1 with o->denied set (a path through a magic link or on /proc). */
static int open_parents(struct fs_op *o) {
    int op = o->op;
    if (o->own || (makes_file(op) && !creation_protected_name(o->p1) && !creation_kept())) {
        /* a last component that no protected path has cannot make one: the kernel
           resolves the whole path for us (trailing slashes included), as for the caller,
           without magic links (openat2); under --agent a file is made in a parent the
           helper opened, so that a name in the kept state is judged before it exists */
        o->dir1 = o->fd1;
        o->n1 = o->p1;
    } else if (!o->empty_link && op != ZTSA_OP_SYMLINK) {
        int err = open_parent_into(o, o->fd1, o->p1, o->name1, sizeof o->name1, &o->slash1,
                                   &o->par1);
        if (err)
            return err;
        o->dir1 = o->par1;
    }
    if (op == ZTSA_OP_LINK || op == ZTSA_OP_RENAME || op == ZTSA_OP_SYMLINK)
        return open_parent_into(o, op == ZTSA_OP_SYMLINK ? o->fd1 : o->fd2,
                                op == ZTSA_OP_SYMLINK ? o->p1 : o->p2, o->name2,
                                sizeof o->name2, &o->slash2, &o->par2);
    return 0;
}

/* One name-creating syscall, performed by the helper: 0 or an errno, o->out and
   o->denied as struct fs_op says. */
static int fs_op(struct fs_op *o) {
    static int (*const perform[])(struct fs_op *) = {
        [ZTSA_OP_OPEN] = op_create, [ZTSA_OP_CREAT] = op_create, [ZTSA_OP_MKDIR] = op_mknod,
        [ZTSA_OP_MKNOD] = op_mknod, [ZTSA_OP_SYMLINK] = op_symlink, [ZTSA_OP_LINK] = op_link,
        [ZTSA_OP_RENAME] = op_rename};
    o->n1 = o->name1;
    o->dir1 = o->par1 = o->par2 = -1;
    o->denied = o->made = 0;
    o->empty_link = o->op == ZTSA_OP_LINK && (o->flags & AT_EMPTY_PATH) && *o->p1 == 0;
    int err = open_parents(o);
    if (err == 0)
        err = o->op >= ZTSA_OP_OPEN && o->op <= ZTSA_OP_RENAME ? perform[o->op](o) : ENOSYS;
    else if (err < 0)
        err = 0; /* denied */
    if (o->par1 >= 0)
        close(o->par1);
    if (o->par2 >= 0)
        close(o->par2);
    return err;
}

/* Where a call's arguments are (the table's roles, ztsa_nr.h): -1 for none; a dirfd
   absent is AT_FDCWD. */
struct fs_args {
    int dirfd1, path1, dirfd2, path2, target, flags, mode, dev;
};

static struct fs_args args_of(const struct ztsa_syscall *c) {
    return (struct fs_args){sys_arg(c, ZTSA_ARG_DIRFD), sys_arg(c, ZTSA_ARG_PATH),
                            sys_arg(c, ZTSA_ARG_DIRFD2), sys_arg(c, ZTSA_ARG_PATH2),
                            sys_arg(c, ZTSA_ARG_TARGET), sys_flags_arg(c),
                            sys_arg(c, ZTSA_ARG_MODE), sys_arg(c, ZTSA_ARG_DEV)};
}

/* The paths of a call, copied once from the caller into p1 and p2 (symlink: its
   target in p2): 0 or -errno. */
static int copy_paths(const struct fs_args *at, const struct seccomp_notif *req, char *p1,
                      char *p2, size_t size) {
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    int err = caller_read_string(pid, a[at->path1], p1, size);
    if (!err && at->path2 >= 0)
        err = caller_read_string(pid, a[at->path2], p2, size);
    if (!err && at->target >= 0)
        err = caller_read_string(pid, a[at->target], p2, size); /* the link's target */
    if (!err && at->path2 < 0 && at->target < 0)
        p2[0] = 0;
    return err;
}

/* The directory a path of the caller's is relative to, as the helper's descriptor
   (the caller's own /proc directory for own, its root for an absolute path when that
   is not the helper's): the descriptor or -errno; p1 becomes rest for own. */
static int caller_dir(int proc, pid_t pid, long long dirfd, char *path, int own,
                      const char *rest, size_t size) {
    if (own) { /* beneath the caller's own directory of the helper's /proc */
        char dir[32];
        snprintf(dir, sizeof dir, "%d", pid);
        int fd = openat(proc, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        memcpy(path, rest, size);
        return fd < 0 ? -errno : fd;
    }
    int fd = caller_rebase_absolute(pid, path);
    return fd == -1 ? helper_dirfd(pid, dirfd, path) : fd;
}

/* After the helper made a file (a name its checks allow), the caller's kernel may open
   it, now existing, with the caller's flags: an ADDFD reply costs a wake-up of the
   caller on another CPU, a CONTINUE does not. A path rewritten meanwhile reaches only
   what CMD's second ruleset lets the tree make or open itself, as for every CONTINUE'd
   creation (creation.c). Never for a set-id mode: the caller's kernel would create a
   rewritten path with the mode in the caller's registers, which only the helper's copy
   has without those bits. Only when the file's mode lets its owner open it so: opening
   an existing file checks what creating it did not (0444 with O_RDWR). */
static int reopenable(const struct fs_op *o, int set_id) {
    int flags = o->flags;
    if (!o->made || set_id || o->out.kind != REPLY_FD || o->own || !creation_may_continue() ||
        (flags & (O_EXCL | O_DIRECTORY)) || (flags & O_TMPFILE) == O_TMPFILE ||
        creation_helper_only(o->out.fd))
        return 0;
    struct stat st;
    int acc = flags & O_ACCMODE;
    unsigned int need = (acc == O_RDONLY ? 0400U : acc == O_WRONLY ? 0200U : 0600U) |
                        (flags & O_TRUNC ? 0200U : 0U);
    return fstat(o->out.fd, &st) == 0 && S_ISREG(st.st_mode) && (st.st_mode & need) == need;
}

/* The reply to o, with its denial logged: a protected name refused, or the kernel's
   refusal (Landlock, the read-only system, permissions), which is counted and logged
   too. */
static struct reply finish(const struct ztsa_syscall *call, const struct fs_op *o, int err) {
    pid_t pid = (pid_t)o->req->pid;
    const char *p2 = call->op == ZTSA_OP_SYMLINK ? "" : o->p2;
    if (o->denied) {
        helper_log_denial(pid, call->name, o->p1, p2,
                          o->denied == 2   ? "a /proc file the helper would open as itself"
                          : o->denied == 3 ? "a git config key that git does not write in "
                                             "ordinary work (it could run a program)"
                          : o->denied == 4 ? "a directory on the way to the workspace or "
                                             "the audit log"
                          : o->denied == 5 ? "the agent's kept state, written by the agent's "
                                             "own process alone (--agent)"
                                           : "protected agent file");
        return RESULT(-EACCES);
    }
    if (o->out.kind == REPLY_RESULT && (err == EACCES || err == EROFS || err == EPERM))
        helper_log_denial(pid, call->name, o->p1, p2,
                          err == EROFS ? "read-only outside the writable places"
                                       : "refused by the kernel (Landlock or permissions)");
    return o->out.kind == REPLY_RESULT ? RESULT(-err) : o->out;
}

/* A name-creating call of the tree: copied, decided and performed by the helper, or
   left to the caller's kernel where CMD's second ruleset decides the same. */
struct reply create_notification(const struct helper *h, const struct seccomp_notif *req,
                                 const struct ztsa_syscall *call) {
    static char p1[4097], p2[4097], rest[4097];
    struct fs_args at = args_of(call);
    if (call->op < ZTSA_OP_OPEN || call->op > ZTSA_OP_RENAME || at.path1 < 0)
        return RESULT(-ENOSYS);
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    struct fs_op o = {.h = h, .req = req, .op = call->op, .p1 = p1, .p2 = p2,
                      .out = RESULT(0)};
    o.flags = call->op == ZTSA_OP_CREAT ? O_CREAT | O_WRONLY | O_TRUNC
              : at.flags >= 0           ? (int)a[at.flags] : 0;
    o.mode = at.mode >= 0 ? (unsigned int)a[at.mode] : 0;
    int err = copy_paths(&at, req, p1, p2, sizeof p1);
    if (err)
        return RESULT(err);
    /* no setuid or setgid file is made (the filter refuses chmod to them): a tree of
       root's would leave a way to root for anyone */
    int set_id = (makes_file(call->op) || call->op == ZTSA_OP_MKNOD) && (o.mode & 06000);
    o.mode &= set_id ? ~06000U : ~0U;
    long long dirfd1 = at.dirfd1 >= 0 ? (long long)a[at.dirfd1] : AT_FDCWD;
    if (makes_file(call->op) && !set_id && creation_in_caller(pid, dirfd1, p1))
        return CONTINUE; /* the kernel performs it, as the caller's ruleset allows */
    o.own = makes_file(call->op) ? helper_own_path(p1, rest, sizeof rest) : 0;
    int empty_ok = call->op == ZTSA_OP_LINK && (o.flags & AT_EMPTY_PATH);
    if ((!p1[0] && !empty_ok) || (at.path2 >= 0 && !p2[0]))
        return RESULT(-ENOENT);
    int fd1 = caller_dir(h->proc, pid, dirfd1, p1, o.own, rest, sizeof rest);
    if (fd1 < 0)
        return RESULT(fd1);
    int fd2 = -1;
    if (at.path2 >= 0) {
        fd2 = caller_dir(h->proc, pid, at.dirfd2 >= 0 ? (long long)a[at.dirfd2] : AT_FDCWD,
                         p2, 0, NULL, 0);
        if (fd2 < 0) {
            helper_close_dirfd(fd1);
            return RESULT(fd2);
        }
    }
    o.agent = -1; /* asked where a kept entry is reached (is_agent) */
    /* the paths and descriptors are ours now; is the request still the one we read? */
    if (!helper_still_valid(req->id)) {
        helper_close_dirfd(fd1);
        helper_close_dirfd(fd2);
        return RESULT(-ESRCH);
    }
    caller_use_umask(pid);
    o.dev = at.dev >= 0 ? a[at.dev] : 0;
    o.fd1 = fd1;
    o.fd2 = fd2 >= 0 ? fd2 : fd1;
    err = fs_op(&o);
    helper_close_dirfd(fd1);
    helper_close_dirfd(fd2);
    if (reopenable(&o, set_id)) {
        close(o.out.fd);
        return CONTINUE;
    }
    return finish(call, &o, err);
}

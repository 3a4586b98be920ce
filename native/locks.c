/* Runs in the file helper (helper.c's loop calls it with the helper's context and the
   call's row of the table, ZTSA_OP_LOCK; it keeps no state of its own): the tree's file
   locks, flock and fcntl's F_SETLK, F_SETLKW, F_OFD_SETLK and F_OFD_SETLKW (the filter
   sends no unlock by flock, and no other fcntl, here).

   A lock needs only a descriptor, and a read lock only a read-only one: the tree could
   hold flock or read locks on any file it may read (the host's lock files, a program's
   database outside), and the host's own lockers would wait or get EAGAIN while it runs.
   So a lock is taken only on a file on a writable mount of the tree's namespace (the
   workspace, the private HOME and TMPDIR, --allow-write; as metadata.c judges it) or
   on a file named nowhere (a memfd, O_TMPFILE); any other is ENOLCK, with a deny line.

   The decision is made on the helper's own duplicate of the caller's descriptor
   (pidfd_getfd). flock and OFD locks belong to the open file description, which the
   duplicate shares: the helper takes them itself on its duplicate, so what is locked is
   the file the decision was made on, whatever the tree puts under that number
   meanwhile. One that must wait is taken by an untraced child of the helper, which
   answers, so the tree's other calls go on. A classic POSIX lock (F_SETLK, F_SETLKW)
   belongs to the calling process instead, and no other process can take it for it:
   that one is judged on the duplicate and then performed by the caller's kernel
   (CONTINUE), which looks the number up again; a second thread of the caller that
   puts a readable outside file under that number in between gets a read lock on it
   (a known limit, docs/design.md). */
#include "helper.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TMPFS_MAGIC_ 0x01021994
#ifndef F_OFD_SETLK
#define F_OFD_SETLK 37
#define F_OFD_SETLKW 38
#endif

/* May the tree lock the file fd (the helper's duplicate) is? */
static int lockable(const struct helper *h, int fd, pid_t pid) {
    struct stat st;
    struct statfs sfs;
    if (fstat(fd, &st) < 0)
        return 0;
    if (st.st_nlink == 0 && !S_ISDIR(st.st_mode) && fstatfs(fd, &sfs) == 0 &&
        sfs.f_type == TMPFS_MAGIC_)
        return 1; /* a memfd or O_TMPFILE: named nowhere, no one else can lock it */
    return meta_writable_fd(h, fd, pid);
}

static void refuse(const struct helper *h, pid_t pid, const char *call, int fd) {
    char link[64], path[4096];
    snprintf(link, sizeof link, "self/fd/%d", fd);
    ssize_t n = readlinkat(h->proc, link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    helper_log_denial(pid, call, path, "",
                      "a lock on a file outside the tree's writable places");
}

/* Take the lock that waits in an untraced child of the helper, which answers the
   caller itself; the helper goes on. The child ends with the helper. */
static struct reply wait_in_child(const struct helper *h, const struct seccomp_notif *req,
                                  int fd, int flock_op, struct flock *fl) {
    pid_t waiter = (pid_t)syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
    if (waiter != 0) {
        close(fd);
        return waiter > 0 ? ELSEWHERE : RESULT(-ENOLCK);
    }
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != h->self)
        _exit(0);
    int r;
    do
        r = fl ? fcntl(fd, F_OFD_SETLKW, fl) : flock(fd, flock_op);
    while (r < 0 && errno == EINTR);
    int err = r < 0 ? errno : 0;
    if (r == 0 && !helper_still_valid(req->id)) {
        /* the caller was killed while it waited: its call never returned, so it took
           nothing (as the kernel would have it) */
        if (fl) {
            fl->l_type = F_UNLCK;
            fcntl(fd, F_OFD_SETLK, fl);
        } else {
            flock(fd, LOCK_UN);
        }
    }
    helper_answer(h, req, RESULT(-err));
    _exit(0);
}

struct reply locks_notification(const struct helper *h, const struct seccomp_notif *req,
                                const struct ztsa_syscall *c) {
    pid_t pid = (pid_t)req->pid;
    int is_flock = sys_arg(c, ZTSA_ARG_LOCKOP) >= 0;
    /* flock's operation, or fcntl's command */
    int cmd = (int)req->data.args[sys_arg(c, is_flock ? ZTSA_ARG_LOCKOP : ZTSA_ARG_FCMD)];
    struct flock fl;
    if (!is_flock) {
        if (caller_read(pid, req->data.args[sys_arg(c, ZTSA_ARG_CMDARG)], &fl, sizeof fl) < 0)
            return RESULT(-EFAULT);
        if (fl.l_type == F_UNLCK && (cmd == F_SETLK || cmd == F_SETLKW))
            return CONTINUE; /* no lock is made */
    }
    int fd = helper_getfd(pid, (int)req->data.args[sys_arg(c, ZTSA_ARG_FD)]);
    if (fd < 0)
        return RESULT(fd == -ESRCH ? -ENOENT : fd);
    if (!helper_still_valid(req->id)) {
        close(fd);
        return RESULT(-ENOENT);
    }
    int unlock = is_flock ? (cmd & ~LOCK_NB) == LOCK_UN : fl.l_type == F_UNLCK;
    if (!unlock && !lockable(h, fd, pid)) {
        refuse(h, pid, c->name, fd);
        close(fd);
        return RESULT(-ENOLCK);
    }
    if (!is_flock && (cmd == F_SETLK || cmd == F_SETLKW)) {
        close(fd);
        return CONTINUE; /* the caller's own lock: see above */
    }
    int r;
    if (is_flock)
        r = flock(fd, cmd | LOCK_NB);
    else
        r = fcntl(fd, F_OFD_SETLK, &fl);
    int err = r < 0 ? errno : 0;
    int waits = is_flock ? !(cmd & LOCK_NB) && err == EWOULDBLOCK
                         : cmd == F_OFD_SETLKW && (err == EAGAIN || err == EACCES);
    if (waits)
        return wait_in_child(h, req, fd, cmd, is_flock ? NULL : &fl);
    close(fd);
    return RESULT(-err);
}

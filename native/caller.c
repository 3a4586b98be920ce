/* Runs in the file helper: the caller of a notification, as the helper reaches it.
   Its memory (caller_read, caller_read_string: the only reads of the tree's memory in
   the helper), its descriptors (pidfd_getfd through a pidfd kept per thread) and its
   directories (cwd, root), its umask (kept a second per thread), and the host's numbers
   of its thread and process for log lines. It touches the tree only through
   process_vm_readv, pidfd_getfd and the helper's /proc; it changes nothing there. */
#include "helper.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static const struct helper *H; /* caller_init's */

void caller_init(const struct helper *h) { H = h; }

/* The one reader of the caller's memory: n bytes at addr, 0 or -EFAULT (a short read
   too: a copy is whole or nothing). */
int caller_read(pid_t pid, unsigned long long addr, void *buf, size_t n) {
    struct iovec local = {buf, n};
    struct iovec remote = {(void *)(unsigned long)addr, n};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

/* A NUL-terminated string of the caller, read page by page (a string may end just
   before an unreadable page): 0, -EFAULT or -ENAMETOOLONG. */
int caller_read_string(pid_t pid, unsigned long long addr, char *buf, size_t size) {
    size_t got = 0;
    while (got < size) {
        size_t chunk = 4096 - (size_t)((addr + got) % 4096);
        if (chunk > size - got)
            chunk = size - got;
        if (caller_read(pid, addr + got, buf + got, chunk) < 0)
            return -EFAULT;
        if (memchr(buf + got, 0, chunk))
            return 0;
        got += chunk;
    }
    return -ENAMETOOLONG;
}

/* The caller's root as an O_PATH descriptor when it is not the helper's own (a chroot
   or pivot_root inside the tree: a nested sandbox), else -1. */
int helper_caller_root(pid_t pid) {
    char where[32];
    snprintf(where, sizeof where, "%d/root", pid);
    int fd = openat(H->proc, where, O_PATH | O_DIRECTORY | O_CLOEXEC);
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
int caller_rebase_absolute(pid_t pid, char *path) {
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

void helper_close_dirfd(int fd) {
    if (fd >= 0 && fd != H->root)
        close(fd);
}

int helper_dirfd(pid_t pid, long long fd, const char *path) {
    if (path[0] == '/')
        return H->root; /* ignored by the kernel for an absolute path; never closed */
    if ((int)fd == AT_FDCWD) {
        char where[64];
        snprintf(where, sizeof where, "%d/cwd", pid);
        int r = openat(H->proc, where, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return r < 0 ? -errno : r;
    }
    return helper_getfd(pid, (int)fd);
}

/* ---- the umask ---- */

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
void caller_use_umask(pid_t pid) {
    static int now = -1;
    int want = (int)tracee_umask(pid);
    if (want != now)
        umask((mode_t)(now = want));
}

static unsigned int tracee_umask_read(pid_t pid) {
    return (unsigned int)proc_status_field(H->proc, pid, "Umask", 8, 022) & 0777;
}


/* pid, of the helper's PID namespace, as the host's /proc numbers it: a pidfd's fdinfo
   shows its pid in the namespace of the /proc it is read through */
static pid_t host_pid(pid_t pid) {
    if (H->host_proc < 0)
        return pid;
    int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
    if (pidfd < 0)
        return pid;
    char where[64], buf[1024];
    snprintf(where, sizeof where, "self/fdinfo/%d", pidfd);
    int ok = read_proc_at(H->host_proc, where, buf, sizeof buf);
    close(pidfd);
    char *line = ok ? strstr(buf, "\nPid:") : NULL;
    return line ? (pid_t)strtol(line + 5, NULL, 10) : pid;
}


int helper_tgid(pid_t pid) {
    return (int)proc_status_field(H->proc, pid, "Tgid", 10, pid);
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
    if (H->host_proc < 0) { /* no PID namespace: the numbers are the host's already */
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

static int fd_dir = -1;

int helper_enter_fd_dir(void) {
    fd_dir = openat(H->proc, "self/fd", O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd_dir < 0 || fchdir(fd_dir) < 0)
        return -EACCES;
    return 0;
}

void helper_leave_fd_dir(void) {
    if (fd_dir >= 0)
        close(fd_dir);
    fd_dir = -1;
    if (fchdir(H->root) < 0)
        _exit(1);
}

/* A umask(2) of the tree: noted (its argument is a register, nothing to race), then
   run by the kernel as asked. */
struct reply umask_notification(const struct seccomp_notif *req) {
    U.changed = now_ns();
    U.gen++;
    struct umask_slot *slot = &U.slot[(unsigned int)req->pid % UMASK_SLOTS];
    slot->pid = (pid_t)req->pid;
    slot->mask = (unsigned int)req_arg(req, ZTSA_ARG_MODE) & 0777;
    slot->since = U.changed;
    slot->gen = U.gen;
    return CONTINUE;
}

int helper_proc(void) { return H->proc; }

/* Runs in the supervisor, ztsa's own process, on the one thread that seized the tree
   (the kernel refuses ptrace requests from any other): the tracer's wait loop, the
   process table it owns, and the ptrace, memory and socket calls the Python tracer
   makes. Nothing here is touched by the child or the file helper.

   The loop answers what needs no decision by itself: forks, a new tracee's first stop
   (also when it comes before its parent's fork event), execs, group stops
   (PTRACE_LISTEN), signal deliveries, exits, execve's seccomp stop, and, in
   ZTSA_CONNECTS_LOOP mode, the connects ztsa_decide allows. The rest goes to Python as
   one ztsa_event. The process table is this file's alone; Python asks it (ztsa_procs,
   ztsa_tgid). Signals to ztsa are recorded by a handler here and handed over as
   events, never acted on in the handler. */
#include "common.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PTRACE_EVENT_STOP
#define PTRACE_EVENT_STOP 128
#endif
#ifndef PTRACE_LISTEN
#define PTRACE_LISTEN 0x4208
#endif
#ifndef __WALL
#define __WALL 0x40000000
#endif
#define CLONE_THREAD_FLAG 0x00010000
#define ERESTARTSYS_ 512
#define ERESTARTNOINTR_ 513

/* ---- the process table: every live tid of the tree ---- */

struct proc {
    int tid;     /* 0: empty slot; -1: a removed one */
    int tgid;
    int started; /* its first stop was seen (a later EVENT_STOP is a group stop) */
    int gone;    /* it exited before its parent's fork event: that event must not
                    bring it back (its pid may be another process's by then) */
};

static struct {
    struct proc *slot;
    size_t cap, used, live; /* used counts removed slots too */
} T;

static size_t slot_of(int tid, size_t cap) {
    return ((size_t)(unsigned int)tid * 2654435761u) & (cap - 1);
}

static struct proc *find(int tid) {
    if (!T.cap)
        return NULL;
    for (size_t i = slot_of(tid, T.cap), k = 0; k < T.cap; k++, i = (i + 1) & (T.cap - 1)) {
        if (T.slot[i].tid == tid)
            return &T.slot[i];
        if (T.slot[i].tid == 0)
            return NULL;
    }
    return NULL;
}

static int grow(void) {
    size_t cap = T.cap ? T.cap : 256;
    while ((T.live + 1) * 4 > cap) /* half full at most after any add until the next */
        cap *= 2;
    struct proc *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return -1;
    for (size_t i = 0; i < T.cap; i++) {
        if (T.slot[i].tid <= 0)
            continue;
        size_t j = slot_of(T.slot[i].tid, cap);
        while (fresh[j].tid)
            j = (j + 1) & (cap - 1);
        fresh[j] = T.slot[i];
    }
    free(T.slot);
    T.slot = fresh;
    T.cap = cap;
    T.used = T.live;
    return 0;
}

/* The entry of tid, made with tgid if absent (NULL only when memory ran out). */
static struct proc *add(int tid, int tgid) {
    struct proc *p = find(tid);
    if (p)
        return p;
    if ((T.used + 1) * 2 > T.cap && grow() < 0)
        return NULL;
    size_t i = slot_of(tid, T.cap);
    while (T.slot[i].tid > 0)
        i = (i + 1) & (T.cap - 1);
    if (T.slot[i].tid == 0)
        T.used++;
    T.slot[i] = (struct proc){tid, tgid, 0, 0};
    T.live++;
    return &T.slot[i];
}

static void drop(int tid) {
    struct proc *p = find(tid);
    if (p) {
        p->tid = -1;
        T.live--;
    }
}

static int tgid_from_proc(int tid) {
    return (int)proc_status_field(AT_FDCWD, tid, "Tgid", 10, tid);
}

/* ---- the run ---- */

static struct {
    int root, helper, cmd; /* cmd: 0 until known (the helper's or the init's first child) */
    int keeper;            /* with a PID namespace: root, whose first child is the helper */
    int log, wake_fd;
    unsigned long tag_exec, tag_net, tag_pid;
    int syscalls;          /* --trace-syscalls: the tree resumes to its next system call */
    unsigned long execs, connects;
    int killing;           /* CMD has exited: every new process is killed at once */
    unsigned events;       /* events answered since the wake fd was last read */
    sigset_t mask_before;
    struct sigaction chld_before;
} R;

/* SIGCHLD goes to the process: while the loop's thread blocks it, another thread
   (Python's, such as cgroup.py's keep-warm one) may take it, and ppoll would sleep on
   with the tree stopped. So the handler writes a byte here that wakes the loop (made
   once, never closed: a late handler in another thread cannot write into a reused fd).
   The safety net: should a wakeup be lost all the same, the loop looks this soon. */
static int chld_pipe[2] = {-1, -1};
#define WAIT_NET_NS 250000000L

static void on_sigchld(int sig) {
    (void)sig; /* only to end ppoll: the loop reads what happened with waitpid */
    int saved = errno;
    ssize_t ignored = write(chld_pipe[1], "", 1); /* full or closed: nothing to do */
    (void)ignored;
    errno = saved;
}

int ztsa_trace_begin(int root, int helper, int init, int log, int wake_fd,
                     unsigned long tag_exec, unsigned long tag_net, unsigned long tag_pid,
                     int syscalls) {
    free(T.slot);
    memset(&T, 0, sizeof T);
    R.root = root;
    R.keeper = helper && init ? root : 0;
    R.helper = helper && !init ? root : 0; /* the keeper's: 0 until seen */
    R.cmd = helper ? 0 : root;
    R.log = log;
    R.wake_fd = wake_fd;
    R.tag_exec = tag_exec;
    R.tag_net = tag_net;
    R.tag_pid = tag_pid;
    R.syscalls = syscalls;
    R.execs = R.connects = 0;
    R.killing = 0;
    R.events = 0;
    struct proc *p = add(root, root);
    if (!p)
        return -ENOMEM;
    p->started = 1; /* seized, not auto-attached: it has no first stop */
    if (chld_pipe[0] < 0 && pipe2(chld_pipe, O_NONBLOCK | O_CLOEXEC) < 0)
        return -errno;
    /* SIGCHLD blocked here but in ppoll: one after an empty waitpid waits for it. In
       another thread it is a byte on chld_pipe (SA_RESTART: that thread's calls go on) */
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigchld;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    if (sigaction(SIGCHLD, &sa, &R.chld_before) < 0)
        return -errno;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &block, &R.mask_before) < 0)
        return -errno;
    return 0;
}

void ztsa_trace_end(void) {
    sigprocmask(SIG_SETMASK, &R.mask_before, NULL);
    sigaction(SIGCHLD, &R.chld_before, NULL);
}

int ztsa_procs(int *out, int max) {
    int n = 0;
    for (size_t i = 0; i < T.cap; i++) {
        const struct proc *p = &T.slot[i];
        if (p->tid > 0 && !p->gone && p->tid == p->tgid && p->tid != R.helper &&
            p->tid != R.keeper) {
            if (n < max)
                out[n] = p->tid;
            n++;
        }
    }
    return n; /* more than max: call again with room for them all */
}

void ztsa_trace_killing(void) {
    R.killing = 1;
}

int ztsa_trace_helper(void) {
    return R.helper;
}

int ztsa_tgid(int tid) {
    const struct proc *p = find(tid);
    return p && !p->gone ? p->tgid : tid;
}

unsigned long ztsa_trace_execs(void) {
    return R.execs;
}

unsigned long ztsa_trace_connects(void) {
    return R.connects;
}

static int ppid_from_proc(int tid) {
    return (int)proc_status_field(AT_FDCWD, tid, "PPid", 10, 0);
}

/* The keeper's first process is the helper; the helper's first is CMD. parent: the new
   process's parent, 0 when not known yet. */
static void adopt(int tid, int tgid, int parent) {
    if (R.cmd || tgid != tid || tid == R.helper || tid == R.keeper ||
        (!R.helper && !R.keeper))
        return;
    if (!parent)
        parent = ppid_from_proc(tid);
    if (R.keeper && !R.helper) {
        if (parent == R.keeper)
            R.helper = tid;
    } else if (parent == R.helper) {
        R.cmd = tid;
    }
}

static int role_of(int tid) {
    return tid == R.helper ? ZTSA_ROLE_HELPER : tid == R.cmd ? ZTSA_ROLE_CMD
         : tid == R.keeper ? ZTSA_ROLE_KEEPER : ZTSA_ROLE_TREE;
}

/* ---- registers ---- */

#if defined(__x86_64__)
/* The registers of the last ztsa_syscall_get: the tracee stays stopped until the tracer
   answers, so ztsa_syscall_return reuses them instead of fetching them again. */
static struct user_regs_struct cached_regs;
static int cached_pid = -1;
#endif

long ztsa_ptrace(long request, int pid, unsigned long addr, unsigned long data) {
    errno = 0;
    long r = ptrace((enum __ptrace_request)request, pid, (void *)addr, (void *)data);
    if (r == -1 && errno)
        return -errno;
    return r;
}

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

/* The calls the file helper answers (the filter's RET_USER_NOTIF set). */
static int helper_call(long nr) {
    switch (nr) {
    case ZTSA_NR_open: case ZTSA_NR_creat: case ZTSA_NR_openat: case ZTSA_NR_mkdir:
    case ZTSA_NR_mkdirat: case ZTSA_NR_mknod: case ZTSA_NR_mknodat: case ZTSA_NR_symlink:
    case ZTSA_NR_symlinkat: case ZTSA_NR_link: case ZTSA_NR_linkat: case ZTSA_NR_rename:
    case ZTSA_NR_renameat: case ZTSA_NR_renameat2: case ZTSA_NR_umask: case ZTSA_NR_bind:
    case ZTSA_NR_connect:
        return 1;
    default:
        return 0;
    }
}

#if defined(__x86_64__)
/* At a TAG_PID stop (no PID namespace): does the call name a process of the tree? The
   pid is a register value, read once here; the tracee stays stopped until answered. */
static int names_the_tree(int tid) {
    struct user_regs_struct regs;
    cached_pid = -1;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0)
        return 0;
    long nr = (long)regs.orig_rax;
    int target = (int)(nr == ZTSA_NR_setpriority || nr == ZTSA_NR_ioprio_set ? regs.rsi
                                                                                : regs.rdi);
    const struct proc *p = target > 0 ? find(target) : NULL;
    return p && !p->gone;
}
#endif

/* At a signal-delivery stop: a call that was waiting for the file helper (-ERESTARTSYS)
   restarts after the handler (-ERESTARTNOINTR) instead of failing with EINTR, which
   these calls never do without ztsa. (connect is never run by the kernel for the tree:
   the helper or the tracer performs it.) */
static void restart_interrupted(int pid) {
#if defined(__x86_64__)
    struct user_regs_struct regs;
    cached_pid = -1;
    if (ptrace(PTRACE_GETREGS, pid, 0, &regs) < 0)
        return;
    if ((long long)regs.rax == -ERESTARTSYS_ && helper_call((long)regs.orig_rax)) {
        regs.rax = (unsigned long long)-ERESTARTNOINTR_;
        ptrace(PTRACE_SETREGS, pid, 0, &regs);
    }
#else
    (void)pid;
#endif
}

#if defined(__x86_64__)
/* A connect ztsa_decide allows by an address rule (or a disconnect), performed here on
   a duplicate of the tracee's socket from our own copy of the address. 1: done and the
   tracee resumed; 0: Python decides (denials, Unix sockets, anything unusual). */
static void cont(int tid, int sig);

static int loop_connect(const struct ztsa_allow *allow, pid_t tid) {
    struct user_regs_struct regs;
    if (ptrace(PTRACE_GETREGS, tid, 0, &regs) < 0 || regs.orig_rax != ZTSA_NR_connect)
        return 0;
    unsigned int len = (unsigned int)regs.rdx;
    unsigned char sa[128];
    if (len < 2 || len > sizeof sa)
        return 0;
    struct iovec local = {sa, len};
    struct iovec remote = {(void *)(unsigned long)regs.rsi, len};
    if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)len)
        return 0;
    int rule;
    int why = ztsa_decide(allow, ZTSA_CALL_CONNECT, -1, sa, len, NULL, &rule);
    if (why != ZTSA_ALLOW_RULE && why != ZTSA_ALLOW_DISCONNECT)
        return 0;
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
    R.connects++;
    cont(tid, 0);
    return 1;
}
#endif

/* How tid goes on: to its next system call (PTRACE_SYSCALL) when --trace-syscalls and
   it is of the tree (CMD known, and it none of ztsa's keeper and helper), else on. */
static enum __ptrace_request resume_request(int tid) {
    if (!R.syscalls || !R.cmd)
        return PTRACE_CONT;
    struct proc *p = find(tid);
    int tgid = p ? p->tgid : tid;
    return tgid == R.helper || tgid == R.keeper || (tgid == R.root && R.root != R.cmd)
               ? PTRACE_CONT : PTRACE_SYSCALL;
}

static void cont(int tid, int sig) {
    /* ESRCH: killed, its exit follows */
    ptrace(resume_request(tid), tid, 0, (void *)(long)sig);
}

/* The thread group of a clone's child: the parent's when CLONE_THREAD (clone's flags
   are in the parent's registers at the event; clone3 never runs: the filter answers
   ENOSYS). */
static int clone_tgid(int parent, int child) {
#if defined(__x86_64__)
    struct user_regs_struct regs;
    cached_pid = -1;
    if (ptrace(PTRACE_GETREGS, parent, 0, &regs) == 0 && regs.orig_rax == ZTSA_NR_clone) {
        if (!(regs.rdi & CLONE_THREAD_FLAG))
            return child;
        struct proc *p = find(parent);
        return p ? p->tgid : tgid_from_proc(parent);
    }
#else
    (void)parent;
#endif
    return tgid_from_proc(child);
}

/* One stop. 1: answered here; 0: ev is filled for Python. */
static int stopped(const struct ztsa_allow *allow, int pid, int st, struct ztsa_event *ev) {
    int event = st >> 16, sig = WSTOPSIG(st);
    struct proc *p = find(pid);
    if (p && p->gone) { /* a pid that was ours, now a new tracee's */
        drop(pid);
        p = NULL;
    }
    if (!p) { /* its stop beat its parent's fork event */
        int tgid = syscall(SYS_tgkill, pid, pid, 0) == 0 ? pid : tgid_from_proc(pid);
        p = add(pid, tgid);
        adopt(pid, tgid, 0);
        if (!p) /* out of memory: the tracer cannot go on */
            return ev->kind = -ENOMEM, 0;
        if (R.killing) {
            kill(pid, SIGKILL);
            cont(pid, 0);
            return 1;
        }
        if (event == PTRACE_EVENT_STOP) {
            p->started = 1;
            cont(pid, 0);
            return 1;
        }
    }
    if (event == 0 && sig == (SIGTRAP | 0x80)) { /* --trace-syscalls: a system call */
        if (resume_request(pid) != PTRACE_SYSCALL) {
            cont(pid, 0);
            return 1;
        }
        *ev = (struct ztsa_event){ZTSA_EV_TRACE, pid, p->tgid, 0, role_of(p->tgid)};
        return 0;
    }
    unsigned long msg = 0;
    switch (event) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0) {
            int child = (int)msg;
            struct proc *c = find(child);
            if (c && c->gone) {
                drop(child); /* it has come and gone already */
            } else if (!c) {
                int tgid = event == PTRACE_EVENT_CLONE ? clone_tgid(pid, child) : child;
                if (!add(child, tgid))
                    return ev->kind = -ENOMEM, 0;
                adopt(child, tgid, p->tgid);
                if (R.killing)
                    kill(child, SIGKILL); /* born as CMD's exit was being cleaned up */
            }
        }
        cont(pid, 0);
        return 1;
    case PTRACE_EVENT_EXEC:
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 && (int)msg != pid)
            drop((int)msg); /* exec from a non-leader thread: that tid is gone */
        p = find(pid);
        if (p) {
            p->tgid = pid;
            p->started = 1;
        }
        R.execs++;
        if (R.log) {
            *ev = (struct ztsa_event){ZTSA_EV_EXEC, pid, pid, 0, role_of(pid)};
            return 0;
        }
        cont(pid, 0);
        return 1;
    case PTRACE_EVENT_SECCOMP:
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 && msg == R.tag_exec) {
            cont(pid, 0); /* logged at the exec event */
            return 1;
        }
#if defined(__x86_64__)
        if (allow && msg == R.tag_net && loop_connect(allow, pid))
            return 1;
        if (msg == R.tag_pid && names_the_tree(pid)) {
            cont(pid, 0); /* another of the tree's processes: as bare */
            return 1;
        }
#endif
        *ev = (struct ztsa_event){ZTSA_EV_SYSCALL, pid, p->tgid, 0, role_of(p->tgid)};
        return 0;
    case PTRACE_EVENT_STOP:
        if (!p->started) {
            p->started = 1; /* a new tracee's first stop */
            cont(pid, 0);
        } else if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
            ptrace(PTRACE_LISTEN, pid, 0, 0); /* a group stop: stays stopped */
        } else {
            cont(pid, 0);
        }
        return 1;
    case 0: /* a signal on its way: deliver it */
        p->started = 1;
        if (R.helper || R.keeper)
            restart_interrupted(pid);
        cont(pid, sig);
        return 1;
    default:
        cont(pid, 0);
        return 1;
    }
}

/* 1: answered here; 0: ev is filled for Python. */
static int exited(int pid, int st, struct ztsa_event *ev) {
    struct proc *p = find(pid);
    int tgid = p ? p->tgid : pid;
    drop(pid);
    if (!p) { /* before its parent's fork event: remember it, unlisted */
        struct proc *g = add(pid, pid);
        if (g)
            g->gone = 1;
    }
    if ((pid != tgid && pid != R.helper) || pid == R.keeper)
        return 1; /* a thread, or the keeper (its end follows the helper's) */
    if (pid == R.helper || pid == R.cmd || R.log) {
        *ev = (struct ztsa_event){ZTSA_EV_EXIT, pid, tgid, st, role_of(pid)};
        return 0;
    }
    return 1;
}

/* A signal ztsa was sent (Python's wakeup fd holds its number)? */
static int signalled(struct ztsa_event *ev) {
    unsigned char sig;
    if (R.wake_fd < 0 || read(R.wake_fd, &sig, 1) != 1)
        return 0;
    *ev = (struct ztsa_event){ZTSA_EV_SIGNAL, 0, 0, sig, 0};
    return 1;
}

int ztsa_wait(const struct ztsa_allow *allow, struct ztsa_event *ev) {
    sigset_t during;
    sigprocmask(SIG_SETMASK, NULL, &during);
    sigdelset(&during, SIGCHLD);
    for (;;) {
        /* a signal to ztsa is handed over when the tree is idle, and at least every 64
           events when it is not: before waitpid, so that no stop it took is dropped */
        if (++R.events >= 64) {
            R.events = 0;
            if (signalled(ev))
                return 0;
        }
        int st;
        pid_t pid = waitpid(-1, &st, __WALL | WNOHANG);
        if (pid < 0 && errno == ECHILD) {
            *ev = (struct ztsa_event){ZTSA_EV_GONE, 0, 0, 0, 0};
            return 0;
        }
        if (pid < 0 && errno != EINTR)
            return -errno;
        if (pid <= 0) {
            R.events = 0;
            if (signalled(ev))
                return 0;
            /* nothing yet: sleep until a SIGCHLD, a signal to ztsa (which Python's
               handler turns into a byte on the wake fd), or the safety net's time */
            struct pollfd pfd[2] = {{chld_pipe[0], POLLIN, 0}, {R.wake_fd, POLLIN, 0}};
            struct timespec net = {0, WAIT_NET_NS};
            if (ppoll(pfd, R.wake_fd >= 0 ? 2 : 1, &net, &during) < 0 && errno != EINTR)
                return -errno;
            char drain[64]; /* emptied before waitpid: a later SIGCHLD writes again */
            while (read(chld_pipe[0], drain, sizeof drain) > 0)
                continue;
            continue;
        }
        ev->kind = 0;
        int done = WIFSTOPPED(st) ? stopped(allow, pid, st, ev) : exited(pid, st, ev);
        if (ev->kind < 0)
            return ev->kind;
        if (!done)
            return 0;
    }
}

int ztsa_resume(int tid) {
    return ptrace(resume_request(tid), tid, 0, 0) < 0 ? -errno : 0;
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
    if (ptrace((enum __ptrace_request)0x420e, pid, (void *)sizeof info, &info) < 0)
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

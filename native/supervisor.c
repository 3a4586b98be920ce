/* Runs in the supervisor, ztsa's own process, on the one thread that seized the tree
   (the kernel refuses ptrace requests from any other): the tracer's wait loop, the
   process table it owns, the registers of a stop; the stateless ptrace, memory and socket calls of the Python tracer are
   tracecalls.c's. Nothing here is touched by the child or the file helper.

   The loop answers what needs no decision by itself: forks, a new tracee's first stop
   (also when it comes before its parent's fork event), execs, group stops
   (PTRACE_LISTEN), signal deliveries, exits, execve's seccomp stop, and, in
   ZTSA_CONNECTS_LOOP mode, the connects ztsa_decide allows. The rest goes to Python as
   one ztsa_event. The process table is this file's alone; Python asks it (ztsa_procs,
   ztsa_tgid); the counters the file helper shares are counters.c's. The state is one context, struct supervisor. Signals to ztsa are recorded by a handler
   here and handed over as events, never acted on in the handler. */
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

/* ---- the process table: every live tid of the tree ---- */

struct proc {
    int tid;     /* 0: empty slot; -1: a removed one */
    int tgid;
    int started; /* its first stop was seen (a later EVENT_STOP is a group stop) */
    int gone;    /* it exited before its parent's fork event: that event must not
                    bring it back (its pid may be another process's by then) */
};

struct table {
    struct proc *slot;
    size_t cap, used, live; /* used counts removed slots too */
};

/* the run, from ztsa_trace_begin */
struct run {
    int root, helper, cmd; /* cmd: 0 until known (the helper's or the init's first child) */
    int keeper;            /* with a PID namespace: root, whose first child is the helper */
    int log, wake_fd;
    unsigned long tag_exec, tag_net, tag_pid;
    int syscalls;          /* --trace-syscalls: the tree resumes to its next system call */
    unsigned long execs, connects;
    int killing;           /* CMD has exited: every new process is killed at once */
    int setup_exec;        /* root's first exec is ztsa-ns's (the set-up's), not CMD's */
    unsigned events;       /* events answered since the wake fd was last read */
    sigset_t mask_before;
    struct sigaction chld_before;
};

/* The supervisor's context: its process table, the run (made whole by
   ztsa_trace_begin) and the registers of the last stop read. One per process, this
   file's: the entry points Python calls take no handle, so each starts from S and
   passes it on explicitly. */
struct supervisor {
    struct table T;
    struct run R;
    /* the registers of the last ztsa_syscall_get: the tracee stays stopped until the
       tracer answers, so ztsa_syscall_return reuses them instead of fetching them again */
    struct ztsa_regs cached_regs;
    int cached_pid;
};
static struct supervisor S = {.cached_pid = -1};

static size_t slot_of(int tid, size_t cap) {
    return ((size_t)(unsigned int)tid * 2654435761u) & (cap - 1);
}

static struct proc *find(struct supervisor *s, int tid) {
    if (!s->T.cap)
        return NULL;
    const struct table *T = &s->T;
    for (size_t i = slot_of(tid, T->cap), k = 0; k < T->cap; k++, i = (i + 1) & (T->cap - 1)) {
        if (T->slot[i].tid == tid)
            return &T->slot[i];
        if (T->slot[i].tid == 0)
            return NULL;
    }
    return NULL;
}

static int grow(struct supervisor *s) {
    size_t cap = s->T.cap ? s->T.cap : 256;
    while ((s->T.live + 1) * 4 > cap) /* half full at most after any add until the next */
        cap *= 2;
    struct proc *fresh = calloc(cap, sizeof *fresh);
    if (!fresh)
        return -1;
    for (size_t i = 0; i < s->T.cap; i++) {
        if (s->T.slot[i].tid <= 0)
            continue;
        size_t j = slot_of(s->T.slot[i].tid, cap);
        while (fresh[j].tid)
            j = (j + 1) & (cap - 1);
        fresh[j] = s->T.slot[i];
    }
    free(s->T.slot);
    s->T.slot = fresh;
    s->T.cap = cap;
    s->T.used = s->T.live;
    return 0;
}

/* The entry of tid, made with tgid if absent (NULL only when memory ran out). */
static struct proc *add(struct supervisor *s, int tid, int tgid) {
    struct proc *p = find(s, tid);
    if (p)
        return p;
    if ((s->T.used + 1) * 2 > s->T.cap && grow(s) < 0)
        return NULL;
    size_t i = slot_of(tid, s->T.cap);
    while (s->T.slot[i].tid > 0)
        i = (i + 1) & (s->T.cap - 1);
    if (s->T.slot[i].tid == 0)
        s->T.used++;
    s->T.slot[i] = (struct proc){tid, tgid, 0, 0};
    s->T.live++;
    return &s->T.slot[i];
}

static void drop(struct supervisor *s, int tid) {
    struct proc *p = find(s, tid);
    if (p) {
        p->tid = -1;
        s->T.live--;
    }
}

static int tgid_from_proc(int tid) {
    return (int)proc_status_field(AT_FDCWD, tid, "Tgid", 10, tid);
}

/* ---- the run ---- */

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
                     int syscalls, int setup_exec) {
    struct supervisor *s = &S;
    free(s->T.slot);
    s->T = (struct table){NULL, 0, 0, 0};
    /* the run, whole: the keeper's helper is 0 until seen */
    s->R = (struct run){.root = root, .keeper = helper && init ? root : 0,
                        .helper = helper && !init ? root : 0, .cmd = helper ? 0 : root,
                        .log = log, .wake_fd = wake_fd, .tag_exec = tag_exec,
                        .tag_net = tag_net, .tag_pid = tag_pid, .syscalls = syscalls,
                        .setup_exec = setup_exec};
    struct proc *p = add(s, root, root);
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
    if (sigaction(SIGCHLD, &sa, &s->R.chld_before) < 0)
        return -errno;
    sigset_t block;
    sigemptyset(&block);
    sigaddset(&block, SIGCHLD);
    if (sigprocmask(SIG_BLOCK, &block, &s->R.mask_before) < 0)
        return -errno;
    return 0;
}

void ztsa_trace_end(void) {
    const struct supervisor *s = &S;
    sigprocmask(SIG_SETMASK, &s->R.mask_before, NULL);
    sigaction(SIGCHLD, &s->R.chld_before, NULL);
}

int ztsa_procs(int *out, int max) {
    const struct supervisor *s = &S;
    int n = 0;
    for (size_t i = 0; i < s->T.cap; i++) {
        const struct proc *p = &s->T.slot[i];
        if (p->tid > 0 && !p->gone && p->tid == p->tgid && p->tid != s->R.helper &&
            p->tid != s->R.keeper) {
            if (n < max)
                out[n] = p->tid;
            n++;
        }
    }
    return n; /* more than max: call again with room for them all */
}

void ztsa_trace_killing(void) {
    S.R.killing = 1;
}

int ztsa_trace_helper(void) {
    return S.R.helper;
}

int ztsa_tgid(int tid) {
    const struct proc *p = find(&S, tid);
    return p && !p->gone ? p->tgid : tid;
}

unsigned long ztsa_trace_execs(void) {
    return S.R.execs;
}

unsigned long ztsa_trace_connects(void) {
    return S.R.connects;
}

static int ppid_from_proc(int tid) {
    return (int)proc_status_field(AT_FDCWD, tid, "PPid", 10, 0);
}

/* The keeper's first process is the helper; the helper's first is CMD. parent: the new
   process's parent, 0 when not known yet. */
static void adopt(struct supervisor *s, int tid, int tgid, int parent) {
    if (s->R.cmd || tgid != tid || tid == s->R.helper || tid == s->R.keeper ||
        (!s->R.helper && !s->R.keeper))
        return;
    if (!parent)
        parent = ppid_from_proc(tid);
    if (s->R.keeper && !s->R.helper) {
        if (parent == s->R.keeper)
            s->R.helper = tid;
    } else if (parent == s->R.helper) {
        s->R.cmd = tid;
    }
}

static int role_of(struct supervisor *s, int tid) {
    return tid == s->R.helper ? ZTSA_ROLE_HELPER : tid == s->R.cmd ? ZTSA_ROLE_CMD
         : tid == s->R.keeper ? ZTSA_ROLE_KEEPER : ZTSA_ROLE_TREE;
}

/* ---- registers (regs.c) ---- */

int ztsa_syscall_get(int pid, long *nr, unsigned long long args[6]) {
    struct supervisor *s = &S;
    s->cached_pid = -1;
    int e = regs_get(pid, &s->cached_regs);
    if (e)
        return e;
    s->cached_pid = pid;
    *nr = regs_nr(&s->cached_regs);
    for (int i = 0; i < 6; i++)
        args[i] = regs_arg(&s->cached_regs, i);
    return 0;
}

int ztsa_syscall_return(int pid, long result) {
    struct supervisor *s = &S;
    struct ztsa_regs regs;
    if (pid == s->cached_pid) {
        regs = s->cached_regs;
    } else {
        int e = regs_get(pid, &regs);
        if (e)
            return e;
    }
    s->cached_pid = -1;
    return regs_skip(pid, &regs, result);
}

/* The calls the file helper answers whose wait a signal restarts: the opens and the
   name-creating calls, umask, bind and connect (by the table's ops). */
static int helper_call(long nr) {
    const struct ztsa_syscall *c = ztsa_sys(nr);
    int op = c ? c->op : ZTSA_OP_OTHER;
    return (op >= ZTSA_OP_OPEN && op <= ZTSA_OP_RENAME) || op == ZTSA_OP_UMASK ||
           op == ZTSA_OP_BIND || op == ZTSA_OP_CONNECT;
}

/* At a TAG_PID stop (no PID namespace): does the call name a process of the tree? The
   pid is a register value, read once here; the tracee stays stopped until answered. */
static int names_the_tree(struct supervisor *s, int tid) {
    struct ztsa_regs regs;
    s->cached_pid = -1;
    if (regs_get(tid, &regs) < 0)
        return 0;
    unsigned long long pid = 0;
    int target = regs_role_arg(&regs, ZTSA_ARG_PID, &pid) ? (int)pid : 0;
    const struct proc *p = target > 0 ? find(s, target) : NULL;
    return p && !p->gone;
}

/* At a signal-delivery stop: a call that was waiting for the file helper (-ERESTARTSYS)
   restarts after the handler (-ERESTARTNOINTR) instead of failing with EINTR, which
   these calls never do without ztsa. (connect is never run by the kernel for the tree:
   the helper or the tracer performs it.) */
static void restart_interrupted(struct supervisor *s, int pid) {
    s->cached_pid = -1;
    regs_restart_interrupted(pid, helper_call);
}

/* A connect ztsa_decide allows by an address rule (or a disconnect), performed here on
   a duplicate of the tracee's socket from our own copy of the address. 1: done and the
   tracee resumed; 0: Python decides (denials, Unix sockets, anything unusual). */
static void cont(struct supervisor *s, int tid, int sig);

static int loop_connect(struct supervisor *s, const struct ztsa_allow *allow, pid_t tid) {
    struct ztsa_regs regs;
    unsigned long long fd, addr, addrlen;
    if (regs_get(tid, &regs) < 0 || regs_nr(&regs) != ZTSA_NR_connect ||
        !regs_role_arg(&regs, ZTSA_ARG_FD, &fd) ||
        !regs_role_arg(&regs, ZTSA_ARG_ADDR, &addr) ||
        !regs_role_arg(&regs, ZTSA_ARG_ADDRLEN, &addrlen))
        return 0;
    unsigned int len = (unsigned int)addrlen;
    unsigned char sa[128];
    if (len < 2 || len > sizeof sa)
        return 0;
    struct iovec local = {sa, len};
    struct iovec remote = {(void *)(unsigned long)addr, len};
    if (process_vm_readv(tid, &local, 1, &remote, 1, 0) != (ssize_t)len)
        return 0;
    int rule;
    int why = ztsa_decide(allow, ZTSA_CALL_CONNECT, -1, sa, len, NULL, &rule);
    if (why != ZTSA_ALLOW_RULE && why != ZTSA_ALLOW_DISCONNECT)
        return 0;
    int dup = ztsa_pidfd_getfd(tid, (int)fd);
    if (dup < 0)
        return 0;
    long r = syscall(SYS_connect, dup, sa, len);
    long result = r < 0 ? -errno : r;
    close(dup);
    s->cached_pid = -1;
    if (regs_skip(tid, &regs, result) < 0)
        return 0;
    s->R.connects++;
    cont(s, tid, 0);
    return 1;
}

/* How tid goes on: to its next system call (PTRACE_SYSCALL) when --trace-syscalls and
   it is of the tree (CMD known, and it none of ztsa's keeper and helper), else on. */
static ztsa_ptrace_req resume_request(struct supervisor *s, int tid) {
    if (!s->R.syscalls || !s->R.cmd)
        return PTRACE_CONT;
    struct proc *p = find(s, tid);
    int tgid = p ? p->tgid : tid;
    const struct run *R = &s->R;
    return tgid == R->helper || tgid == R->keeper || (tgid == R->root && R->root != R->cmd)
               ? PTRACE_CONT : PTRACE_SYSCALL;
}

static void cont(struct supervisor *s, int tid, int sig) {
    /* ESRCH: killed, its exit follows */
    ptrace(resume_request(s, tid), tid, 0, (void *)(long)sig);
}

/* The thread group of a clone's child: the parent's when CLONE_THREAD (clone's flags
   are in the parent's registers at the event; clone3 never runs: the filter answers
   ENOSYS). */
static int clone_tgid(struct supervisor *s, int parent, int child) {
    struct ztsa_regs regs;
    unsigned long long flags;
    s->cached_pid = -1;
    if (regs_get(parent, &regs) == 0 && regs_nr(&regs) == ZTSA_NR_clone &&
        regs_role_arg(&regs, ZTSA_ARG_CLONEFLAGS, &flags)) {
        if (!(flags & CLONE_THREAD_FLAG))
            return child;
        struct proc *p = find(s, parent);
        return p ? p->tgid : tgid_from_proc(parent);
    }
    return tgid_from_proc(child);
}

/* One stop. 1: answered here; 0: ev is filled for Python. */
static int stopped(struct supervisor *s, const struct ztsa_allow *allow, int pid, int st,
                   struct ztsa_event *ev) {
    int event = st >> 16, sig = WSTOPSIG(st);
    struct proc *p = find(s, pid);
    if (p && p->gone) { /* a pid that was ours, now a new tracee's */
        drop(s, pid);
        p = NULL;
    }
    if (!p) { /* its stop beat its parent's fork event */
        int tgid = syscall(SYS_tgkill, pid, pid, 0) == 0 ? pid : tgid_from_proc(pid);
        p = add(s, pid, tgid);
        adopt(s, pid, tgid, 0);
        if (!p) /* out of memory: the tracer cannot go on */
            return ev->kind = -ENOMEM, 0;
        if (s->R.killing) {
            kill(pid, SIGKILL);
            cont(s, pid, 0);
            return 1;
        }
        if (event == PTRACE_EVENT_STOP) {
            p->started = 1;
            cont(s, pid, 0);
            return 1;
        }
    }
    if (event == 0 && sig == (SIGTRAP | 0x80)) { /* --trace-syscalls: a system call */
        if (resume_request(s, pid) != PTRACE_SYSCALL) {
            cont(s, pid, 0);
            return 1;
        }
        *ev = (struct ztsa_event){ZTSA_EV_TRACE, pid, p->tgid, 0, role_of(s, p->tgid)};
        return 0;
    }
    unsigned long msg = 0;
    switch (event) {
    case PTRACE_EVENT_FORK:
    case PTRACE_EVENT_VFORK:
    case PTRACE_EVENT_CLONE:
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0) {
            int child = (int)msg;
            struct proc *c = find(s, child);
            if (c && c->gone) {
                drop(s, child); /* it has come and gone already */
            } else if (!c) {
                int tgid = event == PTRACE_EVENT_CLONE ? clone_tgid(s, pid, child) : child;
                if (!add(s, child, tgid))
                    return ev->kind = -ENOMEM, 0;
                adopt(s, child, tgid, p->tgid);
                if (s->R.killing)
                    kill(child, SIGKILL); /* born as CMD's exit was being cleaned up */
            }
        }
        cont(s, pid, 0);
        return 1;
    case PTRACE_EVENT_EXEC:
        if (s->R.setup_exec && pid == s->R.root) { /* ztsa-ns: neither logged nor counted */
            s->R.setup_exec = 0;
            cont(s, pid, 0);
            return 1;
        }
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 && (int)msg != pid)
            drop(s, (int)msg); /* exec from a non-leader thread: that tid is gone */
        p = find(s, pid);
        if (p) {
            p->tgid = pid;
            p->started = 1;
        }
        s->R.execs++;
        if (s->R.log) {
            *ev = (struct ztsa_event){ZTSA_EV_EXEC, pid, pid, 0, role_of(s, pid)};
            return 0;
        }
        cont(s, pid, 0);
        return 1;
    case PTRACE_EVENT_SECCOMP:
        if (ptrace(PTRACE_GETEVENTMSG, pid, 0, &msg) == 0 && msg == s->R.tag_exec) {
            cont(s, pid, 0); /* logged at the exec event */
            return 1;
        }
        if (allow && msg == s->R.tag_net && loop_connect(s, allow, pid))
            return 1;
        if (msg == s->R.tag_pid && names_the_tree(s, pid)) {
            cont(s, pid, 0); /* another of the tree's processes: as bare */
            return 1;
        }
        *ev = (struct ztsa_event){ZTSA_EV_SYSCALL, pid, p->tgid, 0, role_of(s, p->tgid)};
        return 0;
    case PTRACE_EVENT_STOP:
        if (!p->started) {
            p->started = 1; /* a new tracee's first stop */
            cont(s, pid, 0);
        } else if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU) {
            ptrace(PTRACE_LISTEN, pid, 0, 0); /* a group stop: stays stopped */
        } else {
            cont(s, pid, 0);
        }
        return 1;
    case 0: /* a signal on its way: deliver it */
        p->started = 1;
        if (s->R.helper || s->R.keeper)
            restart_interrupted(s, pid);
        cont(s, pid, sig);
        return 1;
    default:
        cont(s, pid, 0);
        return 1;
    }
}

/* 1: answered here; 0: ev is filled for Python. */
static int exited(struct supervisor *s, int pid, int st, struct ztsa_event *ev) {
    struct proc *p = find(s, pid);
    int tgid = p ? p->tgid : pid;
    drop(s, pid);
    if (!p) { /* before its parent's fork event: remember it, unlisted */
        struct proc *g = add(s, pid, pid);
        if (g)
            g->gone = 1;
    }
    if ((pid != tgid && pid != s->R.helper) || pid == s->R.keeper)
        return 1; /* a thread, or the keeper (its end follows the helper's) */
    if (pid == s->R.helper || pid == s->R.cmd || s->R.log) {
        *ev = (struct ztsa_event){ZTSA_EV_EXIT, pid, tgid, st, role_of(s, pid)};
        return 0;
    }
    return 1;
}

/* A signal ztsa was sent (Python's wakeup fd holds its number)? */
static int signalled(struct supervisor *s, struct ztsa_event *ev) {
    unsigned char sig;
    if (s->R.wake_fd < 0 || read(s->R.wake_fd, &sig, 1) != 1)
        return 0;
    *ev = (struct ztsa_event){ZTSA_EV_SIGNAL, 0, 0, sig, 0};
    return 1;
}

int ztsa_wait(const struct ztsa_allow *allow, struct ztsa_event *ev) {
    struct supervisor *s = &S;
    sigset_t during;
    sigprocmask(SIG_SETMASK, NULL, &during);
    sigdelset(&during, SIGCHLD);
    for (;;) {
        /* a signal to ztsa is handed over when the tree is idle, and at least every 64
           events when it is not: before waitpid, so that no stop it took is dropped */
        if (++s->R.events >= 64) {
            s->R.events = 0;
            if (signalled(s, ev))
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
            s->R.events = 0;
            if (signalled(s, ev))
                return 0;
            /* nothing yet: sleep until a SIGCHLD, a signal to ztsa (which Python's
               handler turns into a byte on the wake fd), or the safety net's time */
            struct pollfd pfd[2] = {{chld_pipe[0], POLLIN, 0}, {s->R.wake_fd, POLLIN, 0}};
            struct timespec net = {0, WAIT_NET_NS};
            if (ppoll(pfd, s->R.wake_fd >= 0 ? 2 : 1, &net, &during) < 0 && errno != EINTR)
                return -errno;
            char drain[64]; /* emptied before waitpid: a later SIGCHLD writes again */
            while (read(chld_pipe[0], drain, sizeof drain) > 0)
                continue;
            continue;
        }
        ev->kind = 0;
        int done = WIFSTOPPED(st) ? stopped(s, allow, pid, st, ev) : exited(s, pid, st, ev);
        if (ev->kind < 0)
            return ev->kind;
        if (!done)
            return 0;
    }
}

int ztsa_resume(int tid) {
    return ptrace(resume_request(&S, tid), tid, 0, 0) < 0 ? -errno : 0;
}

/* Runs in the relay: the process that checks the name at the connection (relay.c is
   the file helper's half). CMD forks it with CLONE_PARENT right after it made the tree's
   network namespace (relay_spawn), so it is a child of the helper, in the tree's
   namespace, with no capability but binding a port under 1024, non-dumpable, in the
   helper's Landlock domain (the tree, in a nested one, can neither trace nor signal it),
   in a session of its own. It reads the tree's bytes and so holds nothing of the
   helper's: not the seccomp listener, not the log; only the sockets the helper hands it.
   For each connection: a listener of its own bound to the destination itself (every
   address is local in the tree's namespace), the tree's socket connected to it from the
   helper's copy of the address, accepted (it must be the tree's socket), the listener
   closed, the helper answered. Then the first flight is read (at most ZTSA_FF_MAX bytes,
   for FF_WAIT_S seconds) and judged (firstflight.c): a TLS ClientHello's server name or
   an HTTP/1 request's Host (and absolute target) must be a name that a rule through
   which this address was learnt names, and no name a policy denies. Only then does any
   byte go upstream; after it the bytes flow both ways with splice(2), edge-triggered. A
   refusal resets both connections and is reported to the helper. */
#include "child.h"
#include "relay.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FF_WAIT_S 10 /* the first flight's time limit */
#define IPV6_FREEBIND_ 78

static unsigned long long mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

struct dir {
    int pipe[2];
    size_t inpipe;
    int eof, shut;
};

struct conn {
    unsigned slot, gen;
    int a, s; /* the tree's side (accepted here), the host's */
    int judged;
    unsigned char *buf; /* the first flight, until judged */
    size_t n, sent;
    unsigned long long deadline;
    struct relay_msg m;
    struct dir d[2]; /* 0: tree to host, 1: host to tree */
    unsigned armed[2]; /* the epoll interest of a and s (edge-triggered) */
};

static struct {
    const struct ztsa_plan *plan;
    int ch, ep;
} RL;

/* the live connections; an epoll event names its slot and generation, so one that a
   drop in the same batch freed is skipped */
#define MAX_CONN 4096
static struct conn *C[MAX_CONN];
static unsigned next_gen = 1;

static void end_conn(struct conn *c, int clean);
static void drop(struct conn *c) { end_conn(c, 0); }

static void tell_helper(const struct relay_msg *m) {
    ssize_t w = send(RL.ch, m, sizeof *m, MSG_NOSIGNAL);
    (void)w;
}

/* the connection's end: clean (both ways ended, what is queued still goes), or a reset
   on both sides (a refusal or a broken side: the tree's client sees a refused or broken
   connection, never a server's answer) */
static void end_conn(struct conn *c, int clean) {
    struct linger l = {1, 0};
    if (!clean) {
        setsockopt(c->a, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        setsockopt(c->s, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    }
    close(c->a);
    close(c->s);
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 2; j++)
            if (c->d[k].pipe[j] >= 0)
                close(c->d[k].pipe[j]);
    free(c->buf);
    if (c->slot < MAX_CONN && C[c->slot] == c)
        C[c->slot] = NULL;
    free(c);
}

/* is name one that a rule, through which the address was learnt, names; and no name a
   policy denies? */
static int name_allowed(const struct conn *c, const char *name) {
    const struct ztsa_plan *plan = RL.plan;
    for (int i = 0; i < plan->n_dns_names; i++) {
        const struct ztsa_dns_name *d = &plan->dns_names[i];
        if (d->deny && ztsa_ff_matches(name, d->name, d->suffix))
            return 0;
    }
    for (int i = 0; i < c->m.n_rules; i++) {
        int k = c->m.rules[i];
        if (k >= 0 && k < plan->n_dns_names &&
            ztsa_ff_matches(name, plan->dns_names[k].name, plan->dns_names[k].suffix))
            return 1;
    }
    return 0;
}

/* the first flight so far: 1 judged and allowed, 0 read on, -1 refused */
static int judge(struct conn *c, int final) {
    struct ztsa_ff_result r;
    int ff = ztsa_first_flight(c->buf, c->n, &r);
    if (ff == ZTSA_FF_MORE && !final)
        return 0;
    int ok = (ff == ZTSA_FF_TLS || ff == ZTSA_FF_HTTP) && name_allowed(c, r.name) &&
             (!r.name2[0] || name_allowed(c, r.name2));
    if (ok)
        return 1;
    struct relay_msg m = c->m;
    m.kind = 'D';
    m.ff = ff;
    m.enforced = !RL.plan->audit;
    snprintf(m.name, sizeof m.name, "%s", r.name);
    snprintf(m.name2, sizeof m.name2, "%s", r.name2);
    tell_helper(&m);
    return RL.plan->audit ? 1 : -1; /* --audit-only: logged, let through */
}

/* move what can be moved in direction k; -1 when the connection broke */
static int pump(struct conn *c, int k) {
    struct dir *d = &c->d[k];
    int from = k ? c->s : c->a, to = k ? c->a : c->s;
    for (;;) {
        if (d->inpipe) {
            ssize_t w = splice(d->pipe[0], NULL, to, NULL, d->inpipe,
                               SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
            if (w < 0)
                return errno == EAGAIN ? 0 : -1;
            d->inpipe -= (size_t)w;
            continue;
        }
        if (d->eof) {
            if (!d->shut)
                shutdown(to, SHUT_WR);
            d->shut = 1;
            return 0;
        }
        ssize_t r = splice(from, NULL, d->pipe[1], NULL, 1 << 20,
                           SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (r == 0)
            d->eof = 1;
        else if (r < 0)
            return errno == EAGAIN ? 0 : -1;
        else
            d->inpipe += (size_t)r;
    }
}

/* the first flight's bytes (judged) to the host, before anything spliced */
static int send_flight(struct conn *c) {
    while (c->sent < c->n) {
        ssize_t w = send(c->s, c->buf + c->sent, c->n - c->sent, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0)
            return errno == EAGAIN ? 0 : -1;
        c->sent += (size_t)w;
    }
    free(c->buf);
    c->buf = NULL;
    return 1;
}

/* the interest each side needs now: input always (edge-triggered, an edge is one wake),
   room to write only while a pipe (or the first flight) waits for it; every ACK would
   otherwise be a wake */
static int arm(struct conn *c) {
    unsigned want[2] = {EPOLLIN | EPOLLRDHUP | EPOLLET, EPOLLIN | EPOLLRDHUP | EPOLLET};
    if (c->d[1].inpipe)
        want[0] |= EPOLLOUT;
    if (c->d[0].inpipe || (c->judged && c->buf))
        want[1] |= EPOLLOUT;
    for (int k = 0; k < 2; k++) {
        if (want[k] == c->armed[k])
            continue;
        struct epoll_event ev = {.events = want[k],
                                 .data.u64 = (unsigned long long)c->gen << 32 | (c->slot + 1)};
        if (epoll_ctl(RL.ep, c->armed[k] ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, k ? c->s : c->a,
                      &ev) < 0)
            return -1;
        c->armed[k] = want[k];
    }
    return 0;
}

static void serve(struct conn *c) {
    if (!c->judged) {
        for (;;) {
            ssize_t r = recv(c->a, c->buf + c->n, ZTSA_FF_MAX - c->n, MSG_DONTWAIT);
            if (r < 0 && errno == EAGAIN)
                break;
            int final = r <= 0 || c->n + (size_t)r >= ZTSA_FF_MAX;
            if (r > 0)
                c->n += (size_t)r;
            int j = judge(c, final);
            if (j < 0 || (j == 0 && final)) {
                drop(c);
                return;
            }
            if (j > 0) {
                c->judged = 1;
                break;
            }
        }
        if (!c->judged)
            return;
    }
    if (c->buf) {
        int f = send_flight(c);
        if (f < 0) {
            drop(c);
            return;
        }
        if (f == 0) {
            if (arm(c) < 0)
                drop(c);
            return; /* the rest when the host's socket has room */
        }
    }
    for (int k = 0; k < 2; k++)
        if (pump(c, k) < 0) {
            drop(c);
            return;
        }
    if (c->d[0].shut && c->d[1].shut)
        end_conn(c, 1); /* both ways ended: what is queued still goes */
    else if (arm(c) < 0)
        drop(c);
}

/* the tree's socket connected to a listener of the relay's own at the destination */
static int connect_tree(const struct relay_msg *m, int tree) {
    unsigned short family;
    memcpy(&family, m->sa, 2);
    int l = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l < 0)
        return -errno;
    int one = 1;
    setsockopt(l, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (family == AF_INET6)
        setsockopt(l, IPPROTO_IPV6, IPV6_FREEBIND_, &one, sizeof one);
    else
        setsockopt(l, IPPROTO_IP, IP_FREEBIND, &one, sizeof one);
    int r = bind(l, (const struct sockaddr *)m->sa, (socklen_t)m->len) < 0 ? -errno : 0;
    if (r == 0 && listen(l, 1) < 0)
        r = -errno;
    int a = -1;
    if (r == 0) {
        int flags = fcntl(tree, F_GETFL);
        if (flags >= 0 && !(flags & O_NONBLOCK))
            fcntl(tree, F_SETFL, flags | O_NONBLOCK);
        r = connect(tree, (const struct sockaddr *)m->sa, (socklen_t)m->len) < 0 ? -errno : 0;
        if (flags >= 0 && !(flags & O_NONBLOCK))
            fcntl(tree, F_SETFL, flags);
        if (r == -EINPROGRESS) {
            struct pollfd pw = {tree, POLLOUT, 0};
            int err = 0;
            socklen_t el = sizeof err;
            r = poll(&pw, 1, 1000) == 1 &&
                        getsockopt(tree, SOL_SOCKET, SO_ERROR, &err, &el) == 0
                    ? -err
                    : -ETIMEDOUT;
        }
    }
    if (r == 0) {
        struct pollfd pa = {l, POLLIN, 0};
        if (poll(&pa, 1, 1000) == 1)
            a = accept4(l, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (a < 0)
            r = -ECONNABORTED;
    }
    if (a >= 0) { /* what it accepted is the tree's socket, and nothing else */
        struct sockaddr_storage mine, peer;
        socklen_t ml = sizeof mine, pl = sizeof peer;
        if (getsockname(tree, (struct sockaddr *)&mine, &ml) < 0 ||
            getpeername(a, (struct sockaddr *)&peer, &pl) < 0 || ml != pl ||
            memcmp(&mine, &peer, ml) != 0) {
            close(a);
            a = -1;
            r = -ECONNABORTED;
        }
    }
    close(l);
    return r < 0 ? r : a;
}

static void take_connection(void) {
    struct relay_msg m;
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    struct iovec v = {&m, sizeof m};
    struct msghdr h = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    ssize_t got = recvmsg(RL.ch, &h, MSG_CMSG_CLOEXEC);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR))
        _exit(0); /* the helper is gone */
    if (got < 0)
        return;
    int fds[2] = {-1, -1};
    struct cmsghdr *c = CMSG_FIRSTHDR(&h);
    if (c && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(2 * sizeof(int)))
        memcpy(fds, CMSG_DATA(c), sizeof fds);
    if (got != (ssize_t)sizeof m || m.kind != 'C' || fds[0] < 0 || m.len < 0 ||
        m.len > (int)sizeof m.sa) {
        for (int i = 0; i < 2; i++)
            if (fds[i] >= 0)
                close(fds[i]);
        return;
    }
    int a = connect_tree(&m, fds[0]);
    close(fds[0]);
    struct relay_msg ans = {.kind = 'A', .id = m.id, .result = a < 0 ? a : 0};
    struct conn *cn = a >= 0 ? calloc(1, sizeof *cn) : NULL;
    unsigned char *buf = cn ? malloc(ZTSA_FF_MAX) : NULL;
    int ok = buf != NULL;
    if (cn) {
        cn->d[0].pipe[0] = cn->d[0].pipe[1] = cn->d[1].pipe[0] = cn->d[1].pipe[1] = -1;
        ok = ok && pipe2(cn->d[0].pipe, O_CLOEXEC | O_NONBLOCK) == 0 &&
             pipe2(cn->d[1].pipe, O_CLOEXEC | O_NONBLOCK) == 0;
    }
    if (a >= 0 && !ok) {
        ans.result = -ENOMEM;
        struct linger l = {1, 0};
        setsockopt(a, SOL_SOCKET, SO_LINGER, &l, sizeof l);
        if (cn) {
            cn->a = a;
            cn->s = fds[1];
            cn->buf = buf;
            drop(cn);
        } else {
            close(a);
            close(fds[1]);
        }
        tell_helper(&ans);
        return;
    }
    tell_helper(&ans);
    if (a < 0) {
        close(fds[1]);
        return;
    }
    for (int k = 0; k < 2; k++)
        fcntl(cn->d[k].pipe[1], F_SETPIPE_SZ, 1 << 20);
    cn->a = a;
    cn->s = fds[1];
    cn->buf = buf;
    cn->m = m;
    cn->deadline = mono_ns() + FF_WAIT_S * 1000000000ULL;
    cn->slot = MAX_CONN;
    for (unsigned i = 0; i < MAX_CONN && cn->slot == MAX_CONN; i++)
        if (!C[i])
            cn->slot = i;
    if (cn->slot == MAX_CONN) {
        drop(cn);
        return;
    }
    cn->gen = next_gen++;
    C[cn->slot] = cn;
    if (arm(cn) < 0) {
        drop(cn);
        return;
    }
    serve(cn);
}

static void relay_main(const struct ztsa_plan *plan, int ch) {
    RL.plan = plan;
    RL.ch = ch;
    RL.ep = epoll_create1(EPOLL_CLOEXEC);
    if (RL.ep < 0)
        _exit(1);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = 0};
    if (epoll_ctl(RL.ep, EPOLL_CTL_ADD, ch, &ev) < 0)
        _exit(1);
    for (;;) {
        int waiting = 0;
        unsigned long long now = mono_ns();
        for (int i = 0; i < MAX_CONN; i++) {
            struct conn *c = C[i];
            if (c && !c->judged && c->deadline <= now) {
                struct ztsa_ff_result r;
                struct relay_msg m = c->m;
                m.kind = 'D';
                m.ff = ztsa_first_flight(c->buf, c->n, &r);
                m.ff = m.ff == ZTSA_FF_TLS || m.ff == ZTSA_FF_HTTP ? ZTSA_FF_MORE : m.ff;
                m.enforced = 1;
                tell_helper(&m);
                drop(c);
            } else if (c && !c->judged) {
                waiting = 1;
            }
        }
        struct epoll_event evs[64];
        int n = epoll_wait(RL.ep, evs, 64, waiting ? 250 : -1);
        if (n < 0 && errno != EINTR)
            _exit(1);
        for (int i = 0; i < n; i++) {
            if (!evs[i].data.u64) {
                take_connection();
                continue;
            }
            unsigned slot = (unsigned)(evs[i].data.u64 & 0xffffffffu) - 1;
            unsigned gen = (unsigned)(evs[i].data.u64 >> 32);
            if (slot < MAX_CONN && C[slot] && C[slot]->gen == gen)
                serve(C[slot]);
        }
    }
}

/* In CMD, in the tree's new network namespace, before it drops its capabilities: the
   relay, a child of the helper (CLONE_PARENT). The helper's end of its channel, or
   -errno. */
int relay_spawn(const struct ztsa_plan *plan) {
    int ch[2];
    if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, ch) < 0)
        return -errno;
    pid_t helper = getppid();
    long pid = syscall(SYS_clone, CLONE_PARENT | SIGCHLD, 0, NULL, NULL, 0);
    if (pid < 0) {
        int e = errno;
        close(ch[0]);
        close(ch[1]);
        return -e;
    }
    if (pid == 0) {
        if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != helper)
            _exit(0);
        int keep[1] = {ch[1]};
        close_all_but(keep, 1, NULL, 0);
        /* nothing of the tree's: no capability but binding a port under 1024 (in the
           tree's namespace, the only one it has: a listener at a destination's port
           443), no privileges to gain, no /proc access for it, no terminal signals */
        struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
        struct __user_cap_data_struct data[2];
        memset(data, 0, sizeof data);
        for (int cap = 0; cap <= 63; cap++)
            if (cap != CAP_NET_BIND_SERVICE)
                prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
        data[0].effective = data[0].permitted = 1u << CAP_NET_BIND_SERVICE;
        if (syscall(SYS_capset, &hdr, data) < 0)
            memset(data, 0, sizeof data); /* not had: none at all */
        if (syscall(SYS_capset, &hdr, data) < 0 ||
            prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
            _exit(1);
        prctl(PR_SET_NAME, "ztsa-relay", 0, 0, 0);
        setsid();
        signal(SIGPIPE, SIG_IGN);
        signal(SIGINT, SIG_IGN);
        signal(SIGTERM, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        signal(SIGQUIT, SIG_IGN);
        struct rlimit nofile;
        if (getrlimit(RLIMIT_NOFILE, &nofile) == 0) {
            nofile.rlim_cur = nofile.rlim_max;
            setrlimit(RLIMIT_NOFILE, &nofile);
        }
        relay_main(plan, ch[1]);
    }
    close(ch[1]);
    return ch[0];
}

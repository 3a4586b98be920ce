/* Runs in the file helper: its half of the name checked at the connection (against
   domain fronting), with a network namespace for the tree and name rules. A TCP connect
   of the tree to an address that only a name rule opened (net_judged) is answered when
   the helper's own host socket is connected there (an address that refuses or does not
   answer fails the tree's connect as it would bare; a non-blocking connect waits too, at
   most NONBLOCK_WAIT_S, then ETIMEDOUT). The helper then hands that socket and its
   duplicate of the tree's socket to the relay (relayproc.c), and answers the tree when
   the relay says its socket is connected. The tree's socket stays its own: nothing is
   put in its place, getpeername stays true. The relay's refusals come back here to be
   logged and counted as the helper's own denials. Nothing is CONTINUE'd: the helper and
   the relay act on their own duplicates, from their own copies of the address. */
#include "helper.h"
#include "relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define NONBLOCK_WAIT_S 10 /* a non-blocking connect waits at most this long upstream */

/* ---- in the file helper ---- */

#define MAX_PENDING 256
struct pending {
    int used, handed;
    unsigned long long id, deadline; /* deadline 0: the host socket's own timeout */
    pid_t pid;
    int s, dup, nonblock, type;
    struct relay_msg m;
};

/* This feature's state, the context's (struct helper's relay). */
struct relay {
    int fd; /* the channel to the relay, -1: none (every judged connect is refused) */
    struct pending P[MAX_PENDING];
};

struct relay *relay_new(const struct helper *h) {
    struct relay *R = calloc(1, sizeof *R);
    if (R)
        R->fd = h->plan->netns ? h->net[5] : -1;
    return R;
}

static void finish(const struct helper *h, struct pending *p, long result) {
    helper_result(h, p->id, result);
    net_log_allowed(p->pid, "connect", p->m.version, p->m.addr, p->m.port, p->type, p->m.rule,
                    result);
    if (p->s >= 0)
        close(p->s);
    if (p->dup >= 0)
        close(p->dup);
    p->used = 0;
}

long relay_connect(const struct helper *h, const struct seccomp_notif *req, int dup,
                   const void *sa, unsigned int len, int version, const unsigned char *a,
                   int port, const int *rules, int n_rules, const char *rule) {
    struct relay *R = h->relay;
    struct sockaddr_storage peer;
    socklen_t pl = sizeof peer;
    if (getpeername(dup, (struct sockaddr *)&peer, &pl) == 0)
        return -EISCONN;
    if (R->fd < 0 || len > sizeof R->P[0].m.sa)
        return -ECONNREFUSED;
    struct pending *p = NULL;
    for (int i = 0; i < MAX_PENDING && !p; i++)
        if (!R->P[i].used)
            p = &R->P[i];
    if (!p)
        return -EAGAIN;
    long r = 0;
    int s = net_host_connect(dup, sa, len, &r);
    if (s < 0)
        return s;
    int keep = fcntl(dup, F_DUPFD_CLOEXEC, 0);
    if (keep < 0) {
        close(s);
        return -EMFILE;
    }
    memset(p, 0, sizeof *p);
    p->used = 1;
    p->id = req->id;
    p->pid = (pid_t)req->pid;
    p->s = s;
    p->dup = keep;
    int flags = fcntl(dup, F_GETFL);
    p->nonblock = flags >= 0 && (flags & O_NONBLOCK);
    p->type = SOCK_STREAM;
    struct timeval tv = {0, 0};
    socklen_t tl = sizeof tv;
    getsockopt(dup, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl);
    unsigned long long now = net_mono_ns();
    if (p->nonblock)
        p->deadline = now + NONBLOCK_WAIT_S * 1000000000ULL;
    else if (tv.tv_sec || tv.tv_usec)
        p->deadline = now + (unsigned long long)tv.tv_sec * 1000000000ULL +
                      (unsigned long long)tv.tv_usec * 1000ULL;
    p->m.kind = 'C';
    p->m.id = req->id;
    p->m.pid = (int)req->pid;
    p->m.version = version;
    p->m.port = port;
    memcpy(p->m.addr, a, version == 4 ? 4 : 16);
    memcpy(p->m.sa, sa, len);
    p->m.len = (int)len;
    p->m.n_rules = n_rules > RELAY_RULES ? RELAY_RULES : n_rules;
    memcpy(p->m.rules, rules, sizeof(int) * (size_t)p->m.n_rules);
    snprintf(p->m.rule, sizeof p->m.rule, "%s", rule);
    return NET_DEFER;
}

int relay_fds(const struct helper *h, struct pollfd *out, int max) {
    const struct relay *R = h->relay;
    int k = 0;
    if (R->fd >= 0 && k < max)
        out[k++] = (struct pollfd){R->fd, POLLIN, 0};
    for (int i = 0; i < MAX_PENDING && k < max; i++)
        if (R->P[i].used && !R->P[i].handed)
            out[k++] = (struct pollfd){R->P[i].s, POLLOUT, 0};
    return k;
}

int relay_timeout_ms(const struct helper *h) {
    const struct relay *R = h->relay;
    for (int i = 0; i < MAX_PENDING; i++)
        if (R->P[i].used && !R->P[i].handed)
            return 50; /* a pending signal or a deadline is looked for this often */
    return -1;
}

/* the host socket is connected: it and the tree's socket go to the relay */
static void hand(const struct helper *h, struct pending *p) {
    union {
        char buf[CMSG_SPACE(2 * sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct iovec v = {&p->m, sizeof p->m};
    struct msghdr msg = {.msg_iov = &v, .msg_iovlen = 1, .msg_control = u.buf,
                         .msg_controllen = sizeof u.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(2 * sizeof(int));
    int fds[2] = {p->dup, p->s};
    memcpy(CMSG_DATA(c), fds, sizeof fds);
    if (sendmsg(h->relay->fd, &msg, MSG_NOSIGNAL) < 0) {
        finish(h, p, -ECONNABORTED);
        return;
    }
    close(p->s);
    close(p->dup);
    p->s = p->dup = -1;
    p->handed = 1;
}

static void refused_flight(const struct helper *h, const struct relay_msg *m) {
    char shown[128], why[1400];
    char ip[64] = "";
    inet_ntop(m->version == 4 ? AF_INET : AF_INET6, m->addr, ip, sizeof ip);
    snprintf(shown, sizeof shown, m->version == 4 ? "%s:%d" : "[%s]:%d", ip, m->port);
    const char *what = m->ff == ZTSA_FF_ECH ? "a TLS ClientHello with Encrypted Client Hello "
                                              "(its outer name is the client's choice)"
                       : m->ff == ZTSA_FF_NONE ? "first bytes that name no host (neither a "
                                                 "TLS server name nor an HTTP Host)"
                       : m->ff == ZTSA_FF_BAD ? "first bytes that cannot be read as one TLS "
                                                "ClientHello or HTTP/1 request head"
                       : m->ff == ZTSA_FF_MORE ? "first bytes that never made a whole "
                                                 "ClientHello or request head"
                                               : NULL;
    if (what)
        snprintf(why, sizeof why, "%s, to an address only a name opened (%s)", what, m->rule);
    else
        snprintf(why, sizeof why, "the first bytes name %s%s%s (%s), not a name the rules "
                 "allow at this address (%s)", m->name, m->name2[0] ? " and " : "", m->name2,
                 m->ff == ZTSA_FF_TLS ? "TLS server name" : "HTTP Host", m->rule);
    unsigned long count = m->enforced ? helper_count_denial() : helper_count_would();
    if (m->enforced)
        helper_note_denial(count, "send", shown, why);
    if (!helper_may_log(count) || h->plan->log_fd < 0)
        return;
    char e_why[2900], e_addr[200], fields[6000];
    helper_json(why, e_why, sizeof e_why);
    helper_json(shown, e_addr, sizeof e_addr);
    char names[600], e_names[1300];
    snprintf(names, sizeof names, "%s%s%s", m->name, m->name2[0] ? " " : "", m->name2);
    helper_json(names, e_names, sizeof e_names);
    const char *kind = m->ff == ZTSA_FF_TLS ? "tls" : m->ff == ZTSA_FF_HTTP ? "http"
                       : m->ff == ZTSA_FF_ECH ? "ech" : m->ff == ZTSA_FF_NONE ? "none"
                       : m->ff == ZTSA_FF_BAD ? "bad" : "incomplete";
    snprintf(fields, sizeof fields,
             "\"pid\":%d,\"tid\":%d,\"syscall\":\"send\",\"family\":\"%s\",\"address\":\"%s\","
             "\"port\":%d,\"protocol\":\"tcp\",\"decision\":\"deny\",\"rule\":\"%s\","
             "\"first_flight\":\"%s\"%s%s%s%s",
             helper_host_tgid(m->pid), helper_host_pid(m->pid),
             m->version == 4 ? "inet" : "inet6", e_addr, m->port, e_why, kind,
             names[0] ? ",\"server_name\":\"" : "", names[0] ? e_names : "",
             names[0] ? "\"" : "", m->enforced ? "" : ",\"enforced\":false");
    helper_log_event("deny", fields);
}

static void channel_gone(const struct helper *h) {
    struct relay *R = h->relay;
    close(R->fd);
    R->fd = -1;
    for (int i = 0; i < MAX_PENDING; i++)
        if (R->P[i].used)
            finish(h, &R->P[i], -ECONNABORTED);
}

void relay_ready(const struct helper *h, const struct pollfd *fds, int n) {
    struct relay *R = h->relay;
    unsigned long long now = net_mono_ns();
    for (int k = 0; k < n; k++) {
        if (fds[k].fd != R->fd || R->fd < 0 || !fds[k].revents)
            continue;
        for (;;) {
            struct relay_msg m;
            ssize_t got = recv(R->fd, &m, sizeof m, MSG_DONTWAIT);
            if (got < 0 && (errno == EAGAIN || errno == EINTR))
                break;
            if (got != (ssize_t)sizeof m) {
                channel_gone(h);
                break;
            }
            if (m.kind == 'D') {
                m.name[sizeof m.name - 1] = m.name2[sizeof m.name2 - 1] = 0;
                m.rule[sizeof m.rule - 1] = 0;
                refused_flight(h, &m);
                continue;
            }
            for (int i = 0; i < MAX_PENDING; i++)
                if (m.kind == 'A' && R->P[i].used && R->P[i].handed && R->P[i].id == m.id) {
                    finish(h, &R->P[i], m.result);
                    break;
                }
        }
    }
    for (int i = 0; i < MAX_PENDING; i++) {
        struct pending *p = &R->P[i];
        if (!p->used || p->handed)
            continue;
        int ready = 0;
        for (int k = 0; k < n; k++)
            ready |= fds[k].fd == p->s && fds[k].revents;
        if (!helper_still_valid(p->id)) { /* the caller is gone */
            close(p->s);
            close(p->dup);
            p->used = 0;
            continue;
        }
        if (ready) {
            int err = 0;
            socklen_t el = sizeof err;
            getsockopt(p->s, SOL_SOCKET, SO_ERROR, &err, &el);
            if (err)
                finish(h, p, -err);
            else
                hand(h, p);
        } else if (p->deadline && p->deadline <= now) {
            finish(h, p, p->nonblock ? -ETIMEDOUT : -EINPROGRESS);
        } else if (waits_signal_pending(h, p->pid)) {
            finish(h, p, -EINTR);
        }
    }
}


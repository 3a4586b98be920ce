/* Runs in the file helper, with a network namespace for the tree (plan->netns): the
   helper stays in the host's namespace, the tree has only its own loopback
   (native/netns.c). So nothing leaves the tree but what the helper does on sockets it
   makes itself. The decisions cannot be raced: an address (and a send's data) is
   copied once into the helper's memory, and the helper makes every call itself, on its
   own duplicate of the socket, from those copies. Nothing is CONTINUE'd: the kernel
   would look the descriptor number up again, and another thread may have put a host
   socket there.
     connect, sendto/sendmsg/sendmmsg with an address, bind, listen: net_notification
       - allowed by a rule (an address rule, or an address learnt from the answer for a
         name a rule names): the helper makes a socket of its own (host namespace), with
         the options the tree changed, connects it from its copy and puts it in place
         of the tree's descriptor (ADDFD with SETFD); a blocking connect is answered
         when it is made (waits.c). A TCP connect that only a learnt address allows
         (no rule there saying /raw; net_judged) goes to relay.c instead: the tree's
         socket stays its own, and its first bytes must name an allowed name
       - loopback the tree listens on, or port 53 (ztsa's DNS service): made on the
         tree's own socket, which reaches only the tree's namespace
       - a socket the helper made (a host socket): every addressed send and connect is
         decided here; it stays connected, binds nothing, listens only when it is an
         --allow-listen one
       - bind of --allow-listen's port: a host socket bound in its place (inbound)
     This file: the helper's socket in the tree (a host socket made like the tree's, with
   its options, put in place of the tree's descriptor) and connect; the dispatch of the
   network calls. Beside it: netaddr.c (where an address may go, the learnt addresses),
   netsend.c, netbind.c, netdiag.c, netlog.c, unixsock.c, dns.c, waits.c, relay.c. */
#include "helper.h"

#include <arpa/inet.h>
#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif
#define IPPROTO_MPTCP_ 262

static const struct helper *H; /* net_init's */
static unsigned long long host_cookie; /* the host namespace's: the helper's own sockets */

static unsigned long long cookie_of(int fd) {
    unsigned long long c = 0;
    socklen_t len = sizeof c;
    if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len) < 0)
        return 0;
    return c;
}

static int dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

int net_sockopt(int fd, int level, int name) {
    int v = -1;
    socklen_t len = sizeof v;
    return getsockopt(fd, level, name, &v, &len) < 0 ? -1 : v;
}

/* NET_WAIT: the call is made again (waits.c) when net_wait_fd, the helper's own copy of
   the socket, is writable, or soon when it is -1 */
static int net_wait_fd = -1;

long net_wait(int fd) {
    net_wait_forget();
    net_wait_fd = fd >= 0 ? dup_cloexec(fd) : -1;
    return NET_WAIT;
}

int net_wait_take(void) {
    int fd = net_wait_fd;
    net_wait_fd = -1;
    return fd;
}

void net_wait_forget(void) {
    if (net_wait_fd >= 0)
        close(net_wait_fd);
    net_wait_fd = -1;
}

/* is fd a socket of the host's namespace (one the helper made for the tree)? */
int net_is_host(int fd) { return cookie_of(fd) == host_cookie; }

void net_init(const struct helper *h) {
    H = h;
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    host_cookie = probe >= 0 ? cookie_of(probe) : 0;
    if (probe >= 0)
        close(probe);
    netaddr_init(h);
    netlog_init(h);
    netbind_init(h);
    netdiag_init(h);
}


/* ---- a socket of the helper's in the tree ---- */

/* the options a tree sets before connecting, carried to the socket that replaces it
   (not SO_REUSEADDR or SO_REUSEPORT: a host socket is never bound) */
static const int OPTS[][2] = {
    {SOL_SOCKET, SO_KEEPALIVE}, {SOL_SOCKET, SO_BROADCAST}, {SOL_SOCKET, SO_RCVBUF},
    {SOL_SOCKET, SO_SNDBUF}, {SOL_SOCKET, SO_RCVTIMEO}, {SOL_SOCKET, SO_SNDTIMEO},
    {SOL_SOCKET, SO_LINGER}, {SOL_SOCKET, SO_PRIORITY}, {IPPROTO_TCP, TCP_NODELAY},
    {IPPROTO_TCP, TCP_KEEPIDLE}, {IPPROTO_TCP, TCP_KEEPINTVL},
    {IPPROTO_TCP, TCP_KEEPCNT}, {IPPROTO_TCP, TCP_USER_TIMEOUT},
    {IPPROTO_IPV6, IPV6_V6ONLY}, {IPPROTO_IP, IP_TOS}};
#define N_OPTS (sizeof OPTS / sizeof OPTS[0])

/* a fresh socket's values of OPTS, per family, type and protocol, read once */
static struct defaults {
    int family, type, proto, used;
    unsigned char v[N_OPTS][32];
    socklen_t len[N_OPTS];
} defaults[8];

static const struct defaults *defaults_of(int fresh, int family, int type, int proto) {
    struct defaults *d = NULL;
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0] && !d; i++)
        if (defaults[i].used && defaults[i].family == family && defaults[i].type == type &&
            defaults[i].proto == proto)
            return &defaults[i];
    for (size_t i = 0; i < sizeof defaults / sizeof defaults[0] && !d; i++)
        if (!defaults[i].used)
            d = &defaults[i];
    if (!d)
        return NULL;
    for (size_t i = 0; i < N_OPTS; i++) {
        d->len[i] = sizeof d->v[i];
        if (getsockopt(fresh, OPTS[i][0], OPTS[i][1], d->v[i], &d->len[i]) < 0)
            d->len[i] = 0;
    }
    d->family = family, d->type = type, d->proto = proto, d->used = 1;
    return d;
}

/* the options a tree sets before connecting, carried to the socket that replaces it:
   only what the tree changed (a buffer size set to its default would still fix it, and
   turn TCP's buffer tuning off) */
static void copy_options(int from, int to, int family, int type, int proto) {
    const struct defaults *d = defaults_of(to, family, type, proto);
    for (size_t i = 0; i < N_OPTS; i++) {
        if ((OPTS[i][0] == IPPROTO_TCP && type != SOCK_STREAM) ||
            (OPTS[i][1] == SO_BROADCAST && type == SOCK_STREAM) ||
            (OPTS[i][0] == IPPROTO_IPV6 && family != AF_INET6) ||
            (OPTS[i][0] == IPPROTO_IP && family != AF_INET))
            continue;
        unsigned char v[32];
        socklen_t len = sizeof v;
        if (getsockopt(from, OPTS[i][0], OPTS[i][1], v, &len) < 0 ||
            (d && d->len[i] == len && memcmp(v, d->v[i], len) == 0))
            continue;
        if (OPTS[i][1] == SO_RCVBUF || OPTS[i][1] == SO_SNDBUF) {
            int n;
            memcpy(&n, v, sizeof n);
            n /= 2; /* the kernel doubles what it is given */
            memcpy(v, &n, sizeof n);
        }
        setsockopt(to, OPTS[i][0], OPTS[i][1], v, len);
    }
}

/* Put fd in place of the tree's descriptor number target (the FD_CLOEXEC it had). */
int net_install(const struct seccomp_notif *req, int fd, int target) {
    char where[64], buf[512];
    snprintf(where, sizeof where, "%d/fdinfo/%d", (int)req->pid, target);
    int cloexec = 0;
    if (read_proc_at(H->proc, where, buf, sizeof buf)) {
        char *f = strstr(buf, "flags:");
        cloexec = f && (strtoul(f + 6, NULL, 8) & O_CLOEXEC);
    }
    struct seccomp_notif_addfd add;
    memset(&add, 0, sizeof add);
    add.id = req->id;
    add.flags = SECCOMP_ADDFD_FLAG_SETFD;
    add.srcfd = (unsigned int)fd;
    add.newfd = (unsigned int)target;
    add.newfd_flags = cloexec ? O_CLOEXEC : 0;
    return ioctl(H->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
}

/* A host socket like the tree's dup (family, type, protocol, options), not yet placed. */
int net_host_socket(int dup) {
    int family = net_sockopt(dup, SOL_SOCKET, SO_DOMAIN);
    int type = net_sockopt(dup, SOL_SOCKET, SO_TYPE);
    int proto = net_sockopt(dup, SOL_SOCKET, SO_PROTOCOL);
    if (type < 0)
        return -EBADF;
    if (type != SOCK_STREAM && type != SOCK_DGRAM && type != SOCK_SEQPACKET)
        return -EPERM; /* a raw socket of the host's would write any packet */
    /* plain TCP for MPTCP: a peer's ADD_ADDR could make subflows to addresses no rule
       names */
    if (proto == IPPROTO_MPTCP_)
        proto = 0;
    int s = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, proto < 0 ? 0 : proto);
    if (s < 0)
        return -errno;
    copy_options(dup, s, family, type, proto);
    return s;
}

/* a host socket like the tree's dup, connecting to sa from the helper's copy: the socket
   (non-blocking; *r 0 or -EINPROGRESS), or -errno with nothing left open */
int net_host_connect(int dup, const void *sa, unsigned int len, long *r) {
    int s = net_host_socket(dup);
    if (s < 0)
        return s;
    *r = connect(s, (const struct sockaddr *)sa, len) < 0 ? -errno : 0;
    if (*r < 0 && *r != -EINPROGRESS) {
        int e = (int)*r;
        close(s);
        return e;
    }
    return s;
}

/* connect a host socket from the copy, in place of the tree's fd: the syscall's answer
   (NET_DEFER: it comes when the connection does) */
long net_swap_connect(const struct seccomp_notif *req, int dup, int fd, const void *sa,
                      unsigned int len, const char *rule) {
    /* an address to connect to, IP or (abstract) Unix: connect(AF_UNSPEC) is a
       disconnect, and would hand the tree a host socket with no peer, which anyone could
       send to */
    unsigned short family = AF_UNSPEC;
    if (len >= 2)
        memcpy(&family, sa, 2);
    if (family != AF_INET && family != AF_INET6 && family != AF_UNIX)
        return -EAFNOSUPPORT;
    const unsigned char *a = NULL;
    int port = 0;
    int version = net_ip_of(sa, len, &a, &port);
    int tree_flags = fcntl(dup, F_GETFL);
    int type = net_sockopt(dup, SOL_SOCKET, SO_TYPE);
    long r = 0;
    int s = net_host_connect(dup, sa, len, &r);
    if (s < 0)
        return s;
    int e = net_install(req, s, fd); /* fails (ENOENT) if the call is no longer live */
    if (e < 0) {
        close(s);
        return e;
    }
    fcntl(s, F_SETFL, tree_flags >= 0 ? tree_flags : 0);
    return waits_connect(H, req, s, r, tree_flags, type, version, a, port, rule);
}

/* A connect of the socket the helper holds (a host one, or the tree's own for its
   loopback and ztsa's DNS service), from the copy, without blocking the helper: its
   file's O_NONBLOCK is set for the call. rule: the log's words when it is answered
   later (NULL: the tree's own, not logged). */
static long connect_here(const struct seccomp_notif *req, int dup, const unsigned char *sa,
                         unsigned int len, const char *rule) {
    int tree_flags = fcntl(dup, F_GETFL);
    int type = net_sockopt(dup, SOL_SOCKET, SO_TYPE);
    if (tree_flags >= 0 && !(tree_flags & O_NONBLOCK))
        fcntl(dup, F_SETFL, tree_flags | O_NONBLOCK);
    long r = connect(dup, (const struct sockaddr *)sa, len) < 0 ? -errno : 0;
    if (tree_flags >= 0 && !(tree_flags & O_NONBLOCK))
        fcntl(dup, F_SETFL, tree_flags);
    if (r == -EAGAIN && !(tree_flags & O_NONBLOCK))
        return net_wait(-1); /* no room to connect now: try again soon */
    const unsigned char *a = NULL;
    int port = 0;
    int version = net_ip_of(sa, len, &a, &port);
    int keep = dup_cloexec(dup);
    return keep < 0 ? r
                    : waits_connect(H, req, keep, r, tree_flags, type, version, a, port, rule);
}

static long net_connect(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    int fd = (int)(unsigned int)req_arg(req, ZTSA_ARG_FD);
    unsigned int len = (unsigned int)req_arg(req, ZTSA_ARG_ADDRLEN);
    unsigned char sa[128];
    if (len > sizeof sa)
        return -EINVAL;
    if (len && caller_read(pid, req_arg(req, ZTSA_ARG_ADDR), sa, len) < 0)
        return -EFAULT;
    unsigned short family = 0;
    if (len >= 2)
        memcpy(&family, sa, 2);
    if (family == AF_UNIX)
        return unixsock_connect(req, sa, len); /* from the same copy */
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    int host = net_is_host(dup);
    int type = net_sockopt(dup, SOL_SOCKET, SO_TYPE);
    const unsigned char *a = NULL;
    int port = 0;
    int version = net_ip_of(sa, len, &a, &port);
    long result;
    char rule[1024];
    if (!version && host) {
        /* a socket the helper connected stays connected: a disconnected UDP socket is
           unbound, and could then be bound to listen (inbound) */
        result = -EPERM;
    } else if (!version) { /* AF_UNSPEC (a disconnect), a short or foreign address: the
                              kernel's answer, on the socket the helper holds */
        result = connect(dup, (struct sockaddr *)sa, len) < 0 ? -errno : 0;
    } else {
        int d = net_decide_ip(pid, version, a, port, sa, len, ZTSA_CALL_CONNECT, type, rule,
                          sizeof rule);
        if (d < 0 && net_audit(pid, "connect", version, a, port, type, rule, sizeof rule))
            d = 1;
        const int *rules;
        int judged = d > 0 && !host ? net_judged(&rules) : -1;
        if (d > 0) {
            result = host          ? connect_here(req, dup, sa, len, rule)
                     : judged >= 0 ? relay_connect(H, req, dup, sa, len, version, a, port, rules,
                                                   judged, rule)
                                   : net_swap_connect(req, dup, fd, sa, len, rule);
            if (result != NET_DEFER) /* else logged when it is answered */
                net_log_allowed(pid, "connect", version, a, port, type, rule, result);
        } else if (d == 0 && !host) {
            result = connect_here(req, dup, sa, len, NULL);
            if (port == 53 && (result == 0 || result == NET_DEFER))
                net_note_querier(dup, pid); /* ztsa's DNS service: its queries name their sender */
        } else {
            result = net_deny(pid, "connect", version, a, port, type, 1);
        }
        helper_count_connect();
    }
    close(dup);
    return result;
}


long net_notification(const struct seccomp_notif *req) {
    switch (req->data.nr) {
    case ZTSA_NR_connect:
        return net_connect(req);
    case ZTSA_NR_listen:
        return net_listen(req);
    case ZTSA_NR_bind:
        return net_bind(req);
    default:
        return net_send(req);
    }
}


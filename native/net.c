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
         when it is made (waits.c)
       - loopback the tree listens on, or port 53 (ztsa's DNS service): made on the
         tree's own socket, which reaches only the tree's namespace
       - a socket the helper made (a host socket): every addressed send and connect is
         decided here; it stays connected, binds nothing, listens only when it is an
         --allow-listen one
       - bind of --allow-listen's port: a host socket bound in its place (inbound)
     the learnt addresses: what the answers of ztsa's DNS service (dns.c) allow */
#include "internal.h"

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

#define MAX_LEARNT 2048
#define IPPROTO_MPTCP_ 262
#define LEARN_MIN_S 600 /* a learnt address stays allowed at least this long... */
#define LEARN_MAX_S 86400 /* ...and at most this long after its last answer */
#define MAX_SEND (1 << 20)
#define MAX_IOV 1024

struct learnt {
    int version, port, rule;
    unsigned char addr[16];
    unsigned long long until;
    char name[256];
};

/* who sent a query: the tree's local port of a socket that went to port 53, and the
   thread that sent through it (host pid), remembered when the helper saw it go */
#define QUERIERS 256
static struct {
    unsigned short port;
    int pid;
} querier[QUERIERS];

static struct {
    const struct ztsa_plan *plan;
    int lfd;
    unsigned long long cookie; /* the host namespace's: the helper's own sockets */
    int diag;                  /* sock_diag in the tree's namespace */
    struct learnt learnt[MAX_LEARNT];
    int n_learnt;
    char exe[4096]; /* the caller's program, when some rule is for listed programs only */
} N = {.diag = -1};

unsigned long long net_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}

static unsigned long long cookie_of(int fd) {
    unsigned long long c = 0;
    socklen_t len = sizeof c;
    if (getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &c, &len) < 0)
        return 0;
    return c;
}

static int dup_cloexec(int fd) { return fcntl(fd, F_DUPFD_CLOEXEC, 0); }

static int sockopt(int fd, int level, int name) {
    int v = -1;
    socklen_t len = sizeof v;
    return getsockopt(fd, level, name, &v, &len) < 0 ? -1 : v;
}

/* NET_WAIT: the call is made again (helper.c) when net_wait_fd, the helper's own copy of
   the socket, is writable, or soon when it is -1 */
int net_wait_fd = -1;

long net_wait(int fd) {
    net_wait_forget();
    net_wait_fd = fd >= 0 ? dup_cloexec(fd) : -1;
    return NET_WAIT;
}

void net_wait_forget(void) {
    if (net_wait_fd >= 0)
        close(net_wait_fd);
    net_wait_fd = -1;
}

/* is fd a socket of the host's namespace (one the helper made for the tree)? */
int net_is_host(int fd) { return cookie_of(fd) == N.cookie; }

/* the --allow-listen sockets the helper made: a loopback connect to their port is the
   tree's own server only when one of them listens there */
#define MAX_LISTENERS 64
static ino_t listeners[MAX_LISTENERS];
static int n_listeners;

static void note_listener(int s) {
    struct stat st;
    if (fstat(s, &st) == 0 && n_listeners < MAX_LISTENERS)
        listeners[n_listeners++] = st.st_ino;
}

void net_init(const struct ztsa_plan *plan, int lfd, const int *socks) {
    N.plan = plan;
    N.lfd = lfd;
    N.diag = socks[ZTSA_NET_SOCKS - 1];
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    N.cookie = probe >= 0 ? cookie_of(probe) : 0;
    if (probe >= 0)
        close(probe);
    dns_init(plan, socks);
}

/* ---- where an address may go ---- */

static int is_loopback(int version, const unsigned char *a) {
    static const unsigned char one[16] = {[15] = 1};
    return version == 4 ? a[0] == 127 : memcmp(a, one, 16) == 0;
}

int net_not_public(int version, const unsigned char *a) { return ztsa_not_public(version, a); }

int net_is_local(int version, const unsigned char *a) { return ztsa_is_local(version, a); }

int net_is_denied(int version, const unsigned char *a) {
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (version == 6 && (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0))
        return net_is_denied(4, a + 12);
    if (version == 6 && a[0] == 0x20 && a[1] == 0x02 && net_is_denied(4, a + 2))
        return 1; /* 6to4: 2002:V4::/48 reaches that IPv4 address */
    for (int i = 0; i < N.plan->n_deny_nets; i++) {
        const struct ztsa_net_rule *r = &N.plan->deny_nets[i];
        int len = version == 4 ? 4 : 16, hit = r->version == version;
        for (int b = 0; hit && b < len; b++)
            hit = (a[b] & r->mask[b]) == r->net[b];
        if (hit)
            return 1;
    }
    return 0;
}

int net_is_resolver(int version, const unsigned char *a) {
    for (int i = 0; i < N.plan->n_resolvers; i++) {
        const struct ztsa_net_rule *r = &N.plan->resolvers[i];
        if (r->version == version && memcmp(r->net, a, version == 4 ? 4 : 16) == 0)
            return 1;
    }
    return 0;
}

static const struct learnt *learnt_for(int version, const unsigned char *a, int port) {
    unsigned long long now = net_mono_ns();
    for (int i = 0; i < N.n_learnt; i++) {
        const struct learnt *l = &N.learnt[i];
        if (l->version == version && (!l->port || l->port == port) && l->until > now &&
            memcmp(l->addr, a, version == 4 ? 4 : 16) == 0)
            return l;
    }
    return NULL;
}

void net_learn(int version, const unsigned char *a, int rule, unsigned int ttl,
               const char *name) {
    const struct ztsa_dns_name *dn = &N.plan->dns_names[rule];
    unsigned long long keep = ttl < LEARN_MIN_S ? LEARN_MIN_S : ttl > LEARN_MAX_S ? LEARN_MAX_S : ttl;
    unsigned long long until = net_mono_ns() + keep * 1000000000ULL;
    struct learnt *slot = NULL;
    for (int i = 0; i < N.n_learnt && !slot; i++) {
        struct learnt *l = &N.learnt[i];
        if (l->version == version && l->port == dn->port && l->rule == dn->rule &&
            memcmp(l->addr, a, version == 4 ? 4 : 16) == 0)
            slot = l;
    }
    if (!slot && N.n_learnt < MAX_LEARNT)
        slot = &N.learnt[N.n_learnt++];
    if (!slot) { /* full: the entry that expires first makes room */
        slot = &N.learnt[0];
        for (int i = 1; i < N.n_learnt; i++)
            if (N.learnt[i].until < slot->until)
                slot = &N.learnt[i];
    }
    slot->version = version;
    slot->port = dn->port;
    slot->rule = dn->rule;
    memset(slot->addr, 0, 16);
    memcpy(slot->addr, a, version == 4 ? 4 : 16);
    if (slot->until < until)
        slot->until = until;
    snprintf(slot->name, sizeof slot->name, "%s", name);
}

/* ---- the log ---- */

const char *net_rule_spec(int rule) {
    return rule >= 0 && rule < N.plan->n_rule_specs ? N.plan->rule_specs[rule] : "";
}

static void show_addr(int version, const unsigned char *a, int port, char *out, size_t size) {
    char ip[INET6_ADDRSTRLEN] = "";
    inet_ntop(version == 4 ? AF_INET : AF_INET6, a, ip, sizeof ip);
    if (port < 0)
        snprintf(out, size, "%s", ip);
    else if (version == 4)
        snprintf(out, size, "%s:%d", ip, port);
    else
        snprintf(out, size, "[%s]:%d", ip, port);
}

/* the version (4, 6) and address of a sockaddr copy, IPv4-mapped as IPv4; 0: neither */
static int net_ip_of_raw(const unsigned char *sa, unsigned int len, const unsigned char **a,
                         int *port);

/* The IP address (a) and port of a sockaddr: 4 or 6, or 0 for none. A mapped IPv4
   address is version 4. The unspecified address (0.0.0.0, ::, ::ffff:0.0.0.0) is
   loopback, where the kernel connects it: every decision and deny line sees 127.0.0.1
   or ::1, never a way around a rule or a policy's deny of loopback. */
int net_ip_of(const unsigned char *sa, unsigned int len, const unsigned char **a,
              int *port) {
    static const unsigned char zero[16], loop4[4] = {127, 0, 0, 1},
                               loop6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    int v = net_ip_of_raw(sa, len, a, port);
    if (v == 4 && memcmp(*a, zero, 4) == 0)
        *a = loop4;
    else if (v == 6 && memcmp(*a, zero, 16) == 0)
        *a = loop6;
    return v;
}

static int net_ip_of_raw(const unsigned char *sa, unsigned int len, const unsigned char **a,
                  int *port) {
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    unsigned short family;
    if (len < 2)
        return 0;
    memcpy(&family, sa, 2);
    if (family == AF_INET && len >= 8) {
        *port = sa[2] << 8 | sa[3];
        *a = sa + 4;
        return 4;
    }
    if (family == AF_INET6 && len >= 24) {
        *port = sa[2] << 8 | sa[3];
        if (memcmp(sa + 8, mapped, 12) == 0) {
            *a = sa + 20;
            return 4;
        }
        *a = sa + 8;
        return 6;
    }
    return 0;
}

static const char *proto_name(int type) {
    return type == SOCK_STREAM ? "tcp" : type == SOCK_DGRAM ? "udp" : "other";
}

static void log_net(const char *event, pid_t pid, const char *syscall_name, int family,
                    const char *address, int port, int type, const char *rule,
                    const char *result, const char *extra) {
    char e_rule[1024], fields[2048], e_addr[512];
    helper_json(rule, e_rule, sizeof e_rule);
    helper_json(address, e_addr, sizeof e_addr);
    const char *fam = family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : "unix";
    char portbuf[16] = "null";
    if (port >= 0)
        snprintf(portbuf, sizeof portbuf, "%d", port);
    int deny = strcmp(event, "deny") == 0;
    snprintf(fields, sizeof fields,
             "\"pid\":%d,\"tid\":%d,%s%s%s\"family\":\"%s\",\"address\":\"%s\",\"port\":%s,"
             "\"protocol\":\"%s\",\"decision\":\"%s\",\"rule\":\"%s\"%s%s%s",
             helper_host_tgid(pid), helper_host_pid(pid), deny ? "\"syscall\":\"" : "",
             deny ? syscall_name : "", deny ? "\"," : "", fam, e_addr, portbuf,
             proto_name(type), deny ? "deny" : "allow", e_rule, result ? ",\"result\":" : "",
             result ? result : "", extra);
    helper_log_event(event, fields);
}

/* a call's result as the log's "result": 0, or the errno name in quotes */
static const char *result_text(long result, char *buf, size_t size) {
    if (result >= 0)
        snprintf(buf, size, "0");
    else
        snprintf(buf, size, "\"%s\"", helper_errno_name((int)-result));
    return buf;
}

void net_log(const char *event, pid_t pid, const char *call, int family, const char *address,
             int type, const char *rule, long result) {
    if (N.plan->log_fd < 0)
        return;
    char res[48];
    log_net(event, pid, call, family, address, -1, type, rule,
            strcmp(event, "deny") == 0 ? NULL : result_text(result, res, sizeof res),
            strcmp(event, "deny") == 0 ? audit_unenforced() : "");
}

/* A destination no rule allows: counted and logged, and refused (-EPERM); not enforced
   (audit_net): counted and logged as what the enforced run would have refused. */
static long deny_net(pid_t pid, const char *call, int version, const unsigned char *a,
                     int port, int type, int enforced) {
    char shown[128];
    show_addr(version, a, port, shown, sizeof shown);
    /* on loopback, nothing of the tree's listens there: a host's service needs a rule */
    char for_program[4200];
    snprintf(for_program, sizeof for_program, "not in --allow-net for program %s",
             N.exe[0] ? N.exe : "(unknown)");
    const char *why = N.plan->allow.n_programs > 0 ? for_program
                      : is_loopback(version, a)
                          ? "not in --allow-net (no server of the tree listens there; the "
                            "host's loopback is reached only by a rule naming it)"
                          : "not in --allow-net";
    unsigned long count = enforced ? helper_count_denial() : helper_count_would();
    if (enforced)
        helper_note_denial(count, call, shown, "not in --allow-net");
    if (N.plan->log_fd >= 0 && helper_may_log(count))
        log_net("deny", pid, call, version == 4 ? AF_INET : AF_INET6, shown, port, type, why,
                NULL, enforced ? "" : ",\"enforced\":false");
    return -EPERM;
}

/* --audit-only: a destination no rule allows is logged as refused and then allowed (1),
   unless a policy denies it (0) */
static int audit_net(pid_t pid, const char *call, int version, const unsigned char *a,
                     int port, int type, char *rule, size_t size) {
    if (!N.plan->audit || net_is_denied(version, a))
        return 0;
    deny_net(pid, call, version, a, port, type, 0);
    snprintf(rule, size, "--audit-only (not in --allow-net)");
    return 1;
}

void net_log_allowed(pid_t pid, const char *event, int version, const unsigned char *a,
                     int port, int type, const char *rule, long result) {
    if (N.plan->log_fd < 0)
        return;
    char ip[128], res[48];
    show_addr(version, a, -1, ip, sizeof ip);
    log_net(event, pid, event, version == 4 ? AF_INET : AF_INET6, ip, port, type, rule,
            result_text(result, res, sizeof res), "");
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
static int install(const struct seccomp_notif *req, int fd, int target) {
    char where[64], buf[512];
    snprintf(where, sizeof where, "%d/fdinfo/%d", (int)req->pid, target);
    int cloexec = 0;
    if (read_proc_at(helper_proc(), where, buf, sizeof buf)) {
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
    return ioctl(N.lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add) < 0 ? -errno : 0;
}

/* A host socket like the tree's dup (family, type, protocol, options), not yet placed. */
static int host_socket(int dup) {
    int family = sockopt(dup, SOL_SOCKET, SO_DOMAIN);
    int type = sockopt(dup, SOL_SOCKET, SO_TYPE);
    int proto = sockopt(dup, SOL_SOCKET, SO_PROTOCOL);
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
    int type = sockopt(dup, SOL_SOCKET, SO_TYPE);
    int s = host_socket(dup);
    if (s < 0)
        return s;
    long r = connect(s, (const struct sockaddr *)sa, len) < 0 ? -errno : 0;
    if (r < 0 && r != -EINPROGRESS) {
        close(s);
        return r;
    }
    int e = install(req, s, fd); /* fails (ENOENT) if the call is no longer live */
    if (e < 0) {
        close(s);
        return e;
    }
    fcntl(s, F_SETFL, tree_flags >= 0 ? tree_flags : 0);
    return waits_connect(req, s, r, tree_flags, type, version, a, port, rule);
}

/* A connect of the socket the helper holds (a host one, or the tree's own for its
   loopback and ztsa's DNS service), from the copy, without blocking the helper: its
   file's O_NONBLOCK is set for the call. rule: the log's words when it is answered
   later (NULL: the tree's own, not logged). */
static long connect_here(const struct seccomp_notif *req, int dup, const unsigned char *sa,
                         unsigned int len, const char *rule) {
    int tree_flags = fcntl(dup, F_GETFL);
    int type = sockopt(dup, SOL_SOCKET, SO_TYPE);
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
    return keep < 0 ? r : waits_connect(req, keep, r, tree_flags, type, version, a, port, rule);
}

static void note_querier(int sock, pid_t pid) {
    struct sockaddr_storage me;
    socklen_t len = sizeof me;
    const unsigned char *a;
    int port = 0;
    if (getsockname(sock, (struct sockaddr *)&me, &len) < 0 ||
        !net_ip_of((const unsigned char *)&me, len, &a, &port) || !port)
        return;
    querier[port % QUERIERS].port = (unsigned short)port;
    querier[port % QUERIERS].pid = helper_host_tgid(pid);
}

/* a nameless send on the tree's socket: if its peer is port 53, note who asks */
static void note_if_dns_peer(int sock, pid_t pid) {
    struct sockaddr_storage peer;
    socklen_t len = sizeof peer;
    const unsigned char *a;
    int port = 0;
    if (getpeername(sock, (struct sockaddr *)&peer, &len) == 0 &&
        net_ip_of((const unsigned char *)&peer, len, &a, &port) && port == 53)
        note_querier(sock, pid);
}

int net_querier_of(const void *peer, unsigned int len) {
    const unsigned char *a;
    int port = 0;
    if (!net_ip_of((const unsigned char *)peer, len, &a, &port) ||
        querier[port % QUERIERS].port != port)
        return -1;
    return querier[port % QUERIERS].pid;
}

/* ---- the decision ---- */

/* > 0: a rule allows it (*rule_text set); 0: the tree's own (loopback, port 53);
   < 0: denied */
static int tree_listens(int type, int port);
static int host_listener_is_ours(int type, int version, const unsigned char *a, int port);

/* Rules for listed programs: the caller's executable as the kernel resolved it at its
   exec (/proc/PID/exe); "" when unknown (a rule for listed programs then allows it
   nothing). Read only when some rule is one. */
static const char *caller_exe(pid_t pid) {
    char where[32];
    snprintf(where, sizeof where, "%d/exe", (int)pid);
    ssize_t n = readlinkat(helper_proc(), where, N.exe, sizeof N.exe - 1);
    N.exe[n > 0 ? n : 0] = 0;
    return N.exe;
}

static int decide_ip(pid_t pid, int version, const unsigned char *a, int port,
                     const unsigned char *sa, unsigned int len, int call, int type,
                     char *rule_text, size_t size) {
    int rule;
    struct ztsa_allow allow = N.plan->allow;
    N.exe[0] = 0;
    if (allow.n_programs > 0) {
        const char *exe = caller_exe(pid);
        allow.exe = *exe ? exe : NULL;
    }
    int why = ztsa_decide(&allow, call, -1, sa, len, NULL, &rule);
    const char *listed = N.exe[0] ? " (program " : "", *end = N.exe[0] ? ")" : "";
    if (why == ZTSA_ALLOW_RULE && rule != ZTSA_RULE_DNS) {
        int restricted = allow.programs && rule < allow.n_programs && allow.programs[rule];
        snprintf(rule_text, size, "%s%s%s%s", net_rule_spec(rule), restricted ? listed : "",
                 restricted ? N.exe : "", restricted ? end : "");
        return 1;
    }
    const struct learnt *l = learnt_for(version, a, port);
    if (l && ztsa_may_use(&allow, l->rule)) {
        int restricted = allow.programs && l->rule < allow.n_programs &&
                         allow.programs[l->rule];
        snprintf(rule_text, size, "%s (%s)%s%s%s", net_rule_spec(l->rule), l->name,
                 restricted ? listed : "", restricted ? N.exe : "", restricted ? end : "");
        return 1;
    }
    if (port == 53 || (is_loopback(version, a) && tree_listens(type, port)))
        return 0; /* ztsa's DNS service, or the tree's own server */
    if (is_loopback(version, a) && host_listener_is_ours(type, version, a, port)) {
        /* the tree's --allow-listen server is a socket of the host's loopback */
        snprintf(rule_text, size, "--allow-listen %d", port);
        return 1;
    }
    return -1;
}

static int read_mem(pid_t pid, unsigned long long addr, void *buf, size_t n) {
    struct iovec local = {buf, n};
    struct iovec remote = {(void *)(unsigned long)addr, n};
    return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n ? 0 : -EFAULT;
}

static long net_connect(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    int fd = (int)(unsigned int)req->data.args[0];
    unsigned int len = (unsigned int)req->data.args[2];
    unsigned char sa[128];
    if (len > sizeof sa)
        return -EINVAL;
    if (len && read_mem(pid, req->data.args[1], sa, len) < 0)
        return -EFAULT;
    unsigned short family = 0;
    if (len >= 2)
        memcpy(&family, sa, 2);
    if (family == AF_UNIX)
        return NET_UNIX; /* helper.c's connect of a Unix socket */
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    int host = cookie_of(dup) == N.cookie;
    int type = sockopt(dup, SOL_SOCKET, SO_TYPE);
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
        int d = decide_ip(pid, version, a, port, sa, len, ZTSA_CALL_CONNECT, type, rule,
                          sizeof rule);
        if (d < 0 && audit_net(pid, "connect", version, a, port, type, rule, sizeof rule))
            d = 1;
        if (d > 0) {
            result = host ? connect_here(req, dup, sa, len, rule)
                          : net_swap_connect(req, dup, fd, sa, len, rule);
            if (result != NET_DEFER) /* else logged when it is answered */
                net_log_allowed(pid, "connect", version, a, port, type, rule, result);
        } else if (d == 0 && !host) {
            result = connect_here(req, dup, sa, len, NULL);
            if (port == 53 && (result == 0 || result == NET_DEFER))
                note_querier(dup, pid); /* ztsa's DNS service: its queries name their sender */
        } else {
            result = deny_net(pid, "connect", version, a, port, type, 1);
        }
        helper_count_connect();
    }
    close(dup);
    return result;
}

/* a send of data (n bytes, the helper's copy) to the copy sa (NULL: the peer) on the
   socket s the helper holds, never blocking the helper: where the tree's call would
   wait, NET_WAIT, and the call is made again when s is writable */
static long send_copy(int s, const void *data, size_t n, int flags, const unsigned char *sa,
                      unsigned int len) {
    ssize_t r = sendto(s, data, n, (flags & ~MSG_FASTOPEN) | MSG_NOSIGNAL | MSG_DONTWAIT,
                       sa ? (const struct sockaddr *)sa : NULL, sa ? len : 0);
    if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && !(flags & MSG_DONTWAIT) &&
        !(fcntl(s, F_GETFL) & O_NONBLOCK))
        return net_wait(s);
    return r < 0 ? -errno : r;
}

/* An addressed send on a Unix socket: a path is resolved once (unix_open_at), decided
   on the socket it reaches, and sent to through the helper's /proc/self/fd/N; an
   abstract name reaches only the tree's own namespace (sent from the copy on the
   tree's socket), but for a host socket (refused). */
static long unix_send(const struct seccomp_notif *req, int dup, int host,
                      const unsigned char *sa, unsigned int len, const void *data, size_t n,
                      int flags, const char *call) {
    pid_t pid = (pid_t)req->pid;
    if (len <= 2 || sa[2] == 0) /* an abstract name: the tree's own namespace's */
        return host ? -EPERM : send_copy(dup, data, n, flags, sa, len);
    char real[4097];
    int pathfd = unix_open_at(helper_proc(), pid, (const char *)sa + 2, len - 2, real,
                              sizeof real);
    if (pathfd < 0)
        return pathfd;
    const char *why_text;
    int why = net_unix_decide(pid, pathfd, ZTSA_CALL_SEND, sa, len, real, &why_text);
    long r;
    int type = sockopt(dup, SOL_SOCKET, SO_TYPE);
    if (why > 0) {
        char name[32];
        struct sockaddr_un to = {.sun_family = AF_UNIX};
        int k = snprintf(name, sizeof name, "%d", pathfd);
        memcpy(to.sun_path, name, (size_t)k + 1);
        r = helper_enter_fd_dir() < 0
                ? -EACCES
                : send_copy(dup, data, n, flags, (const unsigned char *)&to,
                            (unsigned int)(offsetof(struct sockaddr_un, sun_path) + (size_t)k + 1));
        helper_leave_fd_dir();
        net_log("send", pid, call, AF_UNIX, real, type, why_text, r);
    } else {
        char shown[4200];
        snprintf(shown, sizeof shown, "unix:%s", real[0] ? real : "(unresolved)");
        unsigned long count = helper_count_denial();
        helper_note_denial(count, call, shown, why_text);
        if (helper_may_log(count))
            net_log("deny", pid, call, AF_UNIX, real, type, why_text, 0);
        r = -EPERM;
    }
    close(pathfd);
    return r;
}

/* The decision on a Unix socket path resolved to pathfd (real: where it is): an
   --allow-unix entry, or a socket inside the workspace that the tree itself bound (the
   socket's inode among the tree's namespace's sockets: a hard link or a rename of an
   outside server's socket into the workspace is not the tree's). > 0 allows. */
int net_unix_decide(pid_t pid, int pathfd, int call, const void *sa, unsigned int len, const char *real,
                    const char **why_text) {
    int rule;
    int why = ztsa_decide(&N.plan->allow, call, -1, sa, len, real, &rule);
    static char listed[4200];
    if (why == ZTSA_ALLOW_UNIX)
        snprintf(listed, sizeof listed, "--allow-unix %s", N.plan->allow.unix_paths[rule]);
    *why_text = why == ZTSA_ALLOW_UNIX ? listed
                : why > 0 ? "inside the workspace"
                          : "Unix socket not allowed (outside the workspace, not in --allow-unix)";
    if (why == ZTSA_ALLOW_WORKSPACE) {
        struct stat st;
        if (fstat(pathfd, &st) < 0 || !net_tree_owns_unix(st.st_dev, st.st_ino)) {
            *why_text = "Unix socket in the workspace bound by no process of the tree";
            why = ZTSA_DENY_OUTSIDE;
        }
    }
    return why < 0 && why != ZTSA_DENY_UNNAMED ? net_audit_unix(pid, why, real, call, why_text)
                                                : why;
}

/* --audit-only: a Unix socket the enforced run would refuse is logged so and allowed */
int net_audit_unix(pid_t pid, int why, const char *real, int call, const char **why_text) {
    if (!N.plan->audit)
        return why;
    unsigned long count = helper_count_would();
    if (N.plan->log_fd >= 0 && helper_may_log(count))
        net_log("deny", pid, call == ZTSA_CALL_CONNECT ? "connect" : "sendto", AF_UNIX,
                real && real[0] ? real : "(unresolved)", 0,
                *why_text ? *why_text : "Unix socket not allowed (not in --allow-unix)", 0);
    *why_text = "--audit-only (a Unix socket the enforced run refuses)";
    return ZTSA_ALLOW_AUDIT;
}

/* sendto with MSG_FASTOPEN to an allowed address on the tree's TCP socket: a host
   socket connects with the data in its SYN, from the copies, in its place */
static long fast_open(const struct seccomp_notif *req, int dup, int fd,
                      const unsigned char *sa, unsigned int len, const void *data, size_t n,
                      int flags) {
    int tree_flags = fcntl(dup, F_GETFL);
    int s = host_socket(dup);
    if (s < 0)
        return s;
    ssize_t r = sendto(s, data, n, (flags | MSG_FASTOPEN | MSG_NOSIGNAL) & ~MSG_DONTWAIT,
                       (const struct sockaddr *)sa, len);
    long result = r < 0 ? -errno : r;
    if ((result >= 0 || result == -EINPROGRESS) && helper_still_valid(req->id) &&
        install(req, s, fd) == 0) {
        fcntl(s, F_SETFL, tree_flags >= 0 ? tree_flags : 0);
        if (result == -EINPROGRESS && !(tree_flags & O_NONBLOCK) && !(flags & MSG_DONTWAIT))
            result = -EAGAIN; /* rare: the SYN went without its data */
    }
    close(s);
    return result;
}

/* One addressed send: the decision, and where it is performed. *swapped: the tree's
   socket was replaced by a host socket connected to the destination. */
static long send_one(const struct seccomp_notif *req, int *dup, int fd, int host,
                     const unsigned char *sa, unsigned int len, const void *data, size_t n,
                     int flags, const char *call) {
    pid_t pid = (pid_t)req->pid;
    int type = sockopt(*dup, SOL_SOCKET, SO_TYPE);
    const unsigned char *a = NULL;
    int port = 0;
    int version = net_ip_of(sa, len, &a, &port);
    int family = len >= 2 ? sa[0] | sa[1] << 8 : -1;
    if (family == AF_UNIX)
        return unix_send(req, *dup, host, sa, len, data, n, flags, call);
    struct sockaddr_in as_inet;
    if (family == AF_UNSPEC && len >= 8 && sockopt(*dup, SOL_SOCKET, SO_DOMAIN) == AF_INET) {
        /* a UDPv4 send reads an AF_UNSPEC name as AF_INET (udp_sendmsg): so does every
           use below, the decision, the send and the host socket's connect */
        memset(&as_inet, 0, sizeof as_inet);
        as_inet.sin_family = AF_INET;
        memcpy(&as_inet.sin_port, sa + 2, 2);
        memcpy(&as_inet.sin_addr, sa + 4, 4);
        sa = (const unsigned char *)&as_inet;
        len = sizeof as_inet;
        version = net_ip_of(sa, len, &a, &port);
    }
    if (!version) /* the kernel's answer for it, on the socket the helper holds */
        return send_copy(*dup, data, n, flags, sa, len);
    char rule[1024];
    int d = decide_ip(pid, version, a, port, sa, len, ZTSA_CALL_SEND, type, rule, sizeof rule);
    if (d < 0 && audit_net(pid, call, version, a, port, type, rule, sizeof rule))
        d = 1;
    if (d < 0 || (d == 0 && host))
        return deny_net(pid, call, version, a, port, type, 1);
    if (d == 0 && port == 53) { /* a query: sent here, to name its sender */
        long r = send_copy(*dup, data, n, flags, sa, len);
        note_querier(*dup, pid);
        return r;
    }
    if (d == 0) /* on the tree's own socket, which reaches only its namespace */
        return send_copy(*dup, data, n, flags, sa, len);
    long r;
    if (host) {
        r = send_copy(*dup, data, n, flags, sa, len);
    } else if (type == SOCK_STREAM && (flags & MSG_FASTOPEN)) {
        r = fast_open(req, *dup, fd, sa, len, data, n, flags);
    } else if (type != SOCK_DGRAM) {
        r = send_copy(*dup, data, n, flags, NULL, 0); /* a stream's send has no address */
    } else {
        r = net_swap_connect(req, *dup, fd, sa, len, rule);
        if (r == 0) {
            int now = helper_getfd(pid, fd); /* the host socket, now the tree's */
            if (now >= 0) {
                close(*dup);
                *dup = now;
                r = send_copy(now, data, n, flags, NULL, 0);
            } else {
                r = -EBADF;
            }
        }
    }
    net_log_allowed(pid, "send", version, a, port, type, rule, r);
    return r;
}

struct msg_copy {
    unsigned char name[128];
    unsigned int namelen;
    unsigned char *data;
    size_t n;
    int control;
};

/* a struct msghdr of the tree, copied: its name, whether it has control data, and (when
   want_data) its iovecs' bytes, at most MAX_SEND */
static int read_msg(pid_t pid, unsigned long long addr, struct msg_copy *m, int want_data) {
    unsigned long long hdr[7];
    if (read_mem(pid, addr, hdr, sizeof hdr) < 0)
        return -EFAULT;
    unsigned long long name = hdr[0], iov = hdr[2], iovlen = hdr[3], control = hdr[4];
    unsigned int namelen = (unsigned int)hdr[1];
    m->control = control && hdr[5];
    m->namelen = name && namelen ? (namelen > sizeof m->name ? sizeof m->name : namelen) : 0;
    if (m->namelen && read_mem(pid, name, m->name, m->namelen) < 0)
        return -EFAULT;
    m->data = NULL;
    m->n = 0;
    if (!want_data)
        return 0;
    if (iovlen > MAX_IOV)
        return -EMSGSIZE;
    static unsigned char buf[MAX_SEND];
    static unsigned long long vec[2 * MAX_IOV];
    if (iovlen && read_mem(pid, iov, vec, 16 * iovlen) < 0)
        return -EFAULT;
    for (unsigned long long i = 0; i < iovlen && m->n < MAX_SEND; i++) {
        size_t take = vec[2 * i + 1] < MAX_SEND - m->n ? vec[2 * i + 1] : MAX_SEND - m->n;
        if (take && read_mem(pid, vec[2 * i], buf + m->n, take) < 0)
            return -EFAULT;
        m->n += take;
    }
    m->data = buf;
    return 0;
}

static long net_send(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    const unsigned long long *a = req->data.args;
    int fd = (int)(unsigned int)a[0];
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    int host = cookie_of(dup) == N.cookie;
    long result;
    if (req->data.nr == ZTSA_NR_sendto) {
        unsigned char sa[128];
        unsigned int len = (unsigned int)a[5];
        len = len > sizeof sa ? sizeof sa : len;
        static unsigned char data[MAX_SEND];
        size_t n = a[2] < MAX_SEND ? a[2] : MAX_SEND;
        if ((len && read_mem(pid, a[4], sa, len) < 0) || (n && read_mem(pid, a[1], data, n) < 0))
            result = -EFAULT;
        else
            result = send_one(req, &dup, fd, host, len ? sa : NULL, len, data, n, (int)a[3],
                              "sendto");
    } else if (req->data.nr == ZTSA_NR_sendmsg) {
        struct msg_copy m;
        int r = read_msg(pid, a[1], &m, 1);
        if (r < 0)
            result = r;
        else if (m.control)
            result = -EPERM; /* ancillary data is not relayed */
        else if (!m.namelen) { /* to the peer, from the copy */
            if (!host)
                note_if_dns_peer(dup, pid);
            result = send_copy(dup, m.data, m.n, (int)a[2], NULL, 0);
        } else
            result = send_one(req, &dup, fd, host, m.name, m.namelen, m.data, m.n, (int)a[2],
                              "sendmsg");
    } else { /* sendmmsg: every message decided and performed from its copy */
        unsigned int vlen = (unsigned int)a[2] > MAX_IOV ? MAX_IOV : (unsigned int)a[2];
        long sent = 0;
        result = 0;
        if (!host)
            note_if_dns_peer(dup, pid);
        for (unsigned int i = 0; i < vlen; i++) {
            struct msg_copy m;
            long r = read_msg(pid, a[1] + 64ULL * i, &m, 1);
            if (r == 0 && m.control)
                r = -EPERM;
            else if (r == 0)
                r = m.namelen ? send_one(req, &dup, fd, host, m.name, m.namelen, m.data, m.n,
                                         (int)a[3], "sendmmsg")
                              : send_copy(dup, m.data, m.n, (int)a[3], NULL, 0);
            if (r == NET_WAIT && sent) { /* what went already is the answer */
                net_wait_forget();
                r = -EAGAIN;
            }
            if (r < 0 || r == NET_WAIT) {
                result = sent ? sent : r;
                break;
            }
            unsigned int done = (unsigned int)r;
            struct iovec local = {&done, sizeof done};
            struct iovec remote = {(void *)(unsigned long)(a[1] + 64ULL * i + 56), 4};
            process_vm_writev(pid, &local, 1, &remote, 1, 0);
            result = ++sent;
            host = cookie_of(dup) == N.cookie; /* a host one now, if it was swapped */
        }
    }
    close(dup);
    if (result == -EPIPE)
        kill((pid_t)helper_tgid(pid), SIGPIPE);
    return result;
}

static long net_bind(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    unsigned int len = (unsigned int)req->data.args[2];
    unsigned char sa[128];
    if (len < 2 || len > sizeof sa || read_mem(pid, req->data.args[1], sa, len) < 0 ||
        (sa[0] | sa[1] << 8) == AF_UNIX)
        return NET_UNIX; /* helper.c's bind of a socket path, or the kernel's answer */
    const unsigned char *a = NULL;
    int port = 0;
    int version = net_ip_of(sa, len, &a, &port);
    int listed = 0;
    for (int i = 0; version && port && i < N.plan->n_listen; i++)
        listed |= N.plan->listen_ports[i] == port;
    int fd = (int)(unsigned int)req->data.args[0];
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return -EBADF;
    if (net_is_host(dup)) { /* a socket the helper connected: it is not the tree's to bind */
        close(dup);
        return -EINVAL;
    }
    if (!listed) { /* bound in the tree's namespace: nothing outside reaches it */
        long r = bind(dup, (struct sockaddr *)sa, len) < 0 ? -errno : 0;
        close(dup);
        return r;
    }
    int tree_flags = fcntl(dup, F_GETFL);
    int type = sockopt(dup, SOL_SOCKET, SO_TYPE);
    long r = host_socket(dup);
    if (r >= 0) {
        int s = (int)r;
        r = bind(s, (struct sockaddr *)sa, len) < 0 ? -errno : 0;
        if (r == 0)
            r = helper_still_valid(req->id) ? install(req, s, fd) : -ESRCH;
        if (r == 0)
            note_listener(s);
        if (r == 0)
            fcntl(s, F_SETFL, tree_flags >= 0 ? tree_flags : 0);
        close(s);
    }
    close(dup);
    char spec[64];
    snprintf(spec, sizeof spec, "--allow-listen %d", port);
    net_log_allowed(pid, "listen", version, a, port, type, spec, r);
    return r;
}

/* listen(2): on the helper's duplicate; a host socket listens only when it is one the
   helper made for --allow-listen (a connect that failed leaves a host TCP socket
   unbound, and a listen would bind it to a port of the host's, for anyone) */
static long net_listen(const struct seccomp_notif *req) {
    int dup = helper_getfd((pid_t)req->pid, (int)(unsigned int)req->data.args[0]);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    long r;
    struct stat st;
    int ours = 0;
    if (net_is_host(dup) && fstat(dup, &st) == 0)
        for (int i = 0; i < n_listeners; i++)
            ours |= listeners[i] == st.st_ino;
    if (net_is_host(dup) && !ours)
        r = -EINVAL;
    else
        r = listen(dup, (int)req->data.args[1]) < 0 ? -errno : 0;
    close(dup);
    return r;
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

/* ---- Unix sockets: whose is it? ---- */

/* Send a sock_diag dump request on nl and call hit on each message until it says 1 (or
   the dump ends): whether any did. */
static int diag_dump(int nl, const void *req, size_t len,
                     int (*hit)(const struct nlmsghdr *h, const void *arg), const void *arg) {
    struct sockaddr_nl k = {.nl_family = AF_NETLINK};
    if (nl < 0 || sendto(nl, req, len, 0, (struct sockaddr *)&k, sizeof k) < 0)
        return 0;
    static char buf[32768];
    int found = 0;
    for (;;) { /* the whole dump is read, so the next request starts clean */
        ssize_t n = recv(nl, buf, sizeof buf, 0);
        if (n <= 0)
            return found;
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned int)n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR)
                return found;
            found |= !found && hit(h, arg);
        }
    }
}

static int unix_inode_hit(const struct nlmsghdr *h, const void *arg) {
    const struct stat *st = arg;
    const struct unix_diag_msg *m = NLMSG_DATA(h);
    int rem = (int)(h->nlmsg_len - NLMSG_LENGTH(sizeof *m));
    for (const struct rtattr *at = (const struct rtattr *)(m + 1); RTA_OK(at, rem);
         at = RTA_NEXT(at, rem)) {
        if (at->rta_type != UNIX_DIAG_VFS)
            continue;
        const struct unix_diag_vfs *v = RTA_DATA(at);
        /* the kernel's dev_t: major << 20 | minor */
        if (v->udiag_vfs_ino == st->st_ino && (v->udiag_vfs_dev >> 20) == major(st->st_dev) &&
            (v->udiag_vfs_dev & 0xFFFFF) == minor(st->st_dev))
            return 1;
    }
    return 0;
}

/* Is the socket file (dev, ino) bound by a socket of the tree's own namespace? */
int net_tree_owns_unix(dev_t dev, ino_t ino) {
    struct {
        struct nlmsghdr nh;
        struct unix_diag_req r;
    } req;
    memset(&req, 0, sizeof req);
    req.nh.nlmsg_len = sizeof req;
    req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
    req.r.sdiag_family = AF_UNIX;
    req.r.udiag_states = ~0U;
    req.r.udiag_show = UDIAG_SHOW_VFS;
    struct stat st = {.st_dev = dev, .st_ino = ino};
    return diag_dump(N.diag, &req, sizeof req, unix_inode_hit, &st);
}

/* Does a socket of the tree's namespace listen on port (TCP: listening; UDP: bound)?
   Only for the log and the answer's words: whatever the tree reaches on its loopback
   stays in its namespace. */
static int listens_on(int nl, int type, int version, const unsigned char *a, int port,
                      const ino_t *inodes, int n_inodes);

static int tree_listens(int type, int port) {
    return listens_on(N.diag, type, 0, NULL, port, NULL, 0);
}

/* Is the host's (version, a, port) where a listener the helper made for --allow-listen
   takes connections? Bound to that very address, or to its family's wildcard: the port
   alone would also name a host service on another loopback address or family, beside
   which the tree bound its own. */
static int host_listener_is_ours(int type, int version, const unsigned char *a, int port) {
    static int host_diag = -2;
    if (!n_listeners)
        return 0;
    if (host_diag == -2)
        host_diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    return host_diag >= 0 && listens_on(host_diag, type, version, a, port, listeners,
                                        n_listeners);
}

struct listener_query {
    int version; /* 0: any address */
    const unsigned char *a;
    int port;
    const ino_t *inodes; /* NULL: any socket */
    int n_inodes;
};

static int listener_hit(const struct nlmsghdr *h, const void *arg) {
    const struct listener_query *q = arg;
    const struct inet_diag_msg *m = NLMSG_DATA(h);
    int ours = !q->inodes;
    for (int i = 0; i < q->n_inodes; i++)
        ours |= q->inodes[i] == (ino_t)m->idiag_inode;
    if (ntohs(m->id.idiag_sport) != q->port || !ours)
        return 0;
    if (!q->version)
        return 1;
    size_t n = q->version == 4 ? 4 : 16;
    static const unsigned char any[16];
    return m->idiag_family == (q->version == 4 ? AF_INET : AF_INET6) &&
           (memcmp(m->id.idiag_src, q->a, n) == 0 || memcmp(m->id.idiag_src, any, n) == 0);
}

static int listens_on(int nl, int type, int version, const unsigned char *a, int port,
                      const ino_t *inodes, int n_inodes) {
    struct listener_query q = {version, a, port, inodes, n_inodes};
    for (int family = AF_INET; family == AF_INET || family == AF_INET6;
         family = family == AF_INET ? AF_INET6 : -1) {
        struct {
            struct nlmsghdr nh;
            struct inet_diag_req_v2 r;
        } req;
        memset(&req, 0, sizeof req);
        req.nh.nlmsg_len = sizeof req;
        req.nh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
        req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
        req.r.sdiag_family = (unsigned char)family;
        req.r.sdiag_protocol = type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
        req.r.idiag_states = type == SOCK_STREAM ? 1U << 10 /* TCP_LISTEN */ : ~0U;
        if (diag_dump(nl, &req, sizeof req, listener_hit, &q))
            return 1;
    }
    return 0;
}


/* Runs in the file helper, with a network namespace for the tree: where an address
   may go. The decision on an IP destination (net_decide_ip: a rule, an address learnt
   from an answer of ztsa's DNS service, the tree's own loopback and DNS, an
   --allow-listen server), the learnt addresses (net_learn, from dns.c), the queriers
   of the DNS service, and the readers of a sockaddr copy. It keeps its tables and
   reads the plan; it touches no socket of the tree's. */
#include "helper.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <time.h>

#define MAX_LEARNT 2048
#define LEARN_MIN_S 600 /* a learnt address stays allowed at least this long... */
#define LEARN_MAX_S 86400 /* ...and at most this long after its last answer */

struct learnt {
    int version, port, rule, dn; /* dn: the dns_names entry whose answer it came in */
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


static const struct helper *H; /* netaddr_init's */
static struct {
    struct learnt learnt[MAX_LEARNT];
    int n_learnt;
    char exe[4096]; /* the caller's program, when some rule is for listed programs only */
    /* the last decision by a learnt address: whether the TCP connection's first bytes
       are to be judged (relay.c), and the dns_names entries that learnt it there */
    int judged, n_rules;
    int rules[32];
} N;

void netaddr_init(const struct helper *h) { H = h; }

unsigned long long net_mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ULL + (unsigned long long)ts.tv_nsec;
}


int net_is_loopback(int version, const unsigned char *a) {
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
    for (int i = 0; i < H->plan->n_deny_nets; i++) {
        const struct ztsa_net_rule *r = &H->plan->deny_nets[i];
        int len = version == 4 ? 4 : 16, hit = r->version == version;
        for (int b = 0; hit && b < len; b++)
            hit = (a[b] & r->mask[b]) == r->net[b];
        if (hit)
            return 1;
    }
    return 0;
}

int net_is_resolver(int version, const unsigned char *a) {
    for (int i = 0; i < H->plan->n_resolvers; i++) {
        const struct ztsa_net_rule *r = &H->plan->resolvers[i];
        if (r->version == version && memcmp(r->net, a, version == 4 ? 4 : 16) == 0)
            return 1;
    }
    return 0;
}

/* A learnt address that a socket of this type may reach on port: TCP always (its first
   bytes judged, N.judged, unless a rule there says /raw), UDP only where a rule says
   /udp, any other type only where one says /raw. N.rules: the dns_names entries whose
   answers opened it there. */
static const struct learnt *learnt_for(const struct ztsa_allow *allow, int version,
                                       const unsigned char *a, int port, int type) {
    unsigned long long now = net_mono_ns();
    const struct learnt *first = NULL;
    int raw = 0;
    N.n_rules = 0;
    for (int i = 0; i < N.n_learnt; i++) {
        const struct learnt *l = &N.learnt[i];
        if (l->version != version || (l->port && l->port != port) || l->until <= now ||
            memcmp(l->addr, a, version == 4 ? 4 : 16) != 0 || !ztsa_may_use(allow, l->rule))
            continue;
        int carries = H->plan->dns_names[l->dn].carries;
        if (type == SOCK_DGRAM ? !(carries & ZTSA_CARRIES_UDP)
                               : type != SOCK_STREAM && !(carries & ZTSA_CARRIES_RAW))
            continue;
        raw |= carries & ZTSA_CARRIES_RAW;
        if (!first)
            first = l;
        if (N.n_rules < (int)(sizeof N.rules / sizeof N.rules[0]))
            N.rules[N.n_rules++] = l->dn;
    }
    N.judged = first && type == SOCK_STREAM && !raw;
    return first;
}

int net_judged(const int **rules) {
    *rules = N.rules;
    return N.judged ? N.n_rules : -1;
}

void net_learn(int version, const unsigned char *a, int rule, unsigned int ttl,
               const char *name) {
    const struct ztsa_dns_name *dn = &H->plan->dns_names[rule];
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
    slot->dn = rule;
    memset(slot->addr, 0, 16);
    memcpy(slot->addr, a, version == 4 ? 4 : 16);
    if (slot->until < until)
        slot->until = until;
    snprintf(slot->name, sizeof slot->name, "%s", name);
}

/* ---- the log ---- */

const char *net_rule_spec(int rule) {
    return rule >= 0 && rule < H->plan->n_rule_specs ? H->plan->rule_specs[rule] : "";
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

void net_note_querier(int sock, pid_t pid) {
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
void net_note_if_dns_peer(int sock, pid_t pid) {
    struct sockaddr_storage peer;
    socklen_t len = sizeof peer;
    const unsigned char *a;
    int port = 0;
    if (getpeername(sock, (struct sockaddr *)&peer, &len) == 0 &&
        net_ip_of((const unsigned char *)&peer, len, &a, &port) && port == 53)
        net_note_querier(sock, pid);
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


/* Rules for listed programs: the caller's executable as the kernel resolved it at its
   exec (/proc/PID/exe); "" when unknown (a rule for listed programs then allows it
   nothing). Read only when some rule is one. */
static const char *caller_exe(pid_t pid) {
    char where[32];
    snprintf(where, sizeof where, "%d/exe", (int)pid);
    ssize_t n = readlinkat(H->proc, where, N.exe, sizeof N.exe - 1);
    N.exe[n > 0 ? n : 0] = 0;
    return N.exe;
}

/* > 0: a rule allows it (*rule_text set); 0: the tree's own (loopback, port 53);
   < 0: denied */
int net_decide_ip(pid_t pid, int version, const unsigned char *a, int port,
                     const unsigned char *sa, unsigned int len, int call, int type,
                     char *rule_text, size_t size) {
    int rule;
    struct ztsa_allow allow = H->plan->allow;
    N.exe[0] = 0;
    if (allow.n_programs > 0) {
        const char *exe = caller_exe(pid);
        allow.exe = *exe ? exe : NULL;
    }
    int why = ztsa_decide(&allow, call, -1, sa, len, NULL, &rule);
    N.judged = 0;
    const char *listed = N.exe[0] ? " (program " : "", *end = N.exe[0] ? ")" : "";
    if (why == ZTSA_ALLOW_RULE && rule != ZTSA_RULE_DNS) {
        int restricted = allow.programs && rule < allow.n_programs && allow.programs[rule];
        snprintf(rule_text, size, "%s%s%s%s", net_rule_spec(rule), restricted ? listed : "",
                 restricted ? N.exe : "", restricted ? end : "");
        return 1;
    }
    const struct learnt *l = learnt_for(&allow, version, a, port, type);
    if (l) {
        int restricted = allow.programs && l->rule < allow.n_programs &&
                         allow.programs[l->rule];
        snprintf(rule_text, size, "%s (%s)%s%s%s", net_rule_spec(l->rule), l->name,
                 restricted ? listed : "", restricted ? N.exe : "", restricted ? end : "");
        return 1;
    }
    if (port == 53 || (net_is_loopback(version, a) && net_tree_listens(type, port)))
        return 0; /* ztsa's DNS service, or the tree's own server */
    if (net_is_loopback(version, a) && net_host_listener_is_ours(type, version, a, port)) {
        /* the tree's --allow-listen server is a socket of the host's loopback */
        snprintf(rule_text, size, "--allow-listen %d", port);
        return 1;
    }
    return -1;
}

/* the caller's program as the last decision read it ("" when no rule is for listed
   programs only, or unknown), for its deny line */
const char *net_caller_exe(void) { return N.exe; }

/* Runs in the file helper, with a network namespace for the tree (plan->netns): ztsa's
   DNS service. The sockets native/netns.c opened in the tree's namespace, on UDP and
   TCP port 53 of every address, receive whatever query the tree sends to whichever
   resolver. A query for a name an --allow-net rule names (exactly, or a ".suffix") is
   asked from the helper's own socket (host namespace) of the first upstream resolver,
   with an ID of its own; the answer must come from that resolver and repeat the
   question; its A and AAAA records, but loopback, link-local, private, unique-local and
   the resolvers' own addresses, become allowed on the rule's port (net.c's learnt
   table), and it goes back to the tree from the address the tree asked. Any other
   query is answered NXDOMAIN here and goes nowhere. Single-threaded, never blocking:
   the helper polls these sockets beside the seccomp listener. The readers of the tree's
   queries and of upstream answers (dnswire.c) are pure functions of the bytes; the ztsa_dns_*
   entry points in dnswire.c call them directly, for the tests, outside any run. */
#include "helper.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

/* the control message after cm (musl's CMSG_NXTHDR compares a size with a pointer
   difference, which -Wsign-compare refuses) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsign-compare"
static struct cmsghdr *next_cmsg(struct msghdr *h, struct cmsghdr *cm) {
    return CMSG_NXTHDR(h, cm);
}
#pragma GCC diagnostic pop

#define MAX_PENDING 256
#define MAX_TCP 16
#define DNS_TIMEOUT_NS (3ULL * 1000000000ULL)
#define TCP_IDLE_NS (10ULL * 1000000000ULL)

enum { UDP4, TCP4, UDP6, TCP6 };

struct client {
    int pid;  /* who asked (host pid), -1: not known */
    int kind; /* UDP4, UDP6: peer and local; TCP4: the connection's slot */
    struct sockaddr_storage peer;
    socklen_t peer_len;
    unsigned char local[16];
    int ifindex;
    int slot;
    unsigned int gen;
};

struct pending {
    int used;
    unsigned short our_id, their_id;
    unsigned long long deadline;
    int name_rule, qtype;
    char name[256];
    unsigned char question[300]; /* the query's header and question, for a SERVFAIL */
    int qlen;
    struct client to;
};

struct tcpconn {
    int fd;
    int pid; /* who connected */
    unsigned int gen;
    unsigned long long idle;
    size_t have;
    unsigned char buf[2 + 1024];
};

/* This feature's state, the context's (struct helper's dns), passed to each function
   here as D-> */
struct dns {
    const struct ztsa_plan *plan;
    int dns[4];
    int up4, up6; /* the helper's sockets to the upstream resolvers */
    struct pending pending[MAX_PENDING];
    struct tcpconn tcp[MAX_TCP];
    unsigned int gen;
};

struct dns *dns_new(const struct helper *h) {
    struct dns *D = calloc(1, sizeof *D);
    if (!D)
        return NULL;
    const struct ztsa_plan *plan = h->plan;
    D->plan = plan;
    for (int i = 0; i < 4; i++)
        D->dns[i] = h->net[i];
    for (int i = 0; i < MAX_TCP; i++)
        D->tcp[i].fd = -1;
    D->up4 = D->up6 = -1;
    if (plan->n_resolvers) {
        D->up4 = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        D->up6 = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    }
    return D;
}

static const char *type_name(int t, char *buf, size_t size) {
    switch (t) {
    case 1: return "A";
    case 28: return "AAAA";
    case 5: return "CNAME";
    case 64: return "SVCB";
    case 65: return "HTTPS";
    case 12: return "PTR";
    case 16: return "TXT";
    case 33: return "SRV";
    case 15: return "MX";
    case 2: return "NS";
    case 6: return "SOA";
    case 255: return "ANY";
    default: snprintf(buf, size, "TYPE%d", t); return buf;
    }
}

/* which dns_names entry allows name: an exact name, or a suffix ".example.com"; -1 for
   none, and -2 - i when entry i is a policy's deny (the denials come first) */
static int name_rule(const struct dns *D, const char *name) {
    size_t n = strlen(name);
    for (int i = 0; i < D->plan->n_dns_names; i++) {
        const struct ztsa_dns_name *d = &D->plan->dns_names[i];
        size_t k = strlen(d->name);
        if (d->suffix ? n > k && strcmp(name + n - k, d->name) == 0 : strcmp(name, d->name) == 0)
            return d->deny ? -2 - i : i;
    }
    return -1;
}

/* why a refused name is refused, for the log and the summary */
static const char *refusal(const struct dns *D, int rule) {
    return rule <= -2 ? net_rule_spec(D->plan->dns_names[-2 - rule].rule) : "not in --allow-net";
}

static void reply_to(struct dns *D, const struct client *c, unsigned char *m, size_t n) {
    if (c->kind == TCP4) {
        struct tcpconn *t = &D->tcp[c->slot];
        if (t->fd < 0 || t->gen != c->gen)
            return;
        unsigned char len[2] = {(unsigned char)(n >> 8), (unsigned char)n};
        struct iovec v[2] = {{len, 2}, {m, n}};
        ssize_t w = writev(t->fd, v, 2);
        (void)w;
        return;
    }
    char cbuf[CMSG_SPACE(sizeof(struct in6_pktinfo))];
    memset(cbuf, 0, sizeof cbuf);
    struct iovec v = {m, n};
    struct msghdr h = {.msg_name = (void *)&c->peer, .msg_namelen = c->peer_len,
                       .msg_iov = &v, .msg_iovlen = 1, .msg_control = cbuf};
    struct cmsghdr *cm = (struct cmsghdr *)cbuf;
    if (c->kind == UDP4) {
        struct in_pktinfo pi;
        memset(&pi, 0, sizeof pi);
        memcpy(&pi.ipi_spec_dst, c->local, 4);
        cm->cmsg_level = IPPROTO_IP;
        cm->cmsg_type = IP_PKTINFO;
        cm->cmsg_len = CMSG_LEN(sizeof pi);
        memcpy(CMSG_DATA(cm), &pi, sizeof pi);
        h.msg_controllen = CMSG_SPACE(sizeof pi);
    } else {
        struct in6_pktinfo pi;
        memset(&pi, 0, sizeof pi);
        memcpy(&pi.ipi6_addr, c->local, 16);
        pi.ipi6_ifindex = (unsigned int)c->ifindex;
        cm->cmsg_level = IPPROTO_IPV6;
        cm->cmsg_type = IPV6_PKTINFO;
        cm->cmsg_len = CMSG_LEN(sizeof pi);
        memcpy(CMSG_DATA(cm), &pi, sizeof pi);
        h.msg_controllen = CMSG_SPACE(sizeof pi);
    }
    ssize_t w = sendmsg(D->dns[c->kind], &h, MSG_DONTWAIT | MSG_NOSIGNAL);
    (void)w;
}

/* answer a query here: its header and question, with rcode and no records */
static void answer_empty(struct dns *D, const struct client *c, const unsigned char *q,
                         int qend, int rcode) {
    unsigned char m[512 + 16];
    if (qend > 512)
        return;
    memcpy(m, q, (size_t)qend);
    m[2] = (unsigned char)(0x80 | (q[2] & 0x01)); /* QR, RD as asked */
    m[3] = (unsigned char)(0x80 | rcode);          /* RA */
    memset(m + 6, 0, 6);                           /* no answer, authority, additional */
    reply_to(D, c, m, (size_t)qend);
}

/* AUDITED: --audit-only's rule index of a name no rule names, asked upstream all the same */
#define AUDITED (-1)

static void log_query(const struct dns *D, int pid, const char *name, int qtype, int rule,
                      const char *rcode, const char *learnt, const char *refused,
                      int answered) {
    char tb[16], ename[600], fields[9000], who[16] = "null";
    if (pid > 0)
        snprintf(who, sizeof who, "%d", pid);
    helper_json(name, ename, sizeof ename);
    int audited = rule == AUDITED && D->plan->audit && D->plan->n_resolvers;
    if (rule < 0 && !(audited && answered)) {
        char ewhy[1024];
        helper_json(refusal(D, rule), ewhy, sizeof ewhy);
        snprintf(fields, sizeof fields,
                 "\"pid\":%s,\"syscall\":\"dns\",\"name\":\"%s\",\"type\":\"%s\","
                 "\"decision\":\"deny\",\"rule\":\"%s\",\"rcode\":\"%s\"%s",
                 who, ename, type_name(qtype, tb, sizeof tb), ewhy,
                 audited ? "asked upstream" : "NXDOMAIN",
                 audited ? ",\"enforced\":false" : "");
        helper_log_event("deny", fields);
        return;
    }
    char erule[1024];
    helper_json(rule < 0 ? "--audit-only (not in --allow-net)"
                         : net_rule_spec(D->plan->dns_names[rule].rule),
                erule, sizeof erule);
    snprintf(fields, sizeof fields,
             "\"pid\":%s,\"name\":\"%s\",\"type\":\"%s\",\"decision\":\"allow\","
             "\"rule\":\"%s\",\"rcode\":\"%s\",\"addresses\":[%s],\"refused\":[%s]",
             who, ename, type_name(qtype, tb, sizeof tb), erule, rcode, learnt, refused);
    helper_log_event("dns", fields);
}

/* The query that goes upstream for the tree's query q (n bytes, its question ending
   at qend) for name and qtype, with our id, into out (512 bytes): its length. */
static size_t upstream_query(const unsigned char *q, size_t n, int qend, const char *name,
                             int qtype, unsigned short id, unsigned char *out) {
    /* what goes upstream is made here, not the tree's bytes: a header with the flags a
       query may set (RD, AD, CD), the question from the name as decided, and an EDNS
       OPT record without options when the tree sent one */
    size_t o = 0;
    int opt = 0;
    unsigned char opt_fixed[8];
    int ar = q[10] << 8 | q[11];
    if (ar == 1 && q[6] == 0 && q[7] == 0 && q[8] == 0 && q[9] == 0 && (size_t)qend + 11 <= n &&
        q[qend] == 0 && q[qend + 1] == 0 && q[qend + 2] == 41) {
        /* not the tree's bytes either, which would carry six of its own upstream a
           query: its UDP size rounded down to 512, 1232 or 4096, and DO alone of its
           flags (no extended code, version 0, no Z bits) */
        unsigned size = (unsigned)q[qend + 3] << 8 | q[qend + 4];
        size = size >= 4096 ? 4096 : size >= 1232 ? 1232 : 512;
        opt_fixed[0] = (unsigned char)(size >> 8), opt_fixed[1] = (unsigned char)size;
        opt_fixed[2] = 0, opt_fixed[3] = 0;
        opt_fixed[4] = q[qend + 7] & 0x80, opt_fixed[5] = 0;
        opt = 1;
    }
    out[o++] = (unsigned char)(id >> 8);
    out[o++] = (unsigned char)id;
    out[o++] = q[2] & 0x01;           /* RD */
    out[o++] = q[3] & 0x30;           /* AD, CD */
    out[o++] = 0, out[o++] = 1;       /* one question */
    out[o++] = 0, out[o++] = 0, out[o++] = 0, out[o++] = 0;
    out[o++] = 0, out[o++] = (unsigned char)opt;
    for (const char *label = name; *label;) {
        const char *dot = strchr(label, '.');
        size_t l = dot ? (size_t)(dot - label) : strlen(label);
        out[o++] = (unsigned char)l;
        memcpy(out + o, label, l);
        o += l;
        label += l + (dot ? 1 : 0);
    }
    out[o++] = 0;
    out[o++] = (unsigned char)(qtype >> 8), out[o++] = (unsigned char)qtype;
    out[o++] = 0, out[o++] = 1; /* IN */
    if (opt) {
        out[o++] = 0;                  /* the root */
        out[o++] = 0, out[o++] = 41;   /* OPT */
        memcpy(out + o, opt_fixed, 6);
        o += 6;
        out[o++] = 0, out[o++] = 0;    /* no options */
    }
    return o;
}

static void query(struct dns *D, const struct client *c, const unsigned char *q, size_t n) {
    char name[256];
    int qtype;
    int qend = dns_parse_question(q, n, name, &qtype);
    if (qend < 0) {
        if (n >= 12) { /* not a query we forward: FORMERR, and nothing leaves */
            unsigned char m[12];
            memcpy(m, q, 12);
            m[2] = (unsigned char)(0x80 | (q[2] & 0x01));
            m[3] = 0x80 | 1;
            memset(m + 4, 0, 8);
            reply_to(D, c, m, 12);
        }
        return;
    }
    int rule = name_rule(D, name);
    if (rule == AUDITED && D->plan->audit && D->plan->n_resolvers) {
        /* --audit-only: what the enforced run refuses, logged, and asked all the same */
        unsigned long count = helper_count_would();
        if (D->plan->log_fd >= 0 && helper_may_log(count))
            log_query(D, c->pid, name, qtype, rule, "", "", "", 0);
    } else if (rule < 0 || !D->plan->n_resolvers) {
        /* NXDOMAIN: the name does not exist for the tree (a client stops at once and
           says so; REFUSED would send it on to the next resolver and retries) */
        unsigned long count = helper_count_denial();
        char tb[16], what[300];
        snprintf(what, sizeof what, "%s (%s)", name, type_name(qtype, tb, sizeof tb));
        helper_note_denial(count, "dns", name, refusal(D, rule));
        if (D->plan->log_fd >= 0 && helper_may_log(count))
            log_query(D, c->pid, name, qtype, rule, "NXDOMAIN", "", "", 0);
        answer_empty(D, c, q, qend, 3);
        return;
    }
    if (qtype != 1 && qtype != 28 && qtype != 5 && qtype != 64 && qtype != 65) {
        /* an allowed name's other records (TXT, MX, ...): no data, not asked upstream */
        if (D->plan->log_fd >= 0)
            log_query(D, c->pid, name, qtype, rule,
                      "NOERROR (not asked: only A, AAAA, CNAME, SVCB and HTTPS are)", "", "",
                      1);
        answer_empty(D, c, q, qend, 0);
        return;
    }
    struct pending *p = NULL;
    unsigned long long now = net_mono_ns();
    for (int i = 0; i < MAX_PENDING && !p; i++)
        if (!D->pending[i].used || D->pending[i].deadline < now)
            p = &D->pending[i];
    if (!p) {
        answer_empty(D, c, q, qend, 2); /* SERVFAIL: too many at once */
        return;
    }
    unsigned short id;
    if (getrandom(&id, sizeof id, 0) != sizeof id)
        id = (unsigned short)now;
    static unsigned char out[512];
    n = upstream_query(q, n, qend, name, qtype, id, out);
    const struct ztsa_net_rule *r = &D->plan->resolvers[0];
    long w;
    if (r->version == 4) {
        struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(53)};
        memcpy(&to.sin_addr, r->net, 4);
        w = sendto(D->up4, out, n, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
    } else {
        struct sockaddr_in6 to = {.sin6_family = AF_INET6, .sin6_port = htons(53)};
        memcpy(&to.sin6_addr, r->net, 16);
        w = sendto(D->up6, out, n, MSG_NOSIGNAL, (struct sockaddr *)&to, sizeof to);
    }
    if (w < 0) {
        answer_empty(D, c, q, qend, 2);
        return;
    }
    p->used = 1;
    p->our_id = id;
    p->their_id = (unsigned short)(q[0] << 8 | q[1]);
    p->deadline = now + DNS_TIMEOUT_NS;
    p->name_rule = rule;
    p->qtype = qtype;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->qlen = qend <= (int)sizeof p->question ? qend : 0;
    memcpy(p->question, q, (size_t)p->qlen);
    p->question[0] = (unsigned char)(p->their_id >> 8);
    p->question[1] = (unsigned char)p->their_id;
    p->to = *c;
}


static int policy_denies(const char *name, const void *arg) {
    return name_rule(arg, name) <= -2;
}

/* Does the answer name (as an owner or a CNAME's target) a name a policy denies? A
   denied name behind an allowed one's CNAME is the denied name's addresses. */
static int chain_denied(const struct dns *D, const unsigned char *m, size_t n, size_t i,
                        int an, char *which, size_t size) {
    return dns_answer_names_denied(m, n, i, an, policy_denies, D, which, size);
}


struct learning {
    struct dns *D;
    struct pending *p;
    char learnt[4096], refused[4096];
    size_t lo, ro;
};

/* an A or AAAA record of the answer to p: learnt, or refused by the range guard */
static int learn_record(const unsigned char *m, size_t n, const struct dns_record *r, void *ctx) {
    (void)n;
    struct learning *l = ctx;
    const struct dns *D = l->D;
    int version = dns_record_version(r);
    if (!version)
        return 0;
    const unsigned char *a = m + r->rdata;
    char ip[INET6_ADDRSTRLEN] = "";
    inet_ntop(version == 4 ? AF_INET : AF_INET6, a, ip, sizeof ip);
    int bad = !ztsa_learnable(D->plan->onlink, D->plan->n_onlink, version, a) ||
              net_is_resolver(version, a) || net_is_denied(version, a);
    if (!bad && l->p->name_rule >= 0) /* --audit-only lets every address through */
        net_learn(version, a, l->p->name_rule, r->ttl, l->p->name);
    char *buf = bad ? l->refused : l->learnt;
    size_t *o = bad ? &l->ro : &l->lo;
    if (*o + strlen(ip) + 4 < sizeof l->learnt)
        *o += (size_t)snprintf(buf + *o, sizeof l->learnt - *o, "%s\"%s\"", *o ? "," : "", ip);
    return 0;
}

static void upstream_answer(struct dns *D, int s) {
    static unsigned char m[65536];
    struct sockaddr_storage from;
    socklen_t flen = sizeof from;
    ssize_t got = recvfrom(s, m, sizeof m, MSG_DONTWAIT, (struct sockaddr *)&from, &flen);
    if (got < 12)
        return;
    size_t n = (size_t)got;
    const unsigned char *fa = NULL;
    int fport = 0;
    int fv = net_ip_of((const unsigned char *)&from, flen, &fa, &fport);
    if (!fv || fport != 53 || !net_is_resolver(fv, fa))
        return; /* not from the resolver asked */
    unsigned short id = (unsigned short)(m[0] << 8 | m[1]);
    struct pending *p = NULL;
    for (int i = 0; i < MAX_PENDING && !p; i++)
        if (D->pending[i].used && D->pending[i].our_id == id)
            p = &D->pending[i];
    if (!p)
        return;
    /* the question must be the one asked */
    char name[256];
    int qtype;
    int qend = dns_answer_question(m, n, name, &qtype);
    if (qend < 0 || strcmp(name, p->name) != 0 || qtype != p->qtype)
        return;
    p->used = 0;
    int an = m[6] << 8 | m[7];
    size_t i = (size_t)qend;
    char denied_name[256];
    if (chain_denied(D, m, n, i, an, denied_name, sizeof denied_name)) {
        /* the tree gets NXDOMAIN, and learns nothing of it */
        unsigned long count = helper_count_denial();
        helper_note_denial(count, "dns", p->name, "its answer names a denied name");
        if (D->plan->log_fd >= 0 && helper_may_log(count)) {
            char ename[600], edenied[600], fields[2048], who[16] = "null", tb[16];
            if (p->to.pid > 0)
                snprintf(who, sizeof who, "%d", p->to.pid);
            helper_json(p->name, ename, sizeof ename);
            helper_json(denied_name, edenied, sizeof edenied);
            snprintf(fields, sizeof fields,
                     "\"pid\":%s,\"syscall\":\"dns\",\"name\":\"%s\",\"type\":\"%s\","
                     "\"decision\":\"deny\",\"rule\":\"its answer names %s, which a policy "
                     "denies\",\"rcode\":\"NXDOMAIN\"",
                     who, ename, type_name(p->qtype, tb, sizeof tb), edenied);
            helper_log_event("deny", fields);
        }
        m[0] = (unsigned char)(p->their_id >> 8);
        m[1] = (unsigned char)p->their_id;
        m[3] = (unsigned char)((m[3] & 0xF0) | 3);
        m[6] = m[7] = m[8] = m[9] = m[10] = m[11] = 0; /* no records */
        reply_to(D, &p->to, m, (size_t)qend);
        return;
    }
    struct learning l = {.D = D, .p = p};
    dns_walk_answer(m, n, i, an, learn_record, &l);
    static const char *const rcodes[] = {"NOERROR", "FORMERR", "SERVFAIL", "NXDOMAIN",
                                         "NOTIMP", "REFUSED"};
    int rc = m[3] & 0x0F;
    char rcb[16];
    snprintf(rcb, sizeof rcb, "RCODE%d", rc);
    if (D->plan->log_fd >= 0)
        log_query(D, p->to.pid, p->name, p->qtype, p->name_rule, rc <= 5 ? rcodes[rc] : rcb,
                  l.learnt, l.refused, 1);
    m[0] = (unsigned char)(p->their_id >> 8);
    m[1] = (unsigned char)p->their_id;
    reply_to(D, &p->to, m, n);
}

static void udp_query(struct dns *D, int kind) {
    static unsigned char m[65536];
    struct client c;
    memset(&c, 0, sizeof c);
    c.kind = kind;
    char cbuf[256];
    struct iovec v = {m, sizeof m};
    struct msghdr h = {.msg_name = &c.peer, .msg_namelen = sizeof c.peer, .msg_iov = &v,
                       .msg_iovlen = 1, .msg_control = cbuf, .msg_controllen = sizeof cbuf};
    ssize_t got = recvmsg(D->dns[kind], &h, MSG_DONTWAIT);
    if (got <= 0)
        return;
    c.peer_len = h.msg_namelen;
    c.pid = net_querier_of(&c.peer, c.peer_len);
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&h); cm; cm = next_cmsg(&h, cm)) {
        if (cm->cmsg_level == IPPROTO_IP && cm->cmsg_type == IP_PKTINFO) {
            struct in_pktinfo pi;
            memcpy(&pi, CMSG_DATA(cm), sizeof pi);
            memcpy(c.local, &pi.ipi_addr, 4);
        } else if (cm->cmsg_level == IPPROTO_IPV6 && cm->cmsg_type == IPV6_PKTINFO) {
            struct in6_pktinfo pi;
            memcpy(&pi, CMSG_DATA(cm), sizeof pi);
            memcpy(c.local, &pi.ipi6_addr, 16);
            c.ifindex = (int)pi.ipi6_ifindex;
        }
    }
    query(D, &c, m, (size_t)got);
}

static void tcp_accept(struct dns *D, int kind) {
    int fd = accept4(D->dns[kind], NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0)
        return;
    int slot = 0;
    for (int i = 0; i < MAX_TCP; i++) {
        if (D->tcp[i].fd < 0) {
            slot = i;
            break;
        }
        if (D->tcp[i].idle < D->tcp[slot].idle)
            slot = i;
    }
    if (D->tcp[slot].fd >= 0)
        close(D->tcp[slot].fd);
    struct sockaddr_storage peer;
    socklen_t plen = sizeof peer;
    D->tcp[slot].pid = getpeername(fd, (struct sockaddr *)&peer, &plen) == 0
                          ? net_querier_of(&peer, plen) : -1;
    D->tcp[slot].fd = fd;
    D->tcp[slot].gen = ++D->gen;
    D->tcp[slot].have = 0;
    D->tcp[slot].idle = net_mono_ns() + TCP_IDLE_NS;
}

static void tcp_read(struct dns *D, int slot) {
    struct tcpconn *t = &D->tcp[slot];
    ssize_t got = read(t->fd, t->buf + t->have, sizeof t->buf - t->have);
    if (got <= 0) {
        if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
            close(t->fd);
            t->fd = -1;
        }
        return;
    }
    t->have += (size_t)got;
    t->idle = net_mono_ns() + TCP_IDLE_NS;
    while (t->have >= 2) {
        size_t want = (size_t)(t->buf[0] << 8 | t->buf[1]);
        if (want + 2 > sizeof t->buf || want < 12) { /* no query is that long */
            close(t->fd);
            t->fd = -1;
            return;
        }
        if (t->have < want + 2)
            return;
        struct client c;
        memset(&c, 0, sizeof c);
        c.kind = TCP4;
        c.pid = t->pid;
        c.slot = slot;
        c.gen = t->gen;
        unsigned char q[sizeof t->buf];
        memcpy(q, t->buf + 2, want);
        t->have -= want + 2;
        memmove(t->buf, t->buf + 2 + want, t->have);
        query(D, &c, q, want);
        if (t->fd < 0)
            return;
    }
}

int dns_poll_fds(const struct helper *h, struct pollfd *out, int max) {
    const struct dns *D = h->dns;
    int k = 0;
    for (int i = 0; i < 4; i++)
        if (D->dns[i] >= 0 && k < max)
            out[k++] = (struct pollfd){D->dns[i], POLLIN, 0};
    if (D->up4 >= 0 && k < max)
        out[k++] = (struct pollfd){D->up4, POLLIN, 0};
    if (D->up6 >= 0 && k < max)
        out[k++] = (struct pollfd){D->up6, POLLIN, 0};
    for (int i = 0; i < MAX_TCP; i++)
        if (D->tcp[i].fd >= 0 && k < max)
            out[k++] = (struct pollfd){D->tcp[i].fd, POLLIN, 0};
    return k;
}

int dns_timeout_ms(const struct helper *h) {
    const struct dns *D = h->dns;
    unsigned long long now = net_mono_ns(), first = 0;
    for (int i = 0; i < MAX_PENDING; i++)
        if (D->pending[i].used && (!first || D->pending[i].deadline < first))
            first = D->pending[i].deadline;
    for (int i = 0; i < MAX_TCP; i++)
        if (D->tcp[i].fd >= 0 && (!first || D->tcp[i].idle < first))
            first = D->tcp[i].idle;
    if (!first)
        return -1;
    return first <= now ? 0 : (int)((first - now) / 1000000ULL) + 1;
}

void dns_ready(const struct helper *h, const struct pollfd *fds, int n) {
    struct dns *D = h->dns;
    for (int k = 0; k < n; k++) {
        if (!fds[k].revents)
            continue;
        int fd = fds[k].fd;
        if (fd == D->dns[UDP4] || fd == D->dns[UDP6])
            udp_query(D, fd == D->dns[UDP4] ? UDP4 : UDP6);
        else if (fd == D->dns[TCP4] || fd == D->dns[TCP6])
            tcp_accept(D, fd == D->dns[TCP4] ? TCP4 : TCP6);
        else if (fd == D->up4 || fd == D->up6)
            upstream_answer(D, fd);
        else
            for (int i = 0; i < MAX_TCP; i++)
                if (D->tcp[i].fd == fd)
                    tcp_read(D, i);
    }
    /* what timed out: a query upstream never answered (SERVFAIL), an idle connection */
    unsigned long long now = net_mono_ns();
    for (int i = 0; i < MAX_PENDING; i++) {
        struct pending *p = &D->pending[i];
        if (!p->used || p->deadline > now)
            continue;
        p->used = 0;
        if (D->plan->log_fd >= 0)
            log_query(D, p->to.pid, p->name, p->qtype, p->name_rule,
                      "SERVFAIL (no answer upstream)", "", "", 1);
        if (p->qlen)
            answer_empty(D, &p->to, p->question, p->qlen, 2);
    }
    for (int i = 0; i < MAX_TCP; i++)
        if (D->tcp[i].fd >= 0 && D->tcp[i].idle < now) {
            close(D->tcp[i].fd);
            D->tcp[i].fd = -1;
        }
}


/* Runs in the file helper (dns.c's service), and for the tests outside any run: the
   readers of DNS messages, pure functions of the bytes. The question of a tree's query;
   names (compression followed); the records of an upstream answer and whether it names
   a denied name. They read only the message they are given, never past its n bytes;
   the ztsa_dns_* entry points at the end call them directly for the tests
   (tests/native/test_native_parsers.py). */
#include "helper.h"

#include <stdio.h>
#include <string.h>

/* the question of a query: its name (lowercase, dotted), type; the offset past it.
   -1: not one query of class IN without compression */
int dns_parse_question(const unsigned char *m, size_t n, char *name, int *qtype) {
    if (n < 17 || (m[2] & 0x80) || (m[2] & 0x78) || m[4] != 0 || m[5] != 1)
        return -1;
    size_t i = 12, o = 0;
    while (i < n && m[i]) {
        unsigned int l = m[i];
        if (l > 63 || i + 1 + l >= n || o + l + 2 > 254)
            return -1;
        if (o)
            name[o++] = '.';
        for (unsigned int k = 0; k < l; k++) {
            unsigned char c = m[i + 1 + k];
            /* a host name's bytes only: a dot or a NUL inside a label would make the
               name the rule sees differ from the one the resolver sends on */
            if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '-' || c == '_'))
                return -1;
            name[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        i += 1 + l;
    }
    name[o] = 0;
    if (i + 5 > n || o == 0)
        return -1;
    *qtype = m[i + 1] << 8 | m[i + 2];
    int qclass = m[i + 3] << 8 | m[i + 4];
    if (qclass != 1)
        return -1;
    return (int)(i + 5);
}

size_t dns_skip_name(const unsigned char *m, size_t n, size_t i) {
    while (i < n) {
        unsigned int l = m[i];
        if (l == 0)
            return i + 1;
        if ((l & 0xC0) == 0xC0)
            return i + 2;
        i += 1 + l;
    }
    return n + 1;
}

/* The name at m[i] (compression followed, through at most 31 pointers), lowercased and
   dot-joined into out (size bytes, at least 1); 0 when it cannot be read. */
int dns_read_name(const unsigned char *m, size_t n, size_t i, char *out, size_t size) {
    size_t o = 0;
    for (int hops = 0; i < n && hops < 32;) {
        unsigned int l = m[i];
        if (l == 0) {
            out[o] = 0;
            return 1;
        }
        if ((l & 0xC0) == 0xC0) {
            if (i + 1 >= n)
                return 0;
            i = (size_t)((l & 0x3F) << 8 | m[i + 1]);
            hops++;
            continue;
        }
        if (l > 63 || i + 1 + l > n || o + l + 2 > size)
            return 0;
        if (o)
            out[o++] = '.';
        for (unsigned int k = 0; k < l; k++) {
            unsigned char c = m[i + 1 + k];
            out[o++] = (char)(c >= 'A' && c <= 'Z' ? c + 32 : c);
        }
        i += 1 + l;
    }
    return 0;
}


/* The answer section of m from m[i] on: each of its an records to each, up to the first
   that runs past n. each stops the walk by returning non-zero, which dns_walk_answer
   returns; else 0. */
int dns_walk_answer(const unsigned char *m, size_t n, size_t i, int an, dns_record_fn each,
                       void *ctx) {
    for (int k = 0; k < an && i < n; k++) {
        struct dns_record r = {.owner = i};
        i = dns_skip_name(m, n, i);
        if (i + 10 > n)
            return 0;
        r.type = m[i] << 8 | m[i + 1];
        r.ttl = (unsigned int)m[i + 4] << 24 | (unsigned int)m[i + 5] << 16 |
                (unsigned int)m[i + 6] << 8 | m[i + 7];
        r.rdlen = (size_t)(m[i + 8] << 8 | m[i + 9]);
        i += 10;
        if (i + r.rdlen > n)
            return 0;
        r.rdata = i;
        int stop = each(m, n, &r, ctx);
        if (stop)
            return stop;
        i += r.rdlen;
    }
    return 0;
}

/* 4 or 6 for an A or AAAA record of an address's length, else 0 */
int dns_record_version(const struct dns_record *r) {
    return r->type == 1 && r->rdlen == 4 ? 4 : r->type == 28 && r->rdlen == 16 ? 6 : 0;
}

struct deny_check {
    int (*denied)(const char *name, const void *arg);
    const void *arg;
    char *which;
    size_t size;
};

static int deny_record(const unsigned char *m, size_t n, const struct dns_record *r, void *ctx) {
    struct deny_check *d = ctx;
    char owner[256], target[256];
    if (dns_read_name(m, n, r->owner, owner, sizeof owner) && d->denied(owner, d->arg)) {
        snprintf(d->which, d->size, "%s", owner);
        return 1;
    }
    if (r->type == 5 && dns_read_name(m, n, r->rdata, target, sizeof target) &&
        d->denied(target, d->arg)) {
        snprintf(d->which, d->size, "%s", target);
        return 1;
    }
    return 0;
}

/* Does the answer name (as an owner or a CNAME's target) a name denied() says is
   denied? Its first such name into which. */
int dns_answer_names_denied(const unsigned char *m, size_t n, size_t i, int an,
                               int (*denied)(const char *name, const void *arg),
                               const void *arg, char *which, size_t size) {
    struct deny_check d = {denied, arg, which, size};
    return dns_walk_answer(m, n, i, an, deny_record, &d);
}

/* The question of an answer m (n bytes), read as a query's: the offset past it, -1 when
   m is no response, or its question no query's this service forwards. */
int dns_answer_question(const unsigned char *m, size_t n, char *name, int *qtype) {
    if (n < 12 || !(m[2] & 0x80))
        return -1;
    unsigned char q[512];
    size_t qn = n < sizeof q ? n : sizeof q;
    memcpy(q, m, qn);
    q[2] &= 0x7F; /* read it as a query */
    q[6] = q[7] = q[8] = q[9] = q[10] = q[11] = 0;
    return dns_parse_question(q, qn, name, qtype);
}

/* ---- the same readers, for the tests (ztsa_native.h) ---- */

int ztsa_dns_parse_query(const unsigned char *m, size_t n, char *name, size_t name_size,
                         int *qtype) {
    char own[256];
    int qend = dns_parse_question(m, n, own, qtype);
    if (qend >= 0)
        snprintf(name, name_size, "%s", own);
    return qend;
}

int ztsa_dns_read_name(const unsigned char *m, size_t n, size_t i, char *out, size_t size) {
    return size ? dns_read_name(m, n, i, out, size) : 0;
}

struct collected {
    unsigned char *addrs;
    int *versions;
    unsigned int *ttls;
    int max, count;
};

static int collect_record(const unsigned char *m, size_t n, const struct dns_record *r,
                          void *ctx) {
    (void)n;
    struct collected *c = ctx;
    int version = dns_record_version(r);
    if (!version)
        return 0;
    if (c->count < c->max) {
        memset(c->addrs + 16 * c->count, 0, 16);
        memcpy(c->addrs + 16 * c->count, m + r->rdata, r->rdlen);
        c->versions[c->count] = version;
        c->ttls[c->count] = r->ttl;
    }
    c->count++;
    return 0;
}

int ztsa_dns_answer_addrs(const unsigned char *m, size_t n, char *qname, size_t qname_size,
                          int *qtype, unsigned char *addrs, int *versions, unsigned int *ttls,
                          int max) {
    char own[256];
    int qend = dns_answer_question(m, n, own, qtype);
    if (qend < 0)
        return -1;
    snprintf(qname, qname_size, "%s", own);
    struct collected c = {addrs, versions, ttls, max, 0};
    dns_walk_answer(m, n, (size_t)qend, m[6] << 8 | m[7], collect_record, &c);
    return c.count;
}

static int named(const char *name, const void *arg) {
    return strcmp(name, arg) == 0;
}

int ztsa_dns_answer_denied(const unsigned char *m, size_t n, const char *deny, char *which,
                           size_t which_size) {
    char own[256];
    int qtype;
    int qend = dns_answer_question(m, n, own, &qtype);
    if (qend < 0)
        return -1;
    char found[256] = "";
    int denied = dns_answer_names_denied(m, n, (size_t)qend, m[6] << 8 | m[7], named, deny,
                                     found, sizeof found);
    snprintf(which, which_size, "%s", found);
    return denied;
}

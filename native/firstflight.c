/* Runs in the relay process (relay.c), on bytes the tree sent: what the first flight of
   a TCP connection names, read without decrypting anything. Pure functions of the
   bytes, called directly by the tests (ztsa_native.h, the end).
     - a TLS ClientHello (TLS 1.2 and 1.3; it may span several records): its server
       name (SNI). Encrypted Client Hello (0xfe0d, and the drafts' and ESNI's code
       points) is refused: its outer name is whatever the client chose.
     - an HTTP/1 request head: its Host, and the host of an absolute-form or
       authority-form (CONNECT) target.
   Strict where a server could read the bytes otherwise than this reader: a duplicate
   extension, two server names, two Host fields, a folded or space-padded field name,
   a bare LF, a control byte in the head, a name that is no host name: all BAD, never a
   guess. */
#include "common.h"

#include <string.h>

#define TLS_HANDSHAKE 22
#define HS_CLIENT_HELLO 1
#define MAX_RECORD (16384 + 2048)

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

/* a host name as DNS names it: labels of [a-z0-9-_], 1-63 bytes, none starting with
   `-`, 253 at most; copied lowercased (a trailing dot dropped) into out. 1, or 0 when
   it is none (an IP literal names no name: all-digit last label) */
static int host_name(const unsigned char *p, size_t n, char *out, size_t size) {
    if (n && p[n - 1] == '.')
        n--;
    if (n == 0 || n > 253 || n + 1 > size)
        return 0;
    size_t label = 0;
    int digits = 1;
    for (size_t i = 0; i < n; i++) {
        int c = lower(p[i]);
        if (c == '.') {
            if (label == 0)
                return 0;
            label = 0;
            digits = 1;
        } else if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'
                   || (c == '-' && label > 0)) {
            if (++label > 63)
                return 0;
            digits &= c >= '0' && c <= '9';
        } else {
            return 0;
        }
        out[i] = (char)c;
    }
    if (label == 0 || digits)
        return 0;
    out[n] = 0;
    return 1;
}

static unsigned get16(const unsigned char *p) { return (unsigned)p[0] << 8 | p[1]; }

static int ech_type(unsigned t) {
    return t == 0xfe0d || (t >= 0xfe08 && t <= 0xfe0c) || t == 0xff02 || t == 0xffce;
}

/* The ClientHello's body (n bytes, whole): its SNI into out. */
static int client_hello(const unsigned char *p, size_t n, struct ztsa_ff_result *out) {
    size_t i = 2 + 32; /* legacy_version, random */
    if (n < i + 1)
        return ZTSA_FF_BAD;
    if (p[i] > 32 || n < i + 1 + p[i] + 2)
        return ZTSA_FF_BAD;
    i += 1 + p[i]; /* session id */
    unsigned k = get16(p + i);
    if (k < 2 || k % 2 || n < i + 2 + k + 1)
        return ZTSA_FF_BAD;
    i += 2 + k; /* cipher suites */
    if (p[i] < 1 || n < i + 1 + p[i])
        return ZTSA_FF_BAD;
    i += 1 + p[i]; /* compression methods */
    if (i == n)
        return ZTSA_FF_NONE; /* no extensions: no name */
    if (n < i + 2 || get16(p + i) != n - i - 2)
        return ZTSA_FF_BAD;
    i += 2;
    /* each extension type once (RFC 8446 4.2); a bitmap of the 65536 types */
    static unsigned char seen[8192];
    memset(seen, 0, sizeof seen);
    int named = 0, ech = 0;
    while (i < n) {
        if (n - i < 4)
            return ZTSA_FF_BAD;
        unsigned type = get16(p + i), len = get16(p + i + 2);
        i += 4;
        if (len > n - i)
            return ZTSA_FF_BAD;
        if (seen[type >> 3] & (1u << (type & 7)))
            return ZTSA_FF_BAD;
        seen[type >> 3] |= (unsigned char)(1u << (type & 7));
        ech |= ech_type(type);
        if (type == 0) { /* server_name: one host_name entry */
            const unsigned char *e = p + i;
            if (len < 2 || get16(e) != len - 2 || len < 5 || e[2] != 0)
                return ZTSA_FF_BAD;
            unsigned nl = get16(e + 3);
            if (nl + 5 != len || !host_name(e + 5, nl, out->name, sizeof out->name))
                return ZTSA_FF_BAD;
            named = 1;
        }
        i += len;
    }
    if (ech)
        return ZTSA_FF_ECH;
    return named ? ZTSA_FF_TLS : ZTSA_FF_NONE;
}

/* TLS records of type handshake, their fragments joined until the ClientHello is whole */
static int tls(const unsigned char *b, size_t n, struct ztsa_ff_result *out) {
    static unsigned char hs[ZTSA_FF_MAX + 4];
    size_t have = 0, i = 0, want = 0;
    while (i < n) {
        if (n - i < 5)
            return ZTSA_FF_MORE;
        unsigned len = get16(b + i + 3);
        /* a record of handshake type, version 3.x (SSL 3.0 to TLS 1.3's 3.1/3.3) */
        if (b[i] != TLS_HANDSHAKE || b[i + 1] != 3 || b[i + 2] > 4 || len == 0 ||
            len > MAX_RECORD)
            return have ? ZTSA_FF_BAD : ZTSA_FF_NONE;
        size_t take = n - i - 5 < len ? n - i - 5 : len;
        if (have + take > sizeof hs)
            return ZTSA_FF_BAD;
        memcpy(hs + have, b + i + 5, take);
        have += take;
        if (have >= 4 && !want) {
            if (hs[0] != HS_CLIENT_HELLO)
                return ZTSA_FF_BAD;
            want = 4 + ((size_t)hs[1] << 16 | (size_t)hs[2] << 8 | hs[3]);
            if (want > ZTSA_FF_MAX)
                return ZTSA_FF_BAD;
        }
        if (want && have >= want) {
            if (have > want || take < len)
                return ZTSA_FF_BAD; /* a record joins the ClientHello to what follows */
            out->used = i + 5 + take;
            return client_hello(hs + 4, want - 4, out);
        }
        if (take < len)
            return ZTSA_FF_MORE;
        i += 5 + len;
    }
    return ZTSA_FF_MORE;
}

static int tchar(int c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* an authority "host[:port]" (no userinfo; an IP literal or [v6] names nothing): its
   name into out; 1 a name, 0 none, -1 malformed */
static int authority(const unsigned char *p, size_t n, char *out, size_t size) {
    if (n && p[0] == '[')
        return 0;
    size_t h = n;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '@')
            return -1;
        if (p[i] == ':' && h == n)
            h = i;
    }
    for (size_t i = h + 1; i < n; i++)
        if (p[i] < '0' || p[i] > '9')
            return -1;
    if (h == 0)
        return -1;
    if (host_name(p, h, out, size))
        return 1;
    /* not a name: an IPv4 literal is none, anything else malformed */
    for (size_t i = 0; i < h; i++)
        if (!((p[i] >= '0' && p[i] <= '9') || p[i] == '.'))
            return -1;
    return 0;
}

/* An HTTP/1 request head: method SP target SP HTTP/1.x CRLF, fields, CRLF. */
static int http(const unsigned char *b, size_t n, struct ztsa_ff_result *out) {
    size_t m = 0;
    while (m < n && tchar(b[m]))
        m++;
    if (m == n)
        return m <= 16 ? ZTSA_FF_MORE : ZTSA_FF_NONE;
    if (b[m] != ' ' || m == 0 || m > 16)
        return ZTSA_FF_NONE;
    for (size_t i = 0; i < m; i++)
        if (b[i] < 'A' || b[i] > 'Z')
            return ZTSA_FF_NONE; /* a method is upper case: another protocol */
    /* the head's end */
    size_t end = 0;
    for (size_t i = 0; i + 3 < n && !end; i++)
        if (b[i] == '\r' && b[i + 1] == '\n' && b[i + 2] == '\r' && b[i + 3] == '\n')
            end = i + 4;
    for (size_t i = 0; i < (end ? end : n); i++) {
        unsigned c = b[i];
        if ((c < 0x20 && c != '\r' && c != '\n' && c != '\t') || c == 0x7f)
            return ZTSA_FF_BAD;
        if (c == '\n' && (i == 0 || b[i - 1] != '\r'))
            return ZTSA_FF_BAD; /* a bare LF: some servers end a line there, some not */
        if (c == '\r' && i + 1 < n && b[i + 1] != '\n')
            return ZTSA_FF_BAD;
    }
    if (!end)
        return ZTSA_FF_MORE;
    out->used = end;
    /* the request line */
    size_t t = m + 1, te = t;
    while (te < end && b[te] != ' ' && b[te] != '\r')
        te++;
    if (te == t || b[te] != ' ')
        return ZTSA_FF_BAD;
    size_t v = te + 1, ve = v;
    while (ve < end && b[ve] != '\r')
        ve++;
    if (ve - v != 8 || memcmp(b + v, "HTTP/1.", 7) != 0 || (b[v + 7] != '0' && b[v + 7] != '1'))
        return ZTSA_FF_BAD;
    int target_named = 0;
    if (m == 7 && memcmp(b, "CONNECT", 7) == 0) { /* authority-form */
        int r = authority(b + t, te - t, out->name2, sizeof out->name2);
        if (r < 0)
            return ZTSA_FF_BAD;
        target_named = r;
        if (!r)
            return ZTSA_FF_NONE;
    } else if (b[t] != '/' && !(te - t == 1 && b[t] == '*')) { /* absolute-form */
        size_t s = t;
        while (s < te && b[s] != ':')
            s++;
        if (s + 3 > te || b[s + 1] != '/' || b[s + 2] != '/')
            return ZTSA_FF_BAD;
        size_t a = s + 3, ae = a;
        while (ae < te && b[ae] != '/' && b[ae] != '?' && b[ae] != '#')
            ae++;
        int r = authority(b + a, ae - a, out->name2, sizeof out->name2);
        if (r < 0)
            return ZTSA_FF_BAD;
        if (!r)
            return ZTSA_FF_NONE; /* an address as the target: no name */
        target_named = 1;
    }
    /* the fields */
    int hosts = 0;
    size_t i = ve + 2;
    while (i + 2 <= end && !(b[i] == '\r' && b[i + 1] == '\n')) {
        size_t le = i;
        while (b[le] != '\r')
            le++;
        if (b[i] == ' ' || b[i] == '\t')
            return ZTSA_FF_BAD; /* a folded line */
        size_t c = i;
        while (c < le && tchar(b[c]))
            c++;
        if (c == i || c == le || b[c] != ':')
            return ZTSA_FF_BAD; /* no name, or space before the colon */
        if (c - i == 4 && lower(b[i]) == 'h' && lower(b[i + 1]) == 'o' &&
            lower(b[i + 2]) == 's' && lower(b[i + 3]) == 't') {
            if (hosts++)
                return ZTSA_FF_BAD;
            size_t vs = c + 1, vend = le;
            while (vs < vend && (b[vs] == ' ' || b[vs] == '\t'))
                vs++;
            while (vend > vs && (b[vend - 1] == ' ' || b[vend - 1] == '\t'))
                vend--;
            int r = authority(b + vs, vend - vs, out->name, sizeof out->name);
            if (r < 0)
                return ZTSA_FF_BAD;
            if (r == 0)
                return ZTSA_FF_NONE; /* an address as the Host: no name */
        }
        i = le + 2;
    }
    if (!hosts && !target_named)
        return ZTSA_FF_NONE;
    if (!hosts) { /* HTTP/1.0 with an absolute target only */
        memcpy(out->name, out->name2, sizeof out->name);
        out->name2[0] = 0;
    }
    return ZTSA_FF_HTTP;
}

int ztsa_first_flight(const unsigned char *b, size_t n, struct ztsa_ff_result *out) {
    memset(out, 0, sizeof *out);
    if (n == 0)
        return ZTSA_FF_MORE;
    int r;
    if (b[0] == TLS_HANDSHAKE)
        r = tls(b, n > ZTSA_FF_MAX ? ZTSA_FF_MAX : n, out);
    else
        r = http(b, n > ZTSA_FF_MAX ? ZTSA_FF_MAX : n, out);
    if (r == ZTSA_FF_MORE && n >= ZTSA_FF_MAX)
        r = ZTSA_FF_BAD; /* past the cap and still not whole */
    if (r != ZTSA_FF_TLS && r != ZTSA_FF_HTTP)
        out->name[0] = out->name2[0] = 0;
    return r;
}

/* Does the judged name match a name rule's name (exactly, or, suffix: ending in it, as
   the DNS service matches "*.example.com" rules)? */
int ztsa_ff_matches(const char *name, const char *rule, int suffix) {
    size_t n = strlen(name), r = strlen(rule);
    if (!suffix)
        return strcmp(name, rule) == 0;
    return n > r && strcmp(name + n - r, rule) == 0;
}

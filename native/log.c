/* Runs in the file helper: its words to the person and to the audit log. The audit
   log's lines (helper_log_event, helper_log_denial), with the tree's names JSON-escaped
   and --secret values redacted; the denials counted in the counters shared with the
   supervisor (struct ztsa_shared), the first few kept for the summary; a refused
   destination said once on stderr. It writes only the plan's log fd, stderr and the
   shared counters. */
#include "helper.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const struct helper *H; /* log_init's */

void log_init(const struct helper *h) { H = h; }

/* JSON string body: quotes, backslashes and control bytes escaped; bytes of invalid
   UTF-8 as \u00XX. */
static size_t json_escape(const char *in, char *out, size_t size) {
    size_t o = 0;
    const unsigned char *s = (const unsigned char *)in;
    while (*s && o + 8 < size) {
        unsigned char c = *s;
        int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
        int ok = len > 1;
        for (int i = 1; ok && i < len; i++)
            ok = (s[i] & 0xC0) == 0x80;
        /* strict UTF-8: no overlong forms (C0, C1, E0 80-9F, F0 80-8F), no surrogates
           (ED A0-BF), nothing past U+10FFFF (F4 90-BF, F5-F7) */
        if (ok && (c == 0xC0 || c == 0xC1 || (c == 0xE0 && s[1] < 0xA0) ||
                   (c == 0xED && s[1] >= 0xA0) || (c == 0xF0 && s[1] < 0x90) ||
                   (c == 0xF4 && s[1] >= 0x90) || c > 0xF4))
            ok = 0;
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
            s++;
        } else if (c < 0x20 || (c >= 0x80 && !ok)) {
            o += (size_t)snprintf(out + o, size - o, "\\u%04x", c);
            s++;
        } else {
            memcpy(out + o, s, (size_t)len);
            o += (size_t)len;
            s += len;
        }
    }
    out[o] = 0;
    return o;
}

/* deny lines a run writes at most (every denial is still counted): a tree that fails
   in a loop must not fill the disk through ztsa's log */
#define DENY_LINES 10000

static const char *redacted(const char *line);

/* the destinations said on stderr so far (tell_refused): each once */
#define TOLD_MAX 64
static struct {
    char what[TOLD_MAX][160];
    int n;
} told;

/* a name whose last label is digits or 0x-hex (inet_aton reads it as an address), or one
   with a colon: as ztsa.sandbox.policy.is_host_name judges it */
static int address_like(const char *name) {
    if (strchr(name, ':'))
        return 1;
    size_t n = strlen(name);
    while (n && name[n - 1] == '.')
        n--;
    size_t start = n;
    while (start && name[start - 1] != '.')
        start--;
    if (start == n)
        return 0;
    int hex = n - start > 2 && name[start] == '0' && (name[start + 1] | 0x20) == 'x';
    for (size_t i = start + (hex ? 2 : 0); i < n; i++) {
        char c = (char)(name[i] | 0x20);
        if (!(c >= '0' && c <= '9') && !(hex && c >= 'a' && c <= 'f'))
            return 0;
    }
    return 1;
}

static int network_call(const char *call) {
    return strcmp(call, "connect") == 0 || strncmp(call, "send", 4) == 0 ||
           strcmp(call, "dns") == 0;
}

/* A refused destination, on the stderr the tree shares with ztsa, the first time it is
   refused (a person, or an agent waiting on a tool's retries, sees it at once), with
   the flag that would allow it. Never blocks the helper for long: only when the stream
   has room (a line is shorter than PIPE_BUF); after TOLD_MAX destinations, the summary
   names the rest. */
static void tell_refused(const char *call, const char *what, const char *rule) {
    if (!H->plan->tell || !network_call(call) || strncmp(what, "unix:", 5) == 0)
        return;
    for (int i = 0; i < told.n; i++)
        if (strncmp(told.what[i], what, sizeof told.what[0] - 1) == 0)
            return;
    if (told.n == TOLD_MAX)
        return;
    snprintf(told.what[told.n++], sizeof told.what[0], "%s", what);
    char line[512];
    int dns = strcmp(call, "dns") == 0;
    int allow = strncmp(rule, "not in --allow-net", 18) == 0;
    if (allow && dns && address_like(what)) /* a rule for it opens an address, every port */
        allow = 0, rule = "not in --allow-net; an address asked as a name";
    snprintf(line, sizeof line, "ztsa: refused %s %s (%s%s%s)\n", dns ? "the name" : call,
             what, rule, allow ? ": --allow-net " : "", allow ? what : "");
    const char *shown = redacted(line); /* a --secret value in a name is its name */
    size_t n = strlen(shown);
    struct pollfd out = {2, POLLOUT, 0};
    if (n && poll(&out, 1, 0) == 1 && (out.revents & POLLOUT)) {
        ssize_t w = write(2, shown, n < 512 ? n : 511);
        (void)w;
    }
}

void helper_note_denial(unsigned long count, const char *syscall_name, const char *what,
                        const char *rule) {
    tell_refused(syscall_name, what, rule);
    if (count == 0)
        return;
    /* the summary's first few, each destination or path once */
    char entry[512];
    snprintf(entry, sizeof entry, "%s\x1f%s\x1f%s", syscall_name, what, rule);
    for (int i = 0; i < ZTSA_FIRST_DENIALS; i++) {
        char *slot = H->shared->first[i];
        const char *sep = strchr(slot, '\x1f');
        const char *its = sep ? sep + 1 : NULL;
        size_t wl = strlen(what);
        if (its && strncmp(its, what, wl) == 0 && its[wl] == '\x1f')
            return; /* the same destination or path: once */
        if (!slot[0]) {
            snprintf(slot, sizeof H->shared->first[0], "%s", entry);
            return;
        }
    }
}

/* line with every --secret value in it replaced by "[secret NAME]" (a value is plain
   text: an environment value escapes to itself unless it holds quotes or controls) */
static const char *redacted(const char *line) {
    static char out[1 << 17]; /* a 4-byte value may become "[secret NAME]" */
    const char *from = line;
    int any = 0;
    for (int i = 0; i < H->plan->n_secrets && !any; i++)
        any = strlen(H->plan->secrets[i]) >= 4 && strstr(line, H->plan->secrets[i]);
    if (!any)
        return line;
    size_t o = 0;
    while (*from && o + 1 < sizeof out) {
        int hit = -1;
        for (int i = 0; i < H->plan->n_secrets && hit < 0; i++) {
            size_t k = strlen(H->plan->secrets[i]);
            if (k >= 4 && strncmp(from, H->plan->secrets[i], k) == 0)
                hit = i;
        }
        if (hit < 0) {
            out[o++] = *from++;
            continue;
        }
        int n = snprintf(out + o, sizeof out - o, "[secret %s]", H->plan->secret_names[hit]);
        o = n > 0 && (size_t)n < sizeof out - o ? o + (size_t)n : sizeof out - 1;
        from += strlen(H->plan->secrets[hit]);
    }
    out[o] = 0;
    return out;
}

/* One audit line: the schema, time and run, then event and fields (JSON members,
   already escaped); --secret values redacted. */
void helper_log_event(const char *event, const char *fields) {
    if (H->plan->log_fd < 0)
        return;
    static char line[16384];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    int n = snprintf(line, sizeof line,
                     "{\"schema\":\"ztsa.audit/v1\",\"time\":%lld.%06ld,\"run\":\"%s\","
                     "\"event\":\"%s\",%s}\n",
                     (long long)ts.tv_sec, ts.tv_nsec / 1000, H->plan->run_id ? H->plan->run_id : "",
                     event, fields);
    if (n > 0 && (size_t)n < sizeof line) {
        const char *out = redacted(line);
        ssize_t ignored = write(H->plan->log_fd, out, strlen(out));
        (void)ignored;
    }
}

unsigned long helper_count_denial(void) {
    return __atomic_add_fetch(&H->shared->denials, 1, __ATOMIC_RELAXED);
}

int helper_may_log(unsigned long count) { return count <= DENY_LINES; }

unsigned long helper_count_would(void) {
    return __atomic_add_fetch(&H->shared->would, 1, __ATOMIC_RELAXED);
}

const struct ztsa_plan *helper_plan(void) { return H->plan; }

void helper_count_connect(void) { __atomic_fetch_add(&H->shared->connects, 1, __ATOMIC_RELAXED); }

void helper_json(const char *in, char *out, size_t size) { json_escape(in, out, size); }

const char *helper_errno_name(int e) {
    switch (e) {
    case 0: return "0";
    case ECONNREFUSED: return "ECONNREFUSED";
    case EINPROGRESS: return "EINPROGRESS";
    case ETIMEDOUT: return "ETIMEDOUT";
    case ENETUNREACH: return "ENETUNREACH";
    case EHOSTUNREACH: return "EHOSTUNREACH";
    case EADDRINUSE: return "EADDRINUSE";
    case EACCES: return "EACCES";
    case EPERM: return "EPERM";
    case EPIPE: return "EPIPE";
    case EAGAIN: return "EAGAIN";
    case EBADF: return "EBADF";
    case ENOENT: return "ENOENT";
    case EINVAL: return "EINVAL";
    case EISCONN: return "EISCONN";
    case EMSGSIZE: return "EMSGSIZE";
    default: return "error";
    }
}



void helper_log_denial(pid_t pid, const char *syscall_name, const char *p1, const char *p2,
                       const char *rule) {
    unsigned long count = __atomic_add_fetch(&H->shared->denials, 1, __ATOMIC_RELAXED);
    helper_note_denial(count, syscall_name, p1, rule);
    if (H->plan->log_fd < 0 || count > DENY_LINES + 1)
        return;
    if (count == DENY_LINES + 1) {
        syscall_name = "(more)";
        p1 = p2 = "";
        rule = "later denials are counted in the summary, not logged";
    }
    pid = helper_host_pid(pid);
    static char e1[4 * 4096 * 2], e2[4 * 4096 * 2], line[sizeof e1 + sizeof e2 + 512];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    json_escape(p1, e1, sizeof e1);
    json_escape(p2, e2, sizeof e2);
    int n = snprintf(line, sizeof line,
                     "{\"schema\":\"ztsa.audit/v1\",\"time\":%lld.%06ld,\"run\":\"%s\","
                     "\"event\":\"deny\",\"pid\":%d,\"syscall\":\"%s\","
                     "\"path\":\"%s%s%s\",\"rule\":\"%s\"}\n",
                     (long long)ts.tv_sec, ts.tv_nsec / 1000, H->plan->run_id ? H->plan->run_id : "",
                     pid, syscall_name, e1, *p2 ? " -> " : "", e2, rule);
    if (n > 0) {
        ssize_t ignored = write(H->plan->log_fd, line, (size_t)n < sizeof line ? (size_t)n
                                                                          : sizeof line - 1);
        (void)ignored;
    }
}

/* for the tests (ztsa_native.h): the escaping of the tree's names and paths in log
   lines */
void ztsa_json_escape(const char *in, char *out, size_t size) {
    if (size)
        json_escape(in, out, size);
}

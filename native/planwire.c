/* The plan on the wire, between the supervisor and ztsa-ns (nsmain.c): struct
   ztsa_plan flattened, no pointers. The supervisor's ztsa_spawn encodes it into a sealed
   memfd (plan_memfd); ztsa-ns decodes it (plan_decode) before anything else, and a plan
   that does not decode is exit 125, CMD not started.

   The format: "ZTSAPLAN", a 4-byte version, then every field of struct ztsa_plan in
   its order, each as an item: a 4-byte length and that many bytes (little-endian
   throughout; a NULL pointer is the length 0xFFFFFFFF and no bytes). A number is an
   8-byte item; a string its bytes without the NUL (none inside); an array a header item
   (its element count, 8 bytes, or NULL) and then each element; a struct its fields.
   Nothing may follow the last field. One function lists the fields (plan_fields), run
   by the encoder and by the decoder alike, so the two cannot disagree on the order.

   The decoder reads its own copy of the bytes; every length is checked against what is
   left before anything is allocated, every number against its C type, each array's
   count against the plan's count of it, and the plan's modes and flags against their
   values (plan_sane). */
#include "common.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define WIRE_MAGIC "ZTSAPLAN"
#define WIRE_VERSION 2U
#define WIRE_NULL 0xFFFFFFFFU
#define WIRE_MAX_FILTER 4096 /* BPF_MAXINSNS */

struct block {
    struct block *next;
    max_align_t data[];
};

struct wire {
    int decode;            /* 0: append to buf; 1: read buf from pos */
    unsigned char *buf;
    size_t len, cap, pos;
    int bad;               /* an errno: ENOMEM encoding; EINVAL, EPROTO decoding */
    struct block *blocks;  /* what the decoder allocated */
};

/* ---- items ---- */

static void put(struct wire *w, const void *p, size_t n) {
    if (w->bad)
        return;
    if (w->len + n > w->cap) {
        size_t cap = w->cap ? w->cap : 4096;
        while (cap < w->len + n)
            cap *= 2;
        unsigned char *b = realloc(w->buf, cap);
        if (!b) {
            w->bad = ENOMEM;
            return;
        }
        w->buf = b;
        w->cap = cap;
    }
    memcpy(w->buf + w->len, p, n);
    w->len += n;
}

static void put_u32(struct wire *w, uint32_t v) {
    unsigned char b[4] = {v & 0xFF, (v >> 8) & 0xFF, (v >> 16) & 0xFF, v >> 24};
    put(w, b, 4);
}

static uint32_t get_u32(struct wire *w) {
    if (w->bad || w->len - w->pos < 4) {
        w->bad = EINVAL;
        return 0;
    }
    const unsigned char *b = w->buf + w->pos;
    w->pos += 4;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* encode: one item (p NULL: the NULL item) */
static void put_item(struct wire *w, const void *p, size_t n) {
    if (n >= WIRE_NULL) {
        w->bad = w->bad ? w->bad : EOVERFLOW;
        return;
    }
    put_u32(w, p ? (uint32_t)n : WIRE_NULL);
    if (p)
        put(w, p, n);
}

/* decode: the next item's bytes (NULL for the NULL item) and length */
static const unsigned char *get_item(struct wire *w, size_t *n, int *null) {
    uint32_t len = get_u32(w);
    *n = 0;
    *null = !w->bad && len == WIRE_NULL;
    if (w->bad || *null)
        return NULL;
    if (len > w->len - w->pos) {
        w->bad = EINVAL;
        return NULL;
    }
    const unsigned char *p = w->buf + w->pos;
    w->pos += len;
    *n = len;
    return p;
}

static void *alloc(struct wire *w, size_t n) {
    if (w->bad)
        return NULL;
    struct block *b = calloc(1, sizeof *b + (n ? n : 1));
    if (!b) {
        w->bad = ENOMEM;
        return NULL;
    }
    b->next = w->blocks;
    w->blocks = b;
    return b->data;
}

/* ---- fields: each encodes *v, or decodes into *v ---- */

static void f_u64(struct wire *w, unsigned long long *v) {
    unsigned char b[8];
    if (!w->decode) {
        for (int i = 0; i < 8; i++)
            b[i] = (unsigned char)(*v >> (8 * i));
        put_item(w, b, 8);
        return;
    }
    size_t n;
    int null;
    const unsigned char *p = get_item(w, &n, &null);
    if (!p || n != 8) {
        w->bad = w->bad ? w->bad : EINVAL;
        return;
    }
    unsigned long long x = 0;
    for (int i = 0; i < 8; i++)
        x |= (unsigned long long)p[i] << (8 * i);
    *v = x;
}

static void f_int(struct wire *w, int *v) {
    unsigned long long x = (unsigned long long)(long long)*v;
    f_u64(w, &x);
    if (w->decode && !w->bad) {
        long long s = (long long)x;
        if (s < INT_MIN || s > INT_MAX)
            w->bad = EINVAL;
        else
            *v = (int)s;
    }
}

/* a string, NULL or without a NUL inside */
static void f_str(struct wire *w, const char **s) {
    if (!w->decode) {
        put_item(w, *s, *s ? strlen(*s) : 0);
        return;
    }
    size_t n;
    int null;
    const unsigned char *p = get_item(w, &n, &null);
    if (w->bad || null) {
        *s = NULL;
        return;
    }
    if (memchr(p, 0, n)) {
        w->bad = EINVAL;
        return;
    }
    char *out = alloc(w, n + 1);
    if (out) {
        memcpy(out, p, n);
        out[n] = 0;
    }
    *s = out;
}

/* an array's header: NULL (*present 0), or its count, which must be count; decode
   allocates count elements of size bytes (one more, zeroed, for a NULL end) */
static void *f_array(struct wire *w, const void *arr, int count, size_t size, int *present) {
    unsigned long long n = (unsigned long long)(count > 0 ? count : 0);
    if (w->decode && count < -1) /* -1: none (n_make's second ruleset); else a count */
        w->bad = w->bad ? w->bad : EINVAL;
    if (!w->decode) {
        *present = arr != NULL;
        if (arr)
            f_u64(w, &n);
        else
            put_item(w, NULL, 0);
        return (void *)arr;
    }
    size_t at = w->pos;
    *present = 0;
    if (get_u32(w) == WIRE_NULL || w->bad)
        return NULL;
    w->pos = at;
    unsigned long long got = 0;
    f_u64(w, &got);
    /* every element takes at least one 4-byte length on the wire */
    if (w->bad || got != n || got > (w->len - w->pos) / 4 + 1) {
        w->bad = w->bad ? w->bad : EINVAL;
        return NULL;
    }
    *present = 1;
    return alloc(w, (size_t)(got + 1) * size);
}

static void f_strs(struct wire *w, const char *const **a, int n) {
    int present;
    const char **arr = f_array(w, *a, n, sizeof(char *), &present);
    for (int i = 0; present && i < n && !w->bad; i++) {
        const char *s = w->decode ? NULL : (*a)[i];
        f_str(w, &s);
        if (w->decode && arr)
            arr[i] = s;
    }
    if (w->decode)
        *a = w->bad ? NULL : arr;
}

/* argv and envp: NULL-terminated */
static void f_argv(struct wire *w, char *const **a) {
    int n = 0;
    while (!w->decode && *a && (*a)[n])
        n++;
    f_int(w, &n);
    if (!w->bad && n < 0)
        w->bad = EINVAL;
    const char *const *arr = (const char *const *)*a;
    f_strs(w, &arr, n);
    if (w->decode)
        *a = (char *const *)arr; /* f_array's extra element is the NULL end */
}

static void f_ints(struct wire *w, const int **a, int n) {
    int present;
    int *arr = f_array(w, *a, n, sizeof(int), &present);
    for (int i = 0; present && i < n && !w->bad; i++) {
        int v = w->decode ? 0 : (*a)[i];
        f_int(w, &v);
        if (w->decode && arr)
            arr[i] = v;
    }
    if (w->decode)
        *a = w->bad ? NULL : arr;
}

static void f_u64s(struct wire *w, const unsigned long long **a, int n) {
    int present;
    unsigned long long *arr = f_array(w, *a, n, sizeof(unsigned long long), &present);
    for (int i = 0; present && i < n && !w->bad; i++) {
        unsigned long long v = w->decode ? 0 : (*a)[i];
        f_u64(w, &v);
        if (w->decode && arr)
            arr[i] = v;
    }
    if (w->decode)
        *a = w->bad ? NULL : arr;
}

/* fixed-size bytes (an address, a mask) */
static void f_fixed(struct wire *w, unsigned char *b, size_t size) {
    if (!w->decode) {
        put_item(w, b, size);
        return;
    }
    size_t n;
    int null;
    const unsigned char *p = get_item(w, &n, &null);
    if (!p || n != size)
        w->bad = w->bad ? w->bad : EINVAL;
    else
        memcpy(b, p, size);
}

static void f_rules(struct wire *w, const struct ztsa_net_rule **a, int n) {
    int present;
    struct ztsa_net_rule *arr = f_array(w, *a, n, sizeof **a, &present);
    for (int i = 0; present && i < n && !w->bad; i++) {
        struct ztsa_net_rule r;
        if (w->decode)
            memset(&r, 0, sizeof r);
        else
            r = (*a)[i];
        f_int(w, &r.version);
        f_fixed(w, r.net, sizeof r.net);
        f_fixed(w, r.mask, sizeof r.mask);
        f_int(w, &r.port);
        f_int(w, &r.id);
        if (w->decode && arr)
            arr[i] = r;
    }
    if (w->decode)
        *a = w->bad ? NULL : arr;
}

/* a policy's programs of a rule: NULL, or names each ending with a NUL, then an empty
   one ("a\0b\0\0"; "\0" for none) */
static void f_program_list(struct wire *w, const char **list) {
    if (!w->decode) {
        size_t n = 0;
        while (*list && (*list)[n])
            n += strlen(*list + n) + 1;
        put_item(w, *list, *list ? n + 1 : 0);
        return;
    }
    size_t n;
    int null;
    const unsigned char *p = get_item(w, &n, &null);
    *list = NULL;
    if (w->bad || null)
        return;
    if (n == 0 || p[n - 1] != 0 || (n > 1 && p[n - 2] != 0)) {
        w->bad = EINVAL;
        return;
    }
    /* no empty name before the end: the list would end early */
    for (size_t i = 0; i + 1 < n; i++)
        if (p[i] == 0 && (i == 0 || p[i - 1] == 0)) {
            w->bad = EINVAL;
            return;
        }
    char *out = alloc(w, n);
    if (out)
        memcpy(out, p, n);
    *list = out;
}

static void f_allow(struct wire *w, struct ztsa_allow *a) {
    f_int(w, &a->n_net);
    f_rules(w, &a->net, a->n_net);
    f_int(w, &a->n_unix);
    f_strs(w, &a->unix_paths, a->n_unix);
    f_str(w, &a->workspace);
    f_int(w, &a->n_programs);
    int present;
    const char **arr = f_array(w, a->programs, a->n_programs, sizeof(char *), &present);
    for (int i = 0; present && i < a->n_programs && !w->bad; i++) {
        const char *list = w->decode ? NULL : a->programs[i];
        f_program_list(w, &list);
        if (w->decode && arr)
            arr[i] = list;
    }
    if (w->decode)
        a->programs = w->bad ? NULL : arr;
    f_str(w, &a->exe);
}

static void f_names(struct wire *w, const struct ztsa_dns_name **a, int n) {
    int present;
    struct ztsa_dns_name *arr = f_array(w, *a, n, sizeof **a, &present);
    for (int i = 0; present && i < n && !w->bad; i++) {
        struct ztsa_dns_name d;
        if (w->decode)
            memset(&d, 0, sizeof d);
        else
            d = (*a)[i];
        f_str(w, &d.name);
        f_int(w, &d.suffix);
        f_int(w, &d.port);
        f_int(w, &d.rule);
        f_int(w, &d.deny);
        f_int(w, &d.carries);
        if (w->decode && arr)
            arr[i] = d;
    }
    if (w->decode)
        *a = w->bad ? NULL : arr;
}

static void f_filter(struct wire *w, struct ztsa_plan *p) {
    int len = p->filter_len;
    f_int(w, &len);
    if (w->decode && !w->bad && (len < 0 || len > WIRE_MAX_FILTER))
        w->bad = EINVAL;
    size_t size = (size_t)(len > 0 ? len : 0) * sizeof(struct ztsa_filter_insn);
    if (!w->decode) {
        put_item(w, p->filter, size);
        return;
    }
    size_t n;
    int null;
    const unsigned char *b = get_item(w, &n, &null);
    if (w->bad || null || n != size) {
        w->bad = w->bad ? w->bad : EINVAL;
        return;
    }
    struct ztsa_filter_insn *out = alloc(w, size);
    if (out)
        memcpy(out, b, size);
    p->filter = out;
    p->filter_len = (unsigned short)len;
}

/* ---- the plan, field by field, in struct ztsa_plan's order ---- */

static void plan_files(struct wire *w, struct ztsa_plan *p) {
    f_str(w, &p->path);
    f_argv(w, &p->argv);
    f_argv(w, &p->envp);
    f_str(w, &p->cwd);
    f_filter(w, p);
    f_int(w, &p->drop_caps);
    f_u64(w, &p->keep_caps);
    f_int(w, &p->n_keep_fds);
    f_ints(w, &p->keep_fds, p->n_keep_fds);
    f_int(w, &p->n_write);
    f_strs(w, &p->write_paths, p->n_write);
    f_u64s(w, &p->write_rights, p->n_write);
    f_u64(w, &p->handled_fs);
    f_int(w, &p->namespaces);
    f_int(w, &p->n_ro);
    f_strs(w, &p->ro_paths, p->n_ro);
    f_int(w, &p->n_git_configs);
    f_strs(w, &p->git_configs, p->n_git_configs);
    f_int(w, &p->helper);
    f_int(w, &p->log_fd);
    f_str(w, &p->workspace);
    f_int(w, &p->n_protected);
    f_strs(w, &p->protected_paths, p->n_protected);
    f_int(w, &p->n_make); /* -1: no second ruleset */
    f_strs(w, &p->make, p->n_make);
    f_int(w, &p->n_chain);
    f_strs(w, &p->chain, p->n_chain);
    f_int(w, &p->n_closed);
    f_strs(w, &p->closed, p->n_closed);
    f_int(w, &p->cont);
    f_int(w, &p->connects);
    f_allow(w, &p->allow);
    f_int(w, &p->pid_ns);
    f_u64(w, &p->scoped);
    f_str(w, &p->run_id);
    f_int(w, &p->n_hide_homes);
    f_strs(w, &p->hide_homes, p->n_hide_homes);
    f_int(w, &p->n_show);
    f_strs(w, &p->show, p->n_show);
    f_strs(w, &p->show_at, p->n_show);
    f_ints(w, &p->show_rw, p->n_show);
}

static void plan_rest(struct wire *w, struct ztsa_plan *p) {
    f_int(w, &p->max_procs);
    f_u64(w, &p->max_memory);
    f_int(w, &p->netns);
    f_int(w, &p->tell);
    f_int(w, &p->n_dns_names);
    f_names(w, &p->dns_names, p->n_dns_names);
    f_int(w, &p->n_resolvers);
    f_rules(w, &p->resolvers, p->n_resolvers);
    f_int(w, &p->n_rule_specs);
    f_strs(w, &p->rule_specs, p->n_rule_specs);
    f_int(w, &p->n_deny_nets);
    f_rules(w, &p->deny_nets, p->n_deny_nets);
    f_int(w, &p->n_onlink);
    f_rules(w, &p->onlink, p->n_onlink);
    f_int(w, &p->n_secrets);
    f_strs(w, &p->secrets, p->n_secrets);
    f_strs(w, &p->secret_names, p->n_secrets);
    f_int(w, &p->n_listen);
    f_ints(w, &p->listen_ports, p->n_listen);
    f_int(w, &p->audit);
    f_int(w, &p->n_deny_paths);
    f_strs(w, &p->deny_paths, p->n_deny_paths);
    f_str(w, &p->empty_file);
    f_int(w, &p->n_shm_show);
    f_strs(w, &p->shm_show, p->n_shm_show);
    f_int(w, &p->n_audit);
    f_strs(w, &p->audit_paths, p->n_audit);
    f_ints(w, &p->audit_kinds, p->n_audit);
    f_int(w, &p->own_session);
    f_str(w, &p->private_dir);
    f_u64(w, &p->max_disk);
    f_int(w, &p->inotify_instances);
    f_int(w, &p->inotify_watches);
    f_u64(w, &p->kept_handled);
    f_int(w, &p->n_kept_rules);
    f_strs(w, &p->kept_rules, p->n_kept_rules);
    f_u64s(w, &p->kept_rights, p->n_kept_rules);
    f_int(w, &p->n_kept);
    f_strs(w, &p->kept, p->n_kept);
    f_int(w, &p->n_kept_way);
    f_strs(w, &p->kept_way, p->n_kept_way);
}

static void plan_fields(struct wire *w, struct ztsa_plan *p) {
    plan_files(w, p);
    plan_rest(w, p);
}

/* ---- the encoder (the supervisor) and the decoder (ztsa-ns) ---- */

/* the plan's choices among their values (an enum, a switch), and what the set-up
   reads without a count: CMD's path and argv, the workspace */
static int plan_sane(const struct ztsa_plan *p) {
    int flags[] = {p->drop_caps, p->helper, p->cont, p->pid_ns, p->netns, p->tell,
                   p->audit, p->own_session};
    for (size_t i = 0; i < sizeof flags / sizeof *flags; i++)
        if (flags[i] != 0 && flags[i] != 1)
            return 0;
    return p->namespaces >= ZTSA_NS_NONE && p->namespaces <= ZTSA_NS_USER &&
           p->connects >= ZTSA_CONNECTS_TRACER && p->connects <= ZTSA_CONNECTS_HELPER &&
           p->path && p->argv && p->envp && p->workspace && p->n_make >= -1;
}

/* The plan's bytes into *out (free it), their length, or -errno. */
static long plan_encode(const struct ztsa_plan *plan, unsigned char **out) {
    struct wire w = {0};
    struct ztsa_plan copy = *plan; /* the fields are only read */
    put(&w, WIRE_MAGIC, 8);
    put_u32(&w, WIRE_VERSION);
    plan_fields(&w, &copy);
    if (w.bad) {
        free(w.buf);
        return -w.bad;
    }
    *out = w.buf;
    return (long)w.len;
}

void plan_free(struct ztsa_plan *plan) {
    if (!plan)
        return;
    struct block *b = *(struct block **)((char *)plan + sizeof *plan);
    while (b) {
        struct block *next = b->next;
        free(b);
        b = next;
    }
    free(plan);
}

/* The plan of n bytes at b: a new plan (plan_free it), or NULL with *err EINVAL (it
   does not decode), EPROTO (another version of the format) or ENOMEM. */
struct ztsa_plan *plan_decode(const unsigned char *b, size_t n, int *err) {
    struct wire w = {.decode = 1, .buf = (unsigned char *)b, .len = n};
    *err = EINVAL;
    if (n < 12 || memcmp(b, WIRE_MAGIC, 8) != 0)
        return NULL;
    w.pos = 8;
    if (get_u32(&w) != WIRE_VERSION) {
        *err = EPROTO;
        return NULL;
    }
    /* the plan, then the head of its blocks (plan_free reads it there) */
    struct ztsa_plan *plan = calloc(1, sizeof *plan + sizeof(struct block *));
    if (!plan) {
        *err = ENOMEM;
        return NULL;
    }
    plan_fields(&w, plan);
    if (!w.bad && w.pos != w.len)
        w.bad = EINVAL; /* something after the last field */
    if (!w.bad && !plan_sane(plan))
        w.bad = EINVAL;
    *(struct block **)((char *)plan + sizeof *plan) = w.blocks;
    if (w.bad) {
        *err = w.bad;
        plan_free(plan);
        return NULL;
    }
    *err = 0;
    return plan;
}

/* The plan in a sealed memfd (no write, grow, shrink or further seal), or -errno. */
int plan_memfd(const struct ztsa_plan *plan) {
    unsigned char *bytes = NULL;
    long n = plan_encode(plan, &bytes);
    if (n < 0)
        return (int)n;
    int fd = memfd_create("ztsa-plan", MFD_CLOEXEC | MFD_ALLOW_SEALING);
    int e = fd < 0 ? errno : 0;
    for (long done = 0; !e && done < n;) {
        ssize_t k = write(fd, bytes + done, (size_t)(n - done));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            e = k < 0 ? errno : EIO;
        else
            done += k;
    }
    free(bytes);
    if (!e && fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE |
                    F_SEAL_SEAL) < 0)
        e = errno;
    if (e) {
        if (fd >= 0)
            close(fd);
        return -e;
    }
    return fd;
}

/* for the tests (ztsa_native.h): the bytes of a plan, and a decode then encode again */
long ztsa_plan_encode(const struct ztsa_plan *plan, unsigned char *out, size_t size) {
    unsigned char *bytes = NULL;
    long n = plan_encode(plan, &bytes);
    if (n < 0)
        return n;
    if ((size_t)n <= size)
        memcpy(out, bytes, (size_t)n);
    free(bytes);
    return n;
}

long ztsa_plan_reencode(const unsigned char *in, size_t n, unsigned char *out, size_t size) {
    int err;
    struct ztsa_plan *plan = plan_decode(in, n, &err);
    if (!plan)
        return -err;
    long r = ztsa_plan_encode(plan, out, size);
    plan_free(plan);
    return r;
}

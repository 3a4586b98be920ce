/* The one decision on where a connect or a send may go, and the resolution of a Unix
   socket path it decides on. Runs in the supervisor (the C wait loop, and the Python
   tracer through cffi) and in the file helper, each on its own copy of the address.
   ztsa_decide keeps no state and makes no system call. */
#include "common.h"

#include <errno.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

/* May the caller (a->exe) use rule id? A rule for listed programs only with its exe. */
int ztsa_may_use(const struct ztsa_allow *a, int id) {
    if (!a->programs || id < 0 || id >= a->n_programs || !a->programs[id])
        return 1;
    if (!a->exe)
        return 0;
    for (const char *p = a->programs[id]; *p; p += strlen(p) + 1)
        if (strcmp(p, a->exe) == 0)
            return 1;
    return 0;
}

static int net_match(const struct ztsa_allow *a, int version, const unsigned char *addr,
                     int port, int *rule) {
    int len = version == 4 ? 4 : 16;
    for (int i = 0; i < a->n_net; i++) {
        const struct ztsa_net_rule *r = &a->net[i];
        if (r->version != version || (r->port && r->port != port) || !ztsa_may_use(a, r->id))
            continue;
        int match = 1;
        for (int k = 0; k < len && match; k++)
            match = (addr[k] & r->mask[k]) == r->net[k];
        if (match) {
            *rule = r->id;
            return 1;
        }
    }
    return 0;
}

static int unix_listed(const struct ztsa_allow *a, const char *name, size_t len, int *rule) {
    for (int i = 0; i < a->n_unix; i++)
        if (strlen(a->unix_paths[i]) == len && memcmp(a->unix_paths[i], name, len) == 0) {
            *rule = i;
            return 1;
        }
    return 0;
}

int ztsa_decide(const struct ztsa_allow *allow, int call, int domain, const void *addr,
                unsigned int len, const char *unix_real, int *rule) {
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    const unsigned char *sa = addr;
    *rule = -1;
    if (len < 2)
        return ZTSA_ALLOW_KERNEL; /* no family: the kernel answers EINVAL */
    unsigned short family;
    memcpy(&family, sa, 2);
    if (family == AF_UNSPEC) {
        /* connect: every family dissolves its association (inet_dgram_connect,
           __inet_stream_connect, unix_dgram_connect). A send: UDPv4 sends to the
           address as if it were AF_INET (udp_sendmsg); IPv6 and Unix sockets ignore or
           refuse the name (udpv6_sendmsg, unix_*_sendmsg) */
        if (call == ZTSA_CALL_CONNECT)
            return ZTSA_ALLOW_DISCONNECT;
        if (domain == AF_INET6 || domain == AF_UNIX)
            return ZTSA_ALLOW_PEER;
        if (domain != AF_INET)
            return ZTSA_DENY_FAMILY;
        family = AF_INET;
    }
    int port = len >= 4 ? (sa[2] << 8) | sa[3] : 0;
    if (family == AF_INET) {
        if (len < 8)
            return ZTSA_DENY_FAMILY;
        return net_match(allow, 4, sa + 4, port, rule) ? ZTSA_ALLOW_RULE : ZTSA_DENY_NET;
    }
    if (family == AF_INET6) {
        if (len < 24)
            return ZTSA_DENY_FAMILY;
        int ok = memcmp(sa + 8, mapped, 12) == 0 ? net_match(allow, 4, sa + 20, port, rule)
                                                 : net_match(allow, 6, sa + 8, port, rule);
        return ok ? ZTSA_ALLOW_RULE : ZTSA_DENY_NET;
    }
    if (family != AF_UNIX)
        return ZTSA_DENY_FAMILY;
    const char *path = (const char *)sa + 2;
    size_t plen = len - 2;
    if (plen && path[0] == 0) { /* abstract: only a name --allow-unix gives ("@name") */
        char name[130];
        if (plen > sizeof name - 1)
            return ZTSA_DENY_ABSTRACT;
        name[0] = '@';
        memcpy(name + 1, path + 1, plen - 1);
        return unix_listed(allow, name, plen, rule) ? ZTSA_ALLOW_UNIX : ZTSA_DENY_ABSTRACT;
    }
    if (strnlen(path, plen) == 0)
        return ZTSA_DENY_UNNAMED;
    if (!unix_real || !*unix_real)
        return ZTSA_DENY_UNRESOLVED;
    size_t n = strlen(unix_real);
    if (unix_listed(allow, unix_real, n, rule))
        return ZTSA_ALLOW_UNIX;
    const char *ws = allow->workspace ? allow->workspace : "";
    size_t w = strcmp(ws, "/") == 0 ? 0 : strlen(ws);
    if (*ws && strncmp(unix_real, ws, w) == 0 && (unix_real[w] == '/' || unix_real[w] == 0))
        return ZTSA_ALLOW_WORKSPACE;
    return ZTSA_DENY_OUTSIDE;
}

int ztsa_unix_open(int pid, const char *path, unsigned int len, char *real,
                   unsigned int size) {
    return unix_open_at(-1, pid, path, len, real, size);
}

/* openat2's resolve flags (linux/openat2.h, which not every libc's headers have) */
struct how_ { unsigned long long flags, mode, resolve; };
#define NO_MAGICLINKS_ 0x02ULL
#define BENEATH_ 0x08ULL

static int open_no_magic(int dirfd, const char *name, unsigned long long resolve) {
    struct how_ how = {O_PATH | O_CLOEXEC, 0, NO_MAGICLINKS_ | resolve};
    return (int)syscall(SYS_openat2, dirfd, name, &how, sizeof how);
}

/* The path as the caller (pid, in proc's namespace, or the host's /proc when proc < 0)
   names it, opened O_PATH. Opened here, a /proc magic link on the way would be the
   opener's own (ztsa's, the helper's: its log, its host /proc), another process's or a
   root elsewhere: the caller's own names (/proc/self/..., /dev/fd/N) are opened beneath
   its own directory of proc (fd/N through its magic link: the caller's file), a
   relative path from its working directory, and nothing else follows a magic link. */
int unix_open_at(int proc, int pid, const char *path, unsigned int len, char *real,
                 unsigned int size) {
    size_t n = strnlen(path, len);
    if (size)
        real[0] = 0;
    if (n == 0)
        return -EINVAL;
    char name[PATH_MAX + 1], rest[PATH_MAX + 1], dir[64];
    snprintf(name, sizeof name, "%.*s", (int)n, path);
    snprintf(dir, sizeof dir, "%s%d", proc < 0 ? "/proc/" : "", pid);
    int base = proc < 0 ? AT_FDCWD : proc;
    int own = helper_own_path(name, rest, sizeof rest);
    int fd;
    if (own || name[0] != '/') {
        int d = openat(base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        int at = d >= 0 && !own ? openat(d, "cwd", O_PATH | O_DIRECTORY | O_CLOEXEC) : d;
        if (at < 0) {
            int e = errno;
            if (d >= 0)
                close(d);
            return -e;
        }
        fd = own == HELPER_OWN_FD ? openat(at, rest, O_PATH | O_CLOEXEC)
             : own                ? open_no_magic(at, rest, BENEATH_)
                                  : open_no_magic(at, name, 0);
        int e = errno;
        if (at != d)
            close(at);
        close(d);
        errno = e;
    } else {
        fd = open_no_magic(AT_FDCWD, name, 0);
    }
    if (fd < 0)
        return -errno; /* no such socket: the caller's connect fails the same way */
    char link[64];
    snprintf(link, sizeof link, "%sself/fd/%d", proc < 0 ? "/proc/" : "", fd);
    ssize_t r = size ? readlinkat(proc < 0 ? AT_FDCWD : proc, link, real, size - 1) : -1;
    if (r > 0)
        real[r] = 0; /* else real stays "": unresolved, denied */
    /* a socket file with a second name (a hard link of an outside server's socket into
       the workspace) is not decided by either name: unresolved, denied */
    struct stat st;
    if (size && (fstat(fd, &st) < 0 || st.st_nlink > 1))
        real[0] = 0;
    return fd;
}

/* ---- the range guard: what a name's answer may open ---- */

/* loopback, link-local, private, shared, multicast, reserved and unspecified ranges:
   what a name's answer never opens (the rebinding of an attacker's name) */
int ztsa_not_public(int version, const unsigned char *a) {
    if (version == 4) {
        unsigned int v = (unsigned int)a[0] << 24 | (unsigned int)a[1] << 16 |
                         (unsigned int)a[2] << 8 | a[3];
        static const struct { unsigned int net, mask; } v4[] = {
            {0x00000000, 0xFF000000}, {0x0A000000, 0xFF000000}, {0x64400000, 0xFFC00000},
            {0x7F000000, 0xFF000000}, {0xA9FE0000, 0xFFFF0000}, {0xAC100000, 0xFFF00000},
            {0xC0000000, 0xFFFFFF00}, {0xC0A80000, 0xFFFF0000}, {0xC6120000, 0xFFFE0000},
            {0xE0000000, 0xE0000000}};
        for (size_t i = 0; i < sizeof v4 / sizeof v4[0]; i++)
            if ((v & v4[i].mask) == v4[i].net)
                return 1;
        return 0;
    }
    static const unsigned char zero[10] = {0};
    if (memcmp(a, zero, 10) == 0 && a[10] == 0xff && a[11] == 0xff)
        return ztsa_not_public(4, a + 12); /* IPv4-mapped */
    if (memcmp(a, zero, 10) == 0 && a[10] == 0 && a[11] == 0)
        return 1; /* ::, ::1, IPv4-compatible */
    if ((a[0] & 0xFE) == 0xFC || a[0] == 0xFF || (a[0] == 0xFE && (a[1] & 0xC0) == 0x80))
        return 1; /* unique-local, multicast, link-local */
    if (a[0] == 0x00 && a[1] == 0x64 && a[2] == 0xff && a[3] == 0x9b)
        return a[4] == 0 && a[5] == 1 ? 1 /* local-use NAT64, 64:ff9b:1::/48 */
                                      : ztsa_not_public(4, a + 12); /* NAT64 */
    if (a[0] == 0xFE && (a[1] & 0xC0) == 0xC0)
        return 1; /* site-local, fec0::/10 */
    if (a[0] == 0x20 && a[1] == 0x01 && a[2] == 0 && a[3] == 0)
        return 1; /* Teredo, 2001::/32: an IPv4 address inside, obfuscated */
    if (a[0] == 0x20 && a[1] == 0x02)
        return ztsa_not_public(4, a + 2); /* 6to4 */
    return 0;
}

/* Is the address one of the host's own (the helper's namespace)? A bind to it succeeds
   only then. An answer naming it would open the host's own services. */
int ztsa_is_local(int version, const unsigned char *a) {
    int s = socket(version == 4 ? AF_INET : AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return 1; /* cannot tell: not opened */
    int r;
    if (version == 4) {
        struct sockaddr_in in = {.sin_family = AF_INET};
        memcpy(&in.sin_addr, a, 4);
        r = bind(s, (struct sockaddr *)&in, sizeof in);
    } else {
        struct sockaddr_in6 in6 = {.sin6_family = AF_INET6};
        memcpy(&in6.sin6_addr, a, 16);
        r = bind(s, (struct sockaddr *)&in6, sizeof in6);
    }
    int e = errno;
    close(s);
    return r == 0 || e != EADDRNOTAVAIL;
}

/* in one of the prefixes nets (IPv4-mapped, NAT64 and 6to4 addresses as the IPv4 address
   they reach, too)? */
static int in_nets(const struct ztsa_net_rule *nets, int n, int version, const unsigned char *a) {
    static const unsigned char mapped[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
    if (version == 6 && (memcmp(a, mapped, 12) == 0 || memcmp(a, nat64, 12) == 0) &&
        in_nets(nets, n, 4, a + 12))
        return 1;
    if (version == 6 && a[0] == 0x20 && a[1] == 0x02 && in_nets(nets, n, 4, a + 2))
        return 1;
    for (int i = 0; i < n; i++) {
        int len = version == 4 ? 4 : 16, hit = nets[i].version == version;
        for (int b = 0; hit && b < len; b++)
            hit = (a[b] & nets[i].mask[b]) == nets[i].net[b];
        if (hit)
            return 1;
    }
    return 0;
}

/* The range guard: may an address that a name's answer gave open the name's rule? Never
   a special range (ztsa_not_public), the host's own address (ztsa_is_local), or an
   address in a prefix on-link for the host (onlink: read from its routes when ztsa
   starts): an attacker's zone under an allowed name would reach the host's own
   networks. A rule naming the address or range itself is no answer, and still opens
   it. The one judgement of the file helper's DNS service and of the tracer's learning
   without a network namespace. 1: learnable. */
int ztsa_learnable(const struct ztsa_net_rule *onlink, int n_onlink, int version,
                   const unsigned char *a) {
    if (version != 4 && version != 6)
        return 0;
    return !ztsa_not_public(version, a) && !in_nets(onlink, n_onlink, version, a) &&
           !ztsa_is_local(version, a);
}

/* The one decision on where a connect or a send may go, and the resolution of a Unix
   socket path it decides on. Runs in the supervisor (the C wait loop, and the Python
   tracer through cffi) and in the file helper, each on its own copy of the address.
   ztsa_decide keeps no state and makes no system call. */
#include "internal.h"

#include <errno.h>
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

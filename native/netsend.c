/* Runs in the file helper, with a network namespace for the tree: sendto, sendmsg and
   sendmmsg with an address. The message (its name and data, at most MAX_SEND bytes) is
   copied once into the helper's memory; each destination is decided (net_decide_ip,
   net_unix_decide) and the data sent from the copy, on the helper's duplicate of the
   tree's socket, or on a host socket put in its place. It never blocks: a send that
   would wait is made again later (NET_WAIT, waits.c). */
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
#include <signal.h>
#include <sys/uio.h>

#define MAX_SEND (1 << 20)
#define MAX_IOV 1024

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
    int type = net_sockopt(dup, SOL_SOCKET, SO_TYPE);
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


/* sendto with MSG_FASTOPEN to an allowed address on the tree's TCP socket: a host
   socket connects with the data in its SYN, from the copies, in its place */
static long fast_open(const struct seccomp_notif *req, int dup, int fd,
                      const unsigned char *sa, unsigned int len, const void *data, size_t n,
                      int flags) {
    int tree_flags = fcntl(dup, F_GETFL);
    int s = net_host_socket(dup);
    if (s < 0)
        return s;
    ssize_t r = sendto(s, data, n, (flags | MSG_FASTOPEN | MSG_NOSIGNAL) & ~MSG_DONTWAIT,
                       (const struct sockaddr *)sa, len);
    long result = r < 0 ? -errno : r;
    if ((result >= 0 || result == -EINPROGRESS) && helper_still_valid(req->id) &&
        net_install(req, s, fd) == 0) {
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
    int type = net_sockopt(*dup, SOL_SOCKET, SO_TYPE);
    const unsigned char *a = NULL;
    int port = 0;
    int version = net_ip_of(sa, len, &a, &port);
    int family = len >= 2 ? sa[0] | sa[1] << 8 : -1;
    if (family == AF_UNIX)
        return unix_send(req, *dup, host, sa, len, data, n, flags, call);
    struct sockaddr_in as_inet;
    if (family == AF_UNSPEC && len >= 8 && net_sockopt(*dup, SOL_SOCKET, SO_DOMAIN) == AF_INET) {
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
    int d = net_decide_ip(pid, version, a, port, sa, len, ZTSA_CALL_SEND, type, rule, sizeof rule);
    if (d < 0 && net_audit(pid, call, version, a, port, type, rule, sizeof rule))
        d = 1;
    if (d < 0 || (d == 0 && host))
        return net_deny(pid, call, version, a, port, type, 1);
    const int *rules;
    if (d > 0 && !host && type == SOCK_STREAM && (flags & MSG_FASTOPEN) &&
        net_judged(&rules) >= 0)
        return -EPERM; /* TCP Fast Open: the SYN would carry first bytes not yet judged */
    if (d == 0 && port == 53) { /* a query: sent here, to name its sender */
        long r = send_copy(*dup, data, n, flags, sa, len);
        net_note_querier(*dup, pid);
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
    if (caller_read(pid, addr, hdr, sizeof hdr) < 0)
        return -EFAULT;
    unsigned long long name = hdr[0], iov = hdr[2], iovlen = hdr[3], control = hdr[4];
    unsigned int namelen = (unsigned int)hdr[1];
    m->control = control && hdr[5];
    m->namelen = name && namelen ? (namelen > sizeof m->name ? sizeof m->name : namelen) : 0;
    if (m->namelen && caller_read(pid, name, m->name, m->namelen) < 0)
        return -EFAULT;
    m->data = NULL;
    m->n = 0;
    if (!want_data)
        return 0;
    if (iovlen > MAX_IOV)
        return -EMSGSIZE;
    static unsigned char buf[MAX_SEND];
    static unsigned long long vec[2 * MAX_IOV];
    if (iovlen && caller_read(pid, iov, vec, 16 * iovlen) < 0)
        return -EFAULT;
    for (unsigned long long i = 0; i < iovlen && m->n < MAX_SEND; i++) {
        size_t take = vec[2 * i + 1] < MAX_SEND - m->n ? vec[2 * i + 1] : MAX_SEND - m->n;
        if (take && caller_read(pid, vec[2 * i], buf + m->n, take) < 0)
            return -EFAULT;
        m->n += take;
    }
    m->data = buf;
    return 0;
}

long net_send(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    const unsigned long long *a = req->data.args;
    int fd = (int)(unsigned int)a[0];
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    int host = net_is_host(dup);
    long result;
    if (req->data.nr == ZTSA_NR_sendto) {
        unsigned char sa[128];
        unsigned int len = (unsigned int)a[5];
        len = len > sizeof sa ? sizeof sa : len;
        static unsigned char data[MAX_SEND];
        size_t n = a[2] < MAX_SEND ? a[2] : MAX_SEND;
        if ((len && caller_read(pid, a[4], sa, len) < 0) || (n && caller_read(pid, a[1], data, n) < 0))
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
                net_note_if_dns_peer(dup, pid);
            result = send_copy(dup, m.data, m.n, (int)a[2], NULL, 0);
        } else
            result = send_one(req, &dup, fd, host, m.name, m.namelen, m.data, m.n, (int)a[2],
                              "sendmsg");
    } else { /* sendmmsg: every message decided and performed from its copy */
        unsigned int vlen = (unsigned int)a[2] > MAX_IOV ? MAX_IOV : (unsigned int)a[2];
        long sent = 0;
        result = 0;
        if (!host)
            net_note_if_dns_peer(dup, pid);
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
            host = net_is_host(dup); /* a host one now, if it was swapped */
        }
    }
    close(dup);
    if (result == -EPIPE)
        kill((pid_t)helper_tgid(pid), SIGPIPE);
    return result;
}

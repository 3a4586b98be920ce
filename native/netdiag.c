/* Runs in the file helper, with a network namespace for the tree: sock_diag questions
   about sockets. Whose is a Unix socket file (the tree's namespace's), who listens on
   a port of the tree's loopback, and of the host's for the --allow-listen sockets. It
   only asks the kernel (NETLINK_SOCK_DIAG dumps); it changes nothing. */
#include "helper.h"

#include <arpa/inet.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/inet_diag.h>
#include <linux/unix_diag.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/sysmacros.h>
#include <unistd.h>

static int diag = -1; /* sock_diag in the tree's namespace (netns.c's socket) */

void netdiag_init(const struct helper *h) { diag = h->net[4]; }

/* a zeroed request of len bytes (its netlink header first) for a whole dump */
static void dump_request(struct nlmsghdr *nh, size_t len) {
    memset(nh, 0, len);
    nh->nlmsg_len = (unsigned int)len;
    nh->nlmsg_type = SOCK_DIAG_BY_FAMILY;
    nh->nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP;
}

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
    dump_request(&req.nh, sizeof req);
    req.r.sdiag_family = AF_UNIX;
    req.r.udiag_states = ~0U;
    req.r.udiag_show = UDIAG_SHOW_VFS;
    struct stat st = {.st_dev = dev, .st_ino = ino};
    return diag_dump(diag, &req, sizeof req, unix_inode_hit, &st);
}

/* Does a socket of the tree's namespace listen on port (TCP: listening; UDP: bound)?
   Only for the log and the answer's words: whatever the tree reaches on its loopback
   stays in its namespace. */
static int listens_on(int nl, int type, int version, const unsigned char *a, int port,
                      const ino_t *inodes, int n_inodes);

int net_tree_listens(int type, int port) {
    return listens_on(diag, type, 0, NULL, port, NULL, 0);
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
        dump_request(&req.nh, sizeof req);
        req.r.sdiag_family = (unsigned char)family;
        req.r.sdiag_protocol = type == SOCK_STREAM ? IPPROTO_TCP : IPPROTO_UDP;
        req.r.idiag_states = type == SOCK_STREAM ? 1U << 10 /* TCP_LISTEN */ : ~0U;
        if (diag_dump(nl, &req, sizeof req, listener_hit, &q))
            return 1;
    }
    return 0;
}


/* Does a socket of the host's, one of inodes, listen on (version, a, port)? */
int net_listens_on_host(int type, int version, const unsigned char *a, int port,
                        const ino_t *inodes, int n_inodes) {
    static int host_diag = -2;
    if (host_diag == -2)
        host_diag = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    return host_diag >= 0 && listens_on(host_diag, type, version, a, port, inodes, n_inodes);
}

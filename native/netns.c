/* Runs in CMD, after the helper forked it and before it drops its capabilities: the
   tree's own network namespace. The tree gets a loopback interface only, with every
   IPv4 and IPv6 address local to it (a "local" route for 0.0.0.0/0 and ::/0 in the
   local table, on lo): whatever address a tree's socket sends to or connects to, the
   packet stays in the namespace. What leaves is only what the file helper (in the
   host's namespace) connects or sends on its own sockets, and hands to the tree. In the
   namespace, before the filter, CMD opens ztsa's DNS service for the helper: UDP and
   TCP port 53 on every address, so any query the tree sends, to any resolver, reaches
   ztsa; and a sock_diag socket that shows the helper the tree's own Unix sockets. */
#include "child.h"

#include <errno.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define IPV6_FREEBIND_ 78

/* RTM_NEWROUTE: "local" route for family's whole space on ifindex, in the local table */
static int add_anyip(int nl, int family, int ifindex, unsigned int seq) {
    struct {
        struct nlmsghdr nh;
        struct rtmsg rt;
        struct rtattr oif;
        int index;
    } req;
    memset(&req, 0, sizeof req);
    req.nh.nlmsg_len = sizeof req;
    req.nh.nlmsg_type = RTM_NEWROUTE;
    req.nh.nlmsg_flags = NLM_F_REQUEST | NLM_F_CREATE | NLM_F_REPLACE | NLM_F_ACK;
    req.nh.nlmsg_seq = seq;
    req.rt.rtm_family = (unsigned char)family;
    req.rt.rtm_table = RT_TABLE_LOCAL;
    req.rt.rtm_protocol = RTPROT_BOOT;
    req.rt.rtm_scope = RT_SCOPE_HOST;
    req.rt.rtm_type = RTN_LOCAL;
    req.oif.rta_len = RTA_LENGTH(sizeof(int));
    req.oif.rta_type = RTA_OIF;
    req.index = ifindex;
    if (send(nl, &req, sizeof req, 0) != (ssize_t)sizeof req)
        return -errno;
    char buf[1024];
    ssize_t n = recv(nl, buf, sizeof buf, 0);
    if (n < (ssize_t)(sizeof(struct nlmsghdr) + sizeof(struct nlmsgerr)))
        return n < 0 ? -errno : -EPROTO;
    struct nlmsghdr *h = (struct nlmsghdr *)buf;
    if (h->nlmsg_type != NLMSG_ERROR)
        return -EPROTO;
    return ((struct nlmsgerr *)NLMSG_DATA(h))->error; /* 0 or -errno */
}

static int dns_socket(int family, int type) {
    int s = socket(family, type | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (s < 0)
        return -errno;
    int one = 1;
    setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int r;
    if (family == AF_INET) {
        struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(53)};
        if (type == SOCK_DGRAM)
            setsockopt(s, IPPROTO_IP, IP_PKTINFO, &one, sizeof one);
        r = bind(s, (struct sockaddr *)&a, sizeof a);
    } else {
        struct sockaddr_in6 a = {.sin6_family = AF_INET6, .sin6_port = htons(53)};
        setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        /* answers leave from the address asked, which IPv6 has as a route, not an
           interface address */
        setsockopt(s, IPPROTO_IPV6, IPV6_FREEBIND_, &one, sizeof one);
        if (type == SOCK_DGRAM)
            setsockopt(s, IPPROTO_IPV6, IPV6_RECVPKTINFO, &one, sizeof one);
        r = bind(s, (struct sockaddr *)&a, sizeof a);
    }
    if (r == 0 && type == SOCK_STREAM)
        r = listen(s, 64);
    if (r < 0) {
        int e = errno;
        close(s);
        return -e;
    }
    return s;
}

int netns_enter(int socks[ZTSA_NET_SOCKS]) {
    for (int i = 0; i < ZTSA_NET_SOCKS; i++)
        socks[i] = -1;
    if (unshare(CLONE_NEWNET) < 0)
        return -errno;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0)
        return -errno;
    struct ifreq ifr;
    memset(&ifr, 0, sizeof ifr);
    strcpy(ifr.ifr_name, "lo");
    int r = ioctl(s, SIOCGIFFLAGS, &ifr);
    if (r == 0) {
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        r = ioctl(s, SIOCSIFFLAGS, &ifr);
    }
    int ifindex = r == 0 ? (int)if_nametoindex("lo") : 0;
    close(s);
    if (r < 0 || ifindex <= 0)
        return r < 0 ? -errno : -ENODEV;
    int nl = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (nl < 0)
        return -errno;
    r = add_anyip(nl, AF_INET, ifindex, 1);
    /* a kernel without IPv6 has no table for it: IPv6 sockets then fail by themselves */
    int r6 = add_anyip(nl, AF_INET6, ifindex, 2);
    close(nl);
    if (r < 0)
        return r;
    socks[0] = dns_socket(AF_INET, SOCK_DGRAM);
    socks[1] = dns_socket(AF_INET, SOCK_STREAM);
    socks[2] = r6 == 0 ? dns_socket(AF_INET6, SOCK_DGRAM) : -1;
    socks[3] = r6 == 0 ? dns_socket(AF_INET6, SOCK_STREAM) : -1;
    socks[4] = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG);
    for (int i = 0; i < 2; i++)
        if (socks[i] < 0)
            return socks[i];
    return socks[4] < 0 ? -errno : 0;
}

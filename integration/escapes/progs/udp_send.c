/* UDP: sendto, sendmsg and sendmmsg with addresses; the batch mixes allowed and
   denied destinations. Prints what each call returned. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in to(unsigned short port) {
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    return a;
}

int main(int argc, char **argv) {
    unsigned short allowed = atoi(argv[1]), denied = atoi(argv[2]);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct sockaddr_in a = to(allowed), d = to(denied);
    printf("sendto allowed %zd\n", sendto(fd, "a", 1, 0, (void *)&a, sizeof a));
    errno = 0;
    ssize_t r1 = sendto(fd, "d", 1, 0, (void *)&d, sizeof d);
    printf("sendto denied %zd errno %d\n", r1, errno);
    struct iovec iov = {"m", 1};
    struct msghdr m = {.msg_name = &d, .msg_namelen = sizeof d, .msg_iov = &iov,
                       .msg_iovlen = 1};
    errno = 0;
    ssize_t r2 = sendmsg(fd, &m, 0);
    printf("sendmsg denied %zd errno %d\n", r2, errno);
    m.msg_name = &a;
    printf("sendmsg allowed %zd\n", sendmsg(fd, &m, 0));
    struct mmsghdr batch[4];
    struct sockaddr_in dests[4] = {a, a, d, a};
    struct iovec iovs[4];
    memset(batch, 0, sizeof batch);
    for (int i = 0; i < 4; i++) {
        iovs[i].iov_base = "b";
        iovs[i].iov_len = 1;
        batch[i].msg_hdr.msg_name = &dests[i];
        batch[i].msg_hdr.msg_namelen = sizeof dests[i];
        batch[i].msg_hdr.msg_iov = &iovs[i];
        batch[i].msg_hdr.msg_iovlen = 1;
    }
    int r = sendmmsg(fd, batch, 4, 0);
    printf("sendmmsg %d lens %u %u\n", r, batch[0].msg_len, batch[1].msg_len);
    /* family 0 (AF_UNSPEC) on an IPv4 UDP socket still goes to the address */
    struct sockaddr_in u = d;
    u.sin_family = 0;
    errno = 0;
    ssize_t r3 = sendto(fd, "u", 1, 0, (void *)&u, sizeof u);
    printf("sendto unspec %zd errno %d\n", r3, errno);
    return 0;
}

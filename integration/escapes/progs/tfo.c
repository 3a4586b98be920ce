/* TCP Fast Open: sendto with MSG_FASTOPEN, and TCP_FASTOPEN_CONNECT + connect. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef TCP_FASTOPEN_CONNECT
#define TCP_FASTOPEN_CONNECT 30
#endif

int main(int argc, char **argv) {
    unsigned short port = atoi(argv[1]);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    errno = 0;
    ssize_t r = sendto(fd, "x", 1, MSG_FASTOPEN, (void *)&a, sizeof a);
    printf("fastopen sendto %zd errno %d\n", r, errno);
    close(fd);
    fd = socket(AF_INET, SOCK_STREAM, 0);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_FASTOPEN_CONNECT, &one, sizeof one);
    errno = 0;
    int c = connect(fd, (void *)&a, sizeof a);
    printf("fastopen connect %d errno %d\n", c, errno);
    if (c == 0)
        printf("write %zd\n", write(fd, "y", 1));
    close(fd);
    return 0;
}

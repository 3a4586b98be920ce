/* DNS by sendmmsg: one batch holding an A query for each NAME, sent from one
   unconnected UDP socket to SERVER:53 (as glibc sends its A and AAAA queries together),
   then each answer's rcode and A addresses; then a TCP connect to the first address of
   the last name on PORT. Output (the format of test_dns_egress.py's Python client):
     sendmmsg N [errno E]
     ANSWER NAME rcode=R addrs=A,B      or   ANSWER NAME timeout
     CONNECT IP:PORT ok                 or   CONNECT IP:PORT errno E
   Usage: dns_routes SERVER PORT NAME... */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAXQ 8

static size_t build(unsigned char *q, unsigned short id, const char *name) {
    size_t n = 0;
    q[n++] = id >> 8;
    q[n++] = id & 0xff;
    q[n++] = 0x01; /* RD */
    q[n++] = 0x00;
    q[n++] = 0;
    q[n++] = 1; /* QDCOUNT */
    memset(q + n, 0, 6);
    n += 6;
    const char *p = name;
    while (*p) {
        const char *dot = strchr(p, '.');
        size_t len = dot ? (size_t)(dot - p) : strlen(p);
        q[n++] = (unsigned char)len;
        memcpy(q + n, p, len);
        n += len;
        p += len;
        if (*p == '.')
            p++;
    }
    q[n++] = 0;
    q[n++] = 0;
    q[n++] = 1; /* A */
    q[n++] = 0;
    q[n++] = 1; /* IN */
    return n;
}

static size_t skip_name(const unsigned char *r, size_t len, size_t i) {
    while (i < len) {
        if (r[i] == 0)
            return i + 1;
        if ((r[i] & 0xc0) == 0xc0)
            return i + 2;
        i += 1 + r[i];
    }
    return len + 1;
}

/* "rcode=R addrs=..." of a response into out; its id into *id; 0 if it is not one */
static int parse(const unsigned char *r, size_t len, unsigned short *id, char *out,
                 size_t outlen) {
    if (len < 12)
        return 0;
    *id = (unsigned short)(r[0] << 8 | r[1]);
    int rcode = r[3] & 0x0f;
    int qd = r[4] << 8 | r[5], an = r[6] << 8 | r[7];
    size_t i = 12;
    int w = snprintf(out, outlen, "rcode=%d addrs=", rcode);
    for (int k = 0; k < qd && i <= len; k++)
        i = skip_name(r, len, i) + 4;
    int first = 1;
    for (int k = 0; k < an && i + 10 <= len; k++) {
        i = skip_name(r, len, i);
        if (i + 10 > len)
            break;
        int type = r[i] << 8 | r[i + 1];
        size_t rdlen = (size_t)(r[i + 8] << 8 | r[i + 9]);
        i += 10;
        if (i + rdlen > len)
            break;
        if (type == 1 && rdlen == 4 && w < (int)outlen - 20) {
            char ip[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, r + i, ip, sizeof ip);
            w += snprintf(out + w, outlen - w, "%s%s", first ? "" : ",", ip);
            first = 0;
        }
        i += rdlen;
    }
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 4) {
        fprintf(stderr, "usage: dns_routes SERVER PORT NAME...\n");
        return 2;
    }
    const char *server = argv[1];
    unsigned short port = (unsigned short)atoi(argv[2]);
    int n = argc - 3 > MAXQ ? MAXQ : argc - 3;
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons(53);
    inet_pton(AF_INET, server, &to.sin_addr);
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    struct timeval tv = {3, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);

    unsigned char qs[MAXQ][300];
    struct iovec iov[MAXQ];
    struct mmsghdr batch[MAXQ];
    memset(batch, 0, sizeof batch);
    for (int k = 0; k < n; k++) {
        iov[k].iov_base = qs[k];
        iov[k].iov_len = build(qs[k], (unsigned short)(0x5100 + k), argv[3 + k]);
        batch[k].msg_hdr.msg_name = &to;
        batch[k].msg_hdr.msg_namelen = sizeof to;
        batch[k].msg_hdr.msg_iov = &iov[k];
        batch[k].msg_hdr.msg_iovlen = 1;
    }
    errno = 0;
    int sent = sendmmsg(fd, batch, (unsigned)n, 0);
    if (sent < 0)
        printf("sendmmsg %d errno %d\n", sent, errno);
    else
        printf("sendmmsg %d\n", sent);

    char results[MAXQ][256];
    int got[MAXQ] = {0};
    for (int want = sent > 0 ? sent : 0; want > 0; want--) {
        unsigned char r[1500];
        ssize_t len = recv(fd, r, sizeof r, 0);
        if (len < 0)
            break;
        unsigned short id;
        char text[256];
        if (!parse(r, (size_t)len, &id, text, sizeof text))
            continue;
        int k = id - 0x5100;
        if (k >= 0 && k < n && !got[k]) {
            got[k] = 1;
            memcpy(results[k], text, sizeof text);
        }
    }
    for (int k = 0; k < n; k++) {
        if (got[k])
            printf("ANSWER %s %s\n", argv[3 + k], results[k]);
        else
            printf("ANSWER %s timeout\n", argv[3 + k]);
    }
    /* the last name's first address, on PORT */
    if (got[n - 1]) {
        char *a = strstr(results[n - 1], "addrs=") + 6;
        char ip[INET_ADDRSTRLEN] = {0};
        size_t l = strcspn(a, ",");
        if (l > 0 && l < sizeof ip) {
            memcpy(ip, a, l);
            struct sockaddr_in dst;
            memset(&dst, 0, sizeof dst);
            dst.sin_family = AF_INET;
            dst.sin_port = htons(port);
            inet_pton(AF_INET, ip, &dst.sin_addr);
            int s = socket(AF_INET, SOCK_STREAM, 0);
            errno = 0;
            if (connect(s, (struct sockaddr *)&dst, sizeof dst) == 0)
                printf("CONNECT %s:%u ok\n", ip, port);
            else
                printf("CONNECT %s:%u errno %d\n", ip, port, errno);
            close(s);
        }
    }
    fflush(stdout);
    return 0;
}

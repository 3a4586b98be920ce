/* A host socket (a refused connect to an allowed port, then a second connect, which
   leaves it closed and unbound) is bound while a thread flips the address's family
   between AF_UNIX (the path "d1", which exists in the workspace) and AF_INET (the same
   bytes: 0.0.0.0 on port 0x6431): a bind the helper let the kernel make would look
   the address up again. Then listen() on it. Prints what the host's port saw.
   Usage: bind_flip REFUSED_PORT N */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static union {
    struct sockaddr_un un;
    char raw[sizeof(struct sockaddr_un)];
} sa;
static volatile int stop;

static void *flip(void *arg) {
    (void)arg;
    while (!stop) {
        ((volatile char *)sa.raw)[0] = AF_UNIX;
        ((volatile char *)sa.raw)[0] = AF_INET;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 3)
        return 2;
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connect(s, (struct sockaddr *)&to, sizeof to);
    connect(s, (struct sockaddr *)&to, sizeof to);
    memset(&sa, 0, sizeof sa);
    sa.raw[0] = AF_INET;
    sa.raw[2] = 'd';
    sa.raw[3] = '1';
    pthread_t t;
    pthread_create(&t, NULL, flip, NULL);
    int bound = 0, n = atoi(argv[2]);
    for (int i = 0; i < n && !bound; i++) {
        if (bind(s, (struct sockaddr *)&sa, sizeof sa.un) == 0) {
            struct sockaddr_in me;
            socklen_t l = sizeof me;
            getsockname(s, (struct sockaddr *)&me, &l);
            bound = me.sin_family == AF_INET && me.sin_port != 0;
        }
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("bound %d listen %d\n", bound, listen(s, 8) == 0);
    return 0;
}

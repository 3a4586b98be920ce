/* A sibling thread shuts the connecting socket down and flips the sockaddr's port to a
   denied one while the main thread's blocking connect to the allowed port is in
   flight, N times: a connect whose decision was made on the allowed port must never
   be run again by the kernel on the rewritten address. Prints how many connected. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static struct sockaddr_in addr;
static volatile int stop, current = -1;
static unsigned short allowed, denied;

static void *race(void *arg) {
    (void)arg;
    while (!stop) {
        int fd = current;
        if (fd >= 0)
            shutdown(fd, SHUT_RDWR);
        addr.sin_port = htons(denied);
        addr.sin_port = htons(allowed);
    }
    return NULL;
}

int main(int argc, char **argv) {
    allowed = (unsigned short)atoi(argv[1]);
    denied = (unsigned short)atoi(argv[2]);
    int n = atoi(argv[3]);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(allowed);
    pthread_t t;
    pthread_create(&t, NULL, race, NULL);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int s = socket(AF_INET, SOCK_STREAM, 0);
        current = s;
        if (connect(s, (struct sockaddr *)&addr, sizeof addr) == 0)
            ok++;
        current = -1;
        close(s);
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("connected %d\n", ok);
    return 0;
}

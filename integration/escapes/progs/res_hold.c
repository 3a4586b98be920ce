/* The tree's share of its user's resources, taken and held (issue #45).

   res_hold inotify READY SECONDS: inotify_init1 until it fails; print "inotify N errno E",
     create READY, hold every instance SECONDS seconds.
   res_hold locks FILE READY SECONDS: open FILE read-only; try flock LOCK_SH|LOCK_NB,
     flock LOCK_EX|LOCK_NB, fcntl F_SETLK F_RDLCK and F_OFD_SETLK F_RDLCK on it; print
     each "NAME 0" or "NAME -1 errno E", create READY, hold SECONDS seconds.
   res_hold wait FILE: open FILE read-write, flock LOCK_EX (blocking), then F_OFD_SETLKW
     a write lock (blocking) on a second descriptor; print "flock 0" and "ofd 0" as each
     is held. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/inotify.h>
#include <unistd.h>

static void ready(const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0)
        close(fd);
}

static void say(const char *name, int r) {
    if (r == 0)
        printf("%s 0\n", name);
    else
        printf("%s -1 errno %d\n", name, errno);
    fflush(stdout);
}

int main(int argc, char **argv) {
    if (argc >= 4 && !strcmp(argv[1], "inotify")) {
        int n = 0, err = 0;
        for (; n < 1000000; n++) {
            if (inotify_init1(IN_CLOEXEC) < 0) {
                err = errno;
                break;
            }
        }
        printf("inotify %d errno %d\n", n, err);
        fflush(stdout);
        ready(argv[2]);
        sleep((unsigned)atoi(argv[3]));
        return 0;
    }
    if (argc >= 5 && !strcmp(argv[1], "locks")) {
        int fd = open(argv[2], O_RDONLY);
        if (fd < 0) {
            perror("open");
            return 2;
        }
        say("flock_sh", flock(fd, LOCK_SH | LOCK_NB));
        say("flock_ex", flock(fd, LOCK_EX | LOCK_NB));
        struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        say("setlk", fcntl(fd, F_SETLK, &fl));
        struct flock ofd = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
        say("ofd", fcntl(fd, F_OFD_SETLK, &ofd));
        ready(argv[3]);
        sleep((unsigned)atoi(argv[4]));
        return 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "wait")) {
        int fd = open(argv[2], O_RDWR);
        int fd2 = open(argv[2], O_RDWR);
        if (fd < 0 || fd2 < 0) {
            perror("open");
            return 2;
        }
        say("flock", flock(fd, LOCK_EX));
        flock(fd, LOCK_UN);
        struct flock ofd = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        say("ofd", fcntl(fd2, F_OFD_SETLKW, &ofd));
        return 0;
    }
    fprintf(stderr, "usage: res_hold inotify|locks|wait ...\n");
    return 2;
}

/* Filesystem operations the confinement must refuse: ./fsops OP ARGS. Prints the result
   and errno of the operation. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *op = argv[1];
    long r = -2;
    errno = 0;
    if (!strcmp(op, "write")) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
        r = fd < 0 ? -1 : write(fd, "pwned\n", 6);
    } else if (!strcmp(op, "link")) {
        r = link(argv[2], argv[3]);
    } else if (!strcmp(op, "mknod")) {
        r = mknod(argv[2], S_IFBLK | 0600, makedev(8, 0));
    } else if (!strcmp(op, "openat2")) {
        struct open_how how;
        memset(&how, 0, sizeof how);
        how.flags = O_WRONLY | O_CREAT;
        how.mode = 0644;
        how.resolve = argc > 3 ? RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH : 0;
        r = syscall(SYS_openat2, AT_FDCWD, argv[2], &how, sizeof how);
    } else if (!strcmp(op, "truncate")) {
        r = truncate(argv[2], 0);
    } else if (!strcmp(op, "rename")) {
        r = rename(argv[2], argv[3]);
    } else if (!strcmp(op, "exchange")) {
        r = syscall(SYS_renameat2, AT_FDCWD, argv[2], AT_FDCWD, argv[3], RENAME_EXCHANGE);
    } else if (!strcmp(op, "linkfollow")) {
        r = linkat(AT_FDCWD, argv[2], AT_FDCWD, argv[3], AT_SYMLINK_FOLLOW);
    } else if (!strcmp(op, "tiocsti")) {
        char c = 'x';
        r = ioctl(0, TIOCSTI, &c);
    }
    printf("%s %ld errno %d\n", op, r, r < 0 ? errno : 0);
    return 0;
}

/* Copy /bin/true into a memfd and execveat it: the audit log must name the real
   executable the kernel ran, not a path on disk. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(void) {
    int src = open("/bin/true", O_RDONLY);
    struct stat st;
    fstat(src, &st);
    int mfd = memfd_create("payload", MFD_CLOEXEC);
    sendfile(mfd, src, NULL, st.st_size);
    char *argv[] = {"payload", NULL};
    char *envp[] = {NULL};
    syscall(SYS_execveat, mfd, "", argv, envp, AT_EMPTY_PATH);
    perror("execveat");
    return 1;
}

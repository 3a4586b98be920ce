/* Small calls that every process role uses (the supervisor, the child, the helper);
   nothing here keeps state. */
#include "common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* ztsa_nr.h is the table Python reads: it must be the kernel's, for the architecture
   compiled for (the calls only x86_64 has are -1 on aarch64, and unknown to its libc) */
#define SAME_NR(name) _Static_assert(ZTSA_NR_##name == SYS_##name, #name)
SAME_NR(truncate); SAME_NR(fchown); SAME_NR(setxattr); SAME_NR(lsetxattr);
SAME_NR(fsetxattr); SAME_NR(removexattr); SAME_NR(lremovexattr); SAME_NR(fremovexattr);
SAME_NR(fchownat); SAME_NR(unlinkat); SAME_NR(utimensat);
SAME_NR(ioctl); SAME_NR(socket); SAME_NR(connect); SAME_NR(sendto);
SAME_NR(setsockopt); SAME_NR(listen);
SAME_NR(sendmsg); SAME_NR(bind); SAME_NR(clone); SAME_NR(execve); SAME_NR(fcntl);
SAME_NR(flock); SAME_NR(umask); SAME_NR(ptrace); SAME_NR(prctl); SAME_NR(openat);
SAME_NR(mkdirat); SAME_NR(mknodat); SAME_NR(renameat); SAME_NR(linkat); SAME_NR(symlinkat);
SAME_NR(sendmmsg); SAME_NR(process_vm_readv); SAME_NR(process_vm_writev);
SAME_NR(renameat2); SAME_NR(seccomp); SAME_NR(execveat); SAME_NR(add_key);
SAME_NR(request_key); SAME_NR(keyctl); SAME_NR(fchmod); SAME_NR(fchmodat);
SAME_NR(setpriority); SAME_NR(sched_setparam); SAME_NR(sched_setscheduler);
SAME_NR(sched_setaffinity); SAME_NR(ioprio_set); SAME_NR(prlimit64); SAME_NR(sched_setattr);
#define X86_64_ONLY(X)                                                                      \
    X(open) X(creat) X(mkdir) X(rmdir) X(link) X(unlink) X(symlink) X(rename) X(mknod)      \
    X(chmod) X(chown) X(lchown) X(utime) X(utimes) X(futimesat)
#if defined(__x86_64__)
#define ONLY_NR(name) SAME_NR(name);
#else
#define ONLY_NR(name) _Static_assert(ZTSA_NR_##name == -1, #name);
#if defined(SYS_open) || defined(SYS_mkdir) || defined(SYS_rename) || defined(SYS_chmod)
#error "this libc has the old calls: ztsa_nr.h's aarch64 column lacks them"
#endif
#endif
X86_64_ONLY(ONLY_NR)
#undef ONLY_NR
#ifdef SYS_io_uring_setup
SAME_NR(io_uring_setup); SAME_NR(io_uring_enter); SAME_NR(io_uring_register);
#endif
#ifdef SYS_clone3
SAME_NR(clone3);
#endif
#ifdef SYS_openat2
SAME_NR(openat2);
#endif
#ifdef SYS_fchmodat2
SAME_NR(fchmodat2);
#endif
#ifdef SYS_file_setattr
SAME_NR(file_getattr); SAME_NR(file_setattr);
#endif

int ztsa_pidfd_getfd(int tid, int fd) {
    int pidfd = (int)syscall(SYS_pidfd_open, tid, PIDFD_THREAD);
    if (pidfd < 0)
        return -errno;
    int dup = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
    int e = errno;
    close(pidfd);
    return dup < 0 ? -e : dup;
}

/* The start of a small /proc file, NUL-terminated; 0 when unreadable. */
int read_proc(const char *path, char *buf, size_t size) {
    return read_proc_at(AT_FDCWD, path, buf, size);
}

int read_proc_at(int dirfd, const char *path, char *buf, size_t size) {
    int fd = openat(dirfd, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, size - 1);
    close(fd);
    buf[n > 0 ? n : 0] = 0;
    return n > 0;
}

long proc_status_field(int proc, int pid, const char *field, int base, long fallback) {
    char where[64], buf[2048], key[32];
    snprintf(where, sizeof where, "%s%d/status", proc == AT_FDCWD ? "/proc/" : "", pid);
    int n = snprintf(key, sizeof key, "\n%s:", field);
    if (!read_proc_at(proc, where, buf, sizeof buf))
        return fallback;
    char *line = strstr(buf, key);
    return line ? strtol(line + n, NULL, base) : fallback;
}

/* Close every fd from 3 up but those in keep and more (-1 entries ignored), the gaps
   between them a range at a time (one close_range each, not one close per number). */
void close_all_but(const int *keep, int n, const int *more, int n_more) {
    int lo = 3;
    for (;;) {
        int next = -1; /* the lowest fd kept at or above lo */
        for (int i = 0; i < n + n_more; i++) {
            int fd = i < n ? keep[i] : more[i - n];
            if (fd >= lo && (next < 0 || fd < next))
                next = fd;
        }
        unsigned int last = next < 0 ? ~0U : (unsigned int)next - 1;
        if (next != lo && syscall(SYS_close_range, (unsigned int)lo, last, 0) < 0) {
            /* before Linux 5.9: one by one, as far as 1024 */
            for (int fd = lo; fd <= (next < 0 ? 1023 : next - 1); fd++)
                close(fd);
        }
        if (next < 0)
            break;
        lo = next + 1;
    }
}

/* Raw syscalls the filter must stop: ./rawsys NAME. Prints the result and errno; the
   foreign-architecture ones should be killed (SIGSYS) before printing. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
    const char *what = argv[1];
    long r = -2;
    errno = 0;
    if (!strcmp(what, "io_uring_setup")) {
        char params[120] = {0};
        r = syscall(425, 8, params);
    } else if (!strcmp(what, "clone_untraced")) {
        r = syscall(SYS_clone, CLONE_UNTRACED | SIGCHLD, 0, 0, 0, 0);
        if (r == 0)
            _exit(0);
    } else if (!strcmp(what, "clone3")) {
        struct clone_args ca;
        memset(&ca, 0, sizeof ca);
        ca.exit_signal = SIGCHLD;
        r = syscall(435, &ca, sizeof ca);
        if (r == 0)
            _exit(0);
    } else if (!strcmp(what, "int80")) {
        /* i386 socketcall(SYS_SOCKET, ...) through the 32-bit entry point */
        long nr = 102;
        asm volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(1), "c"(0) : "memory");
    } else if (!strcmp(what, "x32")) {
        r = syscall(0x40000000 | 41, 2, 1, 0);
    } else if (!strcmp(what, "seccomp")) {
        r = syscall(317, 1 /* SET_MODE_FILTER */, 0, NULL);
    } else if (!strcmp(what, "prctl_seccomp")) {
        r = prctl(PR_SET_SECCOMP, 2, 0, 0, 0);
    } else if (!strcmp(what, "traceme")) {
        r = ptrace(PTRACE_TRACEME, 0, 0, 0);
    } else if (!strcmp(what, "attach_parent")) {
        r = ptrace(PTRACE_ATTACH, getppid(), 0, 0);
    } else if (!strcmp(what, "vm_writev_parent")) {
        char buf[8] = "pwned!!";
        struct iovec l = {buf, 8}, rv = {(void *)0x400000, 8};
        r = process_vm_writev(getppid(), &l, 1, &rv, 1, 0);
    } else if (!strcmp(what, "raw_socket")) {
        r = syscall(SYS_socket, 2, 3 /* SOCK_RAW */, 6);
    } else if (!strcmp(what, "packet_socket")) {
        r = syscall(SYS_socket, 17 /* AF_PACKET */, 3, 0);
    }
    printf("%s %ld errno %d\n", what, r, errno);
    return 0;
}

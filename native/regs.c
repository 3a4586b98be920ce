/* Runs in the supervisor (supervisor.c's stops): a stopped tracee's system call as its
   registers hold it, per architecture: the number, the six arguments, and the answer
   given in place of the call. Nothing here keeps state.

   x86_64: PTRACE_GETREGS/SETREGS; the number in orig_rax, the arguments in rdi, rsi,
   rdx, r10, r8, r9; a call is skipped with orig_rax -1 and its result put in rax.
   aarch64: PTRACE_GETREGSET/SETREGSET of NT_PRSTATUS (the kernel's user_pt_regs, which
   <sys/user.h> calls user_regs_struct); the number in x8, the arguments in x0-x5; a
   call is skipped by setting the number the kernel runs to -1 (NT_ARM_SYSTEM_CALL: x8
   alone is not read back) with its result in x0, which at a syscall stop still holds
   the first argument, so it is always written. */
#include "common.h"

#include <elf.h>
#include <errno.h>
#include <sys/ptrace.h>
#include <sys/uio.h>

#ifndef NT_ARM_SYSTEM_CALL
#define NT_ARM_SYSTEM_CALL 0x404
#endif
#define ERESTARTSYS_ 512
#define ERESTARTNOINTR_ 513

int regs_get(int pid, struct ztsa_regs *r) {
#if defined(__x86_64__)
    if (ptrace(PTRACE_GETREGS, pid, 0, &r->r) < 0)
        return -errno;
#else
    struct iovec io = {&r->r, sizeof r->r};
    if (ptrace(PTRACE_GETREGSET, pid, (void *)NT_PRSTATUS, &io) < 0)
        return -errno;
#endif
    return 0;
}

static int regs_set(int pid, struct ztsa_regs *r) {
#if defined(__x86_64__)
    return ptrace(PTRACE_SETREGS, pid, 0, &r->r) < 0 ? -errno : 0;
#else
    struct iovec io = {&r->r, sizeof r->r};
    return ptrace(PTRACE_SETREGSET, pid, (void *)NT_PRSTATUS, &io) < 0 ? -errno : 0;
#endif
}

long regs_nr(const struct ztsa_regs *r) {
#if defined(__x86_64__)
    return (long)r->r.orig_rax;
#else
    return (long)r->r.regs[8];
#endif
}

unsigned long long regs_arg(const struct ztsa_regs *r, int i) {
#if defined(__x86_64__)
    switch (i) {
    case 0: return r->r.rdi;
    case 1: return r->r.rsi;
    case 2: return r->r.rdx;
    case 3: return r->r.r10;
    case 4: return r->r.r8;
    default: return r->r.r9;
    }
#else
    return r->r.regs[i >= 0 && i < 6 ? i : 5];
#endif
}

int regs_role_arg(const struct ztsa_regs *r, int role, unsigned long long *v) {
    int i = sys_arg(ztsa_sys(regs_nr(r)), role);
    if (i < 0)
        return 0;
    *v = regs_arg(r, i);
    return 1;
}

int regs_skip(int pid, struct ztsa_regs *r, long result) {
#if defined(__x86_64__)
    r->r.orig_rax = (unsigned long long)-1; /* skip the syscall ... */
    r->r.rax = (unsigned long long)result;  /* ... and return this */
    return regs_set(pid, r);
#else
    r->r.regs[0] = (unsigned long long)result;
    int e = regs_set(pid, r);
    if (e)
        return e;
    int none = -1;
    struct iovec io = {&none, sizeof none};
    return ptrace(PTRACE_SETREGSET, pid, (void *)NT_ARM_SYSTEM_CALL, &io) < 0 ? -errno : 0;
#endif
}

int regs_restart_interrupted(int pid, int (*restartable)(long nr)) {
#if defined(__x86_64__)
    struct ztsa_regs r;
    if (regs_get(pid, &r) < 0)
        return 0;
    if ((long long)r.r.rax == -ERESTARTSYS_ && restartable(regs_nr(&r))) {
        r.r.rax = (unsigned long long)-ERESTARTNOINTR_;
        return regs_set(pid, &r) == 0;
    }
    return 0;
#else
    /* arm64 has put x0 back to the first argument and kept -ERESTARTSYS to itself
       before the signal-delivery stop: nothing a tracer sets there changes it */
    (void)pid, (void)restartable;
    return 0;
#endif
}

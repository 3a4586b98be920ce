/* The table of system calls (ztsa_nr.h) as data: for Python (ztsa_syscalls, and
   ztsa_syscalls_of for either architecture's numbers) and for the C of the supervisor
   and the file helper (ztsa_sys, sys_arg); nothing here keeps state. */
#include "common.h"

#include <stddef.h>

#define ZTSA_OP__ ZTSA_OP_OTHER
#define ZTSA_ARG__ ZTSA_ARG_NONE

/* each row's place in the tables */
enum {
#define ROW_INDEX(name, ...) ROW_##name,
    ZTSA_SYSCALLS(ROW_INDEX)
#undef ROW_INDEX
    N_ROWS
};

/* one table per architecture, the same rows in the same places (nr -1: none there) */
#define ROW(arch, name, x86_64, aarch64, op, nofollow, a0, a1, a2, a3, a4, a5)             \
    [ROW_##name] = {arch, #name, ZTSA_OP_##op, nofollow,                                    \
                    {ZTSA_ARG_##a0, ZTSA_ARG_##a1, ZTSA_ARG_##a2, ZTSA_ARG_##a3,            \
                     ZTSA_ARG_##a4, ZTSA_ARG_##a5}},
#define ROW_X86_64(name, x86_64, aarch64, ...) ROW(x86_64, name, x86_64, aarch64, __VA_ARGS__)
#define ROW_AARCH64(name, x86_64, aarch64, ...) ROW(aarch64, name, x86_64, aarch64, __VA_ARGS__)
static const struct ztsa_syscall X86_64_TABLE[N_ROWS] = {ZTSA_SYSCALLS(ROW_X86_64)};
static const struct ztsa_syscall AARCH64_TABLE[N_ROWS] = {ZTSA_SYSCALLS(ROW_AARCH64)};
#undef ROW_X86_64
#undef ROW_AARCH64
#undef ROW
#if defined(__x86_64__)
#define TABLE X86_64_TABLE
#else
#define TABLE AARCH64_TABLE
#endif

/* a number's row, plus one (0: none). A call the architecture lacks has a slot of its
   own past every number (NR_LIMIT and up), which no lookup reaches. */
enum { NR_LIMIT = 512 };
#define BELOW_LIMIT(name, x86_64, aarch64, ...)                                             \
    _Static_assert(ZTSA_NR_OF(x86_64, aarch64) < NR_LIMIT, #name);
ZTSA_SYSCALLS(BELOW_LIMIT)
#undef BELOW_LIMIT
static const unsigned char BY_NR[NR_LIMIT + N_ROWS] = {
#define BY_NR_ROW(name, x86_64, aarch64, ...)                                               \
    [ZTSA_NR_##name < 0 ? NR_LIMIT + ROW_##name : ZTSA_NR_##name] =                        \
        ZTSA_NR_##name < 0 ? 0 : ROW_##name + 1,
    ZTSA_SYSCALLS(BY_NR_ROW)
#undef BY_NR_ROW
};
_Static_assert(N_ROWS < 255, "BY_NR holds a row's place in a byte");

const struct ztsa_syscall *ztsa_syscalls(int *n) {
    *n = N_ROWS;
    return TABLE;
}

const struct ztsa_syscall *ztsa_syscalls_of(unsigned int arch, int *n) {
    *n = N_ROWS;
    return arch == ZTSA_AUDIT_ARCH_X86_64    ? X86_64_TABLE
           : arch == ZTSA_AUDIT_ARCH_AARCH64 ? AARCH64_TABLE
                                             : NULL;
}

unsigned int ztsa_audit_arch(void) {
#if defined(__x86_64__)
    return ZTSA_AUDIT_ARCH_X86_64;
#else
    return ZTSA_AUDIT_ARCH_AARCH64;
#endif
}

const struct ztsa_syscall *ztsa_sys(long nr) {
    if (nr < 0 || nr >= NR_LIMIT || !BY_NR[nr])
        return NULL;
    return &TABLE[BY_NR[nr] - 1];
}

int sys_arg(const struct ztsa_syscall *c, int role) {
    for (int i = 0; c && i < 6; i++)
        if (c->arg[i] == role)
            return i;
    return -1;
}

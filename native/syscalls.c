/* The table of system calls (ztsa_nr.h) as data: for Python (ztsa_syscalls) and for
   the C of the supervisor and the file helper (ztsa_sys, sys_arg); nothing here keeps
   state. */
#include "common.h"

#include <stddef.h>

#define ZTSA_OP__ ZTSA_OP_OTHER
#define ZTSA_ARG__ ZTSA_ARG_NONE

/* each row's place in TABLE */
enum {
#define ROW_INDEX(name, ...) ROW_##name,
    ZTSA_SYSCALLS(ROW_INDEX)
#undef ROW_INDEX
    N_ROWS
};

static const struct ztsa_syscall TABLE[N_ROWS] = {
#define ROW(name, nr, op, nofollow, a0, a1, a2, a3, a4, a5)                                 \
    [ROW_##name] = {nr, #name, ZTSA_OP_##op, nofollow,                                      \
                    {ZTSA_ARG_##a0, ZTSA_ARG_##a1, ZTSA_ARG_##a2, ZTSA_ARG_##a3,            \
                     ZTSA_ARG_##a4, ZTSA_ARG_##a5}},
    ZTSA_SYSCALLS(ROW)
#undef ROW
};

/* a number's row, plus one (0: none), as large as the largest number needs */
static const unsigned char BY_NR[] = {
#define BY_NR_ROW(name, nr, ...) [nr] = ROW_##name + 1,
    ZTSA_SYSCALLS(BY_NR_ROW)
#undef BY_NR_ROW
};
_Static_assert(N_ROWS < 255, "BY_NR holds a row's place in a byte");

const struct ztsa_syscall *ztsa_syscalls(int *n) {
    *n = N_ROWS;
    return TABLE;
}

const struct ztsa_syscall *ztsa_sys(long nr) {
    if (nr < 0 || (size_t)nr >= sizeof BY_NR || !BY_NR[nr])
        return NULL;
    return &TABLE[BY_NR[nr] - 1];
}

int sys_arg(const struct ztsa_syscall *c, int role) {
    for (int i = 0; c && i < 6; i++)
        if (c->arg[i] == role)
            return i;
    return -1;
}

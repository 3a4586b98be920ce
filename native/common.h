/* Declarations every role's files share (not part of the Python interface): the
   system-call numbers and fallbacks, util.c's /proc readers, allow.c's decision, and
   the counters the file helper shares with the supervisor. Each role has its own
   header beside this one: helper.h (the file helper), child.h (the spawned child); the
   supervisor's declarations (supervisor.c) are here. */
#ifndef ZTSA_COMMON_H
#define ZTSA_COMMON_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/user.h>
#include <unistd.h>
#include <linux/seccomp.h>

#include "ztsa_nr.h"
#include "ztsa_native.h"

#ifndef SYS_close_range
#define SYS_close_range 436
#endif
#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif

/* ptrace's request type: glibc's enum, musl's int */
#ifdef __GLIBC__
typedef enum __ptrace_request ztsa_ptrace_req;
#else
typedef int ztsa_ptrace_req;
#endif

/* statx for the mount id, declared here and called raw: glibc 2.28's <sys/stat.h> (the
   manylinux_2_28 floor) declares a struct statx without stx_mnt_id, musl's has no
   STATX_MNT_ID, and glibc before 2.28 no statx at all. The kernel's layout is fixed
   (linux/stat.h: 256 bytes, new fields take the spare space). */
#ifndef SYS_statx
#if defined(__x86_64__)
#define SYS_statx 332
#elif defined(__aarch64__)
#define SYS_statx 291
#endif
#endif
#define ZTSA_STATX_MNT_ID 0x00001000U
#ifndef AT_STATX_DONT_SYNC
#define AT_STATX_DONT_SYNC 0x4000 /* linux/fcntl.h: what the kernel has cached will do */
#endif
struct ztsa_statx {
    unsigned int mask;                  /* stx_mask: what the kernel filled in */
    unsigned char before_mnt_id[140];   /* stx_blksize ... stx_dev_minor */
    unsigned long long mnt_id;          /* stx_mnt_id (Linux 5.8) */
    unsigned char after_mnt_id[104];
};
_Static_assert(sizeof(struct ztsa_statx) == 256, "the kernel's struct statx");
_Static_assert(offsetof(struct ztsa_statx, mnt_id) == 144, "stx_mnt_id's place");
/* the mount id of path from dirfd (flags: AT_*), and 1; 0 when the kernel cannot say */
static inline int ztsa_mount_id(int dirfd, const char *path, int flags,
                                unsigned long long *id) {
    struct ztsa_statx stx = {0};
    if (syscall(SYS_statx, dirfd, path, flags, ZTSA_STATX_MNT_ID, &stx) < 0 ||
        !(stx.mask & ZTSA_STATX_MNT_ID))
        return 0;
    *id = stx.mnt_id;
    return 1;
}

/* Landlock's MAKE_CHAR ... MAKE_SYM rights: what creating a name needs */
#define ZTSA_LL_MAKE (0x7FULL << 6)

/* syscalls.c: the rows of ztsa_nr.h's table. A number's row (NULL: not in the table);
   the index of the first argument of a role (enum ztsa_arg), -1 when the call has none. */
const struct ztsa_syscall *ztsa_sys(long nr);
int sys_arg(const struct ztsa_syscall *c, int role);
/* a name's flags argument: O_*, AT_* or RENAME_* (-1: none) */
static inline int sys_flags_arg(const struct ztsa_syscall *c) {
    int i = sys_arg(c, ZTSA_ARG_OFLAGS);
    i = i >= 0 ? i : sys_arg(c, ZTSA_ARG_ATFLAGS);
    return i >= 0 ? i : sys_arg(c, ZTSA_ARG_RFLAGS);
}
/* the argument naming the directory of PATH, or the descriptor the call acts on */
static inline int sys_dirfd_arg(const struct ztsa_syscall *c) {
    int i = sys_arg(c, ZTSA_ARG_DIRFD);
    return i >= 0 ? i : sys_arg(c, ZTSA_ARG_FD);
}

/* util.c */
int read_proc(const char *path, char *buf, size_t size);
int read_proc_at(int dirfd, const char *path, char *buf, size_t size);
/* A number field ("Tgid", "PPid", "Umask") of pid's status file in the procfs proc (a
   directory fd, or AT_FDCWD for /proc), in base; fallback when it cannot be read. */
long proc_status_field(int proc, int pid, const char *field, int base, long fallback);
void close_all_but(const int *keep, int n, const int *more, int n_more);

/* counters the file helper shares with the supervisor (MAP_SHARED, made at spawn) */
#define ZTSA_FIRST_DENIALS 3
struct ztsa_shared {
    unsigned long denials;  /* name-creating syscalls and connects refused */
    unsigned long connects; /* connects decided */
    unsigned long would;    /* --audit-only: calls the enforced run would have refused */
    int no_pid_max;         /* the PID namespace refused max_procs as pid_max */
    int no_inotify;         /* the tree's inotify limits could not be set */
    /* the first denials, "SYSCALL\x1fWHAT\x1fRULE", for the summary line */
    char first[ZTSA_FIRST_DENIALS][512];
};

/* counters.c: the counters for a spawn, made once when a helper first needs them
   (MAP_SHARED: the child's processes write, the supervisor reads), zeroed each time;
   NULL when there are none (*err: an errno when they could not be made) */
struct ztsa_shared *supervisor_counters(int helper, int *err);
/* counters.c: their memfd (-1: none), for ztsa-ns to map */
int supervisor_counters_fd(void);

/* planwire.c: the plan on the wire, a sealed memfd (-errno), and read back (NULL, *err
   EINVAL: it does not decode, EPROTO: another version, ENOMEM) */
int plan_memfd(const struct ztsa_plan *plan);
struct ztsa_plan *plan_decode(const unsigned char *b, size_t n, int *err);
void plan_free(struct ztsa_plan *plan);

/* regs.c (the supervisor): a stopped tracee's system call in its registers, per
   architecture. regs_get fills r (0 or -errno); regs_nr and regs_arg read the number
   and argument i; regs_role_arg the argument of a role (enum ztsa_arg) by the table: 1
   with it in *v, 0 when the call has none; regs_skip answers result in place of the
   call (0 or -errno); regs_restart_interrupted, at a signal-delivery stop, makes a call
   restartable(nr) says the file helper answers restart after the handler instead of
   failing with EINTR (1: done; x86_64 only). */
struct ztsa_regs {
    struct user_regs_struct r;
};
int regs_get(int pid, struct ztsa_regs *r);
long regs_nr(const struct ztsa_regs *r);
unsigned long long regs_arg(const struct ztsa_regs *r, int i);
int regs_role_arg(const struct ztsa_regs *r, int role, unsigned long long *v);
int regs_skip(int pid, struct ztsa_regs *r, long result);
int regs_restart_interrupted(int pid, int (*restartable)(long nr));

/* allow.c (the tracer's and the helper's decisions): ztsa_unix_open with the /proc to
   read the caller's cwd from (proc: a dirfd of a procfs with the caller's pid; -1 for
   /proc) */
int unix_open_at(int proc, int pid, const char *path, unsigned int len, char *real,
                 unsigned int size);
int ztsa_may_use(const struct ztsa_allow *a, int id); /* a rule for some programs only */
/* paths.c: how a path names the caller itself: 0 not, else rest is beneath the
   caller's /proc directory, to follow as a magic link (fd/N) or not (a pure function of
   the path: the tracer's allow.c reads it too) */
enum { HELPER_OWN_FD = 1, HELPER_OWN_BENEATH = 2 };
int helper_own_path(const char *path, char *rest, size_t size);

#endif

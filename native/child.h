/* The spawned child's files (child.c, mounts.c, resources.c, landlock.c, netns.c):
   what runs between ztsa's fork and CMD's exec, or the helper's loop. */
#ifndef ZTSA_CHILD_H
#define ZTSA_CHILD_H

#include "common.h"

#ifndef PR_CAP_AMBIENT
#define PR_CAP_AMBIENT 47
#define PR_CAP_AMBIENT_CLEAR_ALL 4
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef MOUNT_ATTR_RDONLY
#define MOUNT_ATTR_RDONLY 0x00000001
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#define WAIT_KILLABLE_RECV (1UL << 5)
#define LL_WRITE_FILE (1ULL << 1)
#define MOUNT_ATTR_NOSUID_ 0x00000002
#define MOUNT_ATTR_NODEV_ 0x00000004
#define KEYCTL_JOIN_SESSION_KEYRING_ 1

struct mount_attr_ {
    unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

#define MAX_GIT_CONFIGS 256

/* The spawned child's context: its copy of the plan (the fork's), the error pipe, the
   counters it shares with the supervisor (NULL: none), the workspace's git configs
   opened for the helper, and, for the helper as pid 1 of a PID namespace, the host's
   /proc (-1: none; so that the log names host pids as every other line does). Built
   whole (child.c's child_context) before the first step that reads it, then passed to
   each; the helper's pid-1 copy adds its host /proc before it is passed on. */
struct child {
    const struct ztsa_plan *plan;
    int efd;
    struct ztsa_shared *shared;
    int host_proc;
    int git_config_fds[MAX_GIT_CONFIGS];
    int n_git_config_fds;
};

/* landlock.c (in the child) */
int restrict_beneath(unsigned long long handled, int *fds, const unsigned long long *rights,
                     int n, unsigned long long scoped);
int apply_landlock(const char *const *paths, const unsigned long long *rights, int n,
                   unsigned long long handled, unsigned long long scoped, int read_fd);
int restrict_scope(unsigned long long scoped);

/* netns.c: CMD's network namespace and ztsa's DNS sockets in it (UDP4, TCP4, UDP6,
   TCP6, a sock_diag socket), before it drops its capabilities */
int netns_enter(int socks[ZTSA_NET_SOCKS]);
/* relayproc.c: in CMD, in its new network namespace, before it drops its capabilities:
   the relay (the helper's child); the helper's end of its channel, or -errno */
int relay_spawn(const struct ztsa_plan *plan);

/* mounts.c: the child's mount namespace (read-only paths, the read-only system, the
   homes hidden, denied paths hidden) and, with a PID namespace, the tree's /proc and
   IPC limits; each 0 or -errno (tree_mounts reports its own failure on efd) */
int write_file(const char *path, const char *text);
int protect_mounts(int userns, const char *const *ro_paths, int n_ro);
int system_readonly(const struct child *c);
int hide_homes(const struct child *c);
int hide_denied(const struct child *c);
void tree_mounts(const struct child *c);
/* resources.c: the private HOME and TMPDIR in a bounded tmpfs; the user namespace's own
   inotify limits. 0 or -errno */
int private_tmpfs(const struct child *c);
int inotify_limits(const struct child *c);
int own_userns(void); /* 0; -errno: none made; +errno: made, unusable */

/* child.c: report the failed step on the error pipe and leave */
void fail_at(int err_fd, int step, int err);
/* child.c: the child's set-up by the plan, up to CMD's exec or the helper's loop (never
   returns): in the fork's child, or in ztsa-ns with the plan it decoded */
void child_setup(const struct ztsa_plan *plan, int efd, struct ztsa_shared *shared);

/* nsexec.c: the exec of ztsa-ns (ns_prepare and ns_release in the supervisor, ns_exec
   in the fork's child); 0 or -errno */
struct ns_exec {
    int ns_fd;    /* ztsa-ns, opened before the fork (O_PATH) */
    int plan_fd;  /* the plan, a sealed memfd (planwire.c) */
    char num[3][16];
    const char *argv[8];
};
int ns_prepare(const struct ztsa_plan *plan, const char *ns, int efd, struct ns_exec *x);
void ns_release(struct ns_exec *x);
void ns_exec(const struct ztsa_plan *plan, const struct ns_exec *x, int efd);

#endif

/* Declarations shared between the native files (not part of the Python interface). */
#ifndef ZTSA_INTERNAL_H
#define ZTSA_INTERNAL_H

#define _GNU_SOURCE
#include <fcntl.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>
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

/* Landlock's MAKE_CHAR ... MAKE_SYM rights: what creating a name needs */
#define ZTSA_LL_MAKE (0x7FULL << 6)

/* util.c */
int read_proc(const char *path, char *buf, size_t size);
int read_proc_at(int dirfd, const char *path, char *buf, size_t size);
/* A number field ("Tgid", "PPid", "Umask") of pid's status file in the procfs proc (a
   directory fd, or AT_FDCWD for /proc), in base; fallback when it cannot be read. */
long proc_status_field(int proc, int pid, const char *field, int base, long fallback);
void close_all_but(const int *keep, int n, const int *more, int n_more);

/* landlock.c (in the child) */
int restrict_beneath(unsigned long long handled, int *fds, const unsigned long long *rights,
                     int n, unsigned long long scoped);
int apply_landlock(const char *const *paths, const unsigned long long *rights, int n,
                   unsigned long long handled, unsigned long long scoped, int read_fd);
int restrict_scope(unsigned long long scoped);

/* counters the file helper shares with the supervisor (MAP_SHARED, made at spawn) */
#define ZTSA_FIRST_DENIALS 3
struct ztsa_shared {
    unsigned long denials;  /* name-creating syscalls and connects refused */
    unsigned long connects; /* connects decided */
    unsigned long would;    /* --audit-only: calls the enforced run would have refused */
    int no_pid_max;         /* the PID namespace refused max_procs as pid_max */
    /* the first denials, "SYSCALL\x1fWHAT\x1fRULE", for the summary line */
    char first[ZTSA_FIRST_DENIALS][512];
};
/* helper.c: count a call --audit-only lets through that the enforced run would have
   refused; the count, for helper_may_log */
unsigned long helper_count_would(void);
const struct ztsa_plan *helper_plan(void);
/* audit.c (in the file helper, --audit-only): log req's file-system call when the
   enforced view would have refused it; refuses nothing */
void audit_fs(const struct seccomp_notif *req);
/* audit.c: ",\"enforced\":false" under --audit-only, else "" (for a line's fields) */
const char *audit_unenforced(void);
/* helper.c: note a denial for the summary (the first few only) */
void helper_note_denial(unsigned long count, const char *syscall_name, const char *what,
                        const char *rule);

/* helper.c: the file helper's loop, entered by the child after it forked CMD; never
   returns. root: the workspace (O_PATH). */
void helper_main(const struct ztsa_plan *plan, int lfd, int root, int proc, int host_proc,
                 struct ztsa_shared *shared, const int *net);

/* helper.c, for metadata.c (both run in the file helper) */
int helper_proc(void);
int helper_read_string(pid_t pid, unsigned long long addr, char *buf, size_t size);
int helper_dirfd(pid_t pid, long long fd, const char *path);
void helper_close_dirfd(int fd);
/* how a path names the caller itself: 0 not, else rest is beneath the caller's /proc
   directory, to follow as a magic link (fd/N) or not */
enum { HELPER_OWN_FD = 1, HELPER_OWN_BENEATH = 2 };
int helper_own_path(const char *path, char *rest, size_t size);
void helper_log_denial(pid_t pid, const char *syscall_name, const char *p1, const char *p2,
                       const char *rule);
int helper_still_valid(unsigned long long id);
int helper_caller_root(pid_t pid);
/* gitconfig.c: is new_text a rewrite of a git config whose every added line is a key
   git writes in ordinary work? */
int gitconfig_acceptable(const char *old, size_t old_n, const char *new_text, size_t new_n,
                         const char *gitdir, const char *workspace);
/* child.c: the descriptors of the workspace's git configs, opened for writing before
   the read-only mounts (the helper performs git's own rewrite through them) */
extern int ztsa_git_config_fds[];
extern int ztsa_n_git_config_fds;
/* metadata.c: mode, owner, times, xattrs; write opens, truncate, unlink counted */
const char *meta_call_name(int nr);
long meta_notification(const struct seccomp_notif *req, int *cont);
/* allow.c: ztsa_unix_open with the /proc to read the caller's cwd from (proc: a dirfd of
   a procfs with the caller's pid; -1 for /proc) */
int unix_open_at(int proc, int pid, const char *path, unsigned int len, char *real,
                 unsigned int size);

/* helper.c, for net.c (both run in the file helper) */
void helper_json(const char *in, char *out, size_t size);
int helper_host_pid(pid_t pid);  /* a thread, as the host's /proc numbers it */
int helper_host_tgid(pid_t pid); /* its process */
int helper_tgid(pid_t pid);      /* its process, in the helper's namespace */
int helper_getfd(pid_t pid, int fd); /* pidfd_getfd through a kept pidfd: fd or -errno */
void helper_log_event(const char *event, const char *fields);
unsigned long helper_count_denial(void);
int helper_may_log(unsigned long count); /* under the log's cap of deny lines */
void helper_count_connect(void);
const char *helper_errno_name(int e);
int helper_enter_fd_dir(void); /* cwd: the helper's own /proc/self/fd (0, or -errno) */
void helper_leave_fd_dir(void);

/* net.c: the tree's network (a network namespace of its own), in the helper */
#define NET_UNIX 0x40000001L     /* a Unix socket path: helper.c's connect or bind */
#define NET_DEFER 0x40000002L    /* answered later, when the connection is made */
#define NET_WAIT 0x40000003L     /* made again later, when net_wait_fd is writable */
extern int net_wait_fd;
long net_wait(int fd);
void net_wait_forget(void);
int net_is_host(int fd);
int net_is_local(int version, const unsigned char *a);
int net_signal_pending(pid_t tid); /* a signal it does not block waits for it */
struct pollfd;
struct seccomp_notif;
void net_init(const struct ztsa_plan *plan, int lfd, const int *dns);
long net_notification(const struct seccomp_notif *req);
long net_swap_connect(const struct seccomp_notif *req, int dup, int fd, const void *sa,
                      unsigned int len, const char *rule);
void net_log_allowed(pid_t pid, const char *event, int version, const unsigned char *a,
                     int port, int type, const char *rule, long result);
/* waits.c: the tree's calls that wait, answered later */
int waits_init(int lfd, size_t req_size);
/* after a non-blocking connect of s (r: its result), the tree's now: the answer, or
   NET_DEFER with the wait registered; takes s */
long waits_connect(const struct seccomp_notif *req, int s, long r, int tree_flags, int type,
                   int version, const unsigned char *a, int port, const char *rule);
int waits_connect_fds(struct pollfd *out, int max);
int waits_connect_timeout_ms(void);
void waits_connect_ready(const struct pollfd *fds, int n);
int waits_later(const struct seccomp_notif *req); /* NET_WAIT: 0, or -EAGAIN (full) */
int waits_later_fds(struct pollfd *out, int max, int *timeout);
void waits_later_ready(const struct pollfd *fds, int n);
/* helper.c, for waits.c: decide a notification again and answer it */
void helper_redo(const struct seccomp_notif *req);
int net_unix_decide(pid_t pid, int pathfd, int call, const void *sa, unsigned int len,
                    const char *real, const char **why_text);
/* net.c: --audit-only turns a refused Unix socket (why < 0) into ZTSA_ALLOW_AUDIT, logged */
int net_audit_unix(pid_t pid, int why, const char *real, int call, const char **why_text);
int net_tree_owns_unix(dev_t dev, ino_t ino);
/* a connect, send or deny line of a Unix destination (address: its path or @name) */
void net_log(const char *event, pid_t pid, const char *call, int family, const char *address,
             int type, const char *rule, long result);
/* net.c, for dns.c: the learnt addresses and the shared words */
unsigned long long net_mono_ns(void);
int net_ip_of(const unsigned char *sa, unsigned int len, const unsigned char **a, int *port);
int net_not_public(int version, const unsigned char *a); /* never opened by an answer */
int net_is_resolver(int version, const unsigned char *a);
int net_is_denied(int version, const unsigned char *a); /* a policy's net.deny */
int meta_writable_at(int dirfd, const char *path); /* on a writable mount of the tree's */
int ztsa_may_use(const struct ztsa_allow *a, int id); /* a rule for some programs only */
void net_learn(int version, const unsigned char *a, int rule, unsigned int ttl,
               const char *name);
int net_querier_of(const void *peer, unsigned int len); /* host pid, -1 */
const char *net_rule_spec(int rule);
/* dns.c: ztsa's DNS service for the tree (socks: UDP4, TCP4, UDP6, TCP6) */
void dns_init(const struct ztsa_plan *plan, const int *socks);
int dns_poll_fds(struct pollfd *out, int max);
int dns_timeout_ms(void);
void dns_ready(const struct pollfd *fds, int n);
/* netns.c: CMD's network namespace and ztsa's DNS sockets in it (UDP4, TCP4, UDP6,
   TCP6, a sock_diag socket), before it drops its capabilities */
int netns_enter(int socks[ZTSA_NET_SOCKS]);

/* creation.c: the helper's view of CMD's second ruleset. make_fds: its directories,
   -1 entries absent (NULL: no second ruleset), read before they are closed. */
void creation_init(const struct ztsa_plan *plan, int root, int proc, const int *make_fds);
int creation_in_caller(pid_t pid, long long dirfd, const char *path);
int creation_may_continue(void);
int creation_protected_name(const char *path);
void creation_forget(void);

#endif

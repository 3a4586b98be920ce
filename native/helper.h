/* The file helper's files: the process the spawned child becomes once it has forked
   CMD (see helper.c). Its state is struct helper, built whole by helper_main before any
   feature starts: given to each handler the loop calls (create, metadata, locks,
   audit-only, the DNS service, the deferred calls, the relay's half), and to the init
   of the features whose calls come from everywhere (the caller, the log, paths, the
   network). */
#ifndef ZTSA_HELPER_H
#define ZTSA_HELPER_H

#include "common.h"

#include <sys/stat.h>

struct pollfd;
struct seccomp_notif;

/* The helper's context: what every feature reads, complete before the first one
   starts, never changed afterwards. */
struct helper {
    const struct ztsa_plan *plan; /* the helper's copy (the fork's): protected paths,
                                     allow table, log fd */
    int lfd;                      /* the listener */
    int root;                     /* the workspace, O_PATH; it never moves during a run */
    int proc;                     /* the /proc whose pids are the notifications' */
    int host_proc;                /* the host's /proc (a PID namespace), else -1 */
    pid_t self;
    struct stat root_st;
    size_t req_size, resp_size;   /* the kernel's sizes of a notification and answer */
    struct ztsa_shared *shared;   /* the counters the supervisor reads */
    const int *git_config_fds;    /* the workspace's git configs, opened by the child */
    int n_git_config_fds;
    const int *net;               /* the DNS service's sockets and sock_diag (netns.c) */
    /* the mutable state of the features the loop serves, each made by its own _new from
       the fields above, before the loop starts; its type is its file's own */
    struct dns *dns;              /* dns.c */
    struct waits *waits;          /* waits.c */
    struct relay *relay;          /* relay.c */
};

/* How the helper answers a notification. */
enum reply_kind {
    REPLY_RESULT,    /* the syscall returns result: 0 or -errno */
    REPLY_FD,        /* an opened file, placed in the caller as the syscall's result */
    REPLY_CONTINUE,  /* the caller's own kernel performs the call */
    REPLY_ELSEWHERE  /* another process (an opener child), or later (waits.c), answers */
};

struct reply {
    enum reply_kind kind;
    long result;
    int fd;
};

#define RESULT(r) ((struct reply){REPLY_RESULT, (r), -1})
#define CONTINUE ((struct reply){REPLY_CONTINUE, 0, -1})
#define ELSEWHERE ((struct reply){REPLY_ELSEWHERE, 0, -1})

struct open_how_ {
    unsigned long long flags, mode, resolve;
};
#define SYS_openat2_ 437
#define RESOLVE_NO_MAGICLINKS_ 0x02
#define RESOLVE_BENEATH_ 0x08
#define RESOLVE_IN_ROOT_ 0x10
#define PROC_SUPER_MAGIC_ 0x9fa0

/* helper.c: the loop, entered by the child after it forked CMD; never returns. root:
   the workspace (O_PATH). */
void helper_main(const struct ztsa_plan *plan, int lfd, int root, int proc, int host_proc,
                 struct ztsa_shared *shared, const int *net, const int *git_config_fds,
                 int n_git_config_fds);
/* send the reply (nothing for REPLY_ELSEWHERE) */
void helper_answer(const struct helper *h, const struct seccomp_notif *req, struct reply r);
/* answer notification id with result (0 or -errno), later (waits.c, relay.c) */
void helper_result(const struct helper *h, unsigned long long id, long result);
/* for waits.c: decide a notification again and answer it */
void helper_redo(const struct helper *h, const struct seccomp_notif *req);
int helper_still_valid(unsigned long long id);

/* caller.c: the caller's memory, descriptors, threads, host pid and umask */
void caller_init(const struct helper *h);
/* n bytes of the caller's memory at addr: 0, or -EFAULT (also for a short read) */
int caller_read(pid_t pid, unsigned long long addr, void *buf, size_t n);
/* a NUL-terminated string of the caller, page by page: 0, -EFAULT or -ENAMETOOLONG */
int caller_read_string(pid_t pid, unsigned long long addr, char *buf, size_t size);
int helper_caller_root(pid_t pid);
int caller_rebase_absolute(pid_t pid, char *path);
int helper_dirfd(pid_t pid, long long fd, const char *path);
void helper_close_dirfd(int fd);
int helper_getfd(pid_t pid, int fd); /* pidfd_getfd through a kept pidfd: fd or -errno */
int helper_host_pid(pid_t pid);  /* a thread, as the host's /proc numbers it */
int helper_host_tgid(pid_t pid); /* its process */
int helper_tgid(pid_t pid);      /* its process, in the helper's namespace */
int helper_proc(void);
int helper_enter_fd_dir(void); /* cwd: the helper's own /proc/self/fd (0, or -errno) */
void helper_leave_fd_dir(void);
void caller_use_umask(pid_t pid);
struct reply umask_notification(const struct seccomp_notif *req);

/* log.c: audit lines, counters, the first denials, stderr */
void log_init(const struct helper *h);
void helper_json(const char *in, char *out, size_t size);
void helper_log_event(const char *event, const char *fields);
void helper_log_denial(pid_t pid, const char *syscall_name, const char *p1, const char *p2,
                       const char *rule);
/* note a denial for the summary (the first few only) and on stderr */
void helper_note_denial(unsigned long count, const char *syscall_name, const char *what,
                        const char *rule);
unsigned long helper_count_denial(void);
/* --audit-only: count a call the enforced run would have refused */
unsigned long helper_count_would(void);
int helper_may_log(unsigned long count); /* under the log's cap of deny lines */
void helper_count_connect(void);
const char *helper_errno_name(int e);

/* paths.c: protected names and where a caller's path leads */
int paths_init(const struct helper *h); /* 0, or -1 without memory for the ancestors */
#define PARENT_PROC (-100000) /* a path reached through a magic link or on procfs */
int paths_is_ancestor(const struct stat *st);
int paths_same_as(int fd, const char *name, int follow, const struct stat *want);
int paths_classify(int parentfd, const char *name);
int paths_open_off_proc(int dirfd, const char *path, int flags);
int paths_open_parent(int dirfd, const char *path, char *name, size_t name_size, int *slash);

/* create.c: the name-creating calls (call: req's row of the table, an op from
   ZTSA_OP_OPEN to ZTSA_OP_RENAME) */
struct reply create_notification(const struct helper *h, const struct seccomp_notif *req,
                                 const struct ztsa_syscall *call);

/* gitconfig.c: git's rewrite of a protected config: the descriptor of the config
   (src_dir, src) replaces, -1 for any other rename */
int gitconfig_rewrite(const struct helper *h, int src_dir, const char *src, int dst_dir,
                      const char *dst);
/* perform it from the helper's own copy of the lock file: 0 or an errno (EACCES:
   refused) */
int gitconfig_write(const struct helper *h, int cfg, int dir, const char *lock);
/* is new_text a rewrite of a git config whose every added line is a key git writes in
   ordinary work? */
int gitconfig_acceptable(const char *old, size_t old_n, const char *new_text, size_t new_n,
                         const char *gitdir, const char *workspace);

/* creation.c: the helper's view of CMD's second ruleset. make_fds: its directories,
   -1 entries absent (NULL: no second ruleset), read before they are closed. */
void creation_init(const struct ztsa_plan *plan, int root, int proc, const int *make_fds);
int creation_in_caller(pid_t pid, long long dirfd, const char *path);
/* --agent's kept state (plan->kept): CMD's pid, its writer (before it may exit); is
   the caller's thread CMD's (the agent's own process, still alive)? is fd on a kept
   entry's mount? must a file there or in a directory on the way to one be the helper's
   to open (the tree's kernel refuses it)? */
void creation_agent(pid_t cmd);
int creation_is_agent(pid_t tid);
int creation_kept(void);
int creation_kept_fd(int fd);
int creation_helper_only(int fd);
int creation_may_continue(void);
int creation_protected_name(const char *path);
void creation_forget(void);

/* metadata.c: mode, owner, times, xattrs; write opens, truncate, unlink counted. meta_op:
   is an op (enum ztsa_op) one of these? c: req's row of the table. */
int meta_op(int op);
/* *cont: 1 the caller's kernel performs it, 2 the result is a file to send (ADDFD) */
long meta_notification(const struct helper *h, const struct seccomp_notif *req,
                       const struct ztsa_syscall *c, int *cont);
int meta_writable_at(int dirfd, const char *path); /* on a writable mount of the tree's */
/* the file fd is: the same, or pid's own mount */
int meta_writable_fd(const struct helper *h, int fd, pid_t pid);

/* locks.c: flock and fcntl's lock requests (ZTSA_OP_LOCK; c: req's row of the table),
   refused on files outside the writable places */
struct reply locks_notification(const struct helper *h, const struct seccomp_notif *req,
                                const struct ztsa_syscall *c);

/* audit.c (--audit-only): log req's file-system call when the enforced view would have
   refused it; refuses nothing */
void audit_fs(const struct helper *h, const struct seccomp_notif *req,
              const struct ztsa_syscall *c);
/* ",\"enforced\":false" under --audit-only, else "" (for a line's fields) */
const char *audit_unenforced(void);
const struct ztsa_plan *helper_plan(void);

/* net.c: the tree's network (a network namespace of its own) */
#define NET_UNIX 0x40000001L     /* a bind to a Unix socket address: unixsock.c's */
#define NET_DEFER 0x40000002L    /* answered later, when the connection is made */
#define NET_WAIT 0x40000003L     /* made again later, when net_wait_take's fd is writable */
/* argument ROLE (enum ztsa_arg) of the notified call, placed by the one table (~0: the
   call has none, a value no descriptor, length or address check lets through) */
static inline unsigned long long req_arg(const struct seccomp_notif *req, int role) {
    int i = sys_arg(ztsa_sys(req->data.nr), role);
    return i >= 0 ? req->data.args[i] : ~0ULL;
}
void net_init(const struct helper *h);
long net_notification(const struct seccomp_notif *req);
long net_wait(int fd);
int net_wait_take(void); /* the NET_WAIT socket (-1: none), now the caller's */
void net_wait_forget(void);
int net_is_host(int fd);
int net_host_socket(int dup);
int net_host_connect(int dup, const void *sa, unsigned int len, long *r);
long net_swap_connect(const struct seccomp_notif *req, int dup, int fd, const void *sa,
                      unsigned int len, const char *rule);
int net_install(const struct seccomp_notif *req, int fd, int target);
int net_sockopt(int fd, int level, int name);
void net_note_querier(int sock, pid_t pid);
void net_note_if_dns_peer(int sock, pid_t pid);
int net_querier_of(const void *peer, unsigned int len); /* host pid, -1 */
int net_decide_ip(pid_t pid, int version, const unsigned char *a, int port,
                  const unsigned char *sa, unsigned int len, int call, int type,
                  char *rule_text, size_t size);
/* the last net_decide_ip allowed a learnt address whose TCP connection is judged by its
   first bytes: how many dns_names entries learnt it there (*rules), else -1 */
int net_judged(const int **rules);
/* relay.c: the name checked at the connection, the helper's half (h->relay) */
struct relay *relay_new(const struct helper *h); /* NULL: no memory */
long relay_connect(const struct helper *h, const struct seccomp_notif *req, int dup,
                   const void *sa, unsigned int len,
                   int version, const unsigned char *a, int port, const int *rules,
                   int n_rules, const char *rule);
int relay_fds(const struct helper *h, struct pollfd *out, int max);
int relay_timeout_ms(const struct helper *h);
void relay_ready(const struct helper *h, const struct pollfd *fds, int n);
/* netaddr.c: where an address may go, and the learnt addresses */
void netaddr_init(const struct helper *h);
unsigned long long net_mono_ns(void);
int net_is_loopback(int version, const unsigned char *a);
int net_is_local(int version, const unsigned char *a);
int net_ip_of(const unsigned char *sa, unsigned int len, const unsigned char **a, int *port);
int net_not_public(int version, const unsigned char *a); /* never opened by an answer */
int net_is_resolver(int version, const unsigned char *a);
int net_is_denied(int version, const unsigned char *a); /* a policy's net.deny */
void net_learn(int version, const unsigned char *a, int rule, unsigned int ttl,
               const char *name);
const char *net_caller_exe(void); /* the program net_decide_ip read, "" none */
const char *net_rule_spec(int rule);
/* netlog.c: the network's lines */
void netlog_init(const struct helper *h);
void net_log(const char *event, pid_t pid, const char *call, int family, const char *address,
             int type, const char *rule, long result);
void net_log_allowed(pid_t pid, const char *event, int version, const unsigned char *a,
                     int port, int type, const char *rule, long result);
/* A destination no rule allows: counted, logged and refused (-EPERM); not enforced:
   counted and logged as what the enforced run would have refused */
long net_deny(pid_t pid, const char *call, int version, const unsigned char *a, int port,
              int type, int enforced);
/* --audit-only: a destination no rule allows is logged as refused and then allowed (1,
   rule set), unless a policy denies it (0) */
int net_audit(pid_t pid, const char *call, int version, const unsigned char *a, int port,
              int type, char *rule, size_t size);
/* netsend.c: sendto, sendmsg, sendmmsg */
long net_send(const struct seccomp_notif *req);
/* netbind.c: bind and listen of IP sockets (--allow-listen) */
void netbind_init(const struct helper *h);
long net_bind(const struct seccomp_notif *req);
long net_listen(const struct seccomp_notif *req);
int net_host_listener_is_ours(int type, int version, const unsigned char *a, int port);
/* netdiag.c: sock_diag in the tree's namespace and the host's */
void netdiag_init(const struct helper *h);
int net_tree_owns_unix(dev_t dev, ino_t ino);
int net_tree_listens(int type, int port);
int net_listens_on_host(int type, int version, const unsigned char *a, int port,
                        const ino_t *inodes, int n_inodes);
/* unixsock.c: Unix sockets by path or name */
void unixsock_init(const struct helper *h);
struct reply unixsock_bind(const struct seccomp_notif *req);
long unixsock_connect(const struct seccomp_notif *req, const unsigned char *sa,
                      unsigned int len);
int net_unix_decide(pid_t pid, int pathfd, int call, const void *sa, unsigned int len,
                    const char *real, const char **why_text);
/* --audit-only turns a refused Unix socket (why < 0) into ZTSA_ALLOW_AUDIT, logged */
int net_audit_unix(pid_t pid, int why, const char *real, int call, const char **why_text);

/* waits.c: the tree's calls that wait, answered later (h->waits) */
struct waits *waits_new(const struct helper *h); /* NULL: nothing could be deferred */
/* after a non-blocking connect of s (r: its result), the tree's now: the answer, or
   NET_DEFER with the wait registered; takes s */
long waits_connect(const struct helper *h, const struct seccomp_notif *req, int s, long r,
                   int tree_flags, int type, int version, const unsigned char *a, int port,
                   const char *rule);
int waits_connect_fds(const struct helper *h, struct pollfd *out, int max);
int waits_connect_timeout_ms(const struct helper *h);
void waits_connect_ready(const struct helper *h, const struct pollfd *fds, int n);
/* NET_WAIT: 0, or -EAGAIN (full) */
int waits_later(const struct helper *h, const struct seccomp_notif *req);
int waits_later_fds(const struct helper *h, struct pollfd *out, int max, int *timeout);
void waits_later_ready(const struct helper *h, const struct pollfd *fds, int n);
/* a signal the thread tid does not block is pending: its wait ends (EINTR) */
int waits_signal_pending(const struct helper *h, pid_t tid);

/* dns.c: ztsa's DNS service for the tree (h->dns; h->net: UDP4, TCP4, UDP6, TCP6) */
struct dns *dns_new(const struct helper *h); /* NULL: no memory */
int dns_poll_fds(const struct helper *h, struct pollfd *out, int max);
int dns_timeout_ms(const struct helper *h);
void dns_ready(const struct helper *h, const struct pollfd *fds, int n);
/* dnswire.c: the readers of DNS messages (pure functions of the bytes) */
int dns_parse_question(const unsigned char *m, size_t n, char *name, int *qtype);
int dns_answer_question(const unsigned char *m, size_t n, char *name, int *qtype);
size_t dns_skip_name(const unsigned char *m, size_t n, size_t i);
int dns_read_name(const unsigned char *m, size_t n, size_t i, char *out, size_t size);
/* An answer's record: its owner name at m[owner], its type and TTL, its data
   m[rdata, rdata + rdlen), within the answer. */
struct dns_record {
    size_t owner;
    int type;
    unsigned int ttl;
    size_t rdata, rdlen;
};

typedef int (*dns_record_fn)(const unsigned char *m, size_t n, const struct dns_record *r, void *ctx);
int dns_walk_answer(const unsigned char *m, size_t n, size_t i, int an, dns_record_fn each,
                    void *ctx);
int dns_record_version(const struct dns_record *r); /* 4, 6 (A, AAAA), else 0 */
/* Does the answer name (as an owner or a CNAME's target) a name denied() says is
   denied? Its first such name into which. */
int dns_answer_names_denied(const unsigned char *m, size_t n, size_t i, int an,
                            int (*denied)(const char *name, const void *arg),
                            const void *arg, char *which, size_t size);

#endif

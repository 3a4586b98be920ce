/* The interface of ztsa's native module (ztsa._native, built with cffi): what Python
   calls. build_native.py passes this file to cffi's cdef, so it holds declarations
   only (the table of system calls, ztsa_nr.h, a macro, reaches Python through
   ztsa_syscalls()). Which process runs what is said at the top of each .c file; the
   files are split by role, then by feature (a header per role: common.h, helper.h,
   child.h):
     the spawned child: child.c (its set-up, up to CMD's exec, and the helper's start),
       mounts.c (its mount, IPC and PID namespaces), landlock.c (also the supervisor's
       probe), netns.c (CMD's own network namespace and ztsa's DNS sockets in it)
     the file helper: helper.c (its context, loop and dispatch), caller.c (the caller's
       memory, descriptors, threads, host pid, umask), log.c (audit lines, counters),
       paths.c (protected names, parents opened off /proc), create.c (the creations),
       creation.c (its view of CMD's second Landlock ruleset), metadata.c (mode, owner,
       times, xattrs), gitconfig.c (git's config rewrite), audit.c (--audit-only), the
       network: net.c (its sockets in the tree, connect), netaddr.c (where an address
       may go, learnt addresses), netsend.c, netbind.c, netdiag.c (sock_diag),
       netlog.c, unixsock.c, dns.c and dnswire.c (its DNS service), waits.c (calls
       answered later)
     ztsa's own process: supervisor.c (the tracer's wait loop, its process table, the
       counters the helper shares), regs.c (a stop's system call in the registers of
       x86_64 or aarch64), tracecalls.c (the Python tracer's ptrace, memory
       and socket calls), gitwalk.c (the walk that finds every git repository below a
       directory)
     several: allow.c (the connect/send decision: supervisor and helper), util.c,
       syscalls.c (the table of system calls)
   The entry points at the end of this file call the parsers of what the tree wrote
   (dnswire.c, gitconfig.c, log.c, paths.c) directly, for the tests (tests/native). */

struct ztsa_filter_insn {
    unsigned short code;
    unsigned char jt;
    unsigned char jf;
    unsigned int k;
};

/* ---- the system calls ztsa names (ztsa_nr.h's table, syscalls.c) ---- */

/* What a call does: the helper dispatches on it, the filter and audit-only read it. */
enum ztsa_op {
    ZTSA_OP_OTHER = 0,
    ZTSA_OP_OPEN,        /* open, openat: creates with O_CREAT, writes by its flags */
    ZTSA_OP_CREAT,       /* open(O_CREAT | O_WRONLY | O_TRUNC) */
    ZTSA_OP_MKDIR,
    ZTSA_OP_MKNOD,
    ZTSA_OP_SYMLINK,
    ZTSA_OP_LINK,
    ZTSA_OP_RENAME,
    ZTSA_OP_CHMOD,
    ZTSA_OP_CHOWN,
    ZTSA_OP_UTIME,       /* times as a struct utimbuf */
    ZTSA_OP_UTIMES,      /* as struct timeval[2] */
    ZTSA_OP_UTIMENS,     /* as struct timespec[2] */
    ZTSA_OP_SETXATTR,
    ZTSA_OP_REMOVEXATTR,
    ZTSA_OP_TRUNCATE,
    ZTSA_OP_UNLINK,      /* unlink, unlinkat, rmdir: a name removed */
    ZTSA_OP_UMASK,
    ZTSA_OP_CONNECT,
    ZTSA_OP_BIND,
    ZTSA_OP_SEND,        /* sendto, sendmsg, sendmmsg */
    ZTSA_OP_LISTEN,
    ZTSA_OP_EXEC,
    ZTSA_OP_LOCK         /* flock; fcntl, whose lock requests alone reach the helper */
};

/* The role of an argument. A call names at most two files: (DIRFD, PATH), the one it
   acts on (FD when it names a descriptor instead), and (DIRFD2, PATH2), link's and
   rename's new name; a DIRFD absent means AT_FDCWD. */
enum ztsa_arg {
    ZTSA_ARG_NONE = 0,
    ZTSA_ARG_FD, ZTSA_ARG_DIRFD, ZTSA_ARG_PATH, ZTSA_ARG_DIRFD2, ZTSA_ARG_PATH2,
    ZTSA_ARG_TARGET,     /* a symlink's contents */
    ZTSA_ARG_OFLAGS,     /* O_* */
    ZTSA_ARG_ATFLAGS,    /* AT_* */
    ZTSA_ARG_RFLAGS,     /* RENAME_* */
    ZTSA_ARG_MODE, ZTSA_ARG_DEV, ZTSA_ARG_UID, ZTSA_ARG_GID,
    ZTSA_ARG_TIMES,      /* a pointer to two times (enum ztsa_op says which struct) */
    ZTSA_ARG_XNAME, ZTSA_ARG_XVALUE, ZTSA_ARG_XSIZE, ZTSA_ARG_XFLAGS,
    ZTSA_ARG_LENGTH,     /* truncate's */
    ZTSA_ARG_ADDR, ZTSA_ARG_ADDRLEN, /* a socket address in the caller's memory */
    ZTSA_ARG_BUF, ZTSA_ARG_LEN, ZTSA_ARG_MSGFLAGS,
    ZTSA_ARG_MSGHDR, ZTSA_ARG_MMSGHDR, ZTSA_ARG_VLEN, ZTSA_ARG_BACKLOG,
    ZTSA_ARG_DOMAIN, ZTSA_ARG_TYPE, ZTSA_ARG_PROTOCOL,
    ZTSA_ARG_LEVEL, ZTSA_ARG_OPTNAME, ZTSA_ARG_OPTVAL, ZTSA_ARG_OPTLEN,
    ZTSA_ARG_REQUEST,    /* ioctl's */
    ZTSA_ARG_FCMD,       /* fcntl's */
    ZTSA_ARG_CMDARG,     /* ioctl's and fcntl's argument */
    ZTSA_ARG_OPTION,     /* prctl's */
    ZTSA_ARG_WHICH,      /* setpriority's and ioprio_set's kind of target */
    ZTSA_ARG_PID,        /* the process (or thread) the call changes; 0: the caller */
    ZTSA_ARG_CLONEFLAGS, ZTSA_ARG_RESOURCE, ZTSA_ARG_NEWLIMIT, ZTSA_ARG_ARGV, ZTSA_ARG_ENVP,
    ZTSA_ARG_LOCKOP      /* flock's: LOCK_SH, LOCK_EX, LOCK_UN, with LOCK_NB */
};

/* One row of the table. */
struct ztsa_syscall {
    int nr;
    const char *name;
    int op;               /* enum ztsa_op */
    int nofollow;         /* acts on its (new) name's last component itself */
    unsigned char arg[6]; /* enum ztsa_arg of each argument */
};

/* The table of the architecture this is compiled for, *n rows, in the order of their
   x86_64 numbers (nr -1: a call this architecture lacks); ztsa_syscalls_of gives an
   architecture's by its AUDIT_ARCH value (the filter's tests build aarch64's program on
   x86_64), NULL for one ztsa does not know; ztsa_audit_arch, the AUDIT_ARCH value
   seccomp reports for this one's system calls. */
#define ZTSA_AUDIT_ARCH_X86_64 0xC000003E
#define ZTSA_AUDIT_ARCH_AARCH64 0xC00000B7
const struct ztsa_syscall *ztsa_syscalls(int *n);
const struct ztsa_syscall *ztsa_syscalls_of(unsigned int arch, int *n);
unsigned int ztsa_audit_arch(void);

/* ---- the allow table and the one connect/send decision (allow.c) ---- */

/* An address rule: version 4 or 6, network and mask in network byte order (the first 4
   bytes for IPv4), port 0 for any; id names the rule for the caller (ZTSA_RULE_DNS: a
   resolver on port 53). */
struct ztsa_net_rule {
    int version;
    unsigned char net[16];
    unsigned char mask[16];
    int port;
    int id;
};
enum { ZTSA_RULE_DNS = -2 };

struct ztsa_allow {
    const struct ztsa_net_rule *net;
    int n_net;
    const char *const *unix_paths; /* --allow-unix: resolved paths, "@name" abstract */
    int n_unix;
    const char *workspace;         /* resolved */
    /* a policy's rules per program: programs[id] lists the executables (each ends with
       a NUL, the list with an empty one) that rule id is for; NULL: any program. exe:
       the caller's (/proc/PID/exe), NULL when unknown: then no listed rule matches */
    const char *const *programs;
    int n_programs;
    const char *exe;
};

enum ztsa_call { ZTSA_CALL_CONNECT = 0, ZTSA_CALL_SEND = 1 };

/* Why a destination is allowed (> 0) or denied (< 0). */
enum ztsa_why {
    ZTSA_ALLOW_RULE = 1,      /* an address rule: *rule is its id */
    ZTSA_ALLOW_DISCONNECT = 2, /* connect with AF_UNSPEC: dissolves the association */
    ZTSA_ALLOW_PEER = 3,      /* a send whose AF_UNSPEC address the kernel ignores */
    ZTSA_ALLOW_KERNEL = 4,    /* too short to name anything: the kernel refuses it */
    ZTSA_ALLOW_UNIX = 5,      /* an --allow-unix entry: *rule is its index */
    ZTSA_ALLOW_WORKSPACE = 6, /* a Unix socket inside the workspace */
    ZTSA_ALLOW_AUDIT = 7,     /* --audit-only: refused when enforced, logged, let through */
    ZTSA_DENY_NET = -1,       /* an address no rule allows */
    ZTSA_DENY_FAMILY = -2,    /* not AF_INET, AF_INET6, AF_UNIX, or truncated */
    ZTSA_DENY_ABSTRACT = -3,  /* an abstract Unix name not in --allow-unix */
    ZTSA_DENY_UNNAMED = -4,   /* an AF_UNIX address without a path (EINVAL) */
    ZTSA_DENY_OUTSIDE = -5,   /* a Unix socket outside the workspace */
    ZTSA_DENY_UNRESOLVED = -6 /* a Unix path whose real place is not known */
};

/* The decision for a connect or send with the sockaddr sa (len bytes, the caller's own
   copy) on a socket of family domain (SO_DOMAIN; read only for AF_UNSPEC sends).
   unix_real: where an AF_UNIX path really is (ztsa_unix_open), else NULL. */
int ztsa_decide(const struct ztsa_allow *allow, int call, int domain, const void *addr,
                unsigned int len, const char *unix_real, int *rule);

/* Open an AF_UNIX socket path once, as pid's connect would resolve it (relative to its
   cwd, following symlinks): an O_PATH descriptor, and its real path in real (size
   bytes). The caller connects through /proc/self/fd/N, the same file. fd or -errno. */
/* the range guard (allow.c): 1 when an address a name's answer gave may open the
   name's rule (not special, not the host's own, in no on-link prefix of onlink) */
int ztsa_learnable(const struct ztsa_net_rule *onlink, int n_onlink, int version,
                   const unsigned char *a);
int ztsa_not_public(int version, const unsigned char *a);
int ztsa_is_local(int version, const unsigned char *a);
int ztsa_unix_open(int pid, const char *path, unsigned int len, char *real,
                   unsigned int size);

/* A name an --allow-net rule names: exactly, or (suffix) every name ending in it
   (".example.com"); its answer's addresses are allowed on port (0: any), and the log
   words them as rule_specs[rule]. */
struct ztsa_dns_name {
    const char *name;
    int suffix;
    int port;
    int rule;
    int deny; /* a policy's net.deny entry: the name is NXDOMAIN, whatever allows it */
    int carries; /* what the rule says its port carries besides TLS and HTTP/1 that name
                    it (ZTSA_CARRIES_*): else a TCP connection's first bytes must name an
                    allowed name (native/relay.c), and UDP is refused */
};
#define ZTSA_CARRIES_RAW 1 /* "/raw": any protocol over TCP, its first bytes unread */
#define ZTSA_CARRIES_UDP 2 /* "/udp": UDP datagrams too (QUIC's names are not read) */

/* the sockets of ztsa's DNS service in the tree's namespace, its sock_diag, and the
   channel to the relay (native/relay.c; -1 without name rules) */
#define ZTSA_NET_SOCKS 6

/* ---- the run plan and the spawn (child.c) ---- */

enum ztsa_ns {
    ZTSA_NS_NONE = 0,  /* no namespace: agent files cannot be mounted read-only */
    ZTSA_NS_MOUNT = 1, /* a mount namespace (root) */
    ZTSA_NS_USER = 2   /* a user and a mount namespace (an ordinary user) */
};

enum ztsa_connects {
    ZTSA_CONNECTS_TRACER = 0, /* ptrace stops decided by the Python tracer (a log, wildcards) */
    ZTSA_CONNECTS_LOOP = 1,   /* ptrace stops, allowed ones performed by the C wait loop */
    ZTSA_CONNECTS_HELPER = 2  /* seccomp notifications, answered by the file helper */
};

/* Every decision about a run, built by ztsa/sandbox/plan.py. */
struct ztsa_plan {
    const char *path;      /* CMD's executable */
    char *const *argv;
    char *const *envp;
    const char *cwd;
    const struct ztsa_filter_insn *filter;
    unsigned short filter_len;
    int drop_caps;         /* started by root: drop every capability but keep_caps */
    unsigned long long keep_caps;
    const int *keep_fds;   /* more fds than stdio for CMD */
    int n_keep_fds;
    /* the first Landlock ruleset: rights[i] beneath write_paths[i] */
    const char *const *write_paths;
    const unsigned long long *write_rights;
    int n_write;
    unsigned long long handled_fs; /* 0: no Landlock */
    int namespaces;        /* enum ztsa_ns */
    const char *const *ro_paths; /* bind-mounted read-only in the mount namespace */
    int n_ro;
    /* the git configs among them: git's own rewrite (config.lock renamed onto config)
       is the helper's to judge and perform */
    const char *const *git_configs;
    int n_git_configs;
    int helper;            /* the file helper answers the name-creating syscalls */
    int log_fd;            /* the helper's deny lines (-1: none) */
    const char *workspace;
    const char *const *protected_paths; /* workspace-relative */
    int n_protected;
    /* CMD's second ruleset: the rights to make names only beneath make (n_make -1:
       none); chain (workspace-relative, "" the root) and closed (absolute) are where
       the tree makes no name itself; cont: O_CREAT opens outside them run in the caller */
    const char *const *make;
    int n_make;
    const char *const *chain;
    int n_chain;
    const char *const *closed;
    int n_closed;
    int cont;
    int connects;          /* enum ztsa_connects */
    struct ztsa_allow allow; /* for the helper (ZTSA_CONNECTS_HELPER) */
    /* the tree's own PID and IPC namespaces (with the helper): the helper is their pid 1,
       and mounts the tree's /proc and /dev/shm; the child stays outside as the keeper */
    int pid_ns;
    unsigned long long scoped; /* Landlock scopes of the tree (LANDLOCK_SCOPE_SIGNAL) */
    const char *run_id;    /* in every line the helper writes to the log */
    /* the real homes (the user's, and $HOME when it differs), each hidden under an
       empty read-only tmpfs, with show[i] bound back, writable where show_rw[i]: at
       show_at[i] instead where that is not NULL (an agent's state in the private home) */
    const char *const *hide_homes;
    int n_hide_homes;
    const char *const *show;
    const char *const *show_at;
    const int *show_rw;
    int n_show;
    /* resources: at most max_procs processes and threads (the PID namespace's pid_max,
       else RLIMIT_NPROC), and max_memory bytes of data a process (RLIMIT_DATA); 0: none */
    int max_procs;
    unsigned long long max_memory;
    /* the tree's own network namespace (with the helper, native/net.c): only loopback
       there; the helper performs what leaves and answers the tree's DNS */
    int netns;
    int tell; /* a refused destination is said on stderr when it is first refused */
    const struct ztsa_dns_name *dns_names; /* the names the rules name */
    int n_dns_names;
    const struct ztsa_net_rule *resolvers; /* upstream, port 53 */
    int n_resolvers;
    const char *const *rule_specs;         /* an address rule's id: its words in the log */
    int n_rule_specs;
    const struct ztsa_net_rule *deny_nets; /* a policy's net.deny: never learnt from DNS */
    int n_deny_nets;
    const struct ztsa_net_rule *onlink;    /* the host's on-link prefixes: never learnt */
    int n_onlink;
    /* --secret values and names: a value in a line the helper writes is its name */
    const char *const *secrets;
    const char *const *secret_names;
    int n_secrets;
    const int *listen_ports;               /* --allow-listen */
    int n_listen;
    /* --audit-only (native/audit.c): nothing refused on the network or in the file
       system but what a policy denies and the agent files; each call the enforced run
       would have refused is logged. audit_paths[i] with audit_kinds[i] (enum
       ztsa_audit_kind) is the enforced view: the longest prefix of a path decides */
    int audit;
    /* a policy's fs.deny_read: after every other mount, an empty read-only tmpfs over
       each directory, an empty read-only file (empty_file) over each other file */
    const char *const *deny_paths;
    int n_deny_paths;
    const char *empty_file;
    /* read-only in the tree's private /dev/shm, before its writable places there: what
       CMD needs and --allow-read names there (plan.shm_view) */
    const char *const *shm_show;
    int n_shm_show;
    const char *const *audit_paths;
    const int *audit_kinds;
    int n_audit;
    /* CMD in a session of its own: ztsa's controlling terminal is none of its stdio, so
       the tree's /dev/tty would be a terminal it was never given (an agent's) */
    int own_session;
    /* per-user resources (mounts.c, child.c): private_dir (the run's HOME and TMPDIR)
       covered by a tmpfs of max_disk bytes holding a copy of what it held (0: none);
       the tree's user namespace's own inotify limits (0: none) */
    const char *private_dir;
    unsigned long long max_disk;
    int inotify_instances;
    int inotify_watches;
    /* --agent (plan.kept): CMD's kept-state layer, kept_handled (0: none) granted as
       kept_rights[i] beneath kept_rules[i], nothing beneath the kept entries (kept, as
       the tree sees them); kept_way are the directories on the way to them, where the
       tree's kernel makes no name. The helper performs what CMD's own thread group
       writes there, and refuses every other process of the tree (creation.c) */
    unsigned long long kept_handled;
    const char *const *kept_rules;
    const unsigned long long *kept_rights;
    int n_kept_rules;
    const char *const *kept;
    int n_kept;
    const char *const *kept_way;
    int n_kept_way;
};

enum ztsa_audit_kind {
    ZTSA_AUDIT_READONLY = 0,   /* readable, not writable (the system) */
    ZTSA_AUDIT_WRITABLE = 1,   /* the writable places */
    ZTSA_AUDIT_HIDDEN = 2,     /* the real home, hidden: not there for the tree */
    ZTSA_AUDIT_UNREADABLE = 3  /* a credential or system secret, and /dev but its few */
};

/* --audit-only: calls the enforced run would have refused (log.c's counter) */
unsigned long ztsa_helper_would_deny(void);

/* Fork a child that waits for the tracer (one byte on *sync_fd), then sets itself up
   by the plan and execs CMD, or stays as CMD's parent, the file helper. ns: ztsa-ns's
   path, which the child execs to do the set-up (the plan on a sealed memfd), or NULL:
   the set-up in the fork itself. Returns the pid or -errno; *err_fd is the read end
   that carries the step and errno of a failed set-up or exec (EOF on success). */
int ztsa_spawn(const struct ztsa_plan *plan, const char *ns, int *sync_fd, int *err_fd);

/* what failed in the child (the high 16 bits of what it writes on the error pipe) */
enum ztsa_step {
    ZTSA_STEP_EXEC = 0,
    ZTSA_STEP_NAMESPACES = 1,
    ZTSA_STEP_CHDIR = 2,
    ZTSA_STEP_CAPS = 3,
    ZTSA_STEP_NNP = 4,
    ZTSA_STEP_LANDLOCK = 5,
    ZTSA_STEP_HELPER = 6,
    ZTSA_STEP_FILTER = 7,
    ZTSA_STEP_INIT = 8,    /* the tree's /proc, /dev/shm and session keyring */
    ZTSA_STEP_NETNS = 9,   /* the tree's network namespace and ztsa's DNS sockets */
    ZTSA_STEP_OOM = 10,    /* the tree first for the OOM killer (oom_score_adj) */
    ZTSA_STEP_NS = 11,     /* the exec of ztsa-ns */
    ZTSA_STEP_PLAN = 12    /* ztsa-ns reading the plan (EPROTO: another version's) */
};

/* What the file helper of the last spawn did, read from memory it shares with the
   supervisor: name-creating syscalls and connects refused, connects decided. */
unsigned long ztsa_helper_denials(void);
unsigned long ztsa_helper_connects(void);
/* the file helper's i-th denial of the last spawn (0-2), "SYSCALL\x1fWHAT\x1fRULE" */
const char *ztsa_helper_first_denial(int i);
/* 1 when the PID namespace could not take max_procs as its pid_max (RLIMIT_NPROC, which
   does not bind root, was set instead). */
int ztsa_procs_unlimited(void);
/* 1 when the tree got no inotify limits of its own (no user namespace of its own could
   take them): its instances and watches count against its user's only. */
int ztsa_inotify_unbounded(void);

/* The Landlock ABI version of the running kernel, or -errno (-ENOSYS, -EOPNOTSUPP). */
int ztsa_landlock_abi(void);

/* What a child of this process can make (with userns: a user namespace first): 0 all
   of it, 1 no user and mount namespace (map ids, private mounts), 2 no PID and IPC
   namespace with a /proc of its own, or -errno. */
int ztsa_ns_probe(int userns);

/* ---- the tracer (supervisor.c) ---- */

/* What ztsa_wait hands to Python. */
enum ztsa_ev {
    ZTSA_EV_SYSCALL = 1, /* tid stopped at a traced syscall for Python to decide */
    ZTSA_EV_EXEC = 2,    /* tid stopped after an exec (logging runs only) */
    ZTSA_EV_EXIT = 3,    /* a process ended: CMD, the helper, or any with logging */
    ZTSA_EV_SIGNAL = 4,  /* a signal came to ztsa (the wake fd is readable) */
    ZTSA_EV_GONE = 5,    /* no process of the tree is left */
    ZTSA_EV_TRACE = 6    /* --trace-syscalls: tid at a system call's entry or exit */
};

struct ztsa_event {
    int kind;   /* enum ztsa_ev */
    int tid;
    int tgid;
    int status; /* the wait status of an exit */
    int role;   /* enum ztsa_role of the process */
};

enum ztsa_role {
    ZTSA_ROLE_TREE = 0,
    ZTSA_ROLE_CMD = 1,
    ZTSA_ROLE_HELPER = 2,
    ZTSA_ROLE_KEEPER = 3 /* with a PID namespace: ztsa's child, parent of the helper */
};

/* A new run: root (seized by the caller) is CMD, or with helper the file helper whose
   first child is CMD, or with init too the keeper, whose first child is the helper, pid
   1 of the tree's PID namespace. log: execs and every exit come to Python. wake_fd: readable when
   a signal came (set_wakeup_fd), -1 for none. tag_exec, tag_net and tag_pid are the
   filter's RET_TRACE data; a tag_pid stop that names a process of the tree resumes here,
   any other comes to Python. syscalls (--trace-syscalls): the tree's processes stop at
   each system call's entry and exit (ZTSA_EV_TRACE). setup_exec: root's first exec is
   ztsa-ns's, neither logged nor counted. 0 or -errno. */
int ztsa_trace_begin(int root, int helper, int init, int log, int wake_fd,
                     unsigned long tag_exec, unsigned long tag_net, unsigned long tag_pid,
                     int syscalls, int setup_exec);
/* The run is over: SIGCHLD's disposition and mask as before. */
void ztsa_trace_end(void);

/* The next event for Python. allow: the C loop performs the connects it allows
   (ZTSA_CONNECTS_LOOP), NULL: every traced syscall comes to Python. 0 or -errno. */
int ztsa_wait(const struct ztsa_allow *allow, struct ztsa_event *ev);

/* Resume a tracee Python was handed stopped. 0 or -errno. */
int ztsa_resume(int tid);

/* The live processes of the tree (thread group ids; the keeper and the helper
   excluded), up to max. Returns how many there are (more than max: call again). */
int ztsa_procs(int *out, int max);

/* The file helper (0: none, or not seen yet). */
int ztsa_trace_helper(void);

/* CMD has exited: from now on the loop kills every new process of the tree at once. */
void ztsa_trace_killing(void);

/* The thread group of a live tid (tid itself when unknown). */
int ztsa_tgid(int tid);

/* Execs seen and connects the C loop performed since ztsa_trace_begin. */
unsigned long ztsa_trace_execs(void);
unsigned long ztsa_trace_connects(void);

long ztsa_ptrace(long request, int pid, unsigned long addr, unsigned long data);

/* The syscall a tracee is stopped in (x86_64: orig_rax and the six argument
   registers; aarch64: x8 and x0-x5; regs.c). 0 or -errno. */
int ztsa_syscall_get(int pid, long *nr, unsigned long long args[6]);
/* At a ZTSA_EV_TRACE stop: *op 1 (entry: *nr, args) or 2 (exit: *rval). 0 or -errno. */
int ztsa_syscall_info(int pid, int *op, long *nr, unsigned long long args[6], long long *rval);

/* Skip the syscall the tracee is stopped in and make it return result. */
int ztsa_syscall_return(int pid, long result);

long ztsa_readmem(int pid, unsigned long long addr, void *buf, unsigned long len);
long ztsa_writemem(int pid, unsigned long long addr, const void *buf, unsigned long len);

/* A duplicate of the tracee thread's file descriptor fd, or -errno. */
int ztsa_pidfd_getfd(int tid, int fd);

int ztsa_set_dumpable(int on);

/* The supervisor's own network calls on a duplicated socket, with raw sockaddr bytes
   (so every family, AF_UNSPEC included, behaves as in the tracee). -errno on error. */
long ztsa_connect(int fd, const void *addr, unsigned int addrlen);
long ztsa_sendto(int fd, const void *buf, unsigned long len, int flags,
                 const void *addr, unsigned int addrlen);
long ztsa_sendmsg1(int fd, const void *name, unsigned int namelen, const void *buf,
                   unsigned long len, int flags);
int ztsa_sockopt_int(int fd, int level, int name);

/* ---- every git repository below a directory (gitwalk.c) ---- */

/* Records ('D' git directory, 'F' a .git that is no directory, 'T' a .ztsa.toml or
   pyproject.toml, 'I' a non-directory named one of names (NUL-separated, an empty name
   ends them), 'P' unlistable, 'Y' a bytecode cache's entry, 'V' a pyvenv.cfg; each a
   letter, a path, a NUL) in *records (ztsa_free it); their length, or -errno. */
long ztsa_git_walk(const char *root, const char *names, char **records);
void ztsa_free(void *p);

/* ---- the readers of what the tree wrote, called directly (tests only) ---- */

/* dns.c: the question of a query the tree sent, as the DNS service reads it: its name
   (lowercase, dotted) into name, its type; the offset past the question, or -1 when it
   is not one question of class IN, without compression, of a host name's bytes. */
int ztsa_dns_parse_query(const unsigned char *m, size_t n, char *name, size_t name_size,
                         int *qtype);
/* dns.c: the name at m[i] (compression followed, through at most 31 pointers),
   lowercased and dot-joined into out (size bytes); 1, or 0 when it cannot be read. */
int ztsa_dns_read_name(const unsigned char *m, size_t n, size_t i, char *out, size_t size);
/* dns.c: an upstream answer as the DNS service reads it: its question (into qname,
   qtype), then its A and AAAA records, the first max of them into addrs (16 bytes each,
   an IPv4 address in the first 4), versions (4 or 6) and ttls. How many there are, or -1
   when m is no response to a question the service forwards. */
int ztsa_dns_answer_addrs(const unsigned char *m, size_t n, char *qname, size_t qname_size,
                          int *qtype, unsigned char *addrs, int *versions, unsigned int *ttls,
                          int max);
/* dns.c: does the answer name deny (an owner or a CNAME's target), as the DNS service
   looks for a name a policy denies? 1 (the name into which), 0, or -1 as above. */
int ztsa_dns_answer_denied(const unsigned char *m, size_t n, const char *deny, char *which,
                           size_t which_size);
/* gitconfig.c: the entries of a git config text as the rewrite guard reads it, each as
   key, value as written, and value as judged ("=" and the value as git reads it, or "!"
   when the guard cannot tell, and refuses to add the entry), each ending with a NUL,
   into out (size bytes). How many, -1 when the guard refuses the text, -2 when out is
   too small. */
int ztsa_gitconfig_entries(const char *text, size_t n, char *out, size_t size);
/* gitconfig.c: the rewrite guard itself (1: every entry new_text adds is one git writes
   in ordinary work). Not reentrant. */
int ztsa_gitconfig_acceptable(const char *old, size_t old_n, const char *new_text,
                              size_t new_n, const char *gitdir, const char *workspace);
/* log.c: a name or path as a log line's JSON string body, into out (size bytes) */
void ztsa_json_escape(const char *in, char *out, size_t size);
/* paths.c: does path name the caller's own /proc entries (1: "fd/N", 2: anything else
   there, its path beneath the caller's directory into rest), 0 not, -1 for size 0 */
int ztsa_own_path(const char *path, char *rest, size_t size);
/* firstflight.c: what a TCP connection's first bytes name, as the relay reads them */
#define ZTSA_FF_MAX 16384
enum ztsa_ff {
    ZTSA_FF_MORE = 0,  /* a prefix of a ClientHello or request head: read on */
    ZTSA_FF_TLS = 1,   /* a whole TLS ClientHello: name is its server name */
    ZTSA_FF_HTTP = 2,  /* a whole HTTP/1 request head: name its Host (or its absolute
                          target's host), name2 the target's host beside a Host, or "" */
    ZTSA_FF_NONE = -1, /* names no host: another protocol, or TLS or HTTP without a name */
    ZTSA_FF_ECH = -2,  /* a ClientHello with Encrypted Client Hello (or ESNI) */
    ZTSA_FF_BAD = -3   /* malformed, ambiguous, or past ZTSA_FF_MAX and still not whole */
};
struct ztsa_ff_result {
    char name[256];
    char name2[256];
    size_t used; /* the bytes the judged ClientHello or head took */
};
int ztsa_first_flight(const unsigned char *b, size_t n, struct ztsa_ff_result *out);
/* firstflight.c: does name match a rule's name (suffix: ".example.com", a wildcard's) */
int ztsa_ff_matches(const char *name, const char *rule, int suffix);
/* planwire.c: a plan's bytes on the wire into out (size bytes): their length (more
   than size: call again), or -errno; and bytes decoded and encoded again (-EINVAL: they
   do not decode, -EPROTO: another version) */
long ztsa_plan_encode(const struct ztsa_plan *plan, unsigned char *out, size_t size);
long ztsa_plan_reencode(const unsigned char *in, size_t n, unsigned char *out, size_t size);

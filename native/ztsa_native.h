/* ztsa's native helper: the only ztsa code that runs in the confined child, and the
   raw syscalls the tracer needs (ptrace, process_vm_readv, pidfd_getfd). */

struct ztsa_filter_insn {
    unsigned short code;
    unsigned char jt;
    unsigned char jf;
    unsigned int k;
};

/* Fork a child that waits for the tracer (one byte on *sync_fd), then: with ns_mode 1
   (a mount namespace) or 2 (a user and a mount namespace) bind-mounts ro_paths
   read-only; drops capabilities (when drop_caps or in a user namespace); sets
   NoNewPrivs; applies Landlock. Without protect it installs the seccomp filter and
   execs path. With protect it forks CMD, which installs the filter with a listener,
   passes the listener back and execs path, and stays as CMD's parent: the file helper
   that answers the filter's user notifications (the name-creating syscalls) for the
   whole tree, refusing the protected_paths (relative to workspace) and logging
   refusals as JSON lines to log_fd (-1: none). Returns the pid or -errno; *sync_fd is
   the write end to release the child, *err_fd the read end that carries the errno of
   a failed step or exec (EOF on success). keep_fds: more fds than stdio for CMD. */
int ztsa_spawn(const char *path, char *const argv[], char *const envp[],
               const char *cwd, const struct ztsa_filter_insn *filter,
               unsigned short filter_len, int drop_caps,
               unsigned long long keep_caps, const int *keep_fds, int n_keep_fds,
               const char *const *write_paths, const unsigned long long *write_rights,
               int n_write_paths, unsigned long long handled_fs,
               int ns_mode, const char *const *ro_paths, int n_ro, int protect, int log_fd,
               const char *workspace, const char *const *protected_paths, int n_protected,
               int *sync_fd, int *err_fd);

/* How many name-creating syscalls (and connects) the file helper of the last spawn
   refused. */
unsigned long ztsa_fs_denials(void);
/* How many connects the file helper of the last spawn decided. */
unsigned long ztsa_helper_connects(void);
/* The --allow-unix entries ("@name" for abstract sockets) and the resolved workspace,
   for connects the file helper answers; set before ztsa_spawn. 0 or -errno. */
int ztsa_net_set_unix(const char *const *entries, int n, const char *workspace);

/* CMD's second Landlock ruleset, set before ztsa_spawn (with protect): the rights to make
   names only beneath the directories `make` (absolute; n_make -1: no second ruleset),
   so that nothing can be created by the tree itself in the `chain` directories
   (workspace-relative; "" is the root) that hold or lead to protected paths, nor in
   the `closed` directories (absolute: those on the way to the workspace from a writable
   root that contains it). cont: the file helper lets an O_CREAT open outside them run
   in the caller. 0 or -errno. */
int ztsa_fs_set_creation(const char *const *make, int n_make, const char *const *chain,
                         int n_chain, const char *const *closed, int n_closed, int cont);

/* The Landlock ABI version of the running kernel, or -errno (-ENOSYS, -EOPNOTSUPP). */
int ztsa_landlock_abi(void);

/* 0 when a child of this process can create a user and a mount namespace, map its ids
   and make its mounts private, or -errno. */
int ztsa_userns_probe(void);

long ztsa_ptrace(long request, int pid, unsigned long addr, unsigned long data);

/* The syscall a tracee is stopped in (x86_64: orig_rax and the six argument
   registers). 0 or -errno. */
int ztsa_syscall_get(int pid, long *nr, unsigned long long args[6]);

/* Skip the syscall the tracee is stopped in and make it return result. */
int ztsa_syscall_return(int pid, long result);


/* An --allow-net rule for the fast path: version 4 or 6, network and mask in network
   byte order (the first 4 bytes for IPv4), port 0 for any. */
struct ztsa_net_allow {
    int version;
    unsigned char net[16];
    unsigned char mask[16];
    int port;
};

/* Enable the fast path with these static rules (n = -1: disable). 0 or -errno. */
int ztsa_fast_set(const struct ztsa_net_allow *rules, int n);

/* How many connects the fast path performed. */
unsigned long ztsa_fast_connects(void);

/* waitpid(-1, __WALL) for the tracer, handling without Python: the seccomp stops of
   execve (tagged tag_exec: the exec event follows) and allowed IPv4/IPv6 connects
   (tagged tag_net), when the fast path is on. Returns the pid of the next event for
   Python, with *status, or -errno. */
int ztsa_wait(int *status, unsigned long tag_exec, unsigned long tag_net);

/* At a signal-delivery stop: if the tracee was waiting for the file helper (a notified
   syscall that returns -ERESTARTSYS), make the syscall restart after the handler
   (-ERESTARTNOINTR) instead of failing with EINTR, which these calls never do without
   ztsa. 1 if changed, 0 if not, -errno. */
int ztsa_restart_interrupted(int pid);
/* Records of the process events the fast path answered (kind, tid, other: the child of
   a fork or vfork, the former tid of an exec, the wait status of an exit), oldest first;
   returns how many were copied into out (max records of 3 ints). */
int ztsa_fast_events(int *out, int max);
/* A new run: nothing of the tree seen yet; helper: the file helper exists (a call
   interrupted while waiting for it restarts). */
void ztsa_fast_reset(int helper);
/* The tracer saw tid's first stop itself. */
void ztsa_fast_started(int tid);
/* The processes whose exits the tracer handles itself: CMD (0 while not known yet: every
   exit then goes to the tracer) and the file helper (0: none). Other exits are recorded
   (kind ZTSA_FAST_EXIT, tid, wait status). */
void ztsa_fast_roles(int main, int helper);
#define ZTSA_FAST_EXIT 256
/* a new process's first stop that came before its parent's fork event (kind, tid, 0) */
#define ZTSA_FAST_NEW 257

long ztsa_readmem(int pid, unsigned long long addr, void *buf, unsigned long len);

/* A duplicate of the tracee thread's file descriptor fd, or -errno. */
int ztsa_pidfd_getfd(int tid, int fd);

int ztsa_set_dumpable(int on);

long ztsa_writemem(int pid, unsigned long long addr, const void *buf, unsigned long len);

/* The supervisor's own network calls on a duplicated socket, with raw sockaddr bytes
   (so every family, AF_UNSPEC included, behaves as in the tracee). -errno on error. */
long ztsa_connect(int fd, const void *addr, unsigned int addrlen);
long ztsa_sendto(int fd, const void *buf, unsigned long len, int flags,
                 const void *addr, unsigned int addrlen);
long ztsa_sendmsg1(int fd, const void *name, unsigned int namelen, const void *buf,
                   unsigned long len, int flags);
int ztsa_sockopt_int(int fd, int level, int name);

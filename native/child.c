/* The spawn. ztsa_spawn runs in the supervisor up to its fork; everything after the
   fork runs in the child, which waits until the tracer has seized it, then execs
   ztsa-ns where it is installed (nsexec.c; ztsa-ns decodes the plan and runs
   child_setup, nsmain.c), else runs child_setup itself. child_setup sets the process
   up by the plan: namespaces and read-only mounts, the working directory,
   capabilities, NoNewPrivs, Landlock. Without a file helper it installs the filter and
   execs CMD. With one it forks CMD (which adds the second Landlock ruleset, installs
   the filter with a listener, hands the listener back and execs) and becomes the
   helper (helper_main in helper.c). The child touches only its own copy of the plan
   (the fork's, or ztsa-ns's decoded one) and the error pipe; it writes nothing the
   supervisor reads but that pipe and the shared counters. Its state is one context
   (struct child, child.h), built whole by child_context and passed to each step.
   ztsa_ns_probe's child tries the namespaces only. */
#include "child.h"
#include "helper.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>


/* In the probe's child: a PID and IPC namespace whose first process can mount a /proc
   of its own (what the run's init does). */
static int pidns_works(void) {
    if (unshare(CLONE_NEWPID | CLONE_NEWIPC) < 0)
        return 0;
    pid_t init = fork();
    if (init < 0)
        return 0;
    if (init == 0)
        _exit(mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0);
    int status;
    while (waitpid(init, &status, 0) < 0)
        if (errno != EINTR)
            return 0;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

int ztsa_ns_probe(int userns) {
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) { /* what the child will do, without mounts (AppArmor may allow the
                       namespace but deny what comes after) */
        if (protect_mounts(userns, NULL, 0) < 0)
            _exit(1);
        _exit(pidns_works() ? 0 : 2);
    }
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

void fail_at(int err_fd, int step, int err) {
    /* async-signal-safe: write the step and errno and leave */
    int code = (step << 16) | (err & 0xFFFF);
    ssize_t ignored = write(err_fd, &code, sizeof code);
    (void)ignored;
    _exit(127);
}

static int drop_capabilities(unsigned long long keep) {
    for (int cap = 0; cap <= 63; cap++) {
        if (keep & (1ULL << cap))
            continue;
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            return -errno;
    }
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
        return -errno;
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    memset(data, 0, sizeof data);
    for (int i = 0; i < 2; i++) {
        unsigned int k = (unsigned int)(keep >> (32 * i));
        data[i].effective = k;
        data[i].permitted = k;
        data[i].inheritable = k;
    }
    if (syscall(SYS_capset, &hdr, data) < 0)
        return -errno;
    return 0;
}

/* CMD starts with the signal state a shell would give it: Python ignores SIGPIPE and
   SIGXFSZ, and an exec keeps what is ignored (`yes | head -1` would never end). */
static void ordinary_signals(void) {
    signal(SIGPIPE, SIG_DFL);
    signal(SIGXFSZ, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
}

/* Capabilities, NoNewPrivs and the first Landlock ruleset: what every process ztsa
   starts for the tree has, the helper included. 0, or the failed step << 16 | errno. */
static int confine_steps(const struct child *c, unsigned long long scoped, int caps) {
    const struct ztsa_plan *plan = c->plan;
    if (caps && (plan->drop_caps || plan->namespaces == ZTSA_NS_USER)) {
        int r = drop_capabilities(plan->keep_caps);
        if (r < 0)
            return ZTSA_STEP_CAPS << 16 | -r;
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        return ZTSA_STEP_NNP << 16 | errno;
    if (plan->handled_fs) {
        /* the helper reads the host's /proc, which the tree cannot reach, to name host
           pids in its log lines */
        int r = apply_landlock(plan->write_paths, plan->write_rights, plan->n_write,
                               plan->handled_fs, scoped, c->host_proc);
        if (r < 0)
            return ZTSA_STEP_LANDLOCK << 16 | -r;
    } else if (scoped) {
        int r = restrict_scope(scoped);
        if (r < 0)
            return ZTSA_STEP_LANDLOCK << 16 | -r;
    }
    return 0;
}

static void confine_self(const struct child *c, unsigned long long scoped) {
    int r = confine_steps(c, scoped, 1);
    if (r)
        fail_at(c->efd, r >> 16, r & 0xFFFF);
}

static void drop_caps_now(const struct child *c) {
    if (c->plan->drop_caps || c->plan->namespaces == ZTSA_NS_USER) {
        int r = drop_capabilities(c->plan->keep_caps);
        if (r < 0)
            fail_at(c->efd, ZTSA_STEP_CAPS, -r);
    }
}

static void exec_cmd(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    int efd = c->efd;
    struct rlimit lim;
    if (plan->max_memory) {
        lim.rlim_cur = lim.rlim_max = (rlim_t)plan->max_memory;
        if (setrlimit(RLIMIT_DATA, &lim) < 0)
            fail_at(efd, ZTSA_STEP_INIT, errno);
    }
    if (plan->max_procs && (!plan->pid_ns || (c->shared && c->shared->no_pid_max))) {
        /* binds the tree's user in its user namespace; root only through pid_max */
        lim.rlim_cur = lim.rlim_max = (rlim_t)plan->max_procs;
        if (setrlimit(RLIMIT_NPROC, &lim) < 0)
            fail_at(efd, ZTSA_STEP_INIT, errno);
    }
    ordinary_signals();
    if (plan->own_session && setsid() < 0)
        fail_at(efd, ZTSA_STEP_INIT, errno);
    execve(plan->path, plan->argv, plan->envp);
    fail_at(efd, ZTSA_STEP_EXEC, errno);
}

/* CMD's kept-state layer (plan.kept): every right it handles beneath each rule's path,
   opened here in the tree's mount namespace, none beneath the agent's kept entries.
   0 or -errno. */
static int kept_layer(const struct ztsa_plan *plan) {
    int *fds = calloc((size_t)plan->n_kept_rules + 1, sizeof *fds);
    if (!fds)
        return -ENOMEM;
    for (int i = 0; i < plan->n_kept_rules; i++)
        fds[i] = open(plan->kept_rules[i], O_PATH | O_NOFOLLOW | O_CLOEXEC);
    int r = restrict_beneath(plan->kept_handled, fds, plan->kept_rights, plan->n_kept_rules, 0);
    free(fds);
    return r;
}

/* The tree's own restrictions, in the first process of the tree (CMD, or the init): the
   second Landlock ruleset, the signal scope, and the filter with its listener, whose
   number goes to the helper (which takes it with pidfd_getfd). */
static void tree_filter(const struct child *c, int sock, int *make_fds, const int *net) {
    const struct ztsa_plan *plan = c->plan;
    int efd = c->efd;
    struct sock_fprog prog = {plan->filter_len, (struct sock_filter *)plan->filter};
    /* the signal scope rides on the second ruleset when there is one (one layer less
       for every check Landlock makes) */
    int r = make_fds ? restrict_beneath(plan->handled_fs & ZTSA_LL_MAKE, make_fds, NULL,
                                        plan->n_make, plan->scoped)
                     : restrict_scope(plan->scoped);
    if (r < 0)
        fail_at(efd, ZTSA_STEP_LANDLOCK, -r);
    /* --agent: the kept-state layer, which the helper (outside it) answers for CMD's
       own writes there */
    if (plan->kept_handled && (r = kept_layer(plan)) < 0)
        fail_at(efd, ZTSA_STEP_LANDLOCK, -r);
    /* WAIT_KILLABLE_RECV (Linux 5.19+): once the helper has taken a call, only a fatal
       signal interrupts the wait, so a call the helper performed is never restarted and
       performed twice (a second mkdir would say EEXIST) */
    int lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                           SECCOMP_FILTER_FLAG_NEW_LISTENER | WAIT_KILLABLE_RECV, &prog);
    if (lfd < 0 && errno == EINVAL)
        lfd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
                           SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
    if (lfd < 0)
        fail_at(efd, ZTSA_STEP_FILTER, errno);
    /* the filter is on: sendmsg would stop in the tracer, so say the number and let the
       helper take the listener, then go on */
    char ack;
    int numbers[1 + ZTSA_NET_SOCKS] = {lfd};
    for (int i = 0; i < ZTSA_NET_SOCKS; i++)
        numbers[1 + i] = net ? net[i] : -1;
    if (write(sock, numbers, sizeof numbers) != sizeof numbers || read(sock, &ack, 1) != 1)
        fail_at(efd, ZTSA_STEP_HELPER, EPIPE);
    close(lfd);
    close(sock);
    for (int i = 0; net && i < ZTSA_NET_SOCKS; i++)
        if (net[i] >= 0)
            close(net[i]);
}

/* Overwrite this process's argument and environment strings: /proc/PID/cmdline is
   readable by the tree, and the init's are ztsa's (its caller's environment too). */
static void scrub_args(void) {
    char buf[1024];
    if (!read_proc("/proc/self/stat", buf, sizeof buf))
        return;
    char *p = strrchr(buf, ')');
    unsigned long arg_start = 0, arg_end = 0, env_start = 0, env_end = 0;
    /* fields 48-51 of stat(5): the 46th space after the ")" that ends field 2 comes
       before field 48 */
    for (int space = 0; p && space < 46; space++)
        p = strchr(p + 1, ' ');
    if (!p || sscanf(p + 1, "%lu %lu %lu %lu", &arg_start, &arg_end, &env_start,
                     &env_end) != 4)
        return;
    /* the kernel's layout: the arguments, then the environment, together on the stack */
    if (arg_start > arg_end || arg_end > env_start || env_start > env_end ||
        env_end - arg_start > (64UL << 20))
        return;
    static const char name[] = "ztsa-helper";
    if (arg_end > arg_start) {
        memset((void *)arg_start, 0, arg_end - arg_start);
        if (arg_end - arg_start >= sizeof name)
            memcpy((void *)arg_start, name, sizeof name);
    }
    if (env_end > env_start)
        memset((void *)env_start, 0, env_end - env_start);
}

/* Started by root (no user namespace of the tree's), in the helper-to-be after its
   mounts and before Landlock (which would refuse the maps): a user namespace of its own,
   for the helper and the tree, whose inotify limits bind the tree, when the plan asks
   for them (resources.c). Where none can be made the run goes on, and the summary says
   the limits are missing. */
static void root_inotify(const struct child *c) {
    if (c->plan->namespaces != ZTSA_NS_MOUNT || c->plan->inotify_instances <= 0)
        return;
    int r = own_userns();
    if (r > 0)
        fail_at(c->efd, ZTSA_STEP_NAMESPACES, r);
    if (r == 0)
        r = inotify_limits(c);
    if (r < 0 && c->shared)
        c->shared->no_inotify = 1;
}

/* In the child (or, with a PID namespace, its child, pid 1 there), after the namespaces:
   fork CMD and become the file helper. */
static void become_helper(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    int efd = c->efd;
    int root = open(plan->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    /* the /proc whose pids are those of the helper's notifications: the tree's own, in
       its PID namespace */
    int proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
    int pair[2];
    if (root < 0 || proc < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
        fail_at(efd, ZTSA_STEP_HELPER, errno);
    /* the directories of CMD's second ruleset, opened once for both: CMD's rules and
       the helper's idea of them are the same files */
    int *make_fds = NULL;
    if (plan->n_make >= 0 && (plan->handled_fs & ZTSA_LL_MAKE) == ZTSA_LL_MAKE) {
        make_fds = calloc((size_t)(plan->n_make ? plan->n_make : 1), sizeof *make_fds);
        if (!make_fds)
            fail_at(efd, ZTSA_STEP_HELPER, ENOMEM);
        for (int i = 0; i < plan->n_make; i++)
            make_fds[i] = open(plan->make[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    }
    /* the helper's too: scopes come with CMD's own. With a network namespace for the
       tree, both keep their capabilities across the fork: CMD makes the namespace */
    int r = confine_steps(c, 0, !plan->netns);
    if (r)
        fail_at(efd, r >> 16, r & 0xFFFF);
    pid_t first = fork();
    if (first < 0)
        fail_at(efd, ZTSA_STEP_HELPER, errno);
    if (first == 0) {
        close(pair[0]);
        close(root);
        close(proc);
        if (plan->log_fd >= 0)
            close(plan->log_fd);
        int net[ZTSA_NET_SOCKS];
        if (plan->netns) {
            int e = netns_enter(net);
            if (e < 0)
                fail_at(efd, ZTSA_STEP_NETNS, -e);
            /* the relay (relay.c), when names are followed: in this namespace, the
               helper's child */
            if (plan->n_dns_names > 0 && (net[5] = relay_spawn(plan)) < 0)
                fail_at(efd, ZTSA_STEP_NETNS, -net[5]);
            drop_caps_now(c);
        }
        tree_filter(c, pair[1], make_fds, plan->netns ? net : NULL);
        exec_cmd(c);
    }
    if (plan->netns)
        drop_caps_now(c);
    close(pair[1]);
    close(efd);
    /* nothing in the tree may take the listener (pidfd_getfd) or read or write the
       helper through /proc: only an attached tracer (ztsa) keeps its access */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        kill(first, SIGKILL);
        _exit(127);
    }
    /* the tree's exits reach the tracer first, then are reaped here automatically; the
       signals that ztsa forwards to the tree must not end the helper */
    signal(SIGCHLD, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int lfd = -1;
    int theirs[1 + ZTSA_NET_SOCKS];
    int net[ZTSA_NET_SOCKS];
    if (read(pair[0], theirs, sizeof theirs) == sizeof theirs)
        lfd = ztsa_pidfd_getfd(first, theirs[0]);
    for (int i = 0; i < ZTSA_NET_SOCKS; i++)
        net[i] = lfd >= 0 && theirs[1 + i] >= 0 ? ztsa_pidfd_getfd(first, theirs[1 + i]) : -1;
    if (lfd < 0 || (plan->netns && (net[0] < 0 || net[1] < 0))) {
        kill(first, SIGKILL); /* no helper, no CMD: its creations could not be checked */
        _exit(127);
    }
    /* CMD waits for this byte: its pid is its own until then (the helper's view of the
       kept state's writer) */
    creation_agent(first);
    ssize_t sent = write(pair[0], "k", 1);
    (void)sent;
    close(pair[0]);
    /* the helper's view of CMD's second ruleset, from the same directories, before the
       descriptors go */
    creation_init(plan, root, proc, make_fds);
    int keep[5 + ZTSA_NET_SOCKS] = {lfd, root, proc, plan->log_fd, c->host_proc};
    for (int i = 0; i < ZTSA_NET_SOCKS; i++)
        keep[5 + i] = net[i];
    close_all_but(keep, 5 + ZTSA_NET_SOCKS, c->git_config_fds, c->n_git_config_fds);
    prctl(PR_SET_NAME, "ztsa-helper", 0, 0, 0); /* for ps and perf, as ztsa's child */
    helper_main(plan, lfd, root, proc, c->host_proc, c->shared, net, c->git_config_fds,
                c->n_git_config_fds);
}

/* With a PID namespace: the child stays outside it, as ztsa's direct child, and forks
   the helper into it as its pid 1 (whose end, or the child's, ends every process of the
   tree). The child only waits for the helper and leaves with its status. */
static void keeper(const struct child *c) {
    if (unshare(CLONE_NEWPID | CLONE_NEWIPC) < 0)
        fail_at(c->efd, ZTSA_STEP_NAMESPACES, errno);
    pid_t helper = fork();
    if (helper < 0)
        fail_at(c->efd, ZTSA_STEP_HELPER, errno);
    if (helper == 0) {
        /* the keeper's end is the helper's (and so the tree's); the keeper itself ends
           with ztsa (its own PR_SET_PDEATHSIG) */
        prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
        /* the helper's context: the child's, with the host's /proc, opened before the
           tree's covers it, so that the log names host pids as every other line does */
        struct child in_pidns = *c;
        in_pidns.host_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
        tree_mounts(&in_pidns);
        root_inotify(&in_pidns);
        scrub_args(); /* the helper is /proc/1 of the tree */
        become_helper(&in_pidns);
    }
    close(c->efd);
    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
    prctl(PR_SET_NAME, "ztsa-keeper", 0, 0, 0);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int status = 0;
    while (waitpid(helper, &status, 0) < 0)
        if (errno != EINTR)
            _exit(127);
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* The child's context, whole: nothing but stdio and the named fds kept for CMD, and
   the workspace's git configs opened for writing before the read-only mounts (the
   helper performs git's own rewrite through them, gitconfig.c). */
static void child_context(struct child *c, const struct ztsa_plan *plan, int efd,
                          struct ztsa_shared *shared) {
    *c = (struct child){.plan = plan, .efd = efd, .shared = shared, .host_proc = -1};
    int keep_here[2] = {efd, plan->helper ? plan->log_fd : -1};
    close_all_but(keep_here, 2, plan->keep_fds, plan->n_keep_fds);
    for (int i = 0; i < plan->n_keep_fds; i++) {
        int flags = fcntl(plan->keep_fds[i], F_GETFD);
        if (flags >= 0)
            fcntl(plan->keep_fds[i], F_SETFD, flags & ~FD_CLOEXEC);
    }
    for (int i = 0; plan->helper && i < plan->n_git_configs && i < MAX_GIT_CONFIGS; i++) {
        int fd = open(plan->git_configs[i], O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
        if (fd >= 0)
            c->git_config_fds[c->n_git_config_fds++] = fd;
    }
}

/* The fork's child, first: it ends with ztsa, and waits until the tracer has seized
   it (so that ztsa-ns's exec, where there is one, is traced too). */
static void child_wait(int sync_fd, pid_t parent) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
        _exit(127);
    char go;
    ssize_t n;
    do {
        n = read(sync_fd, &go, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1)
        _exit(127);
    close(sync_fd);
}

/* The child's set-up, in the order each step needs the one before. */
void child_setup(const struct ztsa_plan *plan, int efd, struct ztsa_shared *shared) {
    /* the first process the kernel's OOM killer takes, should the machine run out of
       memory: the tree's, never the host's (rlimits leave out shared mappings and
       memfds; a cgroup's total, where there is one, is met first) */
    int oom = write_file("/proc/self/oom_score_adj", "1000");
    if (oom < 0)
        fail_at(efd, ZTSA_STEP_OOM, -oom);
    /* nothing but stdio (and the named fds) reaches CMD */
    struct child c; /* the child's own; its helper keeps pointing into it (never returns) */
    child_context(&c, plan, efd, shared);
    if (plan->namespaces != ZTSA_NS_NONE) {
        int r = protect_mounts(plan->namespaces == ZTSA_NS_USER, plan->ro_paths, plan->n_ro);
        /* the user namespace just made is the tree's: its own inotify limits, while the
           child holds its capabilities there (a kernel without them: none) */
        if (r == 0 && plan->namespaces == ZTSA_NS_USER && plan->inotify_instances > 0 &&
            inotify_limits(&c) < 0 && c.shared)
            c.shared->no_inotify = 1;
        if (r == 0)
            r = private_tmpfs(&c);
        if (r == 0 && !plan->audit) /* --audit-only: the system as the caller has it */
            r = system_readonly(&c);
        if (r == 0)
            r = hide_homes(&c);
        if (r == 0)
            r = hide_denied(&c);
        if (r < 0)
            fail_at(efd, ZTSA_STEP_NAMESPACES, -r);
    }
    if (plan->cwd && chdir(plan->cwd) < 0)
        fail_at(efd, ZTSA_STEP_CHDIR, errno);
    if (plan->helper && plan->pid_ns)
        keeper(&c);
    if (plan->helper) {
        root_inotify(&c); /* no /proc of the tree's: -EROFS, said later */
        become_helper(&c);
    }
    /* no helper (and so no /proc of the tree's own): a fresh session keyring all the same,
       so that the caller's keys are not the tree's to list */
    if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING_, NULL) < 0 && errno != ENOSYS)
        fail_at(efd, ZTSA_STEP_INIT, errno);
    confine_self(&c, plan->scoped); /* no helper: the first ruleset is the tree's */
    struct sock_fprog prog = {plan->filter_len, (struct sock_filter *)plan->filter};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
        fail_at(efd, ZTSA_STEP_FILTER, errno);
    exec_cmd(&c);
}

int ztsa_spawn(const struct ztsa_plan *plan, const char *ns, int *sync_fd, int *err_fd) {
    int sync_pipe[2], err_pipe[2];
    /* the counters the helper shares with the supervisor, zeroed for this spawn */
    int err = 0;
    struct ztsa_shared *shared = supervisor_counters(plan->helper, &err);
    if (err)
        return -err;
    if (pipe2(sync_pipe, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(err_pipe, O_CLOEXEC) < 0) {
        int e = errno;
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        return -e;
    }
    /* with ztsa-ns: opened now, and the plan on its memfd */
    struct ns_exec x = {.ns_fd = -1, .plan_fd = -1};
    int e = ns ? -ns_prepare(plan, ns, err_pipe[1], &x) : 0;
    pid_t parent = getpid();
    pid_t pid = e ? -1 : fork();
    if (pid < 0) {
        e = e ? e : errno;
        ns_release(&x);
        close(sync_pipe[0]); close(sync_pipe[1]);
        close(err_pipe[0]); close(err_pipe[1]);
        return -e;
    }
    if (pid == 0) {
        close(sync_pipe[1]);
        close(err_pipe[0]);
        child_wait(sync_pipe[0], parent);
        if (ns)
            ns_exec(plan, &x, err_pipe[1]);
        child_setup(plan, err_pipe[1], shared);
        _exit(127); /* not reached */
    }
    ns_release(&x);
    close(sync_pipe[0]);
    close(err_pipe[1]);
    *sync_fd = sync_pipe[1];
    *err_fd = err_pipe[0];
    return pid;
}

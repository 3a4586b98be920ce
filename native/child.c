/* The spawn. ztsa_spawn runs in the supervisor up to its fork; everything after the
   fork runs in the child, which waits until the tracer has seized it, then sets itself
   up by the plan: namespaces and read-only mounts, the working directory, capabilities,
   NoNewPrivs, Landlock. Without a file helper it installs the filter and execs CMD.
   With one it forks CMD (which adds the second Landlock ruleset, installs the filter
   with a listener, hands the listener back and execs) and becomes the helper
   (helper_main in helper.c). The child touches only its own copy of the plan (the
   fork's) and the error pipe; it writes nothing the supervisor reads but that pipe and
   the shared counters. ztsa_userns_probe's child runs protect_mounts only. */
#include "internal.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

struct mount_attr_ {
    unsigned long long attr_set, attr_clr, propagation, userns_fd;
};

static int write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    ssize_t n = write(fd, text, strlen(text));
    int e = errno;
    close(fd);
    return n == (ssize_t)strlen(text) ? 0 : -(n < 0 ? e : EIO);
}

/* A private mount namespace (with a user namespace mapping only our own ids when not
   root) where every path of ro_paths is bind-mounted read-only onto itself: writing,
   truncating, chmod (EROFS), unlinking and renaming over it (EBUSY) all fail. */
static int protect_mounts(int userns, const char *const *ro_paths, int n_ro) {
    char map[64];
    unsigned int uid = getuid(), gid = getgid();
    if (unshare(CLONE_NEWNS | (userns ? CLONE_NEWUSER : 0)) < 0)
        return -errno;
    if (userns) {
        int r;
        snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
        if ((r = write_file("/proc/self/uid_map", map)) < 0)
            return r;
        if ((r = write_file("/proc/self/setgroups", "deny")) < 0)
            return r;
        snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
        if ((r = write_file("/proc/self/gid_map", map)) < 0)
            return r;
    }
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        return -errno;
    for (int i = 0; i < n_ro; i++) {
        if (mount(ro_paths[i], ro_paths[i], NULL, MS_BIND | MS_REC, NULL) < 0)
            return -errno;
        struct mount_attr_ attr = {MOUNT_ATTR_RDONLY, 0, 0, 0};
        if (syscall(SYS_mount_setattr, AT_FDCWD, ro_paths[i], AT_RECURSIVE, &attr,
                    sizeof attr) < 0)
            return -errno;
    }
    return 0;
}

int ztsa_userns_probe(void) {
    pid_t pid = fork();
    if (pid < 0)
        return -errno;
    if (pid == 0) /* what the child will do, without mounts (AppArmor may allow the
                     namespace but deny what comes after) */
        _exit(protect_mounts(1, NULL, 0) < 0 ? 1 : 0);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -errno;
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -EPERM;
}

static void fail_at(int err_fd, int step, int err) {
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

static void exec_cmd(const struct ztsa_plan *plan, int efd) {
    ordinary_signals();
    execve(plan->path, plan->argv, plan->envp);
    fail_at(efd, ZTSA_STEP_EXEC, errno);
}

/* In CMD, forked by the helper: the second ruleset, the filter with its listener, the
   listener's number to the helper (which takes it with pidfd_getfd), then the exec. */
static void start_cmd(const struct ztsa_plan *plan, int efd, int sock, int *make_fds) {
    struct sock_fprog prog = {plan->filter_len, (struct sock_filter *)plan->filter};
    if (make_fds) {
        int r = restrict_beneath(plan->handled_fs & ZTSA_LL_MAKE, make_fds, NULL,
                                 plan->n_make);
        if (r < 0)
            fail_at(efd, ZTSA_STEP_LANDLOCK, -r);
    }
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
       helper take the listener, then exec */
    char ack;
    if (write(sock, &lfd, sizeof lfd) != sizeof lfd || read(sock, &ack, 1) != 1)
        fail_at(efd, ZTSA_STEP_HELPER, EPIPE);
    close(lfd);
    close(sock);
    exec_cmd(plan, efd);
}

/* In the child, after its set-up: fork CMD and become the file helper. */
static void become_helper(const struct ztsa_plan *plan, int efd, struct ztsa_shared *shared) {
    int root = open(plan->workspace, O_PATH | O_DIRECTORY | O_CLOEXEC);
    int pair[2];
    if (root < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, pair) < 0)
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
    pid_t cmd = fork();
    if (cmd < 0)
        fail_at(efd, ZTSA_STEP_HELPER, errno);
    if (cmd == 0) {
        close(pair[0]);
        close(root);
        if (plan->log_fd >= 0)
            close(plan->log_fd);
        start_cmd(plan, efd, pair[1], make_fds);
    }
    close(pair[1]);
    close(efd);
    /* nothing in the tree may take the listener (pidfd_getfd) or read or write the
       helper through /proc: only an attached tracer (ztsa) keeps its access */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0) {
        kill(cmd, SIGKILL);
        _exit(127);
    }
    /* CMD's exit reaches the tracer first, then is reaped here automatically; the
       signals that ztsa forwards to the tree must not end the helper */
    signal(SIGCHLD, SIG_IGN);
    signal(SIGINT, SIG_IGN);
    signal(SIGTERM, SIG_IGN);
    signal(SIGHUP, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    signal(SIGPIPE, SIG_IGN);
    int lfd = -1, theirs = -1;
    if (read(pair[0], &theirs, sizeof theirs) == sizeof theirs)
        lfd = ztsa_pidfd_getfd(cmd, theirs);
    if (lfd < 0) {
        kill(cmd, SIGKILL); /* no helper, no CMD: its creations could not be checked */
        _exit(127);
    }
    ssize_t sent = write(pair[0], "k", 1);
    (void)sent;
    close(pair[0]);
    /* the helper's view of CMD's second ruleset, from the same directories, before the
       descriptors go */
    creation_init(plan, root, make_fds);
    int keep[3] = {lfd, root, plan->log_fd};
    close_all_but(keep, 3, NULL, 0);
    prctl(PR_SET_NAME, "ztsa-helper", 0, 0, 0); /* for ps and perf, as ztsa's child */
    helper_main(plan, lfd, root, shared);
}

/* The child's set-up, in the order each step needs the one before. */
static void child(const struct ztsa_plan *plan, int sync_fd, int efd, pid_t parent,
                  struct ztsa_shared *shared) {
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
        _exit(127);
    /* wait until the tracer has seized us */
    char go;
    ssize_t n;
    do {
        n = read(sync_fd, &go, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 1)
        _exit(127);
    close(sync_fd);
    /* nothing but stdio (and the named fds) reaches CMD */
    int keep_here[2] = {efd, plan->helper ? plan->log_fd : -1};
    close_all_but(keep_here, 2, plan->keep_fds, plan->n_keep_fds);
    for (int i = 0; i < plan->n_keep_fds; i++) {
        int flags = fcntl(plan->keep_fds[i], F_GETFD);
        if (flags >= 0)
            fcntl(plan->keep_fds[i], F_SETFD, flags & ~FD_CLOEXEC);
    }
    if (plan->namespaces != ZTSA_NS_NONE) {
        int r = protect_mounts(plan->namespaces == ZTSA_NS_USER, plan->ro_paths, plan->n_ro);
        if (r < 0)
            fail_at(efd, ZTSA_STEP_NAMESPACES, -r);
    }
    if (plan->cwd && chdir(plan->cwd) < 0)
        fail_at(efd, ZTSA_STEP_CHDIR, errno);
    if (plan->drop_caps || plan->namespaces == ZTSA_NS_USER) {
        int r = drop_capabilities(plan->keep_caps);
        if (r < 0)
            fail_at(efd, ZTSA_STEP_CAPS, -r);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        fail_at(efd, ZTSA_STEP_NNP, errno);
    if (plan->handled_fs) {
        int r = apply_landlock(plan->write_paths, plan->write_rights, plan->n_write,
                               plan->handled_fs);
        if (r < 0)
            fail_at(efd, ZTSA_STEP_LANDLOCK, -r);
    }
    if (plan->helper)
        become_helper(plan, efd, shared);
    struct sock_fprog prog = {plan->filter_len, (struct sock_filter *)plan->filter};
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
        fail_at(efd, ZTSA_STEP_FILTER, errno);
    exec_cmd(plan, efd);
}

/* The counters the helper shares with the supervisor; made once, zeroed each spawn. */
static struct ztsa_shared *shared;

unsigned long ztsa_helper_denials(void) {
    return shared ? __atomic_load_n(&shared->denials, __ATOMIC_RELAXED) : 0;
}

unsigned long ztsa_helper_connects(void) {
    return shared ? __atomic_load_n(&shared->connects, __ATOMIC_RELAXED) : 0;
}

int ztsa_spawn(const struct ztsa_plan *plan, int *sync_fd, int *err_fd) {
    int sync_pipe[2], err_pipe[2];
    if (plan->helper && !shared) {
        void *m = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (m == MAP_FAILED)
            return -errno;
        shared = m;
    }
    if (shared)
        memset(shared, 0, sizeof *shared);
    if (pipe2(sync_pipe, O_CLOEXEC) < 0)
        return -errno;
    if (pipe2(err_pipe, O_CLOEXEC) < 0) {
        int e = errno;
        close(sync_pipe[0]);
        close(sync_pipe[1]);
        return -e;
    }
    pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) {
        int e = errno;
        close(sync_pipe[0]); close(sync_pipe[1]);
        close(err_pipe[0]); close(err_pipe[1]);
        return -e;
    }
    if (pid == 0) {
        close(sync_pipe[1]);
        close(err_pipe[0]);
        child(plan, sync_pipe[0], err_pipe[1], parent, shared);
        _exit(127); /* not reached */
    }
    close(sync_pipe[0]);
    close(err_pipe[1]);
    *sync_fd = sync_pipe[1];
    *err_fd = err_pipe[0];
    return pid;
}

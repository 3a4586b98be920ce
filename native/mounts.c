/* Runs in the spawned child (and, with a PID namespace, in the helper as pid 1 of the
   tree's namespace, before it forks CMD): the tree's mount namespace. The read-only
   paths and the read-only system, the homes hidden behind the private home, the
   denied paths hidden; in the PID namespace the tree's own /proc, its IPC limits, a
   private /dev/shm and /dev/pts. It changes only the child's own mount, IPC and PID
   namespaces (and their sysctls), never the host's; a failure is the step's, reported
   on the error pipe (fail_at). */
#include "child.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <unistd.h>

int write_file(const char *path, const char *text) {
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
int protect_mounts(int userns, const char *const *ro_paths, int n_ro) {
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

/* The system read-only, in the child's mount namespace: every mount, then the writable
   places (the first ruleset's write rules on directories: the workspace, the private
   home and TMPDIR, --allow-write, /dev/pts, /dev/shm) bound onto themselves and made
   writable again, their own read-only agent files kept so. Outside them nothing can be
   changed in any way Landlock does not cover: mode, owner, times, extended attributes,
   links, device nodes (EROFS). Device files stay usable (I/O to them is no write to the
   file system). */
int system_readonly(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    /* writable again, but never a place for a setuid program or a device node */
    struct mount_attr_ ro = {MOUNT_ATTR_RDONLY, 0, 0, 0},
                       rw = {MOUNT_ATTR_NOSUID_ | MOUNT_ATTR_NODEV_, MOUNT_ATTR_RDONLY, 0, 0};
    if (syscall(SYS_mount_setattr, AT_FDCWD, "/", AT_RECURSIVE, &ro, sizeof ro) < 0)
        return -errno;
    for (int i = 0; i < plan->n_write; i++) {
        struct stat st;
        const char *path = plan->write_paths[i];
        if (!(plan->write_rights[i] & LL_WRITE_FILE) || stat(path, &st) < 0 ||
            !S_ISDIR(st.st_mode))
            continue;
        struct mount_attr_ attr = rw;
        if (strncmp(path, "/dev/", 5) == 0)
            attr.attr_set = MOUNT_ATTR_NOSUID_; /* /dev/pts holds the terminals */
        if (mount(path, path, NULL, MS_BIND | MS_REC, NULL) < 0 ||
            syscall(SYS_mount_setattr, AT_FDCWD, path, 0, &attr, sizeof attr) < 0)
            return -errno;
    }
    return 0;
}

/* mkdir -p of path's directories (and path itself, a directory or an empty file like
   what it will show), in a fresh tmpfs of ztsa's */
static void make_mountpoint(const char *path, int is_dir) {
    char buf[4097];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; (p = strchr(p, '/')); p++) {
        *p = 0;
        mkdir(buf, 0755);
        *p = '/';
    }
    if (is_dir)
        mkdir(buf, 0755);
    else
        close(open(buf, O_CREAT | O_WRONLY | O_CLOEXEC, 0600));
}

/* Bind fd (an O_PATH descriptor taken before a tmpfs covered it) back onto path in that
   tmpfs. 0 or -errno. */
static int bind_back(int fd, const char *path) {
    struct stat st;
    char from[64];
    if (fstat(fd, &st) < 0)
        return -errno;
    make_mountpoint(path, S_ISDIR(st.st_mode));
    snprintf(from, sizeof from, "/proc/self/fd/%d", fd);
    return mount(from, path, NULL, MS_BIND | MS_REC, NULL) < 0 ? -errno : 0;
}

/* The real home hidden: an empty tmpfs over it, read-only, with what the plan shows
   bound back from descriptors taken before it covers them (the workspace and other
   writable places writable; the directories CMD's PATH and environment name, CMD's own
   installation and --allow-read read-only). Every other file of the home (histories,
   tokens, agent state) is simply not there. */
int hide_homes(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    if (plan->n_hide_homes <= 0 && plan->n_show <= 0)
        return 0;
    int *fds = calloc((size_t)(plan->n_show ? plan->n_show : 1), sizeof *fds);
    if (!fds)
        return -ENOMEM;
    for (int i = 0; i < plan->n_show; i++)
        fds[i] = open(plan->show[i], O_PATH | O_CLOEXEC);
    int r = 0;
    struct mount_attr_ ro = {MOUNT_ATTR_RDONLY, 0, 0, 0};
    for (int h = 0; !r && h < plan->n_hide_homes; h++) {
        struct stat hs;
        if (stat(plan->hide_homes[h], &hs) == 0 && S_ISDIR(hs.st_mode) &&
            mount("tmpfs", plan->hide_homes[h], "tmpfs", MS_NOSUID | MS_NODEV,
                  "mode=0755,size=1m") < 0)
            r = -errno;
    }
    /* writable again where shown so, but never a place for a setuid program or a device
       node (an agent's state: its source is read-only like the rest of the system) */
    struct mount_attr_ rw = {MOUNT_ATTR_NOSUID_ | MOUNT_ATTR_NODEV_, MOUNT_ATTR_RDONLY, 0, 0};
    for (int i = 0; !r && i < plan->n_show; i++) {
        if (fds[i] < 0)
            continue;
        const char *at = plan->show_at && plan->show_at[i] ? plan->show_at[i] : plan->show[i];
        r = bind_back(fds[i], at);
        /* a writable place shown where it is was made writable already, with its own
           read-only agent files inside: never touched again; an agent's state shown
           elsewhere is made writable at its top only */
        if (!r && !plan->show_rw[i] && syscall(SYS_mount_setattr, AT_FDCWD, at,
                                               AT_RECURSIVE, &ro, sizeof ro) < 0)
            r = -errno;
        if (!r && plan->show_rw[i] && at != plan->show[i] &&
            syscall(SYS_mount_setattr, AT_FDCWD, at, 0, &rw, sizeof rw) < 0)
            r = -errno;
    }
    for (int h = 0; !r && h < plan->n_hide_homes; h++) {
        struct stat hs;
        if (stat(plan->hide_homes[h], &hs) == 0 && S_ISDIR(hs.st_mode) &&
            syscall(SYS_mount_setattr, AT_FDCWD, plan->hide_homes[h], 0, &ro, sizeof ro) < 0)
            r = -errno;
    }
    for (int i = 0; i < plan->n_show; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    free(fds);
    return r;
}

/* A policy's fs.deny_read, by mounts, whatever Landlock's read rules can hold: after
   every other mount (so that nothing bound later shows what lies beneath), an empty
   read-only tmpfs over each directory, an empty read-only file over each other file.
   0 or -errno. */
int hide_denied(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    struct mount_attr_ ro = {MOUNT_ATTR_RDONLY, 0, 0, 0};
    for (int i = 0; i < plan->n_deny_paths; i++) {
        const char *path = plan->deny_paths[i];
        struct stat st;
        if (lstat(path, &st) < 0)
            continue; /* not there (under a hidden home, or gone): nothing to read */
        int r = S_ISDIR(st.st_mode)
                    ? mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=4k")
                    : mount(plan->empty_file, path, NULL, MS_BIND, NULL);
        if (r < 0 || syscall(SYS_mount_setattr, AT_FDCWD, path, 0, &ro, sizeof ro) < 0)
            return -errno;
    }
    return 0;
}

/* SysV shared memory and message queues hold memory that no rlimit counts: in the
   tree's own IPC namespace, no more of each than max bytes. 0 or -errno. */
static int ipc_limits(unsigned long long max) {
    long page = sysconf(_SC_PAGESIZE);
    unsigned long long queues = max / 16384; /* msgmnb, the tree's bytes a queue */
    char shmmax[32], shmall[32], msgmni[32];
    snprintf(shmmax, sizeof shmmax, "%llu", max);
    snprintf(shmall, sizeof shmall, "%llu", max / (unsigned long long)(page > 0 ? page : 4096));
    snprintf(msgmni, sizeof msgmni, "%llu", queues < 32000 ? queues : 32000);
    static const char *const files[] = {"/proc/sys/kernel/shmmax", "/proc/sys/kernel/shmall",
                                        "/proc/sys/kernel/msgmnb", "/proc/sys/kernel/msgmni"};
    const char *values[] = {shmmax, shmall, "16384", msgmni};
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        int r = write_file(files[i], values[i]);
        if (r < 0 && r != -ENOENT) /* ENOENT: a kernel without SysV IPC */
            return r;
    }
    return 0;
}

/* In the helper, pid 1 of the tree's PID namespace, while it still has the namespaces'
   rights: the tree's /proc (only its processes), the IPC namespace's limits, a private
   /dev/shm and /dev/pts, and a fresh session keyring. */
void tree_mounts(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    int efd = c->efd;
    if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
        fail_at(efd, ZTSA_STEP_INIT, errno);
    /* (the kernel lets only the namespace's root set them, and a user namespace of the
       tree's maps no root: there, the OOM killer's choice of the tree is the bound) */
    int ipc = plan->max_memory && plan->namespaces != ZTSA_NS_USER
                  ? ipc_limits(plan->max_memory) : 0;
    if (ipc < 0)
        fail_at(efd, ZTSA_STEP_INIT, -ipc);
    /* the keys its user may view, with their descriptions, are listed there whatever the
       keyring: empty files over them (absent without CONFIG_KEYS) */
    static const char *const keys[] = {"/proc/keys", "/proc/key-users"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        if (mount("/dev/null", keys[i], NULL, MS_BIND, NULL) < 0 && errno != ENOENT)
            fail_at(efd, ZTSA_STEP_INIT, errno);
    struct stat st;
    if (stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode)) {
        /* writable places under /dev/shm (a workspace there) stay, bound back into the
           private tmpfs from descriptors taken before it covers them; what CMD needs
           there and --allow-read too, read-only, first (a writable place may lie in one) */
        int *keep = calloc((size_t)(plan->n_write ? plan->n_write : 1), sizeof *keep);
        int *show = calloc((size_t)(plan->n_shm_show ? plan->n_shm_show : 1), sizeof *show);
        if (!keep || !show)
            fail_at(efd, ZTSA_STEP_INIT, ENOMEM);
        for (int i = 0; i < plan->n_write; i++)
            keep[i] = strncmp(plan->write_paths[i], "/dev/shm/", 9) == 0
                          ? open(plan->write_paths[i], O_PATH | O_CLOEXEC) : -1;
        for (int i = 0; i < plan->n_shm_show; i++)
            show[i] = open(plan->shm_show[i], O_PATH | O_CLOEXEC);
        /* no bigger than a process's --max-memory: its pages are memory RLIMIT_DATA
           does not count */
        char opts[64] = "mode=1777";
        if (plan->max_memory)
            snprintf(opts, sizeof opts, "mode=1777,size=%llu", plan->max_memory);
        if (mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
            fail_at(efd, ZTSA_STEP_INIT, errno);
        struct mount_attr_ ro = {MOUNT_ATTR_RDONLY, 0, 0, 0};
        for (int i = 0; i < plan->n_shm_show; i++) {
            if (show[i] < 0)
                continue; /* gone since the plan was made: nothing to show */
            int r = bind_back(show[i], plan->shm_show[i]);
            if (r < 0 || syscall(SYS_mount_setattr, AT_FDCWD, plan->shm_show[i], AT_RECURSIVE,
                                 &ro, sizeof ro) < 0)
                fail_at(efd, ZTSA_STEP_INIT, r < 0 ? -r : errno);
            close(show[i]);
        }
        free(show);
        for (int i = 0; i < plan->n_write; i++) {
            if (keep[i] < 0)
                continue;
            int r = bind_back(keep[i], plan->write_paths[i]);
            if (r < 0)
                fail_at(efd, ZTSA_STEP_INIT, -r);
            close(keep[i]);
        }
        free(keep);
        /* the working directory again: one beneath /dev/shm (the workspace) would
           otherwise stay on the covered mount, where Landlock grants nothing */
        if (plan->cwd && chdir(plan->cwd) < 0)
            fail_at(efd, ZTSA_STEP_CHDIR, errno);
    }
    /* a terminal view of its own: a new devpts instance, whose ptmx becomes /dev/ptmx;
       the host's other terminals cannot be opened by name any more, while the tree's own
       descriptors and /dev/tty (its controlling terminal) stay what they were */
    if (stat("/dev/pts", &st) == 0 && S_ISDIR(st.st_mode)) {
        if (mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=0620") < 0 ||
            (stat("/dev/ptmx", &st) == 0 &&
             mount("/dev/pts/ptmx", "/dev/ptmx", NULL, MS_BIND, NULL) < 0))
            fail_at(efd, ZTSA_STEP_INIT, errno);
    }
    /* at most max_procs processes and threads in the namespace (pid_max is its own since
       Linux 6.14; pids run from 1, the helper's, to pid_max - 1) */
    if (plan->max_procs) {
        char text[32];
        snprintf(text, sizeof text, "%d\n", plan->max_procs + 1);
        if (write_file("/proc/sys/kernel/pid_max", text) < 0 && c->shared)
            c->shared->no_pid_max = 1;
    }
    if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING_, NULL) < 0 && errno != ENOSYS)
        fail_at(efd, ZTSA_STEP_INIT, errno);
}

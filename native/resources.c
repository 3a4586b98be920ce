/* Runs in the spawned child (the private tmpfs, and the inotify limits of a user
   namespace it made) and in the helper before it forks CMD (a started-by-root tree's
   own user namespace): the tree's share of its user's resources. The private HOME and
   TMPDIR, which Python prepared on the host's disk, become a tmpfs of --max-disk bytes
   holding a copy of what they held, in the child's mount namespace only; the tree's
   user namespace gets inotify limits of its own, which the kernel counts beneath the
   user's (ucounts), so the host user keeps instances and watches whatever the tree
   takes. It changes only the child's own namespaces and their sysctls, never the
   host's. Its steps read the child's context (struct child, child.h) and keep no
   state. */
#include "child.h"

#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <unistd.h>

#define COPY_DEPTH 32 /* what Python prepares is a few levels deep (agent state, configs) */

static int copy_file(int from_dir, const char *name, int to_dir, const struct stat *st) {
    int in = openat(from_dir, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (in < 0)
        return -errno;
    int out = openat(to_dir, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                     st->st_mode & 07777);
    if (out < 0) {
        int e = errno;
        close(in);
        return -e;
    }
    static char buf[1 << 16];
    int r = 0;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            r = n < 0 ? -errno : 0;
            break;
        }
        for (ssize_t done = 0; done < n;) {
            ssize_t w = write(out, buf + done, (size_t)(n - done));
            if (w < 0 && errno == EINTR)
                continue;
            if (w <= 0) {
                r = w < 0 ? -errno : -EIO;
                break;
            }
            done += w;
        }
        if (r)
            break;
    }
    struct timespec times[2] = {st->st_atim, st->st_mtim};
    if (!r && (fchmod(out, st->st_mode & 07777) < 0 || futimens(out, times) < 0))
        r = -errno;
    close(in);
    close(out);
    return r;
}

/* What from_dir holds, copied into to_dir: directories, regular files (content, mode,
   times) and symlinks; nothing else (a socket or FIFO is no content). 0 or -errno. */
static int copy_tree(int from_dir, int to_dir, int depth) {
    if (depth > COPY_DEPTH)
        return -ELOOP;
    int dup_fd = dup(from_dir);
    DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
    if (!d) {
        int e = errno;
        if (dup_fd >= 0)
            close(dup_fd);
        return -e;
    }
    int r = 0;
    struct dirent *e;
    while (!r && (e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        struct stat st;
        if (fstatat(from_dir, e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
            r = -errno;
        } else if (S_ISDIR(st.st_mode)) {
            if (mkdirat(to_dir, e->d_name, st.st_mode & 07777) < 0) {
                r = -errno;
                break;
            }
            int sub_from = openat(from_dir, e->d_name,
                                  O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            int sub_to = openat(to_dir, e->d_name,
                                O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            r = sub_from < 0 || sub_to < 0 ? -errno : copy_tree(sub_from, sub_to, depth + 1);
            if (!r && fchmod(sub_to, st.st_mode & 07777) < 0)
                r = -errno;
            if (sub_from >= 0)
                close(sub_from);
            if (sub_to >= 0)
                close(sub_to);
        } else if (S_ISREG(st.st_mode)) {
            r = copy_file(from_dir, e->d_name, to_dir, &st);
        } else if (S_ISLNK(st.st_mode)) {
            char target[4097];
            ssize_t n = readlinkat(from_dir, e->d_name, target, sizeof target - 1);
            if (n < 0)
                r = -errno;
            else {
                target[n] = 0;
                if (symlinkat(target, to_dir, e->d_name) < 0)
                    r = -errno;
            }
        }
    }
    closedir(d);
    return r;
}

/* The private HOME and TMPDIR (plan->private_dir, one directory holding both): a tmpfs
   of max_disk bytes over it with a copy of what it holds, so that what the tree writes
   there is bounded (ENOSPC past it) and lands on no disk of the host's. After
   protect_mounts (the child's own mount namespace), before the read-only system and
   the hidden homes, which bind it as they bound the directory. 0 or -errno. */
int private_tmpfs(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    if (!plan->max_disk || !plan->private_dir || !plan->private_dir[0])
        return 0;
    int from = open(plan->private_dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (from < 0)
        return -errno;
    char opts[80];
    snprintf(opts, sizeof opts, "mode=0700,size=%llu", plan->max_disk);
    int r = 0;
    if (mount("tmpfs", plan->private_dir, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        r = -errno;
    int to = r ? -1 : open(plan->private_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (!r && to < 0)
        r = -errno;
    if (!r)
        r = copy_tree(from, to, 0);
    if (to >= 0)
        close(to);
    close(from);
    return r;
}

/* The calling process's user namespace's own inotify limits (it must hold
   CAP_SYS_RESOURCE there: the namespace's creator, before its capabilities go). The
   kernel charges an instance or a watch to every namespace up to the initial one, each
   against its own limit, so the tree can take no more than these of its user's. 0, or
   -errno (-ENOENT: a kernel without them). */
int inotify_limits(const struct child *c) {
    const struct ztsa_plan *plan = c->plan;
    char text[32];
    int r = 0;
    if (plan->inotify_instances > 0) {
        snprintf(text, sizeof text, "%d\n", plan->inotify_instances);
        r = write_file("/proc/sys/user/max_inotify_instances", text);
    }
    if (!r && plan->inotify_watches > 0) {
        snprintf(text, sizeof text, "%d\n", plan->inotify_watches);
        r = write_file("/proc/sys/user/max_inotify_watches", text);
    }
    return r;
}

/* A tree started by root has no user namespace (its mount namespace is root's): the
   helper-to-be makes one for itself and the tree after the tree's mounts, before
   Landlock, mapping only its own ids, where the tree's inotify limits can be set. -EROFS when /proc cannot take the maps (no
   /proc of the tree's own), checked before the namespace exists: a namespace without
   maps would leave CMD with no identity. 0; -errno when none was made (CMD goes on
   without it); +errno when one was made but its maps could not be written (fatal). */
int own_userns(void) {
    struct statvfs sv;
    if (statvfs("/proc/self/uid_map", &sv) < 0)
        return -errno;
    if (sv.f_flag & ST_RDONLY)
        return -EROFS;
    unsigned int uid = geteuid(), gid = getegid();
    if (unshare(CLONE_NEWUSER) < 0)
        return -errno;
    char map[64];
    int r;
    snprintf(map, sizeof map, "%u %u 1\n", uid, uid);
    if ((r = write_file("/proc/self/uid_map", map)) < 0 ||
        (r = write_file("/proc/self/setgroups", "deny")) < 0)
        return -r;
    snprintf(map, sizeof map, "%u %u 1\n", gid, gid);
    return -write_file("/proc/self/gid_map", map);
}

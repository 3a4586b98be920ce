/* Runs in the file helper, under --audit-only only: helper.c's decide() calls audit_fs()
   first for every file-system call the filter sends it (in this mode every open too).

   The enforced run's view is a table from Python (plan.audit_view): a path prefix and
   what the enforced run could do beneath it (enum ztsa_audit_kind); the longest prefix
   of a path decides. A call the enforced run would have refused is counted and logged
   as a deny line with "enforced":false, then goes on as it would have without the
   judgement: this file refuses nothing. The path is read once from the caller's memory
   and placed through its /proc entries (cwd, fd/N) and realpath(3); a tree that rewrites
   it meanwhile can make a line wrong, never reach more than the mode already lets it. */
#include "helper.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct audit_call {
    int nr;
    const char *name;
    int write;          /* 1: changes what it names; -1: an open, by its flags */
    int dirfd, path;    /* argument indexes; path -1: the call names the descriptor */
    int dirfd2, path2;  /* a second name that is changed (rename's new name), -1: none */
    int flags;          /* an open's flags, -1: none */
    int nofollow;       /* the last component itself is what the call changes */
};

static const struct audit_call CALLS[] = {
    {ZTSA_NR_open, "open", -1, -1, 0, -1, -1, 1, 0},
    {ZTSA_NR_openat, "openat", -1, 0, 1, -1, -1, 2, 0},
    {ZTSA_NR_creat, "creat", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_mkdir, "mkdir", 1, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_mkdirat, "mkdirat", 1, 0, 1, -1, -1, -1, 1},
    {ZTSA_NR_mknod, "mknod", 1, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_mknodat, "mknodat", 1, 0, 1, -1, -1, -1, 1},
    {ZTSA_NR_symlink, "symlink", 1, -1, 1, -1, -1, -1, 1},
    {ZTSA_NR_symlinkat, "symlinkat", 1, 1, 2, -1, -1, -1, 1},
    {ZTSA_NR_link, "link", 1, -1, 1, -1, -1, -1, 1},
    {ZTSA_NR_linkat, "linkat", 1, 2, 3, -1, -1, -1, 1},
    {ZTSA_NR_rename, "rename", 1, -1, 0, -1, 1, -1, 1},
    {ZTSA_NR_renameat, "renameat", 1, 0, 1, 2, 3, -1, 1},
    {ZTSA_NR_renameat2, "renameat2", 1, 0, 1, 2, 3, -1, 1},
    {ZTSA_NR_chmod, "chmod", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_fchmod, "fchmod", 1, 0, -1, -1, -1, -1, 0},
    {ZTSA_NR_fchmodat, "fchmodat", 1, 0, 1, -1, -1, -1, 0},
    {ZTSA_NR_fchmodat2, "fchmodat2", 1, 0, 1, -1, -1, -1, 0},
    {ZTSA_NR_chown, "chown", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_fchown, "fchown", 1, 0, -1, -1, -1, -1, 0},
    {ZTSA_NR_lchown, "lchown", 1, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_fchownat, "fchownat", 1, 0, 1, -1, -1, -1, 0},
    {ZTSA_NR_utime, "utime", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_utimes, "utimes", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_futimesat, "futimesat", 1, 0, 1, -1, -1, -1, 0},
    {ZTSA_NR_utimensat, "utimensat", 1, 0, 1, -1, -1, -1, 0},
    {ZTSA_NR_setxattr, "setxattr", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_lsetxattr, "lsetxattr", 1, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_fsetxattr, "fsetxattr", 1, 0, -1, -1, -1, -1, 0},
    {ZTSA_NR_removexattr, "removexattr", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_lremovexattr, "lremovexattr", 1, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_fremovexattr, "fremovexattr", 1, 0, -1, -1, -1, -1, 0},
    {ZTSA_NR_truncate, "truncate", 1, -1, 0, -1, -1, -1, 0},
    {ZTSA_NR_unlink, "unlink", 1, -1, 0, -1, -1, -1, 1},
    {ZTSA_NR_unlinkat, "unlinkat", 1, 0, 1, -1, -1, -1, 1},
    {ZTSA_NR_rmdir, "rmdir", 1, -1, 0, -1, -1, -1, 1},
};

const char *audit_unenforced(void) {
    return helper_plan() && helper_plan()->audit ? ",\"enforced\":false" : "";
}

/* what the enforced view allows beneath path: its longest prefix's kind */
static int kind_of(const char *path) {
    const struct ztsa_plan *p = helper_plan();
    size_t best = 0;
    int kind = ZTSA_AUDIT_READONLY;
    for (int i = 0; i < p->n_audit; i++) {
        const char *prefix = p->audit_paths[i];
        size_t k = strlen(prefix);
        if (k == 1 && prefix[0] == '/')
            k = 0; /* the root: every path's prefix */
        if ((k == 0 || (strncmp(path, prefix, k) == 0 && (path[k] == 0 || path[k] == '/'))) &&
            k + 1 > best) {
            best = k + 1;
            kind = p->audit_kinds[i];
        }
    }
    return kind;
}

/* the caller's path for its descriptor fd, or its cwd (fd AT_FDCWD); 0 when unknown */
static int fd_path(pid_t pid, long long fd, char *out, size_t size) {
    char where[64];
    if ((int)fd == AT_FDCWD)
        snprintf(where, sizeof where, "%d/cwd", (int)pid);
    else
        snprintf(where, sizeof where, "%d/fd/%d", (int)pid, (int)fd);
    ssize_t n = readlinkat(helper_proc(), where, out, size - 1);
    if (n <= 0 || out[0] != '/') /* a pipe, a socket, an anonymous inode */
        return 0;
    out[n] = 0;
    return 1;
}

/* ".", ".." and "//" taken out of an absolute path, as its spelling reads */
static void lexical(char *path) {
    char out[PATH_MAX];
    size_t o = 0;
    for (char *p = path; *p;) {
        while (*p == '/')
            p++;
        char *end = strchrnul(p, '/');
        size_t n = (size_t)(end - p);
        if (n == 0 || (n == 1 && p[0] == '.')) {
        } else if (n == 2 && p[0] == '.' && p[1] == '.') {
            while (o > 0 && out[o - 1] != '/')
                o--;
            if (o > 0)
                o--;
        } else if (o + n + 2 < sizeof out) {
            out[o++] = '/';
            memcpy(out + o, p, n);
            o += n;
        }
        p = end;
    }
    if (o == 0)
        out[o++] = '/';
    out[o] = 0;
    memcpy(path, out, o + 1);
}

/* Where a call's name lands: the real path (links followed; the last one only when
   the call follows it) into out; 0 when it cannot be placed or names /proc. */
static int place(pid_t pid, long long dirfd, int has_path, unsigned long long addr,
                 int nofollow, char *out, size_t size) {
    char given[PATH_MAX], full[PATH_MAX];
    if (!has_path || addr == 0) {
        if (!fd_path(pid, dirfd, full, sizeof full))
            return 0;
    } else {
        if (caller_read_string(pid, addr, given, sizeof given) != 0)
            return 0;
        if (!given[0]) { /* AT_EMPTY_PATH: the descriptor itself */
            if (!fd_path(pid, dirfd, full, sizeof full))
                return 0;
        } else if (given[0] == '/') {
            snprintf(full, sizeof full, "%s", given);
        } else {
            char base[PATH_MAX];
            if (!fd_path(pid, dirfd, base, sizeof base))
                return 0;
            if ((size_t)snprintf(full, sizeof full, "%s/%s", base, given) >= sizeof full)
                return 0;
        }
    }
    lexical(full);
    /* the tree's own /proc (the helper's is the same mount) and its names for itself */
    if (strcmp(full, "/proc") == 0 || strncmp(full, "/proc/", 6) == 0 ||
        strncmp(full, "/dev/fd/", 8) == 0 || strncmp(full, "/dev/std", 8) == 0)
        return 0;
    char real[PATH_MAX];
    if (!nofollow && realpath(full, real)) {
        snprintf(out, size, "%s", real);
        return 1;
    }
    char *slash = strrchr(full, '/');
    const char *last = slash[1] ? slash + 1 : ".";
    *slash = 0;
    if (!realpath(full[0] ? full : "/", real))
        snprintf(real, sizeof real, "%s", full[0] ? full : "/");
    int n = snprintf(out, size, "%s/%s", strcmp(real, "/") == 0 ? "" : real, last);
    return n > 0 && (size_t)n < size;
}

static void would_deny(pid_t pid, const char *call, const char *path, int write, int kind) {
    const char *rule =
        !write ? (kind == ZTSA_AUDIT_HIDDEN ? "the real home is hidden (not shown to the tree)"
                                            : "unreadable: a credential or system secret")
        : kind == ZTSA_AUDIT_HIDDEN ? "the real home is hidden (not shown to the tree)"
                                    : "read-only outside the writable places";
    unsigned long count = helper_count_would();
    if (!helper_may_log(count))
        return;
    char epath[2 * PATH_MAX + 8], fields[2 * PATH_MAX + 512];
    helper_json(path, epath, sizeof epath);
    snprintf(fields, sizeof fields,
             "\"pid\":%d,\"syscall\":\"%s\",\"path\":\"%s\",\"access\":\"%s\","
             "\"decision\":\"deny\",\"enforced\":false,\"rule\":\"%s\"",
             helper_host_tgid(pid), call, epath, write ? "write" : "read", rule);
    helper_log_event("deny", fields);
}

static void judge(pid_t pid, const struct audit_call *c, long long dirfd,
                  unsigned long long addr, int write, int nofollow) {
    char where[2 * PATH_MAX];
    if (!place(pid, dirfd, c->path >= 0, addr, nofollow, where, sizeof where))
        return;
    struct stat st;
    int exists = stat(where, &st) == 0;
    /* I/O on a device, FIFO or socket writes no file */
    /* a read of nothing fails the same either way; a directory read is a listing,
       which the enforced run allows everywhere (a hidden home lists empty) */
    if (!write && (!exists || S_ISDIR(st.st_mode)))
        return;
    if (exists && c->flags >= 0 && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return;
    int kind = kind_of(where);
    if (write ? kind != ZTSA_AUDIT_WRITABLE
              : kind == ZTSA_AUDIT_HIDDEN || kind == ZTSA_AUDIT_UNREADABLE)
        would_deny(pid, c->name, where, write, kind);
}

void audit_fs(const struct seccomp_notif *req) {
    const struct audit_call *c = NULL;
    for (size_t i = 0; i < sizeof CALLS / sizeof CALLS[0] && !c; i++)
        if (CALLS[i].nr == (int)req->data.nr)
            c = &CALLS[i];
    if (!c)
        return;
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    int write = c->write, nofollow = c->nofollow;
    if (write < 0) {
        int flags = (int)a[c->flags];
        write = (flags & (O_WRONLY | O_RDWR | O_TRUNC | O_CREAT)) != 0;
        nofollow = (flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL));
    }
    judge(pid, c, c->dirfd >= 0 ? (long long)a[c->dirfd] : AT_FDCWD,
          c->path >= 0 ? a[c->path] : 0, write, nofollow);
    if (c->path2 >= 0)
        judge(pid, c, c->dirfd2 >= 0 ? (long long)a[c->dirfd2] : AT_FDCWD, a[c->path2], 1, 1);
}

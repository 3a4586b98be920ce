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

/* The calls judged: the table's file-system ops (ztsa_nr.h), from OPEN to UNLINK. A
   call changes what it names, but an open by its flags; link changes only its new
   name, rename both. */
static int judged(int op) { return op >= ZTSA_OP_OPEN && op <= ZTSA_OP_UNLINK; }

const char *audit_unenforced(void) {
    return helper_plan() && helper_plan()->audit ? ",\"enforced\":false" : "";
}

/* what the enforced view allows beneath path: its longest prefix's kind */
static int kind_of(const struct ztsa_plan *p, const char *path) {
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
static int fd_path(int proc, pid_t pid, long long fd, char *out, size_t size) {
    char where[64];
    if ((int)fd == AT_FDCWD)
        snprintf(where, sizeof where, "%d/cwd", (int)pid);
    else
        snprintf(where, sizeof where, "%d/fd/%d", (int)pid, (int)fd);
    ssize_t n = readlinkat(proc, where, out, size - 1);
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
static int place(int proc, pid_t pid, long long dirfd, int has_path,
                 unsigned long long addr, int nofollow, char *out, size_t size) {
    char given[PATH_MAX], full[PATH_MAX];
    if (!has_path || addr == 0) {
        if (!fd_path(proc, pid, dirfd, full, sizeof full))
            return 0;
    } else {
        if (caller_read_string(pid, addr, given, sizeof given) != 0)
            return 0;
        if (!given[0]) { /* AT_EMPTY_PATH: the descriptor itself */
            if (!fd_path(proc, pid, dirfd, full, sizeof full))
                return 0;
        } else if (given[0] == '/') {
            snprintf(full, sizeof full, "%s", given);
        } else {
            char base[PATH_MAX];
            if (!fd_path(proc, pid, dirfd, base, sizeof base))
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

/* Judge the name (dirfd, the path at addr, or none: the descriptor dirfd) that call c
   changes (write) or reads. */
static void judge(const struct helper *h, pid_t pid, const struct ztsa_syscall *c,
                  long long dirfd, unsigned long long addr, int write, int nofollow) {
    char where[2 * PATH_MAX];
    int has_path = sys_arg(c, ZTSA_ARG_PATH) >= 0;
    if (!place(h->proc, pid, dirfd, has_path, addr, nofollow, where, sizeof where))
        return;
    struct stat st;
    int exists = stat(where, &st) == 0;
    /* I/O on a device, FIFO or socket writes no file */
    /* a read of nothing fails the same either way; a directory read is a listing,
       which the enforced run allows everywhere (a hidden home lists empty) */
    if (!write && (!exists || S_ISDIR(st.st_mode)))
        return;
    if (exists && c->op == ZTSA_OP_OPEN && !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
        return;
    int kind = kind_of(h->plan, where);
    if (write ? kind != ZTSA_AUDIT_WRITABLE
              : kind == ZTSA_AUDIT_HIDDEN || kind == ZTSA_AUDIT_UNREADABLE)
        would_deny(pid, c->name, where, write, kind);
}

void audit_fs(const struct helper *h, const struct seccomp_notif *req,
              const struct ztsa_syscall *c) {
    if (!judged(c->op))
        return;
    const unsigned long long *a = req->data.args;
    pid_t pid = (pid_t)req->pid;
    int write = 1, nofollow = c->nofollow;
    if (c->op == ZTSA_OP_OPEN) {
        int flags = (int)a[sys_arg(c, ZTSA_ARG_OFLAGS)];
        write = (flags & (O_WRONLY | O_RDWR | O_TRUNC | O_CREAT)) != 0;
        nofollow = (flags & O_NOFOLLOW) || ((flags & O_CREAT) && (flags & O_EXCL));
    }
    int dirfd = sys_dirfd_arg(c), path = sys_arg(c, ZTSA_ARG_PATH);
    int dirfd2 = sys_arg(c, ZTSA_ARG_DIRFD2), path2 = sys_arg(c, ZTSA_ARG_PATH2);
    if (c->op != ZTSA_OP_LINK)
        judge(h, pid, c, dirfd >= 0 ? (long long)a[dirfd] : AT_FDCWD, path >= 0 ? a[path] : 0,
              write, nofollow);
    if (path2 >= 0)
        judge(h, pid, c, dirfd2 >= 0 ? (long long)a[dirfd2] : AT_FDCWD, a[path2], 1, 1);
}

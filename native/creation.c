/* Runs in the file helper: its view of CMD's second Landlock ruleset, which decides
   who performs an O_CREAT open or a bind, the helper or the caller's own kernel.

   CMD (and so the whole tree) has a second ruleset on top of the first: the MAKE_*
   rights only beneath the plan's `make` directories: the writable roots outside the
   workspace and, inside it, the directories that existed at spawn below each "chain"
   directory (the workspace root and the directories on the way to a protected path,
   e.g. .github and .git). The tree's kernel makes no name at all in a chain directory,
   so no protected name, whatever a racing thread writes into a path after the helper
   read it. Without an audit log (plan->cont) an O_CREAT open elsewhere is let through
   to the kernel (SECCOMP_USER_NOTIF_FLAG_CONTINUE) instead of being performed by the
   helper and its file sent back with ADDFD, whose reply can wake the caller on another
   CPU. The verdicts here decide only speed: a wrong "yes" gives the caller EACCES,
   never a name the rules forbid. State: C, the helper's alone, set by creation_init. */
#include "helper.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <poll.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The helper's verdicts per directory, keyed by its file handle (inode and generation:
   a reused inode number is another key); forgotten when the helper moves a directory. */
#define COVER_SLOTS 2048
#define COVER_HANDLE 40
struct cover_slot {
    int used, verdict, mount_id;
    unsigned int type, bytes;
    unsigned char h[COVER_HANDLE];
};

static struct {
    const struct ztsa_plan *plan; /* protected paths, chain and closed directories */
    int root;                     /* the workspace, O_PATH */
    int proc;                     /* the helper's /proc (host pids) */
    int cont;                     /* a second ruleset exists and opens may CONTINUE */
    struct stat *ids;             /* the make directories, as CMD's rules hold them */
    int n_ids;
    struct cover_slot cover[COVER_SLOTS];
    int n_cover;
    /* --agent: the mounts of the kept entries (plan->kept), CMD's pid and pidfd */
    int *kept_mnt;
    int n_kept;
    pid_t agent;
    int agent_fd;
} C = {.agent_fd = -1};

/* The mount id of fd (or of path relative to it), -1 when it cannot be had. */
static int mount_of(int fd, const char *path, int flags) {
    unsigned long long id;
    return ztsa_mount_id(fd, path, flags | AT_STATX_DONT_SYNC, &id) ? (int)id : -1;
}

/* The kept entries' mounts, as the helper (in the tree's mount namespace) sees them:
   each is a bind mount of its own, which nothing in the tree can make or move. One
   that cannot be had stops the helper: the tree would write it unchecked. */
static void kept_init(const struct ztsa_plan *plan) {
    C.n_kept = 0;
    if (!plan->kept_handled || plan->n_kept <= 0)
        return;
    C.kept_mnt = calloc((size_t)plan->n_kept, sizeof *C.kept_mnt);
    if (!C.kept_mnt)
        _exit(127);
    for (int i = 0; i < plan->n_kept; i++)
        if ((C.kept_mnt[C.n_kept++] = mount_of(AT_FDCWD, plan->kept[i], AT_SYMLINK_NOFOLLOW)) < 0)
            _exit(127);
}

void creation_agent(pid_t cmd) {
    C.agent = cmd;
    C.agent_fd = (int)syscall(SYS_pidfd_open, cmd, 0);
}

int creation_kept(void) { return C.n_kept > 0; }

/* Is the calling thread tid one of CMD's, CMD still alive? Its thread group is read from
   /proc, then CMD's pidfd asked whether it has ended: alive then, its pid was its own
   when the thread group was read (a pid is not reused while its process lives). The
   caller checks afterwards that the notification is still live, so that tid was still
   that thread. */
int creation_is_agent(pid_t tid) {
    char where[48], buf[2048];
    snprintf(where, sizeof where, "%d/status", tid);
    if (C.agent <= 0 || C.agent_fd < 0 || !read_proc_at(C.proc, where, buf, sizeof buf))
        return 0;
    const char *t = strstr(buf, "\nTgid:");
    long tgid = t ? strtol(t + 6, NULL, 10) : -1;
    struct pollfd p = {C.agent_fd, POLLIN, 0};
    return tgid == C.agent && poll(&p, 1, 0) == 0;
}

int creation_kept_fd(int fd) {
    int m = C.n_kept ? mount_of(fd, "", AT_EMPTY_PATH) : -1;
    for (int i = 0; m >= 0 && i < C.n_kept; i++)
        if (C.kept_mnt[i] == m)
            return 1;
    return 0;
}

/* Is real (a resolved absolute path) a directory on the way to a kept entry? */
static int kept_way(const char *real) {
    for (int i = 0; C.n_kept && i < C.plan->n_kept_way; i++)
        if (strcmp(real, C.plan->kept_way[i]) == 0)
            return 1;
    return 0;
}

int creation_helper_only(int fd) {
    if (!C.n_kept)
        return 0;
    if (creation_kept_fd(fd))
        return 1;
    char link[64], real[4097];
    snprintf(link, sizeof link, "self/fd/%d", fd);
    ssize_t n = readlinkat(C.proc, link, real, sizeof real - 1);
    if (n <= 0)
        return 1;
    real[n] = 0;
    char *slash = strrchr(real, '/');
    if (!slash)
        return 1;
    *(slash == real ? slash + 1 : slash) = 0;
    return kept_way(real);
}

void creation_init(const struct ztsa_plan *plan, int root, int proc, const int *make_fds) {
    C.plan = plan;
    C.root = root;
    C.proc = proc;
    C.cont = 0;
    C.ids = NULL;
    C.n_ids = 0;
    kept_init(plan);
    if (!make_fds)
        return; /* no second ruleset: every creation is the helper's */
    C.ids = calloc((size_t)(plan->n_make ? plan->n_make : 1), sizeof *C.ids);
    if (!C.ids)
        _exit(127);
    for (int i = 0; i < plan->n_make; i++)
        if (make_fds[i] >= 0 && fstat(make_fds[i], &C.ids[C.n_ids]) == 0)
            C.n_ids++;
    C.cont = plan->cont;
}

/* Is the last component of path (trailing slashes aside) a component of a protected
   path? Only then can creating it make a protected path. */
int creation_protected_name(const char *path) {
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/')
        end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    size_t len = end - start;
    if (len == 0)
        return 1; /* "/" or "": let the slow path decide */
    for (int i = 0; i < C.plan->n_protected; i++) {
        const char *c = C.plan->protected_paths[i];
        while (*c) {
            const char *slash = strchr(c, '/');
            size_t n = slash ? (size_t)(slash - c) : strlen(c);
            if (n == len && memcmp(c, path + start, len) == 0)
                return 1;
            if (!slash)
                break;
            c = slash + 1;
        }
    }
    return 0;
}

static int is_chain(const char *rel, size_t len) {
    for (int i = 0; i < C.plan->n_chain; i++)
        if (strlen(C.plan->chain[i]) == len && memcmp(C.plan->chain[i], rel, len) == 0)
            return 1;
    return 0;
}

/* Is path (relative to at, not followed) one of the directories of CMD's make rules? */
static int has_make_rule(int at, const char *path) {
    struct stat st;
    if (fstatat(at, path, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return 0;
    for (int i = 0; i < C.n_ids; i++)
        if (C.ids[i].st_dev == st.st_dev && C.ids[i].st_ino == st.st_ino)
            return 1;
    return 0;
}

/* Does CMD's ruleset let the tree make names in this directory (opened O_PATH)? Outside
   the workspace the second ruleset grants what the first does, except in the directories
   on the way to the workspace from a writable root that contains it (cont_closed);
   inside, only beneath a directory that was a non-chain entry of a chain directory at
   spawn. */
static int make_allowed_in(int dirfd) {
    char link[64], real[4097], ws[4097];
    snprintf(link, sizeof link, "self/fd/%d", dirfd);
    ssize_t n = readlinkat(C.proc, link, real, sizeof real - 1);
    snprintf(link, sizeof link, "self/fd/%d", C.root);
    ssize_t w = readlinkat(C.proc, link, ws, sizeof ws - 1);
    if (n <= 0 || w <= 0)
        return 0;
    real[n] = 0;
    ws[w] = 0;
    /* --agent: in a kept entry or on the way to one the tree's kernel makes and opens
       nothing itself (its kept-state layer): always the helper's */
    if (C.n_kept && (kept_way(real) || creation_kept_fd(dirfd)))
        return 2;
    if (strcmp(ws, "/") == 0)
        w = 0; /* a workspace of "/": everything is inside it */
    if (strncmp(real, ws, (size_t)w) != 0 || (real[w] != '/' && real[w] != 0)) {
        /* outside the workspace: below the deepest directory on the way to it, names
           are made beneath the entries that existed there at spawn only */
        size_t deepest = 0;
        int below = 0;
        for (int i = 0; i < C.plan->n_closed; i++) {
            size_t c = strlen(C.plan->closed[i]);
            size_t cut = strcmp(C.plan->closed[i], "/") == 0 ? 0 : c;
            if (strncmp(real, C.plan->closed[i], c) != 0)
                continue;
            if (real[c] == 0)
                return 0; /* a directory on the way itself */
            if (real[cut] == '/' && (!below || cut >= deepest)) {
                deepest = cut;
                below = 1;
            }
        }
        if (!below) {
            /* beneath a writable root of its own, or nowhere the tree may write: then the
               helper performs it, so that the kernel's refusal is seen and counted */
            for (int i = 0; i < C.plan->n_make; i++) {
                size_t m = strlen(C.plan->make[i]);
                if (strncmp(real, C.plan->make[i], m) == 0 &&
                    (real[m] == '/' || real[m] == 0 || strcmp(C.plan->make[i], "/") == 0))
                    return 1;
            }
            return 0;
        }
        const char *slash = strchr(real + deepest + 1, '/');
        char entry[4097];
        size_t end = slash ? (size_t)(slash - real) : strlen(real);
        memcpy(entry, real, end);
        entry[end] = 0;
        return has_make_rule(AT_FDCWD, entry);
    }
    const char *rel = real[w] == '/' ? real + w + 1 : real + w;
    size_t at = 0, len = strlen(rel);
    for (;;) {
        if (at >= len)
            return 0; /* a chain directory itself */
        const char *slash = strchr(rel + at, '/');
        size_t end = slash ? (size_t)(slash - rel) : len;
        if (!is_chain(rel, end)) {
            char cand[4097];
            memcpy(cand, rel, end);
            cand[end] = 0;
            return has_make_rule(C.root, cand);
        }
        at = end + 1;
    }
}

void creation_forget(void) {
    memset(C.cover, 0, sizeof C.cover);
    C.n_cover = 0;
}

static struct cover_slot *cover_find(int mount_id, const struct file_handle *fh, int *hit) {
    unsigned long long hsh = 1469598103934665603ULL ^ (unsigned int)mount_id ^
                             ((unsigned long long)fh->handle_type << 32);
    for (unsigned int i = 0; i < fh->handle_bytes; i++)
        hsh = (hsh ^ fh->f_handle[i]) * 1099511628211ULL;
    for (unsigned int k = 0; k < COVER_SLOTS; k++) {
        struct cover_slot *s = &C.cover[(hsh + k) % COVER_SLOTS];
        if (!s->used) {
            *hit = 0;
            return s;
        }
        if (s->mount_id == mount_id && s->type == (unsigned int)fh->handle_type &&
            s->bytes == fh->handle_bytes && memcmp(s->h, fh->f_handle, fh->handle_bytes) == 0) {
            *hit = 1;
            return s;
        }
    }
    *hit = 0;
    return NULL;
}

/* Would CMD's second ruleset let the tree make this path's name itself (its directory
   lies where names may be made), or does the name exist? Decides only who performs a
   creation, never whether it is allowed. */
static int made_in_caller(pid_t pid, long long dirfd, const char *path) {
    size_t n = strlen(path);
    if (n == 0 || path[n - 1] == '/')
        return 0;
    /* an absolute path in the tree's view (the helper's mount namespace is the tree's);
       a relative one beneath the caller's directory of the helper's /proc */
    char full[4200], dir[4200];
    int base = path[0] == '/' ? AT_FDCWD : C.proc;
    if (path[0] == '/')
        snprintf(full, sizeof full, "%s", path);
    else if ((int)dirfd == AT_FDCWD)
        snprintf(full, sizeof full, "%d/cwd/%s", pid, path);
    else
        snprintf(full, sizeof full, "%d/fd/%d/%s", pid, (int)dirfd, path);
    size_t cut = (size_t)(strrchr(full, '/') - full);
    memcpy(dir, full, cut);
    dir[cut ? cut : 1] = 0;
    if (cut == 0)
        dir[0] = '/';
    union {
        struct file_handle fh;
        char buf[sizeof(struct file_handle) + COVER_HANDLE];
    } u;
    u.fh.handle_bytes = COVER_HANDLE;
    int mount_id, hit = 0, verdict = -1;
    if (name_to_handle_at(base, dir, &u.fh, &mount_id, AT_SYMLINK_FOLLOW) == 0) {
        struct cover_slot *slot = cover_find(mount_id, &u.fh, &hit);
        if (hit)
            verdict = slot->verdict;
    }
    if (verdict < 0) {
        /* decided on the directory opened, and kept under that directory's own handle:
           a path that a racing thread swaps meanwhile cannot file a verdict elsewhere */
        int fd = openat(base, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        verdict = fd >= 0 ? make_allowed_in(fd) : 0;
        u.fh.handle_bytes = COVER_HANDLE;
        if (fd >= 0 && name_to_handle_at(fd, "", &u.fh, &mount_id, AT_EMPTY_PATH) == 0) {
            if (C.n_cover >= COVER_SLOTS / 2)
                creation_forget();
            struct cover_slot *slot = cover_find(mount_id, &u.fh, &hit);
            if (slot && !hit) {
                slot->used = 1;
                slot->verdict = verdict;
                slot->mount_id = mount_id;
                slot->type = (unsigned int)u.fh.handle_type;
                slot->bytes = u.fh.handle_bytes;
                memcpy(slot->h, u.fh.f_handle, u.fh.handle_bytes);
                C.n_cover++;
            }
        }
        if (fd >= 0)
            close(fd);
    }
    if (verdict == 2)
        return 0;
    /* an existing name: opening it makes none, but on a read-only mount (the system, an
       agent's settings) the kernel's refusal is the helper's to count and log */
    struct stat st;
    if (fstatat(base, full, &st, 0) == 0)
        return meta_writable_at(base, full);
    return verdict;
}

/* May a file the helper made be opened by the caller's own kernel? Where the second
   ruleset exists (C.ids): a path rewritten after the helper's checks then reaches only
   what the tree's kernel lets it make or open. With a log too (the helper logs refusals,
   and this creation was not refused); not under --audit-only, whose rules differ. */
int creation_may_continue(void) {
    return C.ids != NULL && !C.plan->audit;
}

/* An O_CREAT open the caller may perform itself (1), or one for the helper (0): its
   last name is none a protected path has, and the kernel would let the tree make a
   name in its directory, or the name exists (opening it makes none). */
int creation_in_caller(pid_t pid, long long dirfd, const char *path) {
    return C.cont && !creation_protected_name(path) && made_in_caller(pid, dirfd, path);
}

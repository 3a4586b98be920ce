/* Runs in the file helper: where a path of the caller's leads, for the creations
   (create.c) and the binds of Unix sockets (unixsock.c). The protected names (the
   plan's protected paths, relative to the workspace) and the directories on the way to
   the workspace and the read-only paths; a path's parent opened O_PATH without magic
   links and off /proc; the caller's names for itself (/dev/stdout, /proc/self/...). It
   opens directories O_PATH and reads; it changes nothing. */
#include "helper.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

/* how an open names the caller itself (own_path) */
enum { OWN_NONE, OWN_FD, OWN_BENEATH };

static const struct helper *H; /* paths_init's */

/* The directories on the way to the workspace and to the read-only paths (the audit
   log, protected files outside the workspace): renaming one would put another tree in
   their place (under --audit-only, where nothing outside is read-only, or below an
   --allow-write directory that holds the workspace). (device, inode), at the start. */
static struct ancestor { dev_t dev; ino_t ino; } *ancestors;
static size_t n_ancestors, ancestors_room;

int paths_is_ancestor(const struct stat *st) {
    for (size_t i = 0; i < n_ancestors; i++)
        if (ancestors[i].dev == st->st_dev && ancestors[i].ino == st->st_ino)
            return 1;
    return 0;
}

static int note_ancestors(const char *path) {
    char buf[4097];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *slash = strrchr(buf, '/'); slash && slash != buf; slash = strrchr(buf, '/')) {
        *slash = 0;
        struct stat st;
        if (stat(buf, &st) != 0 || !S_ISDIR(st.st_mode))
            continue;
        if (paths_is_ancestor(&st))
            break; /* noted with every directory above it: protected paths share parents */
        if (n_ancestors == ancestors_room) {
            size_t room = ancestors_room ? 2 * ancestors_room : 64;
            struct ancestor *more = realloc(ancestors, room * sizeof *more);
            if (!more)
                return -1;
            ancestors = more;
            ancestors_room = room;
        }
        ancestors[n_ancestors].dev = st.st_dev;
        ancestors[n_ancestors].ino = st.st_ino;
        n_ancestors++;
    }
    return 0;
}

int paths_same_as(int fd, const char *name, int follow, const struct stat *want) {
    struct stat st;
    int r = name ? fstatat(fd, name, &st, follow ? 0 : AT_SYMLINK_NOFOLLOW) : fstat(fd, &st);
    return r == 0 && st.st_dev == want->st_dev && st.st_ino == want->st_ino;
}

/* Is the directory parentfd the workspace-relative directory dir ("" for the root)? */
static int parent_is(int parentfd, const char *dir, size_t dirlen) {
    struct stat st;
    char buf[4096];
    if (dirlen == 0)
        return paths_same_as(parentfd, NULL, 0, &H->root_st);
    if (dirlen >= sizeof buf)
        return 0;
    memcpy(buf, dir, dirlen);
    buf[dirlen] = 0;
    return fstatat(H->root, buf, &st, 0) == 0 && paths_same_as(parentfd, NULL, 0, &st);
}


/* 1: (parentfd, name) is a protected path; 2: a directory on the way to one; 0:
   neither. */
int paths_classify(int parentfd, const char *name) {
    int result = 0;
    for (int i = 0; i < H->plan->n_protected; i++) {
        const char *entry = H->plan->protected_paths[i];
        const char *start = entry;
        for (;;) {
            const char *end = strchr(start, '/');
            size_t len = end ? (size_t)(end - start) : strlen(start);
            if (len == strlen(name) && memcmp(start, name, len) == 0 &&
                parent_is(parentfd, entry, start == entry ? 0 : (size_t)(start - entry - 1))) {
                if (!end || end[1] == 0)
                    return 1;
                result = 2;
            }
            if (!end || end[1] == 0)
                break;
            start = end + 1;
        }
    }
    return result;
}


/* (dirfd, path) opened O_PATH with flags, with no magic link on the way
   (/proc/self/cwd, /proc/1/fd/N: through one the helper would reach its own files, not
   the caller's) and not on /proc: the descriptor, -errno, or PARENT_PROC. */
int paths_open_off_proc(int dirfd, const char *path, int flags) {
    struct open_how_ how = {(unsigned long long)flags, 0, RESOLVE_NO_MAGICLINKS_};
    int fd = (int)syscall(SYS_openat2_, dirfd, path, &how, sizeof how);
    if (fd < 0 && errno == ELOOP) {
        int plain = openat(dirfd, path, flags);
        if (plain < 0)
            return -ELOOP; /* a loop of ordinary links */
        close(plain);
        return PARENT_PROC;
    }
    struct statfs sfs;
    if (fd >= 0 && fstatfs(fd, &sfs) == 0 && sfs.f_type == PROC_SUPER_MAGIC_) {
        close(fd);
        return PARENT_PROC;
    }
    return fd < 0 ? -errno : fd;
}

/* The directory holding path's last component, opened O_PATH, and that component in
   name (*slash: the path ended in '/'). -errno, or PARENT_PROC. */
int paths_open_parent(int dirfd, const char *path, char *name, size_t name_size, int *slash) {
    char buf[4097];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf)
        return -(n ? ENAMETOOLONG : ENOENT);
    memcpy(buf, path, n + 1);
    *slash = 0;
    while (n > 1 && buf[n - 1] == '/') {
        buf[--n] = 0;
        *slash = 1;
    }
    char *last = strrchr(buf, '/');
    const char *dir = ".";
    const char *base = buf;
    if (last == buf) {
        dir = "/";
        base = last + 1;
    } else if (last) {
        *last = 0;
        dir = buf;
        base = last + 1;
    }
    if (*base == 0)
        base = ".";
    if (strlen(base) >= name_size)
        return -ENAMETOOLONG;
    strcpy(name, base);
    return paths_open_off_proc(dirfd, dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
}


/* The caller's names for itself (/dev/stdout, /dev/fd/N, /proc/self/..., and
   /proc/thread-self/...) would mean the helper if the helper opened them: each becomes a
   path beneath the caller's own directory of the helper's /proc. OWN_FD: "fd/N", whose
   magic link is the caller's file; OWN_BENEATH: anything else there, opened with neither
   ".." nor magic links. Every other open the helper makes that lands on procfs is
   refused (fs_op), whatever its spelling. */
static int own_path(const char *path, char *rest, size_t size) {
    static const struct { const char *from; const char *to; } map[] = {
        {"/dev/stdin", "fd/0"}, {"/dev/stdout", "fd/1"}, {"/dev/stderr", "fd/2"},
        {"/dev/fd/", "fd/"}, {"/proc/self/", ""}, {"/proc/thread-self/", ""},
    };
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        size_t n = strlen(map[i].from);
        int exact = map[i].from[n - 1] != '/';
        if (strncmp(path, map[i].from, n) != 0 || (exact && path[n] != 0))
            continue;
        int k = snprintf(rest, size, "%s%s", map[i].to, path + n);
        if (k <= 0 || (size_t)k >= size)
            return OWN_BENEATH; /* too long: openat2 gets the truncated name, and fails */
        const char *d = rest + 3;
        if (strncmp(rest, "fd/", 3) != 0 || !*d)
            return OWN_BENEATH;
        while (*d >= '0' && *d <= '9')
            d++;
        return *d ? OWN_BENEATH : OWN_FD;
    }
    return OWN_NONE;
}

int helper_own_path(const char *path, char *rest, size_t size) {
    int own = own_path(path, rest, size);
    return own == OWN_NONE ? 0 : own == OWN_FD ? HELPER_OWN_FD : HELPER_OWN_BENEATH;
}

/* for the tests (ztsa_native.h): the reading of a path that names the caller's own
   /proc entries */
int ztsa_own_path(const char *path, char *rest, size_t size) {
    return size ? helper_own_path(path, rest, size) : -1;
}

/* The ancestors of the workspace and of the read-only paths, noted at the start: 0, or
   -1 when there was no memory for them (the helper then does not start: a directory
   left out could be moved). */
int paths_init(const struct helper *h) {
    H = h;
    int noted = note_ancestors(h->plan->workspace);
    for (int i = 0; noted == 0 && i < h->plan->n_ro; i++)
        noted = note_ancestors(h->plan->ro_paths[i]);
    return noted;
}

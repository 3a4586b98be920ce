/* Runs in ztsa's own process (the gate's AGT009 and the git guard, through
   ztsa/gitlayout.py): the walk that finds every git repository below a directory,
   however deep. In C because it visits every directory of the workspace on every run
   (a node_modules holds tens of thousands), where Python spent some 10 us on each.

   Records, each a kind letter, a path and a NUL, in a buffer the caller frees with
   ztsa_free: 'D' a directory that is a git directory (HEAD beside objects or
   commondir, or any directory named .git), 'F' a `.git` entry that is not a directory,
   'T' a `.ztsa.toml` or `pyproject.toml` that is not a directory (a policy of ztsa's
   for a workspace there), 'I' an entry that is not a directory whose path ends with one
   of the caller's NAMES, path suffixes (files a tool obeys wherever they sit: an
   agent's instruction files, `.envrc`, `.vscode/tasks.json`, `.config/mise/config.toml`;
   `*` and the other fnmatch characters only in a suffix's last part, `*.code-workspace`;
   ztsa.surfaces.later_specs), or a symbolic link named as a directory of such a
   suffix, with the parts before it (`.vscode`, `.config/mise`: the tool reads the
   link's target); a superset, which the caller narrows, 'P' a directory the walk may not list (EACCES
   or EPERM; the caller decides); and for the bytecode audit (ztsa/sandbox/bytecode.py),
   which so needs no walk of its own: 'Y' an entry of a cache that a language's runtime
   loads instead of the source beside it, judged by the source's mtime and size alone
   (every entry but a directory of a `__pycache__` directory; of Ruby's bootsnap compile
   caches and their two-level subdirectories; bootsnap's load-path cache; and such a
   cache's own name when it is no directory: a symlink; and every entry but a directory
   beneath a layout directory of direnv's, `.direnv`, or devenv's, `.devenv` but its
   `state`: cached shells a `cd` evaluates, directories put first on PATH), 'V' a
   `pyvenv.cfg` that is not a directory (a virtual environment there) or a `bin/activate`
   or `bin/activate.*` (any case) outside such a cache (a venv whose pyvenv.cfg is gone:
   the shell still sources it), 'X' Python code
   that runs in place of source outside such a cache: a `*.pyc` or `*.so` entry (a
   sourceless module, an extension module) but beneath a `site-packages` or
   `dist-packages` directory, and, wherever it sits, an entry named `sitecustomize` or
   `usercustomize` (any suffix, a directory too) and what is no directory in a directory
   so named. Other
   directories that cannot be opened (gone, ELOOP after a swap for a symlink, a path
   too long) are left out. No symlink is followed but root itself: each subdirectory is
   opened beneath root's descriptor through no symlink (openat2). */
#include "common.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

struct buf {
    char *p;
    size_t len, cap;
    int failed;
};

static void put(struct buf *b, char kind, const char *path, size_t n) {
    if (b->failed)
        return;
    if (b->len + n + 2 > b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 1 << 16;
        while (b->len + n + 2 > cap)
            cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->failed = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    b->p[b->len++] = kind;
    memcpy(b->p + b->len, path, n);
    b->len += n;
    b->p[b->len++] = 0;
}

struct linux_dirent64_ {
    unsigned long long d_ino;
    long long d_off;
    unsigned short d_reclen;
    unsigned char d_type;
    char d_name[];
};

/* Directories whose entries a runtime loads in place of source (see 'Y' above). */
static int cache_name(const char *name, size_t n) {
    static const char *const names[] = {"__pycache__", "compile-cache-iseq",
                                        "compile-cache-yaml", "compile-cache-json",
                                        "bootsnap-compile-cache"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strlen(names[i]) == n && memcmp(names[i], name, n) == 0)
            return 1;
    return 0;
}

/* Is the directory PATH a cache directory: its own name, or (bootsnap's two levels,
   `compile-cache-iseq/ab/...`) its parent's, not __pycache__'s. */
static int in_cache(const char *path, size_t plen) {
    size_t end = plen, start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    if (cache_name(path + start, end - start))
        return 1;
    if (start == 0)
        return 0;
    end = start - 1;
    start = end;
    while (start > 0 && path[start - 1] != '/')
        start--;
    int pycache = end - start == 11 && memcmp(path + start, "__pycache__", 11) == 0;
    return !pycache && cache_name(path + start, end - start);
}

/* Is the directory PATH named `bootsnap` (where bootsnap keeps its load-path cache). */
static int bootsnap_dir(const char *path, size_t plen) {
    return plen >= 9 && memcmp(path + plen - 9, "/bootsnap", 9) == 0;
}

/* Is NAME (NLEN bytes) `sitecustomize` or `usercustomize`, with any suffix? */
static int customize(const char *name, size_t nlen) {
    return nlen >= 13 && (memcmp(name, "sitecustomize", 13) == 0 ||
                          memcmp(name, "usercustomize", 13) == 0) &&
           (nlen == 13 || name[13] == '.');
}

/* Is one of the directories of PATH `site-packages` or `dist-packages` (installed
   packages: their modules are judged as a virtual environment's, not as loose code)? */
static int installed(const char *path, size_t plen) {
    for (size_t i = 0; i + 14 <= plen; i++)
        if (path[i] == '/' && (memcmp(path + i + 1, "site-packages", 13) == 0 ||
                               memcmp(path + i + 1, "dist-packages", 13) == 0) &&
            (i + 14 == plen || path[i + 14] == '/'))
            return 1;
    return 0;
}

/* Is NAME in the directory PATH (DIR: NAME is a directory; CUSTOM: PATH is named
   sitecustomize or usercustomize) loose Python code (see 'X' above)? INSIDE: PATH is
   beneath site-packages (-1: not known yet, worked out here once per directory). */
static int loose(const char *path, size_t plen, const char *name, size_t nlen, int dir,
                 int custom, int *inside) {
    if (customize(name, nlen))
        return 1;
    if (dir)
        return 0;
    if (custom)
        return 1;
    int code = (nlen > 4 && memcmp(name + nlen - 4, ".pyc", 4) == 0) ||
               (nlen > 3 && memcmp(name + nlen - 3, ".so", 3) == 0);
    if (!code)
        return 0;
    if (*inside < 0)
        *inside = installed(path, plen);
    return !*inside;
}

/* Is the directory PATH (its first RLEN bytes the walk's root) in a directory that
   direnv or devenv keep their layout in (see 'Y' above): beneath the root, a component
   `.direnv`, or `.devenv` but its `state` (devenv's services' data). */
static int in_layout(const char *path, size_t plen, size_t rlen) {
    for (size_t i = rlen == 1 ? 0 : rlen; i + 8 <= plen; i++) {
        if (path[i] != '/' || path[i + 1] != '.' || (i + 8 < plen && path[i + 8] != '/'))
            continue;
        if (memcmp(path + i + 2, "direnv", 6) == 0)
            return 1;
        if (memcmp(path + i + 2, "devenv", 6) == 0 &&
            !(i + 14 <= plen && memcmp(path + i + 8, "/state", 6) == 0 &&
              (i + 14 == plen || path[i + 14] == '/')))
            return 1;
    }
    return 0;
}

/* A layout directory's own name (an entry so named that is no directory: a link). */
static int layout_name(const char *name) {
    return strcmp(name, ".direnv") == 0 || strcmp(name, ".devenv") == 0;
}

/* One of the caller's NAMES: a path suffix, its last part a name, `*SUFFIX` or an
   fnmatch pattern. */
struct suffix {
    const char *s; /* NUL-terminated: its last part too */
    size_t len, last; /* the last part's offset (0: a name alone) */
    int kind; /* 0 a name, 1 `*` then a literal end, 2 another pattern */
};

struct suffixes {
    struct suffix *v;
    size_t n;
};

static int parse_suffixes(const char *names, struct suffixes *out) {
    size_t n = 0;
    for (const char *p = names; p && *p; p += strlen(p) + 1)
        n++;
    out->n = 0;
    out->v = n ? calloc(n, sizeof *out->v) : NULL;
    if (n && !out->v)
        return -ENOMEM;
    for (const char *p = names; p && *p; p += strlen(p) + 1) {
        struct suffix *x = &out->v[out->n++];
        x->s = p;
        x->len = strlen(p);
        const char *slash = strrchr(p, '/');
        x->last = slash ? (size_t)(slash - p) + 1 : 0;
        const char *end = p + x->last;
        x->kind = !strpbrk(end, "*?[\\") ? 0 : end[0] == '*' && !strpbrk(end + 1, "*?[\\") ? 1 : 2;
    }
    return 0;
}

/* Does the directory PATH end with `/` and the first DLEN bytes of D? */
static int dir_ends(const char *path, size_t plen, const char *d, size_t dlen) {
    return dlen == 0 ||
           (plen > dlen && path[plen - dlen - 1] == '/' && memcmp(path + plen - dlen, d, dlen) == 0);
}

/* Is NAME in the directory PATH one of the suffixes (the whole), or, for a symbolic link
   (LINK), a directory part of one with the parts before it? */
static int later(const struct suffixes *sx, const char *path, size_t plen, const char *name,
                 size_t nlen, int link) {
    for (size_t i = 0; i < sx->n; i++) {
        const struct suffix *x = &sx->v[i];
        const char *end = x->s + x->last;
        size_t elen = x->len - x->last;
        int hit = x->kind == 0   ? elen == nlen && memcmp(end, name, nlen) == 0
                  : x->kind == 1 ? nlen >= elen - 1 &&
                                       memcmp(name + nlen - (elen - 1), end + 1, elen - 1) == 0
                                 : fnmatch(end, name, 0) == 0;
        if (hit && dir_ends(path, plen, x->s, x->last ? x->last - 1 : 0))
            return 1;
        for (size_t a = 0; link && a < x->last;) { /* each directory part, from a */
            size_t b = a;
            while (x->s[b] != '/')
                b++;
            if (b - a == nlen && memcmp(x->s + a, name, nlen) == 0 &&
                dir_ends(path, plen, x->s, a ? a - 1 : 0))
                return 1;
            a = b + 1;
        }
    }
    return 0;
}

/* List one directory (fd, PATH, the first RLEN bytes the root's): records for it and
   its `.git` entries, and its subdirectories appended to the stack (paths,
   NUL-separated, in *stack). */
static int list_one(int fd, const char *path, size_t plen, size_t rlen,
                    const struct suffixes *names, struct buf *out, struct buf *stack) {
    char dents[1 << 15];
    int head = 0, objects = 0;
    int cache = in_cache(path, plen) || in_layout(path, plen, rlen);
    int bootsnap = bootsnap_dir(path, plen), inside = -1;
    size_t base = plen;
    while (base > 0 && path[base - 1] != '/')
        base--;
    int custom = customize(path + base, plen - base); /* a sitecustomize package's */
    for (;;) {
        long n = syscall(SYS_getdents64, fd, dents, sizeof dents);
        if (n < 0)
            return -errno;
        if (n == 0)
            break;
        for (long off = 0; off < n;) {
            struct linux_dirent64_ *d = (struct linux_dirent64_ *)(dents + off);
            off += d->d_reclen;
            const char *name = d->d_name;
            if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
                continue;
            head |= strcmp(name, "HEAD") == 0;
            objects |= strcmp(name, "objects") == 0 || strcmp(name, "commondir") == 0;
            int type = d->d_type;
            if (type == DT_UNKNOWN) {
                struct stat st;
                type = fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? DT_UNKNOWN
                       : S_ISDIR(st.st_mode)                          ? DT_DIR
                       : S_ISLNK(st.st_mode)                          ? DT_LNK
                                                                      : DT_REG;
            }
            size_t nlen = strlen(name), at = plen == 1 && path[0] == '/' ? 1 : plen + 1;
            char full[8192];
            if (at + nlen >= sizeof full)
                continue; /* beyond any path the kernel resolves */
            memcpy(full, path, plen);
            full[at - 1] = '/';
            memcpy(full + at, name, nlen + 1);
            if (strcmp(name, ".git") == 0)
                put(out, type == DT_DIR ? 'D' : 'F', full, at + nlen);
            else if (type != DT_DIR &&
                     (strcmp(name, ".ztsa.toml") == 0 || strcmp(name, "pyproject.toml") == 0))
                put(out, 'T', full, at + nlen);
            else if (type != DT_DIR && later(names, path, plen, name, nlen, type == DT_LNK))
                put(out, 'I', full, at + nlen);
            else if (type != DT_DIR && strcmp(name, "pyvenv.cfg") == 0)
                put(out, 'V', full, at + nlen); /* a venv in a layout directory too */
            else if (!cache && type != DT_DIR && strncasecmp(name, "activate", 8) == 0 &&
                     (name[8] == 0 || name[8] == '.') && plen - base == 3 &&
                     memcmp(path + base, "bin", 3) == 0) /* not hermit's activate-hermit */
                put(out, 'V', full, at + nlen); /* its activation script, pyvenv.cfg gone */
            else if (type != DT_DIR &&
                     (cache || cache_name(name, nlen) || layout_name(name) ||
                      strcmp(name, "bootsnap-load-path-cache") == 0 ||
                      (bootsnap && strcmp(name, "load-path-cache") == 0)))
                put(out, 'Y', full, at + nlen);
            else if (!cache && loose(path + rlen, plen - rlen, name, nlen, type == DT_DIR,
                                     custom, &inside))
                put(out, 'X', full, at + nlen);
            if (type == DT_DIR)
                put(stack, 'd', full, at + nlen);
        }
    }
    if (head && objects)
        put(out, 'D', path, plen);
    return 0;
}

/* A directory below the root's descriptor by its path relative to it, through no
   symlink at all (a directory on the way swapped for one during the walk leads
   nowhere: ELOOP or EXDEV, left out like any directory that cannot be opened). */
static int open_beneath(int rootfd, const char *rel) {
    struct open_how_ {
        unsigned long long flags, mode, resolve;
    } how = {O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0, 0x08 | 0x04 | 0x02};
    /* RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS */
    int fd = (int)syscall(437 /* openat2 */, rootfd, rel, &how, sizeof how);
    if (fd < 0 && errno == ENOSYS) /* before Linux 5.6: the last component only */
        fd = openat(rootfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
    return fd;
}

static long walk(const char *root, const struct suffixes *names, char **records) {
    struct buf out = {0}, stack = {0};
    size_t rlen = strlen(root);
    while (rlen > 1 && root[rlen - 1] == '/')
        rlen--;
    char path[8192];
    if (rlen >= sizeof path)
        return 0; /* longer than any path the kernel resolves: nothing to list */
    int rootfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) {
        if (errno != EACCES && errno != EPERM)
            return 0; /* gone, or no directory: nothing to list */
        put(&out, 'P', root, rlen);
        if (out.failed)
            return -ENOMEM;
        *records = out.p;
        return (long)out.len;
    }
    put(&stack, 'd', root, rlen);
    int first = 1;
    while (stack.len && !stack.failed && !out.failed) {
        /* pop the last record: its start is after the NUL before it */
        size_t end = stack.len - 1, start = end;
        while (start > 0 && stack.p[start - 1] != 0)
            start--;
        size_t plen = end - start - 1;
        memcpy(path, stack.p + start + 1, plen + 1);
        stack.len = start;
        const char *rel = path + (rlen == 1 ? 1 : rlen + 1);
        int fd = first ? dup(rootfd) : open_beneath(rootfd, rel);
        first = 0;
        int err = fd < 0 ? errno : 0;
        if (fd >= 0) {
            err = -list_one(fd, path, plen, rlen == 1 ? 0 : rlen, names, &out, &stack);
            close(fd);
        }
        if (err == EACCES || err == EPERM)
            put(&out, 'P', path, plen);
    }
    close(rootfd);
    free(stack.p);
    if (stack.failed || out.failed) {
        free(out.p);
        return -ENOMEM;
    }
    *records = out.p;
    return (long)out.len;
}

long ztsa_git_walk(const char *root, const char *names, char **records) {
    *records = NULL;
    struct suffixes sx;
    if (parse_suffixes(names, &sx) < 0)
        return -ENOMEM;
    long got = walk(root, &sx, records);
    free(sx.v);
    return got;
}

void ztsa_free(void *p) {
    free(p);
}

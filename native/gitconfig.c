/* Runs in the file helper (create.c's rename calls it): git's own rewrite of a
   protected repository config. git writes `config.lock` and renames it onto `config`;
   the config is a read-only mount, so the rename would fail, and with it `git
   submodule update --init` and the upstream of a new branch. The helper takes that
   rename instead: it copies the lock file once into its own memory, accepts it only
   when every entry it adds is one of the few git writes for those commands
   (submodule.NAME.url/active/branch/update, branch.NAME.remote/merge/rebase naming an
   existing remote, user.name/email, a submodule's core.worktree in the workspace), and
   writes its copy through the descriptor the child opened on the real file before the
   read-only mount. Lines are read strictly, as git writes them: anything else (text
   after a section header, escapes, continued lines, a quote left open, a key that does
   not begin with a letter) refuses the whole rewrite, and each value is judged as git
   reads it (or not at all where git's versions read it differently). What the tree
   writes to the lock file afterwards reaches nothing. The ztsa_gitconfig_*
   entry points at the end call the same reader and judge for the tests, outside any
   run. */
#include "helper.h"

#include <ctype.h>
#include <errno.h>
#include <unistd.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ENTRIES 1024


struct entry {
    char key[640];    /* section[.subsection].key, section and key lower-cased */
    char value[1600]; /* as written */
};

static int name_char(int c) {
    return isalnum(c) || c == '-' || c == '.';
}

static int plain(const char *value, char *out, size_t size);

/* The entries of a config text, or -1 when a line is not one git writes. */
static int entries(const char *text, size_t n, struct entry *out, int max) {
    char section[600] = "";
    int count = 0;
    for (size_t i = 0; i < n;) {
        size_t end = i;
        while (end < n && text[end] != '\n')
            end++;
        char line[2048];
        size_t len = end - i;
        if (len >= sizeof line || memchr(text + i, 0, len))
            return -1;
        memcpy(line, text + i, len);
        line[len] = 0;
        i = end + 1;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t l = strlen(p);
        while (l && (p[l - 1] == ' ' || p[l - 1] == '\t'))
            p[--l] = 0;
        if (!*p || *p == '#' || *p == ';')
            continue;
        if (strchr(p, '\\') || strchr(p, '\r'))
            return -1; /* escapes and continued lines: not what git writes here */
        if (*p == '[') {
            char name[300], sub[300] = "";
            int has_sub = 0; /* [name ""] is a subsection too, an empty one */
            size_t k = 0;
            p++;
            while (name_char((unsigned char)*p) && k + 1 < sizeof name)
                name[k++] = (char)tolower((unsigned char)*p++);
            name[k] = 0;
            if (!k)
                return -1;
            if (*p == ' ') {
                while (*p == ' ')
                    p++;
                if (*p++ != '"')
                    return -1;
                has_sub = 1;
                size_t s = 0;
                while (*p && *p != '"' && s + 1 < sizeof sub)
                    sub[s++] = *p++;
                sub[s] = 0;
                if (*p++ != '"')
                    return -1;
            }
            if (*p++ != ']')
                return -1;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p && *p != '#' && *p != ';')
                return -1; /* a key after the header: git reads it, git never writes it */
            snprintf(section, sizeof section, "%s%s%s", name, has_sub ? "." : "", sub);
            continue;
        }
        if (!*section || !isalpha((unsigned char)*p))
            return -1; /* git reads no key that does not begin with a letter */
        char key[64];
        size_t k = 0;
        while ((isalnum((unsigned char)*p) || *p == '-') && k + 1 < sizeof key)
            key[k++] = (char)tolower((unsigned char)*p++);
        key[k] = 0;
        while (*p == ' ' || *p == '\t')
            p++;
        const char *value = "true";
        if (*p == '=') {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            value = p;
        } else if (*p) {
            return -1;
        }
        if (!k || count >= max)
            return -1;
        /* a key or value longer than its room is refused, never judged cut short: git
           reads all of it */
        if ((size_t)snprintf(out[count].key, sizeof out[count].key, "%s.%s", section, key) >=
                sizeof out[count].key ||
            (size_t)snprintf(out[count].value, sizeof out[count].value, "%s", value) >=
                sizeof out[count].value)
            return -1;
        char v[sizeof out[count].value];
        if (plain(out[count].value, v, sizeof v) == -1)
            return -1; /* a quote left open: git reads no such file */
        count++;
    }
    return count;
}

/* key "submodule.NAME.url" against "submodule.*.url" */
static int matches(const char *key, const char *pattern) {
    const char *star = strstr(pattern, ".*.");
    if (!star)
        return strcmp(key, pattern) == 0;
    size_t head = (size_t)(star - pattern) + 1, tail = strlen(star + 2), klen = strlen(key);
    return klen > head + tail && strncmp(key, pattern, head) == 0 &&
           strcmp(key + klen - tail, star + 2) == 0;
}

/* The value as git reads it (without escapes, which entries() refuses): quotes dropped,
   a comment outside them dropped, whitespace outside them dropped before and after the
   value, kept within it and inside quotes. 0; -1 when git reads no value (a quote left
   open: git refuses the file); -2 when git's versions read different ones (a tab
   outside quotes within the value: a space to older git, a tab to newer). */
static int plain(const char *value, char *out, size_t size) {
    size_t n = 0, end = 0; /* end: the value without its trailing unquoted whitespace */
    int quoted = 0, tab = 0, differ = 0; /* tab: in the unquoted whitespace since end */
    for (const char *v = value; *v && n + 1 < size; v++) {
        if (!quoted && (*v == ' ' || *v == '\t')) {
            if (n) { /* leading whitespace is no part of the value */
                tab |= *v == '\t';
                out[n++] = *v;
            }
            continue;
        }
        if (!quoted && (*v == '#' || *v == ';'))
            break;
        differ |= tab; /* that whitespace is within the value */
        tab = 0;
        if (*v == '"')
            quoted = !quoted;
        else
            out[n++] = *v;
        end = n;
    }
    out[end] = 0;
    return quoted ? -1 : differ ? -2 : 0;
}

static int one_of(const char *v, const char *const *words) {
    for (; *words; words++)
        if (strcmp(v, *words) == 0)
            return 1;
    return 0;
}

/* core.worktree (git writes it for a submodule's git directory): safe when the working
   tree it names, from the git directory, lies in the workspace */
static int worktree_inside(const char *gitdir, const char *workspace, const char *value) {
    char joined[8192], real[4097];
    if (!gitdir)
        return 0;
    snprintf(joined, sizeof joined, "%s%s%s", value[0] == '/' ? "" : gitdir,
             value[0] == '/' ? "" : "/", value);
    if (!realpath(joined, real))
        return 0;
    size_t w = strlen(workspace);
    return strncmp(real, workspace, w) == 0 && (real[w] == 0 || real[w] == '/');
}

static int safe(const struct entry *e, const struct entry *old, int n_old, const char *gitdir,
                const char *workspace) {
    static const char *const booleans[] = {"true", "false", NULL};
    static const char *const updates[] = {"checkout", "rebase", "merge", "none", NULL};
    char v[1600];
    if (plain(e->value, v, sizeof v) < 0)
        return 0; /* a value git's versions read differently: not judged */
    if (matches(e->key, "submodule.*.url"))
        return *v && *v != '-' && !strstr(v, "::"); /* no ext:: or other remote helper */
    if (matches(e->key, "submodule.*.active"))
        return one_of(v, booleans);
    if (matches(e->key, "submodule.*.update"))
        return one_of(v, updates);
    if (matches(e->key, "submodule.*.branch") || matches(e->key, "user.name") ||
        matches(e->key, "user.email"))
        return 1;
    if (matches(e->key, "branch.*.merge"))
        return strncmp(v, "refs/", 5) == 0;
    if (matches(e->key, "branch.*.rebase"))
        return one_of(v, booleans);
    if (matches(e->key, "branch.*.remote")) {
        if (strcmp(v, ".") == 0)
            return 1;
        char want[1700];
        snprintf(want, sizeof want, "remote.%s.url", v);
        for (int i = 0; i < n_old; i++)
            if (strcmp(old[i].key, want) == 0)
                return 1; /* a remote the repository already had */
        return 0;
    }
    if (matches(e->key, "core.worktree"))
        return worktree_inside(gitdir, workspace, v);
    return 0;
}

int gitconfig_acceptable(const char *old, size_t old_n, const char *new_text, size_t new_n,
                         const char *gitdir, const char *workspace) {
    static struct entry a[MAX_ENTRIES], b[MAX_ENTRIES];
    int na = entries(old, old_n, a, MAX_ENTRIES);
    int nb = na < 0 ? -1 : entries(new_text, new_n, b, MAX_ENTRIES);
    if (na < 0 || nb < 0)
        return 0;
    /* each entry of the new text beyond its count in the old one is an addition */
    for (int i = 0; i < nb; i++) {
        int in_new = 0, in_old = 0;
        for (int j = 0; j <= i; j++)
            in_new += strcmp(b[j].key, b[i].key) == 0 && strcmp(b[j].value, b[i].value) == 0;
        for (int j = 0; j < na; j++)
            in_old += strcmp(a[j].key, b[i].key) == 0 && strcmp(a[j].value, b[i].value) == 0;
        if (in_new > in_old && !safe(&b[i], a, na, gitdir, workspace))
            return 0;
    }
    return 1;
}

/* ---- the same reader and judge, for the tests (ztsa_native.h) ---- */

int ztsa_gitconfig_entries(const char *text, size_t n, char *out, size_t size) {
    struct entry *e = malloc(MAX_ENTRIES * sizeof *e);
    if (!e)
        return -2;
    int count = entries(text, n, e, MAX_ENTRIES);
    size_t o = 0;
    for (int i = 0; i < count; i++) {
        char v[1 + 1600] = "=";
        if (plain(e[i].value, v + 1, sizeof v - 1) < 0)
            v[0] = '!', v[1] = 0;
        const char *parts[3] = {e[i].key, e[i].value, v};
        for (int k = 0; k < 3; k++) {
            size_t l = strlen(parts[k]) + 1;
            if (o + l > size) {
                free(e);
                return -2;
            }
            memcpy(out + o, parts[k], l);
            o += l;
        }
    }
    free(e);
    return count;
}

/* ---- the rewrite, in the helper ---- */

/* git's rewrite of a protected config: src is `NAME.lock` beside the protected
   (dst_dir, NAME), and NAME one of the configs the child opened; that descriptor, or
   -1 for any other rename. */
int gitconfig_rewrite(const struct helper *h, int src_dir, const char *src, int dst_dir,
                      const char *dst) {
    size_t n = strlen(dst);
    struct stat a, b, target;
    if (strncmp(src, dst, n) != 0 || strcmp(src + n, ".lock") != 0 ||
        fstat(src_dir, &a) < 0 || fstat(dst_dir, &b) < 0 || a.st_dev != b.st_dev ||
        a.st_ino != b.st_ino || fstatat(dst_dir, dst, &target, AT_SYMLINK_NOFOLLOW) < 0)
        return -1;
    for (int i = 0; i < h->n_git_config_fds; i++) {
        struct stat st;
        if (fstat(h->git_config_fds[i], &st) == 0 && st.st_dev == target.st_dev &&
            st.st_ino == target.st_ino)
            return h->git_config_fds[i];
    }
    return -1;
}

/* Perform git's rewrite from the helper's own copy of the lock file, when every line
   it adds is a key git writes in ordinary work (gitconfig_acceptable, above); 0 or an errno (EACCES:
   refused). */
int gitconfig_write(const struct helper *h, int cfg, int dir, const char *lock) {
    enum { LIMIT = 1 << 20 };
    static char old[LIMIT], new_text[LIMIT];
    int fd = openat(dir, lock, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno;
    struct stat st;
    ssize_t n = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? read(fd, new_text, LIMIT) : -1;
    close(fd);
    ssize_t m = pread(cfg, old, LIMIT, 0);
    if (n < 0 || m < 0 || n == LIMIT || m == LIMIT)
        return EACCES;
    char link[64], gitdir[4097];
    snprintf(link, sizeof link, "self/fd/%d", dir);
    ssize_t g = readlinkat(h->proc, link, gitdir, sizeof gitdir - 1);
    if (g > 0)
        gitdir[g] = 0;
    if (!gitconfig_acceptable(old, (size_t)m, new_text, (size_t)n, g > 0 ? gitdir : NULL,
                              h->plan->workspace))
        return EACCES;
    if (ftruncate(cfg, 0) < 0)
        return errno;
    for (ssize_t done = 0; done < n;) {
        ssize_t w = pwrite(cfg, new_text + done, (size_t)(n - done), done);
        if (w <= 0)
            return w < 0 ? errno : EIO;
        done += w;
    }
    return unlinkat(dir, lock, 0) < 0 ? errno : 0;
}


int ztsa_gitconfig_acceptable(const char *old, size_t old_n, const char *new_text,
                              size_t new_n, const char *gitdir, const char *workspace) {
    return gitconfig_acceptable(old, old_n, new_text, new_n, gitdir, workspace);
}

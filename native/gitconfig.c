/* Runs in the file helper (helper.c's rename calls it): git's own rewrite of a
   protected repository config. git writes `config.lock` and renames it onto `config`;
   the config is a read-only mount, so the rename would fail, and with it `git
   submodule init` and the upstream of a new branch. The helper takes that rename
   instead: it copies the lock file once into its own memory, accepts it only when
   every line it adds is a key git writes in ordinary work (submodule URLs, branch
   upstreams, remotes, the identity: never a key that runs a program, includes a file
   or moves the hooks), and writes its copy through the descriptor the child opened on
   the real file before the read-only mount. What the tree writes to the lock file
   afterwards reaches nothing. */
#include "internal.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_ENTRIES 4096

/* "section[.sub].key=value" entries of a config text (section and key lower-cased);
   -1 when a line is not one git writes (continued lines, includes are still entries) */
static int entries(const char *text, size_t n, char **out, int max) {
    char section[512] = "";
    int count = 0;
    size_t i = 0;
    while (i < n) {
        size_t end = i;
        while (end < n && text[end] != '\n')
            end++;
        char line[2048];
        size_t len = end - i;
        if (len >= sizeof line)
            return -1;
        memcpy(line, text + i, len);
        line[len] = 0;
        i = end + 1;
        char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        size_t l = strlen(p);
        while (l && (p[l - 1] == ' ' || p[l - 1] == '\t' || p[l - 1] == '\r'))
            p[--l] = 0;
        if (!*p || *p == '#' || *p == ';')
            continue;
        if (l && p[l - 1] == '\\')
            return -1; /* a continued value: git never writes one */
        if (*p == '[') {
            char *close = strrchr(p, ']');
            if (!close || close[1])
                return -1;
            *close = 0;
            char *name = p + 1, *quote = strchr(name, '"');
            char sub[400] = "";
            if (quote) {
                char *last = strrchr(quote + 1, '"');
                if (!last || last[1])
                    return -1;
                *last = 0;
                snprintf(sub, sizeof sub, "%s", quote + 1);
                *quote = 0;
                size_t nl = strlen(name);
                while (nl && name[nl - 1] == ' ')
                    name[--nl] = 0;
            }
            for (char *c = name; *c; c++) {
                if (!isalnum((unsigned char)*c) && *c != '-' && *c != '.')
                    return -1;
                *c = (char)tolower((unsigned char)*c);
            }
            snprintf(section, sizeof section, "%s%s%s", name, *sub ? "." : "", sub);
            continue;
        }
        if (!*section)
            return -1;
        char *eq = strchr(p, '=');
        char *key = p, *value = eq ? eq + 1 : (char *)"true";
        if (eq) {
            *eq = 0;
            size_t kl = strlen(key);
            while (kl && (key[kl - 1] == ' ' || key[kl - 1] == '\t'))
                key[--kl] = 0;
            while (*value == ' ' || *value == '\t')
                value++;
        }
        for (char *c = key; *c; c++) {
            if (!isalnum((unsigned char)*c) && *c != '-')
                return -1;
            *c = (char)tolower((unsigned char)*c);
        }
        if (count >= max)
            return -1;
        size_t size = strlen(section) + strlen(key) + strlen(value) + 3;
        out[count] = malloc(size);
        if (!out[count])
            return -1;
        snprintf(out[count], size, "%s.%s=%s", section, key, value);
        count++;
    }
    return count;
}

/* section "submodule.NAME", key "url": matches "submodule.*.url" */
static int matches(const char *entry, const char *pattern) {
    const char *eq = strchr(entry, '=');
    size_t klen = eq ? (size_t)(eq - entry) : strlen(entry);
    const char *star = strstr(pattern, ".*.");
    if (!star)
        return strlen(pattern) == klen && strncmp(entry, pattern, klen) == 0;
    size_t head = (size_t)(star - pattern) + 1, tail = strlen(star + 2);
    return klen > head + tail && strncmp(entry, pattern, head) == 0 &&
           strncmp(entry + klen - tail, star + 2, tail) == 0;
}

static const char *const SAFE[] = {
    "submodule.*.url", "submodule.*.active", "submodule.*.branch", "submodule.*.update",
    "branch.*.remote", "branch.*.merge", "branch.*.rebase", "branch.*.pushremote",
    "branch.*.description", "remote.*.url", "remote.*.pushurl", "remote.*.fetch",
    "remote.*.push", "remote.*.tagopt", "remote.*.prune", "user.name", "user.email",
    "core.repositoryformatversion", "core.filemode", "core.logallrefupdates",
    "core.sparsecheckout", "core.sparsecheckoutcone", "core.autocrlf", "core.eol",
    "init.defaultbranch", "gc.auto", "maintenance.auto", "pull.rebase", "pull.ff",
    "push.default", "submodule.active", "fetch.prune",
};

/* core.worktree (git writes it for a submodule's git directory): safe when the working
   tree it names, from the git directory, lies in the workspace */
static int worktree_inside(const char *gitdir, const char *workspace, const char *value) {
    char joined[8192], real[4097], raw[4097];
    snprintf(raw, sizeof raw, "%s", value);
    size_t n = strlen(raw);
    if (n && raw[n - 1] == '"')
        raw[--n] = 0;
    snprintf(joined, sizeof joined, "%s%s%s", raw[0] == '/' ? "" : gitdir,
             raw[0] == '/' ? "" : "/", raw);
    if (!realpath(joined, real))
        return 0;
    size_t w = strlen(workspace);
    return strncmp(real, workspace, w) == 0 && (real[w] == 0 || real[w] == '/');
}

static int safe(const char *entry, const char *gitdir, const char *workspace) {
    const char *value = strchr(entry, '=');
    value = value ? value + 1 : "";
    while (*value == '"')
        value++;
    if (matches(entry, "core.worktree"))
        return gitdir && worktree_inside(gitdir, workspace, value);
    int ok = 0;
    for (size_t i = 0; i < sizeof SAFE / sizeof SAFE[0]; i++)
        ok |= matches(entry, SAFE[i]);
    if (!ok)
        return 0;
    if (matches(entry, "submodule.*.update") && *value == '!')
        return 0; /* a command, not checkout/rebase/merge */
    if ((matches(entry, "remote.*.url") || matches(entry, "remote.*.pushurl") ||
         matches(entry, "submodule.*.url")) && strncasecmp(value, "ext::", 5) == 0)
        return 0;
    return 1;
}

int gitconfig_acceptable(const char *old, size_t old_n, const char *new_text, size_t new_n,
                         const char *gitdir, const char *workspace) {
    static char *a[MAX_ENTRIES], *b[MAX_ENTRIES];
    int na = entries(old, old_n, a, MAX_ENTRIES);
    int nb = na < 0 ? -1 : entries(new_text, new_n, b, MAX_ENTRIES);
    int ok = na >= 0 && nb >= 0;
    /* each entry of the new text beyond its count in the old one is an addition */
    for (int i = 0; ok && i < nb; i++) {
        int in_new = 0, in_old = 0;
        for (int j = 0; j <= i; j++)
            in_new += strcmp(b[j], b[i]) == 0;
        for (int j = 0; j < na; j++)
            in_old += strcmp(a[j], b[i]) == 0;
        if (in_new > in_old && !safe(b[i], gitdir, workspace))
            ok = 0;
    }
    for (int i = 0; i < na; i++)
        free(a[i]);
    for (int i = 0; i < nb && nb > 0; i++)
        free(b[i]);
    return ok;
}

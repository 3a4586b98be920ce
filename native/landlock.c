/* Landlock rulesets. ztsa_landlock_abi runs in the supervisor (a probe); the rest in
   the spawned child, between NoNewPrivs and the filter, and in CMD (its second
   ruleset). Stateless. */
#include "child.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#define LL_CREATE_RULESET_VERSION (1U << 0)
#define LL_RULE_PATH_BENEATH 1
#define LL_READ (1ULL << 0 | 1ULL << 2 | 1ULL << 3) /* EXECUTE, READ_FILE, READ_DIR */

/* Debian 12's headers lack the newer Landlock structures: ztsa's own copies */
struct ll_ruleset_attr {
    unsigned long long handled_access_fs;
};

/* with ABI 6's scopes (handled_access_net is ABI 4's) */
struct ll_ruleset_attr_scoped {
    unsigned long long handled_access_fs, handled_access_net, scoped;
};

struct ll_path_beneath_attr {
    unsigned long long allowed_access;
    int parent_fd;
} __attribute__((packed));

int ztsa_landlock_abi(void) {
    long r = syscall(SYS_landlock_create_ruleset, NULL, 0, LL_CREATE_RULESET_VERSION);
    return r < 0 ? -errno : (int)r;
}

/* A ruleset handling `handled` that grants rights[i] (every handled right when rights
   is NULL) beneath fds[i], with the scopes `scoped` (ABI 6; 0: none), restricting this
   process. The fds are closed here; -1 is a path that did not exist, which allows
   nothing. 0 or -errno. */
int restrict_beneath(unsigned long long handled, int *fds, const unsigned long long *rights,
                     int n, unsigned long long scoped) {
    struct ll_ruleset_attr_scoped attr = {handled, 0, scoped};
    size_t size = scoped ? sizeof attr : sizeof attr.handled_access_fs;
    int ruleset = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
    int err = ruleset < 0 ? errno : 0;
    for (int i = 0; i < n; i++) {
        if (fds[i] < 0)
            continue;
        struct ll_path_beneath_attr pb = {(rights ? rights[i] : handled) & handled, fds[i]};
        /* a rule granting nothing handled (a read rule when reads are not handled) */
        if (!err && pb.allowed_access && syscall(SYS_landlock_add_rule, ruleset, LL_RULE_PATH_BENEATH, &pb, 0) < 0)
            err = errno;
        close(fds[i]);
    }
    if (!err && syscall(SYS_landlock_restrict_self, ruleset, 0) < 0)
        err = errno;
    if (ruleset >= 0)
        close(ruleset);
    return -err;
}

/* The first ruleset: the handled rights only beneath the given paths (and scopes, when
   it is the tree's last). 0 or -errno. */
int apply_landlock(const char *const *paths, const unsigned long long *rights, int n,
                   unsigned long long handled, unsigned long long scoped, int read_fd) {
    int *fds = calloc((size_t)n + 1, sizeof *fds);
    unsigned long long *all = calloc((size_t)n + 1, sizeof *all);
    if (!fds || !all) {
        free(fds);
        free(all);
        return -ENOMEM;
    }
    for (int i = 0; i < n; i++) {
        fds[i] = open(paths[i], O_PATH | O_CLOEXEC);
        all[i] = rights[i];
    }
    /* read_fd: one more directory to read beneath (a duplicate: the rule closes it) */
    fds[n] = read_fd >= 0 ? fcntl(read_fd, F_DUPFD_CLOEXEC, 3) : -1;
    all[n] = LL_READ;
    int r = restrict_beneath(handled, fds, all, n + 1, scoped);
    free(fds);
    free(all);
    return r;
}

/* The scopes alone, in a ruleset of their own (no second ruleset to carry them). */
int restrict_scope(unsigned long long scoped) {
    return scoped ? restrict_beneath(0, NULL, NULL, 0, scoped) : 0;
}

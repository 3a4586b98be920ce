/* The spawn's exec of ztsa-ns (docs/install.md, "ztsa-ns"): ns_prepare runs in the
   supervisor before the fork (ztsa-ns opened, so that a file swapped at its path later
   is not what runs; the plan in a sealed memfd; ztsa-ns's arguments), ns_exec in the
   fork's child once the tracer has seized it, ns_release in the supervisor after the
   fork. Where ztsa-ns is not installed the child sets itself up in-process instead
   (child.c, child_setup), with the same plan. */
#include "child.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_execveat
#define SYS_execveat 322
#endif

int ns_prepare(const struct ztsa_plan *plan, const char *ns, int efd, struct ns_exec *x) {
    *x = (struct ns_exec){.ns_fd = -1, .plan_fd = -1};
    x->ns_fd = open(ns, O_PATH | O_CLOEXEC);
    if (x->ns_fd < 0)
        return -errno;
    struct stat st;
    int e = fstat(x->ns_fd, &st) < 0 ? errno : S_ISREG(st.st_mode) ? 0 : EACCES;
    if (!e && (x->plan_fd = plan_memfd(plan)) < 0)
        e = -x->plan_fd;
    if (e) {
        ns_release(x);
        return -e;
    }
    snprintf(x->num[0], sizeof x->num[0], "%d", x->plan_fd);
    snprintf(x->num[1], sizeof x->num[1], "%d", efd);
    snprintf(x->num[2], sizeof x->num[2], "%d", supervisor_counters_fd());
    const char *argv[] = {"ztsa-ns", "--plan-fd", x->num[0], "--err-fd", x->num[1],
                          "--shared-fd", x->num[2], NULL};
    memcpy(x->argv, argv, sizeof argv);
    return 0;
}

void ns_release(struct ns_exec *x) {
    if (x->ns_fd >= 0)
        close(x->ns_fd);
    if (x->plan_fd >= 0)
        close(x->plan_fd);
    x->ns_fd = x->plan_fd = -1;
}

static void inherit(int fd) {
    int flags = fd >= 0 ? fcntl(fd, F_GETFD) : -1;
    if (flags >= 0)
        fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC);
}

/* In the fork's child: ztsa-ns in this process, through the descriptor opened before
   the fork, with the plan's descriptors and ztsa-ns's own kept across the exec and an
   empty environment (CMD's is in the plan). */
void ns_exec(const struct ztsa_plan *plan, const struct ns_exec *x, int efd) {
    inherit(x->plan_fd);
    inherit(efd);
    inherit(supervisor_counters_fd());
    if (plan->helper)
        inherit(plan->log_fd);
    for (int i = 0; i < plan->n_keep_fds; i++)
        inherit(plan->keep_fds[i]);
    char *const envp[] = {NULL};
    syscall(SYS_execveat, x->ns_fd, "", (char *const *)x->argv, envp, AT_EMPTY_PATH);
    fail_at(efd, ZTSA_STEP_NS, errno);
}

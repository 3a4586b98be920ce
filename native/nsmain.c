/* ztsa-ns: the child's set-up as an executable of its own (docs/install.md, "ztsa-ns").
   The supervisor's spawn forks, seizes the child, and the child execs this program
   through a descriptor opened before the fork (nsexec.c):

       ztsa-ns --plan-fd N --err-fd N --shared-fd N

   N: the plan on a sealed memfd (planwire.c), the error pipe (the failed step and its
   errno, as the in-process set-up writes them), the counters the helper shares with
   the supervisor (-1: none). It reads and decodes the plan first; a plan that does not
   decode is exit 125, and nothing of the set-up runs. Then it runs what the fork's
   child runs in-process without it (child.c's child_setup: namespaces, the keeper, the
   helper as pid 1, CMD's own set-up and exec). Where AppArmor lets only named programs
   make user namespaces, this is the program a profile names (`ztsa doctor
   --apparmor-profile`).

       ztsa-ns --probe USERNS

   what a child of this program can make (ztsa_ns_probe): the exit status is 0 all of
   it, 1 no user and mount namespace, 2 no PID and IPC namespace, 3 the probe failed.

   Started any other way, it says so and exits 125. Built by setup.py beside the
   launcher, never into the Python extension (native/build_native.py leaves it out). */
#include "child.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define PLAN_MAX (256U << 20)
#define EXIT_REFUSED 125

/* a descriptor number as written by ns_prepare: -1, or 0 to INT_MAX */
static int number(const char *s, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < -1 || v > INT_MAX)
        return -1;
    *out = (int)v;
    return 0;
}

/* the plan's bytes, read from a sealed memfd into memory of our own; NULL (*err) */
static unsigned char *read_plan(int fd, size_t *n, int *err) {
    struct stat st;
    int seals = fcntl(fd, F_GET_SEALS);
    int need = F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE;
    if (fstat(fd, &st) < 0 || seals < 0) {
        *err = errno;
        return NULL;
    }
    /* sealed: the bytes decoded are the bytes the supervisor wrote, whoever else holds
       the memfd */
    if ((seals & need) != need || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
        (unsigned long long)st.st_size > PLAN_MAX) {
        *err = EINVAL;
        return NULL;
    }
    unsigned char *buf = malloc((size_t)st.st_size);
    if (!buf) {
        *err = ENOMEM;
        return NULL;
    }
    size_t done = 0;
    while (done < (size_t)st.st_size) {
        ssize_t k = pread(fd, buf + done, (size_t)st.st_size - done, (off_t)done);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            *err = k < 0 ? errno : EINVAL;
            free(buf);
            return NULL;
        }
        done += (size_t)k;
    }
    *n = done;
    return buf;
}

static void refuse(int efd, int err) {
    int code = (ZTSA_STEP_PLAN << 16) | (err & 0xFFFF);
    if (efd < 0 || write(efd, &code, sizeof code) != sizeof code)
        fprintf(stderr, "ztsa-ns: cannot read the plan: %s\n", strerror(err));
    _exit(EXIT_REFUSED);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "--probe") == 0 &&
        (strcmp(argv[2], "0") == 0 || strcmp(argv[2], "1") == 0)) {
        int r = ztsa_ns_probe(argv[2][0] == '1');
        return r < 0 ? 3 : r;
    }
    int plan_fd = -1, efd = -1, shared_fd = -1;
    if (argc != 7 || strcmp(argv[1], "--plan-fd") || strcmp(argv[3], "--err-fd") ||
        strcmp(argv[5], "--shared-fd") || number(argv[2], &plan_fd) < 0 || plan_fd < 0 ||
        number(argv[4], &efd) < 0 || efd < 0 || number(argv[6], &shared_fd) < 0) {
        fprintf(stderr, "ztsa-ns: the set-up of `ztsa exec`, which starts it; it is no "
                        "command of its own\n");
        return EXIT_REFUSED;
    }
    if (fcntl(efd, F_GETFD) < 0) {
        fprintf(stderr, "ztsa-ns: --err-fd %d: no such descriptor\n", efd);
        return EXIT_REFUSED;
    }
    size_t n = 0;
    int err = 0;
    unsigned char *bytes = read_plan(plan_fd, &n, &err);
    struct ztsa_plan *plan = bytes ? plan_decode(bytes, n, &err) : NULL;
    free(bytes);
    if (!plan)
        refuse(efd, err);
    close(plan_fd);
    struct ztsa_shared *shared = NULL;
    if (shared_fd >= 0) {
        struct stat st;
        void *m = fstat(shared_fd, &st) == 0 && st.st_size == (off_t)sizeof *shared
            ? mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED, shared_fd, 0)
            : MAP_FAILED;
        if (m == MAP_FAILED)
            refuse(efd, EINVAL);
        shared = m;
        close(shared_fd);
    }
    child_setup(plan, efd, shared);
    return EXIT_REFUSED; /* not reached */
}

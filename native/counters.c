/* Runs in the supervisor: the counters the file helper shares with it (struct
   ztsa_shared, common.h), on a memfd mapped here, so that ztsa-ns, which the child
   execs, maps the same pages (its --shared-fd); the helper writes them, the supervisor
   reads them (ztsa_helper_*). */
#include "common.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static struct ztsa_shared *shared;
static int shared_fd = -1;

struct ztsa_shared *supervisor_counters(int helper, int *err) {
    if (helper && !shared) {
        int fd = memfd_create("ztsa-counters", MFD_CLOEXEC);
        if (fd < 0 || ftruncate(fd, sizeof *shared) < 0) {
            *err = errno;
            if (fd >= 0)
                close(fd);
            return NULL;
        }
        void *m = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            *err = errno;
            close(fd);
            return NULL;
        }
        shared = m;
        shared_fd = fd;
    }
    if (shared)
        memset(shared, 0, sizeof *shared);
    return shared;
}

int supervisor_counters_fd(void) {
    return shared ? shared_fd : -1;
}

unsigned long ztsa_helper_denials(void) {
    return shared ? __atomic_load_n(&shared->denials, __ATOMIC_RELAXED) : 0;
}

unsigned long ztsa_helper_would_deny(void) {
    return shared ? __atomic_load_n(&shared->would, __ATOMIC_RELAXED) : 0;
}

unsigned long ztsa_helper_connects(void) {
    return shared ? __atomic_load_n(&shared->connects, __ATOMIC_RELAXED) : 0;
}

const char *ztsa_helper_first_denial(int i) {
    if (!shared || i < 0 || i >= ZTSA_FIRST_DENIALS)
        return "";
    return shared->first[i];
}

int ztsa_procs_unlimited(void) {
    return shared ? __atomic_load_n(&shared->no_pid_max, __ATOMIC_RELAXED) : 0;
}

int ztsa_inotify_unbounded(void) {
    return shared ? __atomic_load_n(&shared->no_inotify, __ATOMIC_RELAXED) : 0;
}

/* Runs in the file helper: Unix sockets of the tree (in its own network namespace),
   named by a path or an abstract name: connect (net.c hands it over with its copy of
   the address), bind (NET_UNIX, from netbind.c) and the decision on an addressed send
   (netsend.c). A path is resolved once (unix_open_at, allow.c), decided on the socket
   file it reaches, and connected or sent to through the helper's own
   /proc/self/fd/N, the same file; a bind makes its name from the
   helper's copy, in the parent it opened, never a protected name. An abstract name
   reaches the tree's own namespace, or the host's through a socket of the helper's
   when --allow-unix names it. It works on its own duplicates of the tree's sockets. */
#include "helper.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

static const struct helper *H; /* unixsock_init's */

void unixsock_init(const struct helper *h) { H = h; }

/* bind(2) of a Unix socket to a path makes a name without any other syscall the filter
   sees: the helper refuses a protected name and binds the others itself, on a duplicate
   of the caller's socket, from its own copy of the address. Every bind, a path's or
   not, is made on that duplicate: the caller's kernel would look the descriptor and the
   address up again (a host socket there, AF_INET in the bytes). Autobind and abstract
   names make no name in the file system. */
static struct reply bind_here(const struct seccomp_notif *req, const void *sa,
                              unsigned int len) {
    int sock = helper_getfd((pid_t)req->pid, (int)(unsigned int)req_arg(req, ZTSA_ARG_FD));
    if (sock < 0)
        return RESULT(sock == -ESRCH ? -ESRCH : -EBADF);
    long r = net_is_host(sock) ? -EINVAL /* bound already: a socket the helper connected */
             : bind(sock, sa, len) < 0 ? -errno : 0;
    close(sock);
    return RESULT(r);
}

/* the bind of sock to (par, name), a path's last component, once the parent is open:
   the answer */
static long bind_path(pid_t pid, int sock, int par, const char *name, int slash,
                      const char *path) {
    if (net_is_host(sock))
        return -EINVAL; /* bound already: a socket the helper connected */
    if (par == PARENT_PROC) {
        helper_log_denial(pid, "bind", path, "", "a /proc file the helper would open as itself");
        return -EACCES;
    }
    if (par < 0)
        return par;
    if (slash)
        return -ENOENT; /* as the kernel answers a socket path with a trailing slash */
    if (paths_classify(par, name) == 1) {
        helper_log_denial(pid, "bind", path, "", "protected agent file");
        return -EACCES;
    }
    caller_use_umask(pid);
    struct sockaddr_un mine = {AF_UNIX, {0}};
    snprintf(mine.sun_path, sizeof mine.sun_path, "%.*s", (int)sizeof mine.sun_path - 1, name);
    /* the helper's cwd is its own: bound by name in the parent it opened */
    long r = fchdir(par) == 0 ? bind(sock, (struct sockaddr *)&mine, sizeof mine) : -1;
    r = r < 0 ? -errno : 0;
    if (fchdir(H->root) < 0)
        _exit(1);
    return r;
}

struct reply unixsock_bind(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    unsigned int len = (unsigned int)req_arg(req, ZTSA_ARG_ADDRLEN);
    struct sockaddr_un sa;
    size_t head = offsetof(struct sockaddr_un, sun_path);
    if (len > sizeof sa)
        return RESULT(-EINVAL);
    memset(&sa, 0, sizeof sa);
    if (len && caller_read(pid, req_arg(req, ZTSA_ARG_ADDR), &sa, len) < 0)
        return RESULT(-EFAULT);
    if (len <= head || sa.sun_family != AF_UNIX || sa.sun_path[0] == 0)
        return bind_here(req, &sa, len);
    char path[sizeof sa.sun_path + 1];
    size_t plen = strnlen(sa.sun_path, len - head);
    memcpy(path, sa.sun_path, plen);
    path[plen] = 0;
    int fd1 = helper_dirfd(pid, AT_FDCWD, path);
    if (fd1 < 0)
        return RESULT(fd1);
    int sock = helper_getfd(pid, (int)(unsigned int)req_arg(req, ZTSA_ARG_FD));
    if (sock < 0 || !helper_still_valid(req->id)) {
        helper_close_dirfd(fd1);
        if (sock >= 0)
            close(sock);
        return RESULT(sock < 0 ? sock : -ESRCH); /* not a socket: bind(2) would say so */
    }
    char name[256];
    int slash = 0;
    int par = paths_open_parent(fd1, path, name, sizeof name, &slash);
    helper_close_dirfd(fd1);
    long result = bind_path(pid, sock, par, name, slash, path);
    if (par >= 0)
        close(par);
    close(sock);
    return RESULT(result);
}

/* the connect of dup to (addr, addrlen) (a path's: through the helper's fd directory),
   never blocking the helper: a full backlog is tried again soon (NET_WAIT) */
static long connect_made(int dup, const void *addr, unsigned int addrlen, int by_path) {
    int here = by_path ? helper_enter_fd_dir() : 0;
    int flags = fcntl(dup, F_GETFL);
    if (flags >= 0 && !(flags & O_NONBLOCK))
        fcntl(dup, F_SETFL, flags | O_NONBLOCK);
    long r = here < 0 ? -1 : syscall(SYS_connect, dup, addr, addrlen);
    long result = r < 0 ? -errno : r;
    if (flags >= 0 && !(flags & O_NONBLOCK))
        fcntl(dup, F_SETFL, flags);
    if ((result == -EAGAIN || result == -EINPROGRESS) && flags >= 0 && !(flags & O_NONBLOCK))
        result = net_wait(-1);
    if (by_path)
        helper_leave_fd_dir();
    return result;
}

/* the connect's line: the helper decides every connect of the tree's */
static void log_connect(pid_t pid, int dup, const unsigned char *sa, unsigned int len,
                        const char *real, int by_path, int why, const char *why_text,
                        long result) {
    if (H->plan->log_fd < 0 || why == ZTSA_DENY_UNNAMED || result == NET_WAIT)
        return;
    char where[4200];
    if (by_path)
        snprintf(where, sizeof where, "%s", real);
    else
        snprintf(where, sizeof where, "@%.*s", len > 3 ? (int)(len - 3) : 0,
                 (const char *)sa + 3);
    int type = net_sockopt(dup, SOL_SOCKET, SO_TYPE);
    const char *text = why_text ? why_text : why > 0 ? "allowed" : "Unix socket not allowed";
    net_log(why > 0 ? "connect" : "deny", pid, "connect", AF_UNIX, where, type, text, result);
}

/* A connect to a Unix address, decided by ztsa_decide (allow.c, the decision every path
   uses) and net_unix_decide, and performed here on a duplicate of the caller's socket
   from the helper's own copy of the address: nothing the tree rewrites afterwards
   reaches the kernel. A path is resolved once (unix_open_at) and connected through
   /proc/self/fd/N, the same file. sa: net.c's copy of the address (AF_UNIX). */
long unixsock_connect(const struct seccomp_notif *req, const unsigned char *sa,
                      unsigned int len) {
    pid_t pid = (pid_t)req->pid;
    int fd = (int)(unsigned int)req_arg(req, ZTSA_ARG_FD);
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    if (!helper_still_valid(req->id)) {
        close(dup);
        return -ESRCH;
    }
    const void *addr = sa;
    unsigned int addrlen = len;
    int pathfd = -1;
    char real[4097] = "";
    struct sockaddr_un target;
    if (len > 2 && sa[2] != 0) { /* net.c sends only AF_UNIX here */
        pathfd = unix_open_at(H->proc, pid, (const char *)sa + 2, len - 2, real, sizeof real);
        if (pathfd < 0) {
            close(dup);
            return pathfd; /* no such socket: the caller's connect fails the same way */
        }
        /* connected as "N" from the helper's own fd directory of its /proc (the tree's
           /proc does not show the helper) */
        memset(&target, 0, sizeof target);
        target.sun_family = AF_UNIX;
        int k = snprintf(target.sun_path, sizeof target.sun_path, "%d", pathfd);
        addr = &target;
        addrlen = (unsigned int)(offsetof(struct sockaddr_un, sun_path) + (size_t)k + 1);
    }
    int rule;
    const char *why_text = NULL;
    int why;
    if (pathfd >= 0)
        why = net_unix_decide(pid, pathfd, ZTSA_CALL_CONNECT, sa, len, real, &why_text);
    else
        why = ztsa_decide(&H->plan->allow, ZTSA_CALL_CONNECT, -1, sa, len, NULL, &rule);
    if (pathfd < 0 && why < 0 && why != ZTSA_DENY_UNNAMED) /* --audit-only: logged, allowed */
        why = net_audit_unix(pid, why, len > 3 ? "(abstract)" : "", ZTSA_CALL_CONNECT,
                             &why_text);
    long result;
    int host = net_is_host(dup);
    int abstract = len > 2 && sa[2] == 0;
    if (abstract && (why > 0 ? !host : host)) {
        /* an abstract name: the tree's own namespace has its own (connected on the tree's
           socket, below); one --allow-unix names is the host's, reached by a socket of
           the helper's; a host socket reaches no other */
        result = why > 0 ? net_swap_connect(req, dup, fd, sa, len,
                                            why_text ? why_text : "--allow-unix")
                         : -EPERM;
    } else if (why == ZTSA_DENY_UNNAMED) {
        result = -EINVAL; /* as the kernel answers an address without a path */
    } else if (why > 0 || abstract) {
        result = connect_made(dup, addr, addrlen, pathfd >= 0);
        if (why <= 0)
            why = 1; /* the tree's own abstract name */
    } else {
        result = -EPERM;
        char shown[4200];
        snprintf(shown, sizeof shown, "unix:%s", real[0] ? real : "(abstract)");
        helper_note_denial(helper_count_denial(), "connect", shown,
                           why == ZTSA_DENY_NET ? "not in --allow-net"
                           : why_text           ? why_text
                                                : "Unix socket not allowed");
    }
    helper_count_connect();
    log_connect(pid, dup, sa, len, real, pathfd >= 0, why, why_text, result);
    if (pathfd >= 0)
        close(pathfd);
    close(dup);
    return result;
}
/* The decision on a Unix socket path resolved to pathfd (real: where it is): an
   --allow-unix entry, or a socket inside the workspace that the tree itself bound (the
   socket's inode among the tree's namespace's sockets: a hard link or a rename of an
   outside server's socket into the workspace is not the tree's). > 0 allows. */
int net_unix_decide(pid_t pid, int pathfd, int call, const void *sa, unsigned int len, const char *real,
                    const char **why_text) {
    int rule;
    int why = ztsa_decide(&H->plan->allow, call, -1, sa, len, real, &rule);
    static char listed[4200];
    if (why == ZTSA_ALLOW_UNIX)
        snprintf(listed, sizeof listed, "--allow-unix %s", H->plan->allow.unix_paths[rule]);
    *why_text = why == ZTSA_ALLOW_UNIX ? listed
                : why > 0 ? "inside the workspace"
                          : "Unix socket not allowed (outside the workspace, not in --allow-unix)";
    if (why == ZTSA_ALLOW_WORKSPACE) {
        struct stat st;
        if (fstat(pathfd, &st) < 0 || !net_tree_owns_unix(st.st_dev, st.st_ino)) {
            *why_text = "Unix socket in the workspace bound by no process of the tree";
            why = ZTSA_DENY_OUTSIDE;
        }
    }
    return why < 0 && why != ZTSA_DENY_UNNAMED ? net_audit_unix(pid, why, real, call, why_text)
                                                : why;
}

/* --audit-only: a Unix socket the enforced run would refuse is logged so and allowed */
int net_audit_unix(pid_t pid, int why, const char *real, int call, const char **why_text) {
    if (!H->plan->audit)
        return why;
    unsigned long count = helper_count_would();
    if (H->plan->log_fd >= 0 && helper_may_log(count))
        net_log("deny", pid, call == ZTSA_CALL_CONNECT ? "connect" : "sendto", AF_UNIX,
                real && real[0] ? real : "(unresolved)", 0,
                *why_text ? *why_text : "Unix socket not allowed (not in --allow-unix)", 0);
    *why_text = "--audit-only (a Unix socket the enforced run refuses)";
    return ZTSA_ALLOW_AUDIT;
}


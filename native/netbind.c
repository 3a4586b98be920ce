/* Runs in the file helper, with a network namespace for the tree: bind and listen of
   IP sockets. A bind of an --allow-listen port is made on a host socket put in place
   of the tree's (inbound); any other is the tree's own namespace's. A host socket
   listens only when it is one of those. */
#include "helper.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static const struct helper *H; /* netbind_init's */

void netbind_init(const struct helper *h) { H = h; }

/* the --allow-listen sockets the helper made: a loopback connect to their port is the
   tree's own server only when one of them listens there */
#define MAX_LISTENERS 64
static ino_t listeners[MAX_LISTENERS];
static int n_listeners;

static void note_listener(int s) {
    struct stat st;
    if (fstat(s, &st) == 0 && n_listeners < MAX_LISTENERS)
        listeners[n_listeners++] = st.st_ino;
}

long net_bind(const struct seccomp_notif *req) {
    pid_t pid = (pid_t)req->pid;
    unsigned int len = (unsigned int)req_arg(req, ZTSA_ARG_ADDRLEN);
    unsigned char sa[128];
    if (len < 2 || len > sizeof sa || caller_read(pid, req_arg(req, ZTSA_ARG_ADDR), sa, len) < 0 ||
        (sa[0] | sa[1] << 8) == AF_UNIX)
        return NET_UNIX; /* unixsock.c's bind of a socket path, or the kernel's answer */
    const unsigned char *a = NULL;
    int port = 0;
    int version = net_ip_of(sa, len, &a, &port);
    int listed = 0;
    for (int i = 0; version && port && i < H->plan->n_listen; i++)
        listed |= H->plan->listen_ports[i] == port;
    int fd = (int)(unsigned int)req_arg(req, ZTSA_ARG_FD);
    int dup = helper_getfd(pid, fd);
    if (dup < 0)
        return -EBADF;
    if (net_is_host(dup)) { /* a socket the helper connected: it is not the tree's to bind */
        close(dup);
        return -EINVAL;
    }
    if (!listed) { /* bound in the tree's namespace: nothing outside reaches it */
        long r = bind(dup, (struct sockaddr *)sa, len) < 0 ? -errno : 0;
        close(dup);
        return r;
    }
    int tree_flags = fcntl(dup, F_GETFL);
    int type = net_sockopt(dup, SOL_SOCKET, SO_TYPE);
    long r = net_host_socket(dup);
    if (r >= 0) {
        int s = (int)r;
        r = bind(s, (struct sockaddr *)sa, len) < 0 ? -errno : 0;
        if (r == 0)
            r = helper_still_valid(req->id) ? net_install(req, s, fd) : -ESRCH;
        if (r == 0)
            note_listener(s);
        if (r == 0)
            fcntl(s, F_SETFL, tree_flags >= 0 ? tree_flags : 0);
        close(s);
    }
    close(dup);
    char spec[64];
    snprintf(spec, sizeof spec, "--allow-listen %d", port);
    net_log_allowed(pid, "listen", version, a, port, type, spec, r);
    return r;
}

/* listen(2): on the helper's duplicate; a host socket listens only when it is one the
   helper made for --allow-listen (a connect that failed leaves a host TCP socket
   unbound, and a listen would bind it to a port of the host's, for anyone) */
long net_listen(const struct seccomp_notif *req) {
    int dup = helper_getfd((pid_t)req->pid, (int)(unsigned int)req_arg(req, ZTSA_ARG_FD));
    if (dup < 0)
        return dup == -ESRCH ? -ESRCH : -EBADF;
    long r;
    struct stat st;
    int ours = 0;
    if (net_is_host(dup) && fstat(dup, &st) == 0)
        for (int i = 0; i < n_listeners; i++)
            ours |= listeners[i] == st.st_ino;
    if (net_is_host(dup) && !ours)
        r = -EINVAL;
    else
        r = listen(dup, (int)req_arg(req, ZTSA_ARG_BACKLOG)) < 0 ? -errno : 0;
    close(dup);
    return r;
}

/* Is the host's (version, a, port) where a listener the helper made for --allow-listen
   takes connections? Bound to that very address, or to its family's wildcard: the port
   alone would also name a host service on another loopback address or family, beside
   which the tree bound its own. */
int net_host_listener_is_ours(int type, int version, const unsigned char *a, int port) {
    return n_listeners && net_listens_on_host(type, version, a, port, listeners, n_listeners);
}


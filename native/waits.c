/* Runs in the file helper, with a network namespace for the tree: the tree's calls
   that wait, answered later while the helper goes on with the others.
     - a blocking TCP connect in progress (waits_connect): the tree's thread waits in its
       notification; the answer goes when the helper's copy of the socket is connected
       or failed (SO_ERROR), when SO_SNDTIMEO passes (EINPROGRESS), or when a signal the
       thread does not block is pending (EINTR: its connect goes on, and a later connect
       waits for it again). The tree's own call never runs on a host socket: a CONTINUE
       would let it reread an address another thread rewrote after a shutdown();
     - a call that would wait for room (NET_WAIT, waits_later): a send on a full socket,
       a connect to a Unix listener's full backlog. The notification stays unanswered;
       the whole call is decided and made again from fresh copies (helper_redo) when the
       socket is writable, or after a tick; SO_SNDTIMEO's expiry is EAGAIN, a pending
       signal EINTR. */
#include "helper.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define REQ_COPY 256 /* room for one notification in a deferred call's slot */
#define MAX_WAITING 256
#define MAX_RETRIES 256

/* Blocking TCP connects in progress: the tree's call waits in its notification while
   the helper goes on; the answer goes when the socket is connected or failed. The
   tree's own call never runs on a host socket (a CONTINUE would let it reread an
   address that another thread rewrote after a shutdown). */
struct waiting {
    unsigned long long id;
    int fd; /* the helper's copy of the connecting socket, -1: free */
    unsigned long long deadline; /* SO_SNDTIMEO's, 0: none */
    pid_t pid;
    int version, port, type;
    unsigned char addr[16];
    char rule[512];
};

/* Calls made again later (NET_WAIT: the tree's call would wait, for room to send or a
   listener's backlog): the notification stays unanswered, the helper goes on, and the
   whole call is decided and made again from fresh copies when the socket is writable
   (or after a tick). SO_SNDTIMEO's expiry is EAGAIN; a pending signal, EINTR. */
struct retry {
    int used;
    int fd; /* the helper's copy of the socket to poll, -1: the tick only */
    unsigned long long deadline, next;
    char req[REQ_COPY];
};

/* This feature's state, the context's (struct helper's waits). */
struct waits {
    struct waiting waiting[MAX_WAITING];
    int n_waiting;
    struct retry later[MAX_RETRIES];
    /* while a deferred call is made again: its first wait's SO_SNDTIMEO deadline (0:
       none), which a wait again keeps (the timeout bounds the whole call, as the
       kernel's does, not each retry) */
    int redoing;
    unsigned long long redo_deadline;
};

/* h->req_size: the kernel's size of a notification, which every deferred copy keeps
   whole; NULL when it is unknown or larger than a slot (nothing could be deferred), or
   without memory */
struct waits *waits_new(const struct helper *h) {
    if (h->req_size < sizeof(struct seccomp_notif) || h->req_size > REQ_COPY)
        return NULL;
    struct waits *w = calloc(1, sizeof *w);
    for (int i = 0; w && i < MAX_RETRIES; i++)
        w->later[i].fd = -1;
    return w;
}


/* After a non-blocking connect of the helper's socket s (r: its result) that is the
   tree's now: the answer, or NET_DEFER with the wait registered (blocking: a stream
   socket whose file is not O_NONBLOCK). Takes s. */
long waits_connect(const struct helper *h, const struct seccomp_notif *req, int s, long r,
                   int tree_flags, int type, int version, const unsigned char *a, int port,
                   const char *rule) {
    struct waits *W = h->waits;
    if (r == -EALREADY && type == SOCK_STREAM && !(tree_flags & O_NONBLOCK))
        r = -EINPROGRESS; /* a blocking connect again (after EINTR): it waits again */
    if (r != -EINPROGRESS || type != SOCK_STREAM || (tree_flags & O_NONBLOCK)) {
        close(s);
        return r;
    }
    /* a loopback handshake is usually over by now: answer at once rather than after
       another turn of the helper's loop */
    struct pollfd now = {s, POLLOUT, 0};
    if (poll(&now, 1, 0) == 1 && now.revents) {
        int err = 0;
        socklen_t el = sizeof err;
        getsockopt(s, SOL_SOCKET, SO_ERROR, &err, &el);
        close(s);
        return -err;
    }
    struct waiting *w = NULL;
    for (int i = 0; i < MAX_WAITING && !w; i++)
        if (i >= W->n_waiting || W->waiting[i].fd < 0)
            w = &W->waiting[i];
    if (!w) {
        close(s);
        return -EAGAIN;
    }
    if (w - W->waiting >= W->n_waiting)
        W->n_waiting = (int)(w - W->waiting) + 1;
    struct timeval tv = {0, 0};
    socklen_t tl = sizeof tv;
    getsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl);
    unsigned long long timeo = (unsigned long long)tv.tv_sec * 1000000000ULL +
                               (unsigned long long)tv.tv_usec * 1000ULL;
    w->id = req->id;
    w->fd = s;
    w->deadline = timeo ? net_mono_ns() + timeo : 0;
    w->pid = (pid_t)req->pid;
    w->version = version;
    w->port = port;
    w->type = type;
    memset(w->addr, 0, 16);
    if (a)
        memcpy(w->addr, a, version == 4 ? 4 : 16);
    snprintf(w->rule, sizeof w->rule, "%s", rule ? rule : "");
    return NET_DEFER;
}

int waits_connect_fds(const struct helper *h, struct pollfd *out, int max) {
    const struct waits *W = h->waits;
    int k = 0;
    for (int i = 0; i < W->n_waiting && k < max; i++)
        if (W->waiting[i].fd >= 0)
            out[k++] = (struct pollfd){W->waiting[i].fd, POLLOUT, 0};
    return k;
}

/* a signal the thread does not block is pending: its wait ends (EINTR), as the kernel's
   wait for a connect would */
int waits_signal_pending(const struct helper *h, pid_t tid) {
    char where[64], buf[2048];
    snprintf(where, sizeof where, "%d/status", (int)tid);
    if (!read_proc_at(h->proc, where, buf, sizeof buf))
        return 0;
    unsigned long long pending = 0, blocked = 0;
    const char *p = strstr(buf, "\nSigPnd:");
    pending |= p ? strtoull(p + 8, NULL, 16) : 0;
    p = strstr(buf, "\nShdPnd:");
    pending |= p ? strtoull(p + 8, NULL, 16) : 0;
    p = strstr(buf, "\nSigBlk:");
    blocked = p ? strtoull(p + 8, NULL, 16) : 0;
    return (pending & ~blocked) != 0;
}

#define SIGNAL_TICK_MS 50 /* how often a waiting connect looks for a signal */

int waits_connect_timeout_ms(const struct helper *h) {
    const struct waits *W = h->waits;
    unsigned long long now = net_mono_ns(), first = 0;
    int any = 0;
    for (int i = 0; i < W->n_waiting; i++) {
        if (W->waiting[i].fd < 0)
            continue;
        any = 1;
        if (W->waiting[i].deadline && (!first || W->waiting[i].deadline < first))
            first = W->waiting[i].deadline;
    }
    if (!any)
        return -1;
    int ms = !first ? SIGNAL_TICK_MS : first <= now ? 0 : (int)((first - now) / 1000000ULL) + 1;
    return ms < SIGNAL_TICK_MS ? ms : SIGNAL_TICK_MS;
}

void waits_connect_ready(const struct helper *h, const struct pollfd *fds, int n) {
    struct waits *W = h->waits;
    unsigned long long now = net_mono_ns();
    for (int i = 0; i < W->n_waiting; i++) {
        struct waiting *w = &W->waiting[i];
        if (w->fd < 0)
            continue;
        int ready = 0;
        for (int k = 0; k < n; k++)
            ready |= fds[k].fd == w->fd && fds[k].revents;
        long result;
        if (ready) {
            int err = 0;
            socklen_t el = sizeof err;
            getsockopt(w->fd, SOL_SOCKET, SO_ERROR, &err, &el);
            result = -err;
        } else if (w->deadline && w->deadline <= now) {
            result = -EINPROGRESS; /* SO_SNDTIMEO passed, as the kernel answers it */
        } else if (waits_signal_pending(h, w->pid)) {
            result = -EINTR; /* the connect goes on; a later connect waits for it again */
        } else {
            continue;
        }
        helper_result(h, w->id, result);
        if (w->rule[0]) /* the tree's own connects are not logged */
            net_log_allowed(w->pid, "connect", w->version, w->addr, w->port, w->type, w->rule,
                            result);
        close(w->fd);
        w->fd = -1;
    }
}

#define RETRY_TICK_MS 10

int waits_later(const struct helper *h, const struct seccomp_notif *req) {
    struct waits *W = h->waits;
    struct retry *w = NULL;
    for (int i = 0; i < MAX_RETRIES && !w; i++)
        if (!W->later[i].used)
            w = &W->later[i];
    if (!w || h->req_size > sizeof w->req) {
        net_wait_forget();
        return -EAGAIN;
    }
    w->used = 1;
    w->fd = net_wait_take(); /* the retry's now */
    if ((const void *)w->req != (const void *)req) /* a call made again keeps its slot */
        memcpy(w->req, req, h->req_size);
    unsigned long long now = net_mono_ns();
    w->next = now + RETRY_TICK_MS * 1000000ULL;
    w->deadline = 0;
    struct timeval tv = {0, 0};
    socklen_t tl = sizeof tv;
    if (W->redoing)
        w->deadline = W->redo_deadline;
    else if (w->fd >= 0 && getsockopt(w->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, &tl) == 0 &&
        (tv.tv_sec || tv.tv_usec))
        w->deadline = now + (unsigned long long)tv.tv_sec * 1000000000ULL +
                      (unsigned long long)tv.tv_usec * 1000ULL;
    return 0;
}

int waits_later_fds(const struct helper *h, struct pollfd *out, int max, int *timeout) {
    const struct waits *W = h->waits;
    int k = 0, any = 0;
    for (int i = 0; i < MAX_RETRIES; i++) {
        if (!W->later[i].used)
            continue;
        any = 1;
        if (W->later[i].fd >= 0 && k < max)
            out[k++] = (struct pollfd){W->later[i].fd, POLLOUT, 0};
    }
    if (any && (*timeout < 0 || *timeout > RETRY_TICK_MS))
        *timeout = RETRY_TICK_MS;
    return k;
}

void waits_later_ready(const struct helper *h, const struct pollfd *fds, int n) {
    struct waits *W = h->waits;
    unsigned long long now = net_mono_ns();
    for (int i = 0; i < MAX_RETRIES; i++) {
        struct retry *w = &W->later[i];
        if (!w->used)
            continue;
        const struct seccomp_notif *req = (const struct seccomp_notif *)w->req;
        int ready = w->next <= now;
        for (int k = 0; k < n; k++)
            ready |= w->fd >= 0 && fds[k].fd == w->fd && (fds[k].revents & (POLLOUT | POLLERR |
                                                                            POLLHUP));
        long r = 0;
        int gone = !helper_still_valid(req->id);
        if (!gone && waits_signal_pending(h, (pid_t)req->pid))
            r = -EINTR;
        else if (!gone && w->deadline && w->deadline <= now)
            r = -EAGAIN;
        else if (!gone && !ready)
            continue;
        if (w->fd >= 0)
            close(w->fd);
        w->used = 0;
        w->fd = -1;
        if (gone)
            continue; /* the caller is gone */
        if (r)
            helper_result(h, req->id, r);
        else { /* decided and made again: it may wait again, until the same deadline */
            W->redoing = 1;
            W->redo_deadline = w->deadline;
            helper_redo(h, req);
            W->redoing = 0;
        }
    }
}

/* Runs in the file helper: the process the spawned child becomes once it has forked
   CMD. It is CMD's parent and an ancestor of the whole tree, with the tree's
   credentials, namespaces and first Landlock domain, and no filter. It answers the
   filter's user notifications: the name-creating syscalls (create.c), the calls that
   change a file's metadata (metadata.c), umask (caller.c), file locks (locks.c), and
   the network calls of a
   tree in its own network namespace (net*.c, unixsock.c; the helper runs exactly when
   the tree has one). For each it copies the arguments once into its own memory
   (caller.c), takes the directory descriptors, checks that the notification is still
   live, and then decides and performs on its own copies only: nothing the tree rewrites
   afterwards reaches a decision or an operation. This file is its loop and dispatch:
   it builds the context (struct helper, helper.h) whole, starts each feature with it,
   then polls the listener beside the DNS service's sockets and the deferred calls. Its
   state is its own; it shares only the counters in struct ztsa_shared with the
   supervisor, and writes lines to the plan's log fd. */
#include "helper.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NOTIF_SET_FLAGS _IOW('!', 4, unsigned long long)
#define NOTIF_SYNC_WAKE_UP 1ULL

/* helper_main's, complete before the loop starts: for helper_still_valid, which the
   features whose calls come from everywhere call */
static const struct helper *H;

/* How to answer one notification: by its row of the table of system calls. */
static struct reply decide(const struct helper *h, const struct seccomp_notif *req) {
    const struct ztsa_syscall *c = ztsa_sys((long)req->data.nr);
    int op = c ? c->op : ZTSA_OP_OTHER;
    if (op == ZTSA_OP_CONNECT || op == ZTSA_OP_BIND || op == ZTSA_OP_SEND ||
        op == ZTSA_OP_LISTEN) {
        long r = net_notification(req);
        if (r == NET_UNIX)
            return unixsock_bind(req);
        if (r == NET_WAIT)
            return waits_later(h, req) < 0 ? RESULT(-EAGAIN) : ELSEWHERE;
        return r == NET_DEFER ? ELSEWHERE : RESULT(r);
    }
    if (op == ZTSA_OP_UMASK)
        return umask_notification(req);
    if (op == ZTSA_OP_LOCK)
        return locks_notification(h, req, c); /* fcntl: its lock requests only */
    if (!c)
        return RESULT(-ENOSYS);
    int open = op == ZTSA_OP_OPEN;
    unsigned long long flags = open ? req->data.args[sys_arg(c, ZTSA_ARG_OFLAGS)] : 0;
    if (h->plan->audit) {
        audit_fs(h, req, c);
        if (open && !(flags & (O_CREAT | O_WRONLY | O_RDWR | O_TRUNC)))
            return CONTINUE; /* a read, sent here only to be judged */
    }
    if (open && (flags & O_PATH))
        return CONTINUE; /* open and openat drop O_CREAT (and O_TRUNC) beside O_PATH: the
                            kernel makes and writes nothing, and the flags are registers
                            of the waiting caller, which no thread can rewrite */
    if (meta_op(op) && !(open && (flags & O_CREAT))) {
        int cont;
        long r = meta_notification(h, req, c, &cont);
        /* cont 2: a write open the helper performed (--agent's kept state) */
        return cont == 1 ? CONTINUE : cont == 2 ? (struct reply){REPLY_FD, 0, (int)r} : RESULT(r);
    }
    return create_notification(h, req, c);
}

/* Send the reply: the opened file (ADDFD, placed as the syscall's result), a result,
   or CONTINUE (the caller's kernel performs the call). */
void helper_answer(const struct helper *h, const struct seccomp_notif *req, struct reply r) {
    static char resp_buf[4096];
    struct seccomp_notif_resp *resp = (struct seccomp_notif_resp *)resp_buf;
    if (r.kind == REPLY_ELSEWHERE)
        return;
    if (r.kind == REPLY_FD) {
        struct seccomp_notif_addfd add;
        memset(&add, 0, sizeof add);
        add.id = req->id;
        add.flags = SECCOMP_ADDFD_FLAG_SEND;
        add.srcfd = (unsigned int)r.fd;
        int oflags = sys_arg(ztsa_sys((long)req->data.nr), ZTSA_ARG_OFLAGS); /* creat: none */
        add.newfd_flags = oflags < 0 ? 0 : (unsigned int)(req->data.args[oflags] & O_CLOEXEC);
        int ok = ioctl(h->lfd, SECCOMP_IOCTL_NOTIF_ADDFD, &add);
        close(r.fd);
        if (ok >= 0 || errno == ENOENT)
            return;
        r = RESULT(-errno);
    }
    memset(resp, 0, h->resp_size);
    resp->id = req->id;
    resp->val = 0;
    resp->error = r.kind == REPLY_CONTINUE ? 0 : (int)r.result;
    if (r.kind == REPLY_CONTINUE)
        resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
    ioctl(h->lfd, SECCOMP_IOCTL_NOTIF_SEND, resp);
}

void helper_result(const struct helper *h, unsigned long long id, long result) {
    struct seccomp_notif req;
    memset(&req, 0, sizeof req);
    req.id = id;
    helper_answer(h, &req, RESULT(result));
}

/* The kernel's sizes of a notification and of an answer, into h; -1 when the helper's
   buffers (4096 bytes) or a deferred call's copy could not hold them. */
static int notif_sizes(struct helper *h) {
    struct seccomp_notif_sizes sizes;
    if (syscall(SYS_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0)
        return -1;
    h->req_size = sizes.seccomp_notif > sizeof(struct seccomp_notif)
                      ? sizes.seccomp_notif : sizeof(struct seccomp_notif);
    h->resp_size = sizes.seccomp_notif_resp > sizeof(struct seccomp_notif_resp)
                       ? sizes.seccomp_notif_resp : sizeof(struct seccomp_notif_resp);
    return h->req_size > 4096 || h->resp_size > 4096 ? -1 : 0;
}

/* Wait for the next notification, serving the DNS service and the deferred calls
   meanwhile; 1 with one in req, 0 to ask again. Ends the helper when the tree is gone. */
static int next_notification(const struct helper *h, struct seccomp_notif *req) {
    static struct pollfd fds[1 + 32 + 256 + 256 + 257];
    fds[0] = (struct pollfd){h->lfd, POLLIN, 0};
    int n_dns = dns_poll_fds(h, fds + 1, 32);
    int n_net = waits_connect_fds(h, fds + 1 + n_dns, 256);
    int t1 = dns_timeout_ms(h), t2 = waits_connect_timeout_ms(h);
    int timeout = t1 < 0 ? t2 : t2 < 0 ? t1 : t1 < t2 ? t1 : t2;
    int n_retry = waits_later_fds(h, fds + 1 + n_dns + n_net, 256, &timeout);
    int n_relay = relay_fds(h, fds + 1 + n_dns + n_net + n_retry, 257);
    int t3 = relay_timeout_ms(h);
    if (t3 >= 0 && (timeout < 0 || t3 < timeout))
        timeout = t3;
    int nfds = 1 + n_dns + n_net + n_retry + n_relay;
    if (poll(fds, (nfds_t)nfds, timeout) < 0) {
        if (errno == EINTR)
            return 0;
        _exit(1);
    }
    dns_ready(h, fds + 1, n_dns);
    waits_connect_ready(h, fds + 1 + n_dns, n_net);
    waits_later_ready(h, fds + 1 + n_dns + n_net, n_retry);
    relay_ready(h, fds + 1 + n_dns + n_net + n_retry, n_relay);
    if (!(fds[0].revents & POLLIN)) {
        if (fds[0].revents & (POLLHUP | POLLERR))
            _exit(0); /* the tree is gone */
        return 0;
    }
    memset(req, 0, h->req_size);
    /* EINTR, or the caller died (ENOENT): ask again */
    return ioctl(h->lfd, SECCOMP_IOCTL_NOTIF_RECV, req) == 0;
}

void helper_main(const struct ztsa_plan *plan, int lfd, int root, int proc, int host_proc,
                 struct ztsa_shared *shared, const int *net, const int *git_config_fds,
                 int n_git_config_fds) {
    static struct helper h;
    h = (struct helper){.plan = plan, .lfd = lfd, .root = root, .proc = proc,
                        .host_proc = host_proc, .self = getpid(), .shared = shared,
                        .git_config_fds = git_config_fds,
                        .n_git_config_fds = n_git_config_fds, .net = net};
    /* the kernel's sizes first: the deferred answers (waits.c) keep whole copies of
       notifications, so they must know a notification's size before anything defers */
    if (fstat(root, &h.root_st) < 0)
        _exit(127);
    if (notif_sizes(&h) < 0)
        _exit(1);
    /* the loop's features' state, made from the fields above */
    h.waits = waits_new(&h);
    h.dns = dns_new(&h);
    h.relay = relay_new(&h);
    if (!h.waits || !h.dns || !h.relay)
        _exit(1);
    H = &h; /* complete: from here on, read only */
    caller_init(H);
    log_init(H);
    unixsock_init(H);
    if (paths_init(H) < 0)
        _exit(127); /* no memory to note the ancestors: one left out could be moved */
    net_init(H); /* the tree's network */
    /* Linux 6.6+: the caller and the helper switch on one CPU instead of waking each
       other across CPUs (an interprocessor interrupt per syscall); older: ignored. The
       flag wakes the poll on the listener the same way (the helper always polls: the
       DNS service's sockets and the deferred calls beside the listener). */
    (void)ioctl(lfd, NOTIF_SET_FLAGS, (unsigned long long)NOTIF_SYNC_WAKE_UP);
    static char req_buf[4096];
    struct seccomp_notif *req = (struct seccomp_notif *)req_buf;
    for (;;)
        if (next_notification(H, req))
            helper_answer(H, req, decide(H, req));
}

void helper_redo(const struct helper *h, const struct seccomp_notif *req) {
    helper_answer(h, req, decide(h, req));
}

int helper_still_valid(unsigned long long id) {
    return ioctl(H->lfd, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) == 0;
}

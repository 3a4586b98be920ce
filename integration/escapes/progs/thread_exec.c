/* A non-leader thread calls execve: the kernel turns it into the leader (the old thread
   id disappears without an exit report). The exec'd program must still be traced. */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static char *prog;
static char *arg;

static void *run(void *unused) {
    (void)unused;
    char *argv[] = {prog, "-c", arg, NULL};
    char *envp[] = {"PATH=/usr/bin:/bin", NULL};
    execve(prog, argv, envp);
    perror("execve");
    return NULL;
}

int main(int argc, char **argv) {
    prog = argv[1];
    arg = argv[2];
    pthread_t t;
    pthread_create(&t, NULL, run, NULL);
    pthread_join(t, NULL);
    return 1;
}

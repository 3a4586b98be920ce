/* Runs in the file helper, with a network namespace for the tree: the network's audit
   lines (connect, send, listen, deny), the refusals counted in the shared counters,
   and --audit-only's lines of what the enforced run would refuse. It writes through
   log.c only. */
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

static const struct helper *H; /* netlog_init's */

void netlog_init(const struct helper *h) { H = h; }

static void show_addr(int version, const unsigned char *a, int port, char *out, size_t size) {
    char ip[INET6_ADDRSTRLEN] = "";
    inet_ntop(version == 4 ? AF_INET : AF_INET6, a, ip, sizeof ip);
    if (port < 0)
        snprintf(out, size, "%s", ip);
    else if (version == 4)
        snprintf(out, size, "%s:%d", ip, port);
    else
        snprintf(out, size, "[%s]:%d", ip, port);
}


static const char *proto_name(int type) {
    return type == SOCK_STREAM ? "tcp" : type == SOCK_DGRAM ? "udp" : "other";
}

static void log_net(const char *event, pid_t pid, const char *syscall_name, int family,
                    const char *address, int port, int type, const char *rule,
                    const char *result, const char *extra) {
    char e_rule[1024], fields[2048], e_addr[512];
    helper_json(rule, e_rule, sizeof e_rule);
    helper_json(address, e_addr, sizeof e_addr);
    const char *fam = family == AF_INET ? "inet" : family == AF_INET6 ? "inet6" : "unix";
    char portbuf[16] = "null";
    if (port >= 0)
        snprintf(portbuf, sizeof portbuf, "%d", port);
    int deny = strcmp(event, "deny") == 0;
    snprintf(fields, sizeof fields,
             "\"pid\":%d,\"tid\":%d,%s%s%s\"family\":\"%s\",\"address\":\"%s\",\"port\":%s,"
             "\"protocol\":\"%s\",\"decision\":\"%s\",\"rule\":\"%s\"%s%s%s",
             helper_host_tgid(pid), helper_host_pid(pid), deny ? "\"syscall\":\"" : "",
             deny ? syscall_name : "", deny ? "\"," : "", fam, e_addr, portbuf,
             proto_name(type), deny ? "deny" : "allow", e_rule, result ? ",\"result\":" : "",
             result ? result : "", extra);
    helper_log_event(event, fields);
}

/* a call's result as the log's "result": 0, or the errno name in quotes */
static const char *result_text(long result, char *buf, size_t size) {
    if (result >= 0)
        snprintf(buf, size, "0");
    else
        snprintf(buf, size, "\"%s\"", helper_errno_name((int)-result));
    return buf;
}

void net_log(const char *event, pid_t pid, const char *call, int family, const char *address,
             int type, const char *rule, long result) {
    if (H->plan->log_fd < 0)
        return;
    char res[48];
    log_net(event, pid, call, family, address, -1, type, rule,
            strcmp(event, "deny") == 0 ? NULL : result_text(result, res, sizeof res),
            strcmp(event, "deny") == 0 ? audit_unenforced() : "");
}

/* A destination no rule allows: counted and logged, and refused (-EPERM); not enforced
   (audit_net): counted and logged as what the enforced run would have refused. */
long net_deny(pid_t pid, const char *call, int version, const unsigned char *a,
                     int port, int type, int enforced) {
    char shown[128];
    show_addr(version, a, port, shown, sizeof shown);
    /* on loopback, nothing of the tree's listens there: a host's service needs a rule */
    char for_program[4200];
    snprintf(for_program, sizeof for_program, "not in --allow-net for program %s",
             net_caller_exe()[0] ? net_caller_exe() : "(unknown)");
    const char *why = H->plan->allow.n_programs > 0 ? for_program
                      : net_is_loopback(version, a)
                          ? "not in --allow-net (no server of the tree listens there; the "
                            "host's loopback is reached only by a rule naming it)"
                          : "not in --allow-net";
    unsigned long count = enforced ? helper_count_denial() : helper_count_would();
    if (enforced)
        helper_note_denial(count, call, shown, "not in --allow-net");
    if (H->plan->log_fd >= 0 && helper_may_log(count))
        log_net("deny", pid, call, version == 4 ? AF_INET : AF_INET6, shown, port, type, why,
                NULL, enforced ? "" : ",\"enforced\":false");
    return -EPERM;
}

/* --audit-only: a destination no rule allows is logged as refused and then allowed (1),
   unless a policy denies it (0) */
int net_audit(pid_t pid, const char *call, int version, const unsigned char *a,
                     int port, int type, char *rule, size_t size) {
    if (!H->plan->audit || net_is_denied(version, a))
        return 0;
    net_deny(pid, call, version, a, port, type, 0);
    snprintf(rule, size, "--audit-only (not in --allow-net)");
    return 1;
}

void net_log_allowed(pid_t pid, const char *event, int version, const unsigned char *a,
                     int port, int type, const char *rule, long result) {
    if (H->plan->log_fd < 0)
        return;
    char ip[128], res[48];
    show_addr(version, a, -1, ip, sizeof ip);
    log_net(event, pid, event, version == 4 ? AF_INET : AF_INET6, ip, port, type, rule,
            result_text(result, res, sizeof res), "");
}

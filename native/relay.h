/* The relay's files (relay.c, the file helper's half; relayproc.c, the relay process):
   their one message. */
#ifndef ZTSA_RELAY_H
#define ZTSA_RELAY_H

#include "common.h"

#define RELAY_RULES 32

struct relay_msg {
    char kind; /* 'C' helper->relay: a connection; 'A' relay->helper: the tree's socket
                  is connected (result); 'D' relay->helper: a first flight refused */
    unsigned long long id;
    int pid, result, version, port, n_rules, len, ff, enforced;
    unsigned char addr[16];
    unsigned char sa[128];
    int rules[RELAY_RULES]; /* dns_names entries that learnt the address for this port */
    char name[256], name2[256];
    char rule[512];
};

#endif

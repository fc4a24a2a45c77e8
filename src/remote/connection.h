/* connection.h — the remote tier's connections to Redis (hiredis): connect and operation
 * timeouts, AUTH and SELECT on connect, idle connections kept for the next request, one retry
 * on a fresh connection when a kept one turns out dead (a restarted server), and a back-off
 * after repeated failures during which nothing is tried. Commands that go together are
 * pipelined (one round trip). Thread-safe. */
#ifndef PTXJIT_REMOTE_CONNECTION_H
#define PTXJIT_REMOTE_CONNECTION_H

#include "remote/config.h"

/* Failures in a row that start a back-off. */
#define PJ_REMOTE_FAILURES_BEFORE_BACKOFF 3

typedef enum {
    PJ_LINK_OK,     /* done (GET: a value) */
    PJ_LINK_NIL,    /* GET: no such key */
    PJ_LINK_FAILED, /* the server could not be reached or answered an error; counted */
    PJ_LINK_DOWN    /* backing off: nothing was tried */
} pj_link_result;

typedef struct pj_remote_link pj_remote_link;

/* Connects lazily: opening never touches the network. config must outlive the link. */
ptxjit_status pj_link_open(pj_remote_link **out, const pj_remote_config *config,
                           const pj_logger *logger);
void pj_link_close(pj_remote_link *link);
/* GET name: PJ_LINK_OK with *value (caller frees) and *size. */
pj_link_result pj_link_get(pj_remote_link *link, const char *name, char **value, size_t *size);
/* SET name value. */
pj_link_result pj_link_set(pj_remote_link *link, const char *name, const char *value,
                           size_t size);
/* What a lease holds once its holder gave up (compiled nothing it could publish): this
 * prefix and the holder. */
#define PJ_LEASE_GIVEN_UP "given-up:"

/* SET lease holder NX PX ttl_ms, GET lease, then GET name, in one round trip (the lease
 * first: a lease taken after its holder published still sees the entry). *won: the lease was
 * free and is now holder's, or was holder's already (a claim retried after a lost reply);
 * *given_up: its holder gave up (pj_link_give_up_held); then as pj_link_get (PJ_LINK_NIL: no
 * entry). */
pj_link_result pj_link_claim(pj_remote_link *link, const char *lease, const char *holder,
                             int ttl_ms, const char *name, int *won, int *given_up,
                             char **value, size_t *size);
/* PEXPIRE lease ttl_ms; and SET lease PJ_LEASE_GIVEN_UP<holder> PX ttl_ms: each only while
 * the lease names holder (one script, EVAL); *held 0 when it names another or none. A server
 * that refuses EVAL gets the plain command (logged once) and *held stays 1. */
pj_link_result pj_link_expire_held(pj_remote_link *link, const char *lease, const char *holder,
                                   int ttl_ms, int *held);
pj_link_result pj_link_give_up_held(pj_remote_link *link, const char *lease, const char *holder,
                                    int ttl_ms, int *held);

#endif

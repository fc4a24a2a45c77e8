/* connection.h — the remote tier's connections to Redis, through ptxjit's own RESP2 client
 * (resp.h over transport.h): AUTH and SELECT on connect, idle connections kept for the next
 * request, one retry on a fresh connection when a kept one turns out dead (a restarted
 * server), and a back-off after repeated failures during which nothing is tried. Commands
 * that go together are pipelined (one round trip; a fresh connection's AUTH and SELECT go in
 * it too). Two bounds hold whatever the server does:
 *   time: an exchange — connecting if need be, AUTH, SELECT, sending the commands, reading
 *   every byte of their replies, the retry included — ends within connect_ms + op_ms of its
 *   start, the connect alone within connect_ms of its own;
 *   memory: a reply holds at most the size limit's bytes (config max_value_bytes, the limit
 *   on what is published) plus a few KiB; a larger value is refused at its header, unread.
 * Thread-safe. */
#ifndef PTXJIT_REMOTE_CONNECTION_H
#define PTXJIT_REMOTE_CONNECTION_H

#include "remote/config.h"

/* Failures in a row that start a back-off. */
#define PJ_REMOTE_FAILURES_BEFORE_BACKOFF 3

typedef enum {
    PJ_LINK_OK,      /* done (GET: a value) */
    PJ_LINK_NIL,     /* GET: no such key */
    PJ_LINK_TOO_BIG, /* GET: the value is over the size limit, refused at its header and not
                        read (the connection is closed: the rest of it is still coming); not
                        a failure of the server's, not counted toward the back-off */
    PJ_LINK_FAILED,  /* the server could not be reached, answered an error, broke the
                        protocol or the deadline; counted */
    PJ_LINK_DOWN     /* backing off: nothing was tried */
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

/* ---- the entries' notes, for `ptxjit explain` (remote/remote.h) ---- */

/* Notes a list keeps, newest first: the window `explain` compares a request with. */
#define PJ_LINK_NOTES_KEPT 256
/* LPUSH list value, then LTRIM list 0 PJ_LINK_NOTES_KEPT-1: one round trip. */
pj_link_result pj_link_push_note(pj_remote_link *link, const char *list, const char *value,
                                 size_t size);
/* LINDEX list first .. first+count-1 (count at most 4), pipelined: values[i] (caller frees
 * each; NULL past the list's end) and sizes[i]. */
pj_link_result pj_link_note_range(pj_remote_link *link, const char *list, int first, int count,
                                  char **values, size_t *sizes);

/* ---- the compile lease's commands (remote/lease.h) ---- */

/* What a lease holds once its holder gave up (compiled nothing it could publish): this
 * prefix and the holder. */
#define PJ_LEASE_GIVEN_UP "given-up:"
/* While held, a lease holds "<holder>/<renewal>": each renewal writes the next number, so
 * that a waiter can tell a holder that is alive (the value changes every third of a TTL) from
 * one that died or a lease nobody renews (it stays the same). */
#define PJ_LEASE_RENEWAL "/"

/* What a claim found. */
typedef struct {
    int won;          /* the lease was free and holds value now, or held value already (a
                         claim retried after a lost reply) */
    int given_up;     /* its holder gave up (pj_link_give_up_held) */
    char *held;       /* what the lease holds now (NULL: nothing); caller frees */
    size_t held_size;
    char *value;      /* the entry, with PJ_LINK_OK; caller frees */
    size_t size;
} pj_link_claimed;

/* SET lease value NX PX ttl_ms, GET lease, then GET name, in one round trip (the lease
 * first: a lease taken after its holder published still sees the entry); then as
 * pj_link_get (PJ_LINK_NIL: no entry). *out is filled with PJ_LINK_OK and PJ_LINK_NIL. */
pj_link_result pj_link_claim(pj_remote_link *link, const char *lease, const char *value,
                             int ttl_ms, const char *name, pj_link_claimed *out);
/* SET lease next PX ttl_ms; and SET lease PJ_LEASE_GIVEN_UP<holder> PX ttl_ms: each only while
 * the lease holds a value of holder's ("<holder>/..."; one script, EVAL); *held 0 when it
 * holds another's or none. A server that refuses EVAL gets the plain command, unchecked
 * (logged once: SET ... XX PX for the renewal, so that its value still changes), and *held
 * stays 1. */
pj_link_result pj_link_renew_held(pj_remote_link *link, const char *lease, const char *holder,
                                  const char *next, int ttl_ms, int *held);
pj_link_result pj_link_give_up_held(pj_remote_link *link, const char *lease, const char *holder,
                                    int ttl_ms, int *held);
/* DEL lease, only while it holds exactly value (a script: EVAL). *removed: 1 removed; 0 it
 * holds something else now; -1 the server refuses EVAL, and nothing was done. */
pj_link_result pj_link_remove_stale(pj_remote_link *link, const char *lease, const char *value,
                                    size_t size, int *removed);

#endif

/* lease.h — which node of the fleet compiles a key that every node misses: a lease in Redis,
 * "ptxjit:v<N>:lease:<key>" = "<host>:<pid>:<n>/<renewal>", set with NX and a TTL. Its holder
 * renews it from a thread of its own while it compiles, writing the next renewal number each
 * time, so a lease outlives no holder by more than its TTL, and a compile may take longer
 * than the TTL. The holder does not delete a lease after publishing (whoever takes it next
 * also reads the entry, in the same round trip); one it publishes nothing under (its compile
 * failed, the entry is over the size limit, the server refused it) it gives up: the lease
 * then says so for one TTL, and every node waiting for it or asking meanwhile compiles at
 * once, alone, instead of taking the lease in turn and failing one after another. Renewal
 * and giving up act only while the lease still names the holder (connection.h): one that
 * expired and went to another node is left to that node.
 * A waiter watches the lease's value: one that has not changed for longer than a TTL is
 * stale — its holder stopped renewing, or no ptxjit node wrote it (a lease planted without
 * an expiry, or with a huge one) — and is removed, only if it still holds that value, and
 * taken; so such a lease delays a node one TTL, once per value (pj_lease_watch). */
#ifndef PTXJIT_REMOTE_LEASE_H
#define PTXJIT_REMOTE_LEASE_H

#include "remote/connection.h"

typedef struct pj_lease pj_lease;

/* What one try found. */
typedef enum {
    PJ_CLAIM_WON,    /* the lease is ours (*lease renews it) and there is no entry */
    PJ_CLAIM_ENTRY,  /* the entry is there (*value; a lease taken with it is left to expire) */
    PJ_CLAIM_TAKEN,  /* another holder has it, no entry yet */
    PJ_CLAIM_GIVEN_UP, /* its last holder published nothing: compile alone, without it */
    PJ_CLAIM_STALE,  /* the lease is stale and the server refuses the script that removes it
                        (no EVAL): compile alone, without it */
    PJ_CLAIM_TOO_BIG, /* a value over the size limit (the entry's, or the lease's): refused
                         unread; compile alone */
    PJ_CLAIM_FAILED, /* the server could not be asked, or answered an error */
    PJ_CLAIM_DOWN    /* the tier is backing off: nothing was asked */
} pj_claim_result;

/* What a waiter saw of a lease another holds, from one claim to the next: its value and since
 * when (this process's clock). Zero it before the first claim. */
typedef struct {
    char *held;
    size_t held_size;
    int64_t since_ms;
} pj_lease_watch;
void pj_lease_watch_free(pj_lease_watch *watch);

/* SET lease NX PX ttl_ms, then GET name, in one round trip. WON: *lease is started (pj_lease_end
 * it); ENTRY: *value (caller frees) and *size. With a watch, a lease found stale (its value
 * the same for longer than ttl_ms since watch first saw it, or found stale by this process
 * before) is removed and claimed again at once; without one (NULL), a taken lease is TAKEN. */
pj_claim_result pj_lease_claim(pj_lease **lease, char **value, size_t *size,
                               pj_remote_link *link, const char *lease_name, const char *name,
                               int ttl_ms, pj_lease_watch *watch);
/* Stops renewing; with drop, gives the lease up (nothing was published: the others must not
 * wait for it, nor take it in turn). NULL is fine. */
void pj_lease_end(pj_lease *lease, int drop);

#endif

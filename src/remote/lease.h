/* lease.h — which node of the fleet compiles a key that every node misses: a lease in Redis,
 * "ptxjit:v<N>:lease:<key>" = "<host>:<pid>:<n>", set with NX and a TTL. Its holder renews it
 * from a thread of its own while it compiles, so a lease outlives no holder by more than its
 * TTL, and a compile may take longer than the TTL. The holder does not delete a lease after
 * publishing (whoever takes it next also reads the entry, in the same round trip); one it
 * publishes nothing under (its compile failed, the entry is over the size limit, the server
 * refused it) it gives up: the lease then says so for one TTL, and every node waiting for it
 * or asking meanwhile compiles at once, alone, instead of taking the lease in turn and failing
 * one after another. Renewal and giving up act only while the lease still names the holder
 * (connection.h): one that expired and went to another node is left to that node. */
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
    PJ_CLAIM_FAILED, /* the server could not be asked, or answered an error */
    PJ_CLAIM_DOWN    /* the tier is backing off: nothing was asked */
} pj_claim_result;

/* SET lease NX PX ttl_ms, then GET name, in one round trip. WON: *lease is started (pj_lease_end
 * it); ENTRY: *value (caller frees) and *size. */
pj_claim_result pj_lease_claim(pj_lease **lease, char **value, size_t *size,
                               pj_remote_link *link, const char *lease_name, const char *name,
                               int ttl_ms);
/* Stops renewing; with drop, gives the lease up (nothing was published: the others must not
 * wait for it, nor take it in turn). NULL is fine. */
void pj_lease_end(pj_lease *lease, int drop);

#endif

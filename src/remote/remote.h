/* remote.h — the remote cache tier (Redis): after the local disk misses, an entry is looked up
 * on the server, checked (signature, then the entry's own checksum, key and version, exactly
 * as a disk load checks it) and only then used; a compiled kernel or a tuning record is
 * published there after the local store. Nothing here ever fails a request: a miss, a
 * rejected entry, an unreachable server all end in a local compile (or tuning). */
#ifndef PTXJIT_REMOTE_REMOTE_H
#define PTXJIT_REMOTE_REMOTE_H

#include "internal.h"

typedef struct pj_remote pj_remote;

typedef enum { PJ_REMOTE_KERNEL, PJ_REMOTE_RECORD } pj_remote_kind;

/* Opens the tier named by url (NULL: $PTXJIT_REMOTE_CACHE; "" or unset: *out = NULL, no tier).
 * lease_ms: the compile lease's TTL (0: $PTXJIT_REMOTE_CACHE_LEASE_MS, else 3000; else 100 to
 * 600000). stats_dir: where the counters are kept (the disk cache's directory; NULL: in
 * memory). A configuration that cannot be trusted fails with PTXJIT_ERR_CACHE (config.h); the
 * server is not contacted here. */
ptxjit_status pj_remote_open(pj_remote **out, const char *url, int lease_ms,
                             const char *stats_dir, const pj_logger *logger);
void pj_remote_close(pj_remote *remote);

/* The Redis key name of an entry: "ptxjit:v<entry format>:<kernel|tune>:<key>" (caller frees). */
char *pj_remote_name(pj_remote_kind kind, const char *key);

/* Looks key up: *found 1 and *out filled (pj_artifact_free) when the server holds a value
 * that passes every check; else *found 0: missing, rejected (counted, warned once per
 * process; a value over the size limit is rejected at its header, unread), or the server
 * unreachable or backing off. One exchange with the server: bounded (connection.h). remote may be NULL (no tier). Returns 1
 * when the server answered that it holds no such key: only then is a lease worth asking for
 * (a rejected value is replaced by the local compile, and an unreachable server is not asked
 * again for this request). */
int pj_remote_fetch(pj_remote *remote, pj_remote_kind kind, const char *key, pj_artifact *out,
                    int *found);
/* Signs and sends the entry; synchronous, one exchange with the server (bounded:
 * connection.h); an entry over the size limit is not sent. Failures are counted, never reported to the caller; 1 when the
 * server took it. */
int pj_remote_publish(pj_remote *remote, pj_remote_kind kind, const char *key,
                      const pj_artifact *artifact);

/* ---- the entries' key components, for `ptxjit explain` ---- */

/* Pushes an entry's note (its key components, the disk cache's <key>.key text) on its
 * family's list of notes on the server, signed like an entry and kept for the newest
 * PJ_LINK_NOTES_KEPT (connection.h); a family name outside [A-Za-z0-9_] is not published.
 * Failures count as the remote tier's errors, never the caller's. */
void pj_remote_publish_note(pj_remote *remote, const char *family, const char *key,
                            const char *text);
/* Hands each note of family's list that passes its check to fn (key, text), newest first,
 * one a key. Nothing is counted. The number handed, or -1 when the server could not be asked
 * (or the tier is backing off). */
int pj_remote_each_note(pj_remote *remote, const char *family,
                        void (*fn)(void *user, const char *key, const char *text), void *user);
/* Whether the server holds a usable entry of kind for key: 1 (it passes every check a fetch
 * makes), 0 (none), -2 (one that a fetch would reject: *why says why), or -1 (not asked: no
 * tier, unreachable, backing off). Nothing is counted. */
int pj_remote_holds(pj_remote *remote, pj_remote_kind kind, const char *key, const char **why);
/* The tier's URL, for reports. */
const char *pj_remote_url(const pj_remote *remote);

/* ---- one compile per key across the fleet (remote/lease.h) ---- */

struct pj_lease;

typedef enum {
    PJ_REMOTE_FETCHED, /* another node published it meanwhile: *out filled, checked */
    PJ_REMOTE_LEASED,  /* this node holds the key's lease: compile, publish, then
                          pj_remote_lease_end */
    PJ_REMOTE_LOCAL,   /* found(user) said the entry turned up in the local cache */
    PJ_REMOTE_ALONE    /* no lease to be had (no tier, wait_ms 0, an unreachable server, a
                          rejected entry, the wait bound passed): compile without one */
} pj_remote_claim_result;

/* After a miss of every cache: takes key's lease, or, while another node holds it, waits up
 * to wait_ms for its entry (polling the server, and found(user), with a growing pause) until
 * the entry appears or the lease is free again (its holder died: this node takes it over) or
 * stale (its value unchanged for one lease TTL: removed and taken over, remote/lease.h).
 * Counts lease_wins, lease_waits, lease_timeouts. */
pj_remote_claim_result pj_remote_claim(struct pj_lease **lease, pj_artifact *out,
                                       pj_remote *remote, pj_remote_kind kind, const char *key,
                                       int wait_ms, int (*found)(void *user), void *user);
/* Ends a lease from pj_remote_claim (NULL is fine); published 0 deletes it, so that the
 * nodes waiting for the entry stop waiting for one that will not come. */
void pj_remote_lease_end(struct pj_lease *lease, int published);
/* Fills the remote_* fields of *out. */
void pj_remote_stats_fill(pj_remote *remote, ptxjit_cache_stats *out);

#endif

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
 * stats_dir: where the counters are kept (the disk cache's directory; NULL: in memory). A
 * configuration that cannot be trusted fails with PTXJIT_ERR_CACHE (config.h); the server is
 * not contacted here. */
ptxjit_status pj_remote_open(pj_remote **out, const char *url, const char *stats_dir,
                             const pj_logger *logger);
void pj_remote_close(pj_remote *remote);

/* The Redis key name of an entry: "ptxjit:v<entry format>:<kernel|tune>:<key>" (caller frees). */
char *pj_remote_name(pj_remote_kind kind, const char *key);

/* Looks key up: *found 1 and *out filled (pj_artifact_free) when the server holds a value
 * that passes every check; else *found 0: missing, rejected (counted, warned once per
 * process), or the server unreachable or backing off. remote may be NULL (no tier). */
void pj_remote_fetch(pj_remote *remote, pj_remote_kind kind, const char *key, pj_artifact *out,
                     int *found);
/* Signs and sends the entry; synchronous, bounded by the operation timeout; an entry over the
 * size limit is not sent. Failures are counted, never reported to the caller. */
void pj_remote_publish(pj_remote *remote, pj_remote_kind kind, const char *key,
                       const pj_artifact *artifact);
/* Fills the remote_* fields of *out. */
void pj_remote_stats_fill(pj_remote *remote, ptxjit_cache_stats *out);

#endif

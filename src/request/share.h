/* share.h — the process's in-memory cache of compiled kernels, shared by its contexts (one per
 * GPU, say): a key is produced once in the process (from the disk, the remote tier or the
 * compiler) and its artifact is handed to every context that asks for it, each of which loads
 * its own module on its own device. */
#ifndef PTXJIT_SHARE_H
#define PTXJIT_SHARE_H

#include "context.h"

/* Where a kernel's artifact comes from when the process has none for its key. */
typedef ptxjit_status (*pj_share_producer)(ptxjit_kernel *kernel, ptxjit_origin *origin);

/* Fills kernel->artifact for kernel->key. A context opened with process_cache = 0 calls
 * produce itself. Otherwise: an artifact another context holds is taken (*origin
 * PTXJIT_ORIGIN_SHARED); one another thread is producing is waited for and taken, and its
 * failure is this call's failure (same status, message, compile log and source); else this
 * thread produces it and hands it to the waiters. Only threads asking for the same key wait
 * on each other; no lock is held while producing. */
ptxjit_status pj_share_produce(ptxjit_kernel *kernel, ptxjit_origin *origin,
                               pj_share_producer produce);
/* Drops kernel's reference to a shared artifact (freed with the last one) and clears
 * kernel->artifact; nothing for a kernel that holds its own. */
void pj_share_release(ptxjit_kernel *kernel);

/* What the process produced and shared since it started, for the tests and `bench multigpu`:
 * each count only grows. */
typedef struct {
    uint64_t compiled;   /* artifacts compiled by this process */
    uint64_t disk;       /* read from the disk cache */
    uint64_t remote;     /* fetched from the remote tier */
    uint64_t shared;     /* taken from another context's compile or read (waited for or not) */
    uint64_t waited;     /* of those, how many waited for one in flight */
} pj_share_counters;
void pj_share_counters_get(pj_share_counters *out);

/* Tests only: called by the thread that is about to produce key, before it does (so a test can
 * hold it until another thread waits); NULL otherwise. */
extern void (*pj_share_hold)(const pj_hash128 *key);

#endif

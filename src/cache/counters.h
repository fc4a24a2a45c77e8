/* counters.h — the disk cache's counters, shared by every process that uses the directory:
 * one small text file, read and rewritten under flock. */
#ifndef PTXJIT_CACHE_COUNTERS_H
#define PTXJIT_CACHE_COUNTERS_H

#include <sys/types.h>

#include "internal.h"

/* compiles, compile_ms: kernels compiled by processes of the directory and the milliseconds
 * they took (request/events.c counts them). bytes is what the stores and evictions have added up: an estimate that eviction's scans
 * correct, not a measurement (stats measures). compile_waits: requests that found another
 * process compiling their key (cache/compile_lock.c), compile_wait_timeouts: those of them
 * that stopped waiting at the bound. */
#define PJ_COUNTER_LIST(X)                                                                     \
    X(hits) X(misses) X(stores) X(corrupt) X(evicted) X(bytes) X(compile_waits)                \
    X(compile_wait_timeouts) X(compiles) X(compile_ms) PJ_COMPILE_BUCKETS(X)

/* The compile-time histogram's buckets: compiles that took at most 100 ms, ..., 30 s, each
 * counted in the first it fits (ptxjit_cache_stats.compile_buckets). */
#define PJ_COMPILE_BUCKETS(X)                                                                  \
    X(compile_le_100ms) X(compile_le_300ms) X(compile_le_1s) X(compile_le_3s)                 \
    X(compile_le_10s) X(compile_le_30s)

typedef enum {
#define PJ_COUNTER_ENUM(name) COUNTER_##name,
    PJ_COUNTER_LIST(PJ_COUNTER_ENUM)
#undef PJ_COUNTER_ENUM
    COUNTER_COUNT
} counter_id;

/* One locked read-modify-write of the file at path (created with mode): adds delta to each
 * counter, never below zero (delta NULL: resets every counter to zero); fills totals (may
 * be NULL). Returns 1 when the file held every counter, 0 when some were missing (a new
 * file, one written by an older version, or a damaged one: they start at zero), -1 when
 * nothing was read or written: the file could not be used, or its lock stayed taken for
 * PJ_COUNTERS_WAIT_MS (a process stopped while it held it must not stall every load). The
 * counters are advisory: a failure only loses a count. */
#define PJ_COUNTERS_WAIT_MS 2000
int pj_counters_update(const char *path, mode_t mode, const int64_t *delta, uint64_t *totals);

#endif

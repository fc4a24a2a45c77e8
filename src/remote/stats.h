/* stats.h — the remote tier's counters. With a disk cache they live in <cache dir>/remote-stats
 * ("name value" lines rewritten under flock, as the disk's own counters), so that `ptxjit cache
 * stats` in another process sees what the fleet's processes did; without one, in this process.
 * Counts wait in memory until the next merge, as the disk's hits and misses do. */
#ifndef PTXJIT_REMOTE_STATS_H
#define PTXJIT_REMOTE_STATS_H

#include <pthread.h>

#include "internal.h"

#define PJ_REMOTE_STAT_LIST(X)                                                                 \
    X(hits) X(misses) X(rejected) X(errors) X(publishes) X(time_us) X(lease_wins)               \
    X(lease_waits) X(lease_timeouts)

typedef enum {
#define PJ_REMOTE_STAT_ENUM(name) REMOTE_STAT_##name,
    PJ_REMOTE_STAT_LIST(PJ_REMOTE_STAT_ENUM)
#undef PJ_REMOTE_STAT_ENUM
    REMOTE_STAT_COUNT
} pj_remote_stat;

typedef struct {
    char *path;                           /* NULL: in this process only */
    int mode;                             /* the file's mode: the cache directory's sharing */
    uint64_t pending[REMOTE_STAT_COUNT];  /* not yet in the file (all of them, without one);
                                             atomics */
} pj_remote_stats;

/* dir: the disk cache's versioned directory, or NULL. PTXJIT_ERR_OUT_OF_MEMORY. */
ptxjit_status pj_remote_stats_init(pj_remote_stats *stats, const char *dir);
/* Merges what is pending, then frees. */
void pj_remote_stats_free(pj_remote_stats *stats);
/* Adds delta in memory: a remote hit then writes nothing shared (one locked update of the file
 * costs more than the hit's other work together). */
void pj_remote_stats_add(pj_remote_stats *stats, const uint64_t delta[REMOTE_STAT_COUNT]);
/* Moves the pending counts into the file, in one locked update (advisory: a file that cannot
 * be used loses them). Done with each publish and lease, when read, and at close. */
void pj_remote_stats_merge(pj_remote_stats *stats);
/* The file's totals, this process's pending counts merged first. */
void pj_remote_stats_read(pj_remote_stats *stats, uint64_t totals[REMOTE_STAT_COUNT]);

#endif

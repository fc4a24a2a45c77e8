/* stats.h — the remote tier's counters. With a disk cache they live in <cache dir>/remote-stats
 * ("name value" lines rewritten under flock, as the disk's own counters), so that `ptxjit cache
 * stats` in another process sees what the fleet's processes did; without one, in this process. */
#ifndef PTXJIT_REMOTE_STATS_H
#define PTXJIT_REMOTE_STATS_H

#include <pthread.h>

#include "internal.h"

#define PJ_REMOTE_STAT_LIST(X) X(hits) X(misses) X(rejected) X(errors) X(publishes) X(time_us)

typedef enum {
#define PJ_REMOTE_STAT_ENUM(name) REMOTE_STAT_##name,
    PJ_REMOTE_STAT_LIST(PJ_REMOTE_STAT_ENUM)
#undef PJ_REMOTE_STAT_ENUM
    REMOTE_STAT_COUNT
} pj_remote_stat;

typedef struct {
    char *path;                           /* NULL: in this process only */
    int mode;                             /* the file's mode: the cache directory's sharing */
    uint64_t local[REMOTE_STAT_COUNT];    /* without a file; atomics */
} pj_remote_stats;

/* dir: the disk cache's versioned directory, or NULL. PTXJIT_ERR_OUT_OF_MEMORY. */
ptxjit_status pj_remote_stats_init(pj_remote_stats *stats, const char *dir);
void pj_remote_stats_free(pj_remote_stats *stats);
/* Adds delta (advisory: a file that cannot be used loses the count). */
void pj_remote_stats_add(pj_remote_stats *stats, const uint64_t delta[REMOTE_STAT_COUNT]);
void pj_remote_stats_read(pj_remote_stats *stats, uint64_t totals[REMOTE_STAT_COUNT]);

#endif

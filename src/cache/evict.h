/* evict.h — keeping the disk cache under its size cap, least recently used entries first and
 * never one that a reader holds; and sweeping the temporary files of writers that died. */
#ifndef PTXJIT_CACHE_EVICT_H
#define PTXJIT_CACHE_EVICT_H

#include <sys/types.h>

#include "internal.h"

/* A temp file this old belongs to a writer that died (a store takes milliseconds); the
 * margin covers clocks that differ between the machines of a shared file system. */
#define PJ_TEMP_SWEEP_SECONDS 3600

/* An entry's key components (disk.h: pj_disk_cache_store_note), "<key>.key" beside it and
 * removed with it. */
#define PJ_NOTE_SUFFIX ".key"

typedef struct {
    uint64_t entries, bytes;        /* what the scan found */
    uint64_t evicted, evicted_bytes; /* entries removed to get under the cap */
    uint64_t busy;                  /* entries it would have removed but a reader held */
    uint64_t temp_removed;          /* stale temp files removed */
    int complete;                   /* the scan read every shard: bytes is the cache's size */
    int out_of_memory;              /* why it was not, if that was the reason */
} evict_report;

/* Scans dir (the versioned cache directory): removes temp files older than the sweep age
 * and, when the scan is complete and the entries add up to more than max_bytes, removes
 * the least recently used
 * (oldest modification time: a hit touches its entry) until they fit in nine tenths of it.
 * An entry that a reader holds (flock), or that changed since the scan, stays. One process
 * evicts at a time: another's run is waited for at most wait_ms (0: not at all), then 0 is
 * returned with errno EWOULDBLOCK; 1 after a run. */
int pj_evict_run(evict_report *out, const char *dir, uint64_t max_bytes, mode_t file_mode,
              int wait_ms);
/* What `cache trim` waits for another evictor: a run is a scan and some unlinks, so one that
 * holds the lock longer is stopped or stuck. */
#define PJ_EVICT_WAIT_MS 30000

/* Removes the stale temp files of one shard ("ab") of dir, which a store is about to write;
 * returns how many. */
uint64_t pj_evict_sweep_shard(const char *dir, const char *shard);

#endif

/* disk.h — the on-disk kernel cache: one file per entry, published by rename, checksummed.
 * Layout: <root>/v<PJ_DISK_FORMAT_VERSION>/<first two hex digits of key>/<key>. */
#ifndef PTXJIT_CACHE_DISK_H
#define PTXJIT_CACHE_DISK_H

#include "internal.h"

#define PJ_DISK_FORMAT_VERSION 1

typedef struct pj_disk_cache pj_disk_cache;

/* Resolves the root (root if not NULL, else $PTXJIT_CACHE_DIR, else $XDG_CACHE_HOME/ptxjit,
 * else $HOME/.cache/ptxjit), creates the versioned directory (mode 0700) and checks that it
 * is writable. Fails with PTXJIT_ERR_CACHE naming the directory and the fix. */
ptxjit_status disk_cache_open(pj_disk_cache **out, const char *root, const pj_logger *logger);
void disk_cache_close(pj_disk_cache *cache);
/* The versioned directory, e.g. /home/u/.cache/ptxjit/v1. */
const char *disk_cache_dir(const pj_disk_cache *cache);

/* Looks up key (32 hex digits). Hit: *found = 1 and *out filled (caller frees it with
 * artifact_free). Miss: *found = 0. A corrupt, truncated or foreign entry is reported as a
 * warning through the logger, counted, removed, and treated as a miss. Counts hits/misses. */
ptxjit_status disk_cache_load(pj_disk_cache *cache, const char *key, pj_artifact *out,
                              int *found);
/* Writes the entry atomically: temp file in the same directory, write, fsync, rename, fsync
 * of the directory. Concurrent writers of one key leave one whole entry. */
ptxjit_status disk_cache_store(pj_disk_cache *cache, const char *key,
                               const pj_artifact *artifact);
ptxjit_status disk_cache_stats(pj_disk_cache *cache, ptxjit_cache_stats *out);
ptxjit_status disk_cache_clear(pj_disk_cache *cache, uint64_t *removed);

/* Path of key's entry file; caller frees. For tests and `ptxjit cache`. */
char *disk_cache_entry_path(const pj_disk_cache *cache, const char *key);

#endif

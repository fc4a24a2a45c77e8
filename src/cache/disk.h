/* disk.h — the on-disk kernel cache: one checksummed file per entry, published by rename,
 * kept under a size cap, in a directory that must be trusted.
 * Layout: <root>/v<PJ_DISK_FORMAT_VERSION>/<first two hex digits of key>/<key>. */
#ifndef PTXJIT_CACHE_DISK_H
#define PTXJIT_CACHE_DISK_H

#include <sys/stat.h>

#include "cache/entry.h"
#include "cache/evict.h"

#define PJ_DEFAULT_CACHE_MAX_BYTES ((uint64_t)1 << 30)

typedef struct pj_disk_cache pj_disk_cache;

typedef struct {
    const char *root;   /* NULL: $PTXJIT_CACHE_DIR, else $XDG_CACHE_HOME/ptxjit, else
                           $HOME/.cache/ptxjit */
    uint64_t max_bytes; /* 0: $PTXJIT_CACHE_MAX_BYTES, else PJ_DEFAULT_CACHE_MAX_BYTES */
    int shared;         /* 1: a cache shared with the directory's group; 0: as
                           $PTXJIT_CACHE_SHARED says (default: private) */
} pj_disk_options;

/* Resolves the root, creates the versioned directory (0700, or 02770 shared), and checks that
 * both are trusted (directory.h) and writable. Fails with PTXJIT_ERR_CACHE naming the
 * directory and the fix. A malformed $PTXJIT_CACHE_MAX_BYTES or $PTXJIT_CACHE_SHARED is
 * reported through logger and the default used. options may be NULL. */
ptxjit_status pj_disk_cache_open(pj_disk_cache **out, const pj_disk_options *options,
                              const pj_logger *logger);
void pj_disk_cache_close(pj_disk_cache *cache);
/* The versioned directory, e.g. /home/u/.cache/ptxjit/v1. */
const char *pj_disk_cache_dir(const pj_disk_cache *cache);
uint64_t pj_disk_cache_max_bytes(const pj_disk_cache *cache);
/* 1: a cache shared with its group (pj_disk_options.shared or $PTXJIT_CACHE_SHARED). */
int pj_disk_cache_shared(const pj_disk_cache *cache);

/* Looks up key (32 hex digits). Hit: *found = 1, *out filled (caller frees it with
 * pj_artifact_free), and the entry's time renewed (it is now the most recently used). Miss:
 * *found = 0. A corrupt, truncated or foreign entry is reported as a warning through the
 * logger, counted, removed, and treated as a miss; one that cannot be used (a directory or
 * a link at its path, no permission, a file that others could have written) is reported
 * and not removed here (a store of the key replaces a file or a link, never what a link
 * points to). The entry is read under a shared flock, which keeps eviction away from it. */
ptxjit_status pj_disk_cache_load(pj_disk_cache *cache, const char *key, pj_artifact *out,
                              int *found);
/* Writes the entry atomically: temp file in the same directory, write, fsync, rename, fsync
 * of the directory. Concurrent writers of one key leave one whole entry. Sweeps the shard's
 * stale temp files first; evicts when the cache goes over its cap. */
ptxjit_status pj_disk_cache_store(pj_disk_cache *cache, const char *key,
                               const pj_artifact *artifact);
/* The same for an entry that another tier still holds (the remote cache): published as
 * atomically, but neither the file nor the directory is fsynced. A crash may then leave a
 * torn or empty entry, which the next load's checks refuse and remove, and the remote gives
 * again; a compile's result, which exists nowhere else, always goes through
 * pj_disk_cache_store. */
ptxjit_status pj_disk_cache_store_copy(pj_disk_cache *cache, const char *key,
                                       const pj_artifact *artifact);
/* Counts a request that waited for another process's compile of its key (compile_lock.c),
 * and whether the wait ended at its bound. */
/* The key components of an entry (request/key.h's text), in "<key>.key" beside it: written
 * after the entry (temp file and rename, no fsync: only `ptxjit explain` reads it), removed
 * with it by eviction and clear. Older versions ignore the file. Failures are ignored. */
void pj_disk_cache_store_note(pj_disk_cache *cache, const char *key, const char *text);
/* The note of key into *text (caller frees); NULL when there is none (an entry stored before
 * notes existed, or by a bundle import). */
void pj_disk_cache_read_note(pj_disk_cache *cache, const char *key, char **text);
/* A compile of ms milliseconds by this process, for the directory's counters and histogram
 * (merged with the next store, stats or close). */
void pj_disk_cache_count_compile(pj_disk_cache *cache, double ms);
void pj_disk_cache_count_wait(pj_disk_cache *cache, int timed_out);
ptxjit_status pj_disk_cache_stats(pj_disk_cache *cache, ptxjit_cache_stats *out);
ptxjit_status pj_disk_cache_clear(pj_disk_cache *cache, uint64_t *removed);
/* Evicts down to the cap now (waiting for another evictor) and sweeps every shard's stale
 * temp files; *report says what was found and removed. */
ptxjit_status pj_disk_cache_trim(pj_disk_cache *cache, evict_report *report);

/* Why an entry file of this stat may not hold code the cache loads (NULL: it may): the one
 * trust rule of entries, which a load, the compile lock's look for a finished entry and a
 * bundle's export all apply. Private cache: ours and writable by nobody else; shared: not
 * writable outside the group. A constant string. */
const char *pj_disk_cache_untrusted(const pj_disk_cache *cache, const struct stat *st);

/* Path of key's entry file; caller frees. For tests and `ptxjit cache`. */
char *pj_disk_cache_entry_path(const pj_disk_cache *cache, const char *key);

/* ---- tuning records (tune/record.c): "<shard>/<key>.tune", an entry of the same format and
 * the same guarantees (atomic publish, checksum, trust, the cap), not counted as kernel hits
 * or misses. */
char *pj_disk_cache_record_path(const pj_disk_cache *cache, const char *key);
ptxjit_status pj_disk_cache_load_record(pj_disk_cache *cache, const char *key, pj_artifact *out,
                                        int *found);
ptxjit_status pj_disk_cache_store_record(pj_disk_cache *cache, const char *key,
                                         const pj_artifact *artifact);
/* A record fetched from the remote cache: no fsyncs (pj_disk_cache_store_copy). */
ptxjit_status pj_disk_cache_store_record_copy(pj_disk_cache *cache, const char *key,
                                              const pj_artifact *artifact);
/* Removes every tuning record (kernels stay); how many in *removed. */
ptxjit_status pj_disk_cache_clear_records(pj_disk_cache *cache, uint64_t *removed);
/* Calls visit with the key of every tuning record found. */
typedef void pj_disk_record_visitor(void *user, const char *key);
void pj_disk_cache_each_record(pj_disk_cache *cache, pj_disk_record_visitor *visit, void *user);

#endif

/* compile_lock.h — one compile of a key per cache directory: the processes that miss the same
 * key at once agree, through a per-key lock file under the cache directory, that one of them
 * compiles (or fetches) it while the others wait for its entry. The lock is an flock, so a
 * holder that dies releases it; a wait is bounded, after which the waiter compiles anyway:
 * the lock can cost a duplicate compile, never a deadlock or a wrong answer. */
#ifndef PTXJIT_CACHE_COMPILE_LOCK_H
#define PTXJIT_CACHE_COMPILE_LOCK_H

#include "cache/disk.h"

/* How long a request waits, by default, for another process's (or node's) compile of the
 * same key before compiling it itself (ptxjit_options.compile_wait_ms, $PTXJIT_COMPILE_WAIT_MS). */
#define PJ_COMPILE_WAIT_DEFAULT_MS 30000

typedef enum {
    PJ_LOCK_HELD,    /* this process holds the key's lock: it produces the entry, then releases */
    PJ_LOCK_WAITED,  /* another process held it and let go: its entry is on disk, unless it
                        failed or died (then compile, without the lock) */
    PJ_LOCK_TIMEOUT, /* another process still holds it after the wait bound: compile anyway */
    PJ_LOCK_NONE     /* no lock to be had (no disk cache, waiting off, a file that cannot be
                        made): compile as without one */
} pj_lock_result;

typedef struct {
    int fd;          /* the held lock file, -1 when none is held */
    char *path;      /* <cache>/v<N>/<key>.lock */
    int entry_there; /* the key's entry was on disk when the lock was taken or the wait ended:
                        another process produced it after this one's miss */
} pj_compile_lock;

/* The wait bound: options_ms when not 0 (< 0: never wait), else $PTXJIT_COMPILE_WAIT_MS, else
 * PJ_COMPILE_WAIT_DEFAULT_MS; a malformed variable is warned about and the default used. 0:
 * no waiting (and no lock). */
int pj_compile_wait_ms(int options_ms, const pj_logger *logger);

/* Whether key's entry file is on disk now (cheap: no read, no count); cache may be NULL. */
int pj_compile_lock_entry_there(const pj_disk_cache *cache, const char *key);

/* Takes key's lock, waiting up to wait_ms for another holder; cache may be NULL (no disk
 * cache: PJ_LOCK_NONE). Counts the waits and their timeouts in the cache's counters. The
 * caller calls pj_compile_lock_release whatever the result. */
pj_lock_result pj_compile_lock_take(pj_compile_lock *lock, pj_disk_cache *cache, const char *key,
                                    int wait_ms);
/* Removes the lock file (only while it is still ours) and releases it; a lock not held is
 * left alone. */
void pj_compile_lock_release(pj_compile_lock *lock);

#endif

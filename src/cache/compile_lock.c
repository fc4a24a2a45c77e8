/* compile_lock.c — the per-key compile lock of a cache directory: "v<N>/<key>.lock", held
 * with flock (a dead holder's lock is released by the kernel, so a lock file left behind
 * blocks nobody), removed by its holder before it lets go. A waiter polls (flock has no
 * timeout, and an alarm would touch the caller's signals) and, once the holder is gone,
 * looks for the entry it left rather than taking the lock again: a holder that failed or died
 * must not make the waiters compile one after another. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/compile_lock.h"
#include "cache/directory.h"
#include "cache/entry.h"
#include "cache/fileio.h"

#define POLL_FIRST_MS 1
#define POLL_MOST_MS 20 /* a waiter notices a finished holder this late, at most */

int pj_compile_wait_ms(int options_ms, const pj_logger *logger)
{
    if (options_ms)
        return options_ms < 0 ? 0 : options_ms;
    const char *text = getenv("PTXJIT_COMPILE_WAIT_MS");
    if (!text || !*text)
        return PJ_COMPILE_WAIT_DEFAULT_MS;
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < 0 || value > 3600000) {
        pj_log(logger, PTXJIT_LOG_WARNING,
               "PTXJIT_COMPILE_WAIT_MS='%.64s' is not a number of milliseconds from 0 to "
               "3600000; waiting up to %d ms for another process's compile of a key. Fix it "
               "or unset it",
               text, PJ_COMPILE_WAIT_DEFAULT_MS);
        return PJ_COMPILE_WAIT_DEFAULT_MS;
    }
    return (int)value;
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

/* A regular file that a load would trust (pj_disk_cache_untrusted): an untrusted file left
 * at the key's path is no finished entry, and looking again would only have the load refuse
 * it, and warn, a second time in one request. */
int pj_compile_lock_entry_there(const pj_disk_cache *cache, const char *key)
{
    if (!cache)
        return 0;
    char *path = pj_disk_cache_entry_path(cache, key);
    struct stat st;
    int there = path && lstat(path, &st) == 0 && S_ISREG(st.st_mode) &&
                !pj_disk_cache_untrusted(cache, &st);
    free(path);
    return there;
}

/* "<cache>/v<N>/<key>.lock": beside the shards, which need no directory made (a cold cache
 * has no shard yet), and where the cache's walks (scan.c: stats, eviction, clear, bundles)
 * never look. */
static char *lock_path(const pj_disk_cache *cache, const char *key)
{
    const char *dir = pj_disk_cache_dir(cache);
    char *path = pj_entry_key_valid(key) ? malloc(strlen(dir) + 1 + 32 + sizeof ".lock") : NULL;
    if (path)
        sprintf(path, "%s/%s.lock", dir, key);
    return path;
}

/* Waits, polling, until fd's lock is ours or deadline passes; 0 when it is ours. */
static int wait_for(int fd, int64_t deadline)
{
    for (int delay = POLL_FIRST_MS;; delay = delay * 2 > POLL_MOST_MS ? POLL_MOST_MS : delay * 2) {
        int64_t left = deadline - now_ms();
        if (left <= 0)
            return -1;
        sleep_ms(delay < left ? delay : (int)left);
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return -1;
    }
}

pj_lock_result pj_compile_lock_take(pj_compile_lock *lock, pj_disk_cache *cache, const char *key,
                                    int wait_ms)
{
    memset(lock, 0, sizeof *lock);
    lock->fd = -1;
    if (!cache || wait_ms <= 0 || !(lock->path = lock_path(cache, key)))
        return PJ_LOCK_NONE;
    mode_t mode = pj_disk_cache_shared(cache) ? PJ_SHARED_FILE_MODE : PJ_PRIVATE_FILE_MODE;
    int fd = pj_fileio_open_shared_file(lock->path, mode);
    if (fd < 0)
        return PJ_LOCK_NONE;
    struct stat held;
    if (flock(fd, LOCK_EX | LOCK_NB) == 0) {
        /* Ours, unless a holder removed this file between our open and our flock: then that
         * holder has just finished, which is what a waiter finds below. */
        if (pj_fileio_same_file(fd, AT_FDCWD, lock->path, &held)) {
            lock->fd = fd;
            lock->entry_there = pj_compile_lock_entry_there(cache, key); /* stored since our miss */
            return PJ_LOCK_HELD;
        }
        pj_fileio_unlock_and_close(fd);
        pj_disk_cache_count_wait(cache, 0);
        lock->entry_there = pj_compile_lock_entry_there(cache, key);
        return PJ_LOCK_WAITED;
    }
    int gone = errno == EWOULDBLOCK && wait_for(fd, now_ms() + wait_ms) == 0;
    pj_fileio_unlock_and_close(fd); /* not kept: the holder removed or will remove this file */
    pj_disk_cache_count_wait(cache, !gone);
    if (!gone)
        return PJ_LOCK_TIMEOUT;
    lock->entry_there = pj_compile_lock_entry_there(cache, key);
    return PJ_LOCK_WAITED;
}

void pj_compile_lock_release(pj_compile_lock *lock)
{
    if (lock->fd >= 0) {
        /* Removed before the unlock, while no one else can hold it: a waiter then finds its
         * file gone, and the next miss of the key makes a new one. */
        struct stat held;
        if (pj_fileio_same_file(lock->fd, AT_FDCWD, lock->path, &held))
            unlink(lock->path);
        pj_fileio_unlock_and_close(lock->fd);
    }
    free(lock->path);
    lock->path = NULL;
    lock->fd = -1;
}

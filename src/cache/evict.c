/* evict.c — the size cap. Entries are ordered by modification time, which every hit renews
 * (futimens in disk.c), so the oldest is the least recently used. A reader holds a shared
 * flock on the entry while it reads; the evictor takes an exclusive one without waiting and
 * skips the entry when it cannot, so no entry is removed under a reader. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "cache/evict.h"
#include "cache/fileio.h"
#include "cache/scan.h"

typedef struct {
    char path[48]; /* "ab/<key>" or "ab/<key>.tune", relative to the cache directory */
    uint64_t size;
    struct timespec mtime;
    dev_t device;
    ino_t inode;
} candidate;

typedef struct {
    candidate *items;
    size_t count, capacity;
    time_t sweep_before; /* temp files last written before this are stale */
    evict_report *report;
    int failed; /* out of memory: no eviction this time */
} scan_state;

static void sweep_if_stale(int top_fd, const char *path, const struct stat *st,
                           scan_state *state)
{
    if (st->st_mtim.tv_sec < state->sweep_before && unlinkat(top_fd, path, 0) == 0)
        state->report->temp_removed++;
}

static void collect(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                    void *user)
{
    scan_state *state = user;
    if (kind == SCAN_TEMP) {
        sweep_if_stale(top_fd, path, st, state);
        return;
    }
    state->report->entries++;
    state->report->bytes += (uint64_t)st->st_size;
    if (state->count == state->capacity) {
        size_t grown = state->capacity ? 2 * state->capacity : 256;
        candidate *items = realloc(state->items, grown * sizeof *items);
        if (!items) {
            state->failed = 1;
            return;
        }
        state->items = items;
        state->capacity = grown;
    }
    candidate *c = &state->items[state->count++];
    snprintf(c->path, sizeof c->path, "%s", path);
    c->size = (uint64_t)st->st_size;
    c->mtime = st->st_mtim;
    c->device = st->st_dev;
    c->inode = st->st_ino;
}

static int older_first(const void *a, const void *b)
{
    const struct timespec *x = &((const candidate *)a)->mtime;
    const struct timespec *y = &((const candidate *)b)->mtime;
    if (x->tv_sec != y->tv_sec)
        return x->tv_sec < y->tv_sec ? -1 : 1;
    return (x->tv_nsec > y->tv_nsec) - (x->tv_nsec < y->tv_nsec);
}

/* The file at path is still the one scanned, and untouched since: not replaced by a writer,
 * not renewed by a hit. */
static int unchanged(int fd, int top_fd, const candidate *c)
{
    struct stat held;
    return pj_fileio_same_file(fd, top_fd, c->path, &held) && held.st_dev == c->device &&
           held.st_ino == c->inode && held.st_mtim.tv_sec == c->mtime.tv_sec &&
           held.st_mtim.tv_nsec == c->mtime.tv_nsec;
}

typedef enum { REMOVED, HELD, SKIPPED } removal;

/* Removes one candidate under an exclusive flock taken without waiting. The lock is taken on
 * a descriptor opened for writing where possible, which NFS needs for an exclusive lock. */
static removal remove_candidate(int top_fd, const candidate *c)
{
    int flags = O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    int fd = openat(top_fd, c->path, O_RDWR | flags);
    if (fd < 0)
        fd = openat(top_fd, c->path, O_RDONLY | flags);
    if (fd < 0)
        return SKIPPED;
    removal result = SKIPPED;
    if (flock(fd, LOCK_EX | LOCK_NB) != 0)
        result = errno == EWOULDBLOCK ? HELD : SKIPPED;
    else if (unchanged(fd, top_fd, c) && unlinkat(top_fd, c->path, 0) == 0)
        result = REMOVED;
    if (result == REMOVED) {
        char note[256];
        snprintf(note, sizeof note, "%s" PJ_NOTE_SUFFIX, c->path);
        unlinkat(top_fd, note, 0);
    }
    pj_fileio_unlock_and_close(fd);
    return result;
}

static void evict_oldest(scan_state *state, int top_fd, uint64_t max_bytes)
{
    evict_report *report = state->report;
    uint64_t target = max_bytes - max_bytes / 10, left = report->bytes;
    qsort(state->items, state->count, sizeof *state->items, older_first);
    for (size_t i = 0; i < state->count && left > target; i++) {
        removal result = remove_candidate(top_fd, &state->items[i]);
        if (result == REMOVED) {
            report->evicted++;
            report->evicted_bytes += state->items[i].size;
            left -= state->items[i].size;
        }
        report->busy += result == HELD;
    }
}

/* The evictors' lock: a file in dir, held exclusively for one run, waited for at most
 * wait_ms. */
static int lock_evictors(const char *dir, mode_t file_mode, int wait_ms)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/evict.lock", dir);
    int fd = pj_fileio_open_shared_file(path, file_mode);
    if (fd >= 0 && pj_fileio_flock_within(fd, LOCK_EX, wait_ms) != 0) {
        int error = errno;
        close(fd);
        errno = error;
        fd = -1;
    }
    return fd;
}

int pj_evict_run(evict_report *out, const char *dir, uint64_t max_bytes, mode_t file_mode,
              int wait_ms)
{
    memset(out, 0, sizeof *out);
    int lock = lock_evictors(dir, file_mode, wait_ms);
    if (lock < 0)
        return 0;
    scan_state state = {NULL, 0, 0, time(NULL) - PJ_TEMP_SWEEP_SECONDS, out, 0};
    int top_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    out->complete = top_fd >= 0 && pj_scan_cache(dir, collect, &state) == 0 && !state.failed;
    out->out_of_memory = state.failed;
    if (out->complete && out->bytes > max_bytes)
        evict_oldest(&state, top_fd, max_bytes);
    if (top_fd >= 0)
        close(top_fd);
    free(state.items);
    pj_fileio_unlock_and_close(lock);
    return 1;
}

static void sweep_only(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                       void *user)
{
    if (kind == SCAN_TEMP)
        sweep_if_stale(top_fd, path, st, user);
}

uint64_t pj_evict_sweep_shard(const char *dir, const char *shard)
{
    evict_report report = {0};
    scan_state state = {NULL, 0, 0, time(NULL) - PJ_TEMP_SWEEP_SECONDS, &report, 0};
    int top_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (top_fd < 0)
        return 0;
    pj_scan_shard(top_fd, shard, sweep_only, &state);
    close(top_fd);
    return report.temp_removed;
}

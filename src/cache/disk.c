/* disk.c — the on-disk cache: one checksummed file per entry (entry.c) — a kernel, or a tuning
 * record (tune/record.c) in the same format as "<key>.tune" —, written to a temp
 * file, fsynced and renamed into place, so that a reader sees a whole entry or none; a size
 * cap kept by eviction (evict.c); counters shared by every process (counters.c); and a
 * directory that is created private and refused when others could write it (directory.c). */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "util/count.h"
#include "cache/counters.h"
#include "cache/directory.h"
#include "cache/disk.h"
#include "cache/fileio.h"
#include "cache/scan.h"
#include "util/latency.h"

/* An entry read again within this many seconds of its last renewal keeps its time: the
 * LRU order needs no finer grain, and most hits then write nothing. */
#define RENEW_AFTER_SECONDS 60

/* Nothing here changes after open but the pending counts: threads share the cache through
 * the file system, and the counts through atomics. */
struct pj_disk_cache {
    char *dir;           /* <root>/v<N> */
    int dir_fd;          /* dir, held open: entries are opened relative to it (no path
                            lookup from the root on a hit) */
    char *counters_path; /* <dir>/stats */
    uint64_t pending[COUNTER_COUNT]; /* hits and misses not yet merged into the shared
                                        counters file (atomics; see merge_pending) */
    pid_t pending_pid;   /* the process they were counted in (own_pending) */
    uint64_t max_bytes;
    int shared;
    uid_t euid;          /* the effective user at open, whom entries must belong to */
    mode_t dir_mode, file_mode;
    pj_logger logger;
};

static char *path_printf(const char *format, ...) PJ_PRINTF(1, 2);
static char *path_printf(const char *format, ...)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    va_list args;
    va_start(args, format);
    pj_sb_vappendf(&sb, format, args);
    va_end(args);
    return pj_sb_take(&sb);
}

/* a + b: the open's paths, without printf (whose first use in a process costs more than the
 * system calls of a disk hit). */
static char *path_join(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    char *path = malloc(n + m + 1);
    if (path) {
        memcpy(path, a, n);
        memcpy(path + n, b, m + 1);
    }
    return path;
}

#define PJ_STRINGIFY(x) #x
#define PJ_VERSION_DIR(n) "/v" PJ_STRINGIFY(n)

static ptxjit_status bad_key(const char *key)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "cache key '%.64s' is not 32 lowercase hex digits",
                    key ? key : "(null)");
}

/* ---- configuration ---- */

/* "1073741824", "512M", "1G" (K, M, G, T: powers of 1024); 0 when text is not a size. */
static uint64_t parse_size(const char *text)
{
    if (!isdigit((unsigned char)text[0]))
        return 0;
    char *end;
    errno = 0;
    unsigned long long value = strtoull(text, &end, 10);
    int shift = !*end ? 0 : strchr("kK", *end) ? 10 : strchr("mM", *end) ? 20
                      : strchr("gG", *end) ? 30 : strchr("tT", *end) ? 40 : -1;
    if (errno || shift < 0 || (*end && end[1]) || value > (UINT64_MAX >> shift))
        return 0;
    return (uint64_t)value << shift;
}

static uint64_t configured_max_bytes(const pj_disk_options *options, const pj_logger *logger)
{
    if (options && options->max_bytes)
        return options->max_bytes;
    const char *text = getenv("PTXJIT_CACHE_MAX_BYTES");
    if (!text || !*text)
        return PJ_DEFAULT_CACHE_MAX_BYTES;
    uint64_t value = parse_size(text);
    if (!value)
        pj_log(logger, PTXJIT_LOG_WARNING,
               "PTXJIT_CACHE_MAX_BYTES='%.64s' is not a size; the disk cache keeps its default "
               "cap of 1G. Write a positive number of bytes, or one with K, M, G or T "
               "(e.g. 512M)",
               text);
    return value ? value : PJ_DEFAULT_CACHE_MAX_BYTES;
}

static int configured_shared(const pj_disk_options *options, const pj_logger *logger)
{
    if (options && options->shared)
        return 1;
    const char *text = getenv("PTXJIT_CACHE_SHARED");
    const int on = pj_switch_parse(text);
    if (on >= 0)
        return on;
    pj_log(logger, PTXJIT_LOG_WARNING,
           "PTXJIT_CACHE_SHARED='%.64s' is neither 1 nor 0; the disk cache stays private. "
           "Set it to 1 to share the cache directory with its group",
           text);
    return 0;
}

/* ---- counts ---- */

/* A hit or a miss is counted in memory: the lookup then takes no lock and writes nothing
 * shared. The counts are merged into the counters file (one locked update) when the cache
 * is closed, when stats are asked for and with each store. */
/* In a child of fork() the pending counts copied with the memory are the parent's, which
 * merges them itself: the child starts from none, or every count would be merged twice. */
static void own_pending(pj_disk_cache *cache)
{
    pid_t pid = getpid();
    if (__atomic_load_n(&cache->pending_pid, __ATOMIC_RELAXED) == pid)
        return;
    for (int i = 0; i < COUNTER_COUNT; i++)
        __atomic_store_n(&cache->pending[i], 0, __ATOMIC_RELAXED);
    __atomic_store_n(&cache->pending_pid, pid, __ATOMIC_RELAXED);
}

static void count_later(pj_disk_cache *cache, counter_id which)
{
    own_pending(cache);
    __atomic_add_fetch(&cache->pending[which], 1, __ATOMIC_RELAXED);
}

/* Moves the pending counts into delta. */
static void take_pending(pj_disk_cache *cache, int64_t delta[COUNTER_COUNT])
{
    own_pending(cache);
    for (int i = 0; i < COUNTER_COUNT; i++)
        delta[i] += (int64_t)__atomic_exchange_n(&cache->pending[i], 0, __ATOMIC_RELAXED);
}

/* Puts back what take_pending took, for an update that wrote nothing. */
static void return_pending(pj_disk_cache *cache, const int64_t taken[COUNTER_COUNT])
{
    for (int i = 0; i < COUNTER_COUNT; i++)
        __atomic_add_fetch(&cache->pending[i], (uint64_t)taken[i], __ATOMIC_RELAXED);
}

/* One update of the counters file with delta plus the pending counts, which stay pending if
 * the file cannot be updated; returns pj_counters_update's result. */
static int update_counters(pj_disk_cache *cache, const int64_t delta[COUNTER_COUNT],
                           uint64_t *totals)
{
    int64_t merged[COUNTER_COUNT] = {0}, taken[COUNTER_COUNT] = {0};
    take_pending(cache, taken);
    for (int i = 0; i < COUNTER_COUNT; i++)
        merged[i] = (delta ? delta[i] : 0) + taken[i];
    int result = pj_counters_update(cache->counters_path, cache->file_mode, merged, totals);
    if (result < 0)
        return_pending(cache, taken);
    return result;
}

static void merge_pending(pj_disk_cache *cache)
{
    own_pending(cache);
    int pending = 0;
    for (int i = 0; i < COUNTER_COUNT; i++)
        pending |= __atomic_load_n(&cache->pending[i], __ATOMIC_RELAXED) != 0;
    if (pending)
        update_counters(cache, NULL, NULL);
}

/* ---- opening ---- */

static ptxjit_status not_writable(const char *dir)
{
    return pj_error(PTXJIT_ERR_CACHE,
                    "cannot use cache directory %s: %s; set PTXJIT_CACHE_DIR (or the "
                    "cache_dir option) to a writable directory, or disable the disk cache",
                    dir, strerror(errno));
}

/* Makes dir (and its missing parents), then checks that it is trusted and writable. */
static ptxjit_status prepare_dir(const pj_disk_cache *cache, const char *dir)
{
    if (pj_directory_make_all(dir, cache->dir_mode) != 0)
        return pj_error(errno == ENOMEM ? PTXJIT_ERR_OUT_OF_MEMORY : PTXJIT_ERR_CACHE,
                        "cannot use cache directory %s: %s; set PTXJIT_CACHE_DIR (or the "
                        "cache_dir option) to a writable directory, or disable the disk cache",
                        dir, strerror(errno));
    ptxjit_status status = pj_directory_check_trust(dir, cache->shared);
    if (status == PTXJIT_OK && pj_fileio_access(dir, W_OK | X_OK) != 0)
        status = not_writable(dir);
    return status;
}

/* The usual open, of a cache whose v<N> is there: four system calls (the directory opened,
 * which the cache then holds; its fstat and the root's stat, for the trust check, the root's
 * first; v<N>'s writability, which is all a lookup or a store needs) instead of making and
 * checking each level by name. Where anything is missing, dir_fd stays -1 and the caller
 * makes the directories, as on a first open. */
static ptxjit_status open_existing(pj_disk_cache *cache, const char *root)
{
    int fd = open(cache->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return PTXJIT_OK;
    struct stat root_st, dir_st;
    if (stat(root, &root_st) != 0 || fstat(fd, &dir_st) != 0) {
        close(fd);
        return PTXJIT_OK;
    }
    ptxjit_status status = pj_directory_check_trust_stat(root, &root_st, cache->shared,
                                                         cache->euid);
    if (status == PTXJIT_OK)
        status = pj_directory_check_trust_stat(cache->dir, &dir_st, cache->shared, cache->euid);
    if (status == PTXJIT_OK && pj_fileio_access(cache->dir, W_OK | X_OK) != 0)
        status = not_writable(cache->dir);
    if (status == PTXJIT_OK)
        cache->dir_fd = fd;
    else
        close(fd);
    return status;
}

ptxjit_status pj_disk_cache_open(pj_disk_cache **out, const pj_disk_options *options,
                              const pj_logger *logger)
{
    *out = NULL;
    char *root = NULL;
    pj_disk_cache *cache = calloc(1, sizeof *cache);
    if (cache)
        cache->dir_fd = -1;
    ptxjit_status status = cache ? pj_directory_resolve_root(&root, options ? options->root : NULL)
                                 : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status != PTXJIT_OK)
        goto fail;
    if (logger)
        cache->logger = *logger;
    cache->max_bytes = configured_max_bytes(options, &cache->logger);
    cache->shared = configured_shared(options, &cache->logger);
    cache->dir_mode = cache->shared ? PJ_SHARED_DIR_MODE : PJ_PRIVATE_DIR_MODE;
    cache->file_mode = cache->shared ? PJ_SHARED_FILE_MODE : PJ_PRIVATE_FILE_MODE;
    cache->dir = path_join(root, PJ_VERSION_DIR(PJ_DISK_FORMAT_VERSION));
    cache->counters_path = cache->dir ? path_join(cache->dir, "/stats") : NULL;
    if (!cache->dir || !cache->counters_path) {
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    cache->euid = geteuid();
    cache->pending_pid = getpid();
    status = open_existing(cache, root);
    /* Else the root first: nothing is created inside a directory that is not trusted. */
    if (status == PTXJIT_OK && cache->dir_fd < 0)
        status = prepare_dir(cache, root);
    if (status == PTXJIT_OK && cache->dir_fd < 0)
        status = prepare_dir(cache, cache->dir);
    if (status == PTXJIT_OK && cache->dir_fd < 0 &&
        (cache->dir_fd = open(cache->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        status = pj_error(PTXJIT_ERR_CACHE, "cannot open cache directory %s: %s; set "
                          "PTXJIT_CACHE_DIR (or the cache_dir option) to a usable directory, "
                          "or disable the disk cache", cache->dir, strerror(errno));
    if (status != PTXJIT_OK)
        goto fail;
    free(root);
    *out = cache;
    return PTXJIT_OK;
fail:
    free(root);
    pj_disk_cache_close(cache);
    return status;
}

void pj_disk_cache_close(pj_disk_cache *cache)
{
    if (!cache)
        return;
    if (cache->dir_fd >= 0) {
        merge_pending(cache);
        close(cache->dir_fd);
    }
    free(cache->dir);
    free(cache->counters_path);
    free(cache);
}

const char *pj_disk_cache_dir(const pj_disk_cache *cache)
{
    return cache->dir;
}

uint64_t pj_disk_cache_max_bytes(const pj_disk_cache *cache)
{
    return cache->max_bytes;
}

int pj_disk_cache_shared(const pj_disk_cache *cache)
{
    return cache->shared;
}

char *pj_disk_cache_entry_path(const pj_disk_cache *cache, const char *key)
{
    return pj_entry_key_valid(key) ? path_printf("%s/%.2s/%s", cache->dir, key, key) : NULL;
}

char *pj_disk_cache_record_path(const pj_disk_cache *cache, const char *key)
{
    return pj_entry_key_valid(key)
               ? path_printf("%s/%.2s/%s" PJ_RECORD_SUFFIX, cache->dir, key, key)
               : NULL;
}

/* Kernels and tuning records share the format, the checks and the cap; a record is the file
 * "<key>.tune" and never counts as a kernel's hit or miss. */
typedef enum { KIND_KERNEL, KIND_RECORD } entry_kind;

static char *kind_path(const pj_disk_cache *cache, const char *key, entry_kind kind)
{
    return kind == KIND_RECORD ? pj_disk_cache_record_path(cache, key)
                               : pj_disk_cache_entry_path(cache, key);
}

static void count_now(pj_disk_cache *cache, counter_id which)
{
    int64_t delta[COUNTER_COUNT] = {0};
    delta[which] = 1;
    update_counters(cache, delta, NULL);
}

/* ---- lookup ---- */

typedef enum { READ_OK, READ_MISSING, READ_UNUSABLE, READ_CORRUPT } read_result;

static read_result read_all(int fd, char *data, size_t want, size_t *got, const char **why)
{
    while (*got < want) {
        ssize_t n = read(fd, data + *got, want - *got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            *why = strerror(errno);
            return READ_UNUSABLE;
        }
        if (n == 0) {
            *why = "truncated while read";
            return READ_CORRUPT;
        }
        *got += (size_t)n;
    }
    return READ_OK;
}

/* Whether an entry file may hold code we load. The directory check at open covers the root
 * and v<N>, not the shards below them or the files: a private cache that was once shared
 * can still have group-writable shards and entries, and whoever can write those could put
 * a cubin there. Private: the file must be ours and writable by nobody else; shared: by
 * nobody outside the group. */
const char *pj_disk_cache_untrusted(const pj_disk_cache *cache, const struct stat *st)
{
    if (st->st_mode & S_IWOTH)
        return "writable by every user: not trusted";
    if (cache->shared)
        return NULL;
    if (st->st_uid != cache->euid)
        return "owned by another user: not trusted (PTXJIT_CACHE_SHARED=1 shares a cache "
               "with its group)";
    if (st->st_mode & S_IWGRP)
        return "writable by its group: not trusted (PTXJIT_CACHE_SHARED=1 shares a cache "
               "with its group)";
    return NULL;
}

/* Reads the open entry whole into *data (caller frees); its stat in *st. Only a regular file
 * is an entry. */
static read_result read_open_entry(const pj_disk_cache *cache, int fd, char **data, size_t *size,
                                   const char **why, struct stat *st_out)
{
    struct stat st;
    if (fstat(fd, &st) != 0) {
        *why = strerror(errno);
        return READ_UNUSABLE;
    }
    if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
        return READ_UNUSABLE;
    }
    if ((*why = pj_disk_cache_untrusted(cache, &st)))
        return READ_UNUSABLE;
    if ((uint64_t)st.st_size > PJ_ENTRY_MAX_BYTES) {
        *why = "impossibly large";
        return READ_CORRUPT;
    }
    if (!(*data = malloc((size_t)st.st_size + PJ_ENTRY_DECODE_SLACK))) {
        *why = "out of memory";
        return READ_UNUSABLE;
    }
    *st_out = st;
    return read_all(fd, *data, (size_t)st.st_size, size, why);
}

/* How long a reader waits for its shared lock: an evictor holds the entry's exclusive lock
 * for the microseconds of a check and an unlink, so a longer wait means one that is stopped.
 * The reader then reads without the lock, which only told evictors to pass the entry over:
 * the open descriptor reads the whole file even if it is unlinked meanwhile, and the
 * checksum still decides. */
#define READ_LOCK_WAIT_MS 20

/* Opens and reads name (relative to the cache's directory): O_NOFOLLOW refuses a link
 * planted there, O_NONBLOCK keeps a FIFO from hanging the open. The shared flock, held until
 * close, tells evictors that the entry is being read. */
static read_result read_entry(const pj_disk_cache *cache, const char *name, char **data,
                              size_t *size, const char **why, int *fd_out, struct stat *st)
{
    int fd = openat(cache->dir_fd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int error = errno;
        *why = error == ELOOP ? "a symbolic link" : strerror(error);
        return error == ENOENT ? READ_MISSING : READ_UNUSABLE;
    }
    /* Without lock support (ENOLCK), or past the wait: read unprotected. */
    (void)pj_fileio_flock_within(fd, LOCK_SH, READ_LOCK_WAIT_MS);
    *fd_out = fd;
    return read_open_entry(cache, fd, data, size, why, st);
}

/* A hit renews the entry's time, which orders eviction, once it is RENEW_AFTER_SECONDS old
 * (or from the future: a clock set back). A read-only cache stays unordered. */
static void renew(int fd, const struct stat *st)
{
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0)
        return;
    time_t age = now.tv_sec - st->st_mtim.tv_sec;
    if (age >= RENEW_AFTER_SECONDS || age < 0)
        (void)futimens(fd, NULL);
}

/* "ab/<key>" or "ab/<key>.tune": the entry's name under the cache's directory. */
static void entry_name(char out[64], const char *key, entry_kind kind)
{
    const char *suffix = kind == KIND_RECORD ? PJ_RECORD_SUFFIX : "";
    memcpy(out, key, 2); /* a valid key: 32 hex digits (load_kind checked) */
    out[2] = '/';
    memcpy(out + 3, key, 32);
    pj_copy_string(out + 35, 64 - 35, suffix);
}

static ptxjit_status load_kind(pj_disk_cache *cache, const char *key, entry_kind kind,
                               pj_artifact *out, int *found)
{
    *found = 0;
    memset(out, 0, sizeof *out);
    if (!pj_entry_key_valid(key))
        return bad_key(key);
    const char *redo = kind == KIND_RECORD ? "the problem is tuned again" : "recompiling";
    char name[64], *data = NULL;
    entry_name(name, key, kind);
    const char *why = NULL;
    size_t size = 0;
    int fd = -1;
    struct stat st = {0};
    ptxjit_status status = PTXJIT_OK;
    double start = pj_latency_start();
    read_result result = read_entry(cache, name, &data, &size, &why, &fd, &st);
    pj_latency_stop(PJ_LATENCY_read, start);
    start = pj_latency_start();
    if (result == READ_OK) {
        status = pj_entry_decode_in_place(out, &why, data, size, key);
        if (status == PTXJIT_OK)
            data = NULL; /* the artifact's now */
        /* An older format is no damage: a plain miss, which the next store replaces. */
        result = status != PTXJIT_ERR_CACHE          ? READ_OK
                 : why == pj_entry_older_format      ? READ_MISSING
                                                     : READ_CORRUPT;
        *found = status == PTXJIT_OK;
        if (status == PTXJIT_ERR_CACHE)
            status = PTXJIT_OK; /* reported below; a miss for the caller */
    }
    pj_latency_stop(PJ_LATENCY_verify, start);
    if (*found)
        renew(fd, &st);
    if (result == READ_CORRUPT) {
        pj_log(&cache->logger, PTXJIT_LOG_WARNING,
               "cache entry %s/%s is corrupt (%s); removing it, %s", cache->dir, name, why, redo);
        struct stat held; /* a writer may have renamed a fresh entry over it since */
        if (pj_fileio_same_file(fd, cache->dir_fd, name, &held))
            unlinkat(cache->dir_fd, name, 0);
        count_now(cache, COUNTER_corrupt);
    } else if (result == READ_UNUSABLE) {
        pj_log(&cache->logger, PTXJIT_LOG_WARNING,
               "cache entry %s/%s cannot be used (%s); %s", cache->dir, name, why, redo);
    }
    if (fd >= 0)
        pj_fileio_unlock_and_close(fd);
    if (kind == KIND_KERNEL)
        count_later(cache, *found ? COUNTER_hits : COUNTER_misses);
    free(data);
    return status;
}

ptxjit_status pj_disk_cache_load(pj_disk_cache *cache, const char *key, pj_artifact *out, int *found)
{
    return load_kind(cache, key, KIND_KERNEL, out, found);
}

ptxjit_status pj_disk_cache_load_record(pj_disk_cache *cache, const char *key, pj_artifact *out,
                                        int *found)
{
    return load_kind(cache, key, KIND_RECORD, out, found);
}

/* ---- store ---- */

/* A new file in dir named .tmp.<pid>.<counter>, private or (shared) group-writable, with
 * exactly that mode whatever the umask; a leftover of a crashed process with our pid makes
 * us take the next number. */
static int create_temp(const pj_disk_cache *cache, const char *dir, char **temp)
{
    static unsigned counter;
    for (int attempt = 0; attempt < 64; attempt++) {
        unsigned number = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
        char *name = path_printf("%s/.tmp.%ld.%u", dir, (long)getpid(), number);
        if (!name) {
            errno = ENOMEM;
            return -1;
        }
        int fd = pj_fileio_create(name, cache->file_mode);
        int error = errno;
        if (fd >= 0 && fchmod(fd, cache->file_mode) != 0) { /* whatever the umask */
            error = errno;
            close(fd);
            unlink(name);
            fd = -1;
        }
        if (fd >= 0) {
            *temp = name;
            return fd;
        }
        free(name);
        if ((errno = error) != EEXIST)
            return -1;
    }
    return -1;
}

/* A rename is durable once its directory is synced. A failure here is not reported: the
 * entry is whole either way, and one lost to a crash is recompiled. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    (void)pj_fileio_fsync(fd);
    close(fd);
}

/* Puts data at path so that readers see the old file or the whole new one, never a part:
 * a temp file in the same directory, written, fsynced, then renamed over path. *replaced:
 * the size of the entry it replaced (0 if none). A copy (durable 0) skips both fsyncs: see
 * pj_disk_cache_store_copy. */
static ptxjit_status publish(const pj_disk_cache *cache, const char *dir, const char *path,
                             const char *data, size_t size, uint64_t *replaced, int durable)
{
    char *temp = NULL;
    int fd = create_temp(cache, dir, &temp);
    if (fd < 0)
        return pj_error(errno == ENOMEM ? PTXJIT_ERR_OUT_OF_MEMORY : PTXJIT_ERR_IO,
                        "cannot create a temporary file in %s: %s", dir, strerror(errno));
    ptxjit_status status = PTXJIT_OK;
    if (pj_fileio_write_all(fd, data, size) < 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot write cache entry %s: %s", path, strerror(errno));
    else if (durable && pj_fileio_fsync(fd) != 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot fsync cache entry %s: %s", path, strerror(errno));
    if (close(fd) != 0 && status == PTXJIT_OK)
        status = pj_error(PTXJIT_ERR_IO, "cannot close %s: %s", temp, strerror(errno));
    struct stat old;
    *replaced = lstat(path, &old) == 0 && S_ISREG(old.st_mode) ? (uint64_t)old.st_size : 0;
    if (status == PTXJIT_OK && pj_fileio_rename(temp, path) != 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot rename %s to %s: %s", temp, path, strerror(errno));
    if (status == PTXJIT_OK && durable)
        sync_dir(dir);
    else if (status != PTXJIT_OK)
        unlink(temp);
    free(temp);
    return status;
}

/* Brings the byte counter back to what a scan measured; deltas that other processes added
 * meanwhile are kept, so the counter may run high (which only makes eviction come early). */
static void correct_bytes(pj_disk_cache *cache, const evict_report *report,
                          uint64_t counted)
{
    int64_t delta[COUNTER_COUNT] = {0};
    delta[COUNTER_evicted] = (int64_t)report->evicted;
    delta[COUNTER_bytes] = (int64_t)(report->bytes - report->evicted_bytes) - (int64_t)counted;
    update_counters(cache, delta, NULL);
}

/* The event of an eviction that removed something. */
static void tell_evicted(const pj_disk_cache *cache, const evict_report *report)
{
    if (report->evicted && cache->logger.on_event)
        pj_notify(&cache->logger, (ptxjit_event){.kind = PTXJIT_EVENT_EVICTION,
                                                 .status = PTXJIT_OK,
                                                 .detail = cache->dir,
                                                 .count = report->evicted,
                                                 .bytes = report->evicted_bytes});
}

/* After a store: over the cap (by the counter), or a counter that was never measured, makes
 * this process evict, unless another one is at it. */
static void keep_under_cap(pj_disk_cache *cache, int64_t added)
{
    uint64_t totals[COUNTER_COUNT];
    int64_t delta[COUNTER_COUNT] = {0};
    delta[COUNTER_stores] = 1;
    delta[COUNTER_bytes] = added;
    int measured = update_counters(cache, delta, totals);
    if (measured < 0) /* nothing read: no estimate to act on; the next store tries again */
        return;
    if (measured && totals[COUNTER_bytes] <= cache->max_bytes)
        return;
    evict_report report = {0};
    /* An incomplete scan (a shard unreadable, out of memory) measured less than the cache:
     * the counter keeps its estimate rather than drop to that. */
    if (pj_evict_run(&report, cache->dir, cache->max_bytes, cache->file_mode, 0) && report.complete)
        correct_bytes(cache, &report, totals[COUNTER_bytes]);
    tell_evicted(cache, &report);
}

static ptxjit_status store_kind(pj_disk_cache *cache, const char *key, entry_kind kind,
                                const pj_artifact *artifact, int durable)
{
    if (!pj_entry_key_valid(key))
        return bad_key(key);
    if (!pj_entry_storable(artifact))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "cannot cache an artifact without entry names or with a NULL cubin");
    size_t size = 0;
    uint64_t replaced = 0;
    char shard[3] = {key[0], key[1], '\0'};
    char *dir = path_printf("%s/%s", cache->dir, shard);
    char *path = kind_path(cache, key, kind);
    char *data = pj_entry_encode(&size, key, artifact);
    ptxjit_status status;
    if (!dir || !path || !data) {
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory storing cache entry %s", key);
    } else {
        struct stat st; /* a new shard's name must be durable too, in the cache root */
        int made = stat(dir, &st) != 0;
        if (pj_directory_make(dir, cache->dir_mode) != 0) {
            status = pj_error(PTXJIT_ERR_CACHE, "cannot create cache directory %s: %s", dir,
                              strerror(errno));
        } else {
            pj_evict_sweep_shard(cache->dir, shard);
            status = publish(cache, dir, path, data, size, &replaced, durable);
            if (status == PTXJIT_OK && durable && made)
                sync_dir(cache->dir);
        }
    }
    if (status == PTXJIT_OK)
        keep_under_cap(cache, (int64_t)size - (int64_t)replaced);
    free(data);
    free(path);
    free(dir);
    return status;
}

ptxjit_status pj_disk_cache_store(pj_disk_cache *cache, const char *key, const pj_artifact *artifact)
{
    return store_kind(cache, key, KIND_KERNEL, artifact, 1);
}

ptxjit_status pj_disk_cache_store_record(pj_disk_cache *cache, const char *key,
                                         const pj_artifact *artifact)
{
    return store_kind(cache, key, KIND_RECORD, artifact, 1);
}

ptxjit_status pj_disk_cache_store_copy(pj_disk_cache *cache, const char *key,
                                       const pj_artifact *artifact)
{
    return store_kind(cache, key, KIND_KERNEL, artifact, 0);
}

ptxjit_status pj_disk_cache_store_record_copy(pj_disk_cache *cache, const char *key,
                                              const pj_artifact *artifact)
{
    return store_kind(cache, key, KIND_RECORD, artifact, 0);
}

void pj_disk_cache_store_note(pj_disk_cache *cache, const char *key, const char *text)
{
    if (!text || !pj_entry_key_valid(key))
        return;
    char *path = path_printf("%s/%.2s/%s" PJ_NOTE_SUFFIX, cache->dir, key, key);
    char *temp = path_printf("%s/%.2s/.%s.%ld" PJ_NOTE_SUFFIX ".tmp", cache->dir, key, key,
                             (long)getpid());
    int fd = path && temp ? open(temp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
                                 cache->file_mode)
                          : -1;
    if (fd >= 0) {
        size_t length = strlen(text);
        int ok = write(fd, text, length) == (ssize_t)length;
        ok &= close(fd) == 0;
        if (!ok || rename(temp, path) != 0)
            unlink(temp);
    }
    free(temp);
    free(path);
}

void pj_disk_cache_read_note(pj_disk_cache *cache, const char *key, char **text)
{
    *text = NULL;
    if (!pj_entry_key_valid(key))
        return;
    char name[32 + 8];
    memcpy(name, key, 2);
    name[2] = '/';
    memcpy(name + 3, key, 32);
    memcpy(name + 35, PJ_NOTE_SUFFIX, sizeof PJ_NOTE_SUFFIX);
    int fd = openat(cache->dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0)
        return;
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size < (1 << 20)) {
        char *data = malloc((size_t)st.st_size + 1);
        size_t got = 0;
        const char *why;
        if (data && read_all(fd, data, (size_t)st.st_size, &got, &why) == 0) {
            data[got] = 0;
            *text = data;
        } else {
            free(data);
        }
    }
    close(fd);
}

void pj_disk_cache_count_compile(pj_disk_cache *cache, double ms)
{
    static const double bounds[] = {100, 300, 1000, 3000, 10000, 30000};
    own_pending(cache);
    __atomic_add_fetch(&cache->pending[COUNTER_compiles], 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&cache->pending[COUNTER_compile_ms], (uint64_t)(ms + 0.5),
                       __ATOMIC_RELAXED);
    for (int i = 0; i < (int)(sizeof bounds / sizeof *bounds); i++)
        if (ms <= bounds[i]) {
            count_later(cache, (counter_id)(COUNTER_compile_le_100ms + i));
            break;
        }
}

void pj_disk_cache_count_wait(pj_disk_cache *cache, int timed_out)
{
    count_later(cache, COUNTER_compile_waits);
    if (timed_out)
        count_later(cache, COUNTER_compile_wait_timeouts);
}

/* ---- stats, clear, trim ---- */

static void count_entry(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                        void *user)
{
    (void)top_fd, (void)path;
    ptxjit_cache_stats *stats = user;
    if (kind == SCAN_TEMP)
        return;
    stats->entries += kind == SCAN_ENTRY;
    stats->tune_records += kind == SCAN_RECORD;
    stats->bytes += (uint64_t)st->st_size;
}

ptxjit_status pj_disk_cache_stats(pj_disk_cache *cache, ptxjit_cache_stats *out)
{
    uint64_t totals[COUNTER_COUNT];
    memset(out, 0, sizeof *out);
    if (update_counters(cache, NULL, totals) < 0)
        pj_log(&cache->logger, PTXJIT_LOG_WARNING,
               "cache counters %s cannot be read (%s); hits, misses and stores show as 0. "
               "Remove the file if it is not a regular file; it is made again",
               cache->counters_path, strerror(errno));
    out->hits = totals[COUNTER_hits];
    out->misses = totals[COUNTER_misses];
    out->stores = totals[COUNTER_stores];
    out->corrupt = totals[COUNTER_corrupt];
    out->evicted = totals[COUNTER_evicted];
    out->compile_waits = totals[COUNTER_compile_waits];
    out->compile_wait_timeouts = totals[COUNTER_compile_wait_timeouts];
    out->compiles = totals[COUNTER_compiles];
    out->compile_ms = totals[COUNTER_compile_ms];
    for (int i = 0; i < PTXJIT_COMPILE_BUCKETS; i++)
        out->compile_buckets[i] = totals[COUNTER_compile_le_100ms + i];
    out->max_bytes = cache->max_bytes;
    pj_scan_cache(cache->dir, count_entry, out);
    return PTXJIT_OK;
}

typedef struct {
    uint64_t removed;
    int error;       /* the first failure's errno */
    int only_records;
} clear_state;

static void remove_entry(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                         void *user)
{
    (void)st;
    clear_state *state = user;
    if (kind == SCAN_TEMP || (state->only_records && kind != SCAN_RECORD))
        return;
    if (unlinkat(top_fd, path, 0) == 0) {
        state->removed++;
        if (kind == SCAN_ENTRY) { /* its key components (pj_disk_cache_store_note) */
            char note[256];
            snprintf(note, sizeof note, "%s" PJ_NOTE_SUFFIX, path);
            unlinkat(top_fd, note, 0);
        }
    }
    else if (errno != ENOENT && !state->error) /* ENOENT: a concurrent clear got it first */
        state->error = errno;
}

ptxjit_status pj_disk_cache_clear_records(pj_disk_cache *cache, uint64_t *removed)
{
    clear_state state = {0, 0, 1};
    pj_scan_cache(cache->dir, remove_entry, &state);
    *removed = state.removed;
    if (state.error)
        return pj_error(PTXJIT_ERR_IO, "cannot remove every tuning record of %s: %s",
                        cache->dir, strerror(state.error));
    return PTXJIT_OK;
}

typedef struct {
    pj_disk_record_visitor *visit;
    void *user;
} record_walk;

static void visit_record(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                         void *user)
{
    (void)top_fd, (void)st;
    record_walk *walk = user;
    char key[33];
    if (kind != SCAN_RECORD)
        return;
    memcpy(key, path + 3, 32); /* "ab/<key>.tune" */
    key[32] = '\0';
    walk->visit(walk->user, key);
}

void pj_disk_cache_each_record(pj_disk_cache *cache, pj_disk_record_visitor *visit, void *user)
{
    record_walk walk = {visit, user};
    pj_scan_cache(cache->dir, visit_record, &walk);
}

ptxjit_status pj_disk_cache_clear(pj_disk_cache *cache, uint64_t *removed)
{
    clear_state state = {0, 0, 0};
    pj_scan_cache(cache->dir, remove_entry, &state);
    int64_t dropped[COUNTER_COUNT] = {0};
    take_pending(cache, dropped); /* counts from before the clear go with it */
    pj_counters_update(cache->counters_path, cache->file_mode, NULL, NULL);
    if (removed)
        *removed = state.removed;
    if (state.error)
        return pj_error(PTXJIT_ERR_IO, "cannot remove every entry of %s: %s", cache->dir,
                        strerror(state.error));
    return PTXJIT_OK;
}

ptxjit_status pj_disk_cache_trim(pj_disk_cache *cache, evict_report *report)
{
    uint64_t totals[COUNTER_COUNT];
    update_counters(cache, NULL, totals);
    if (!pj_evict_run(report, cache->dir, cache->max_bytes, cache->file_mode, PJ_EVICT_WAIT_MS))
        return errno == EWOULDBLOCK
                   ? pj_error(PTXJIT_ERR_IO,
                              "another process has held %s/evict.lock for %d s (an eviction "
                              "stopped or stuck); try again, or find it with 'fuser %s/"
                              "evict.lock'",
                              cache->dir, PJ_EVICT_WAIT_MS / 1000, cache->dir)
                   : pj_error(PTXJIT_ERR_IO, "cannot lock %s/evict.lock: %s", cache->dir,
                              strerror(errno));
    if (report->out_of_memory)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory scanning %s", cache->dir);
    if (!report->complete)
        return pj_error(PTXJIT_ERR_IO,
                        "cannot read every directory of %s (a shard unreadable, or out of "
                        "memory); nothing was evicted. Check its permissions (ls -l %s)",
                        cache->dir, cache->dir);
    correct_bytes(cache, report, totals[COUNTER_bytes]);
    tell_evicted(cache, report);
    return PTXJIT_OK;
}

/* disk.c — the on-disk cache: one checksummed file per entry, written to a temp file, fsynced
 * and renamed into place, so a reader sees a whole entry or none; hit/miss counters shared
 * by every process through a small locked stats file. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/disk.h"
#include "cache/fileio.h"

#define MAGIC "PTXJITC"    /* 8 bytes with its NUL */
#define FIELD_COUNT 6      /* family, params, ptx, cubin, log, entries */
#define HEADER_SIZE (8 + 4 + 4 + 32)
#define TRAILER_SIZE 16
#define MAX_ENTRY_BYTES ((uint64_t)1 << 30)

struct pj_disk_cache {
    char *dir;        /* <root>/v<N> */
    char *stats_path;
    pj_logger logger;
};

typedef enum { STAT_HITS, STAT_MISSES, STAT_STORES, STAT_CORRUPT, STAT_COUNT } stat_field;
static const char *const stat_names[STAT_COUNT] = {"hits", "misses", "stores", "corrupt"};

/* ---- opening ---- */

static char *resolve_root(const char *root)
{
    const char *env = getenv("PTXJIT_CACHE_DIR");
    if (root && *root)
        return pj_strdup(root);
    if (env && *env)
        return pj_strdup(env);
    pj_strbuf sb;
    sb_init(&sb);
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && *xdg)
        sb_appendf(&sb, "%s/ptxjit", xdg);
    else if (home && *home)
        sb_appendf(&sb, "%s/.cache/ptxjit", home);
    else
        sb_append(&sb, "/tmp/ptxjit-cache"); /* no home: still private (0700) */
    return sb_take(&sb);
}

/* mkdir -p, each new level 0700: cached code is only as trustworthy as its directory. */
static int make_dirs(const char *path)
{
    char *copy = pj_strdup(path);
    if (!copy)
        return -1;
    for (char *slash = copy + 1; (slash = strchr(slash, '/')); slash++) {
        *slash = '\0';
        if (mkdir(copy, 0700) != 0 && errno != EEXIST) {
            free(copy);
            return -1;
        }
        *slash = '/';
    }
    int result = mkdir(copy, 0700) != 0 && errno != EEXIST ? -1 : 0;
    free(copy);
    struct stat st;
    if (result == 0 && stat(path, &st) == 0 && !S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return result;
}

ptxjit_status disk_cache_open(pj_disk_cache **out, const char *root, const pj_logger *logger)
{
    *out = NULL;
    char *base = resolve_root(root);
    pj_strbuf sb;
    sb_init(&sb);
    sb_appendf(&sb, "%s/v%d", base ? base : "", PJ_DISK_FORMAT_VERSION);
    free(base);
    char *dir = sb_take(&sb);
    if (!dir)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (make_dirs(dir) != 0 || access(dir, W_OK | X_OK) != 0) {
        ptxjit_status status = pj_error(
            PTXJIT_ERR_CACHE,
            "cache directory %s is not usable: %s; set PTXJIT_CACHE_DIR (or the cache_dir "
            "option) to a writable directory, or turn the disk cache off",
            dir, strerror(errno));
        free(dir);
        return status;
    }
    pj_disk_cache *cache = calloc(1, sizeof *cache);
    sb_appendf(&sb, "%s/stats", dir);
    char *stats_path = sb_take(&sb);
    if (!cache || !stats_path) {
        free(cache);
        free(dir);
        free(stats_path);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    cache->dir = dir;
    cache->stats_path = stats_path;
    if (logger)
        cache->logger = *logger;
    *out = cache;
    return PTXJIT_OK;
}

void disk_cache_close(pj_disk_cache *cache)
{
    if (!cache)
        return;
    free(cache->dir);
    free(cache->stats_path);
    free(cache);
}

const char *disk_cache_dir(const pj_disk_cache *cache)
{
    return cache->dir;
}

static int valid_key(const char *key)
{
    if (!key || strlen(key) != 32)
        return 0;
    for (int i = 0; i < 32; i++)
        if (!strchr("0123456789abcdef", key[i]))
            return 0;
    return 1;
}

char *disk_cache_entry_path(const pj_disk_cache *cache, const char *key)
{
    if (!valid_key(key))
        return NULL;
    pj_strbuf sb;
    sb_init(&sb);
    sb_appendf(&sb, "%s/%.2s/%s", cache->dir, key, key);
    return sb_take(&sb);
}

/* ---- shared counters ---- */

/* Adds one to a counter under an exclusive lock; a failure only loses the count. */
static void stats_add(pj_disk_cache *cache, stat_field field)
{
    int fd = open(cache->stats_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0)
        return;
    if (flock(fd, LOCK_EX) == 0) {
        char text[512] = "";
        ssize_t n = pread(fd, text, sizeof text - 1, 0);
        text[n > 0 ? n : 0] = '\0';
        unsigned long long values[STAT_COUNT] = {0};
        for (int i = 0; i < STAT_COUNT; i++) {
            const char *at = strstr(text, stat_names[i]);
            if (at)
                values[i] = strtoull(at + strlen(stat_names[i]), NULL, 10);
        }
        values[field]++;
        int length = snprintf(text, sizeof text, "hits %llu\nmisses %llu\nstores %llu\n"
                              "corrupt %llu\n", values[0], values[1], values[2], values[3]);
        if (pwrite(fd, text, (size_t)length, 0) == length)
            (void)!ftruncate(fd, length);
    }
    close(fd); /* releases the lock */
}

static void stats_read(pj_disk_cache *cache, unsigned long long values[STAT_COUNT])
{
    memset(values, 0, STAT_COUNT * sizeof *values);
    char *text = NULL;
    if (pj_read_file(&text, NULL, cache->stats_path) != PTXJIT_OK) {
        pj_error_clear();
        return;
    }
    for (int i = 0; i < STAT_COUNT; i++) {
        const char *at = strstr(text, stat_names[i]);
        if (at)
            values[i] = strtoull(at + strlen(stat_names[i]), NULL, 10);
    }
    free(text);
}

/* ---- the entry format ----
 * "PTXJITC\0", u32 version, u32 field count, 32-byte key; then per field a u64 length and
 * its bytes (family, params, ptx, cubin, log, entry names each NUL-terminated); then the
 * XXH3-128 of all that, low and high halves. Host byte order: a cache is per machine. */

static void put_field(pj_strbuf *sb, const void *data, uint64_t size)
{
    sb_append_n(sb, (const char *)&size, sizeof size);
    sb_append_n(sb, data, (size_t)size);
}

static char *encode(const char *key, const pj_artifact *a, size_t *size)
{
    pj_strbuf sb, names;
    sb_init(&sb);
    sb_init(&names);
    uint32_t version = PJ_DISK_FORMAT_VERSION, fields = FIELD_COUNT;
    sb_append_n(&sb, MAGIC, 8);
    sb_append_n(&sb, (const char *)&version, 4);
    sb_append_n(&sb, (const char *)&fields, 4);
    sb_append_n(&sb, key, 32);
    const char *strings[] = {a->family, a->params, a->ptx};
    for (int i = 0; i < 3; i++)
        put_field(&sb, strings[i] ? strings[i] : "", strings[i] ? strlen(strings[i]) : 0);
    put_field(&sb, a->cubin, a->cubin_size);
    put_field(&sb, a->log ? a->log : "", a->log ? strlen(a->log) : 0);
    for (int i = 0; i < a->entry_count; i++)
        sb_append_n(&names, a->entries[i], strlen(a->entries[i]) + 1);
    put_field(&sb, names.data ? names.data : "", names.length);
    sb_free(&names);
    if (sb.failed) {
        sb_free(&sb);
        return NULL;
    }
    pj_hash128 sum = pj_hash(sb.data, sb.length);
    sb_append_n(&sb, (const char *)&sum.low, 8);
    sb_append_n(&sb, (const char *)&sum.high, 8);
    *size = sb.length;
    return sb_take(&sb);
}

typedef struct {
    const char *at, *end;
} cursor;

/* The next field as a new NUL-terminated copy; NULL if it runs past the end. */
static char *take_field(cursor *c, uint64_t *size)
{
    uint64_t length;
    if ((size_t)(c->end - c->at) < sizeof length)
        return NULL;
    memcpy(&length, c->at, sizeof length);
    c->at += sizeof length;
    if (length > (uint64_t)(c->end - c->at))
        return NULL;
    char *copy = pj_strndup(c->at, (size_t)length);
    c->at += length;
    if (size)
        *size = length;
    return copy;
}

/* Splits the NUL-separated names; every name must be non-empty and terminated. */
static const char *split_entries(pj_artifact *a, const char *names, uint64_t size)
{
    if (size == 0 || names[size - 1] != '\0')
        return "no entry names";
    for (uint64_t at = 0; at < size; at += strlen(names + at) + 1) {
        if (names[at] == '\0')
            return "an empty entry name";
        char **grown = realloc(a->entries, (size_t)(a->entry_count + 1) * sizeof *grown);
        if (!grown)
            return "out of memory";
        a->entries = grown;
        a->entries[a->entry_count++] = pj_strdup(names + at);
    }
    return NULL;
}

/* Decodes and verifies data; returns NULL on success or why the entry is bad. */
static const char *decode(pj_artifact *a, const char *key, const char *data, size_t size)
{
    if (size < HEADER_SIZE + TRAILER_SIZE)
        return "truncated";
    uint32_t version, fields;
    memcpy(&version, data + 8, 4);
    memcpy(&fields, data + 12, 4);
    if (memcmp(data, MAGIC, 8) != 0)
        return "not a ptxjit cache entry";
    if (version != PJ_DISK_FORMAT_VERSION || fields != FIELD_COUNT)
        return "written by another cache format version";
    pj_hash128 want = pj_hash(data, size - TRAILER_SIZE), got;
    memcpy(&got.low, data + size - TRAILER_SIZE, 8);
    memcpy(&got.high, data + size - 8, 8);
    if (want.low != got.low || want.high != got.high)
        return "checksum mismatch";
    if (memcmp(data + 16, key, 32) != 0)
        return "holds another key";
    cursor c = {data + HEADER_SIZE, data + size - TRAILER_SIZE};
    uint64_t cubin_size = 0, names_size = 0;
    a->family = take_field(&c, NULL);
    a->params = take_field(&c, NULL);
    a->ptx = take_field(&c, NULL);
    a->cubin = (uint8_t *)take_field(&c, &cubin_size);
    a->cubin_size = (size_t)cubin_size;
    a->log = take_field(&c, NULL);
    char *names = take_field(&c, &names_size);
    const char *why = NULL;
    if (!a->family || !a->params || !a->ptx || !a->cubin || !a->log || !names)
        why = "a field runs past the end";
    else if (c.at != c.end)
        why = "trailing bytes";
    else if (cubin_size == 0 || !*a->ptx)
        why = "no code";
    else
        why = split_entries(a, names, names_size);
    free(names);
    return why;
}

/* ---- lookup and store ---- */

static void drop_corrupt(pj_disk_cache *cache, const char *path, const char *why)
{
    pj_log(&cache->logger, PTXJIT_LOG_WARNING,
           "cache entry %s is corrupt (%s); removing it and recompiling", path, why);
    unlink(path);
    stats_add(cache, STAT_CORRUPT);
}

/* Reads path whole if it is a regular file (not a link, not a directory). */
static const char *read_entry(char **data, size_t *size, const char *path, int *missing)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        *missing = errno == ENOENT;
        return errno == ELOOP ? "a symbolic link" : strerror(errno);
    }
    struct stat st;
    const char *why = NULL;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
        why = "not a regular file";
    else if ((uint64_t)st.st_size > MAX_ENTRY_BYTES)
        why = "impossibly large";
    else if (!(*data = malloc((size_t)st.st_size + 1)))
        why = "out of memory";
    size_t got = 0;
    while (!why && got < (size_t)st.st_size) {
        ssize_t n = read(fd, *data + got, (size_t)st.st_size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            why = n < 0 ? strerror(errno) : "shrank while read";
        else
            got += (size_t)n;
    }
    close(fd);
    *size = got;
    return why;
}

ptxjit_status disk_cache_load(pj_disk_cache *cache, const char *key, pj_artifact *out,
                              int *found)
{
    *found = 0;
    memset(out, 0, sizeof *out);
    char *path = disk_cache_entry_path(cache, key);
    if (!path)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "cache key '%s' is not 32 hex digits",
                        key ? key : "(null)");
    char *data = NULL;
    size_t size = 0;
    int missing = 0;
    const char *why = read_entry(&data, &size, path, &missing);
    if (why && !missing) {
        /* Something else stands at the entry's path: report it, leave it, use no cache. */
        pj_log(&cache->logger, PTXJIT_LOG_WARNING, "cache entry %s cannot be read (%s)", path,
               why);
    } else if (!why) {
        why = decode(out, key, data, size);
        if (why) {
            artifact_free(out);
            drop_corrupt(cache, path, why);
        } else {
            *found = 1;
        }
    }
    stats_add(cache, *found ? STAT_HITS : STAT_MISSES);
    free(data);
    free(path);
    return PTXJIT_OK;
}

static ptxjit_status write_temp(const char *temp, const char *data, size_t size)
{
    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0)
        return pj_error(PTXJIT_ERR_IO, "cannot create %s: %s", temp, strerror(errno));
    ptxjit_status status = PTXJIT_OK;
    if (fileio_write_all(fd, data, size) < 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot write %s: %s", temp, strerror(errno));
    else if (fileio_fsync(fd) != 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot fsync %s: %s", temp, strerror(errno));
    if (close(fd) != 0 && status == PTXJIT_OK)
        status = pj_error(PTXJIT_ERR_IO, "cannot close %s: %s", temp, strerror(errno));
    return status;
}

/* The rename is durable only once the directory holding the new name is synced. */
static void sync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fileio_fsync(fd);
        close(fd);
    }
}

ptxjit_status disk_cache_store(pj_disk_cache *cache, const char *key,
                               const pj_artifact *artifact)
{
    char *path = disk_cache_entry_path(cache, key);
    if (!path)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "cache key '%s' is not 32 hex digits",
                        key ? key : "(null)");
    static unsigned counter;
    pj_strbuf sb;
    sb_init(&sb);
    sb_appendf(&sb, "%s/%.2s", cache->dir, key);
    char *dir = sb_take(&sb);
    sb_appendf(&sb, "%s/.tmp.%s.%ld.%u", dir ? dir : "", key, (long)getpid(),
               __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
    char *temp = sb_take(&sb);
    size_t size = 0;
    char *data = encode(key, artifact, &size);
    ptxjit_status status = PTXJIT_OK;
    if (!dir || !temp || !data)
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    else if (mkdir(dir, 0700) != 0 && errno != EEXIST)
        status = pj_error(PTXJIT_ERR_CACHE, "cannot create %s: %s", dir, strerror(errno));
    else if ((status = write_temp(temp, data, size)) == PTXJIT_OK &&
             fileio_rename(temp, path) != 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot rename %s to %s: %s", temp, path,
                          strerror(errno));
    if (status == PTXJIT_OK) {
        sync_dir(dir);
        stats_add(cache, STAT_STORES);
    } else if (temp) {
        unlink(temp);
    }
    free(data);
    free(temp);
    free(dir);
    free(path);
    return status;
}

/* ---- stats and clear ---- */

static int is_shard(const char *name)
{
    return strlen(name) == 2 && strchr("0123456789abcdef", name[0]) &&
           strchr("0123456789abcdef", name[1]);
}

/* Calls visit(path, size) for every entry file (not temp files, not the stats file). */
static void for_each_entry(pj_disk_cache *cache, void (*visit)(const char *, off_t, void *),
                           void *user)
{
    DIR *top = opendir(cache->dir);
    if (!top)
        return;
    for (struct dirent *shard; (shard = readdir(top));) {
        if (!is_shard(shard->d_name))
            continue;
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", cache->dir, shard->d_name);
        DIR *inner = opendir(path);
        for (struct dirent *e; inner && (e = readdir(inner));) {
            if (!valid_key(e->d_name))
                continue;
            char file[4200];
            struct stat st;
            snprintf(file, sizeof file, "%s/%s", path, e->d_name);
            if (lstat(file, &st) == 0 && S_ISREG(st.st_mode))
                visit(file, st.st_size, user);
        }
        if (inner)
            closedir(inner);
    }
    closedir(top);
}

static void count_entry(const char *path, off_t size, void *user)
{
    (void)path;
    ptxjit_cache_stats *stats = user;
    stats->entries++;
    stats->bytes += (uint64_t)size;
}

ptxjit_status disk_cache_stats(pj_disk_cache *cache, ptxjit_cache_stats *out)
{
    memset(out, 0, sizeof *out);
    unsigned long long values[STAT_COUNT];
    stats_read(cache, values);
    out->hits = values[STAT_HITS];
    out->misses = values[STAT_MISSES];
    out->stores = values[STAT_STORES];
    out->corrupt = values[STAT_CORRUPT];
    for_each_entry(cache, count_entry, out);
    return PTXJIT_OK;
}

static void remove_entry(const char *path, off_t size, void *user)
{
    (void)size;
    if (unlink(path) == 0)
        ++*(uint64_t *)user;
}

ptxjit_status disk_cache_clear(pj_disk_cache *cache, uint64_t *removed)
{
    uint64_t count = 0;
    for_each_entry(cache, remove_entry, &count);
    if (unlink(cache->stats_path) != 0 && errno != ENOENT)
        return pj_error(PTXJIT_ERR_IO, "cannot reset %s: %s", cache->stats_path,
                        strerror(errno));
    if (removed)
        *removed = count;
    return PTXJIT_OK;
}

/* disk.c — the on-disk cache: one checksummed file per entry, written to a temp file, fsynced
 * and renamed into place, so a reader sees a whole entry or none; hit/miss counters shared
 * by every process through a small flock'ed stats file. */
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

/* ---- the entry format ----
 * "PTXJITC\0", u32 format version, u32 field count, the 32-character key; then six fields,
 * each a u64 length and its bytes: family, params, ptx, cubin, log, entries (u32 count, then
 * count NUL-terminated names); then the XXH3-128 of every byte before it (low, high half).
 * Host byte order: a cache belongs to one machine. */
#define MAGIC "PTXJITC" /* 8 bytes with its NUL */
#define HEADER_SIZE (8 + 4 + 4 + 32)
#define CHECKSUM_SIZE 16
#define MAX_ENTRY_BYTES ((uint64_t)1 << 30) /* far above any cubin; bounds the malloc */
#define HEX "0123456789abcdef"
#define STATS_FORMAT "hits %llu\nmisses %llu\nstores %llu\ncorrupt %llu\n"

enum { FIELD_FAMILY, FIELD_PARAMS, FIELD_PTX, FIELD_CUBIN, FIELD_LOG, FIELD_ENTRIES, FIELD_COUNT };
enum { STAT_HITS, STAT_MISSES, STAT_STORES, STAT_CORRUPT, STAT_COUNT };

/* Nothing here changes after open: threads share the cache through the file system only. */
struct pj_disk_cache {
    char *dir;        /* <root>/v<N> */
    char *stats_path; /* <dir>/stats */
    pj_logger logger;
};

typedef struct {
    const char *data;
    uint64_t size;
} span;

static char *path_printf(const char *format, ...) PJ_PRINTF(1, 2);
static char *path_printf(const char *format, ...)
{
    pj_strbuf sb;
    sb_init(&sb);
    va_list args;
    va_start(args, format);
    sb_vappendf(&sb, format, args);
    va_end(args);
    return sb_take(&sb);
}

/* Exactly 32 lowercase hex digits: the key becomes a file name, so nothing else may pass. */
static int valid_key(const char *key)
{
    return key && strlen(key) == 32 && strspn(key, HEX) == 32;
}

static ptxjit_status bad_key(const char *key)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "cache key '%.64s' is not 32 lowercase hex digits",
                    key ? key : "(null)");
}

/* ---- opening ---- */

/* The root in disk.h's order, without trailing slashes. No $HOME is an error rather than a
 * shared /tmp directory, where another user could plant code for us to load. */
static ptxjit_status resolve_root(char **out, const char *root)
{
    const char *env = getenv("PTXJIT_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
    const char *home = getenv("HOME");
    char *path;
    if (root && *root)
        path = pj_strdup(root);
    else if (env && *env)
        path = pj_strdup(env);
    else if (xdg && *xdg)
        path = path_printf("%s/ptxjit", xdg);
    else if (home && *home)
        path = path_printf("%s/.cache/ptxjit", home);
    else
        return pj_error(PTXJIT_ERR_CACHE, "no cache directory: HOME is not set; set "
                                          "PTXJIT_CACHE_DIR or disable the disk cache");
    if (!path)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t n = strlen(path); n > 1 && path[n - 1] == '/'; n--)
        path[n - 1] = '\0';
    *out = path;
    return PTXJIT_OK;
}

/* mkdir of one level, 0700: cached code is only as trustworthy as its directory. An existing
 * directory is fine; an existing file is ENOTDIR. */
static int make_dir(const char *path)
{
    if (mkdir(path, 0700) == 0)
        return 0;
    int error = errno;
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return 0;
    errno = error == EEXIST ? ENOTDIR : error;
    return -1;
}

/* mkdir -p; path is cut at each slash in turn and restored. */
static int make_dirs(char *path)
{
    for (char *slash = strchr(path + 1, '/'); slash; slash = strchr(slash + 1, '/')) {
        *slash = '\0';
        int result = make_dir(path);
        *slash = '/';
        if (result != 0)
            return -1;
    }
    return make_dir(path);
}

ptxjit_status disk_cache_open(pj_disk_cache **out, const char *root, const pj_logger *logger)
{
    *out = NULL;
    char *base = NULL;
    pj_disk_cache *cache = calloc(1, sizeof *cache);
    ptxjit_status status =
        cache ? resolve_root(&base, root) : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status != PTXJIT_OK)
        goto fail;
    cache->dir = path_printf("%s/v%d", base, PJ_DISK_FORMAT_VERSION);
    cache->stats_path = path_printf("%s/v%d/stats", base, PJ_DISK_FORMAT_VERSION);
    if (!cache->dir || !cache->stats_path) {
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        goto fail;
    }
    if (make_dirs(cache->dir) != 0 || access(cache->dir, W_OK | X_OK) != 0) {
        status = pj_error(PTXJIT_ERR_CACHE,
                          "cannot use cache directory %s: %s; set PTXJIT_CACHE_DIR (or the "
                          "cache_dir option) to a writable directory, or disable the disk cache",
                          cache->dir, strerror(errno));
        goto fail;
    }
    if (logger)
        cache->logger = *logger;
    free(base);
    *out = cache;
    return PTXJIT_OK;
fail:
    free(base);
    disk_cache_close(cache);
    return status;
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

char *disk_cache_entry_path(const pj_disk_cache *cache, const char *key)
{
    return valid_key(key) ? path_printf("%s/%.2s/%s", cache->dir, key, key) : NULL;
}

/* ---- shared counters ---- */

/* One locked read-modify-write of the counters: adds delta (NULL: resets them) and fills
 * totals (may be NULL). The counters are advisory, so a failure only loses a count. */
static void stats_update(const pj_disk_cache *cache, const uint64_t *delta, uint64_t *totals)
{
    unsigned long long values[STAT_COUNT] = {0};
    char text[256];
    int changed = !delta;
    int fd = open(cache->stats_path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd < 0 || flock(fd, LOCK_EX) != 0)
        goto done;
    ssize_t n = pread(fd, text, sizeof text - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    if (delta) /* a damaged file keeps what parses; the rest restart at zero */
        (void)sscanf(text, STATS_FORMAT, &values[0], &values[1], &values[2], &values[3]);
    for (int i = 0; delta && i < STAT_COUNT; i++) {
        values[i] += delta[i];
        changed |= delta[i] != 0;
    }
    if (changed) {
        int length =
            snprintf(text, sizeof text, STATS_FORMAT, values[0], values[1], values[2], values[3]);
        if (pwrite(fd, text, (size_t)length, 0) == length)
            (void)!ftruncate(fd, length);
    }
done:
    if (fd >= 0)
        close(fd); /* releases the lock */
    for (int i = 0; totals && i < STAT_COUNT; i++)
        totals[i] = values[i];
}

/* ---- encoding ---- */

static void put_field(pj_strbuf *sb, const void *data, uint64_t size)
{
    sb_append_n(sb, (const char *)&size, sizeof size);
    if (size)
        sb_append_n(sb, data, (size_t)size);
}

static void put_text(pj_strbuf *sb, const char *text)
{
    put_field(sb, text, text ? strlen(text) : 0);
}

/* The entry file's bytes; NULL if out of memory. */
static char *encode(const char *key, const pj_artifact *a, size_t *size)
{
    pj_strbuf sb, names;
    sb_init(&sb);
    sb_init(&names);
    uint32_t version = PJ_DISK_FORMAT_VERSION, fields = FIELD_COUNT;
    uint32_t count = (uint32_t)a->entry_count;
    sb_append_n(&sb, MAGIC, 8);
    sb_append_n(&sb, (const char *)&version, 4);
    sb_append_n(&sb, (const char *)&fields, 4);
    sb_append_n(&sb, key, 32);
    put_text(&sb, a->family);
    put_text(&sb, a->params);
    put_text(&sb, a->ptx);
    put_field(&sb, a->cubin, a->cubin_size);
    put_text(&sb, a->log);
    sb_append_n(&names, (const char *)&count, 4);
    for (int i = 0; i < a->entry_count; i++)
        sb_append_n(&names, a->entries[i], strlen(a->entries[i]) + 1);
    put_field(&sb, names.data, names.length);
    sb.failed |= names.failed;
    sb_free(&names);
    pj_hash128 sum = sb.failed ? (pj_hash128){0, 0} : pj_hash(sb.data, sb.length);
    sb_append_n(&sb, (const char *)&sum.low, 8);
    sb_append_n(&sb, (const char *)&sum.high, 8);
    *size = sb.length;
    return sb_take(&sb);
}

/* ---- decoding: every check before any allocation ---- */

/* Header and checksum; NULL or why the file is not this key's entry. */
static const char *check_frame(const char *data, size_t size, const char *key)
{
    if (size < HEADER_SIZE + CHECKSUM_SIZE)
        return "truncated";
    if (memcmp(data, MAGIC, 8) != 0)
        return "not a ptxjit cache entry";
    uint32_t version, fields;
    memcpy(&version, data + 8, 4);
    memcpy(&fields, data + 12, 4);
    if (version != PJ_DISK_FORMAT_VERSION || fields != FIELD_COUNT)
        return "written by another cache format version";
    pj_hash128 want = pj_hash(data, size - CHECKSUM_SIZE), got;
    memcpy(&got.low, data + size - CHECKSUM_SIZE, 8);
    memcpy(&got.high, data + size - 8, 8);
    if (want.low != got.low || want.high != got.high)
        return "checksum mismatch";
    if (memcmp(data + 16, key, 32) != 0)
        return "holds another key";
    return NULL;
}

/* Splits [at, end) into the length-prefixed fields, which must fill it exactly. */
static const char *split_fields(span fields[FIELD_COUNT], const char *at, const char *end)
{
    for (int i = 0; i < FIELD_COUNT; i++) {
        uint64_t length;
        if ((size_t)(end - at) < sizeof length)
            return "truncated field";
        memcpy(&length, at, sizeof length);
        at += sizeof length;
        if (length > (uint64_t)(end - at))
            return "a field runs past the end";
        fields[i] = (span){at, length};
        at += length;
    }
    return at == end ? NULL : "trailing bytes";
}

/* The entries field: u32 count > 0, then exactly count non-empty NUL-terminated names. */
static const char *check_entries(span names, uint32_t *count)
{
    if (names.size < 4)
        return "no entry list";
    memcpy(count, names.data, 4);
    const char *at = names.data + 4, *end = names.data + names.size;
    uint32_t seen = 0;
    for (; at < end; seen++) {
        const char *nul = memchr(at, '\0', (size_t)(end - at));
        if (!nul)
            return "an unterminated entry name";
        if (nul == at)
            return "an empty entry name";
        at = nul + 1;
    }
    return *count == 0 || seen != *count ? "a wrong entry count" : NULL;
}

/* NULL if data is a whole, intact entry for key; fields and count then describe it. */
static const char *verify_entry(span fields[FIELD_COUNT], uint32_t *count, const char *data,
                                size_t size, const char *key)
{
    const char *why = check_frame(data, size, key);
    if (!why)
        why = split_fields(fields, data + HEADER_SIZE, data + size - CHECKSUM_SIZE);
    if (why)
        return why;
    static const int texts[] = {FIELD_FAMILY, FIELD_PARAMS, FIELD_PTX, FIELD_LOG};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(texts); i++)
        if (memchr(fields[texts[i]].data, '\0', (size_t)fields[texts[i]].size))
            return "a NUL inside a text field";
    return check_entries(fields[FIELD_ENTRIES], count);
}

/* Copies verified fields into a; on failure a is left empty. */
static ptxjit_status copy_out(pj_artifact *a, const span f[FIELD_COUNT], uint32_t count)
{
    a->family = pj_strndup(f[FIELD_FAMILY].data, (size_t)f[FIELD_FAMILY].size);
    a->params = pj_strndup(f[FIELD_PARAMS].data, (size_t)f[FIELD_PARAMS].size);
    a->ptx = pj_strndup(f[FIELD_PTX].data, (size_t)f[FIELD_PTX].size);
    a->log = pj_strndup(f[FIELD_LOG].data, (size_t)f[FIELD_LOG].size);
    a->cubin_size = (size_t)f[FIELD_CUBIN].size;
    a->cubin = malloc(a->cubin_size ? a->cubin_size : 1);
    if (a->cubin)
        memcpy(a->cubin, f[FIELD_CUBIN].data, a->cubin_size);
    a->entries = calloc(count, sizeof *a->entries);
    int ok = a->family && a->params && a->ptx && a->log && a->cubin && a->entries;
    if (a->entries)
        a->entry_count = (int)count;
    const char *name = f[FIELD_ENTRIES].data + 4;
    for (uint32_t i = 0; ok && i < count; i++, name += strlen(name) + 1)
        ok = (a->entries[i] = pj_strdup(name)) != NULL;
    if (ok)
        return PTXJIT_OK;
    artifact_free(a);
    return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory reading a cache entry");
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

/* Reads path whole into *data (caller frees). Only a regular file is an entry: a directory,
 * link or device found there is reported and left alone; O_NONBLOCK keeps a FIFO from
 * hanging the open. */
static read_result read_entry(const char *path, char **data, size_t *size, const char **why)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        int error = errno;
        *why = error == ELOOP ? "a symbolic link" : strerror(error);
        return error == ENOENT ? READ_MISSING : READ_UNUSABLE;
    }
    struct stat st;
    read_result result = READ_UNUSABLE;
    if (fstat(fd, &st) != 0) {
        *why = strerror(errno);
    } else if (!S_ISREG(st.st_mode)) {
        *why = "not a regular file";
    } else if ((uint64_t)st.st_size > MAX_ENTRY_BYTES) {
        *why = "impossibly large";
        result = READ_CORRUPT;
    } else if (!(*data = malloc((size_t)st.st_size + 1))) {
        *why = "out of memory";
    } else {
        result = read_all(fd, *data, (size_t)st.st_size, size, why);
    }
    close(fd);
    return result;
}

ptxjit_status disk_cache_load(pj_disk_cache *cache, const char *key, pj_artifact *out, int *found)
{
    *found = 0;
    memset(out, 0, sizeof *out);
    if (!valid_key(key))
        return bad_key(key);
    char *path = disk_cache_entry_path(cache, key), *data = NULL;
    if (!path)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    const char *why = NULL;
    size_t size = 0;
    span fields[FIELD_COUNT];
    uint32_t count = 0;
    uint64_t delta[STAT_COUNT] = {0};
    ptxjit_status status = PTXJIT_OK;
    read_result result = read_entry(path, &data, &size, &why);
    if (result == READ_OK && (why = verify_entry(fields, &count, data, size, key)))
        result = READ_CORRUPT;
    if (result == READ_OK) {
        status = copy_out(out, fields, count);
        *found = status == PTXJIT_OK;
    } else if (result == READ_CORRUPT) {
        /* A reader racing a rename may unlink the fresh entry: harmless, it is recompiled. */
        pj_log(&cache->logger, PTXJIT_LOG_WARNING,
               "cache entry %s is corrupt (%s); removing it and recompiling", path, why);
        unlink(path);
        delta[STAT_CORRUPT] = 1;
    } else if (result == READ_UNUSABLE) {
        pj_log(&cache->logger, PTXJIT_LOG_WARNING,
               "cache entry %s cannot be read (%s); leaving it and recompiling", path, why);
    }
    delta[*found ? STAT_HITS : STAT_MISSES] = 1;
    stats_update(cache, delta, NULL);
    free(data);
    free(path);
    return status;
}

/* ---- store ---- */

/* What the reader would reject is refused here, so a bad artifact fails where it is made. */
static int storable(const pj_artifact *a)
{
    if (!a || a->entry_count < 1 || !a->entries || (a->cubin_size && !a->cubin))
        return 0;
    for (int i = 0; i < a->entry_count; i++)
        if (!a->entries[i] || !a->entries[i][0])
            return 0;
    return 1;
}

/* A new private file in dir named .tmp.<pid>.<counter>; a leftover of a crashed process
 * with our pid makes us take the next number. */
static int create_temp(const char *dir, char **temp)
{
    static unsigned counter;
    for (int attempt = 0; attempt < 64; attempt++) {
        unsigned number = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
        char *name = path_printf("%s/.tmp.%ld.%u", dir, (long)getpid(), number);
        if (!name) {
            errno = ENOMEM;
            return -1;
        }
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        int error = errno;
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
    (void)fileio_fsync(fd);
    close(fd);
}

/* Puts data at path so that readers see the old file or the whole new one, never a part:
 * a temp file in the same directory, written, fsynced, then renamed over path. */
static ptxjit_status publish(const char *dir, const char *path, const char *data, size_t size)
{
    char *temp = NULL;
    int fd = create_temp(dir, &temp);
    if (fd < 0)
        return pj_error(PTXJIT_ERR_IO, "cannot create a temporary file in %s: %s", dir,
                        strerror(errno));
    ptxjit_status status = PTXJIT_OK;
    if (fileio_write_all(fd, data, size) < 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot write cache entry %s: %s", path, strerror(errno));
    else if (fileio_fsync(fd) != 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot fsync cache entry %s: %s", path, strerror(errno));
    if (close(fd) != 0 && status == PTXJIT_OK)
        status = pj_error(PTXJIT_ERR_IO, "cannot close %s: %s", temp, strerror(errno));
    if (status == PTXJIT_OK && fileio_rename(temp, path) != 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot rename %s to %s: %s", temp, path, strerror(errno));
    if (status == PTXJIT_OK)
        sync_dir(dir);
    else
        unlink(temp);
    free(temp);
    return status;
}

ptxjit_status disk_cache_store(pj_disk_cache *cache, const char *key, const pj_artifact *artifact)
{
    if (!valid_key(key))
        return bad_key(key);
    if (!storable(artifact))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "cannot cache an artifact without entry names or with a NULL cubin");
    size_t size = 0;
    char *dir = path_printf("%s/%.2s", cache->dir, key);
    char *path = disk_cache_entry_path(cache, key);
    char *data = encode(key, artifact, &size);
    ptxjit_status status;
    if (!dir || !path || !data)
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory storing cache entry %s", key);
    else if (make_dir(dir) != 0)
        status = pj_error(PTXJIT_ERR_CACHE, "cannot create cache directory %s: %s", dir,
                          strerror(errno));
    else
        status = publish(dir, path, data, size);
    if (status == PTXJIT_OK)
        stats_update(cache, (const uint64_t[STAT_COUNT]){[STAT_STORES] = 1}, NULL);
    free(data);
    free(path);
    free(dir);
    return status;
}

/* ---- stats and clear ---- */

typedef void entry_visitor(int dir_fd, const char *name, const struct stat *st, void *user);

static void visit_shard(int top_fd, const char *shard, entry_visitor *visit, void *user)
{
    int fd = openat(top_fd, shard, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
    if (!dir) {
        if (fd >= 0)
            close(fd);
        return;
    }
    for (struct dirent *e; (e = readdir(dir));) {
        struct stat st;
        if (valid_key(e->d_name) && strncmp(e->d_name, shard, 2) == 0 &&
            fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode))
            visit(fd, e->d_name, &st, user);
    }
    closedir(dir); /* closes fd */
}

/* Visits every entry file, <shard>/<key>; temp files, the stats file and anything else
 * that lives in the directory are not entries. */
static void for_each_entry(const pj_disk_cache *cache, entry_visitor *visit, void *user)
{
    DIR *top = opendir(cache->dir);
    if (!top)
        return;
    for (struct dirent *shard; (shard = readdir(top));)
        if (strlen(shard->d_name) == 2 && strspn(shard->d_name, HEX) == 2)
            visit_shard(dirfd(top), shard->d_name, visit, user);
    closedir(top);
}

static void count_entry(int dir_fd, const char *name, const struct stat *st, void *user)
{
    (void)dir_fd, (void)name;
    ptxjit_cache_stats *stats = user;
    stats->entries++;
    stats->bytes += (uint64_t)st->st_size;
}

ptxjit_status disk_cache_stats(pj_disk_cache *cache, ptxjit_cache_stats *out)
{
    uint64_t totals[STAT_COUNT], zero[STAT_COUNT] = {0};
    memset(out, 0, sizeof *out);
    stats_update(cache, zero, totals);
    out->hits = totals[STAT_HITS];
    out->misses = totals[STAT_MISSES];
    out->stores = totals[STAT_STORES];
    out->corrupt = totals[STAT_CORRUPT];
    for_each_entry(cache, count_entry, out);
    return PTXJIT_OK;
}

typedef struct {
    uint64_t removed;
    int error; /* the first failure's errno */
} clear_state;

static void remove_entry(int dir_fd, const char *name, const struct stat *st, void *user)
{
    (void)st;
    clear_state *state = user;
    if (unlinkat(dir_fd, name, 0) == 0)
        state->removed++;
    else if (errno != ENOENT && !state->error) /* ENOENT: a concurrent clear got it first */
        state->error = errno;
}

ptxjit_status disk_cache_clear(pj_disk_cache *cache, uint64_t *removed)
{
    clear_state state = {0, 0};
    for_each_entry(cache, remove_entry, &state);
    stats_update(cache, NULL, NULL);
    if (removed)
        *removed = state.removed;
    if (state.error)
        return pj_error(PTXJIT_ERR_IO, "cannot remove every entry of %s: %s", cache->dir,
                        strerror(state.error));
    return PTXJIT_OK;
}

/* bundle.c — cache bundles: the cache's entries and tuning records as one POSIX ustar file,
 * written directly (512-byte headers, data padded to 512, two zero blocks at the end), and
 * read back member by member with every member checked as a disk load checks an entry before
 * it is published (atomically, through the disk cache's store). A bundle is data from
 * elsewhere: its names decide nothing but which key a member claims to be, and a member whose
 * bytes are not that key's whole entry is skipped. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/bundle.h"
#include "cache/scan.h"

#define BLOCK 512
#define HEX "0123456789abcdef"

/* ---- the ustar header ---- */

typedef struct {
    char name[100], mode[8], uid[8], gid[8], size[12], mtime[12], checksum[8], type;
    char linkname[100], magic[6], version[2], uname[32], gname[32], devmajor[8], devminor[8];
    char prefix[155], pad[12];
} tar_header;

_Static_assert(sizeof(tar_header) == BLOCK, "a ustar header is one block");

static unsigned header_sum(const tar_header *h)
{
    const unsigned char *bytes = (const unsigned char *)h;
    unsigned sum = 0;
    for (size_t i = 0; i < BLOCK; i++)
        sum += i >= offsetof(tar_header, checksum) && i < offsetof(tar_header, type) ? ' '
                                                                                      : bytes[i];
    return sum;
}

static void header_make(tar_header *h, const char *name, uint64_t size, int64_t mtime)
{
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "%s", name);
    memcpy(h->mode, "0000644", 8);
    memcpy(h->uid, "0000000", 8);
    memcpy(h->gid, "0000000", 8);
    snprintf(h->size, sizeof h->size, "%011llo", (unsigned long long)size);
    snprintf(h->mtime, sizeof h->mtime, "%011llo", (unsigned long long)mtime);
    h->type = '0';
    memcpy(h->magic, "ustar", 6);
    memcpy(h->version, "00", 2);
    snprintf(h->checksum, sizeof h->checksum, "%06o", header_sum(h));
    h->checksum[7] = ' ';
}

/* An octal field (NUL- or space-terminated); -1 if it is not one. */
static int64_t octal(const char *field, size_t size)
{
    int64_t value = 0;
    size_t i = 0;
    while (i < size && field[i] == ' ')
        i++;
    if (i == size || field[i] < '0' || field[i] > '7')
        return -1;
    for (; i < size && field[i] >= '0' && field[i] <= '7'; i++)
        value = value * 8 + (field[i] - '0');
    return i == size || field[i] == '\0' || field[i] == ' ' ? value : -1;
}

/* ---- export ---- */

typedef struct {
    const pj_disk_cache *disk;
    FILE *out;
    const char *const *families;
    int count;
    ptxjit_bundle_stats *stats;
    int error; /* the first write's errno */
} export_state;

static int family_wanted(const export_state *e, const char *family)
{
    for (int i = 0; i < e->count; i++)
        if (strcmp(e->families[i], family) == 0)
            return 1;
    return e->count == 0;
}

enum {
    MEMBER_REFUSED = -1,
    MEMBER_GONE = -2,
    MEMBER_UNREADABLE = -3,
    MEMBER_UNTRUSTED = -4
};

/* Read as the disk cache reads: no links followed, a regular file that the load's trust rule
 * (pj_disk_cache_untrusted) accepts, on the stat of the open file: a bundle carries its
 * entries to a machine that stores them as its own, so what this cache would not load must
 * not leave it. The size, or MEMBER_REFUSED (not a regular file, or too large: what the load
 * counts as damage), MEMBER_UNTRUSTED, MEMBER_GONE (evicted or replaced since the scan) or
 * MEMBER_UNREADABLE (errno says why). */
static int read_member(const pj_disk_cache *disk, int top_fd, const char *path,
                       const struct stat *st, char **data)
{
    *data = NULL;
    if (pj_disk_cache_untrusted(disk, st))
        return MEMBER_UNTRUSTED;
    if (st->st_size < 0 || (uint64_t)st->st_size > PJ_ENTRY_MAX_BYTES)
        return MEMBER_REFUSED;
    int fd = openat(top_fd, path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? MEMBER_GONE : errno == ELOOP ? MEMBER_REFUSED : MEMBER_UNREADABLE;
    struct stat now;
    int result = MEMBER_REFUSED;
    if (fstat(fd, &now) != 0)
        result = MEMBER_UNREADABLE;
    else if (S_ISREG(now.st_mode) && pj_disk_cache_untrusted(disk, &now))
        result = MEMBER_UNTRUSTED; /* changed since the scan's stat */
    else if (S_ISREG(now.st_mode) && (uint64_t)now.st_size <= PJ_ENTRY_MAX_BYTES &&
             !(*data = malloc((size_t)now.st_size + 1)))
        errno = ENOMEM, result = MEMBER_UNREADABLE;
    ssize_t got = *data ? read(fd, *data, (size_t)now.st_size) : -1;
    if (*data && got < 0)
        result = MEMBER_UNREADABLE;
    else if (*data && got == now.st_size)
        result = (int)got;
    int saved = errno;
    close(fd);
    errno = saved;
    if (result < 0) {
        free(*data);
        *data = NULL;
    }
    return result;
}

static void write_member(export_state *e, const char *name, const char *data, size_t size)
{
    static const char zeros[BLOCK];
    tar_header h;
    header_make(&h, name, size, (int64_t)time(NULL));
    size_t pad = (BLOCK - size % BLOCK) % BLOCK;
    if (fwrite(&h, BLOCK, 1, e->out) != 1 || fwrite(data, 1, size, e->out) != size ||
        fwrite(zeros, 1, pad, e->out) != pad)
        e->error = e->error ? e->error : errno ? errno : EIO;
}

static void export_one(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                       void *user)
{
    export_state *e = user;
    if (kind == SCAN_TEMP || e->error)
        return;
    char key[33], *data = NULL;
    memcpy(key, path + 3, 32); /* "ab/<key>" or "ab/<key>.tune" */
    key[32] = '\0';
    int size = read_member(e->disk, top_fd, path, st, &data);
    if (size == MEMBER_GONE)
        return; /* evicted since the scan found it: not in the cache, not in the bundle */
    if (size == MEMBER_UNTRUSTED) {
        e->stats->untrusted++;
        return;
    }
    if (size == MEMBER_UNREADABLE) {
        e->error = errno ? errno : EIO;
        return;
    }
    pj_artifact a;
    const char *why;
    if (size < 0 || pj_entry_decode(&a, &why, data, (size_t)size, key) != PTXJIT_OK) {
        e->stats->corrupt++;
        free(data);
        return;
    }
    if (family_wanted(e, a.family)) {
        char name[64];
        snprintf(name, sizeof name, "v%d/%s", PJ_DISK_FORMAT_VERSION, path);
        write_member(e, name, data, (size_t)size);
        if (kind == SCAN_RECORD)
            e->stats->records++;
        else
            e->stats->entries++;
    }
    pj_artifact_free(&a);
    free(data);
}

/* path's temporary sibling, renamed over it once whole: its own for each export of the
 * process (threads or contexts may export to one path at once), created exclusively. */
static char *temp_path(const char *path)
{
    static unsigned long exports;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s.tmp.%ld.%lu", path, (long)getpid(),
                  __atomic_add_fetch(&exports, 1, __ATOMIC_RELAXED));
    return pj_sb_take(&sb);
}

static ptxjit_status finish_export(export_state *e, const char *temp, const char *path)
{
    static const char end[2 * BLOCK];
    if (!e->error && fwrite(end, sizeof end, 1, e->out) != 1)
        e->error = errno ? errno : EIO;
    if (!e->error && (fflush(e->out) != 0 || fsync(fileno(e->out)) != 0))
        e->error = errno;
    if (fclose(e->out) != 0 && !e->error)
        e->error = errno;
    if (!e->error && rename(temp, path) != 0)
        e->error = errno;
    if (!e->error)
        return PTXJIT_OK;
    unlink(temp);
    return pj_error(PTXJIT_ERR_IO, "cannot write the bundle %s: %s; choose a writable path with "
                                   "room for the cache's entries (or, when reading the cache "
                                   "failed, check its directory)",
                    path, strerror(e->error));
}

ptxjit_status pj_bundle_export(pj_disk_cache *disk, const char *path,
                               const char *const *families, int count, ptxjit_bundle_stats *stats)
{
    if (count > 0 && !families)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "families is NULL but count is %d", count);
    for (int i = 0; i < count; i++) /* each is compared by name with every entry's family */
        if (!families[i])
            return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                            "families[%d] is NULL; give %d family names, or count 0 for all",
                            i, count);
    char *temp = temp_path(path);
    if (!temp)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    export_state e = {disk, NULL, families, count < 0 ? 0 : count, stats, 0};
    int fd = open(temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
    e.out = fd >= 0 ? fdopen(fd, "wb") : NULL;
    if (!e.out) {
        ptxjit_status status = pj_error(PTXJIT_ERR_IO, "cannot create the bundle %s: %s; choose "
                                                       "a writable path",
                                        temp, strerror(errno));
        if (fd >= 0)
            close(fd);
        free(temp);
        return status;
    }
    pj_scan_cache(pj_disk_cache_dir(disk), export_one, &e);
    ptxjit_status status = finish_export(&e, temp, path);
    free(temp);
    return status;
}

/* ---- import ---- */

typedef enum { MEMBER_ENTRY, MEMBER_RECORD, MEMBER_FOREIGN, MEMBER_UNSAFE } member_kind;

/* A name with no absolute start and no ".." component. */
static int name_safe(const char *name)
{
    if (name[0] == '/' || !name[0])
        return 0;
    for (const char *s = name; (s = strstr(s, "..")); s += 2)
        if ((s == name || s[-1] == '/') && (s[2] == '/' || s[2] == '\0'))
            return 0;
    return 1;
}

/* What a member named name is: "v<N>/<shard>/<key>[.tune]" of this cache version, with the
 * shard the key's first two digits; key gets the key. */
static member_kind classify(const char *name, char type, char key[33])
{
    if (!name_safe(name) || (type != '0' && type != '\0' && type != '5' && type != 'x' &&
                             type != 'g'))
        return MEMBER_UNSAFE; /* links, devices, FIFOs, or a name that climbs out */
    char prefix[16];
    int n = snprintf(prefix, sizeof prefix, "v%d/", PJ_DISK_FORMAT_VERSION);
    if (type != '0' && type != '\0')
        return MEMBER_FOREIGN;
    if (strncmp(name, prefix, (size_t)n) != 0)
        return MEMBER_FOREIGN;
    const char *shard = name + n;
    if (strlen(shard) < 3 || shard[2] != '/')
        return MEMBER_FOREIGN;
    const char *file = shard + 3;
    size_t length = strlen(file);
    int record = length == 32 + strlen(PJ_RECORD_SUFFIX) && !strcmp(file + 32, PJ_RECORD_SUFFIX);
    if ((length != 32 && !record) || strspn(file, HEX) != 32 || memcmp(shard, file, 2) != 0)
        return MEMBER_FOREIGN;
    memcpy(key, file, 32);
    key[32] = '\0';
    return record ? MEMBER_RECORD : MEMBER_ENTRY;
}

/* ---- the keys an import has published, so that a key given again is counted apart ---- */

/* An open-addressed set of "<key>e" (entries) and "<key>r" (records): a bundle may hold a
 * million members, too many to compare with each other. */
typedef struct {
    char (*names)[34];
    size_t capacity, count; /* capacity a power of two, kept at least twice count */
} key_set;

static void key_name(char out[34], const char *key, member_kind kind)
{
    memcpy(out, key, 32);
    out[32] = kind == MEMBER_RECORD ? 'r' : 'e';
    out[33] = '\0';
}

/* The slot of name: where it is, or the empty one where it belongs. */
static char *key_slot(const key_set *set, const char *name)
{
    size_t i = (size_t)pj_hash64(name, 33, 0) & (set->capacity - 1);
    while (set->names[i][0] && memcmp(set->names[i], name, 33) != 0)
        i = (i + 1) & (set->capacity - 1);
    return set->names[i];
}

static int key_seen(const key_set *set, const char *key, member_kind kind)
{
    char name[34];
    key_name(name, key, kind);
    return set->capacity && key_slot(set, name)[0];
}

/* Adds the key; 0 when out of memory (the import then only counts less precisely). */
static int key_add(key_set *set, const char *key, member_kind kind)
{
    if (2 * (set->count + 1) > set->capacity) {
        key_set grown = {NULL, set->capacity ? 2 * set->capacity : 256, 0};
        if (!(grown.names = calloc(grown.capacity, sizeof *grown.names)))
            return 0;
        for (size_t i = 0; i < set->capacity; i++)
            if (set->names[i][0])
                memcpy(key_slot(&grown, set->names[i]), set->names[i], 34);
        grown.count = set->count;
        free(set->names);
        *set = grown;
    }
    char name[34];
    key_name(name, key, kind);
    char *slot = key_slot(set, name);
    if (!slot[0]) {
        memcpy(slot, name, 34);
        set->count++;
    }
    return 1;
}

/* Checks data as key's entry (a record: one entry named "tune") and publishes it. A member
 * that fails the checks is counted and skipped; a store that fails (a full disk, a cache
 * directory made read-only) is the import's error, with the store's message. A key this
 * import already published is a duplicate: counted, not stored again (300 copies of one
 * entry are one entry imported). */
static ptxjit_status import_member(pj_disk_cache *disk, key_set *published, member_kind kind,
                                   const char *key, const char *data, size_t size,
                                   ptxjit_bundle_stats *stats)
{
    if (key_seen(published, key, kind)) {
        stats->duplicates++;
        return PTXJIT_OK;
    }
    pj_artifact a;
    const char *why;
    ptxjit_status status = pj_entry_decode(&a, &why, data, size, key);
    if (status == PTXJIT_ERR_CACHE && why == pj_entry_older_format) {
        stats->foreign++;
        pj_artifact_free(&a);
        return PTXJIT_OK;
    }
    if (status == PTXJIT_OK && kind == MEMBER_RECORD &&
        (a.entry_count != 1 || strcmp(a.entries[0], "tune") != 0))
        status = PTXJIT_ERR_CACHE;
    if (status != PTXJIT_OK || !pj_entry_storable(&a)) {
        stats->corrupt++;
        pj_artifact_free(&a); /* decoding zeroes it first: safe after a refusal too */
        return PTXJIT_OK;
    }
    status = kind == MEMBER_RECORD ? pj_disk_cache_store_record(disk, key, &a)
                                   : pj_disk_cache_store(disk, key, &a);
    if (status == PTXJIT_OK) {
        ++*(kind == MEMBER_RECORD ? &stats->records : &stats->entries);
        (void)key_add(published, key, kind);
    }
    pj_artifact_free(&a);
    return status;
}

/* The member's name: ustar's prefix, '/', name. */
static void member_name(char out[258], const tar_header *h)
{
    char name[101], prefix[156];
    snprintf(name, sizeof name, "%.100s", h->name);
    snprintf(prefix, sizeof prefix, "%.155s", h->prefix);
    snprintf(out, 258, "%s%s%s", prefix, prefix[0] ? "/" : "", name);
}

static int zero_block(const tar_header *h)
{
    const char *bytes = (const char *)h;
    for (size_t i = 0; i < BLOCK; i++)
        if (bytes[i])
            return 0;
    return 1;
}

/* Reads the members one by one. A header that fails its checksum, or a member cut short,
 * ends the reading: what follows cannot be found reliably. */
static ptxjit_status import_all(pj_disk_cache *disk, key_set *published, FILE *in,
                                const char *path, ptxjit_bundle_stats *stats)
{
    for (int first = 1;; first = 0) {
        tar_header h;
        size_t got = fread(&h, 1, BLOCK, in);
        if (got < BLOCK && ferror(in))
            return pj_error(PTXJIT_ERR_IO, "cannot read the bundle %s: %s", path,
                            strerror(errno ? errno : EIO));
        if (got < BLOCK && first)
            return pj_error(PTXJIT_ERR_CACHE, "%s is not a tar file (%s); give a bundle "
                                              "written by ptxjit_cache_export or ptxjit cache "
                                              "export",
                            path, got ? "shorter than one tar header" : "it is empty");
        if (got > 0 && got < BLOCK)
            stats->corrupt++; /* cut inside a header */
        if (got < BLOCK || zero_block(&h))
            return PTXJIT_OK;
        int64_t size = octal(h.size, sizeof h.size), sum = octal(h.checksum, sizeof h.checksum);
        if (size < 0 || sum != (int64_t)header_sum(&h)) {
            if (first)
                return pj_error(PTXJIT_ERR_CACHE, "%s is not a tar file (its first header "
                                                  "fails its checksum); give a bundle written "
                                                  "by ptxjit_cache_export or ptxjit cache "
                                                  "export",
                                path);
            stats->corrupt++;
            return PTXJIT_OK;
        }
        char name[258], key[33];
        member_name(name, &h);
        member_kind kind = classify(name, h.type, key);
        uint64_t padded = ((uint64_t)size + BLOCK - 1) / BLOCK * BLOCK;
        int wanted = kind == MEMBER_ENTRY || kind == MEMBER_RECORD;
        char *data = wanted && (uint64_t)size <= PJ_ENTRY_MAX_BYTES ? malloc(padded + 1) : NULL;
        if (wanted && !data) {
            stats->corrupt++;
            return PTXJIT_OK;
        }
        if (data ? fread(data, 1, padded, in) != padded : fseeko(in, (off_t)padded, SEEK_CUR)) {
            stats->corrupt++; /* cut short */
            free(data);
            return PTXJIT_OK;
        }
        if (wanted) {
            ptxjit_status status =
                import_member(disk, published, kind, key, data, (size_t)size, stats);
            if (status != PTXJIT_OK) {
                free(data);
                return status;
            }
        } else if (h.type != '5')
            ++*(kind == MEMBER_UNSAFE ? &stats->unsafe : &stats->foreign);
        free(data);
    }
}

/* The bundle at path, open for reading: a regular file, checked on the open descriptor.
 * O_NONBLOCK: a FIFO's open returns at once (then refused) instead of waiting for a writer
 * that may never come; O_NOCTTY: a terminal never becomes the caller's controlling one. No
 * cap on the whole file: it is read member by member, each at most PJ_ENTRY_MAX_BYTES, and
 * a regular file ends. */
static ptxjit_status open_bundle(FILE **out, const char *path)
{
    *out = NULL;
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return pj_error(PTXJIT_ERR_IO, "cannot read the bundle %s: %s", path, strerror(errno));
    struct stat st;
    int error = fstat(fd, &st) != 0 ? errno : 0;
    if (error || !S_ISREG(st.st_mode)) {
        close(fd);
        return pj_error(PTXJIT_ERR_IO, "cannot read the bundle %s: %s; give the file "
                                       "ptxjit_cache_export wrote",
                        path,
                        error            ? strerror(error)
                        : S_ISFIFO(st.st_mode) ? "a FIFO, not a regular file"
                        : S_ISDIR(st.st_mode)  ? "a directory, not a regular file"
                        : S_ISCHR(st.st_mode)  ? "a character device, not a regular file"
                                               : "not a regular file");
    }
    if (!(*out = fdopen(fd, "rb"))) {
        error = errno;
        close(fd);
        return pj_error(error == ENOMEM ? PTXJIT_ERR_OUT_OF_MEMORY : PTXJIT_ERR_IO,
                        "cannot read the bundle %s: %s", path, strerror(error));
    }
    return PTXJIT_OK;
}

ptxjit_status pj_bundle_import(pj_disk_cache *disk, const char *path, ptxjit_bundle_stats *stats)
{
    FILE *in;
    ptxjit_status status = open_bundle(&in, path);
    if (status != PTXJIT_OK)
        return status;
    key_set published = {0};
    status = import_all(disk, &published, in, path, stats);
    free(published.names);
    fclose(in);
    return status;
}

/* test_cache_disk.c — the disk cache: round trips, every kind of damaged entry, failing
 * writes, concurrent writer processes and threads, shared counters, directory resolution. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/counters.h"
#include "cache/disk.h"
#include "fileio_faults.h"
#include "test_util.h"

#define KEY "0123456789abcdef0123456789abcdef"
#define OTHER_KEY "fedcba9876543210fedcba9876543210"

typedef struct {
    char *root;
    pj_disk_cache *cache;
    int warnings;
    char last[2048];
} disk_fixture;

static void on_log(void *user, ptxjit_log_level level, const char *message)
{
    disk_fixture *f = user;
    if (level != PTXJIT_LOG_WARNING)
        return;
    f->warnings++;
    snprintf(f->last, sizeof f->last, "%s", message);
}

static void open_disk(disk_fixture *f)
{
    memset(f, 0, sizeof *f);
    f->root = test_mkdtemp();
    pj_logger logger = {.fn = on_log, .user = f};
    pj_disk_options options = {f->root, 0, 0};
    ck_assert_int_eq(pj_disk_cache_open(&f->cache, &options, &logger), PTXJIT_OK);
}

static void close_disk(disk_fixture *f)
{
    pj_disk_cache_close(f->cache);
    test_rmtree(f->root);
    free(f->root);
}

/* An artifact with a random cubin, so that every test stores different bytes. */
static void make_artifact(pj_artifact *a)
{
    memset(a, 0, sizeof *a);
    a->family = pj_strdup("reduce");
    a->params = pj_strdup("batch=8 tpb=256");
    a->options = pj_strdup("-DSCALE=2 -lineinfo");
    a->ptx = pj_strdup(".version 8.5\n.target sm_90a\n.entry reduce_kernel()\n{ ret; }\n");
    a->cubin_size = 3000;
    a->cubin = malloc(a->cubin_size);
    for (size_t i = 0; i < a->cubin_size; i++)
        a->cubin[i] = (uint8_t)rand();
    a->log = pj_strdup("ptxas info: Used 12 registers");
    a->entry_count = 2;
    a->entries = calloc(2, sizeof *a->entries);
    a->entries[0] = pj_strdup("reduce_kernel");
    a->entries[1] = pj_strdup("reduce_finish");
}

static int same_artifact(const pj_artifact *a, const pj_artifact *b)
{
    int same = !strcmp(a->family, b->family) && !strcmp(a->params, b->params) &&
               !strcmp(a->options, b->options) && !strcmp(a->ptx, b->ptx) && !strcmp(a->log, b->log) &&
               a->cubin_size == b->cubin_size && !memcmp(a->cubin, b->cubin, a->cubin_size) &&
               a->entry_count == b->entry_count;
    for (int i = 0; same && i < a->entry_count; i++)
        same = !strcmp(a->entries[i], b->entries[i]);
    return same;
}

static void store_one(disk_fixture *f, pj_artifact *a)
{
    make_artifact(a);
    ck_assert_int_eq(pj_disk_cache_store(f->cache, KEY, a), PTXJIT_OK);
}

/* Loads KEY and expects a miss reported by a warning that contains needle. */
static void expect_rejected(disk_fixture *f, const char *needle)
{
    pj_artifact got;
    int found = 1, before = f->warnings;
    ck_assert_int_eq(pj_disk_cache_load(f->cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(f->warnings, before + 1);
    ck_assert_msg(strstr(f->last, needle), "warning '%s' lacks '%s'", f->last, needle);
}

/* Loads KEY and expects a hit holding exactly a. */
static void expect_hit(disk_fixture *f, const pj_artifact *a)
{
    pj_artifact got;
    int found = 0;
    ck_assert_int_eq(pj_disk_cache_load(f->cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1);
    ck_assert(same_artifact(a, &got));
    pj_artifact_free(&got);
}

/* Damaged entries are removed; the warning names the file. */
static void expect_corrupt_removed(disk_fixture *f, const char *needle)
{
    char *path = pj_disk_cache_entry_path(f->cache, KEY);
    expect_rejected(f, needle);
    ck_assert_ptr_nonnull(strstr(f->last, path));
    ck_assert_ptr_nonnull(strstr(f->last, "is corrupt"));
    ck_assert_int_eq(access(path, F_OK), -1);
    free(path);
}

static char *read_entry_file(disk_fixture *f, size_t *size)
{
    char *path = pj_disk_cache_entry_path(f->cache, KEY), *data = NULL;
    ck_assert_int_eq(pj_read_file(&data, size, path), PTXJIT_OK);
    free(path);
    return data;
}

static void write_entry_file(disk_fixture *f, const char *data, size_t size)
{
    char *path = pj_disk_cache_entry_path(f->cache, KEY);
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(data, 1, size, file), size);
    fclose(file);
    free(path);
}

static int count_files(const char *root, const char *pattern)
{
    char command[4200];
    snprintf(command, sizeof command, "find '%s' -name '%s' | wc -l", root, pattern);
    FILE *pipe = popen(command, "r");
    int count = -1;
    ck_assert_int_eq(fscanf(pipe, "%d", &count), 1);
    pclose(pipe);
    return count;
}

START_TEST(disk_round_trip_keeps_every_field)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a, got;
    store_one(&f, &a);
    int found = 0;
    ck_assert_int_eq(pj_disk_cache_load(f.cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(got.family, "reduce");
    ck_assert_str_eq(got.params, "batch=8 tpb=256");
    ck_assert_str_eq(got.ptx, a.ptx);
    ck_assert_str_eq(got.log, a.log);
    ck_assert_uint_eq(got.cubin_size, a.cubin_size);
    ck_assert_mem_eq(got.cubin, a.cubin, a.cubin_size);
    ck_assert_int_eq(got.entry_count, 2);
    ck_assert_str_eq(got.entries[0], "reduce_kernel");
    ck_assert_str_eq(got.entries[1], "reduce_finish");
    ck_assert_int_eq(f.warnings, 0);
    pj_artifact_free(&a);
    pj_artifact_free(&got);
    close_disk(&f);
}
END_TEST

START_TEST(disk_absent_key_is_a_quiet_miss)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact got;
    int found = 1;
    ck_assert_int_eq(pj_disk_cache_load(f.cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(f.warnings, 0);
    close_disk(&f);
}
END_TEST

START_TEST(disk_rejects_keys_that_are_not_32_lowercase_hex_digits)
{
    static const char *const bad[] = {
        "../../../../../../../../etc/pass", "0123456789ABCDEF0123456789abcdef",
        "0123456789abcdef0123456789abcde",  "0123456789abcdef0123456789abcdef0",
        "0123456789abcdef/123456789abcdef", ""};
    disk_fixture f;
    open_disk(&f);
    pj_artifact a, got;
    make_artifact(&a);
    int found;
    for (size_t i = 0; i < PJ_ARRAY_SIZE(bad); i++) {
        ck_assert_int_eq(pj_disk_cache_store(f.cache, bad[i], &a), PTXJIT_ERR_INVALID_ARGUMENT);
        ck_assert_int_eq(pj_disk_cache_load(f.cache, bad[i], &got, &found),
                         PTXJIT_ERR_INVALID_ARGUMENT);
        ck_assert_ptr_null(pj_disk_cache_entry_path(f.cache, bad[i]));
    }
    ck_assert_int_eq(pj_disk_cache_load(f.cache, NULL, &got, &found), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(count_files(f.root, "*"), 2); /* the root and v1, nothing else */
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_refuses_an_artifact_it_could_not_read_back)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    a.entry_count = 0;
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_ERR_INVALID_ARGUMENT);
    a.entry_count = 2;
    a.entries[1][0] = '\0';
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_ERR_INVALID_ARGUMENT);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_truncated_entries_are_detected_and_removed)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    size_t size;
    char *whole = read_entry_file(&f, &size);
    const size_t lengths[] = {0, 7, 47, 63, 100, 2000, size - 16, size - 1};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(lengths); i++) {
        write_entry_file(&f, whole, lengths[i]);
        expect_corrupt_removed(&f, lengths[i] < 64 ? "truncated" : "checksum mismatch");
    }
    ptxjit_cache_stats stats;
    pj_disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.corrupt, PJ_ARRAY_SIZE(lengths));
    free(whole);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_flipped_bit_is_detected)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    size_t size;
    char *data = read_entry_file(&f, &size);
    const size_t offsets[] = {1500 /* cubin */, 60 /* family */, 20 /* key */, size - 1};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(offsets); i++) {
        data[offsets[i]] ^= 0x10;
        write_entry_file(&f, data, size);
        expect_corrupt_removed(&f, "checksum mismatch");
        data[offsets[i]] ^= 0x10;
    }
    free(data);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_foreign_magic_or_version_is_detected)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    size_t size;
    char *data = read_entry_file(&f, &size);
    data[8] = PJ_ENTRY_FORMAT_VERSION + 1; /* a newer format */
    write_entry_file(&f, data, size);
    expect_corrupt_removed(&f, "another cache format version");
    data[8] = PJ_ENTRY_FORMAT_VERSION;
    data[0] = 'X';
    write_entry_file(&f, data, size);
    expect_corrupt_removed(&f, "not a ptxjit cache entry");
    free(data);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

/* An entry of an older format (from before the compile options field) is a plain miss: no
 * warning, not corrupt; the next store replaces it. */
START_TEST(disk_older_format_is_a_quiet_miss)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a, got;
    store_one(&f, &a);
    size_t size;
    char *data = read_entry_file(&f, &size);
    data[8] = PJ_ENTRY_FORMAT_VERSION - 1;
    write_entry_file(&f, data, size);
    int found = 1, before = f.warnings;
    ck_assert_int_eq(pj_disk_cache_load(f.cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(f.warnings, before);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(pj_disk_cache_stats(f.cache, &stats), PTXJIT_OK);
    ck_assert_uint_eq(stats.corrupt, 0);
    ck_assert_uint_eq(stats.misses, 1);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_OK);
    expect_hit(&f, &a);
    free(data);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_entry_of_another_key_is_detected)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, OTHER_KEY, &a), PTXJIT_OK);
    char *from = pj_disk_cache_entry_path(f.cache, OTHER_KEY);
    char *to = pj_disk_cache_entry_path(f.cache, KEY), dir[4200];
    snprintf(dir, sizeof dir, "%s/v1/01", f.root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(rename(from, to), 0);
    expect_corrupt_removed(&f, "holds another key");
    free(from);
    free(to);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

static void sign(char *data, size_t size)
{
    pj_hash128 sum = pj_hash(data, size - 16);
    memcpy(data + size - 16, &sum.low, 8);
    memcpy(data + size - 8, &sum.high, 8);
}

/* Rewrites n bytes at offset, signs the file again with a valid checksum, and expects the
 * load to reject it for reason; then restores data. */
static void expect_resigned_rejected(disk_fixture *f, char *data, size_t size, size_t offset,
                                     const void *bytes, size_t n, const char *reason)
{
    char saved[8];
    memcpy(saved, data + offset, n);
    memcpy(data + offset, bytes, n);
    sign(data, size);
    write_entry_file(f, data, size);
    expect_corrupt_removed(f, reason);
    memcpy(data + offset, saved, n);
    sign(data, size);
}

/* The checksum is not what keeps the parser in bounds: a well-signed file that lies about
 * its lengths, or breaks the text and entry rules, is refused as well. */
START_TEST(disk_malformed_fields_are_detected_despite_a_valid_checksum)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    size_t size;
    char *data = read_entry_file(&f, &size);
    const uint64_t huge = UINT64_MAX, whole = size;
    const uint32_t three = 3, none = 0;
    /* header 48, then length-prefixed family, params, options, ptx, cubin, log; then the
     * entries. */
    size_t entries = 48 + 6 * 8 + strlen(a.family) + strlen(a.params) + strlen(a.options) +
                     strlen(a.ptx) + a.cubin_size + strlen(a.log) + 8;
    expect_resigned_rejected(&f, data, size, 48, &huge, 8, "runs past the end");
    expect_resigned_rejected(&f, data, size, 48, &whole, 8, "runs past the end");
    expect_resigned_rejected(&f, data, size, 57, "", 1, "a NUL inside a text field");
    expect_resigned_rejected(&f, data, size, entries, &three, 4, "a wrong entry count");
    expect_resigned_rejected(&f, data, size, entries, &none, 4, "a wrong entry count");
    expect_resigned_rejected(&f, data, size, entries + 4, "", 1, "an empty entry name");
    expect_resigned_rejected(&f, data, size, size - 17, "x", 1, "an unterminated entry name");
    write_entry_file(&f, data, size); /* and the untouched file still loads */
    expect_hit(&f, &a);
    free(data);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_directory_at_entry_path_is_a_warned_miss)
{
    disk_fixture f;
    open_disk(&f);
    char *path = pj_disk_cache_entry_path(f.cache, KEY), dir[4200];
    snprintf(dir, sizeof dir, "%s/v1/01", f.root);
    ck_assert_int_eq(mkdir(dir, 0700), 0);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    expect_rejected(&f, "not a regular file");
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0); /* left alone */
    ck_assert(S_ISDIR(st.st_mode));
    pj_artifact a;
    make_artifact(&a);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), path));
    ck_assert_int_eq(count_files(f.root, ".tmp.*"), 0);
    ptxjit_cache_stats stats;
    pj_disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.misses, 1);
    ck_assert_uint_eq(stats.corrupt + stats.entries, 0);
    free(path);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_unreadable_entry_is_a_warned_miss_and_kept)
{
    if (geteuid() == 0) /* root reads any file: only an ordinary user can test this */
        return;
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    char *path = pj_disk_cache_entry_path(f.cache, KEY);
    ck_assert_int_eq(chmod(path, 0), 0);
    expect_rejected(&f, strerror(EACCES));
    ck_assert_int_eq(access(path, F_OK), 0);
    free(path);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_symbolic_link_at_entry_path_is_not_followed)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    char *path = pj_disk_cache_entry_path(f.cache, KEY), target[4200];
    snprintf(target, sizeof target, "%s/elsewhere", f.root);
    ck_assert_int_eq(rename(path, target), 0);
    ck_assert_int_eq(symlink(target, path), 0);
    expect_rejected(&f, "symbolic link");
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_OK); /* replaces the link */
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    free(path);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

/* Stores with fault injected after `after` write/fsync calls: an error naming the entry and
 * errno, no entry and no temp file; the next store, without the fault, works. */
static void expect_store_fails_cleanly(fileio_op op, int after, int error_number)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    char *path = pj_disk_cache_entry_path(f.cache, KEY);
    pj_fileio_inject_fault(op, after, error_number);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), strerror(error_number)));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), path));
    ck_assert_int_eq(access(path, F_OK), -1);
    ck_assert_int_eq(count_files(f.root, ".tmp.*"), 0);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_OK);
    expect_hit(&f, &a);
    pj_fileio_clear_faults();
    free(path);
    pj_artifact_free(&a);
    close_disk(&f);
}

START_TEST(disk_full_on_write_leaves_nothing_behind)
{
    expect_store_fails_cleanly(FILEIO_WRITE, 0, ENOSPC);
}
END_TEST

START_TEST(disk_full_midway_through_short_writes_leaves_nothing_behind)
{
    pj_fileio_limit_writes(100);
    expect_store_fails_cleanly(FILEIO_WRITE, 10, ENOSPC); /* after 1000 bytes were written */
}
END_TEST

START_TEST(disk_short_writes_are_completed)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    pj_fileio_limit_writes(7);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_OK);
    pj_fileio_clear_faults();
    expect_hit(&f, &a);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_failing_fsync_leaves_nothing_behind)
{
    expect_store_fails_cleanly(FILEIO_FSYNC, 0, EIO);
}
END_TEST

START_TEST(disk_failing_rename_leaves_nothing_behind)
{
    expect_store_fails_cleanly(FILEIO_RENAME, 0, EXDEV);
}
END_TEST

enum { WRITERS = 8, STORES_EACH = 50 };

static void run_writer(disk_fixture *f, const pj_artifact *a)
{
    int bad = 0;
    for (int i = 0; i < STORES_EACH; i++)
        bad |= pj_disk_cache_store(f->cache, KEY, a) != PTXJIT_OK;
    _exit(bad);
}

/* Loads in a loop while writers run; every hit must be the whole artifact. */
static int read_while_writers_run(disk_fixture *f, const pj_artifact *a, pid_t *writers)
{
    int running = WRITERS, loads = 0;
    while (running > 0) {
        pj_artifact got;
        int found = 0;
        ck_assert_int_eq(pj_disk_cache_load(f->cache, KEY, &got, &found), PTXJIT_OK);
        ck_assert(!found || same_artifact(a, &got));
        pj_artifact_free(&got);
        loads++;
        for (int w = 0; w < WRITERS; w++) {
            int status;
            if (writers[w] > 0 && waitpid(writers[w], &status, WNOHANG) == writers[w]) {
                ck_assert_msg(WIFEXITED(status) && !WEXITSTATUS(status), "writer %d failed", w);
                writers[w] = 0;
                running--;
            }
        }
    }
    return loads;
}

START_TEST(disk_concurrent_writers_leave_one_whole_entry)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    pid_t writers[WRITERS];
    for (int w = 0; w < WRITERS; w++) {
        writers[w] = fork();
        ck_assert_int_ge(writers[w], 0);
        if (writers[w] == 0)
            run_writer(&f, &a);
    }
    int loads = read_while_writers_run(&f, &a, writers);
    ck_assert_int_eq(f.warnings, 0);
    expect_hit(&f, &a);
    ck_assert_int_eq(count_files(f.root, ".tmp.*"), 0);
    ptxjit_cache_stats stats;
    pj_disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.stores, WRITERS * STORES_EACH); /* the counters lose no update */
    ck_assert_uint_eq(stats.hits + stats.misses, (uint64_t)loads + 1);
    ck_assert_uint_eq(stats.entries, 1);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

typedef struct {
    pj_disk_cache *cache;
    const pj_artifact *artifact;
    char key[33];
    int bad;
} thread_job;

static void *store_and_load(void *user)
{
    thread_job *job = user;
    for (int i = 0; i < 20; i++) {
        pj_artifact got;
        int found = 0;
        job->bad |= pj_disk_cache_store(job->cache, job->key, job->artifact) != PTXJIT_OK;
        job->bad |= pj_disk_cache_load(job->cache, job->key, &got, &found) != PTXJIT_OK;
        job->bad |= !found || !same_artifact(job->artifact, &got);
        pj_artifact_free(&got);
    }
    return NULL;
}

START_TEST(disk_threads_share_one_cache)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    thread_job jobs[4];
    pthread_t threads[4];
    for (int t = 0; t < 4; t++) {
        jobs[t] = (thread_job){f.cache, &a, KEY, 0};
        jobs[t].key[31] = (char)('0' + t % 2); /* two threads per key */
        ck_assert_int_eq(pthread_create(&threads[t], NULL, store_and_load, &jobs[t]), 0);
    }
    for (int t = 0; t < 4; t++) {
        pthread_join(threads[t], NULL);
        ck_assert_int_eq(jobs[t].bad, 0);
    }
    ptxjit_cache_stats stats;
    pj_disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.stores, 80);
    ck_assert_uint_eq(stats.hits, 80);
    ck_assert_uint_eq(stats.entries, 2);
    ck_assert_int_eq(f.warnings, 0);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_unusable_root_names_the_directory)
{
    char *base = test_mkdtemp(), root[4200];
    snprintf(root, sizeof root, "%s/file", base);
    fclose(fopen(root, "w"));
    strcat(root, "/sub"); /* under a regular file: ENOTDIR, even for root */
    pj_disk_cache *cache = NULL;
    pj_disk_options options = {root, 0, 0};
    ck_assert_int_eq(pj_disk_cache_open(&cache, &options, NULL), PTXJIT_ERR_CACHE);
    ck_assert_ptr_null(cache);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), root));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), strerror(ENOTDIR)));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "PTXJIT_CACHE_DIR"));
    if (geteuid() != 0) { /* root ignores permissions: only an ordinary user can test 0500 */
        snprintf(root, sizeof root, "%s/readonly", base);
        ck_assert_int_eq(mkdir(root, 0500), 0);
        ck_assert_int_eq(pj_disk_cache_open(&cache, &options, NULL), PTXJIT_ERR_CACHE);
        ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), root));
        ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), strerror(EACCES)));
    }
    test_rmtree(base);
    free(base);
}
END_TEST

START_TEST(disk_counters_are_shared_between_instances)
{
    disk_fixture f;
    open_disk(&f);
    pj_disk_cache *second;
    ck_assert_int_eq(pj_disk_cache_open(&second, &(pj_disk_options){f.root, 0, 0}, NULL), PTXJIT_OK);
    pj_artifact a, got;
    store_one(&f, &a);
    ck_assert_int_eq(pj_disk_cache_store(second, OTHER_KEY, &a), PTXJIT_OK);
    int found;
    pj_disk_cache_load(second, KEY, &got, &found); /* hit */
    pj_artifact_free(&got);
    pj_disk_cache_load(f.cache, "ffffffffffffffffffffffffffffffff", &got, &found); /* miss */
    write_entry_file(&f, "garbage", 7);
    expect_corrupt_removed(&f, "truncated"); /* corrupt, and a miss */
    ptxjit_cache_stats stats;
    /* Hits and misses are counted in memory and merged into the shared file on stats,
     * stores, close and a corrupt entry's count: f's last miss (the corrupt entry's) is
     * still f's own until it merges. */
    ck_assert_int_eq(pj_disk_cache_stats(second, &stats), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 1);
    ck_assert_uint_eq(stats.misses, 1);
    ck_assert_int_eq(pj_disk_cache_stats(f.cache, &stats), PTXJIT_OK);
    ck_assert_int_eq(pj_disk_cache_stats(second, &stats), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 1);
    ck_assert_uint_eq(stats.misses, 2);
    ck_assert_uint_eq(stats.stores, 2);
    ck_assert_uint_eq(stats.corrupt, 1);
    ck_assert_uint_eq(stats.entries, 1);
    ck_assert_uint_gt(stats.bytes, a.cubin_size);
    pj_disk_cache_close(second);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_clear_removes_entries_and_resets_counters)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, OTHER_KEY, &a), PTXJIT_OK);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, "0123456789abcdef0123456789abcdee", &a), PTXJIT_OK);
    uint64_t removed = 0;
    ck_assert_int_eq(pj_disk_cache_clear(f.cache, &removed), PTXJIT_OK);
    ck_assert_uint_eq(removed, 3);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(pj_disk_cache_stats(f.cache, &stats), PTXJIT_OK);
    ck_assert_uint_eq(stats.entries + stats.bytes + stats.stores + stats.hits, 0);
    ck_assert_int_eq(access(pj_disk_cache_dir(f.cache), W_OK), 0); /* the directory stays */
    ck_assert_int_eq(pj_disk_cache_clear(f.cache, &removed), PTXJIT_OK);
    ck_assert_uint_eq(removed, 0);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_OK); /* usable afterwards */
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

static void expect_mode(const char *path, mode_t mode)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, mode);
}

START_TEST(disk_directories_and_entries_are_private)
{
    disk_fixture f;
    memset(&f, 0, sizeof f);
    char *base = test_mkdtemp(), root[4200], shard[4300];
    snprintf(root, sizeof root, "%s/a/b/", base); /* missing parents; trailing slash */
    ck_assert_int_eq(pj_disk_cache_open(&f.cache, &(pj_disk_options){root, 0, 0}, NULL), PTXJIT_OK);
    snprintf(root, sizeof root, "%s/a/b/v%d", base, PJ_DISK_FORMAT_VERSION);
    ck_assert_str_eq(pj_disk_cache_dir(f.cache), root);
    expect_mode(root, 0700);
    snprintf(shard, sizeof shard, "%s/a", base);
    expect_mode(shard, 0700);
    pj_artifact a;
    store_one(&f, &a);
    snprintf(shard, sizeof shard, "%s/01", root);
    expect_mode(shard, 0700);
    char *path = pj_disk_cache_entry_path(f.cache, KEY);
    expect_mode(path, 0600);
    free(path);
    pj_artifact_free(&a);
    pj_disk_cache_close(f.cache);
    test_rmtree(base);
    free(base);
}
END_TEST

static char *save_env(const char *name)
{
    return pj_strdup(getenv(name));
}

static void restore_env(const char *name, char *saved)
{
    if (saved)
        setenv(name, saved, 1);
    else
        unsetenv(name);
    free(saved);
}

/* Opens with root (may be NULL) and expects the versioned dir under expect_root. */
static void expect_root(const char *root, const char *expect_root)
{
    char expect[4200];
    snprintf(expect, sizeof expect, "%s/v%d", expect_root, PJ_DISK_FORMAT_VERSION);
    pj_disk_cache *cache;
    ck_assert_int_eq(pj_disk_cache_open(&cache, &(pj_disk_options){root, 0, 0}, NULL), PTXJIT_OK);
    ck_assert_str_eq(pj_disk_cache_dir(cache), expect);
    pj_disk_cache_close(cache);
}

START_TEST(disk_root_comes_from_option_then_environment)
{
    char *saved[3] = {save_env("PTXJIT_CACHE_DIR"), save_env("XDG_CACHE_HOME"), save_env("HOME")};
    char *base = test_mkdtemp(), a[4200], b[4200];
    snprintf(a, sizeof a, "%s/env", base);
    setenv("PTXJIT_CACHE_DIR", a, 1);
    snprintf(b, sizeof b, "%s/xdg", base);
    setenv("XDG_CACHE_HOME", b, 1);
    setenv("HOME", base, 1);
    snprintf(b, sizeof b, "%s/option", base);
    expect_root(b, b);
    expect_root(NULL, a);
    unsetenv("PTXJIT_CACHE_DIR");
    snprintf(a, sizeof a, "%s/xdg/ptxjit", base);
    expect_root(NULL, a);
    unsetenv("XDG_CACHE_HOME");
    snprintf(a, sizeof a, "%s/.cache/ptxjit", base);
    expect_root(NULL, a);
    unsetenv("HOME");
    pj_disk_cache *cache;
    ck_assert_int_eq(pj_disk_cache_open(&cache, NULL, NULL), PTXJIT_ERR_CACHE);
    restore_env("PTXJIT_CACHE_DIR", saved[0]);
    restore_env("XDG_CACHE_HOME", saved[1]);
    restore_env("HOME", saved[2]);
    test_rmtree(base);
    free(base);
}
END_TEST

/* The trust check at open covers the root and v<N>; an entry file is checked too, since a
 * cache that was once shared (or a shard someone else made writable) can hold files that
 * others could have written. Refused, kept by the load, replaced by the next store. */
static void expect_untrusted_then_replaced(disk_fixture *f, pj_artifact *a, const char *needle)
{
    char *path = pj_disk_cache_entry_path(f->cache, KEY);
    expect_rejected(f, needle);
    ck_assert_int_eq(access(path, F_OK), 0);
    ck_assert_int_eq(pj_disk_cache_store(f->cache, KEY, a), PTXJIT_OK);
    expect_mode(path, 0600);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_uid, geteuid());
    expect_hit(f, a);
    free(path);
}

START_TEST(disk_entries_others_could_write_are_not_trusted)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    char *path = pj_disk_cache_entry_path(f.cache, KEY);
    ck_assert_int_eq(chmod(path, 0660), 0);
    expect_untrusted_then_replaced(&f, &a, "writable by its group: not trusted");
    ck_assert_int_eq(chmod(path, 0602), 0);
    expect_untrusted_then_replaced(&f, &a, "writable by every user: not trusted");
    if (geteuid() == 0) { /* only root can give a file away */
        ck_assert_int_eq(chown(path, 54321, 54321), 0);
        expect_untrusted_then_replaced(&f, &a, "owned by another user: not trusted");
    }
    free(path);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_entries_are_private_whatever_the_umask)
{
    disk_fixture f;
    open_disk(&f);
    mode_t saved = umask(0277); /* would make them 0400, or unreadable with 0477 */
    pj_artifact a;
    store_one(&f, &a);
    umask(saved);
    char *path = pj_disk_cache_entry_path(f.cache, KEY);
    expect_mode(path, 0600);
    expect_hit(&f, &a);
    free(path);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

/* A link where a shard belongs: the store fails with a warning-worthy error and writes
 * nothing where the link points. */
START_TEST(disk_shard_that_is_a_link_is_not_followed)
{
    disk_fixture f;
    open_disk(&f);
    char shard[4200], target[4200];
    snprintf(shard, sizeof shard, "%s/v%d/01", f.root, PJ_DISK_FORMAT_VERSION);
    snprintf(target, sizeof target, "%s/elsewhere", f.root);
    ck_assert_int_eq(mkdir(target, 0700), 0);
    ck_assert_int_eq(symlink(target, shard), 0);
    pj_artifact a;
    make_artifact(&a);
    ck_assert_int_eq(pj_disk_cache_store(f.cache, KEY, &a), PTXJIT_ERR_CACHE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), shard));
    ck_assert_int_eq(count_files(target, "*"), 1); /* the directory itself, nothing in it */
    evict_report report;
    ck_assert_int_eq(pj_disk_cache_trim(f.cache, &report), PTXJIT_OK); /* not a gap in a scan */
    ck_assert(report.complete);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

/* The counters file is rewritten in place: a link there must not make a load or a store
 * rewrite what it points to. */
START_TEST(disk_counters_file_that_is_a_link_is_not_written)
{
    disk_fixture f;
    open_disk(&f);
    char stats[4200], victim[4200];
    snprintf(stats, sizeof stats, "%s/v%d/stats", f.root, PJ_DISK_FORMAT_VERSION);
    snprintf(victim, sizeof victim, "%s/precious", f.root);
    FILE *file = fopen(victim, "w");
    fputs("precious text\n", file);
    fclose(file);
    unlink(stats);
    ck_assert_int_eq(symlink(victim, stats), 0);
    pj_artifact a;
    store_one(&f, &a);
    expect_hit(&f, &a);
    char *text = NULL;
    size_t size = 0;
    ck_assert_int_eq(pj_read_file(&text, &size, victim), PTXJIT_OK);
    ck_assert_str_eq(text, "precious text\n");
    struct stat st;
    ck_assert_int_eq(lstat(stats, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    free(text);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

/* A process stopped while it updates the counters holds their lock: a load never waits for
 * it (hits are counted in memory), stats wait PJ_COUNTERS_WAIT_MS at most and say so, and
 * the pending hit is merged once the lock is free. */
START_TEST(disk_counters_held_by_a_stopped_process_cost_no_load)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    char stats[4200];
    snprintf(stats, sizeof stats, "%s/v%d/stats", f.root, PJ_DISK_FORMAT_VERSION);
    int holder = open(stats, O_RDWR | O_CLOEXEC);
    ck_assert_int_ge(holder, 0);
    ck_assert_int_eq(flock(holder, LOCK_EX), 0);
    expect_hit(&f, &a);
    ptxjit_cache_stats stats_now;
    int before = f.warnings;
    pj_disk_cache_stats(f.cache, &stats_now); /* cannot read them either: says so */
    ck_assert_int_eq(f.warnings, before + 1);
    ck_assert_ptr_nonnull(strstr(f.last, "cache counters"));
    close(holder);
    pj_disk_cache_stats(f.cache, &stats_now);
    ck_assert_uint_eq(stats_now.hits, 1); /* kept pending while the file was locked */
    ck_assert_uint_eq(stats_now.stores, 1);
    ck_assert_uint_eq(stats_now.entries, 1);
    pj_artifact_free(&a);
    close_disk(&f);
}
END_TEST

/* A flock belongs to the open file, which a forked child shares: the lock must be released
 * when we are done, not when the child exits. */
START_TEST(disk_locks_are_released_while_a_forked_child_lives)
{
    char *dir = test_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/lock", dir);
    int fd = pj_fileio_open_shared_file(path, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(flock(fd, LOCK_EX), 0);
    pid_t child = fork();
    if (child == 0) {
        pause(); /* holds its copy of the descriptor until killed */
        _exit(0);
    }
    pj_fileio_unlock_and_close(fd);
    int other = open(path, O_RDWR | O_CLOEXEC);
    ck_assert_int_ge(other, 0);
    int locked = flock(other, LOCK_EX | LOCK_NB);
    close(other);
    kill(child, SIGKILL);
    waitpid(child, NULL, 0);
    ck_assert_msg(locked == 0, "the lock stayed with the forked child");
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_cache_disk(void)
{
    Suite *suite = suite_create("cache_disk");
    TCase *tc = tcase_create("entries");
    tcase_add_test(tc, disk_round_trip_keeps_every_field);
    tcase_add_test(tc, disk_absent_key_is_a_quiet_miss);
    tcase_add_test(tc, disk_rejects_keys_that_are_not_32_lowercase_hex_digits);
    tcase_add_test(tc, disk_refuses_an_artifact_it_could_not_read_back);
    tcase_add_test(tc, disk_truncated_entries_are_detected_and_removed);
    tcase_add_test(tc, disk_flipped_bit_is_detected);
    tcase_add_test(tc, disk_foreign_magic_or_version_is_detected);
    tcase_add_test(tc, disk_older_format_is_a_quiet_miss);
    tcase_add_test(tc, disk_entry_of_another_key_is_detected);
    tcase_add_test(tc, disk_malformed_fields_are_detected_despite_a_valid_checksum);
    tcase_add_test(tc, disk_directory_at_entry_path_is_a_warned_miss);
    tcase_add_test(tc, disk_unreadable_entry_is_a_warned_miss_and_kept);
    tcase_add_test(tc, disk_symbolic_link_at_entry_path_is_not_followed);
    suite_add_tcase(suite, tc);
    tc = tcase_create("writes");
    tcase_set_timeout(tc, 120); /* fsync-heavy, and slow under valgrind */
    tcase_add_checked_fixture(tc, NULL, pj_fileio_clear_faults);
    tcase_add_test(tc, disk_full_on_write_leaves_nothing_behind);
    tcase_add_test(tc, disk_full_midway_through_short_writes_leaves_nothing_behind);
    tcase_add_test(tc, disk_short_writes_are_completed);
    tcase_add_test(tc, disk_failing_fsync_leaves_nothing_behind);
    tcase_add_test(tc, disk_failing_rename_leaves_nothing_behind);
    tcase_add_test(tc, disk_concurrent_writers_leave_one_whole_entry);
    tcase_add_test(tc, disk_threads_share_one_cache);
    suite_add_tcase(suite, tc);
    tc = tcase_create("directory");
    tcase_add_test(tc, disk_unusable_root_names_the_directory);
    tcase_add_test(tc, disk_counters_are_shared_between_instances);
    tcase_add_test(tc, disk_clear_removes_entries_and_resets_counters);
    tcase_add_test(tc, disk_directories_and_entries_are_private);
    tcase_add_test(tc, disk_root_comes_from_option_then_environment);
    suite_add_tcase(suite, tc);
    tc = tcase_create("trust");
    tcase_set_timeout(tc, 30); /* one test waits out a held lock twice */
    tcase_add_test(tc, disk_entries_others_could_write_are_not_trusted);
    tcase_add_test(tc, disk_entries_are_private_whatever_the_umask);
    tcase_add_test(tc, disk_shard_that_is_a_link_is_not_followed);
    tcase_add_test(tc, disk_counters_file_that_is_a_link_is_not_written);
    tcase_add_test(tc, disk_locks_are_released_while_a_forked_child_lives);
    tcase_add_test(tc, disk_counters_held_by_a_stopped_process_cost_no_load);
    suite_add_tcase(suite, tc);
    return suite;
}

/* test_cache_disk.c — the disk cache: round trips, every kind of damaged entry, failing
 * writes, concurrent writer processes, shared counters and directory resolution. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/disk.h"
#include "cache/fileio.h"
#include "test_util.h"

#define KEY "0123456789abcdef0123456789abcdef"

typedef struct {
    char *root;
    pj_disk_cache *cache;
    int warnings;
    char last[1024];
} disk_fixture;

static void on_warning(void *user, ptxjit_log_level level, const char *message)
{
    disk_fixture *f = user;
    f->warnings += level == PTXJIT_LOG_WARNING;
    snprintf(f->last, sizeof f->last, "%s", message);
}

static void open_disk(disk_fixture *f)
{
    memset(f, 0, sizeof *f);
    f->root = test_mkdtemp();
    pj_logger logger = {on_warning, f};
    ck_assert_int_eq(disk_cache_open(&f->cache, f->root, &logger), PTXJIT_OK);
}

static void close_disk(disk_fixture *f)
{
    disk_cache_close(f->cache);
    test_rmtree(f->root);
    free(f->root);
}

/* An artifact with a random cubin, so that every test stores different bytes. */
static void make_artifact(pj_artifact *a)
{
    memset(a, 0, sizeof *a);
    a->family = pj_strdup("reduce");
    a->params = pj_strdup("batch=8 tpb=256");
    a->ptx = pj_strdup(".version 9.0\n.target sm_90a\n.entry reduce_kernel()\n{ ret; }\n");
    a->cubin_size = 3000;
    a->cubin = malloc(a->cubin_size);
    for (size_t i = 0; i < a->cubin_size; i++)
        a->cubin[i] = (uint8_t)(rand() ^ (int)i);
    a->log = pj_strdup("ptxas info: 12 registers");
    a->entry_count = 2;
    a->entries = calloc(2, sizeof *a->entries);
    a->entries[0] = pj_strdup("reduce_kernel");
    a->entries[1] = pj_strdup("second_kernel");
}

static void assert_same(const pj_artifact *a, const pj_artifact *b)
{
    ck_assert_str_eq(a->family, b->family);
    ck_assert_str_eq(a->params, b->params);
    ck_assert_str_eq(a->ptx, b->ptx);
    ck_assert_str_eq(a->log, b->log);
    ck_assert_uint_eq(a->cubin_size, b->cubin_size);
    ck_assert_mem_eq(a->cubin, b->cubin, a->cubin_size);
    ck_assert_int_eq(a->entry_count, b->entry_count);
    for (int i = 0; i < a->entry_count; i++)
        ck_assert_str_eq(a->entries[i], b->entries[i]);
}

/* Loads KEY and expects a miss reported as a warning containing needle. */
static void expect_rejected(disk_fixture *f, const char *needle)
{
    pj_artifact got;
    int found = 1;
    ck_assert_int_eq(disk_cache_load(f->cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_ge(f->warnings, 1);
    ck_assert_msg(strstr(f->last, needle), "warning '%s' lacks '%s'", f->last, needle);
}

static void store_one(disk_fixture *f, pj_artifact *a)
{
    make_artifact(a);
    ck_assert_int_eq(disk_cache_store(f->cache, KEY, a), PTXJIT_OK);
}

START_TEST(disk_round_trip_keeps_every_field)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a, got;
    store_one(&f, &a);
    int found = 0;
    ck_assert_int_eq(disk_cache_load(f.cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1);
    assert_same(&a, &got);
    artifact_free(&a);
    artifact_free(&got);
    close_disk(&f);
}
END_TEST

START_TEST(disk_absent_key_is_a_quiet_miss)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact got;
    int found = 1;
    ck_assert_int_eq(disk_cache_load(f.cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 0);
    ck_assert_int_eq(f.warnings, 0);
    close_disk(&f);
}
END_TEST

START_TEST(disk_rejects_keys_that_are_not_hex)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a, got;
    make_artifact(&a);
    int found;
    ck_assert_int_eq(disk_cache_store(f.cache, "../../../../etc/passwd", &a),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(disk_cache_load(f.cache, "0123456789ABCDEF0123456789abcdef", &got, &found),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_truncated_entries_are_detected_and_removed)
{
    static const off_t lengths[] = {0, 7, 30, 100, 2000, -1};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++) {
        disk_fixture f;
        open_disk(&f);
        pj_artifact a;
        store_one(&f, &a);
        char *path = disk_cache_entry_path(f.cache, KEY);
        struct stat st;
        stat(path, &st);
        ck_assert_int_eq(truncate(path, lengths[i] >= 0 ? lengths[i] : st.st_size - 1), 0);
        expect_rejected(&f, "corrupt");
        ck_assert_int_ne(access(path, F_OK), 0);
        free(path);
        artifact_free(&a);
        close_disk(&f);
    }
}
END_TEST

static void rewrite_byte(const char *path, long offset, int (*change)(int))
{
    FILE *file = fopen(path, "r+b");
    ck_assert_ptr_nonnull(file);
    fseek(file, offset, SEEK_SET);
    int c = fgetc(file);
    fseek(file, offset, SEEK_SET);
    fputc(change(c), file);
    fclose(file);
}

static int flip_low_bit(int c) { return c ^ 1; }
static int version_two(int c) { (void)c; return 2; }

START_TEST(disk_flipped_bit_is_detected)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    char *path = disk_cache_entry_path(f.cache, KEY);
    rewrite_byte(path, 1500, flip_low_bit);
    expect_rejected(&f, "checksum mismatch");
    ptxjit_cache_stats stats;
    disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.corrupt, 1);
    free(path);
    artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_foreign_version_is_detected)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    store_one(&f, &a);
    char *path = disk_cache_entry_path(f.cache, KEY);
    rewrite_byte(path, 8, version_two);
    expect_rejected(&f, "another cache format version");
    free(path);
    artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_entry_of_another_key_is_detected)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    const char *other = "fedcba9876543210fedcba9876543210";
    ck_assert_int_eq(disk_cache_store(f.cache, other, &a), PTXJIT_OK);
    char *from = disk_cache_entry_path(f.cache, other), *to = disk_cache_entry_path(f.cache, KEY);
    char dir[4200];
    snprintf(dir, sizeof dir, "%s/v1/01", f.root);
    mkdir(dir, 0700);
    ck_assert_int_eq(rename(from, to), 0);
    expect_rejected(&f, "holds another key");
    free(from);
    free(to);
    artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_directory_or_symlink_at_entry_path_is_not_used)
{
    disk_fixture f;
    open_disk(&f);
    char *path = disk_cache_entry_path(f.cache, KEY), dir[4200];
    snprintf(dir, sizeof dir, "%s/v1/01", f.root);
    mkdir(dir, 0700);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    expect_rejected(&f, "not a regular file");
    pj_artifact a;
    make_artifact(&a);
    ck_assert_int_ne(disk_cache_store(f.cache, KEY, &a), PTXJIT_OK); /* cannot replace a dir */
    rmdir(path);
    ck_assert_int_eq(symlink("/etc/hostname", path), 0);
    expect_rejected(&f, "symbolic link");
    ck_assert_int_eq(disk_cache_store(f.cache, KEY, &a), PTXJIT_OK); /* replaces the link */
    struct stat st;
    ck_assert_int_eq(lstat(path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    free(path);
    artifact_free(&a);
    close_disk(&f);
}
END_TEST

static int count_temp_files(const char *root)
{
    char command[4200];
    snprintf(command, sizeof command, "find '%s' -name '.tmp.*' | wc -l", root);
    FILE *pipe = popen(command, "r");
    int count = -1;
    ck_assert_int_eq(fscanf(pipe, "%d", &count), 1);
    pclose(pipe);
    return count;
}

static void expect_store_fails_cleanly(fileio_op op, int error_number)
{
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    fileio_inject_fault(op, 0, error_number);
    ck_assert_int_eq(disk_cache_store(f.cache, KEY, &a), PTXJIT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), strerror(error_number)));
    char *path = disk_cache_entry_path(f.cache, KEY);
    ck_assert_int_ne(access(path, F_OK), 0);
    ck_assert_int_eq(count_temp_files(f.root), 0);
    /* The next store, with the fault gone, works. */
    ck_assert_int_eq(disk_cache_store(f.cache, KEY, &a), PTXJIT_OK);
    free(path);
    artifact_free(&a);
    close_disk(&f);
}

START_TEST(disk_full_on_write_leaves_nothing_behind)
{
    expect_store_fails_cleanly(FILEIO_WRITE, ENOSPC);
}
END_TEST

START_TEST(disk_failing_fsync_or_rename_leaves_nothing_behind)
{
    expect_store_fails_cleanly(FILEIO_FSYNC, EIO);
    expect_store_fails_cleanly(FILEIO_RENAME, EXDEV);
}
END_TEST

START_TEST(disk_concurrent_writers_leave_one_whole_entry)
{
    enum { WRITERS = 8, ROUNDS = 40 };
    disk_fixture f;
    open_disk(&f);
    pj_artifact a;
    make_artifact(&a);
    pid_t children[WRITERS + 1];
    for (int w = 0; w <= WRITERS; w++) {
        children[w] = fork();
        ck_assert_int_ge(children[w], 0);
        if (children[w] > 0)
            continue;
        int bad = 0;
        for (int r = 0; r < ROUNDS; r++) {
            if (w < WRITERS) { /* writers */
                bad |= disk_cache_store(f.cache, KEY, &a) != PTXJIT_OK;
            } else {           /* one reader checks every entry it sees is whole */
                pj_artifact got;
                int found = 0;
                disk_cache_load(f.cache, KEY, &got, &found);
                if (found) {
                    bad |= got.cubin_size != a.cubin_size ||
                           memcmp(got.cubin, a.cubin, a.cubin_size) != 0;
                    artifact_free(&got);
                }
            }
        }
        _exit(bad || f.warnings);
    }
    for (int w = 0; w <= WRITERS; w++) {
        int status;
        waitpid(children[w], &status, 0);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "process %d failed", w);
    }
    pj_artifact got;
    int found = 0;
    ck_assert_int_eq(disk_cache_load(f.cache, KEY, &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1);
    assert_same(&a, &got);
    ck_assert_int_eq(count_temp_files(f.root), 0);
    ptxjit_cache_stats stats;
    disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.stores, WRITERS * ROUNDS); /* counters lose no update */
    ck_assert_uint_eq(stats.entries, 1);
    artifact_free(&a);
    artifact_free(&got);
    close_disk(&f);
}
END_TEST

START_TEST(disk_unusable_root_names_the_directory)
{
    char *base = test_mkdtemp(), root[4200];
    snprintf(root, sizeof root, "%s/file", base);
    FILE *file = fopen(root, "w");
    fclose(file);
    strcat(root, "/cache");
    pj_disk_cache *cache;
    ck_assert_int_eq(disk_cache_open(&cache, root, NULL), PTXJIT_ERR_CACHE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), root));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "PTXJIT_CACHE_DIR"));
    if (geteuid() != 0) { /* root ignores permissions: only an ordinary user can test 0500 */
        snprintf(root, sizeof root, "%s/readonly", base);
        mkdir(root, 0500);
        ck_assert_int_eq(disk_cache_open(&cache, root, NULL), PTXJIT_ERR_CACHE);
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
    ck_assert_int_eq(disk_cache_open(&second, f.root, NULL), PTXJIT_OK);
    pj_artifact a, got;
    store_one(&f, &a);
    int found;
    disk_cache_load(second, KEY, &got, &found);
    artifact_free(&got);
    disk_cache_load(second, "ffffffffffffffffffffffffffffffff", &got, &found);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(disk_cache_stats(f.cache, &stats), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 1);
    ck_assert_uint_eq(stats.misses, 1);
    ck_assert_uint_eq(stats.stores, 1);
    ck_assert_uint_eq(stats.entries, 1);
    ck_assert_uint_gt(stats.bytes, a.cubin_size);
    uint64_t removed = 0;
    ck_assert_int_eq(disk_cache_clear(second, &removed), PTXJIT_OK);
    ck_assert_uint_eq(removed, 1);
    ck_assert_int_eq(disk_cache_stats(f.cache, &stats), PTXJIT_OK);
    ck_assert_uint_eq(stats.entries + stats.hits + stats.stores, 0);
    disk_cache_close(second);
    artifact_free(&a);
    close_disk(&f);
}
END_TEST

START_TEST(disk_root_comes_from_option_then_environment_and_is_private)
{
    char *base = test_mkdtemp(), expect[4200];
    pj_disk_cache *cache;
    setenv("PTXJIT_CACHE_DIR", base, 1);
    ck_assert_int_eq(disk_cache_open(&cache, NULL, NULL), PTXJIT_OK);
    snprintf(expect, sizeof expect, "%s/v%d", base, PJ_DISK_FORMAT_VERSION);
    ck_assert_str_eq(disk_cache_dir(cache), expect);
    struct stat st;
    ck_assert_int_eq(stat(expect, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0700);
    disk_cache_close(cache);
    unsetenv("PTXJIT_CACHE_DIR");
    snprintf(expect, sizeof expect, "%s/xdg", base);
    setenv("XDG_CACHE_HOME", expect, 1);
    ck_assert_int_eq(disk_cache_open(&cache, NULL, NULL), PTXJIT_OK);
    snprintf(expect, sizeof expect, "%s/xdg/ptxjit/v%d", base, PJ_DISK_FORMAT_VERSION);
    ck_assert_str_eq(disk_cache_dir(cache), expect);
    disk_cache_close(cache);
    unsetenv("XDG_CACHE_HOME");
    test_rmtree(base);
    free(base);
}
END_TEST

Suite *suite_cache_disk(void)
{
    Suite *suite = suite_create("cache_disk");
    TCase *tc = tcase_create("entries");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, disk_round_trip_keeps_every_field);
    tcase_add_test(tc, disk_absent_key_is_a_quiet_miss);
    tcase_add_test(tc, disk_rejects_keys_that_are_not_hex);
    tcase_add_test(tc, disk_truncated_entries_are_detected_and_removed);
    tcase_add_test(tc, disk_flipped_bit_is_detected);
    tcase_add_test(tc, disk_foreign_version_is_detected);
    tcase_add_test(tc, disk_entry_of_another_key_is_detected);
    tcase_add_test(tc, disk_directory_or_symlink_at_entry_path_is_not_used);
    suite_add_tcase(suite, tc);
    tc = tcase_create("writes");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, disk_full_on_write_leaves_nothing_behind);
    tcase_add_test(tc, disk_failing_fsync_or_rename_leaves_nothing_behind);
    tcase_add_test(tc, disk_concurrent_writers_leave_one_whole_entry);
    tcase_add_test(tc, disk_unusable_root_names_the_directory);
    tcase_add_test(tc, disk_counters_are_shared_between_instances);
    tcase_add_test(tc, disk_root_comes_from_option_then_environment_and_is_private);
    suite_add_tcase(suite, tc);
    return suite;
}

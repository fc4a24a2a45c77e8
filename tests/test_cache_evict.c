/* test_cache_evict.c — the disk cache's size cap: least recently used entries go first, an
 * entry a reader holds stays, the byte counter of an older cache is measured; stale temp
 * files of killed writers are swept; the cap's configuration. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <errno.h>

#include "cache/disk.h"
#include "cache/evict.h"
#include "test_util.h"

typedef struct {
    char *root;
    pj_disk_cache *cache;
    pj_artifact artifact;
    size_t entry_size; /* bytes of one entry file */
    int warnings;
    char last[2048];
} evict_fixture;

static void on_log(void *user, ptxjit_log_level level, const char *message)
{
    evict_fixture *f = user;
    if (level != PTXJIT_LOG_WARNING)
        return;
    f->warnings++;
    snprintf(f->last, sizeof f->last, "%s", message);
}

static void make_artifact(pj_artifact *a)
{
    memset(a, 0, sizeof *a);
    a->family = pj_strdup("reduce");
    a->params = pj_strdup("tpb=256");
    a->ptx = pj_strdup(".version 8.5\n.target sm_90a\n.entry reduce_kernel()\n{ ret; }\n");
    a->cubin_size = 2000;
    a->cubin = calloc(1, a->cubin_size);
    a->log = pj_strdup("");
    a->entry_count = 1;
    a->entries = calloc(1, sizeof *a->entries);
    a->entries[0] = pj_strdup("reduce_kernel");
}

/* A cache whose cap holds `entries_fit` entries and a half (0: the default cap). */
static void open_evict(evict_fixture *f, double entries_fit)
{
    memset(f, 0, sizeof *f);
    f->root = test_mkdtemp();
    make_artifact(&f->artifact);
    size_t size = 0;
    free(pj_entry_encode(&size, "00000000000000000000000000000000", &f->artifact));
    f->entry_size = size;
    pj_logger logger = {.fn = on_log, .user = f};
    pj_disk_options options = {f->root, (uint64_t)(entries_fit * (double)size), 0};
    ck_assert_int_eq(pj_disk_cache_open(&f->cache, &options, &logger), PTXJIT_OK);
}

static void close_evict(evict_fixture *f)
{
    pj_disk_cache_close(f->cache);
    pj_artifact_free(&f->artifact);
    test_rmtree(f->root);
    free(f->root);
}

/* Key number i: 32 hex digits, in shard "0<i>" for i < 16. */
static const char *key(int i)
{
    static char keys[16][33];
    snprintf(keys[i], 33, "0%x%030x", i, i);
    return keys[i];
}

static void store(evict_fixture *f, int i)
{
    ck_assert_int_eq(pj_disk_cache_store(f->cache, key(i), &f->artifact), PTXJIT_OK);
}

static int present(evict_fixture *f, int i)
{
    char *path = pj_disk_cache_entry_path(f->cache, key(i));
    int result = access(path, F_OK) == 0;
    free(path);
    return result;
}

/* Sets the entry's times to `age` seconds ago: its place in the LRU order. */
static void age_entry(evict_fixture *f, int i, int age)
{
    char *path = pj_disk_cache_entry_path(f->cache, key(i));
    struct timespec times[2];
    clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= age;
    times[1] = times[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
    free(path);
}

static void hit(evict_fixture *f, int i)
{
    pj_artifact got;
    int found = 0;
    ck_assert_int_eq(pj_disk_cache_load(f->cache, key(i), &got, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1);
    pj_artifact_free(&got);
}

START_TEST(cap_evicts_the_least_recently_used_entry_first)
{
    evict_fixture f;
    open_evict(&f, 3.5);
    for (int i = 0; i < 3; i++)
        store(&f, i);
    age_entry(&f, 0, 300); /* stored first ... */
    age_entry(&f, 1, 200);
    age_entry(&f, 2, 100);
    hit(&f, 0);  /* ... but used last: entry 1 is now the least recently used */
    store(&f, 3); /* four entries > 3.5: evict down to nine tenths of the cap */
    ck_assert(present(&f, 0) && !present(&f, 1) && present(&f, 2) && present(&f, 3));
    ptxjit_cache_stats stats;
    pj_disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.evicted, 1);
    ck_assert_uint_eq(stats.entries, 3);
    ck_assert_uint_le(stats.bytes, stats.max_bytes);
    ck_assert_uint_eq(stats.max_bytes, (uint64_t)(3.5 * (double)f.entry_size));
    ck_assert_int_eq(f.warnings, 0);
    close_evict(&f);
}
END_TEST

START_TEST(cap_never_removes_an_entry_being_read)
{
    evict_fixture f;
    open_evict(&f, 3.5);
    for (int i = 0; i < 3; i++)
        store(&f, i);
    age_entry(&f, 0, 300);
    age_entry(&f, 1, 200);
    age_entry(&f, 2, 100);
    /* A reader in the middle of reading entry 0 holds what pj_disk_cache_load holds. */
    char *path = pj_disk_cache_entry_path(f.cache, key(0));
    int reader = open(path, O_RDONLY);
    ck_assert_int_ge(reader, 0);
    ck_assert_int_eq(flock(reader, LOCK_SH), 0);
    store(&f, 3);
    ck_assert_msg(present(&f, 0), "the entry being read was evicted");
    ck_assert(!present(&f, 1) && present(&f, 2) && present(&f, 3)); /* the next one went */
    close(reader);
    free(path);
    close_evict(&f);
}
END_TEST

/* The cap is a bound, not a hint: a cap below one entry keeps none (and stores still work). */
START_TEST(cap_smaller_than_one_entry_keeps_none)
{
    evict_fixture f;
    open_evict(&f, 0.5);
    store(&f, 0);
    store(&f, 1);
    ck_assert(!present(&f, 0) && !present(&f, 1));
    ptxjit_cache_stats stats;
    pj_disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.evicted, 2);
    ck_assert_uint_eq(stats.stores, 2);
    close_evict(&f);
}
END_TEST

static void write_file(const char *path, const char *text)
{
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs(text, file);
    fclose(file);
}

/* A cache written by ptxjit before the cap had no byte counter: the first store measures. */
START_TEST(cap_measures_a_cache_whose_counter_was_never_kept)
{
    evict_fixture f;
    open_evict(&f, 0); /* the default cap while filling */
    for (int i = 0; i < 6; i++)
        store(&f, i);
    for (int i = 0; i < 6; i++)
        age_entry(&f, i, 600 - 10 * i);
    char stats[4200];
    snprintf(stats, sizeof stats, "%s/stats", pj_disk_cache_dir(f.cache));
    write_file(stats, "hits 0\nmisses 0\nstores 6\ncorrupt 0\n"); /* the old format */
    pj_disk_cache_close(f.cache);
    pj_disk_options options = {f.root, (uint64_t)(3.5 * (double)f.entry_size), 0};
    ck_assert_int_eq(pj_disk_cache_open(&f.cache, &options, NULL), PTXJIT_OK);
    store(&f, 6);
    ptxjit_cache_stats s;
    pj_disk_cache_stats(f.cache, &s);
    ck_assert_uint_eq(s.entries, 3); /* 7 entries measured; 4 oldest went */
    ck_assert(!present(&f, 0) && !present(&f, 3) && present(&f, 4) && present(&f, 6));
    ck_assert_uint_eq(s.stores, 7);
    close_evict(&f);
}
END_TEST

static void make_temp(evict_fixture *f, const char *relative, int age)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", pj_disk_cache_dir(f->cache), relative);
    write_file(path, "part of an entry whose writer was killed");
    struct timespec times[2];
    clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= age;
    times[1] = times[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

static int temp_exists(evict_fixture *f, const char *relative)
{
    char path[4300];
    snprintf(path, sizeof path, "%s/%s", pj_disk_cache_dir(f->cache), relative);
    return access(path, F_OK) == 0;
}

START_TEST(store_sweeps_stale_temp_files_of_its_shard)
{
    evict_fixture f;
    open_evict(&f, 0);
    store(&f, 1); /* makes shard 01 */
    make_temp(&f, "01/.tmp.999999.1", PJ_TEMP_SWEEP_SECONDS + 60); /* a dead writer's */
    make_temp(&f, "01/.tmp.999999.2", 5);                          /* a live writer's */
    store(&f, 1);
    ck_assert(!temp_exists(&f, "01/.tmp.999999.1"));
    ck_assert(temp_exists(&f, "01/.tmp.999999.2"));
    ck_assert(present(&f, 1));
    close_evict(&f);
}
END_TEST

START_TEST(trim_sweeps_every_shard_and_evicts_to_the_cap)
{
    evict_fixture f;
    open_evict(&f, 0);
    for (int i = 0; i < 4; i++)
        store(&f, i);
    for (int i = 0; i < 4; i++)
        age_entry(&f, i, 100 - i);
    make_temp(&f, "00/.tmp.999999.1", PJ_TEMP_SWEEP_SECONDS + 60);
    make_temp(&f, "03/.tmp.999999.2", PJ_TEMP_SWEEP_SECONDS + 60);
    make_temp(&f, "compiler.tmp.999999", PJ_TEMP_SWEEP_SECONDS + 60);
    make_temp(&f, "02/.tmp.999999.3", 5);
    pj_disk_cache_close(f.cache);
    pj_disk_options options = {f.root, (uint64_t)(2.5 * (double)f.entry_size), 0};
    ck_assert_int_eq(pj_disk_cache_open(&f.cache, &options, NULL), PTXJIT_OK);
    evict_report report;
    ck_assert_int_eq(pj_disk_cache_trim(f.cache, &report), PTXJIT_OK);
    ck_assert_uint_eq(report.temp_removed, 3);
    ck_assert_uint_eq(report.entries, 4);
    ck_assert_uint_eq(report.evicted, 2);
    ck_assert(!present(&f, 0) && !present(&f, 1) && present(&f, 2) && present(&f, 3));
    ck_assert(temp_exists(&f, "02/.tmp.999999.3"));
    ck_assert(!temp_exists(&f, "compiler.tmp.999999"));
    ptxjit_cache_stats stats;
    pj_disk_cache_stats(f.cache, &stats);
    ck_assert_uint_eq(stats.evicted, 2);
    close_evict(&f);
}
END_TEST

/* Opens with the cap from $PTXJIT_CACHE_MAX_BYTES = text; returns the cap. */
static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* An evictor stopped (SIGSTOP, a debugger) between taking an entry's exclusive lock and its
 * unlink must not stall the readers of that entry: a reader waits for its shared lock only
 * briefly, then reads without it (the lock only tells evictors to pass the entry over). And
 * an eviction run waits for another run's lock only as long as it is told to. */
START_TEST(a_stopped_evictor_stalls_no_reader_and_no_trim_forever)
{
    evict_fixture f;
    open_evict(&f, 3.5);
    store(&f, 0);
    char *path = pj_disk_cache_entry_path(f.cache, key(0));
    int evictor = open(path, O_RDWR);
    ck_assert_int_ge(evictor, 0);
    ck_assert_int_eq(flock(evictor, LOCK_EX), 0); /* and then stopped */
    double start = now_ms();
    hit(&f, 0);
    ck_assert_msg(now_ms() - start < 5000, "the read waited %.0f ms", now_ms() - start);
    close(evictor);
    free(path);

    char lock_path[4300];
    snprintf(lock_path, sizeof lock_path, "%s/evict.lock", pj_disk_cache_dir(f.cache));
    int other = open(lock_path, O_RDWR | O_CREAT, 0600);
    ck_assert_int_ge(other, 0);
    ck_assert_int_eq(flock(other, LOCK_EX), 0); /* another run, stopped */
    evict_report report;
    start = now_ms();
    errno = 0;
    ck_assert_int_eq(pj_evict_run(&report, pj_disk_cache_dir(f.cache), 1, 0600, 100), 0);
    ck_assert_int_eq(errno, EWOULDBLOCK);
    double waited = now_ms() - start;
    ck_assert_msg(waited >= 90 && waited < 5000, "waited %.0f ms", waited);
    close(other);
    ck_assert_int_eq(pj_evict_run(&report, pj_disk_cache_dir(f.cache), 1, 0600, 100), 1);
    close_evict(&f);
}
END_TEST

static uint64_t cap_from_environment(const char *text, int *warnings)
{
    evict_fixture f;
    memset(&f, 0, sizeof f);
    f.root = test_mkdtemp();
    setenv("PTXJIT_CACHE_MAX_BYTES", text, 1);
    pj_logger logger = {.fn = on_log, .user = &f};
    ck_assert_int_eq(pj_disk_cache_open(&f.cache, &(pj_disk_options){f.root, 0, 0}, &logger),
                     PTXJIT_OK);
    uint64_t cap = pj_disk_cache_max_bytes(f.cache);
    *warnings = f.warnings;
    if (f.warnings) {
        ck_assert_ptr_nonnull(strstr(f.last, "PTXJIT_CACHE_MAX_BYTES"));
        ck_assert_ptr_nonnull(strstr(f.last, "512M")); /* the fix, by example */
    }
    unsetenv("PTXJIT_CACHE_MAX_BYTES");
    pj_disk_cache_close(f.cache);
    test_rmtree(f.root);
    free(f.root);
    return cap;
}

START_TEST(cap_comes_from_option_then_environment_then_default)
{
    int warnings;
    ck_assert_uint_eq(cap_from_environment("1048576", &warnings), 1048576);
    ck_assert_int_eq(warnings, 0);
    ck_assert_uint_eq(cap_from_environment("512M", &warnings), (uint64_t)512 << 20);
    ck_assert_uint_eq(cap_from_environment("2g", &warnings), (uint64_t)2 << 30);
    ck_assert_uint_eq(cap_from_environment("64K", &warnings), 65536);
    ck_assert_int_eq(warnings, 0);
    static const char *const bad[] = {"lots", "0", "-5", "12Q", "1GB", "99999999999999999999T"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(bad); i++) {
        ck_assert_uint_eq(cap_from_environment(bad[i], &warnings), PJ_DEFAULT_CACHE_MAX_BYTES);
        ck_assert_msg(warnings == 1, "no warning for '%s'", bad[i]);
    }
    /* The option wins over the environment. */
    char *root = test_mkdtemp();
    setenv("PTXJIT_CACHE_MAX_BYTES", "1M", 1);
    pj_disk_cache *cache;
    ck_assert_int_eq(pj_disk_cache_open(&cache, &(pj_disk_options){root, 4096, 0}, NULL), PTXJIT_OK);
    ck_assert_uint_eq(pj_disk_cache_max_bytes(cache), 4096);
    pj_disk_cache_close(cache);
    unsetenv("PTXJIT_CACHE_MAX_BYTES");
    test_rmtree(root);
    free(root);
}
END_TEST

Suite *suite_cache_evict(void)
{
    Suite *suite = suite_create("cache_evict");
    TCase *tc = tcase_create("cap");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cap_evicts_the_least_recently_used_entry_first);
    tcase_add_test(tc, cap_never_removes_an_entry_being_read);
    tcase_add_test(tc, cap_smaller_than_one_entry_keeps_none);
    tcase_add_test(tc, cap_measures_a_cache_whose_counter_was_never_kept);
    tcase_add_test(tc, store_sweeps_stale_temp_files_of_its_shard);
    tcase_add_test(tc, trim_sweeps_every_shard_and_evicts_to_the_cap);
    tcase_add_test(tc, a_stopped_evictor_stalls_no_reader_and_no_trim_forever);
    tcase_add_test(tc, cap_comes_from_option_then_environment_then_default);
    suite_add_tcase(suite, tc);
    return suite;
}

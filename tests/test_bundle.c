/* test_bundle.c — cache bundles: 100+ entries and records exported and imported into an empty
 * cache elsewhere (its first requests are disk hits); a bundle with corrupt, foreign and
 * unsafe members imports the good ones only, with counts, and writes nothing else; a family
 * filter; a cut bundle; refusals. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/disk.h"
#include "fileio_faults.h"
#include "test_util.h"

static ptxjit_context *open_at(const char *dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = dir;
    options.remote_cache = "";
    options.process_cache = 0; /* each cache stands for a machine: nothing shared in memory */
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static char *path_in(const char *base, const char *name)
{
    char *path = malloc(4300);
    snprintf(path, 4300, "%s/%s", base, name);
    return path;
}

static void key_of(char key[33], int i)
{
    snprintf(key, 33, "%02x%030x", (unsigned)(i * 37) & 0xff, (unsigned)i);
}

/* A small synthetic entry of family (the checks do not care that it is not a real cubin). */
static void store_fake(pj_disk_cache *disk, const char *key, const char *family, int record)
{
    char *entries[] = {record ? "tune" : "kernel"};
    uint8_t cubin[64];
    memset(cubin, key[5], sizeof cubin);
    pj_artifact a = {.family = (char *)family, .params = "n=1", .options = "",
                     .ptx = "// ptx", .cubin = cubin, .cubin_size = sizeof cubin, .log = "",
                     .entries = entries, .entry_count = 1};
    ck_assert_int_eq((record ? pj_disk_cache_store_record : pj_disk_cache_store)(disk, key, &a),
                     PTXJIT_OK);
}

static pj_disk_cache *disk_at(const char *dir)
{
    pj_disk_options options = {dir, 0, 0};
    pj_disk_cache *disk;
    ck_assert_int_eq(pj_disk_cache_open(&disk, &options, NULL), PTXJIT_OK);
    return disk;
}

START_TEST(export_import_moves_every_entry)
{
    char *base = test_mkdtemp(), *a_dir = path_in(base, "a"), *b_dir = path_in(base, "b");
    char *bundle = path_in(base, "cache.tar");
    pj_disk_cache *a = disk_at(a_dir);
    char key[33];
    for (int i = 0; i < 110; i++) {
        key_of(key, i);
        store_fake(a, key, i % 2 ? "reduce" : "transpose", i >= 100);
    }
    ptxjit_context *ca = open_at(a_dir);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, ca, "reduce", "variant=one_pass", NULL),
                     PTXJIT_OK);
    ptxjit_bundle_stats s;
    ck_assert_int_eq(ptxjit_cache_export(ca, bundle, NULL, 0, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, 101);
    ck_assert_uint_eq(s.records, 10);
    ck_assert_uint_eq(s.corrupt + s.foreign + s.unsafe, 0);
    /* tar lists it */
    char command[9000];
    snprintf(command, sizeof command, "tar tf %s | grep -c '^v1/[0-9a-f][0-9a-f]/' | grep -qx 111",
             bundle);
    ck_assert_int_eq(system(command), 0);
    ptxjit_context *cb = open_at(b_dir);
    ck_assert_int_eq(ptxjit_cache_import(cb, bundle, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, 101);
    ck_assert_uint_eq(s.records, 10);
    ck_assert_uint_eq(s.corrupt + s.foreign + s.unsafe, 0);
    ptxjit_origin origin;
    ptxjit_kernel *again;
    ck_assert_int_eq(ptxjit_get_kernel(&again, cb, "reduce", "variant=one_pass", &origin),
                     PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_DISK);
    size_t sa, sb;
    const void *x = ptxjit_kernel_cubin(kernel, &sa), *y = ptxjit_kernel_cubin(again, &sb);
    ck_assert_uint_eq(sa, sb);
    ck_assert_int_eq(memcmp(x, y, sa), 0);
    pj_disk_cache *b = disk_at(b_dir);
    for (int i = 0; i < 110; i++) {
        key_of(key, i);
        pj_artifact got;
        int found = 0;
        ck_assert_int_eq((i >= 100 ? pj_disk_cache_load_record : pj_disk_cache_load)(
                             b, key, &got, &found),
                         PTXJIT_OK);
        ck_assert_int_eq(found, 1);
        pj_artifact_free(&got);
    }
    /* the family filter */
    ck_assert_int_eq(ptxjit_cache_export(ca, bundle, (const char *const[]){"transpose"}, 1, &s),
                     PTXJIT_OK);
    ck_assert_uint_eq(s.entries, 50);
    ck_assert_uint_eq(s.records, 5);
    pj_disk_cache_close(a);
    pj_disk_cache_close(b);
    ptxjit_close(ca);
    ptxjit_close(cb);
    test_rmtree(base);
    free(base);
    free(a_dir);
    free(b_dir);
    free(bundle);
}
END_TEST

/* ---- a tar writer of the tests' own, for members the library would never write ---- */

static void put_member(FILE *f, const char *name, char type, const void *data, size_t size)
{
    unsigned char h[512] = {0};
    snprintf((char *)h, 100, "%s", name);
    memcpy(h + 100, "0000644", 8);
    snprintf((char *)h + 124, 12, "%011o", (unsigned)size);
    memcpy(h + 136, "00000000000", 12);
    h[156] = (unsigned char)type;
    if (type == '2')
        snprintf((char *)h + 157, 100, "/etc/passwd");
    memcpy(h + 257, "ustar", 6);
    memcpy(h + 263, "00", 2);
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (int i = 0; i < 512; i++)
        sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
    fwrite(h, 512, 1, f);
    static const char zeros[512];
    if (size) {
        fwrite(data, 1, size, f);
        fwrite(zeros, 1, (512 - size % 512) % 512, f);
    }
}

/* The encoded entry of key, as stored (caller frees). */
static char *entry_bytes(const char *dir, const char *key, size_t *size)
{
    pj_disk_cache *disk = disk_at(dir);
    store_fake(disk, key, "reduce", 0);
    char *path = pj_disk_cache_entry_path(disk, key), *data;
    ck_assert_int_eq(pj_read_file(&data, size, path), PTXJIT_OK);
    free(path);
    pj_disk_cache_close(disk);
    return data;
}

START_TEST(bad_members_are_skipped_and_counted)
{
    char *base = test_mkdtemp(), *src = path_in(base, "src"), *dst = path_in(base, "dst");
    char *bundle = path_in(base, "mixed.tar");
    char good[33] = "00aa00aa00aa00aa00aa00aa00aa00aa", bad[33] = "11bb11bb11bb11bb11bb11bb11bb11bb";
    size_t good_size, bad_size;
    char *good_data = entry_bytes(src, good, &good_size);
    char *bad_data = entry_bytes(src, bad, &bad_size);
    char name[128];
    FILE *f = fopen(bundle, "wb");
    snprintf(name, sizeof name, "v1/00/%s", good);
    put_member(f, name, '0', good_data, good_size);
    snprintf(name, sizeof name, "v1/00/%.31s1", good); /* good's bytes under another key */
    put_member(f, name, '0', good_data, good_size);
    bad_data[bad_size / 2] ^= 1; /* checksum fails */
    snprintf(name, sizeof name, "v1/11/%s", bad);
    put_member(f, name, '0', bad_data, bad_size);
    snprintf(name, sizeof name, "v1/11/%s", bad); /* cut short: the checksum fails too */
    put_member(f, name, '0', bad_data, bad_size / 3);
    snprintf(name, sizeof name, "v9/00/%s", good); /* another cache version */
    put_member(f, name, '0', good_data, good_size);
    put_member(f, "README", '0', "hello", 5);
    snprintf(name, sizeof name, "v1/00/%s", good);
    put_member(f, name, '2', NULL, 0); /* a symbolic link */
    snprintf(name, sizeof name, "../v1/00/%s", good);
    put_member(f, name, '0', good_data, good_size);
    snprintf(name, sizeof name, "/tmp/v1/00/%s", good);
    put_member(f, name, '0', good_data, good_size);
    put_member(f, "v1/ab", '0', "x", 1); /* names too short for a shard and a key */
    put_member(f, "v1/", '0', "x", 1);
    put_member(f, "v1/00", '5', NULL, 0); /* a directory: nothing to count */
    static const char end[1024];
    fwrite(end, sizeof end, 1, f);
    fclose(f);
    ptxjit_context *context = open_at(dst);
    ptxjit_bundle_stats s;
    ck_assert_int_eq(ptxjit_cache_import(context, bundle, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, 1);
    ck_assert_uint_eq(s.corrupt, 3);
    ck_assert_uint_eq(s.foreign, 4);
    ck_assert_uint_eq(s.unsafe, 3);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.entries, 1); /* only the good one was written */
    /* a bundle cut inside a member: the members before it are imported */
    ck_assert_int_eq(truncate(bundle, 512 + 512 + 100), 0);
    ck_assert_int_eq(ptxjit_cache_import(context, bundle, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, 1);
    ck_assert_uint_eq(s.corrupt, 1);
    ck_assert_int_eq(truncate(bundle, 512 + 100), 0); /* inside the first member's data */
    ck_assert_int_eq(ptxjit_cache_import(context, bundle, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, 0);
    ck_assert_uint_eq(s.corrupt, 1);
    ptxjit_close(context);
    free(good_data);
    free(bad_data);
    test_rmtree(base);
    free(base);
    free(src);
    free(dst);
    free(bundle);
}
END_TEST

/* Two exports of one cache to one path at once (threads of a process): each writes a whole
 * bundle of its own, and the one renamed last is whole too. */
typedef struct {
    ptxjit_context *context;
    const char *path;
    ptxjit_status status;
    ptxjit_bundle_stats stats;
} export_job;

static void *export_thread(void *arg)
{
    export_job *job = arg;
    job->status = ptxjit_cache_export(job->context, job->path, NULL, 0, &job->stats);
    return NULL;
}

/* Two caches in a temporary directory: a with count fake reduce entries, b empty; and the
 * path of a bundle beside them. */
typedef struct {
    char *base, *a_dir, *b_dir, *bundle;
    ptxjit_context *a, *b;
} two_caches;

static void two_caches_open(two_caches *t, int count)
{
    t->base = test_mkdtemp();
    t->a_dir = path_in(t->base, "a");
    t->b_dir = path_in(t->base, "b");
    t->bundle = path_in(t->base, "cache.tar");
    pj_disk_cache *disk = disk_at(t->a_dir);
    char key[33];
    for (int i = 0; i < count; i++) {
        key_of(key, i);
        store_fake(disk, key, "reduce", 0);
    }
    pj_disk_cache_close(disk);
    t->a = open_at(t->a_dir);
    t->b = open_at(t->b_dir);
}

static void two_caches_close(two_caches *t)
{
    ptxjit_close(t->a);
    ptxjit_close(t->b);
    test_rmtree(t->base);
    free(t->base);
    free(t->a_dir);
    free(t->b_dir);
    free(t->bundle);
}

START_TEST(exports_to_one_path_at_once_stay_whole)
{
    two_caches t;
    two_caches_open(&t, 200);
    ptxjit_context *ca = t.a, *cb = t.b;
    char *base = t.base, *bundle = t.bundle;
    for (int round = 0; round < 5; round++) {
        export_job jobs[2] = {{ca, bundle, PTXJIT_OK, {0}}, {ca, bundle, PTXJIT_OK, {0}}};
        pthread_t threads[2];
        for (int t = 0; t < 2; t++)
            ck_assert_int_eq(pthread_create(&threads[t], NULL, export_thread, &jobs[t]), 0);
        for (int t = 0; t < 2; t++) {
            pthread_join(threads[t], NULL);
            ck_assert_msg(jobs[t].status == PTXJIT_OK, "%s", ptxjit_last_error());
            ck_assert_uint_eq(jobs[t].stats.entries, 200);
        }
        ptxjit_bundle_stats s;
        ck_assert_int_eq(ptxjit_cache_import(cb, bundle, &s), PTXJIT_OK);
        ck_assert_uint_eq(s.entries, 200);
        ck_assert_uint_eq(s.corrupt + s.foreign + s.unsafe, 0);
    }
    char listing[9000];
    snprintf(listing, sizeof listing, "ls %s | grep -c tmp | grep -qx 0", base);
    ck_assert_int_eq(system(listing), 0); /* no temporary file left behind */
    two_caches_close(&t);
}
END_TEST

/* A store that fails while importing (the disk full, injected at the cache's file seam) is
 * the import's error, with the store's words; what was published before it stays whole. */
START_TEST(import_fails_when_the_cache_cannot_store)
{
    two_caches t;
    two_caches_open(&t, 20);
    ptxjit_context *ca = t.a, *cb = t.b;
    const char *bundle = t.bundle;
    ck_assert_int_eq(ptxjit_cache_export(ca, bundle, NULL, 0, NULL), PTXJIT_OK);
    pj_fileio_inject_fault(FILEIO_WRITE, 5, ENOSPC);
    ptxjit_bundle_stats s;
    ptxjit_status status = ptxjit_cache_import(cb, bundle, &s);
    pj_fileio_clear_faults();
    ck_assert_int_ne(status, PTXJIT_OK);
    ck_assert_msg(strstr(ptxjit_last_error(), strerror(ENOSPC)), "%s", ptxjit_last_error());
    ck_assert_uint_lt(s.entries, 20);
    ck_assert_uint_eq(s.corrupt, 0); /* a full disk is no corrupt member */
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, cb), PTXJIT_OK);
    ck_assert_uint_eq(stats.entries, s.entries);
    ck_assert_int_eq(ptxjit_cache_import(cb, bundle, &s), PTXJIT_OK); /* room again: the rest */
    ck_assert_uint_eq(s.entries, 20);
    two_caches_close(&t);
}
END_TEST

START_TEST(refusals_name_the_problem)
{
    char *base = test_mkdtemp(), *dir = path_in(base, "c"), *junk = path_in(base, "junk");
    FILE *f = fopen(junk, "wb");
    for (int i = 0; i < 600; i++)
        fputc('x', f);
    fclose(f);
    ptxjit_context *context = open_at(dir);
    ck_assert_int_eq(ptxjit_cache_import(context, junk, NULL), PTXJIT_ERR_CACHE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "not a tar file"));
    ck_assert_int_eq(ptxjit_cache_import(context, "/nonexistent/b.tar", NULL), PTXJIT_ERR_IO);
    ck_assert_int_eq(ptxjit_cache_export(context, "/nonexistent/b.tar", NULL, 0, NULL),
                     PTXJIT_ERR_IO);
    ck_assert_int_eq(ptxjit_cache_export(context, NULL, NULL, 0, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_cache_import(NULL, junk, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_cache_export(context, junk, NULL, 2, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.remote_cache = "";
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_cache_import(context, junk, NULL), PTXJIT_ERR_CACHE);
    ptxjit_close(context);
    test_rmtree(base);
    free(base);
    free(dir);
    free(junk);
}
END_TEST

/* The CLI: export lists with tar, import --json counts. */
START_TEST(cli_export_and_import)
{
    const char *cli = getenv("PTXJIT_CLI");
    if (!cli) {
        printf("cli_export_and_import: skipped, PTXJIT_CLI is not set\n");
        return;
    }
    char *base = test_mkdtemp();
    char command[9000];
    snprintf(command, sizeof command,
             "cd %s && unset PTXJIT_REMOTE_CACHE && "
             "PTXJIT_CACHE_DIR=%s/a %s --no-gpu ptx reduce variant=one_pass >/dev/null 2>&1 && "
             "PTXJIT_CACHE_DIR=%s/a %s cache export b.tar 2>err && grep -q '1 entries' err && "
             "tar tf b.tar | grep -q '^v1/' && "
             "PTXJIT_CACHE_DIR=%s/c %s cache import b.tar --json | grep -q '\"entries\": 1'",
             base, base, cli, base, cli, base, cli);
    ck_assert_int_eq(system(command), 0);
    snprintf(command, sizeof command, "%s cache import 2>/dev/null", cli);
    ck_assert_int_eq(WEXITSTATUS(system(command)), 2);
    test_rmtree(base);
    free(base);
}
END_TEST

/* ---- hostile inputs, round three (issue #29) ---- */

/* Whether a load of key from dir finds it (the trust rule of the disk cache decides). */
static int loads(const char *dir, const char *key)
{
    pj_disk_cache *disk = disk_at(dir);
    pj_artifact a;
    int found = 0;
    ck_assert_int_eq(pj_disk_cache_load(disk, key, &a, &found), PTXJIT_OK);
    if (found)
        pj_artifact_free(&a);
    pj_disk_cache_close(disk);
    return found;
}

/* Export applies exactly a load's trust rule: an entry its group can write in a private
 * cache, or (as root) one another user owns, is refused by a load and so left out of the
 * bundle and counted as untrusted; the importing machine gets only the trusted one. */
START_TEST(export_leaves_out_what_a_load_refuses)
{
    char *base = test_mkdtemp(), *src = path_in(base, "src"), *dst = path_in(base, "dst");
    char *bundle = path_in(base, "b.tar");
    char keys[3][33];
    pj_disk_cache *disk = disk_at(src);
    for (int i = 0; i < 3; i++) {
        key_of(keys[i], i + 1);
        store_fake(disk, keys[i], "reduce", 0);
    }
    char *group = pj_disk_cache_entry_path(disk, keys[1]);
    char *owned = pj_disk_cache_entry_path(disk, keys[2]);
    pj_disk_cache_close(disk);
    ck_assert_int_eq(chmod(group, 0660), 0);
    int root = geteuid() == 0; /* only root can give a file away */
    if (root)
        ck_assert_int_eq(chown(owned, 54321, 54321), 0);
    ck_assert_int_eq(loads(src, keys[0]), 1);
    ck_assert_int_eq(loads(src, keys[1]), 0);
    ck_assert_int_eq(loads(src, keys[2]), !root);
    ptxjit_context *context = open_at(src);
    ptxjit_bundle_stats s;
    ck_assert_int_eq(ptxjit_cache_export(context, bundle, NULL, 0, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, root ? 1 : 2);
    ck_assert_uint_eq(s.untrusted, root ? 2 : 1);
    ck_assert_uint_eq(s.corrupt, 0);
    ptxjit_close(context);
    context = open_at(dst);
    ck_assert_int_eq(ptxjit_cache_import(context, bundle, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, root ? 1 : 2);
    ptxjit_close(context);
    ck_assert_int_eq(loads(dst, keys[0]), 1);
    ck_assert_int_eq(loads(dst, keys[1]), 0); /* never left the first machine */
    ck_assert_int_eq(loads(dst, keys[2]), !root);
    free(group);
    free(owned);
    test_rmtree(base);
    free(base);
    free(src);
    free(dst);
    free(bundle);
}
END_TEST

/* 300 copies of one entry are one entry imported and 299 duplicates; a key whose first copy
 * is damaged is imported from its next good copy. */
START_TEST(duplicate_members_are_counted_apart)
{
    char *base = test_mkdtemp(), *src = path_in(base, "src"), *dst = path_in(base, "dst");
    char *bundle = path_in(base, "copies.tar");
    char key[33] = "00aa00aa00aa00aa00aa00aa00aa00aa", other[33] = "22cc22cc22cc22cc22cc22cc22cc22cc";
    size_t size, other_size;
    char *data = entry_bytes(src, key, &size);
    char *other_data = entry_bytes(src, other, &other_size);
    char name[128];
    FILE *f = fopen(bundle, "wb");
    ck_assert_ptr_nonnull(f);
    snprintf(name, sizeof name, "v1/00/%s", key);
    for (int i = 0; i < 300; i++)
        put_member(f, name, '0', data, size);
    snprintf(name, sizeof name, "v1/22/%s", other);
    other_data[other_size / 2] ^= 1;
    put_member(f, name, '0', other_data, other_size); /* damaged first copy */
    other_data[other_size / 2] ^= 1;
    put_member(f, name, '0', other_data, other_size);
    put_member(f, name, '0', other_data, other_size);
    static const char end[1024];
    fwrite(end, sizeof end, 1, f);
    ck_assert_int_eq(fclose(f), 0);
    ptxjit_context *context = open_at(dst);
    ptxjit_bundle_stats s;
    ck_assert_int_eq(ptxjit_cache_import(context, bundle, &s), PTXJIT_OK);
    ck_assert_uint_eq(s.entries, 2);
    ck_assert_uint_eq(s.duplicates, 299 + 1);
    ck_assert_uint_eq(s.corrupt, 1);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.entries, 2);
    ptxjit_close(context);
    free(data);
    free(other_data);
    test_rmtree(base);
    free(base);
    free(src);
    free(dst);
    free(bundle);
}
END_TEST

/* The import of a FIFO, in a child bounded by an alarm: PTXJIT_ERR_IO naming what it is. */
static int import_refuses(void *path)
{
    char *dir = path_in(path, "c");
    ptxjit_context *context = open_at(dir);
    ptxjit_bundle_stats s;
    char *fifo = path_in(path, "b.tar");
    int bad = ptxjit_cache_import(context, fifo, &s) != PTXJIT_ERR_IO ||
              !strstr(ptxjit_last_error(), "a FIFO, not a regular file");
    ptxjit_close(context);
    free(fifo);
    free(dir);
    return bad;
}

/* A bundle path that is a FIFO (whose blocking open waits for a writer for ever), a device or
 * a directory is refused at once, naming what it is. */
START_TEST(bundle_that_is_no_regular_file_is_refused_at_once)
{
    char *base = test_mkdtemp(), *fifo = path_in(base, "b.tar"), *dir = path_in(base, "c");
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    test_bounded_child("import of a FIFO", import_refuses, base, 30);
    ptxjit_context *context = open_at(dir);
    ck_assert_int_eq(ptxjit_cache_import(context, "/dev/zero", NULL), PTXJIT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "a character device, not a regular file"));
    ck_assert_int_eq(ptxjit_cache_import(context, base, NULL), PTXJIT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "a directory, not a regular file"));
    ptxjit_close(context);
    test_rmtree(base);
    free(base);
    free(fifo);
    free(dir);
}
END_TEST

/* A NULL among the family names is refused naming its index, before anything is written. */
START_TEST(null_family_name_is_refused_naming_its_index)
{
    char *base = test_mkdtemp(), *dir = path_in(base, "c"), *bundle = path_in(base, "b.tar");
    ptxjit_context *context = open_at(dir);
    const char *families[] = {"reduce", NULL, "matmul"};
    ptxjit_bundle_stats s;
    ck_assert_int_eq(ptxjit_cache_export(context, bundle, families, 3, &s),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "families[1] is NULL"));
    ck_assert_int_eq(access(bundle, F_OK), -1);
    ck_assert_int_eq(ptxjit_cache_export(context, bundle, families, 1, &s), PTXJIT_OK);
    ptxjit_close(context);
    test_rmtree(base);
    free(base);
    free(dir);
    free(bundle);
}
END_TEST

Suite *suite_bundle(void)
{
    Suite *s = suite_create("bundle");
    TCase *tc = tcase_create("bundle");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, export_import_moves_every_entry);
    tcase_add_test(tc, bad_members_are_skipped_and_counted);
    tcase_add_test(tc, exports_to_one_path_at_once_stay_whole);
    tcase_add_test(tc, import_fails_when_the_cache_cannot_store);
    tcase_add_test(tc, refusals_name_the_problem);
    tcase_add_test(tc, cli_export_and_import);
    tcase_add_test(tc, export_leaves_out_what_a_load_refuses);
    tcase_add_test(tc, duplicate_members_are_counted_apart);
    tcase_add_test(tc, bundle_that_is_no_regular_file_is_refused_at_once);
    tcase_add_test(tc, null_family_name_is_refused_naming_its_index);
    suite_add_tcase(s, tc);
    return s;
}

/* test_tune.c — autotuning without a GPU: spaces from tune lines and override strings (and
 * what they refuse), record keys and records in the disk cache (damage, truncation, trust),
 * the tuner's loop on a synthetic bench (injected run and clock: the pick, a failing
 * candidate, the record reused, PARAM=auto), and the compile-only mode on the pool. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/disk.h"
#include "request/context.h"
#include "test_util.h"
#include "tune/tune.h"

static const pj_schema *schema_of(ptxjit_context *context, const char *family)
{
    const pj_schema *schema;
    ck_assert_int_eq(pj_context_schema(&schema, context, family), PTXJIT_OK);
    return schema;
}

static int has_point(const pj_tune_space *space, const char *canonical)
{
    for (int i = 0; i < space->count; i++)
        if (strcmp(space->points[i], canonical) == 0)
            return 1;
    return 0;
}

START_TEST(template_space_is_the_product_of_its_tune_lines)
{
    ptxjit_context *context = test_open_offline(NULL);
    pj_tune_space space;
    ck_assert_int_eq(pj_tune_space_build(&space, schema_of(context, "reduce"), NULL, NULL, 90,
                                         PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(space.count, 35); /* tpb 64..1024 (pow2) x batch 1,2,4,6,8,12,16 */
    ck_assert_str_eq(space.space, "tpb=64,128,256,512,1024 batch=1,2,4,6,8,12,16");
    ck_assert_str_eq(space.points[0], "batch=1 dtype=i32 tpb=64 variant=vectorized");
    ck_assert_str_eq(space.points[1], "batch=2 dtype=i32 tpb=64 variant=vectorized");
    ck_assert_str_eq(space.reference, "batch=4 dtype=i32 tpb=512 variant=vectorized");
    ck_assert(has_point(&space, space.reference)); /* today's best is in the space */
    pj_tune_space_free(&space);
    /* transpose: 41 points with the best 16384^2 tile of docs/PERFORMANCE.md */
    ck_assert_int_eq(pj_tune_space_build(&space, schema_of(context, "transpose"), NULL, NULL, 90,
                                         PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(space.count, 41);
    ck_assert(has_point(&space, "batch=32 block=128 dtype=f32 group=4096 inplace=1 rows=64 "
                                "stages=0 swizzle=none variant=tma_batched xpose=diagonal"));
    pj_tune_space_free(&space);
    ptxjit_close(context);
}
END_TEST

START_TEST(override_narrows_widens_and_fixed_params_pin)
{
    ptxjit_context *context = test_open_offline(NULL);
    const pj_schema *reduce = schema_of(context, "reduce");
    pj_tune_space space;
    ck_assert_int_eq(pj_tune_space_build(&space, reduce, "dtype=f32", "tpb=128,256 batch=4..5",
                                         90, PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(space.count, 4);
    ck_assert_str_eq(space.fixed, "dtype=f32");
    ck_assert_str_eq(space.points[3], "batch=5 dtype=f32 tpb=256 variant=vectorized");
    pj_tune_space_free(&space);
    /* A fixed parameter is not tuned; auto leaves it tuned. */
    ck_assert_int_eq(pj_tune_space_build(&space, reduce, "tpb=256 batch=auto", NULL, 90,
                                         PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(space.count, 7);
    ck_assert_str_eq(space.space, "batch=1,2,4,6,8,12,16");
    pj_tune_space_free(&space);
    /* Widened: variant tuned too; batch does not apply to one_pass (taken back, merged). */
    ck_assert_int_eq(pj_tune_space_build(&space, reduce, NULL,
                                         "variant=one_pass,vectorized tpb=256 batch=4,8", 90,
                                         PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(space.considered, 4);
    ck_assert_int_eq(space.merged, 1);
    ck_assert_int_eq(space.count, 3);
    ck_assert_str_eq(space.points[0], "dtype=i32 tpb=256 variant=one_pass");
    pj_tune_space_free(&space);
    ptxjit_close(context);
}
END_TEST

START_TEST(constraints_prune_before_any_compile)
{
    ptxjit_context *context = test_open_offline(NULL);
    pj_tune_space space;
    /* vectorized keeps batch <= 16: 32 is pruned. */
    ck_assert_int_eq(pj_tune_space_build(&space, schema_of(context, "reduce"), NULL,
                                         "tpb=256 batch=16,32", 90, PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(space.refused, 1);
    ck_assert_int_eq(space.count, 1);
    ck_assert_ptr_nonnull(strstr(space.refusal, "batch <= 16"));
    pj_tune_space_free(&space);
    /* smem: a 128-wide padded tile does not fit 48 KiB, nor batch > block; rows does not apply
     * (merged): block 32 with batch 8, 16, 32 and block 64 with all four. */
    ck_assert_int_eq(pj_tune_space_build(&space, schema_of(context, "transpose"), "variant=smem",
                                         NULL, 90, PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(space.count, 7);
    ck_assert(space.refused > 0 && space.merged > 0);
    pj_tune_space_free(&space);
    /* every point refused */
    ck_assert_int_eq(pj_tune_space_build(&space, schema_of(context, "reduce"), NULL,
                                         "batch=17,18", 90, PJ_BACKEND_NVRTC),
                     PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "every one of the 10 points"));
    ptxjit_close(context);
}
END_TEST

static void expect_override_refused(const char *space, const char *needle)
{
    ptxjit_context *context = test_open_offline(NULL);
    pj_tune_space built;
    ck_assert_int_eq(pj_tune_space_build(&built, schema_of(context, "reduce"), NULL, space, 90,
                                         PJ_BACKEND_NVRTC),
                     PTXJIT_ERR_PARAM);
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "'%s': %s", space, ptxjit_last_error());
    ptxjit_close(context);
}

START_TEST(bad_overrides_are_refused_clearly)
{
    expect_override_refused("nosuch=1,2", "unknown parameter 'nosuch'");
    expect_override_refused("tpb=100", "a value is not allowed");
    expect_override_refused("tpb=2048", "power of two in 32..1024");
    expect_override_refused("batch=0..64", "goes outside the parameter's own");
    expect_override_refused("batch=1,2,1", "listed twice");
    expect_override_refused("tpb", "not PARAM=VALUES");
    expect_override_refused("variant=fast", "a value is not allowed");
    /* 33 x 5 x 5 x 7 > 4096 points */
    ptxjit_context *context = test_open_offline(NULL);
    pj_tune_space built;
    ck_assert_int_eq(pj_tune_space_build(&built, schema_of(context, "matmul"), "variant=wgmma",
                                         "mma=m64n8k16,m64n16k16,m64n24k16,m64n32k16,m64n40k16,"
                                         "m64n48k16,m64n56k16,m64n64k16,m64n72k16,m64n80k16,"
                                         "m64n88k16,m64n96k16,m64n104k16,m64n112k16,m64n120k16,"
                                         "m64n128k16,m64n136k16,m64n144k16,m64n152k16,"
                                         "m64n160k16,m64n168k16,m64n176k16,m64n184k16,"
                                         "m64n192k16,m64n200k16,m64n208k16,m64n216k16,"
                                         "m64n224k16,m64n232k16,m64n240k16,m64n248k16,"
                                         "m64n256k16,m16n8k8 bm=16..256 stages=2,3,4,6,8 "
                                         "group=1..64",
                                         90, PJ_BACKEND_NVRTC),
                     PTXJIT_ERR_PARAM);
    ck_assert_msg(strstr(ptxjit_last_error(), "more than 4096 points"), "%s",
                  ptxjit_last_error());
    ptxjit_close(context);
}
END_TEST

static ptxjit_status parse_template(const char *lines)
{
    char text[1024];
    snprintf(text, sizeof text,
             "//@ptxjit family t\n//@ptxjit entry k\n"
             "//@ptxjit param tpb int(32..1024) pow2 default=256\n"
             "//@ptxjit param n int(1..1000) default=3\n%s\n",
             lines);
    pj_schema *schema = NULL;
    ptxjit_status status = pj_schema_parse(&schema, text, "t.cu");
    pj_schema_free(schema);
    return status;
}

START_TEST(bad_tune_lines_are_refused_when_the_template_is_read)
{
    ck_assert_int_eq(parse_template("//@ptxjit tune tpb 64..512"), PTXJIT_OK);
    ck_assert_int_eq(parse_template("//@ptxjit tune nosuch 1,2"), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "t.cu:5: tune names 'nosuch'"));
    ck_assert_int_eq(parse_template("//@ptxjit tune tpb 48"), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "tune values '48' of parameter 'tpb'"));
    ck_assert_int_eq(parse_template("//@ptxjit tune n 1..100"), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "more than 64 values"));
    ck_assert_int_eq(parse_template("//@ptxjit tune n 1,2\n//@ptxjit tune n 3"),
                     PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "two tune lines"));
    ck_assert_int_eq(parse_template("//@ptxjit tune n"), PTXJIT_ERR_TEMPLATE);
}
END_TEST

START_TEST(tune_lines_are_introspectable)
{
    ptxjit_context *context = test_open_offline(NULL);
    int count = 0;
    ck_assert_int_eq(ptxjit_family_tune_count(&count, context, "transpose"), PTXJIT_OK);
    ck_assert_int_eq(count, 3);
    ptxjit_tune_line_info line;
    ck_assert_int_eq(ptxjit_family_tune_line(&line, context, "transpose", 1), PTXJIT_OK);
    ck_assert_str_eq(line.param, "rows");
    ck_assert_str_eq(line.values, "16,32,64,128");
    ck_assert_int_eq(ptxjit_family_tune_line(&line, context, "transpose", 3),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    const char *text;
    ck_assert_int_eq(ptxjit_family_describe(&text, context, "reduce"), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(text, "tuning space"));
    ptxjit_close(context);
}
END_TEST

/* ---- record keys ---- */

START_TEST(record_key_depends_on_every_input)
{
    pj_tune_key_inputs base = {"reduce", "template", "dtype=i32", "tpb=128,256", "n=1024",
                               "H100, 132 SMs, driver 13000", "sm_90a", "nvrtc", "13.0"};
    pj_hash128 want, got;
    ck_assert_int_eq(pj_tune_record_key(&want, &base), PTXJIT_OK);
    for (int field = 0; field < 9; field++) {
        pj_tune_key_inputs changed = base;
        const char **slot = (const char *[]){0}; /* placeholder */
        switch (field) {
        case 0: slot = &changed.family; break;
        case 1: slot = &changed.template_text; break;
        case 2: slot = &changed.fixed; break;
        case 3: slot = &changed.space; break;
        case 4: slot = &changed.problem; break;
        case 5: slot = &changed.device; break;
        case 6: slot = &changed.arch; break;
        case 7: slot = &changed.backend; break;
        default: slot = &changed.compiler; break;
        }
        *slot = "other";
        ck_assert_int_eq(pj_tune_record_key(&got, &changed), PTXJIT_OK);
        ck_assert_msg(got.low != want.low || got.high != want.high, "field %d not in the key",
                      field);
    }
    pj_tune_key_inputs latest = base;
    latest.space = NULL; /* the latest key differs from any space's, "" included */
    ck_assert_int_eq(pj_tune_record_key(&got, &latest), PTXJIT_OK);
    ck_assert(got.low != want.low || got.high != want.high);
    latest.space = "";
    pj_hash128 empty;
    ck_assert_int_eq(pj_tune_record_key(&empty, &latest), PTXJIT_OK);
    ck_assert(got.low != empty.low || got.high != empty.high);
}
END_TEST

/* ---- records in the disk cache ---- */

#define KEY "00112233445566778899aabbccddeeff"

static void make_record(pj_tune_record *r)
{
    static pj_tune_row rows[2] = {
        {"batch=2 tpb=128", PTXJIT_OK, "", 1.5, 0.01, 10, 0, 0, 3},
        {"batch=4 tpb=128", PTXJIT_ERR_COMPILE, "compile\terror\nline", 0, 0, 0, 0, 1, 0},
    };
    memset(r, 0, sizeof *r);
    *r = (pj_tune_record){"reduce", "n=1024", "dtype=i32", "tpb=128 batch=2,4", "GPU",
                          "nvrtc", "batch=2 tpb=128", "batch=4 tpb=512", 0.01, 1.5, 42.0,
                          1700000000, 2, 0, 0, 0, rows, 2};
}

static void quiet_log(void *user, ptxjit_log_level level, const char *message)
{
    (void)user, (void)level, (void)message;
}

static pj_disk_cache *open_cache(char **root)
{
    *root = test_mkdtemp();
    pj_disk_options options = {*root, 0, 0};
    pj_logger quiet = {.fn = quiet_log, .user = NULL};
    pj_disk_cache *disk;
    ck_assert_int_eq(pj_disk_cache_open(&disk, &options, &quiet), PTXJIT_OK);
    return disk;
}

START_TEST(record_round_trips_through_the_cache)
{
    char *root, *path = NULL;
    pj_disk_cache *disk = open_cache(&root);
    pj_tune_record r, back;
    make_record(&r);
    ck_assert_int_eq(pj_tune_record_store(disk, NULL, KEY, &r, &path), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(path, KEY ".tune"));
    int found = 0;
    ck_assert_int_eq(pj_tune_record_load(disk, NULL, KEY, "reduce", &back, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(back.winner, "batch=2 tpb=128");
    ck_assert_str_eq(back.space, "tpb=128 batch=2,4");
    ck_assert_int_eq(back.row_count, 2);
    ck_assert_int_eq(back.rows[1].status, PTXJIT_ERR_COMPILE);
    ck_assert_str_eq(back.rows[1].message, "compile error line"); /* separators taken out */
    ck_assert(back.rows[0].median_ms == 1.5 && back.wall_ms == 42.0);
    pj_tune_record_free(&back);
    /* another family's lookup misses it; stats count it apart from kernels */
    ck_assert_int_eq(pj_tune_record_load(disk, NULL, KEY, "transpose", &back, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 0);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(pj_disk_cache_stats(disk, &stats), PTXJIT_OK);
    ck_assert_int_eq(stats.tune_records, 1);
    ck_assert_int_eq(stats.entries, 0);
    ck_assert_int_eq(stats.hits, 0); /* records are no kernel hits */
    uint64_t removed = 0;
    ck_assert_int_eq(pj_disk_cache_clear_records(disk, &removed), PTXJIT_OK);
    ck_assert_int_eq(removed, 1);
    free(path);
    pj_disk_cache_close(disk);
    test_rmtree(root);
    free(root);
}
END_TEST

static void damage(const char *path, int truncate_it)
{
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    if (truncate_it) {
        ck_assert_int_eq(ftruncate(fileno(f), size / 2), 0);
    } else {
        fseek(f, size / 2, SEEK_SET);
        int c = fgetc(f);
        fseek(f, size / 2, SEEK_SET);
        fputc(c ^ 0x20, f);
    }
    fclose(f);
}

START_TEST(damaged_or_untrusted_records_are_missed)
{
    char *root, *path = NULL;
    pj_disk_cache *disk = open_cache(&root);
    pj_tune_record r, back;
    make_record(&r);
    for (int round = 0; round < 3; round++) {
        free(path);
        ck_assert_int_eq(pj_tune_record_store(disk, NULL, KEY, &r, &path), PTXJIT_OK);
        if (round < 2)
            damage(path, round);
        else
            ck_assert_int_eq(chmod(path, 0620), 0); /* group-writable: not trusted */
        int found = 1;
        ck_assert_int_eq(pj_tune_record_load(disk, NULL, KEY, "reduce", &back, &found), PTXJIT_OK);
        ck_assert_int_eq(found, 0);
        struct stat st;
        /* damaged: removed (and counted); untrusted: left, never read */
        ck_assert_int_eq(stat(path, &st) == 0, round == 2);
    }
    ptxjit_cache_stats stats;
    ck_assert_int_eq(pj_disk_cache_stats(disk, &stats), PTXJIT_OK);
    ck_assert_int_eq(stats.corrupt, 2);
    /* a body this version did not write is no record either */
    pj_tune_record junk;
    ck_assert_int_eq(pj_tune_record_decode(&junk, "ptxjit tune record 1\nfamily\tx\n"),
                     PTXJIT_ERR_CACHE);
    ck_assert_int_eq(pj_tune_record_decode(&junk, "not a record"), PTXJIT_ERR_CACHE);
    free(path);
    pj_disk_cache_close(disk);
    test_rmtree(root);
    free(root);
}
END_TEST

/* ---- the loop on a synthetic bench ---- */

/* Times by candidate: tpb=256 batch=8 is 1.0 ms; tpb=128 batch=8 1.005 (within the 1% band,
 * and earlier in the space's order: it wins); tpb=512 anything 3 ms (abandoned); batch=16
 * fails its check. */
static int measured, checked;
static double fake_time(const char *params)
{
    if (strstr(params, "tpb=512"))
        return 3.0;
    if (strstr(params, "batch=8") && strstr(params, "tpb=256"))
        return 1.0;
    if (strstr(params, "batch=8"))
        return 1.005;
    return 1.2;
}

static ptxjit_status fake_check(pj_tune_bench *bench, ptxjit_kernel *kernel, int reference,
                                double *ms)
{
    (void)bench, (void)reference;
    checked++;
    if (strstr(ptxjit_kernel_params(kernel), "batch=16"))
        return pj_error(PTXJIT_ERR_CUDA, "wrong result: synthetic");
    if (ms) /* a first launch: a little slower */
        *ms = fake_time(ptxjit_kernel_params(kernel)) * 1.01;
    return PTXJIT_OK;
}

static ptxjit_status fake_measure(pj_tune_bench *bench, ptxjit_kernel *kernel, double *samples,
                                  int count, int warm)
{
    (void)bench, (void)warm;
    for (int i = 0; i < count; i++) /* a little deterministic jitter */
        samples[i] = fake_time(ptxjit_kernel_params(kernel)) * (1 + 0.001 * ((i * 7) % 3));
    measured += count;
    return PTXJIT_OK;
}

static int fake_lost(pj_tune_bench *bench)
{
    (void)bench;
    return 0;
}

static void fake_release(pj_tune_bench *bench)
{
    (void)bench;
}

static ptxjit_status fake_bench(pj_tune_bench *out, const pj_tune_bench_spec *spec)
{
    (void)spec;
    *out = (pj_tune_bench){NULL, fake_check, fake_measure, fake_lost, fake_release, {0}};
    return PTXJIT_OK;
}

static ptxjit_context *open_with_cache(const char *root)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = root;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    return context;
}

static ptxjit_tune_result *tune_reduce(ptxjit_context *context, int retune)
{
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = "n=2^20";
    options.space = "tpb=128,256,512 batch=8,16";
    options.retune = retune;
    ptxjit_tune_result *result = NULL;
    ck_assert_msg(ptxjit_tune(&result, context, "reduce", &options) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    return result;
}

START_TEST(tuner_picks_deterministically_and_records)
{
    char *root = test_mkdtemp();
    pj_tune_bench_override = fake_bench;
    pj_tune_device_override = "synthetic GPU";
    ptxjit_context *context = open_with_cache(root);
    ptxjit_tune_result *result = tune_reduce(context, 0);
    ptxjit_tune_info info;
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_str_eq(info.problem, "n=1048576");
    ck_assert_str_eq(info.winner, "batch=8 dtype=i32 tpb=128 variant=vectorized");
    ck_assert_int_eq(info.from_record, 0);
    ck_assert_ptr_nonnull(info.record_path);
    ck_assert_int_eq(info.candidate_count, 6);
    ck_assert(info.noise >= 0.01 && info.best_ms > 0.99 && info.best_ms < 1.01);
    int failed = 0, abandoned = 0;
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c;
        ck_assert_int_eq(ptxjit_tune_result_candidate(&c, result, i), PTXJIT_OK);
        failed += c.status != PTXJIT_OK;
        abandoned += c.abandoned;
        if (c.status != PTXJIT_OK)
            ck_assert_ptr_nonnull(strstr(c.message, "wrong result"));
    }
    ck_assert_int_eq(failed, 3);    /* batch=16 (at each tpb): excluded with its error */
    ck_assert_int_eq(abandoned, 1); /* tpb=512 batch=8: 3x the best, cut after its first run */
    ptxjit_tune_result_free(result);
    /* Again, retuned: the same winner. */
    result = tune_reduce(context, 1);
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_str_eq(info.winner, "batch=8 dtype=i32 tpb=128 variant=vectorized");
    ptxjit_tune_result_free(result);
    ptxjit_close(context);
    /* A fresh context finds the record on disk: nothing checked or timed. */
    context = open_with_cache(root);
    measured = checked = 0;
    result = tune_reduce(context, 0);
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_int_eq(info.from_record, 1);
    ck_assert_int_eq(measured + checked, 0);
    ck_assert_str_eq(info.winner, "batch=8 dtype=i32 tpb=128 variant=vectorized");
    ptxjit_tune_result_free(result);
    /* PARAM=auto finds the winner for the problem; another problem gets the defaults. */
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel_tuned(&kernel, context, "reduce", "tpb=auto batch=auto",
                                             "n=1048576", NULL),
                     PTXJIT_OK);
    ck_assert_str_eq(ptxjit_kernel_params(kernel), "batch=8 dtype=i32 tpb=128 variant=vectorized");
    ck_assert_int_eq(ptxjit_get_kernel_tuned(&kernel, context, "reduce", "tpb=auto batch=auto",
                                             "n=999", NULL),
                     PTXJIT_OK);
    ck_assert_str_eq(ptxjit_kernel_params(kernel), "batch=4 dtype=i32 tpb=512 variant=vectorized");
    /* The op's plan says which: the winner's values, or the defaults. */
    char *request = NULL, *why = NULL;
    ck_assert_int_eq(ptxjit_plan(&request, &why, context, "reduce", "tpb=auto batch=auto",
                                 "n=1048576"),
                     PTXJIT_OK);
    ck_assert_str_eq(request, "batch=8 dtype=i32 tpb=128 variant=vectorized");
    ck_assert_msg(strstr(why, "take the values of the problem's tuned winner"), "%s", why);
    free(request);
    free(why);
    ck_assert_int_eq(ptxjit_plan(&request, &why, context, "reduce", "tpb=auto batch=auto",
                                 "n=999"),
                     PTXJIT_OK);
    ck_assert_msg(strstr(why, "No tuned winner applies"), "%s", why);
    free(request);
    free(why);
    /* plain get_kernel does not know the problem */
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "tpb=auto", NULL),
                     PTXJIT_ERR_PARAM);
    /* the list shows the record once; clear removes both files (space's and latest) */
    ptxjit_tune_result **list;
    int count;
    ck_assert_int_eq(ptxjit_tune_list(&list, &count, context), PTXJIT_OK);
    ck_assert_int_eq(count, 1);
    ptxjit_tune_list_free(list, count);
    uint64_t removed = 0;
    ck_assert_int_eq(ptxjit_tune_clear(context, &removed), PTXJIT_OK);
    ck_assert_int_eq(removed, 2);
    ptxjit_close(context);
    pj_tune_bench_override = NULL;
    pj_tune_device_override = NULL;
    test_rmtree(root);
    free(root);
}
END_TEST

static ptxjit_tune_result *tune_reduce_bucketed(ptxjit_context *context, const char *problem,
                                                int bucket)
{
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = problem;
    options.space = "tpb=128,256,512 batch=8,16";
    options.bucket = bucket;
    ptxjit_tune_result *result = NULL;
    ck_assert_msg(ptxjit_tune(&result, context, "reduce", &options) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    return result;
}

START_TEST(bucketed_records_serve_every_problem_of_the_bucket)
{
    char *text = NULL;
    ck_assert_int_eq(pj_tune_bucket(&text, "rows=3000 cols=1000 mode=x n=1 m=0 k=4096"),
                     PTXJIT_OK);
    ck_assert_str_eq(text, "pow2: rows=4096 cols=1024 mode=x n=1 m=0 k=4096");
    free(text);
    char *root = test_mkdtemp();
    pj_tune_bench_override = fake_bench;
    pj_tune_device_override = "synthetic GPU";
    ptxjit_context *context = open_with_cache(root);
    ptxjit_tune_result *result =
        tune_reduce_bucketed(context, "n=1000000", PTXJIT_TUNE_BUCKET_POW2);
    ptxjit_tune_info info;
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_str_eq(info.problem, "pow2: n=1048576");
    ck_assert_str_eq(info.winner, "batch=8 dtype=i32 tpb=128 variant=vectorized");
    ptxjit_tune_result_free(result);
    ptxjit_close(context);
    /* A fresh process: another problem of the bucket finds the record, timing nothing. */
    context = open_with_cache(root);
    measured = checked = 0;
    result = tune_reduce_bucketed(context, "n=700000", PTXJIT_TUNE_BUCKET_POW2);
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_int_eq(info.from_record, 1);
    ck_assert_int_eq(measured + checked, 0);
    ptxjit_tune_result_free(result);
    /* auto: no exact record for these problems, the bucket's winner; outside it, defaults */
    ptxjit_kernel *kernel;
    const char *in_bucket[] = {"n=600000", "n=1048576", "n=524289"};
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(ptxjit_get_kernel_tuned(&kernel, context, "reduce",
                                                 "tpb=auto batch=auto", in_bucket[i], NULL),
                         PTXJIT_OK);
        ck_assert_str_eq(ptxjit_kernel_params(kernel),
                         "batch=8 dtype=i32 tpb=128 variant=vectorized");
    }
    ck_assert_int_eq(ptxjit_get_kernel_tuned(&kernel, context, "reduce", "tpb=auto batch=auto",
                                             "n=524288", NULL),
                     PTXJIT_OK);
    ck_assert_str_eq(ptxjit_kernel_params(kernel), "batch=4 dtype=i32 tpb=512 variant=vectorized");
    /* an exact tuning of a problem of the bucket is a record of its own: it measures */
    result = tune_reduce_bucketed(context, "n=1000000", PTXJIT_TUNE_BUCKET_EXACT);
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_int_eq(info.from_record, 0);
    ck_assert_str_eq(info.problem, "n=1000000");
    ck_assert_int_gt(measured, 0);
    ptxjit_tune_result_free(result);
    /* an unknown bucket kind is refused */
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = "n=1000";
    options.bucket = 7;
    ck_assert_int_eq(ptxjit_tune(&result, context, "reduce", &options),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "PTXJIT_TUNE_BUCKET_POW2"));
    ptxjit_close(context);
    pj_tune_bench_override = NULL;
    pj_tune_device_override = NULL;
    test_rmtree(root);
    free(root);
}
END_TEST

/* The op's fitted request is a tuning's extra point where the fit changed the defaults: a
 * decoding's swapped matmul tile, softmax's threads for a row; nothing for a square matmul, a
 * reduce, or transpose's shape fallback. */
static char *plan_point(ptxjit_context *context, const char *family, const char *fixed,
                        pj_backend backend, uint64_t a, uint64_t b, uint64_t c)
{
    const pj_schema *schema;
    ck_assert_int_eq(pj_context_schema(&schema, context, family), PTXJIT_OK);
    const uint64_t sizes[3] = {a, b, c};
    char *point = (char *)"poison";
    ck_assert_int_eq(pj_tune_plan_point(&point, context, schema, pj_family_find(family), fixed,
                                        backend, sizes),
                     PTXJIT_OK);
    return point;
}

START_TEST(the_ops_untuned_request_is_a_point)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    char *point = plan_point(context, "matmul", "", PJ_BACKEND_NVRTC, 1, 4096, 4096);
    ck_assert_ptr_nonnull(point);
    ck_assert_msg(strstr(point, "mma=m64n8k16") && strstr(point, "stages=16") &&
                      strstr(point, "swap=1"),
                  "%s", point);
    free(point);
    point = plan_point(context, "matmul", "dtype=f16", PJ_BACKEND_NVRTC, 128, 8192, 8192);
    ck_assert_msg(point && strstr(point, "bm=64") && strstr(point, "dtype=f16"), "%s", point);
    free(point);
    ck_assert_ptr_null(plan_point(context, "matmul", "", PJ_BACKEND_NVRTC, 128, 32000, 4096));
    /* Fixed tile words are taken as written: no fit. */
    ck_assert_ptr_null(plan_point(context, "matmul", "stages=4", PJ_BACKEND_NVRTC, 1, 4096, 4096));
    /* A shape fallback is not a point: the tuning refuses such a space, naming the variant. */
    ck_assert_ptr_null(plan_point(context, "transpose", "", PJ_BACKEND_NVRTC, 3344, 4859, 0));
    point = plan_point(context, "softmax", "dtype=bf16", PJ_BACKEND_NVRTC, 65536, 1024, 0);
    ck_assert_msg(point && strstr(point, "items=2 tpb=128 tpr=64"), "%s", point);
    free(point);
    /* The fit is the backend's: llvm builds no swapped tile. */
    point = plan_point(context, "matmul", "", PJ_BACKEND_LLVM, 1, 4096, 4096);
    ck_assert_msg(point && strstr(point, "backend=llvm") && strstr(point, "swap=0"), "%s",
                  point);
    free(point);
    ck_assert_ptr_null(plan_point(context, "reduce", "", PJ_BACKEND_NVRTC, 1000, 0, 0));
    ptxjit_close(context);
}
END_TEST

START_TEST(pick_rule_on_synthetic_rows)
{
    pj_tune_row rows[4] = {
        {"a", PTXJIT_OK, "", 1.025, 0.001, 10, 0, 0, 3}, /* outside 1% of the best */
        {"b", PTXJIT_OK, "", 1.008, 0.001, 10, 0, 0, 3}, /* inside: the earliest tied, wins */
        {"c", PTXJIT_OK, "", 1.000, 0.001, 10, 0, 0, 3}, /* the fastest */
        {"d", PTXJIT_ERR_CUDA, "x", 0.5, 0, 10, 0, 0, 3},
    };
    double noise;
    ck_assert_int_eq(pj_tune_pick(rows, 4, 0, &noise), 1);
    ck_assert(noise == 0.01);
    ck_assert_int_eq(pj_tune_pick(rows, 4, 0.03, &noise), 0); /* a family's 3% floor: a tied */
    ck_assert(noise == 0.03);
    ck_assert_int_eq(pj_tune_pick(rows, 4, 0.02, &noise), 1);
    ck_assert_int_eq(pj_tune_pick(rows, 4, 0.5, &noise), 0); /* a floor past 5% is 5% */
    ck_assert(noise == 0.05);
    rows[2].spread = 0.02; /* a noisy best widens the band to 4%: a is tied too */
    ck_assert_int_eq(pj_tune_pick(rows, 4, 0, &noise), 0);
    rows[0].abandoned = rows[1].abandoned = 1;
    ck_assert_int_eq(pj_tune_pick(rows, 4, 0, &noise), 2);
    rows[2].status = PTXJIT_ERR_CUDA;
    ck_assert_int_eq(pj_tune_pick(rows, 4, 0, &noise), -1);
}
END_TEST

START_TEST(compile_only_compiles_the_space_on_the_pool_without_a_gpu)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = "rows=256 cols=256";
    options.space = "block=64,128 rows=32,64 batch=16";
    options.compile_only = 1;
    options.threads = 4;
    ptxjit_tune_result *result = NULL;
    ck_assert_int_eq(ptxjit_tune(&result, context, "transpose", &options), PTXJIT_OK);
    ptxjit_tune_info info;
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_ptr_null(info.winner);
    ck_assert_int_eq(info.candidate_count, 4);
    for (int i = 0; i < 4; i++) {
        ptxjit_tune_candidate c;
        ck_assert_int_eq(ptxjit_tune_result_candidate(&c, result, i), PTXJIT_OK);
        ck_assert_int_eq(c.status, PTXJIT_OK);
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "transpose", c.params, &origin),
                         PTXJIT_OK);
        ck_assert_int_eq(origin, PTXJIT_ORIGIN_MEMORY); /* the pool compiled it */
    }
    ptxjit_tune_result_free(result);
    /* timing needs a GPU */
    options.compile_only = 0;
    ck_assert_int_eq(ptxjit_tune(&result, context, "transpose", &options), PTXJIT_ERR_NO_DEVICE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "compile_only"));
    /* a user family needs its run callback; a bad problem is refused */
    options.problem = "rows=256";
    ck_assert_int_eq(ptxjit_tune(&result, context, "transpose", &options), PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "rows=N cols=N"));
    ck_assert_int_eq(ptxjit_tune(&result, context, "transpose", NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

START_TEST(problem_prunes_points_that_cannot_run_it)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = "rows=64 cols=16384";
    options.space = "variant=online tpb=256,1024 tpr=256,1024 items=4";
    options.compile_only = 1;
    ptxjit_tune_result *result = NULL;
    ck_assert_int_eq(ptxjit_tune(&result, context, "softmax", &options), PTXJIT_OK);
    ptxjit_tune_info info;
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    /* online holds tpr * 4 * 4 elements: only tpr=1024 holds a row of 16384 */
    ck_assert_int_eq(info.candidate_count, 1);
    ck_assert_int_eq(info.points_refused, 3); /* tpr > tpb once, rows too long twice */
    ptxjit_tune_result_free(result);
    ptxjit_close(context);
}
END_TEST

/* Sizes past what a GPU holds, or that wrap when multiplied, are refused before anything is
 * compiled or allocated: a count is at most 2^48, and transpose's rows and cols are 32-bit. */
START_TEST(problems_too_large_are_refused)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.compile_only = 1;
    ptxjit_tune_result *result = NULL;
    static const char *const too_large[] = {"n=4611686018427387905", "n=18446744073709551616",
                                            "n=2^47+18446744073709551615", "n=2^48+1",
                                            "n=2^60", "n=-1", "n=+5"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(too_large); i++) {
        options.problem = too_large[i];
        ck_assert_int_eq(ptxjit_tune(&result, context, "reduce", &options), PTXJIT_ERR_PARAM);
        ck_assert_msg(strstr(ptxjit_last_error(), "from 1 to 2^48"), "%s: %s", too_large[i],
                      ptxjit_last_error());
    }
    options.problem = "n=2^47+5";
    options.space = "tpb=128 batch=2";
    ck_assert_int_eq(ptxjit_tune(&result, context, "reduce", &options), PTXJIT_OK);
    ptxjit_tune_result_free(result);
    options.problem = "rows=4294967296 cols=16";
    options.space = "block=64 rows=32 batch=16";
    ck_assert_int_eq(ptxjit_tune(&result, context, "transpose", &options), PTXJIT_ERR_PARAM);
    ck_assert_msg(strstr(ptxjit_last_error(), "at most 4294967295"), "%s", ptxjit_last_error());
    ptxjit_close(context);
}
END_TEST

Suite *suite_tune(void)
{
    Suite *s = suite_create("tune");
    TCase *tc = tcase_create("tune");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, template_space_is_the_product_of_its_tune_lines);
    tcase_add_test(tc, override_narrows_widens_and_fixed_params_pin);
    tcase_add_test(tc, constraints_prune_before_any_compile);
    tcase_add_test(tc, bad_overrides_are_refused_clearly);
    tcase_add_test(tc, bad_tune_lines_are_refused_when_the_template_is_read);
    tcase_add_test(tc, tune_lines_are_introspectable);
    tcase_add_test(tc, record_key_depends_on_every_input);
    tcase_add_test(tc, record_round_trips_through_the_cache);
    tcase_add_test(tc, damaged_or_untrusted_records_are_missed);
    tcase_add_test(tc, tuner_picks_deterministically_and_records);
    tcase_add_test(tc, problems_too_large_are_refused);
    tcase_add_test(tc, pick_rule_on_synthetic_rows);
    tcase_add_test(tc, the_ops_untuned_request_is_a_point);
    tcase_add_test(tc, bucketed_records_serve_every_problem_of_the_bucket);
    suite_add_tcase(s, tc);
    TCase *many = test_many_compiles_case(s, 120);
    tcase_add_test(many, compile_only_compiles_the_space_on_the_pool_without_a_gpu);
    tcase_add_test(many, problem_prunes_points_that_cannot_run_it);
    return s;
}

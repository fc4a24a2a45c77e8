/* test_tune_search.c — the tuner's search without a GPU, on a synthetic bench whose device
 * limits and run times the test chooses: candidates that cannot launch are pruned with their
 * reason, spilling ones only where candidates without spills ran right, a family's lower bound
 * prunes what cannot beat a measured time, successive halving keeps the best and the
 * exhaustive sweep's winner while timing far fewer runs, five noisy tunings pick the same
 * winner, and the result lists every candidate. The kernels are real compiles (NVRTC). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "families/matmul/tune_bound.h"
#include "request/context.h"
#include "test_util.h"
#include "tune/tune.h"

/* ---- a synthetic bench ---- */

static double (*time_of)(const char *params); /* a candidate's true time, ms */
static double (*first_extra)(const char *params); /* a first launch's extra; NULL: 5 us */
static pj_tune_limits bench_limits;
static int runs_measured, runs_checked;
static unsigned noise_seed; /* 0: no noise; else each sample within +-0.3% */

static double noisy(double ms)
{
    if (!noise_seed)
        return ms;
    noise_seed = noise_seed * 1103515245u + 12345u;
    return ms * (1 + 0.003 * (((noise_seed >> 8) % 2001) / 1000.0 - 1));
}

static ptxjit_status search_check(pj_tune_bench *bench, ptxjit_kernel *kernel, int reference,
                                  double *ms)
{
    (void)bench, (void)reference;
    runs_checked++;
    const char *params = ptxjit_kernel_params(kernel);
    if (ms) /* a first launch: a few microseconds more */
        *ms = noisy(time_of(params)) + (first_extra ? first_extra(params) : 0.005);
    return PTXJIT_OK;
}

static ptxjit_status search_measure(pj_tune_bench *bench, ptxjit_kernel *kernel,
                                    double *samples, int count, int warm)
{
    (void)bench;
    for (int i = 0; i < count; i++)
        samples[i] = noisy(time_of(ptxjit_kernel_params(kernel)));
    runs_measured += count + warm;
    return PTXJIT_OK;
}

static int search_lost(pj_tune_bench *bench)
{
    (void)bench;
    return 0;
}

static void search_release(pj_tune_bench *bench)
{
    (void)bench;
}

static ptxjit_status search_bench(pj_tune_bench *out, const pj_tune_bench_spec *spec)
{
    (void)spec;
    *out = (pj_tune_bench){NULL, search_check, search_measure, search_lost, search_release,
                           bench_limits};
    return PTXJIT_OK;
}

/* An H100's limits. */
static const pj_tune_limits h100 = {132, 1980000, 65536, 65536, 232448, 233472, 1024, 2048};

static ptxjit_context *open_search(pj_tune_limits limits, double (*times)(const char *))
{
    bench_limits = limits;
    time_of = times;
    runs_measured = runs_checked = 0;
    noise_seed = 0;
    first_extra = NULL;
    pj_tune_bench_override = search_bench;
    pj_tune_device_override = "synthetic GPU";
    return test_open_offline(NULL);
}

static void close_search(ptxjit_context *context)
{
    ptxjit_close(context);
    pj_tune_bench_override = NULL;
    pj_tune_device_override = NULL;
    pj_tune_bound_override = NULL;
}

/* A retuning's options (threads 0: a compile thread per core). */
static ptxjit_tune_options options_of(const char *problem, const char *fixed, const char *space,
                                      int exhaustive, int threads)
{
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = problem;
    options.fixed = fixed;
    options.space = space;
    options.retune = 1;
    options.exhaustive = exhaustive;
    options.threads = threads;
    return options;
}

static ptxjit_tune_result *tune_with(ptxjit_context *context, const char *family,
                                     const ptxjit_tune_options *options)
{
    ptxjit_tune_result *result = NULL;
    ck_assert_msg(ptxjit_tune(&result, context, family, options) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    return result;
}

static ptxjit_tune_result *tune(ptxjit_context *context, const char *family, const char *problem,
                                const char *fixed, const char *space, int exhaustive)
{
    const ptxjit_tune_options options = options_of(problem, fixed, space, exhaustive, 0);
    return tune_with(context, family, &options);
}

static ptxjit_tune_candidate candidate(const ptxjit_tune_result *result, int i)
{
    ptxjit_tune_candidate c;
    ck_assert_int_eq(ptxjit_tune_result_candidate(&c, result, i), PTXJIT_OK);
    return c;
}

static ptxjit_tune_info info_of(const ptxjit_tune_result *result)
{
    ptxjit_tune_info info;
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    return info;
}

/* The value of word ("tpb") in canonical params, -1 when absent. */
static int value_of(const char *params, const char *word)
{
    char key[32];
    snprintf(key, sizeof key, "%s=", word);
    for (const char *at = strstr(params, key); at; at = strstr(at + 1, key))
        if (at == params || at[-1] == ' ')
            return atoi(at + strlen(key));
    return -1;
}

/* reduce: fastest at tpb=256 batch=8 (1.0 ms); batch=6 at tpb=256 is within 0.4% and earlier
 * in the space's order, so it is the winner; everything else slower, far from it the farther
 * tpb and batch are. */
static double reduce_times(const char *params)
{
    int tpb = value_of(params, "tpb"), batch = value_of(params, "batch");
    if (tpb == 256 && batch == 6)
        return 1.004;
    return 1.0 + 0.12 * fabs(log2(tpb / 256.0)) + 0.03 * abs(batch - 8);
}

/* transpose: the wider the tile the faster. */
static double tile_times(const char *params)
{
    return 1.0 + 64.0 / value_of(params, "block") + 64.0 / value_of(params, "rows");
}

/* ---- the launch rule ---- */

START_TEST(candidates_that_cannot_launch_are_pruned_with_their_reason)
{
    /* A device whose blocks have 16 K registers: 1024 threads at reduce's ~20-30 registers
     * need more, 256 do not. */
    pj_tune_limits small = h100;
    small.block_registers = 16384;
    ptxjit_context *context = open_search(small, reduce_times);
    ptxjit_tune_result *result =
        tune(context, "reduce", "n=2^20", NULL, "tpb=256,1024 batch=4,8", 0);
    ptxjit_tune_info info = info_of(result);
    ck_assert_int_eq(info.candidate_count, 4);
    ck_assert_int_eq(info.candidates_pruned, 2);
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c = candidate(result, i);
        int big = value_of(c.params, "tpb") == 1024;
        ck_assert_int_eq(c.pruned, big);
        ck_assert_int_eq(c.status, PTXJIT_OK);
        if (big) {
            ck_assert_msg(strstr(c.message, "cannot launch: a block of 1024 threads"), "%s",
                          c.message);
            ck_assert_int_eq(c.runs, 0);
            ck_assert_int_eq(c.rounds, 0);
        } else {
            ck_assert_int_gt(c.runs, 0);
        }
    }
    ck_assert_int_eq(value_of(info.winner, "tpb"), 256);
    ptxjit_tune_result_free(result);
    /* Shared memory: transpose tma_batched tiles of block x rows f32 over a 40000-byte limit
     * (128 x 128 x 4 = 64 KiB) are pruned, smaller ones run. */
    pj_tune_limits narrow = h100;
    narrow.block_shared = 40000;
    bench_limits = narrow;
    time_of = tile_times;
    result = tune(context, "transpose", "rows=4096 cols=4096", "dtype=f32",
                  "block=64,128 rows=64,128 batch=16", 0);
    info = info_of(result);
    int pruned = 0;
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c = candidate(result, i);
        int fits = value_of(c.params, "block") * value_of(c.params, "rows") * 4 + 1024 <= 40000;
        ck_assert_msg(c.pruned == !fits, "%s: pruned %d", c.params, c.pruned);
        if (c.pruned)
            ck_assert_msg(strstr(c.message, "bytes of shared memory") &&
                              strstr(c.message, "the device allows 40000"),
                          "%s", c.message);
        pruned += c.pruned;
    }
    ck_assert_int_eq(pruned, info.candidates_pruned);
    ck_assert_int_gt(pruned, 0);
    ck_assert_int_lt(pruned, info.candidate_count);
    ptxjit_tune_result_free(result);
    close_search(context);
}
END_TEST

START_TEST(the_launch_rule_on_synthetic_facts)
{
    char why[512];
    pj_tune_facts f = {.registers = 64, .static_shared = 0, .max_threads = 1024,
                       .spill_bytes = 0, .threads = 1024, .dynamic_shared = 0};
    ck_assert(pj_tune_launchable(&f, &h100, why, sizeof why)); /* 64 K registers exactly */
    f.max_threads = 768;
    ck_assert(!pj_tune_launchable(&f, &h100, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "at most 768 threads"));
    f = (pj_tune_facts){.registers = 168, .max_threads = 384, .threads = 384,
                        .dynamic_shared = 231424, .spill_bytes = 0};
    ck_assert(pj_tune_launchable(&f, &h100, why, sizeof why)); /* wgmma: 226 KiB fits */
    f.dynamic_shared = 232449;
    ck_assert(!pj_tune_launchable(&f, &h100, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "the device allows 232448"));
    f.dynamic_shared = 232448; /* a block's limit, but with the system's 1 KiB over the SM's */
    pj_tune_limits tight = h100;
    tight.sm_shared = 232448;
    ck_assert(!pj_tune_launchable(&f, &tight, why, sizeof why));
    ck_assert_ptr_nonnull(strstr(why, "more than an SM's"));
    /* unknown limits (0) never prune; a user family (threads 0) is never judged */
    pj_tune_limits unknown = {0};
    ck_assert(pj_tune_launchable(&f, &unknown, why, sizeof why));
    f.threads = 0;
    f.dynamic_shared = 1u << 30;
    ck_assert(pj_tune_launchable(&f, &h100, why, sizeof why));
}
END_TEST

/* ---- the spill rule ---- */

/* 48 live values cannot fit the 32 registers of __launch_bounds__(1024, 2): width=48 spills,
 * width=4 does not. */
static const char spiller[] =
    "//@ptxjit family spiller\n"
    "//@ptxjit entry spills\n"
    "//@ptxjit param width int(1..64) default=4\n"
    "//@ptxjit tune width 4,48\n"
    "extern \"C\" __global__ void __launch_bounds__(1024, 2) spills(float *o, const float *in)\n"
    "{\n"
    "    float a[WIDTH];\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < WIDTH; t++) a[t] = in[t * 1024 + threadIdx.x];\n"
    "    float s = 0;\n"
    "#pragma unroll\n"
    "    for (int t = 0; t < WIDTH; t++) s += a[t] * a[WIDTH - 1 - t] + a[(t * 5) % WIDTH] * s;\n"
    "    o[threadIdx.x] = s;\n"
    "}\n";

/* The spilling one would be the faster: the rule drops it all the same. */
static double spiller_times(const char *params)
{
    return value_of(params, "width") >= 48 ? 0.5 : 1.0;
}

static ptxjit_status no_run(void *user, ptxjit_kernel *kernel, void *stream)
{
    (void)user, (void)kernel, (void)stream;
    return PTXJIT_OK;
}

static ptxjit_tune_result *tune_spiller(ptxjit_context *context, const char *space,
                                        int exhaustive)
{
    ptxjit_tune_options options = options_of("synthetic", NULL, space, exhaustive, 0);
    options.run = no_run;
    return tune_with(context, "spiller", &options);
}

START_TEST(spilling_candidates_are_pruned_only_where_others_do_not_spill)
{
    ptxjit_context *context = open_search(h100, spiller_times);
    ck_assert_int_eq(ptxjit_add_template(context, "spiller.cu", spiller), PTXJIT_OK);
    ptxjit_tune_result *result = tune_spiller(context, NULL, 0);
    ptxjit_tune_info info = info_of(result);
    ck_assert_int_eq(info.candidate_count, 2);
    ck_assert_str_eq(info.winner, "width=4");
    ptxjit_tune_candidate spilling = candidate(result, 1);
    ck_assert_str_eq(spilling.params, "width=48");
    ck_assert_int_eq(spilling.pruned, 1);
    ck_assert_int_eq(spilling.runs, 0);
    ck_assert_msg(strstr(spilling.message, "cannot win: spills") &&
                      strstr(spilling.message, "1 candidate without spills ran right"),
                  "%s", spilling.message);
    ptxjit_tune_result_free(result);
    /* Every candidate spills: none is pruned, the fastest wins. */
    result = tune_spiller(context, "width=48,56", 0);
    info = info_of(result);
    ck_assert_int_eq(info.candidates_pruned, 0);
    ck_assert_int_eq(info.candidates_timed, 2);
    ck_assert_str_eq(info.winner, "width=48");
    ptxjit_tune_result_free(result);
    /* An exhaustive sweep times the spilling one too (and it wins there). */
    result = tune_spiller(context, NULL, 1);
    info = info_of(result);
    ck_assert_int_eq(info.candidates_pruned, 0);
    ck_assert_str_eq(info.winner, "width=48");
    ptxjit_tune_result_free(result);
    close_search(context);
}
END_TEST

/* ---- a family's lower bound ---- */

/* tpb=1024 can never run under 5 ms; the others have no bound. */
static double reduce_bound(const pj_request *request, const uint64_t *sizes, int sms,
                           int clock_khz)
{
    (void)sizes;
    ck_assert_int_eq(sms, 132);
    ck_assert_int_eq(clock_khz, 1980000);
    char *text = pj_request_canonical(request); /* the caller's to free */
    const double bound = text && value_of(text, "tpb") == 1024 ? 5.0 : 0;
    free(text);
    return bound;
}

START_TEST(a_lower_bound_above_a_measured_time_prunes)
{
    ptxjit_context *context = open_search(h100, reduce_times);
    /* One compile thread: the points arrive in the space's order, tpb=256 measured before
     * either tpb=1024. With a thread per core they arrive as their compiles finish, and under
     * three test processes sharing the H200 host's cores a tpb=1024 point arrived first and
     * was measured, with nothing yet to bound it against (2026-11-29). */
    pj_tune_bound_override = reduce_bound;
    const ptxjit_tune_options serial =
        options_of("n=2^20", NULL, "tpb=256,512,1024 batch=6,8", 0, 1);
    ptxjit_tune_result *result = tune_with(context, "reduce", &serial);
    ptxjit_tune_info info = info_of(result);
    ck_assert_int_eq(info.candidates_pruned, 2);
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c = candidate(result, i);
        ck_assert_int_eq(c.pruned, value_of(c.params, "tpb") == 1024);
        if (c.pruned)
            ck_assert_msg(strstr(c.message, "cannot win: no run of it can take less than "
                                            "5.0000 ms"),
                          "%s", c.message);
    }
    ck_assert_str_eq(info.winner, "batch=6 dtype=i32 tpb=256 variant=vectorized");
    ptxjit_tune_result_free(result);
    /* Before anything was measured a bound prunes nothing: tpb=1024 alone in the space (with
     * tpb=256 beside it, whichever compile finished first ran first: under asan tpb=256 was
     * sometimes measured before tpb=1024 arrived, and its bound pruned it). */
    result = tune(context, "reduce", "n=2^20", NULL, "tpb=1024 batch=8", 0);
    ck_assert_int_eq(candidate(result, 0).pruned, 0);
    ptxjit_tune_result_free(result);
    close_search(context);
}
END_TEST

/* A matmul request as the op reads it (no compile). */
static pj_request matmul_request(ptxjit_context *context, const char *params)
{
    const pj_schema *schema;
    ck_assert_int_eq(pj_context_schema(&schema, context, "matmul"), PTXJIT_OK);
    pj_request request;
    ck_assert_msg(pj_request_parse(&request, schema, params, 90) == PTXJIT_OK, "%s: %s", params,
                  ptxjit_last_error());
    return request;
}

START_TEST(matmul_bound_counts_the_busiest_sms_tiles)
{
    ptxjit_context *context = test_open_offline(NULL);
    /* 128 x 256 tiles of bf16 on 8192^3: 2048 tiles, 16 on the busiest of 132 SMs, 2 * 128 *
     * 256 * 8192 flops each, at 4096 flops per clock and 1.98 GHz: 1.0592 ms (a run takes
     * about 1.5 ms) */
    pj_request wide = matmul_request(context, "variant=wgmma dtype=bf16 mma=m64n256k16");
    const uint64_t cube[] = {8192, 8192, 8192}, skinny[] = {128, 8192, 8192};
    double ms = pj_matmul_tune_bound(&wide, cube, 132, 1980000);
    ck_assert_msg(fabs(ms - 16.0 * 2 * 128 * 256 * 8192 / (4096.0 * 1980000)) < 1e-9, "%g", ms);
    /* the skinny problem: 32 tiles for 132 SMs, one on the busiest: 0.066 ms, more than the
     * 0.05 ms the fastest tile (64 x 128) measured there (PERFORMANCE.md) */
    ms = pj_matmul_tune_bound(&wide, skinny, 132, 1980000);
    ck_assert_msg(fabs(ms - 2.0 * 128 * 256 * 8192 / (4096.0 * 1980000)) < 1e-9, "%g", ms);
    ck_assert(ms > 0.06);
    /* a tile that fits the skinny problem: 256 tiles, two on the busiest SM */
    pj_request narrow =
        matmul_request(context, "variant=wgmma dtype=bf16 mma=m64n64k16 bm=64 consumers=1");
    ms = pj_matmul_tune_bound(&narrow, skinny, 132, 1980000);
    ck_assert_msg(fabs(ms - 2.0 * 2 * 64 * 64 * 8192 / (4096.0 * 1980000)) < 1e-9, "%g", ms);
    ck_assert(ms < 0.02);
    /* fp8 doubles the rate, the SIMT steps run at 256 flops a clock, an even share at least */
    pj_request fp8 = matmul_request(context, "variant=wgmma_fp8 mma=m64n256k16");
    ck_assert(fabs(pj_matmul_tune_bound(&fp8, cube, 132, 1980000) * 2 -
                   pj_matmul_tune_bound(&wide, cube, 132, 1980000)) < 1e-9);
    pj_request naive = matmul_request(context, "variant=naive"); /* 32 x 32 tiles */
    const uint64_t odd[] = {100, 100, 100}, big[] = {4096, 4096, 64};
    ms = pj_matmul_tune_bound(&naive, odd, 132, 1980000); /* 9 whole tiles: one on an SM */
    ck_assert_msg(fabs(ms - 2.0 * 32 * 32 * 100 / (256.0 * 1980000)) < 1e-12, "%g", ms);
    ms = pj_matmul_tune_bound(&naive, big, 132, 1980000); /* 16384 tiles: 125 on the busiest */
    ck_assert_msg(fabs(ms - 125 * 2.0 * 32 * 32 * 64 / (256.0 * 1980000)) < 1e-12, "%g", ms);
    /* swap=1: tiles of C's transpose. 8 x 8512: 133 whole 64 x 8 tiles of the 8512 x 8
     * transpose, two on the busiest SM (unswapped, 8 rows hold no whole 64-row tile: an even
     * share, half that); split-K: the parts of a tile run on several SMs, an even share alone */
    pj_request swapped =
        matmul_request(context, "variant=wgmma swap=1 bm=64 consumers=1 mma=m64n8k16");
    const uint64_t decode[] = {8, 8512, 4096};
    ms = pj_matmul_tune_bound(&swapped, decode, 132, 1980000);
    ck_assert_msg(fabs(ms - 2 * 2.0 * 64 * 8 * 4096 / (4096.0 * 1980000)) < 1e-12, "%g", ms);
    pj_request split = matmul_request(context, "variant=wgmma dtype=bf16 mma=m64n256k16 splits=4");
    ms = pj_matmul_tune_bound(&split, skinny, 132, 1980000);
    ck_assert_msg(fabs(ms - 2.0 * 128 * 8192 * 8192 / 132 / (4096.0 * 1980000)) < 1e-12, "%g",
                  ms);
    /* unknown device: no bound */
    ck_assert(pj_matmul_tune_bound(&narrow, skinny, 0, 1980000) == 0);
    pj_request_free(&swapped);
    pj_request_free(&split);
    pj_request_free(&wide);
    pj_request_free(&narrow);
    pj_request_free(&fp8);
    pj_request_free(&naive);
    ptxjit_close(context);
}
END_TEST

/* ---- successive halving ---- */

START_TEST(successive_halving_keeps_the_best_and_the_sweeps_winner)
{
    ptxjit_context *context = open_search(h100, reduce_times);
    ptxjit_tune_result *result = tune(context, "reduce", "n=2^20", NULL, NULL, 0);
    int halving_runs = runs_measured + runs_checked;
    ptxjit_tune_info info = info_of(result);
    ck_assert_int_eq(info.candidate_count, 35); /* the template's space: every one listed */
    ck_assert_int_eq(info.candidates_timed, 35);
    ck_assert_int_eq(info.candidates_pruned, 0);
    ck_assert_int_eq(info.rounds, 3);
    ck_assert_str_eq(info.winner, "batch=6 dtype=i32 tpb=256 variant=vectorized");
    int finalists = 0, abandoned = 0;
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c = candidate(result, i);
        ck_assert_int_eq(c.status, PTXJIT_OK);
        ck_assert_int_ge(c.rounds, 1);
        if (c.abandoned) {
            abandoned++;
            ck_assert_msg(strstr(c.message, "abandoned after round"), "%s", c.message);
            /* dropped: far from the best (the first cut keeps everything within 15%) */
            ck_assert_msg(reduce_times(c.params) > 1.06, "%s dropped", c.params);
        } else {
            finalists++;
            ck_assert_int_eq(c.runs, 10);
            ck_assert_int_eq(c.rounds, 3);
            ck_assert_str_eq(c.message, "");
        }
    }
    ck_assert_int_eq(finalists + abandoned, 35);
    ck_assert_int_ge(finalists, 2);
    ck_assert_int_lt(finalists, 12);
    ptxjit_tune_result_free(result);
    /* The exhaustive sweep: the same winner, every candidate timed fully, many more runs. */
    runs_measured = runs_checked = 0;
    result = tune(context, "reduce", "n=2^20", NULL, NULL, 1);
    int sweep_runs = runs_measured + runs_checked;
    info = info_of(result);
    ck_assert_str_eq(info.winner, "batch=6 dtype=i32 tpb=256 variant=vectorized");
    ck_assert_int_eq(info.rounds, 1);
    for (int i = 0; i < info.candidate_count; i++)
        ck_assert_int_eq(candidate(result, i).runs, 10);
    ck_assert_msg(halving_runs * 3 < sweep_runs, "halving %d runs, sweep %d", halving_runs,
                  sweep_runs);
    ptxjit_tune_result_free(result);
    close_search(context);
}
END_TEST

/* Times 0.3% noisy, many candidates within a few percent of one another: the best tpb=512
 * batch=8 (1.0), tied with batch=6 (1.003, earlier in the space: the winner); every other
 * one 1.5% slower at least, most within 6%. */
static double crowded_times(const char *params)
{
    int tpb = value_of(params, "tpb"), batch = value_of(params, "batch");
    double off = batch == 8 ? 0 : batch == 6 ? 0.003 : 0.015 + 0.002 * abs(batch - 8);
    return 1.0 + 0.02 * fabs(log2(tpb / 512.0)) + off;
}

START_TEST(five_noisy_tunings_pick_the_same_winner)
{
    ptxjit_context *context = open_search(h100, crowded_times);
    char first[256] = "";
    for (int round = 0; round < 5; round++) {
        noise_seed = 17 + 7919 * (unsigned)round;
        ptxjit_tune_result *result = tune(context, "reduce", "n=2^20", NULL, NULL, 0);
        ptxjit_tune_info info = info_of(result);
        if (!round)
            snprintf(first, sizeof first, "%s", info.winner);
        ck_assert_str_eq(info.winner, first);
        ptxjit_tune_result_free(result);
    }
    /* within the 1% band of the best (tpb=512 batch=8, 1.0): the earliest, tpb=512 batch=6 */
    ck_assert_str_eq(first, "batch=6 dtype=i32 tpb=512 variant=vectorized");
    close_search(context);
}
END_TEST

/* Runs of microseconds: the best (tpb=256 batch=8, 10 us) pays 45 us on its first launch,
 * the others (12 to 20 us) 5 us; the first cut (10% of the round's best plus 20 us, and the
 * fastest eighth) would drop it on its checked run alone, so a run that short is timed once
 * more, warm. */
static int is_best(const char *params)
{
    return value_of(params, "tpb") == 256 && value_of(params, "batch") == 8;
}

static double tiny_times(const char *params)
{
    return is_best(params) ? 0.010 : 0.012 + 0.01 * (reduce_times(params) - 1.0);
}

static double late_first_launch(const char *params)
{
    return is_best(params) ? 0.045 : 0.005;
}

START_TEST(a_short_runs_first_launch_does_not_decide_the_first_cut)
{
    ptxjit_context *context = open_search(h100, tiny_times);
    first_extra = late_first_launch;
    ptxjit_tune_result *result = tune(context, "reduce", "n=2^20", NULL, NULL, 0);
    ck_assert_str_eq(info_of(result).winner, "batch=8 dtype=i32 tpb=256 variant=vectorized");
    ptxjit_tune_result_free(result);
    close_search(context);
}
END_TEST

/* A record keeps every row's pruning and rounds. */
START_TEST(records_keep_pruned_and_rounds)
{
    char *root = test_mkdtemp();
    bench_limits = h100;
    bench_limits.block_registers = 16384;
    time_of = reduce_times;
    pj_tune_bench_override = search_bench;
    pj_tune_device_override = "synthetic GPU";
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = root;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ptxjit_tune_result *result = tune(context, "reduce", "n=2^20", NULL, "tpb=256,1024", 0);
    ptxjit_tune_info tuned = info_of(result);
    ptxjit_tune_result_free(result);
    ptxjit_close(context);
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK); /* from the disk */
    ptxjit_tune_options tune_options;
    ptxjit_tune_options_init(&tune_options);
    tune_options.problem = "n=2^20";
    tune_options.space = "tpb=256,1024";
    ck_assert_int_eq(ptxjit_tune(&result, context, "reduce", &tune_options), PTXJIT_OK);
    ptxjit_tune_info found = info_of(result);
    ck_assert_int_eq(found.from_record, 1);
    ck_assert_int_eq(found.candidates_pruned, tuned.candidates_pruned);
    ck_assert_int_eq(found.candidates_pruned, 7);
    ck_assert_int_eq(found.rounds, tuned.rounds);
    ck_assert_int_eq(found.candidates_timed, tuned.candidates_timed);
    ptxjit_tune_result_free(result);
    close_search(context);
    test_rmtree(root);
    free(root);
}
END_TEST

/* ---- the command line, through the fake driver ---- */

/* ptxjit tune on the fake driver: the GPU bench (limits, scaffold, checked and timed runs,
 * events) with the fake's simulated times, which a cubin's bytes decide: every tuning of the
 * same kernels picks the same winner, and the table and JSON tell the rounds. */
START_TEST(cli_tune_runs_the_rounds_on_the_fake_driver)
{
    char env[4300], *out, *err = NULL;
    if (!test_fake_driver_env(env, sizeof env, "cli_tune_runs_the_rounds_on_the_fake_driver"))
        return;
    char *dir = test_mkdtemp(), errors[4200];
    snprintf(errors, sizeof errors, "%s/stderr", dir);
    const char *args = "tune reduce n=100000 --space \"tpb=128,256,1024 batch=4,8\" --retune";
    ck_assert_int_eq(test_run_cli(&out, dir, env, args, errors), 0);
    ck_assert_int_eq(pj_read_file(&err, NULL, errors), PTXJIT_OK);
    ck_assert_msg(strstr(err, "6 candidates on fake GPU 0") &&
                      strstr(err, "0 pruned before running, 6 timed in") &&
                      strstr(err, "abandoned after round 1") && strstr(err, "<- winner"),
                  "%s", err);
    char winner[256];
    snprintf(winner, sizeof winner, "%s", out);
    free(out), free(err);
    /* again, as JSON: the same winner (the fake's times are the kernels'), the counts */
    char json_args[512];
    snprintf(json_args, sizeof json_args, "--json %s", args);
    ck_assert_int_eq(test_run_cli(&out, dir, env, json_args, errors), 0);
    char want[300];
    snprintf(want, sizeof want, "\"winner\": \"%.*s\"", (int)strcspn(winner, "\n"), winner);
    ck_assert_msg(strstr(out, want) && strstr(out, "\"candidates_pruned\": 0") &&
                      strstr(out, "\"candidates_timed\": 6") && strstr(out, "\"pruned\": false") &&
                      strstr(out, "\"rounds\": "),
                  "%s lacks %s", out, want);
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_tune_search(void)
{
    Suite *s = suite_create("tune_search");
    TCase *tc = tcase_create("tune_search");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, the_launch_rule_on_synthetic_facts);
    tcase_add_test(tc, candidates_that_cannot_launch_are_pruned_with_their_reason);
    tcase_add_test(tc, spilling_candidates_are_pruned_only_where_others_do_not_spill);
    tcase_add_test(tc, a_lower_bound_above_a_measured_time_prunes);
    tcase_add_test(tc, matmul_bound_counts_the_busiest_sms_tiles);
    tcase_add_test(tc, successive_halving_keeps_the_best_and_the_sweeps_winner);
    tcase_add_test(tc, five_noisy_tunings_pick_the_same_winner);
    tcase_add_test(tc, a_short_runs_first_launch_does_not_decide_the_first_cut);
    tcase_add_test(tc, records_keep_pruned_and_rounds);
    tcase_add_test(tc, cli_tune_runs_the_rounds_on_the_fake_driver);
    suite_add_tcase(s, tc);
    return s;
}

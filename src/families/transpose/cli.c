/* cli.c — the transpose family on the command line: `ptxjit run transpose` and `ptxjit bench
 * transpose` (fresh random data, bit-exact checks, CUDA-event medians, and the copy and cuBLAS
 * Sgeam measured in the same run; bandwidth counts bytes read + written), its rows of `ptxjit
 * bench backends` and its op in `ptxjit bench multigpu`. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/cublas_peer.h"
#include "cli/family_cli.h"
#include "cli/libcuda.h"
#include "cli/timing.h"
#include "families/transpose/op.h"
#include "request/plan.h"

typedef struct {
    ptxjit_context *context;
    const char *params;
    ptxjit_devptr in, out;
    size_t rows, cols;
    cublas_peer *cublas; /* set: time cuBLAS instead of ptxjit */
} transpose_job;

static ptxjit_status transpose_once(void *arg)
{
    transpose_job *job = arg;
    if (job->cublas)
        return cublas_peer_transpose_f32(job->cublas, job->out, job->in, job->rows, job->cols)
                   ? pj_error(PTXJIT_ERR_CUDA, "cublasSgeam failed")
                   : PTXJIT_OK;
    return ptxjit_transpose(job->context, job->params, job->in, job->out, job->rows, job->cols,
                            NULL);
}

/* Random data on the host and the device: any bits for `run` (a transpose moves bits), finite
 * floats in [-1, 1) for `bench`, where cuBLAS computes 1 * x + 0 * y and so would change NaN
 * payloads and flush subnormals. */
static ptxjit_status make_buffers(transpose_job *job, void **host, size_t bytes, int floats)
{
    *host = malloc(bytes + 4);
    if (!*host)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory",
                        bytes);
    if (floats)
        random_f32(*host, bytes / 4 + 1);
    else
        random_i32(*host, bytes / 4 + 1);
    ptxjit_status status = ptxjit_alloc(&job->in, job->context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job->out, job->context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(job->context, job->in, *host, bytes);
    return status;
}

/* 0xff bytes (NaN for floats), except for cuBLAS: Sgeam reads the output as its B operand,
 * and 0 * NaN is NaN, so it gets a finite poison. */
static ptxjit_status poison(transpose_job *job, size_t bytes)
{
    unsigned char value = job->cublas ? 0x3f : 0xff;
    return ptxjit_memset_d8_async(job->context, job->out, value, bytes, NULL);
}

static void free_buffers(transpose_job *job, void *host)
{
    free(host);
    if (job->in)
        ptxjit_free(job->context, job->in);
    if (job->out)
        ptxjit_free(job->context, job->out);
}

/* Every element (full) or 2^20 random ones plus the first and last output rows. */
static int check_output(const transpose_job *job, const char *in, int e, int full)
{
    size_t n = job->rows * job->cols;
    char *out = malloc(n * (size_t)e);
    int ok = out && ptxjit_copy_to_host(job->context, out, job->out, n * (size_t)e) == PTXJIT_OK;
    if (ok && full) {
        char *want = malloc(n * (size_t)e);
        pj_transpose_reference(want, in, job->rows, job->cols, e);
        ok = want && memcmp(out, want, n * (size_t)e) == 0;
        free(want);
    }
    uint64_t state = (uint64_t)(uintptr_t)out ^ n;
    for (size_t s = 0; ok && !full && s < (1u << 20) + 2 * job->rows; s++) {
        size_t r, c; /* output element (c, r) holds input (r, c) */
        if (s < 2 * job->rows) {
            r = s % job->rows;
            c = s < job->rows ? 0 : job->cols - 1;
        } else {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            r = (size_t)(state >> 33) % job->rows;
            c = (size_t)(state >> 11) % job->cols;
        }
        ok = memcmp(out + (c * job->rows + r) * (size_t)e, in + (r * job->cols + c) * (size_t)e,
                    (size_t)e) == 0;
        if (!ok)
            fprintf(stderr, "  mismatch: output (%zu, %zu) should hold input (%zu, %zu)\n", c, r,
                    r, c);
    }
    free(out);
    return ok;
}

static int transpose_run(ptxjit_context *context, const char *params, size_t rows, size_t cols,
                  int runs)
{
    /* The kernel the op launches for this problem (smem where the TMA cannot take the rows):
     * its dtype sizes the buffers and its params are printed. */
    const uint64_t sizes[] = {rows, cols};
    ptxjit_kernel *kernel;
    transpose_config config;
    ptxjit_status status =
        pj_plan_get_kernel(&kernel, NULL, context, &pj_family_transpose, params, sizes);
    if (status == PTXJIT_OK)
        status = pj_transpose_config_of(&config, kernel);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    const int e = pj_dtype_bytes(config.dtype);
    size_t bytes;
    if (__builtin_mul_overflow(rows, cols, &bytes) ||
        __builtin_mul_overflow(bytes, (size_t)e, &bytes) || bytes > SIZE_MAX / 2)
        return cli_fail(pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "transpose: %zu x %zu elements are "
                                 "more memory than exists; give smaller h= and w=",
                                 rows, cols));
    transpose_job job = {context, params, 0, 0, rows, cols, NULL};
    void *host = NULL;
    double ms = 0;
    status = make_buffers(&job, &host, bytes, 0);
    if (status == PTXJIT_OK)
        status = poison(&job, bytes);
    if (status == PTXJIT_OK)
        status = transpose_once(&job);
    int correct = status == PTXJIT_OK && check_output(&job, host, e, 1);
    if (status == PTXJIT_OK && runs > 0)
        status = time_median_ms(&ms, context, transpose_once, &job, 3, runs);
    if (status == PTXJIT_OK && runs > 0)
        correct = correct && check_output(&job, host, e, 0);
    free_buffers(&job, host);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    printf("transpose %s, %zu x %zu: %s; median of %d: %.4f ms, %.1f GB/s\n",
           ptxjit_kernel_params(kernel), rows, cols,
           correct ? "bit-exact" : "WRONG", runs, ms, 2.0 * bytes / (ms * 1e6));
    return correct ? CLI_OK : CLI_FAIL;
}

static const struct {
    const char *params;
    double writeup_gbps; /* the Mojo write-up's H100 figure for the step */
} progression[] = {
    /* The write-up's kernels walk the tiles row by row (group=1). */
    {"variant=smem block=32 batch=4 group=1", 0}, /* the classic padded 32 x 33 tile */
    {"variant=smem", 0},
    {"variant=tma block=32 group=1", 1056},
    {"variant=tma_swizzle block=32 swizzle=128B group=1", 1437},
    {"variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar inplace=0 group=1", 2775},
    {"variant=tma_batched", 0}, /* the defaults: the best tile measured */
};

static ptxjit_status bench_row(double *gbps, int *correct, transpose_job *job, const char *in,
                               int runs)
{
    double ms = 0;
    size_t bytes = job->rows * job->cols * 4;
    ptxjit_status status = poison(job, bytes);
    if (status == PTXJIT_OK)
        status = time_median_ms(&ms, job->context, transpose_once, job, 3, runs);
    *correct = status == PTXJIT_OK && check_output(job, in, 4, 0);
    *gbps = 2.0 * bytes / (ms * 1e6);
    return status;
}

static void print_row(const char *name, double gbps, double copy, double cublas, int correct,
                      double writeup)
{
    printf("%-64s %8.1f %7.1f%% %6.3f", name, gbps, 100 * gbps / copy, cublas ? gbps / cublas : 0);
    if (writeup > 0)
        printf(" %9.0f", writeup);
    else
        printf(" %9s", "");
    printf("  %s\n", correct ? "ok" : "WRONG");
    cli_chart_bar(name, gbps, writeup);
}

typedef struct {
    const char *const *sets; /* parameter sets to time instead of the sweep */
    int set_count;
    double best;
    char best_params[256];
} bench_plan;

static ptxjit_status time_set(bench_plan *plan, transpose_job *job, const char *in, int runs,
                              double copy, double cublas, int *all_ok, const char *params)
{
    ptxjit_kernel *kernel;
    transpose_config config;
    ptxjit_status status = ptxjit_get_kernel(&kernel, job->context, "transpose", params, NULL);
    if (status == PTXJIT_OK)
        status = pj_transpose_config_of(&config, kernel);
    if (status == PTXJIT_OK && config.dtype != PJ_DTYPE_f32)
        status = pj_error(PTXJIT_ERR_PARAM, "bench transpose measures fp32, not '%s'; time "
                          "other dtypes with 'ptxjit run transpose %s h=.. w=..'", params, params);
    job->params = params;
    double gbps;
    int correct;
    if (status == PTXJIT_OK)
        status = bench_row(&gbps, &correct, job, in, runs);
    if (status != PTXJIT_OK)
        return status;
    print_row(params, gbps, copy, cublas, correct, 0);
    *all_ok &= correct;
    if (gbps > plan->best) {
        plan->best = gbps;
        snprintf(plan->best_params, sizeof plan->best_params, "%s", params);
    }
    return PTXJIT_OK;
}

/* The built-in sweep (tile shapes, batches, raster orders around the best measured), or the
 * caller's parameter sets. */
static ptxjit_status sweep(bench_plan *plan, transpose_job *job, const char *in, int runs,
                           double copy, double cublas, int *all_ok)
{
    static const int groups[] = {1, 4096}; /* row by row, column by column */
    plan->best = 0;
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; i < plan->set_count && status == PTXJIT_OK; i++)
        status = time_set(plan, job, in, runs, copy, cublas, all_ok, plan->sets[i]);
    const char *const *bases = pj_family_transpose.bench_sets;
    for (size_t v = 0; !plan->set_count && bases[v]; v++)
        for (size_t g = 0; g < PJ_ARRAY_SIZE(groups) && status == PTXJIT_OK; g++) {
            char params[160];
            snprintf(params, sizeof params, "%s group=%d", bases[v], groups[g]);
            status = time_set(plan, job, in, runs, copy, cublas, all_ok, params);
        }
    if (status == PTXJIT_OK)
        printf("best found: %s: %.1f GB/s, %.1f%% of the copy, %.3f x cuBLAS\n",
               plan->best_params, plan->best, 100 * plan->best / copy,
               cublas ? plan->best / cublas : 0);
    return status;
}

static ptxjit_status bench_size(bench_plan *plan, ptxjit_context *context, size_t n, int runs,
                                double copy, cublas_peer *cublas, int *all_ok)
{
    transpose_job job = {context, NULL, 0, 0, n, n, NULL};
    void *host = NULL;
    ptxjit_status status = make_buffers(&job, &host, n * n * 4, 1);
    double peer = 0;
    int correct = 1;
    if (status == PTXJIT_OK && cublas) {
        job.cublas = cublas;
        status = bench_row(&peer, &correct, &job, host, runs);
        job.cublas = NULL;
        *all_ok &= correct;
    }
    if (status == PTXJIT_OK) {
        printf("\ntranspose fp32 %zu x %zu, read + write %.2f GB\n", n, n, n * n * 8e-9);
        printf("%-64s %8s %8s %6s %9s\n", "params", "GB/s", "% copy", "/cuBLAS", "write-up");
        char title[160];
        snprintf(title, sizeof title, "transpose fp32 %zu x %zu, %s (read + write / time)", n, n,
                 ptxjit_arch(context));
        cli_chart_table(title, "GB/s", NULL);
        cli_chart_reference("device-to-device copy", copy);
        cli_chart_reference("cuBLAS Sgeam", peer);
        if (cublas)
            print_row("cuBLAS Sgeam", peer, copy, peer, correct, 0);
    }
    for (size_t i = 0; i < PJ_ARRAY_SIZE(progression) && status == PTXJIT_OK; i++) {
        double gbps;
        job.params = progression[i].params;
        status = bench_row(&gbps, &correct, &job, host, runs);
        if (status == PTXJIT_OK)
            print_row(job.params, gbps, copy, peer, correct, progression[i].writeup_gbps);
        *all_ok &= correct;
    }
    if (status == PTXJIT_OK)
        status = sweep(plan, &job, host, runs, copy, peer, all_ok);
    free_buffers(&job, host);
    return status;
}

static int transpose_bench(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                    int set_count)
{
    char name[256] = "?";
    cli_cuda_device_name(name, sizeof name, context);
    const char *why = NULL;
    cublas_peer *cublas = cublas_peer_open(&why);
    double copy = 0;
    int all_ok = 1;
    bench_plan plan = {sets, set_count, 0, ""};
    ptxjit_status status = copy_bandwidth(&copy, context, runs);
    if (status == PTXJIT_OK) {
        printf("transpose, %s, %s, median of %d\n", name, ptxjit_arch(context), runs);
        printf("device-to-device copy, 2 GiB, read + write: %.1f GB/s\n", copy);
        if (!cublas)
            printf("cuBLAS not measured: %s\n", why);
    }
    /* n from the command line, else the write-up's two sizes. */
    size_t sizes[2] = {n ? n : 16384, 32768};
    for (int i = 0; i < (n ? 1 : 2) && status == PTXJIT_OK; i++)
        status = bench_size(&plan, context, sizes[i], runs, copy, cublas, &all_ok);
    cublas_peer_close(cublas);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    return all_ok ? CLI_OK : CLI_FAIL;
}

/* ---- bench backends ---- */

static ptxjit_status backends_op(cli_routes *job)
{
    const ptxjit_devptr *buffers = job->data; /* in, out, n */
    return ptxjit_transpose(job->context, job->params, buffers[0], buffers[1],
                            (size_t)buffers[2], (size_t)buffers[2], NULL);
}

/* Each variant the generator builds, f32 n x n with the template's default tiles. */
static int transpose_backends(ptxjit_context *context, size_t n, int runs)
{
    const char *variants = pj_family_transpose.llvm_variants;
    ptxjit_devptr buffers[3] = {0, 0, (ptxjit_devptr)n};
    cli_routes job = {.context = context, .op = backends_op, .data = buffers, .warmup = 3};
    size_t bytes = n * n * 4;
    ptxjit_status status = ptxjit_alloc(&buffers[0], context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&buffers[1], context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d32_async(context, buffers[0], 7, n * n, NULL);
    int code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    printf("transpose, %zu x %zu f32, %s, median of %d runs per route (A B B A), bytes read + "
           "written / time:\n\n", n, n, ptxjit_arch(context), runs);
    char title[160];
    snprintf(title, sizeof title, "transpose, %zu x %zu f32, %s: nvrtc against llvm", n, n,
             ptxjit_arch(context));
    cli_routes_head(title, "transpose parameters (others: defaults)");
    for (const char *s = variants; *s && code == CLI_OK;) {
        size_t length = strcspn(s, ",");
        char params[128];
        snprintf(params, sizeof params, "variant=%.*s dtype=f32", (int)length, s);
        code = cli_routes_row(&job, params, 2.0 * (double)bytes, runs);
        s += length + (s[length] == ',');
    }
    ptxjit_free(context, buffers[0]);
    ptxjit_free(context, buffers[1]);
    return code;
}

/* ---- bench multigpu ---- */

typedef struct {
    ptxjit_context *context;
    ptxjit_devptr input, output;
    size_t rows, cols;
} multigpu_state;

/* A rows x cols input of f32 ones and a NaN-poisoned output: every transposed element is then
 * 1.0f, so the check needs no copy of the input. */
static ptxjit_status multigpu_prepare(void **state, ptxjit_context *context, const char *params,
                                      const size_t *sizes, void *stream)
{
    (void)params;
    multigpu_state *s = calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *s = (multigpu_state){context, 0, 0, sizes[0], sizes[1]};
    size_t count = s->rows * s->cols;
    ptxjit_status status = ptxjit_alloc(&s->input, context, count * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&s->output, context, count * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d32_async(context, s->input, 0x3f800000u, count, stream);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d32_async(context, s->output, 0xffffffffu, count, stream);
    if (status == PTXJIT_OK)
        status = ptxjit_stream_synchronize(context, stream);
    return status;
}

static ptxjit_status multigpu_run(void *state, const char *params, void *stream)
{
    multigpu_state *s = state;
    return ptxjit_transpose(s->context, params, s->input, s->output, s->rows, s->cols, stream);
}

/* Every element 1.0f, read back a chunk at a time. */
static ptxjit_status multigpu_check(void *state, const char *named)
{
    multigpu_state *s = state;
    enum { CHUNK = 1 << 22 }; /* elements per copy */
    uint32_t *host = malloc(CHUNK * 4);
    ptxjit_status status = host ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "no memory");
    size_t total = s->rows * s->cols;
    for (size_t at = 0; status == PTXJIT_OK && at < total; at += CHUNK) {
        size_t n = total - at < CHUNK ? total - at : CHUNK;
        status = ptxjit_copy_to_host(s->context, host, s->output + at * 4, n * 4);
        for (size_t i = 0; status == PTXJIT_OK && i < n; i++)
            if (host[i] != 0x3f800000u)
                status = pj_error(PTXJIT_ERR_CUDA, "transpose %s: element %zu is 0x%08x, not "
                                  "1.0f", named, at + i, host[i]);
    }
    free(host);
    return status;
}

static double multigpu_bytes(const void *state)
{
    const multigpu_state *s = state;
    return (double)(s->rows * s->cols * 4) * 2;
}

static void multigpu_release(void *state)
{
    multigpu_state *s = state;
    ptxjit_free(s->context, s->input);
    ptxjit_free(s->context, s->output);
    free(s);
}

static const char *const multigpu_sizes[] = {"rows", "cols", NULL};
static const size_t multigpu_defaults[] = {16384, 16384};

static const cli_multigpu multigpu = {
    multigpu_sizes, multigpu_defaults, 1, multigpu_prepare, multigpu_run, multigpu_check,
    multigpu_bytes, multigpu_release,
};

/* ---- bench tune ---- */

/* A square of fp32, also the problem tuned from a cold cache and five times in a row. */
static const cli_tune_problem tune_problems[] = {
    {"rows=16384 cols=16384", "dtype=f32", 1, "16384^2 f32"}, {NULL, NULL, 0, NULL}};

/* ---- the family's entry ---- */

static int run_entry(ptxjit_context *context, const char *params, const size_t *sizes, int runs)
{
    return transpose_run(context, params, sizes[0], sizes[1], runs);
}

static const char *const *problem_words(void)
{
    return pj_family_transpose.tune->problem_names;
}

static const char *const sizes[] = {"h", "w", NULL};
static const size_t size_defaults[] = {16384, 16384};

const cli_family cli_family_transpose = {
    .name = "transpose",
    .sizes = sizes,
    .size_defaults = size_defaults,
    .problem_words = problem_words,
    .run = run_entry,
    .bench = transpose_bench,
    .bench_n = 0,
    .takes_sets = 1,
    .bench_backends = transpose_backends,
    .backends_n = 16384,
    .multigpu = &multigpu,
    .tune_problems = tune_problems,
    .help = "run h=H w=W (default 16384 x 16384; bit-exact check); bench: the progression and a\n"
            "             sweep at fp32 16384^2 and 32768^2 (or n^2), against the copy and cuBLAS Sgeam\n"
            "             multigpu: rows=R cols=C, f32 ones (default 16384^2; timed without FAMILY)",
};

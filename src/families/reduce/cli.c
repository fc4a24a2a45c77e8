/* cli.c — the reduce family on the command line: `ptxjit run reduce` and `ptxjit bench
 * reduce` (fresh random data, the CPU reference, CUDA-event medians, the device-to-device copy
 * measured in the same run), its rows of `ptxjit bench backends` and its op in `ptxjit bench
 * multigpu`. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/family_cli.h"
#include "cli/libcuda.h"
#include "cli/timing.h"
#include "families/reduce/op.h"
#include "request/plan.h"

typedef struct {
    ptxjit_context *context;
    const char *params;
    ptxjit_devptr input, result;
    size_t n;
} reduce_job;

static ptxjit_status reduce_once(void *arg)
{
    reduce_job *job = arg;
    return ptxjit_reduce_async(job->context, job->params, job->input, job->n, job->result, NULL);
}

/* Host data of n elements of dtype, on the device too. */
typedef struct {
    void *host;
    ptxjit_devptr device;
    size_t n;
    pj_dtype dtype;
} reduce_data;

static ptxjit_status data_make(reduce_data *data, ptxjit_context *context, size_t n,
                               pj_dtype dtype)
{
    data->n = n;
    data->dtype = dtype;
    data->host = malloc(n * 4);
    if (!data->host)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory",
                        n * 4);
    if (dtype == PJ_DTYPE_f32)
        random_f32(data->host, n);
    else
        random_i32(data->host, n);
    ptxjit_status status = ptxjit_alloc(&data->device, context, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, data->device, data->host, n * 4);
    return status;
}

static void data_free(reduce_data *data, ptxjit_context *context)
{
    free(data->host);
    if (data->device)
        ptxjit_free(context, data->device);
}

/* Compares the sum at job->result with the CPU reference; prints a line when verbose. */
static int check_result(ptxjit_context *context, const reduce_data *data, ptxjit_devptr result,
                        int verbose)
{
    uint32_t bits = 0;
    if (ptxjit_copy_to_host(context, &bits, result, 4) != PTXJIT_OK)
        return 0;
    if (data->dtype == PJ_DTYPE_i32) {
        uint32_t want = pj_reduce_reference_i32(data->host, data->n);
        if (verbose || bits != want)
            printf("  sum %" PRId32 ", CPU reference %" PRId32 ": %s\n", (int32_t)bits,
                   (int32_t)want, bits == want ? "exact" : "WRONG");
        return bits == want;
    }
    float got;
    memcpy(&got, &bits, 4);
    double magnitude, want = pj_reduce_reference_f32(data->host, data->n, &magnitude);
    int close = pj_reduce_f32_close(got, want, magnitude);
    if (verbose || !close)
        printf("  sum %.6g, CPU reference %.6g (|error| %.3g, bound %.3g): %s\n", got, want,
               got - want, 1e-5 * magnitude, close ? "ok" : "WRONG");
    return close;
}

/* Runs params on fresh data: check, time, check the timed result again. */
static ptxjit_status measure(double *ms, int *correct, ptxjit_context *context,
                             const char *params, reduce_data *data, size_t offset, int runs,
                             int verbose)
{
    reduce_job job = {context, params, data->device + offset * 4, 0, data->n - offset};
    ptxjit_status status = ptxjit_alloc(&job.result, context, 4);
    if (status != PTXJIT_OK)
        return status;
    reduce_data view = *data;
    view.host = (char *)data->host + offset * 4;
    view.n = data->n - offset;
    uint32_t poison = 0xdeadbeefu;
    status = ptxjit_copy_to_device(context, job.result, &poison, 4);
    if (status == PTXJIT_OK)
        status = reduce_once(&job);
    *correct = status == PTXJIT_OK && check_result(context, &view, job.result, verbose);
    if (status == PTXJIT_OK && runs > 0)
        status = time_median_ms(ms, context, reduce_once, &job, 3, runs);
    if (status == PTXJIT_OK && runs > 0)
        *correct = *correct && check_result(context, &view, job.result, 0);
    ptxjit_free(context, job.result);
    return status;
}

static int reduce_run(ptxjit_context *context, const char *params, size_t n, int runs)
{
    ptxjit_kernel *kernel;
    reduce_config config;
    const uint64_t sizes[] = {n};
    ptxjit_status status =
        pj_plan_get_kernel(&kernel, NULL, context, &pj_family_reduce, params, sizes);
    if (status == PTXJIT_OK)
        status = pj_reduce_config_of(&config, kernel);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    reduce_data data = {0};
    double ms = 0;
    int correct = 0;
    status = data_make(&data, context, n, config.dtype);
    printf("reduce %s, n = %zu, grid %" PRIu64 " x %d threads\n", ptxjit_kernel_params(kernel),
           n, pj_reduce_grid(&config, data.device, n), config.tpb);
    if (status == PTXJIT_OK)
        status = measure(&ms, &correct, context, params, &data, 0, runs, 1);
    data_free(&data, context);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    printf("  median of %d: %.4f ms, %.1f GB/s\n", runs, ms, n * 4.0 / (ms * 1e6));
    return correct ? CLI_OK : CLI_FAIL;
}

/* ---- bench ---- */

typedef struct {
    ptxjit_context *context;
    const char *params;
    ptxjit_devptr input, result;
    size_t n;
} bench_job;

static ptxjit_status bench_once(void *arg)
{
    bench_job *job = arg;
    return ptxjit_reduce_async(job->context, job->params, job->input, job->n, job->result, NULL);
}

/* Times params on the shared input and checks the timed result against want. */
static ptxjit_status bench_one(double *gbps, int *correct, bench_job *job, int runs,
                               uint32_t want)
{
    double ms = 0;
    uint32_t poison = 0xdeadbeefu, got = 0;
    ptxjit_status status = ptxjit_copy_to_device(job->context, job->result, &poison, 4);
    if (status == PTXJIT_OK)
        status = time_median_ms(&ms, job->context, bench_once, job, 3, runs);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_host(job->context, &got, job->result, 4);
    *correct = status == PTXJIT_OK && got == want;
    *gbps = job->n * 4.0 / (ms * 1e6);
    return status;
}

static const struct {
    const char *params;
    double writeup_gbps; /* the Mojo write-up's H100 figure for the same step */
} progression[] = {
    {"variant=two_pass tpb=512", 623},      {"variant=warp_shuffle tpb=512", 719},
    {"variant=one_pass tpb=512", 985},      {"variant=batched tpb=512 batch=8", 1882},
    {"variant=vectorized tpb=512 batch=8", 3134},
    {"variant=vectorized", 0}, /* the defaults */
};

static void print_row(const char *params, double gbps, double copy, int correct,
                      double writeup)
{
    printf("%-40s %8.1f %7.1f%%", params, gbps, 100.0 * gbps / copy);
    if (writeup > 0)
        printf(" %9.0f", writeup);
    else
        printf(" %9s", "");
    printf("  %s\n", correct ? "ok" : "WRONG");
    cli_chart_bar(params, gbps, writeup);
}

static ptxjit_status sweep(bench_job *job, int runs, uint32_t want, double copy, int *all_ok)
{
    double best = 0;
    char best_params[96] = "";
    printf("\nsweep of vectorized (tpb x batch):\n");
    cli_chart_table("reduce: sweep of vectorized (tpb x batch)", "GB/s", NULL);
    cli_chart_reference("device-to-device copy", copy);
    for (const char *const *set = pj_family_reduce.bench_sets; *set; set++) {
        job->params = *set;
        double gbps;
        int correct;
        ptxjit_status status = bench_one(&gbps, &correct, job, runs, want);
        if (status != PTXJIT_OK)
            return status;
        print_row(*set, gbps, copy, correct, 0);
        *all_ok &= correct;
        if (gbps > best) {
            best = gbps;
            snprintf(best_params, sizeof best_params, "%s", *set);
        }
    }
    printf("\nbest found: %s: %.1f GB/s, %.1f%% of the copy\n", best_params, best,
           100.0 * best / copy);
    return PTXJIT_OK;
}

static int reduce_bench(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                        int set_count)
{
    (void)sets, (void)set_count; /* the progression and the sweep: see takes_sets */
    char name[256] = "?";
    cli_cuda_device_name(name, sizeof name, context);
    int32_t *host = malloc(n * 4);
    if (!host) {
        fprintf(stderr, "ptxjit: cannot allocate %zu bytes of host memory\n", n * 4);
        return CLI_FAIL;
    }
    random_i32(host, n);
    uint32_t want = pj_reduce_reference_i32(host, n);
    bench_job job = {context, NULL, 0, 0, n};
    double copy = 0;
    int all_ok = 1;
    ptxjit_status status = copy_bandwidth(&copy, context, runs);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.input, context, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, job.input, host, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.result, context, 4);
    free(host);
    if (status == PTXJIT_OK) {
        printf("reduce, int32, n = %zu (%.2f GB read), %s, %s, median of %d\n", n, n * 4e-9,
               name, ptxjit_arch(context), runs);
        printf("device-to-device copy, 2 GiB, read + write: %.1f GB/s\n\n", copy);
        printf("%-40s %8s %8s %9s\n", "params", "GB/s", "% copy", "write-up");
        char title[320];
        snprintf(title, sizeof title, "reduce, int32, n = %zu, %s, %s: the write-up's steps", n,
                 name, ptxjit_arch(context));
        cli_chart_table(title, "GB/s", NULL);
        cli_chart_reference("device-to-device copy", copy);
    }
    for (size_t i = 0; i < PJ_ARRAY_SIZE(progression) && status == PTXJIT_OK; i++) {
        double gbps;
        int correct;
        job.params = progression[i].params;
        status = bench_one(&gbps, &correct, &job, runs, want);
        if (status == PTXJIT_OK)
            print_row(job.params, gbps, copy, correct, progression[i].writeup_gbps);
        all_ok &= correct;
    }
    if (status == PTXJIT_OK)
        status = sweep(&job, runs, want, copy, &all_ok);
    ptxjit_free(context, job.input);
    ptxjit_free(context, job.result);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    return all_ok ? CLI_OK : CLI_FAIL;
}

/* ---- bench backends ---- */

static ptxjit_status backends_op(cli_routes *job)
{
    const ptxjit_devptr *buffers = job->data; /* input, result */
    return ptxjit_reduce_async(job->context, job->params, buffers[0], (size_t)buffers[2],
                               buffers[1], NULL);
}

/* The steps and a few tiles, i32 then f32, through both routes on n ones. */
static int reduce_backends(ptxjit_context *context, size_t n, int runs)
{
    static const char *const configs[] = {
        "variant=two_pass",           "variant=warp_shuffle",
        "variant=one_pass",           "variant=batched batch=4",
        "variant=batched batch=8",    "variant=vectorized batch=4",
        "variant=vectorized batch=8", "variant=vectorized tpb=256 batch=8"};
    ptxjit_devptr buffers[3] = {0, 0, (ptxjit_devptr)n};
    cli_routes job = {.context = context, .op = backends_op, .data = buffers, .warmup = 3};
    ptxjit_status status = ptxjit_alloc(&buffers[0], context, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&buffers[1], context, 4);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d32_async(context, buffers[0], 1, n, NULL);
    int code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    printf("reduce, n = %zu, %s, median of %d runs per route (A B B A), bytes read / time:\n\n",
           n, ptxjit_arch(context), runs);
    char title[160];
    snprintf(title, sizeof title, "reduce, n = %zu, %s: nvrtc against llvm (bytes read / time)",
             n, ptxjit_arch(context));
    cli_routes_head(title, "reduce parameters");
    for (int d = 0; d < 2 && code == CLI_OK; d++)
        for (size_t c = 0; c < PJ_ARRAY_SIZE(configs) && code == CLI_OK; c++) {
            char params[128];
            snprintf(params, sizeof params, "%s dtype=%s", configs[c], d ? "f32" : "i32");
            code = cli_routes_row(&job, params, (double)n * 4, runs);
        }
    ptxjit_free(context, buffers[0]);
    ptxjit_free(context, buffers[1]);
    return code;
}

/* ---- bench multigpu ---- */

typedef struct {
    ptxjit_context *context;
    ptxjit_devptr input, result;
    size_t n;
} multigpu_state;

/* n int32 ones: their sum is n (mod 2^32), so the check needs no copy of the input. */
static ptxjit_status multigpu_prepare(void **state, ptxjit_context *context, const char *params,
                                      const size_t *sizes, void *stream)
{
    (void)params;
    multigpu_state *s = calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *s = (multigpu_state){context, 0, 0, sizes[0]};
    ptxjit_status status = ptxjit_alloc(&s->input, context, s->n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&s->result, context, 4);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d32_async(context, s->input, 1, s->n, stream);
    if (status == PTXJIT_OK)
        status = ptxjit_stream_synchronize(context, stream);
    return status;
}

static ptxjit_status multigpu_run(void *state, const char *params, void *stream)
{
    multigpu_state *s = state;
    return ptxjit_reduce_async(s->context, params, s->input, s->n, s->result, stream);
}

static ptxjit_status multigpu_check(void *state, const char *named)
{
    multigpu_state *s = state;
    uint32_t got = 0;
    ptxjit_status status = ptxjit_copy_to_host(s->context, &got, s->result, 4);
    if (status == PTXJIT_OK && got != (uint32_t)s->n)
        status = pj_error(PTXJIT_ERR_CUDA, "reduce %s: the sum of %zu ones is %u", named, s->n,
                          got);
    return status;
}

static double multigpu_bytes(const void *state)
{
    const multigpu_state *s = state;
    return (double)(s->n * 4);
}

static void multigpu_release(void *state)
{
    multigpu_state *s = state;
    ptxjit_free(s->context, s->input);
    ptxjit_free(s->context, s->result);
    free(s);
}

static const char *const multigpu_sizes[] = {"n", NULL};
static const size_t multigpu_defaults[] = {(size_t)1 << 28};

static const cli_multigpu multigpu = {
    multigpu_sizes, multigpu_defaults, 1, multigpu_prepare, multigpu_run, multigpu_check,
    multigpu_bytes, multigpu_release,
};

/* ---- bench jit, compile, tune ---- */

/* The write-up's last step: bench jit's request, and bench compile's for reduce. */
#define REFERENCE "variant=vectorized tpb=512 batch=8"

/* The sum of the buffer's first int32 into its bytes 32..35: one block, one element, so that
 * the kernel's work is nothing beside the launch whose cost is measured. */
static void jit_launch(cli_launch *out, ptxjit_devptr buffer)
{
    *out = (cli_launch){.grid = {1, 1, 1}, .block = {512, 1, 1}}; /* tpb=512 */
    out->values[0].pointer = buffer;
    out->values[1].pointer = buffer + 32;
    out->values[2].u64 = 1; /* n, an index_t of 64 bits */
    for (int i = 0; i < 3; i++)
        out->args[i] = &out->values[i];
}

/* The first use in a fresh process (jit-time --launch, --bare): the sum of 4096 int32 (1 to
 * 4096) into the word after them. The op zeroes that word, then launches REFERENCE's kernel
 * once: 4096 elements are 1024 vectors, one tile of 512 threads x 8, so one block. */
#define FIRST_N 4096

static void first_input(void *host)
{
    int32_t *values = host;
    for (int i = 0; i < FIRST_N; i++)
        values[i] = i + 1;
}

static ptxjit_status first_op(ptxjit_context *context, const char *params, ptxjit_devptr buffer)
{
    return ptxjit_reduce_async(context, params, buffer, FIRST_N, buffer + FIRST_N * 4, NULL);
}

static void first_launch(cli_launch *out, ptxjit_devptr buffer)
{
    *out = (cli_launch){.grid = {1, 1, 1}, .block = {512, 1, 1}}; /* tpb=512 */
    out->values[0].pointer = buffer;
    out->values[1].pointer = buffer + FIRST_N * 4;
    out->values[2].u64 = FIRST_N;
    for (int i = 0; i < 3; i++)
        out->args[i] = &out->values[i];
}

static int first_check(const void *result)
{
    uint32_t sum;
    memcpy(&sum, result, 4);
    return sum == (uint32_t)FIRST_N * (FIRST_N + 1) / 2;
}

static const cli_jit_first first = {
    .what = "reduce of 4096 int32",
    .bytes = FIRST_N * 4 + 16,
    .input_bytes = FIRST_N * 4,
    .input = first_input,
    .op = first_op,
    .zero_at = FIRST_N * 4,
    .zero_words = 1,
    .launch = first_launch,
    .result_at = FIRST_N * 4,
    .result_bytes = 4,
    .check = first_check,
};

static const cli_jit jit = {REFERENCE, 64, jit_launch, &first};

static const cli_compile_target compile_targets[] = {{"reduce", REFERENCE, 55}, {NULL, NULL, 0}};

static const cli_tune_problem tune_problems[] = {{"n=2^30", "dtype=i32", 0, NULL},
                                                 {NULL, NULL, 0, NULL}};

/* tpb 128..1024 by batch 1..8: 32 small kernels. */
static const cli_tune_pool tune_pool = {"n=1000000", "tpb=128..1024 batch=1..8"};

/* ---- the family's entry ---- */

static int run_entry(ptxjit_context *context, const char *params, const size_t *sizes, int runs)
{
    return reduce_run(context, params, sizes[0], runs);
}

static const char *const *problem_words(void)
{
    return pj_family_reduce.tune->problem_names;
}

static const char *const sizes[] = {"n", NULL};
static const size_t size_defaults[] = {(size_t)1 << 26};

const cli_family cli_family_reduce = {
    .name = "reduce",
    .sizes = sizes,
    .size_defaults = size_defaults,
    .problem_words = problem_words,
    .run = run_entry,
    .bench = reduce_bench,
    .bench_n = (size_t)1 << 30,
    .takes_sets = 0,
    .bench_backends = reduce_backends,
    .backends_n = (size_t)1 << 28,
    .multigpu = &multigpu,
    .jit = &jit,
    .compile_params = REFERENCE,
    .compile_targets = compile_targets,
    .tune_problems = tune_problems,
    .tune_pool = &tune_pool,
    .help = "run n=N (default 2^26); bench: the write-up's five steps and a tpb x batch sweep\n"
            "             at n = 2^30 int32 (or n), against the device-to-device copy\n"
            "             multigpu: n=N, int32 ones (default 2^28; timed without FAMILY)",
};

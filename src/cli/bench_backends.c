/* bench_backends.c — `ptxjit bench backends reduce|transpose|matmul`: each variant the llvm
 * backend generates, run through the family op with backend=nvrtc and backend=llvm in one
 * process, GB/s (GFLOP/s for matmul) of each and their ratio. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/llvm.h"
#include "cli/cli.h"
#include "cli/timing.h"
#include "context.h"
#include "ops/matmul.h"

static int read_count(size_t *out, const char *text, const char *name, size_t fallback)
{
    if (!text) {
        *out = fallback;
        return 1;
    }
    char *end;
    unsigned long long value = strtoull(text, &end, 0);
    if (end[0] == '^' && value == 2) { /* 2^28 */
        unsigned long long power = strtoull(end + 1, &end, 10);
        value = power < 48 ? 1ull << power : 0;
    }
    if (*end || value == 0) {
        fprintf(stderr, "ptxjit: %s=%s is not a positive count (e.g. %s=2^28)\n", name, text,
                name);
        return 0;
    }
    *out = (size_t)value;
    return 1;
}

typedef enum { BENCH_REDUCE, BENCH_TRANSPOSE, BENCH_MATMUL } bench_family;

typedef struct {
    ptxjit_context *context;
    bench_family family;
    char params[160];
    ptxjit_devptr in, out; /* matmul: A, C */
    ptxjit_devptr b;       /* matmul: B */
    size_t n, rows, cols;  /* matmul: n x n x n */
    int warmup;
} bench_job;

static ptxjit_status run_once(void *arg)
{
    bench_job *job = arg;
    switch (job->family) {
    case BENCH_TRANSPOSE:
        return ptxjit_transpose(job->context, job->params, job->in, job->out, job->rows,
                                job->cols, NULL);
    case BENCH_MATMUL:
        return ptxjit_matmul(job->context, job->params, job->in, job->b, job->out, job->n, job->n,
                             job->n, NULL);
    default:
        return ptxjit_reduce_async(job->context, job->params, job->in, job->n, job->out, NULL);
    }
}

/* Median ms of params on backend; the two routes alternate A B B A so that neither gains
 * from the clock or the cache state the other left. */
static ptxjit_status time_pair(double ms[2], bench_job *job, const char *params, int runs)
{
    static const char *const routes[4] = {"nvrtc", "llvm", "llvm", "nvrtc"};
    double sums[2] = {0, 0};
    for (int i = 0; i < 4; i++) {
        double one = 0;
        snprintf(job->params, sizeof job->params, "%s backend=%s", params, routes[i]);
        ptxjit_status status = time_median_ms(&one, job->context, run_once, job, job->warmup,
                                              runs);
        if (status != PTXJIT_OK)
            return status;
        sums[i == 1 || i == 2] += one / 2;
    }
    ms[0] = sums[0];
    ms[1] = sums[1];
    return PTXJIT_OK;
}

static int print_row(bench_job *job, const char *params, double bytes, int runs)
{
    double ms[2];
    ptxjit_status status = time_pair(ms, job, params, runs);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    double nvrtc = bytes / (ms[0] * 1e6), llvm = bytes / (ms[1] * 1e6);
    printf("| %-44s | %9.1f | %9.1f | %6.3f |\n", params, nvrtc, llvm, llvm / nvrtc);
    fflush(stdout);
    return CLI_OK;
}

static void table_head(const char *what)
{
    printf("| %-44s | nvrtc GB/s | llvm GB/s | llvm/nvrtc |\n", what);
    printf("|----------------------------------------------|-----------:|----------:|-----------:|\n");
}

/* ---- matmul ---- */

/* n x n matrices of type with random values in [-1, 1) at a fresh device allocation. */
static ptxjit_status random_matrix(ptxjit_devptr *out, ptxjit_context *context, size_t n,
                                   pj_dtype type)
{
    const size_t count = n * n, bytes = count * (size_t)pj_dtype_bytes(type);
    float *values = malloc(count * sizeof *values);
    void *converted = malloc(bytes);
    ptxjit_status status = values && converted ? ptxjit_alloc(out, context, bytes)
                                               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "no memory");
    if (status == PTXJIT_OK) {
        random_f32(values, count);
        for (size_t i = 0; i < count; i++)
            pj_matmul_set_element(converted, type, i, values[i]);
        status = ptxjit_copy_to_device(context, *out, converted, bytes);
    }
    free(values);
    free(converted);
    return status;
}

/* C of one run of params on backend, on the host. */
static ptxjit_status matmul_result(void *host, bench_job *job, const char *params,
                                   const char *backend, size_t bytes)
{
    snprintf(job->params, sizeof job->params, "%s backend=%s", params, backend);
    ptxjit_status status = run_once(job);
    return status == PTXJIT_OK ? ptxjit_copy_to_host(job->context, host, job->out, bytes) : status;
}

/* ‖C_llvm − C_nvrtc‖ / ‖C_nvrtc‖ (Frobenius) of one run each: the routes' results agree to
 * the rounding of their summation orders. */
static ptxjit_status route_difference(double *out, bench_job *job, const char *params,
                                      pj_dtype type)
{
    const size_t count = job->n * job->n, bytes = count * (size_t)pj_dtype_bytes(type);
    void *ours = malloc(bytes), *theirs = malloc(bytes);
    ptxjit_status status = ours && theirs ? matmul_result(ours, job, params, "llvm", bytes)
                                          : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "no memory");
    if (status == PTXJIT_OK)
        status = matmul_result(theirs, job, params, "nvrtc", bytes);
    double diff = 0, norm = 0;
    for (size_t i = 0; i < count && status == PTXJIT_OK; i++) {
        double a = pj_matmul_element(ours, type, i), b = pj_matmul_element(theirs, type, i);
        diff += (a - b) * (a - b);
        norm += b * b;
    }
    *out = sqrt(diff / (norm > 0 ? norm : 1));
    free(ours);
    free(theirs);
    return status;
}

/* One table row: GFLOP/s of each route, their ratio and the difference of their results. The
 * slow steps (naive takes about a second at 4096³) get fewer runs: about 2 s of each route. */
static int matmul_row(bench_job *job, const char *params, pj_dtype type, int runs)
{
    double difference = 0, ms[2];
    ptxjit_status status = route_difference(&difference, job, params, type); /* compiles both */
    double start = wall_ms();
    if (status == PTXJIT_OK)
        status = run_once(job);
    if (status == PTXJIT_OK)
        status = ptxjit_synchronize(job->context);
    double once = wall_ms() - start;
    int fewer = once * runs > 2000 ? (int)(2000 / once) : runs;
    job->warmup = 1;
    if (status == PTXJIT_OK)
        status = time_pair(ms, job, params, fewer < 3 ? 3 : fewer);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    double flops = 2.0 * (double)job->n * (double)job->n * (double)job->n;
    double nvrtc = flops / (ms[0] * 1e6), llvm = flops / (ms[1] * 1e6);
    printf("| %-40s | %12.1f | %11.1f | %10.3f | %16.1e |\n", params, nvrtc, llvm,
           llvm / nvrtc, difference);
    fflush(stdout);
    return CLI_OK;
}

/* Rows beside a variant's defaults: its other ways of loading (the variant's name, then the
 * parameters of the extra row). */
static const char *const matmul_extra_rows[][2] = {
    {"tensor_core", "load=cp_async"}, /* the write-up's step (sm_90's default is load=tma) */
    {"wgmma", "cluster=2"},      /* clusters of 2 blocks sharing B by multicast */
};

static int bench_matmul_type(ptxjit_context *context, size_t n, int runs, pj_dtype type,
                             const char *variants)
{
    bench_job job = {.context = context, .family = BENCH_MATMUL, .n = n};
    ptxjit_status status = random_matrix(&job.in, context, n, type);
    if (status == PTXJIT_OK)
        status = random_matrix(&job.b, context, n, type);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.out, context, n * n * (size_t)pj_dtype_bytes(type));
    int code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    for (const char *s = variants; *s && code == CLI_OK;) {
        size_t length = strcspn(s, ",");
        int wgmma = length == 5 && strncmp(s, "wgmma", 5) == 0;
        if (wgmma == (type != PJ_DTYPE_f32)) {
            char params[128];
            snprintf(params, sizeof params, "variant=%.*s dtype=%s", (int)length, s,
                     pj_dtype_name(type));
            code = matmul_row(&job, params, type, runs); /* C of the input type */
            for (size_t i = 0; i < PJ_ARRAY_SIZE(matmul_extra_rows) && code == CLI_OK; i++) {
                const char *variant = matmul_extra_rows[i][0];
                if (strlen(variant) != length || strncmp(s, variant, length) != 0 ||
                    (strcmp(variant, "tensor_core") == 0 && atoi(ptxjit_arch(context) + 3) < 90))
                    continue;
                snprintf(params, sizeof params, "variant=%s %s dtype=%s", variant,
                         matmul_extra_rows[i][1], pj_dtype_name(type));
                code = matmul_row(&job, params, type, runs);
            }
        }
        s += length + (s[length] == ',');
    }
    ptxjit_free(context, job.in);
    ptxjit_free(context, job.b);
    ptxjit_free(context, job.out);
    return code;
}

/* The SIMT variants and tensor_core (its default, and load=cp_async too on sm_90) on fp32, then
 * wgmma (cluster=1 and 2) on bf16 (C bf16), each n³ with the template's default tiles, on
 * random inputs in [-1, 1). */
static int bench_matmul(ptxjit_context *context, size_t n, int runs)
{
    const char *variants = pj_llvm_generator_variants("matmul");
    if (!variants) {
        fprintf(stderr, "ptxjit: the llvm backend generates no matmul kernels yet\n");
        return CLI_FAIL;
    }
    printf("matmul, %zu x %zu x %zu, %s, median of up to %d runs per route (A B B A; about 2 s "
           "for slow variants), 2 n^3 / time; last column: ||C_llvm - C_nvrtc|| / ||C_nvrtc||:\n\n",
           n, n, n, ptxjit_arch(context), runs);
    printf("| %-40s | nvrtc GFLOP/s | llvm GFLOP/s | llvm/nvrtc | llvm vs nvrtc C |\n",
           "matmul parameters (others: defaults)");
    printf("|------------------------------------------|--------------:|-------------:|"
           "-----------:|-----------------:|\n");
    int code = bench_matmul_type(context, n, runs, PJ_DTYPE_f32, variants);
    if (code == CLI_OK && strstr(variants, "wgmma"))
        code = bench_matmul_type(context, n, runs, PJ_DTYPE_bf16, variants);
    return code;
}

static int bench_reduce(ptxjit_context *context, size_t n, int runs)
{
    static const char *const configs[] = {
        "variant=two_pass",           "variant=warp_shuffle",
        "variant=one_pass",           "variant=batched batch=4",
        "variant=batched batch=8",    "variant=vectorized batch=4",
        "variant=vectorized batch=8", "variant=vectorized tpb=256 batch=8"};
    bench_job job = {.context = context, .family = BENCH_REDUCE, .n = n, .warmup = 3};
    ptxjit_status status = ptxjit_alloc(&job.in, context, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.out, context, 4);
    if (status == PTXJIT_OK)
        status = PJ_CU(context->driver->cuMemsetD32Async(job.in, 1, n, NULL), "cuMemsetD32Async");
    int code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    printf("reduce, n = %zu, %s, median of %d runs per route (A B B A), bytes read / time:\n\n",
           n, ptxjit_arch(context), runs);
    table_head("reduce parameters");
    for (int d = 0; d < 2 && code == CLI_OK; d++)
        for (size_t c = 0; c < PJ_ARRAY_SIZE(configs) && code == CLI_OK; c++) {
            char params[128];
            snprintf(params, sizeof params, "%s dtype=%s", configs[c], d ? "f32" : "i32");
            code = print_row(&job, params, (double)n * 4, runs);
        }
    ptxjit_free(context, job.in);
    ptxjit_free(context, job.out);
    return code;
}

static int bench_transpose(ptxjit_context *context, size_t n, int runs)
{
    const char *variants = pj_llvm_generator_variants("transpose");
    if (!variants) {
        fprintf(stderr, "ptxjit: the llvm backend generates no transpose kernels yet\n");
        return CLI_FAIL;
    }
    bench_job job = {.context = context, .family = BENCH_TRANSPOSE, .rows = n, .cols = n,
                     .warmup = 3};
    size_t bytes = n * n * 4;
    ptxjit_status status = ptxjit_alloc(&job.in, context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.out, context, bytes);
    if (status == PTXJIT_OK)
        status = PJ_CU(context->driver->cuMemsetD32Async(job.in, 7, n * n, NULL),
                       "cuMemsetD32Async");
    int code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    printf("transpose, %zu x %zu f32, %s, median of %d runs per route (A B B A), bytes read + "
           "written / time:\n\n", n, n, ptxjit_arch(context), runs);
    table_head("transpose parameters (others: defaults)");
    for (const char *s = variants; *s && code == CLI_OK;) {
        size_t length = strcspn(s, ",");
        char params[128];
        snprintf(params, sizeof params, "variant=%.*s dtype=f32", (int)length, s);
        code = print_row(&job, params, 2.0 * (double)bytes, runs);
        s += length + (s[length] == ',');
    }
    ptxjit_free(context, job.in);
    ptxjit_free(context, job.out);
    return code;
}

int cmd_bench_backends(cli_args *args)
{
    const char *family = args->argc >= 2 ? args->argv[1] : "";
    int transpose = strcmp(family, "transpose") == 0, matmul = strcmp(family, "matmul") == 0;
    if (!transpose && !matmul && strcmp(family, "reduce") != 0) {
        fprintf(stderr, "ptxjit: usage: ptxjit bench backends reduce|transpose|matmul [n=N] "
                        "[runs=R]\n");
        return CLI_USAGE;
    }
    static const char *const own[] = {"n", "runs", NULL};
    const char *values[2] = {NULL, NULL};
    char *rest = cli_join_params(args->argc - 2, args->argv + 2, own, values);
    size_t n, runs;
    size_t default_n = transpose ? 16384 : matmul ? 4096 : (size_t)1 << 28;
    int ok = rest && !*rest && read_count(&n, values[0], "n", default_n) &&
             read_count(&runs, values[1], "runs", 20);
    if (rest && *rest)
        fprintf(stderr, "ptxjit: bench backends takes only n= and runs=, not '%s'\n", rest);
    free(rest);
    if (!ok)
        return CLI_USAGE;
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (ptxjit_gpu_status(context) != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: this command needs a GPU: %s\n", ptxjit_last_error());
        ptxjit_close(context);
        return CLI_FAIL;
    }
    code = transpose ? bench_transpose(context, n, (int)runs)
           : matmul  ? bench_matmul(context, n, (int)runs)
                     : bench_reduce(context, n, (int)runs);
    ptxjit_close(context);
    return code;
}

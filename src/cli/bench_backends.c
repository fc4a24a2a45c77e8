/* bench_backends.c — `ptxjit bench backends reduce|transpose`: each variant the llvm backend
 * generates, run through the family op with backend=nvrtc and backend=llvm in one process,
 * GB/s of each and their ratio; and `ptxjit bench compile`: cold compiles of both routes,
 * request → cubin, with each stage's time. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/llvm.h"
#include "cli/cli.h"
#include "cli/timing.h"
#include "context.h"

#define COMPILE_SAMPLES 10
#define COMPILE_PARAMS "variant=vectorized tpb=512 batch=8"

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

typedef struct {
    ptxjit_context *context;
    char params[160];
    ptxjit_devptr in, out;
    size_t n, rows, cols;
    int transpose;
} bench_job;

static ptxjit_status run_once(void *arg)
{
    bench_job *job = arg;
    if (job->transpose)
        return ptxjit_transpose(job->context, job->params, job->in, job->out, job->rows,
                                job->cols, NULL);
    return ptxjit_reduce_async(job->context, job->params, job->in, job->n, job->out, NULL);
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
        ptxjit_status status = time_median_ms(&one, job->context, run_once, job, 3, runs);
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

static int bench_reduce(ptxjit_context *context, size_t n, int runs)
{
    static const char *const configs[] = {
        "variant=two_pass",           "variant=warp_shuffle",
        "variant=one_pass",           "variant=batched batch=4",
        "variant=batched batch=8",    "variant=vectorized batch=4",
        "variant=vectorized batch=8", "variant=vectorized tpb=256 batch=8"};
    bench_job job = {.context = context, .n = n};
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
    const char *variants = llvm_generator_variants("transpose");
    if (!variants) {
        fprintf(stderr, "ptxjit: the llvm backend generates no transpose kernels yet\n");
        return CLI_FAIL;
    }
    bench_job job = {.context = context, .rows = n, .cols = n, .transpose = 1};
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
    int transpose = strcmp(family, "transpose") == 0;
    if (!transpose && strcmp(family, "reduce") != 0) {
        fprintf(stderr, "ptxjit: usage: ptxjit bench backends reduce|transpose [n=N] [runs=R]\n");
        return CLI_USAGE;
    }
    static const char *const own[] = {"n", "runs", NULL};
    const char *values[2] = {NULL, NULL};
    char *rest = cli_join_params(args->argc - 2, args->argv + 2, own, values);
    size_t n, runs;
    int ok = rest && !*rest && read_count(&n, values[0], "n", transpose ? 16384 : (size_t)1 << 28) &&
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
    code = transpose ? bench_transpose(context, n, (int)runs) : bench_reduce(context, n, (int)runs);
    ptxjit_close(context);
    return code;
}

/* One cold compile: a fresh context without a disk cache, so nothing can be a hit. */
static ptxjit_status cold_compile(pj_stages *stages, double *total_ms, const cli_args *args,
                                  const char *family, const char *params)
{
    ptxjit_options options = args->options;
    options.disk_cache = 0;
    options.use_gpu = 0;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ptxjit_status status = ptxjit_open(&context, &options);
    if (status != PTXJIT_OK)
        return status;
    double start = wall_ms();
    status = ptxjit_get_kernel(&kernel, context, family, params, &origin);
    *total_ms = wall_ms() - start;
    if (status == PTXJIT_OK && origin != PTXJIT_ORIGIN_COMPILED)
        status = pj_error(PTXJIT_ERR_CACHE, "a cold compile was served from a cache");
    if (status == PTXJIT_OK)
        *stages = kernel->stages;
    ptxjit_close(context);
    return status;
}

typedef struct {
    double total[COMPILE_SAMPLES], generate[COMPILE_SAMPLES], optimize[COMPILE_SAMPLES],
        emit[COMPILE_SAMPLES], compile[COMPILE_SAMPLES];
    double first_ms; /* the first request in the process: libraries loaded then */
} route_times;

static ptxjit_status time_route(route_times *t, const cli_args *args, const char *family,
                                const char *params)
{
    pj_stages s;
    ptxjit_status status = cold_compile(&s, &t->first_ms, args, family, params);
    for (int i = 0; i < COMPILE_SAMPLES && status == PTXJIT_OK; i++) {
        status = cold_compile(&s, &t->total[i], args, family, params);
        t->generate[i] = s.generate_ms;
        t->optimize[i] = s.optimize_ms;
        t->emit[i] = s.emit_ms;
        t->compile[i] = s.compile_ms;
    }
    return status;
}

int cmd_bench_compile(cli_args *args)
{
    const char *family = args->argc >= 2 ? args->argv[1] : "reduce";
    char *given = cli_join_params(args->argc - 2 > 0 ? args->argc - 2 : 0, args->argv + 2, NULL,
                                  NULL);
    const char *params = given && *given ? given : COMPILE_PARAMS;
    char nvrtc_params[256], llvm_params[256];
    snprintf(nvrtc_params, sizeof nvrtc_params, "%s backend=nvrtc", params);
    snprintf(llvm_params, sizeof llvm_params, "%s backend=llvm", params);
    route_times nvrtc, llvm;
    ptxjit_status status = time_route(&nvrtc, args, family, nvrtc_params);
    if (status == PTXJIT_OK)
        status = time_route(&llvm, args, family, llvm_params);
    if (status != PTXJIT_OK) {
        free(given);
        return cli_fail(status);
    }
    printf("cold compile, request -> cubin, %s %s, median of %d in one process (each in a fresh "
           "context without disk cache), ms:\n\n", family, params, COMPILE_SAMPLES);
    printf("| route | generate | optimize | PTX emit | compile | total | first in process |\n");
    printf("|-------|---------:|---------:|---------:|--------:|------:|-----------------:|\n");
    printf("| nvrtc (prelude; NVRTC -> PTX + cubin) | %.2f | - | - | %.2f | %.2f | %.1f |\n",
           median_of(nvrtc.generate, COMPILE_SAMPLES), median_of(nvrtc.compile, COMPILE_SAMPLES),
           median_of(nvrtc.total, COMPILE_SAMPLES), nvrtc.first_ms);
    printf("| llvm (IR build; O3; NVPTX; nvJitLink) | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n",
           median_of(llvm.generate, COMPILE_SAMPLES), median_of(llvm.optimize, COMPILE_SAMPLES),
           median_of(llvm.emit, COMPILE_SAMPLES), median_of(llvm.compile, COMPILE_SAMPLES),
           median_of(llvm.total, COMPILE_SAMPLES), llvm.first_ms);
    double ratio = median_of(llvm.total, COMPILE_SAMPLES) / median_of(nvrtc.total, COMPILE_SAMPLES);
    printf("\nllvm / nvrtc total: %.3f\n", ratio);
    free(given);
    return CLI_OK;
}

/* cli.c — the matmul family on the command line: `ptxjit run matmul` (with a layout:
 * cli_layout.c) and `ptxjit bench matmul` (fresh random inputs, poisoned outputs, a float64
 * CPU reference on sampled rows (all rows for small products), CUDA-event medians, and cuBLAS
 * (SGEMM, TF32, GemmEx bf16/f16) measured in the same run; `shapes=MxNxK,BxMxNxK,...`: the
 * given shapes and strided batches, each set against the cuBLAS call of its input type and B
 * layout: cli_shapes.c), its rows of `ptxjit bench backends` and its op in `ptxjit bench
 * multigpu`. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/cublas_peer.h"
#include "cli/family_cli.h"
#include "cli/libcuda.h"
#include "cli/timing.h"
#include "families/matmul/fit.h"
#include "families/matmul/cli_layout.h"
#include "families/matmul/cli_product.h"
#include "families/matmul/cli_shapes.h"
#include "families/matmul/op.h"

static int matmul_run(ptxjit_context *context, const char *params, size_t m, size_t n, size_t k,
               int runs)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    /* the kernel the op takes for this shape, for its params */
    ptxjit_status status = pj_matmul_fit(&kernel, &config, NULL, context, params, m, n, k);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    matmul_data data;
    matmul_job job = {.data = &data, .params = params, .b_nk = config.b_nk, .config = &config};
    measurement result = {0};
    double tolerance = cli_matmul_tolerance(&config);
    status = cli_matmul_data_make(&data, context, m, n, k, config.dtype);
    if (status == PTXJIT_OK)
        status = cli_matmul_measure(&result, &job, config.out, tolerance, runs);
    cli_matmul_data_free(&data);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    printf("matmul %s, %zu x %zu x %zu: relative error %.2e (tolerance %.0e) %s; median of "
           "%d: %.4f ms, %.1f GFLOP/s\n",
           ptxjit_kernel_params(kernel), m, n, k, result.error, tolerance,
           result.correct ? "ok" : "WRONG", runs, result.ms, result.tflops * 1e3);
    return result.correct ? CLI_OK : CLI_FAIL;
}

static const struct {
    const char *params;
    double writeup; /* the write-up's A100 GFLOP/s at 4096³ (0: none) */
} progression[] = {
    {"variant=naive", 292},
    {"variant=coalescing", 2936},
    {"variant=tiled", 3943},
    {"variant=tiled_register", 7078},
    {"variant=block_tiled", 10661},
    {"variant=block_tiled_vectorized", 10663},
    {"variant=tensor_core load=cp_async", 0},
    /* Beyond the write-up's step on sm_90 (and its default there): whole tiles by TMA,
     * mbarriers, 64 x 64 warp tiles. */
    {"variant=tensor_core load=tma", 0},
};

/* cuBLAS's row: the peer the next rows are a ratio of (0 when cuBLAS is missing). */
static ptxjit_status peer_job_row(double *tflops, matmul_job job, const char *name,
                                  pj_dtype out, double tolerance, int runs, int *all_ok)
{
    *tflops = 0;
    if (!job.cublas)
        return PTXJIT_OK;
    measurement r;
    ptxjit_status status = cli_matmul_measure(&r, &job, out, tolerance, runs);
    if (status == PTXJIT_OK) {
        cli_matmul_print_row(name, &r, r.tflops, 0);
        *tflops = r.tflops;
        *all_ok &= r.correct;
    }
    return status;
}

static ptxjit_status peer_row(double *tflops, matmul_data *d, cublas_peer *cublas,
                              cublas_gemm kind, int b_nk, const char *name, pj_dtype out,
                              double tolerance, int runs, int *all_ok)
{
    matmul_job job = {.data = d, .cublas = cublas, .kind = kind, .b_nk = b_nk};
    return peer_job_row(tflops, job, name, out, tolerance, runs, all_ok);
}

static ptxjit_status our_row(measurement *r, matmul_data *d, const char *params, double peer,
                             double writeup, int runs, int *all_ok)
{
    matmul_config config;
    const pj_matmul_fit_tile *fitted = NULL;
    ptxjit_status status = cli_matmul_config_for(&config, &fitted, d, params);
    matmul_job job = {.data = d, .params = params, .b_nk = config.b_nk, .config = &config};
    if (status == PTXJIT_OK)
        status = cli_matmul_measure(r, &job, config.out, cli_matmul_tolerance(&config), runs);
    if (status == PTXJIT_OK) {
        char label[160];
        snprintf(label, sizeof label, "%s%s%s", params, fitted ? " + " : "",
                 fitted ? fitted->words : "");
        cli_matmul_print_row(label, r, peer, writeup);
        *all_ok &= r->correct;
    }
    return status;
}

static void print_header(const char *title, size_t m, size_t n, size_t k)
{
    printf("\n%s, %zu x %zu x %zu\n", title, m, n, k);
    char chart_title[200];
    snprintf(chart_title, sizeof chart_title, "%s, %zu x %zu x %zu", title, m, n, k);
    cli_chart_table(chart_title, "GFLOP/s", NULL);
    printf("%-58s %10s %8s %9s %-5s %9s\n", "params", "GFLOP/s", "/cuBLAS", "rel.err", "",
           "write-up");
}

/* The input type and B layout of a parameter set, and whether it uses tensor cores (f32, SIMT
 * for one that does not compile: its row then says why). */
static void set_kind(pj_dtype *type, int *b_nk, int *tensor, ptxjit_context *context,
                     const char *params)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    *type = PJ_DTYPE_f32;
    *b_nk = *tensor = 0;
    if (ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK &&
        pj_matmul_config_of(&config, kernel) == PTXJIT_OK) {
        *type = config.dtype;
        *b_nk = config.b_nk;
        *tensor = config.variant >= MATMUL_TENSOR_CORE;
    }
}

/* The write-up's table at n³ fp32: each SIMT step against cuBLAS SGEMM, tensor_core against
 * cuBLAS TF32 (wgmma_tf32, which reads B as its transpose, against cuBLAS TF32 given the same
 * layout). */
static ptxjit_status fp32_table(ptxjit_context *context, cublas_peer *cublas, size_t n, int runs,
                                const char *const *sets, int set_count, int *all_ok)
{
    matmul_data d;
    ptxjit_status status = cli_matmul_data_make(&d, context, n, n, n, PJ_DTYPE_f32);
    double sgemm = 0, tf32 = 0, tf32_nk = -1;
    if (status == PTXJIT_OK) {
        print_header("matmul fp32 (write-up's A100 figures at 4096³)", n, n, n);
        status = peer_row(&sgemm, &d, cublas, CUBLAS_SGEMM, 0, "cuBLAS SGEMM (fp32)",
                          PJ_DTYPE_f32, 1e-5, runs, all_ok);
    }
    if (status == PTXJIT_OK)
        status = peer_row(&tf32, &d, cublas, CUBLAS_SGEMM_TF32, 0,
                          "cuBLAS SGEMM TF32 tensor cores", PJ_DTYPE_f32, 1e-3, runs, all_ok);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(progression) && status == PTXJIT_OK && !set_count; i++) {
        measurement r;
        if (strstr(progression[i].params, "load=tma") && atoi(ptxjit_arch(context) + 3) < 90)
            continue; /* TMA is sm_90's */
        int tensor = strstr(progression[i].params, "tensor_core") != NULL;
        status = our_row(&r, &d, progression[i].params, tensor ? tf32 : sgemm,
                         progression[i].writeup, runs, all_ok);
    }
    for (int i = 0; i < set_count && status == PTXJIT_OK; i++) {
        measurement r;
        pj_dtype type;
        int b_nk, tensor;
        set_kind(&type, &b_nk, &tensor, context, sets[i]);
        if (type != PJ_DTYPE_f32)
            continue; /* the bf16 table's, or fp8's */
        if (b_nk && tf32_nk < 0)
            status = peer_row(&tf32_nk, &d, cublas, CUBLAS_SGEMM_TF32, 1,
                              "cuBLAS SGEMM TF32, B transposed (TN)", PJ_DTYPE_f32, 1e-3, runs,
                              all_ok);
        if (status == PTXJIT_OK)
            status = our_row(&r, &d, sets[i], b_nk ? tf32_nk : tensor ? tf32 : sgemm, 0, runs,
                             all_ok);
    }
    cli_matmul_data_free(&d);
    return status;
}

/* wgmma at n³ bf16 against cuBLAS GemmEx (bf16 in and out, fp32 accumulation). */
static ptxjit_status bf16_table(ptxjit_context *context, cublas_peer *cublas, size_t n, int runs,
                                const char *const *sets, int set_count, int *all_ok)
{
    matmul_data d;
    ptxjit_status status = cli_matmul_data_make(&d, context, n, n, n, PJ_DTYPE_bf16);
    double peer = 0, peer_nk = -1;
    if (status == PTXJIT_OK) {
        print_header("matmul bf16 in, bf16 out, fp32 accumulation", n, n, n);
        status = peer_row(&peer, &d, cublas, CUBLAS_GEMM_BF16, 0, "cuBLAS GemmEx bf16",
                          PJ_DTYPE_bf16, 1e-2, runs, all_ok);
    }
    measurement r;
    if (status == PTXJIT_OK && !set_count)
        status = our_row(&r, &d, "variant=wgmma", peer, 0, runs, all_ok);
    for (int i = 0; i < set_count && status == PTXJIT_OK; i++) {
        pj_dtype type;
        int b_nk, tensor;
        set_kind(&type, &b_nk, &tensor, context, sets[i]);
        if (type != PJ_DTYPE_bf16)
            continue;
        if (b_nk && peer_nk < 0)
            status = peer_row(&peer_nk, &d, cublas, CUBLAS_GEMM_BF16, 1,
                              "cuBLAS GemmEx bf16, B transposed (TN)", PJ_DTYPE_bf16, 1e-2, runs,
                              all_ok);
        if (status == PTXJIT_OK)
            status = our_row(&r, &d, sets[i], b_nk ? peer_nk : peer, 0, runs, all_ok);
    }
    cli_matmul_data_free(&d);
    return status;
}

static int matmul_bench(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                 int set_count)
{
    char name[256] = "?";
    cli_cuda_device_name(name, sizeof name, context);
    const char *why = NULL, *shapes = NULL, *rounds_text = NULL, *flush_text = NULL;
    const char **rest = calloc((size_t)set_count + 1, sizeof *rest);
    int rest_count = 0;
    for (int i = 0; rest && i < set_count; i++) {
        if (strncmp(sets[i], "shapes=", 7) == 0)
            shapes = sets[i] + 7;
        else if (strncmp(sets[i], "rounds=", 7) == 0)
            rounds_text = sets[i] + 7;
        else if (strncmp(sets[i], "flush=", 6) == 0)
            flush_text = sets[i] + 6;
        else
            rest[rest_count++] = sets[i];
    }
    size_t rounds = 1;
    if (rounds_text && !cli_count(&rounds, rounds_text, "rounds", 1, 1000)) {
        free(rest);
        return CLI_USAGE;
    }
    if (flush_text && !shapes) {
        fprintf(stderr, "ptxjit: bench matmul: flush= applies to the shapes= tables only (the "
                        "default tables time their operands as the runs leave them); add "
                        "shapes=MxNxK,... or leave flush= out\n");
        free(rest);
        return CLI_USAGE;
    }
    cli_flush_mode flush = CLI_FLUSH_NONE;
    while (flush_text && flush <= CLI_FLUSH_WRITE && strcmp(flush_text, cli_flush_name(flush)))
        flush++;
    if (!flush_text) {
        flush = CLI_FLUSH_READ;
    } else if (flush > CLI_FLUSH_WRITE) {
        fprintf(stderr, "ptxjit: bench matmul: flush=%s is not read, write or none; use "
                        "flush=read (the default: L2 left clean), write or none\n", flush_text);
        free(rest);
        return CLI_USAGE;
    }
    cublas_peer *cublas = cublas_peer_open(&why);
    /* GemmEx with the workspace cuBLAS advises (without one it runs with a small one). */
    ptxjit_devptr workspace = 0;
    if (cublas && ptxjit_alloc(&workspace, context, CLI_MATMUL_LT_WORKSPACE) == PTXJIT_OK &&
        cublas_peer_set_workspace(cublas, workspace, CLI_MATMUL_LT_WORKSPACE) != 0)
        printf("cuBLAS: cublasSetWorkspace failed; GemmEx runs with its own workspace\n");
    int all_ok = 1;
    printf("matmul, %s, %s, median of %d (of fewer for runs over 100 ms)\n", name,
           ptxjit_arch(context), runs);
    if (!cublas)
        printf("cuBLAS not measured: %s\n", why);
    ptxjit_status status = rest ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == PTXJIT_OK && shapes) {
        status = cli_matmul_shapes_bench(context, cublas, shapes, runs, (int)rounds, flush,
                                         rest, rest_count, &all_ok);
    } else if (status == PTXJIT_OK) {
        status = fp32_table(context, cublas, n ? n : 4096, runs, rest, rest_count, &all_ok);
        if (status == PTXJIT_OK)
            status = bf16_table(context, cublas, n ? n : 8192, runs, rest, rest_count, &all_ok);
    }
    cublas_peer_close(cublas);
    if (workspace)
        ptxjit_free(context, workspace);
    free(rest);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    return all_ok ? CLI_OK : CLI_FAIL;
}

/* ---- bench backends ---- */

/* A, B, C and n of the backends table (n x n x n). */
typedef struct {
    ptxjit_devptr a, b, c;
    size_t n;
} routes_data;

static ptxjit_status backends_op(cli_routes *job)
{
    const routes_data *d = job->data;
    return ptxjit_matmul(job->context, job->params, d->a, d->b, d->c, d->n, d->n, d->n, NULL);
}

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
static ptxjit_status matmul_result(void *host, cli_routes *job, const char *params,
                                   const char *backend, size_t bytes)
{
    snprintf(job->params, sizeof job->params, "%s backend=%s", params, backend);
    ptxjit_status status = backends_op(job);
    const routes_data *d = job->data;
    return status == PTXJIT_OK ? ptxjit_copy_to_host(job->context, host, d->c, bytes) : status;
}

/* ‖C_llvm − C_nvrtc‖ / ‖C_nvrtc‖ (Frobenius) of one run each: the routes' results agree to
 * the rounding of their summation orders. */
static ptxjit_status route_difference(double *out, cli_routes *job, const char *params,
                                      pj_dtype type)
{
    const size_t n = ((const routes_data *)job->data)->n;
    const size_t count = n * n, bytes = count * (size_t)pj_dtype_bytes(type);
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
static int matmul_row(cli_routes *job, const char *params, pj_dtype type, int runs)
{
    double difference = 0, ms[2];
    ptxjit_status status = route_difference(&difference, job, params, type); /* compiles both */
    double start = wall_ms();
    if (status == PTXJIT_OK)
        status = backends_op(job);
    if (status == PTXJIT_OK)
        status = ptxjit_synchronize(job->context);
    double once = wall_ms() - start;
    int fewer = once * runs > 2000 ? (int)(2000 / once) : runs;
    job->warmup = 1;
    if (status == PTXJIT_OK)
        status = cli_routes_time(ms, job, params, fewer < 3 ? 3 : fewer);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    const double n = (double)((const routes_data *)job->data)->n;
    double flops = 2.0 * n * n * n;
    double nvrtc = flops / (ms[0] * 1e6), llvm = flops / (ms[1] * 1e6);
    printf("| %-40s | %12.1f | %11.1f | %10.3f | %16.1e |\n", params, nvrtc, llvm,
           llvm / nvrtc, difference);
    fflush(stdout);
    cli_chart_row(params, (double[CLI_CHART_SERIES_MAX]){nvrtc, llvm}, 0);
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
    routes_data d = {0, 0, 0, n};
    cli_routes job = {.context = context, .op = backends_op, .data = &d};
    ptxjit_status status = random_matrix(&d.a, context, n, type);
    if (status == PTXJIT_OK)
        status = random_matrix(&d.b, context, n, type);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&d.c, context, n * n * (size_t)pj_dtype_bytes(type));
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
    ptxjit_free(context, d.a);
    ptxjit_free(context, d.b);
    ptxjit_free(context, d.c);
    return code;
}

/* The SIMT variants and tensor_core (its default, and load=cp_async too on sm_90) on fp32, then
 * wgmma (cluster=1 and 2) on bf16 (C bf16), each n³ with the template's default tiles, on
 * random inputs in [-1, 1). */
static int matmul_backends(ptxjit_context *context, size_t n, int runs)
{
    const char *variants = pj_family_matmul.llvm_variants;
    printf("matmul, %zu x %zu x %zu, %s, median of up to %d runs per route (A B B A; about 2 s "
           "for slow variants), 2 n^3 / time; last column: ||C_llvm - C_nvrtc|| / ||C_nvrtc||:\n\n",
           n, n, n, ptxjit_arch(context), runs);
    printf("| %-40s | nvrtc GFLOP/s | llvm GFLOP/s | llvm/nvrtc | llvm vs nvrtc C |\n",
           "matmul parameters (others: defaults)");
    printf("|------------------------------------------|--------------:|-------------:|"
           "-----------:|-----------------:|\n");
    static const char *const series[] = {"nvrtc", "llvm", NULL};
    char title[160];
    snprintf(title, sizeof title, "matmul, %zu x %zu x %zu, %s: nvrtc against llvm (2 n^3 / time)",
             n, n, n, ptxjit_arch(context));
    cli_chart_table(title, "GFLOP/s", series);
    int code = bench_matmul_type(context, n, runs, PJ_DTYPE_f32, variants);
    if (code == CLI_OK && strstr(variants, "wgmma"))
        code = bench_matmul_type(context, n, runs, PJ_DTYPE_bf16, variants);
    return code;
}

/* ---- bench multigpu ---- */

typedef struct {
    matmul_data data; /* random inputs, as `run` makes them */
    matmul_config config;
} multigpu_state;

/* Random A and B of the params' input type at m x n x k (host copies kept for the reference),
 * C poisoned. */
static ptxjit_status multigpu_prepare(void **state, ptxjit_context *context, const char *params,
                                      const size_t *sizes, void *stream)
{
    multigpu_state *s = calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    s->data.context = context;
    ptxjit_kernel *kernel;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, "matmul", params, NULL);
    if (status == PTXJIT_OK)
        status = pj_matmul_config_of(&s->config, kernel);
    if (status == PTXJIT_OK)
        status = cli_matmul_data_make(&s->data, context, sizes[0], sizes[1], sizes[2], s->config.dtype);
    if (status == PTXJIT_OK)
        status = cli_matmul_poison(&s->data, &s->config, stream);
    if (status == PTXJIT_OK)
        status = ptxjit_stream_synchronize(context, stream);
    return status;
}

static ptxjit_status multigpu_run(void *state, const char *params, void *stream)
{
    matmul_data *d = &((multigpu_state *)state)->data;
    return ptxjit_matmul(d->context, params, d->da, d->db, d->dc, d->m, d->n, d->k, stream);
}

/* The last run's C against the float64 reference, as `run` checks it. */
static ptxjit_status multigpu_check(void *state, const char *named)
{
    multigpu_state *s = state;
    double error = cli_matmul_relative_error(&s->data, s->config.out, s->config.b_nk, &s->config);
    double tolerance = cli_matmul_tolerance(&s->config);
    if (!(error <= tolerance))
        return pj_error(PTXJIT_ERR_CUDA, "matmul %s: relative error %.2e, above the tolerance "
                        "%.0e", named, error, tolerance);
    return PTXJIT_OK;
}

/* A and B read, C written. */
static double multigpu_bytes(const void *state)
{
    const multigpu_state *s = state;
    const matmul_data *d = &s->data;
    return (double)(d->m * d->k + d->k * d->n) * pj_matmul_type_bytes(d->dtype) +
           (double)(d->m * d->n) * pj_dtype_bytes(s->config.out);
}

static void multigpu_release(void *state)
{
    cli_matmul_data_free(&((multigpu_state *)state)->data);
    free(state);
}

static const char *const multigpu_sizes[] = {"m", "n", "k", NULL};
static const size_t multigpu_defaults[] = {4096, 4096, 4096};

static const cli_multigpu multigpu = {
    multigpu_sizes, multigpu_defaults, 0, multigpu_prepare, multigpu_run, multigpu_check,
    multigpu_bytes, multigpu_release,
};

/* ---- bench compile, tune ---- */

/* wgmma bf16: the largest kernel among issue 15's cold-compile targets. */
static const cli_compile_target compile_targets[] = {
    {"matmul wgmma bf16", "variant=wgmma dtype=bf16", 350}, {NULL, NULL, 0}};

static const cli_tune_problem tune_problems[] = {
    {"m=8192 n=8192 k=8192", "variant=wgmma dtype=bf16", 0, NULL}, {NULL, NULL, 0, NULL}};

/* ---- the family's entry ---- */

static int run_entry(ptxjit_context *context, const char *params, const size_t *sizes, int runs)
{
    return matmul_run(context, params, sizes[0], sizes[1], sizes[2], runs);
}

static const char *const *problem_words(void)
{
    return pj_family_matmul.tune->problem_names;
}

static const char *const sizes[] = {"m", "n", "k", NULL};
static const size_t size_defaults[] = {4096, 4096, 4096};

const cli_family cli_family_matmul = {
    .name = "matmul",
    .sizes = sizes,
    .size_defaults = size_defaults,
    .problem_words = problem_words,
    .run = run_entry,
    .run_words = cli_matmul_layout_words,
    .run_with = cli_matmul_run_layout,
    .plan_with = cli_matmul_plan_layout,
    .bench = matmul_bench,
    .bench_n = 0,
    .takes_sets = 1,
    .bench_backends = matmul_backends,
    .backends_n = 4096,
    .multigpu = &multigpu,
    .compile_targets = compile_targets,
    .tune_problems = tune_problems,
    .help = "run m=M n=N k=K (default 4096 each; float64 reference); with a layout,\n"
            "             run m=M n=N k=K [batch=B] [lda=L] [ldb=L] [ldc=L] [stride_a=S]\n"
            "             [stride_b=S] [stride_c=S] (elements; a word left out is dense: each\n"
            "             product right after the last; stride_a or stride_b 0: one matrix for\n"
            "             all): random gaps, the products checked (sampled where many or big) and\n"
            "             C's gaps checked untouched; --plan says how the batch runs and what the\n"
            "             layout stages; bench: the write-up's table at 4096^3 fp32 and wgmma at\n"
            "             8192^3 bf16 (or n^3), against cuBLAS SGEMM, TF32 and GemmEx bf16; bench\n"
            "             matmul shapes=MxNxK,BxMxNxK,... [rounds=R] [flush=F]\n"
            "             [\"PARAMS\" ...]: each set on each shape (BxMxNxK: a strided batch of\n"
            "             B dense products) against the fastest cuBLAS of its input type in\n"
            "             the same process (GemmEx or GemmStridedBatchedEx with a workspace,\n"
            "             and each algorithm cuBLASLt's heuristic ranks, up to 16; tf32 in both\n"
            "             B layouts; where the peer is a cuBLASLt algorithm, its id, tile,\n"
            "             stages, cluster and K splits printed as cublasLt.h numbers them), in R\n"
            "             rounds that alternate which side goes first: median ratio and spread;\n"
            "             L2 is emptied before every timed run of each side (flush=read, the\n"
            "             default: by reading twice its size, which leaves it clean; flush=write:\n"
            "             by filling it, which leaves dirty lines written back in the timed run;\n"
            "             flush=none: not emptied; shapes= only); a row says \"+ WORDS\" where\n"
            "             the op fitted a smaller tile to the shape (swap=1: C computed as its\n"
            "             transpose, for a few rows of A)\n"
            "             multigpu: m=M n=N k=K, random inputs (default 4096 each)",
};

/* cli.c — the softmax family on the command line: `ptxjit run softmax` (a fresh random matrix,
 * a poisoned output, every row against the float64 softmax, CUDA-event medians), `ptxjit
 * bench softmax` (fp32 and bf16 at 1 GiB of fp32 input, each fitting bench set through both
 * backends, the best per row length, the device copy measured in the same run) and its op in
 * `ptxjit bench multigpu`. Bandwidth counts the bytes read and written once each: 2 * M * N *
 * element size. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/family_cli.h"
#include "cli/libcuda.h"
#include "cli/timing.h"
#include "families/softmax/cli.h"
#include "families/softmax/op.h"
#include "request/plan.h"

typedef struct {
    ptxjit_context *context;
    char params[320];
    ptxjit_devptr in, out;
    size_t rows, cols;
    pj_dtype dtype;
    void *host; /* the input, as on the device */
} softmax_job;

static ptxjit_status softmax_once(void *arg)
{
    softmax_job *job = arg;
    return ptxjit_softmax(job->context, job->params, job->in, job->out, job->rows, job->cols,
                          NULL);
}

static size_t job_bytes(const softmax_job *job)
{
    return job->rows * job->cols * (size_t)pj_dtype_bytes(job->dtype);
}

/* Random values in [-8, 8), stored as dtype (rounded to nearest even for 16-bit types): rows
 * whose exponentials span e^16, so that the max and the sum both matter. */
static void fill_random(void *host, pj_dtype dtype, size_t n)
{
    enum { PIECE = 1 << 20 };
    float *piece = malloc(PIECE * sizeof *piece);
    for (size_t at = 0; piece && at < n; at += PIECE) {
        size_t count = n - at < PIECE ? n - at : PIECE;
        random_f32(piece, count);
        for (size_t i = 0; i < count; i++)
            pj_softmax_set_element(host, dtype, at + i, 8.0f * piece[i]);
    }
    free(piece);
}

static ptxjit_status job_open(softmax_job *job, ptxjit_context *context, pj_dtype dtype,
                              size_t rows, size_t cols)
{
    *job = (softmax_job){.context = context, .rows = rows, .cols = cols, .dtype = dtype};
    size_t bytes = job_bytes(job);
    if (rows && bytes / rows / (size_t)pj_dtype_bytes(dtype) != cols)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "softmax: %zu x %zu is too large", rows,
                        cols);
    job->host = malloc(bytes ? bytes : 1);
    if (!job->host)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory",
                        bytes);
    fill_random(job->host, dtype, rows * cols);
    ptxjit_status status = ptxjit_alloc(&job->in, context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job->out, context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, job->in, job->host, bytes);
    return status;
}

static void job_close(softmax_job *job)
{
    free(job->host);
    if (job->in)
        ptxjit_free(job->context, job->in);
    if (job->out)
        ptxjit_free(job->context, job->out);
}

/* 0xff bytes: NaN in every dtype, so that an element the kernel does not write fails. */
static ptxjit_status poison(softmax_job *job)
{
    return ptxjit_memset_d8_async(job->context, job->out, 0xff, job_bytes(job), NULL);
}

/* What a checked output differs from the float64 softmax by. */
typedef struct {
    double abs, rel; /* max |got - want|, max |got - want| / want over want >= 2^-100 */
    double sum;      /* max |sum of the row - 1| */
    size_t bad;      /* elements outside the dtype's tolerance (NaN included) */
    size_t checked;
} softmax_error;

static void check_row(softmax_error *error, const softmax_job *job, size_t row,
                      const void *got_row, double *want)
{
    const size_t e = (size_t)pj_dtype_bytes(job->dtype);
    pj_softmax_reference(want, (const char *)job->host + row * job->cols * e, job->dtype,
                         job->cols);
    const softmax_tolerance tolerance = pj_softmax_tolerance(job->dtype);
    double sum = 0;
    for (size_t c = 0; c < job->cols; c++) {
        double got = pj_softmax_element(got_row, job->dtype, c), diff = fabs(got - want[c]);
        sum += got;
        if (!(diff <= tolerance.rel * want[c] + tolerance.abs))
            error->bad++;
        if (!(diff <= error->abs))
            error->abs = isnan(diff) ? INFINITY : diff;
        if (want[c] >= 0x1p-100 && diff / want[c] > error->rel)
            error->rel = diff / want[c];
    }
    if (!(fabs(sum - 1) <= error->sum))
        error->sum = isnan(sum) ? INFINITY : fabs(sum - 1);
    error->checked += job->cols;
}

/* Every row (all) from one copy of the output, or the first, the last and 62 rows spread by a
 * random walk, copied one by one. */
static ptxjit_status check_output(softmax_error *error, const softmax_job *job, int all)
{
    *error = (softmax_error){0};
    const size_t e = (size_t)pj_dtype_bytes(job->dtype), row_bytes = job->cols * e;
    double *want = malloc(job->cols * sizeof *want);
    char *got = malloc(all ? job_bytes(job) : row_bytes);
    ptxjit_status status = want && got ? PTXJIT_OK
                                       : pj_error(PTXJIT_ERR_OUT_OF_MEMORY,
                                                  "cannot allocate the check's host memory");
    if (status == PTXJIT_OK && all) {
        status = ptxjit_copy_to_host(job->context, got, job->out, job_bytes(job));
        for (size_t r = 0; status == PTXJIT_OK && r < job->rows; r++)
            check_row(error, job, r, got + r * row_bytes, want);
    }
    uint64_t state = (uint64_t)(uintptr_t)want ^ job->rows;
    for (size_t s = 0; status == PTXJIT_OK && !all && s < 64 && s < job->rows; s++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        size_t r = s == 0 ? 0 : s == 1 ? job->rows - 1 : (size_t)(state >> 33) % job->rows;
        status = ptxjit_copy_to_host(job->context, got, job->out + r * row_bytes, row_bytes);
        if (status == PTXJIT_OK)
            check_row(error, job, r, got, want);
    }
    free(want);
    free(got);
    return status;
}

static double gbps(const softmax_job *job, double ms)
{
    return ms > 0 ? 2.0 * (double)job_bytes(job) / (ms * 1e6) : 0;
}

int cli_softmax_run(ptxjit_context *context, const char *params, size_t rows, size_t cols,
                    int runs)
{
    /* The kernel the op launches for this problem (fitted to the row, or another variant where
     * the defaults cannot hold it): its dtype sizes the buffers and its params are printed. */
    const uint64_t sizes[] = {rows, cols};
    ptxjit_kernel *kernel;
    softmax_config config;
    ptxjit_status status =
        pj_plan_get_kernel(&kernel, NULL, context, &pj_family_softmax, params, sizes);
    if (status == PTXJIT_OK)
        status = pj_softmax_config_of(&config, kernel);
    if (status == PTXJIT_OK)
        status = pj_softmax_check(&config, 256, 1ull << 62, rows, cols); /* the shape alone */
    if (status != PTXJIT_OK)
        return cli_fail(status);
    softmax_job job;
    softmax_error error = {0};
    double ms = 0;
    status = job_open(&job, context, config.dtype, rows, cols);
    snprintf(job.params, sizeof job.params, "%s", params);
    if (status == PTXJIT_OK)
        status = poison(&job);
    if (status == PTXJIT_OK)
        status = softmax_once(&job);
    if (status == PTXJIT_OK)
        status = check_output(&error, &job, 1);
    if (status == PTXJIT_OK && runs > 0)
        status = time_median_ms(&ms, context, softmax_once, &job, 3, runs);
    job_close(&job);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    const softmax_tolerance tolerance = pj_softmax_tolerance(config.dtype);
    printf("softmax %s, %zu x %zu: %s (%zu of %zu elements outside %.3g * want + %.3g); max abs "
           "error %.3g, max relative error %.3g, max |row sum - 1| %.3g\n",
           ptxjit_kernel_params(kernel), rows, cols, error.bad ? "WRONG" : "ok", error.bad,
           error.checked, tolerance.rel, tolerance.abs, error.abs, error.rel, error.sum);
    if (runs > 0)
        printf("median of %d: %.4f ms, %.1f GB/s (read + write)\n", runs, ms, gbps(&job, ms));
    return error.bad ? CLI_FAIL : CLI_OK;
}

/* ---- bench ---- */

static const size_t bench_lengths[] = {1024, 4096, 16384};
static const pj_dtype bench_dtypes[] = {PJ_DTYPE_f32, PJ_DTYPE_bf16};
static const char *const backend_series[] = {"nvrtc", "llvm", NULL}; /* --svg */

typedef struct {
    char params[256];
    double gbps[2]; /* nvrtc, llvm */
    double error;   /* the larger max abs error of the two */
    int ok;
} bench_row;

typedef struct {
    int runs;
    double copy;
    int all_ok;
    size_t cols[3]; /* the row lengths benched */
    int lengths;
    bench_row best[2][3]; /* by dtype and row length */
    int have[2][3];
} bench_state;

/* Whether set is timed at cols: its dtype is the table's, and it holds the row (online: in
 * registers for 1 to 4 times the row; block: any row). */
static ptxjit_status set_applies(int *applies, ptxjit_context *context, const char *set,
                                 pj_dtype dtype, size_t cols)
{
    /* The kernel the op launches for the set on this row: a set that leaves the threads to
     * the defaults is fitted to the row (fit.c). */
    char problem[64], *request = NULL, *why = NULL;
    snprintf(problem, sizeof problem, "rows=1 cols=%zu", cols);
    *applies = 0;
    if (ptxjit_plan(&request, &why, context, "softmax", set, problem) != PTXJIT_OK)
        return PTXJIT_OK; /* a set that cannot run this row */
    ptxjit_kernel *kernel;
    softmax_config config;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, "softmax", request, NULL);
    free(request);
    free(why);
    if (status == PTXJIT_OK)
        status = pj_softmax_config_of(&config, kernel);
    if (status != PTXJIT_OK)
        return status;
    uint64_t most = pj_softmax_max_cols(&config.shape);
    *applies = config.dtype == dtype &&
               (config.shape.variant != SOFTMAX_ONLINE || (cols <= most && most <= 4 * cols));
    return PTXJIT_OK;
}

/* One backend: poisoned output, warm-up and timed runs, then sampled rows checked. */
static ptxjit_status time_route(double *out_gbps, softmax_error *error, softmax_job *job,
                                const char *set, const char *backend, int runs)
{
    double ms = 0;
    snprintf(job->params, sizeof job->params, "%s backend=%s", set, backend);
    ptxjit_status status = poison(job);
    if (status == PTXJIT_OK)
        status = time_median_ms(&ms, job->context, softmax_once, job, 3, runs);
    if (status == PTXJIT_OK)
        status = check_output(error, job, 0);
    *out_gbps = gbps(job, ms);
    return status;
}

static ptxjit_status bench_set(bench_state *state, softmax_job *job, const char *set, int d,
                               int n)
{
    bench_row row = {.ok = 1};
    snprintf(row.params, sizeof row.params, "%s", set);
    static const char *const backends[] = {"nvrtc", "llvm"};
    for (int b = 0; b < 2; b++) {
        softmax_error error;
        ptxjit_status status = time_route(&row.gbps[b], &error, job, set, backends[b],
                                          state->runs);
        if (status != PTXJIT_OK)
            return status;
        row.ok &= error.bad == 0;
        row.error = error.abs > row.error ? error.abs : row.error;
    }
    state->all_ok &= row.ok;
    printf("  %-52s %8.1f %8.1f %6.3f %6.1f%% %9.2e  %s\n", set, row.gbps[0], row.gbps[1],
           row.gbps[0] > 0 ? row.gbps[1] / row.gbps[0] : 0, 100 * row.gbps[0] / state->copy,
           row.error, row.ok ? "ok" : "WRONG");
    cli_chart_row(set, row.gbps, 0);
    const bench_row *best = &state->best[d][n];
    if (!state->have[d][n] ||
        row.gbps[0] + row.gbps[1] > best->gbps[0] + best->gbps[1]) {
        state->best[d][n] = row;
        state->have[d][n] = 1;
    }
    return PTXJIT_OK;
}

static ptxjit_status bench_table(bench_state *state, ptxjit_context *context, int d, int n,
                                 const char *const *sets, int set_count)
{
    const pj_dtype dtype = bench_dtypes[d];
    const size_t cols = state->cols[n], rows = ((size_t)1 << 28) / cols ? ((size_t)1 << 28) / cols : 1;
    softmax_job job;
    ptxjit_status status = job_open(&job, context, dtype, rows, cols);
    if (status == PTXJIT_OK) {
        printf("\nsoftmax %s, %zu x %zu (read + write %.2f GB)\n  %-52s %8s %8s %6s %7s %9s\n",
               pj_dtype_name(dtype), rows, cols, 2.0 * (double)job_bytes(&job) * 1e-9,
               "params", "nvrtc", "llvm", "ratio", "% copy", "max err");
        char title[160];
        snprintf(title, sizeof title, "softmax %s, %zu x %zu (read + write / time)",
                 pj_dtype_name(dtype), rows, cols);
        cli_chart_table(title, "GB/s", backend_series);
        cli_chart_reference("device-to-device copy", state->copy);
    }
    const char *const *list = set_count > 0 ? sets : pj_family_softmax.bench_sets;
    for (int i = 0; status == PTXJIT_OK && (set_count > 0 ? i < set_count : list[i] != NULL);
         i++) {
        int applies = 0;
        status = set_applies(&applies, context, list[i], dtype, cols);
        if (status == PTXJIT_OK && applies)
            status = bench_set(state, &job, list[i], d, n);
    }
    job_close(&job);
    return status;
}

static void print_summary(const bench_state *state, const char *device)
{
    printf("\nbest per row length (GB/s, read + write; copy %.1f GB/s):\n", state->copy);
    printf("  %-5s %6s  %-44s %8s %8s %6s %7s %9s\n", "dtype", "N", "params", "nvrtc", "llvm",
           "ratio", "% copy", "max err");
    cli_chart_table("softmax: the best per row length", "GB/s", backend_series);
    cli_chart_reference("device-to-device copy", state->copy);
    for (int d = 0; d < 2; d++)
        for (int n = 0; n < state->lengths; n++) {
            const bench_row *b = &state->best[d][n];
            if (state->have[d][n]) {
                printf("  %-5s %6zu  %-44s %8.1f %8.1f %6.3f %6.1f%% %9.2e\n",
                       pj_dtype_name(bench_dtypes[d]), state->cols[n], b->params, b->gbps[0],
                       b->gbps[1], b->gbps[1] / b->gbps[0], 100 * b->gbps[0] / state->copy,
                       b->error);
                char label[200];
                snprintf(label, sizeof label, "%s N=%zu %s", pj_dtype_name(bench_dtypes[d]),
                         state->cols[n], b->params);
                cli_chart_row(label, b->gbps, 0);
            }
        }
    printf("json: {\"family\": \"softmax\", \"device\": \"%s\", \"copy_gbps\": %.1f, \"best\": [",
           device, state->copy);
    const char *separator = "";
    for (int d = 0; d < 2; d++)
        for (int n = 0; n < state->lengths; n++) {
            const bench_row *b = &state->best[d][n];
            if (!state->have[d][n])
                continue;
            printf("%s{\"dtype\": \"%s\", \"n\": %zu, \"m\": %zu, \"params\": \"%s\", "
                   "\"nvrtc_gbps\": %.1f, \"llvm_gbps\": %.1f, \"llvm_over_nvrtc\": %.4f, "
                   "\"max_abs_error\": %.3g}",
                   separator, pj_dtype_name(bench_dtypes[d]), state->cols[n],
                   ((size_t)1 << 28) / state->cols[n], b->params, b->gbps[0], b->gbps[1],
                   b->gbps[1] / b->gbps[0], b->error);
            separator = ", ";
        }
    printf("]}\n");
}

int cli_softmax_bench(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                      int set_count)
{
    char device[256] = "?";
    cli_cuda_device_name(device, sizeof device, context);
    bench_state state = {.runs = runs > 0 ? runs : 20, .all_ok = 1};
    if (n > PJ_SOFTMAX_MAX_COLS || n > ((size_t)1 << 28)) {
        fprintf(stderr, "ptxjit: bench softmax n=%zu: rows of at most 2^28 elements\n", n);
        return CLI_USAGE;
    }
    for (int i = 0; i < 3 && (n == 0 || i == 0); i++)
        state.cols[state.lengths++] = n ? n : bench_lengths[i];
    ptxjit_status status = copy_bandwidth(&state.copy, context, state.runs);
    if (status == PTXJIT_OK) {
        printf("softmax, %s, %s, median of %d; both backends through ptxjit_softmax\n", device,
               ptxjit_arch(context), state.runs);
        printf("device-to-device copy, 2 GiB, read + write: %.1f GB/s\n", state.copy);
    }
    for (int d = 0; d < 2 && status == PTXJIT_OK; d++)
        for (int i = 0; i < state.lengths && status == PTXJIT_OK; i++)
            status = bench_table(&state, context, d, i, sets, set_count);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    print_summary(&state, device);
    printf("peers (torch.softmax, a Triton row kernel) on the same shapes: python3 "
           "bench/softmax_peers.py\n");
    return state.all_ok ? CLI_OK : CLI_FAIL;
}

/* ---- bench backends ---- */

static ptxjit_status backends_op(cli_routes *job)
{
    const ptxjit_devptr *buffers = job->data; /* input, output, rows, cols */
    return ptxjit_softmax(job->context, job->params, buffers[0], buffers[1], (size_t)buffers[2],
                          (size_t)buffers[3], NULL);
}

/* Each variant the generator builds, fp32 and bf16, on 2^28 / n rows of n (a constant input:
 * the kernels take no shortcut on equal values), through both routes. online takes its
 * defaults where they hold n, else 1024 threads a row with the items that hold it. */
static int softmax_backends(ptxjit_context *context, size_t n, int runs)
{
    const size_t rows = ((size_t)1 << 28) / n ? ((size_t)1 << 28) / n : 1;
    ptxjit_devptr buffers[4] = {0, 0, (ptxjit_devptr)rows, (ptxjit_devptr)n};
    cli_routes job = {.context = context, .op = backends_op, .data = buffers, .warmup = 3};
    size_t bytes = rows * n * 4;
    ptxjit_status status = ptxjit_alloc(&buffers[0], context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&buffers[1], context, bytes);
    if (status == PTXJIT_OK) /* 0x3f803f80: 1.0 in f32's upper half and in both bf16 halves */
        status = ptxjit_memset_d32_async(context, buffers[0], 0x3f803f80u, bytes / 4, NULL);
    int code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    printf("softmax, %zu x %zu, %s, median of %d runs per route (A B B A), bytes read + "
           "written / time:\n\n", rows, n, ptxjit_arch(context), runs);
    char title[160];
    snprintf(title, sizeof title, "softmax, %zu x %zu, %s: nvrtc against llvm", rows, n,
             ptxjit_arch(context));
    cli_routes_head(title, "softmax parameters (others: defaults)");
    for (int d = 0; d < 2 && code == CLI_OK; d++) {
        const pj_dtype dtype = bench_dtypes[d];
        const int vec = 16 / pj_dtype_bytes(dtype), most = 128 / 16;
        for (const char *s = pj_family_softmax.llvm_variants; *s && code == CLI_OK;) {
            size_t length = strcspn(s, ",");
            char params[160];
            int online = strncmp(s, "online", length) == 0 && length == 6;
            size_t items = (n + 1024 * (size_t)vec - 1) / (1024 * (size_t)vec);
            if (online && n > 4096 && items > (size_t)most) {
                s += length + (s[length] == ',');
                continue; /* longer than any register row: block's alone */
            }
            int len = snprintf(params, sizeof params, "variant=%.*s dtype=%s", (int)length, s,
                               pj_dtype_name(dtype));
            if (online && n > 4096)
                snprintf(params + len, sizeof params - (size_t)len,
                         " tpb=1024 tpr=1024 items=%zu", items);
            code = cli_routes_row(&job, params,
                                  2.0 * (double)(rows * n) * pj_dtype_bytes(dtype), runs);
            s += length + (s[length] == ',');
        }
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
    pj_dtype dtype;
} multigpu_state;

/* Every input byte 0x3c, a finite value in each dtype (f32 0.0115, f16 1.06, bf16 0.0115): a
 * constant row, whose softmax is 1/cols at every element, so the check needs no copy of the
 * input. The output poisoned with NaN. */
static ptxjit_status multigpu_prepare(void **state, ptxjit_context *context, const char *params,
                                      const size_t *sizes, void *stream)
{
    multigpu_state *s = calloc(1, sizeof *s);
    *state = s;
    if (!s)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *s = (multigpu_state){.context = context, .rows = sizes[0], .cols = sizes[1]};
    ptxjit_kernel *kernel;
    softmax_config config;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, "softmax", params, NULL);
    if (status == PTXJIT_OK)
        status = pj_softmax_config_of(&config, kernel);
    size_t e = status == PTXJIT_OK ? (size_t)pj_dtype_bytes(config.dtype) : 0, bytes = 0;
    if (status == PTXJIT_OK && (__builtin_mul_overflow(s->rows, s->cols, &bytes) ||
                                __builtin_mul_overflow(bytes, e, &bytes)))
        status = pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "softmax: %zu x %zu is too large",
                          s->rows, s->cols);
    s->dtype = config.dtype;
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&s->input, context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&s->output, context, bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d8_async(context, s->input, 0x3c, bytes, stream);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d8_async(context, s->output, 0xff, bytes, stream);
    if (status == PTXJIT_OK)
        status = ptxjit_stream_synchronize(context, stream);
    return status;
}

static ptxjit_status multigpu_run(void *state, const char *params, void *stream)
{
    multigpu_state *s = state;
    return ptxjit_softmax(s->context, params, s->input, s->output, s->rows, s->cols, stream);
}

/* The first, the last and 62 rows spread by a random walk: every element 1/cols, within the
 * dtype's tolerance. */
static ptxjit_status multigpu_check(void *state, const char *named)
{
    multigpu_state *s = state;
    const size_t row_bytes = s->cols * (size_t)pj_dtype_bytes(s->dtype);
    const softmax_tolerance tolerance = pj_softmax_tolerance(s->dtype);
    const double want = 1.0 / (double)s->cols;
    char *row = malloc(row_bytes);
    ptxjit_status status = row ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "no memory");
    uint64_t walk = (uint64_t)(uintptr_t)row ^ s->rows;
    for (size_t k = 0; status == PTXJIT_OK && k < 64 && k < s->rows; k++) {
        walk = walk * 6364136223846793005ull + 1442695040888963407ull;
        size_t r = k == 0 ? 0 : k == 1 ? s->rows - 1 : (size_t)(walk >> 33) % s->rows;
        status = ptxjit_copy_to_host(s->context, row, s->output + r * row_bytes, row_bytes);
        for (size_t c = 0; status == PTXJIT_OK && c < s->cols; c++) {
            double got = pj_softmax_element(row, s->dtype, c);
            if (!(fabs(got - want) <= tolerance.rel * want + tolerance.abs))
                status = pj_error(PTXJIT_ERR_CUDA, "softmax %s: row %zu, element %zu is %g, "
                                  "not 1/%zu", named, r, c, got, s->cols);
        }
    }
    free(row);
    return status;
}

static double multigpu_bytes(const void *state)
{
    const multigpu_state *s = state;
    return 2.0 * (double)(s->rows * s->cols) * pj_dtype_bytes(s->dtype);
}

static void multigpu_release(void *state)
{
    multigpu_state *s = state;
    ptxjit_free(s->context, s->input);
    ptxjit_free(s->context, s->output);
    free(s);
}

static const char *const multigpu_sizes[] = {"rows", "cols", NULL};
static const size_t multigpu_defaults[] = {65536, 4096};

static const cli_multigpu multigpu = {
    multigpu_sizes, multigpu_defaults, 0, multigpu_prepare, multigpu_run, multigpu_check,
    multigpu_bytes, multigpu_release,
};

/* ---- bench tune ---- */

/* 1 GiB of fp32 each, in rows of 1024, 4096 and 16384. */
static const cli_tune_problem tune_problems[] = {
    {"rows=262144 cols=1024", "dtype=f32", 0, NULL},
    {"rows=65536 cols=4096", "dtype=f32", 0, NULL},
    {"rows=16384 cols=16384", "dtype=f32", 0, NULL},
    {NULL, NULL, 0, NULL}};

/* ---- the family's entry ---- */

static int run_entry(ptxjit_context *context, const char *params, const size_t *sizes, int runs)
{
    return cli_softmax_run(context, params, sizes[0], sizes[1], runs);
}

static const char *const *problem_words(void)
{
    return pj_family_softmax.tune->problem_names;
}

static const char *const sizes[] = {"rows", "cols", NULL};
static const size_t size_defaults[] = {65536, 4096};

const cli_family cli_family_softmax = {
    .name = "softmax",
    .sizes = sizes,
    .size_defaults = size_defaults,
    .problem_words = problem_words,
    .run = run_entry,
    .bench = cli_softmax_bench,
    .bench_n = 0,
    .takes_sets = 1,
    .bench_backends = softmax_backends,
    .backends_n = 4096,
    .multigpu = &multigpu,
    .tune_problems = tune_problems,
    .help = "run rows=M cols=N (default 65536 x 4096; float64 reference); bench: fp32 and bf16\n"
            "             rows of 1024, 4096, 16384 (or n) at 1 GiB, both backends, the copy (peers:\n"
            "             python3 bench/softmax_peers.py)\n"
            "             multigpu: rows=R cols=C, one constant value (default 65536 x 4096)",
};

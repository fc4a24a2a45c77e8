/* cli_product.c — one product on the command line, for the matmul family's `run` and benches
 * (cli.c, cli_shapes.c): random inputs and bias, a poisoned C, ptxjit's op or a cuBLAS peer
 * run and timed, the result checked on sampled rows against a float64 reference. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/family_cli.h"
#include "cli/timing.h"
#include "families/matmul/cli_product.h"

ptxjit_status cli_matmul_once(void *arg)
{
    matmul_job *job = arg;
    matmul_data *d = job->data;
    if (job->lt) {
        const char *why = cublas_lt_product_run(job->lt, job->lt_algorithm, d->dc, d->da, d->db,
                                                job->workspace, CLI_MATMUL_LT_WORKSPACE);
        return why ? pj_error(PTXJIT_ERR_CUDA, "cuBLASLt: %s", why) : PTXJIT_OK;
    }
    if (job->cublas)
        return cublas_peer_matmul(job->cublas, job->kind, d->dc, d->da, d->db, d->m, d->n, d->k,
                                  job->b_nk)
                   ? pj_error(PTXJIT_ERR_CUDA, "cublasGemmEx failed")
                   : PTXJIT_OK;
    if (job->config && job->config->bias) { /* bias=column: the random bias */
        ptxjit_matmul_epilogue epilogue;
        ptxjit_matmul_epilogue_init(&epilogue);
        epilogue.bias = d->dbias;
        return ptxjit_matmul_ex(d->context, job->params, d->da, d->db, d->dc, d->m, d->n, d->k,
                                &epilogue, NULL);
    }
    return ptxjit_matmul(d->context, job->params, d->da, d->db, d->dc, d->m, d->n, d->k, NULL);
}

/* B's k x n elements serve both layouts: read as K x N (b_layout=kn) or as its transpose
 * N x K (nk), random either way. */
ptxjit_status cli_matmul_data_make(matmul_data *d, ptxjit_context *context, size_t m, size_t n,
                               size_t k, pj_dtype dtype)
{
    *d = (matmul_data){context, m, n, k, dtype, NULL, NULL, NULL, NULL, 0, 0, 0, 0};
    const size_t e = (size_t)pj_matmul_type_bytes(dtype);
    size_t products[3];
    if (__builtin_mul_overflow(m, k, &products[0]) || __builtin_mul_overflow(k, n, &products[1]) ||
        __builtin_mul_overflow(m, n, &products[2]) || products[0] > PJ_COUNT_MAX ||
        products[1] > PJ_COUNT_MAX || products[2] > PJ_COUNT_MAX)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "matmul: %zu x %zu x %zu is more memory than "
                        "exists; give smaller m=, n= and k=", m, n, k);
    float *values = malloc((m > n ? m : n) * k * sizeof *values);
    d->a = malloc(m * k * e);
    d->b = malloc(k * n * e);
    ptxjit_status status = values && d->a && d->b
                               ? PTXJIT_OK
                               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int which = 0; which < 2 && status == PTXJIT_OK; which++) {
        size_t count = which == 0 ? m * k : k * n;
        random_f32(values, count); /* [-1, 1), a fresh seed each time */
        for (size_t i = 0; i < count; i++)
            pj_matmul_set_element(which == 0 ? d->a : d->b, dtype, i, values[i]);
    }
    free(values);
    if (status == PTXJIT_OK && !(d->bias = malloc(n * sizeof *d->bias)))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of host memory");
    if (status == PTXJIT_OK)
        random_f32(d->bias, n);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&d->dbias, context, n * sizeof *d->bias);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, d->dbias, d->bias, n * sizeof *d->bias);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&d->da, context, m * k * e);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&d->db, context, k * n * e);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&d->dc, context, m * n * 4); /* room for any output type */
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, d->da, d->a, m * k * e);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, d->db, d->b, k * n * e);
    return status;
}

void cli_matmul_data_free(matmul_data *d)
{
    free(d->a);
    free(d->b);
    free(d->b_values);
    free(d->bias);
    if (d->dbias)
        ptxjit_free(d->context, d->dbias);
    if (d->da)
        ptxjit_free(d->context, d->da);
    if (d->db)
        ptxjit_free(d->context, d->db);
    if (d->dc)
        ptxjit_free(d->context, d->dc);
}

/* NaN in every output byte pattern: an element the kernel never writes cannot pass. Zeros
 * where beta=scaled reads C (beta 0 would still turn NaN into NaN). */
ptxjit_status cli_matmul_poison(const matmul_data *d, const matmul_config *config, void *stream)
{
    const unsigned char fill = config && config->beta ? 0 : 0xff;
    return ptxjit_memset_d8_async(d->context, d->dc, fill, d->m * d->n * 4, stream);
}

/* tf32: tensor_core rounds its inputs to tf32 (1e-3); wgmma_tf32 reads them as the tensor
 * core does, truncated (2e-3). */
double cli_matmul_tolerance(const matmul_config *config)
{
    if (config->dtype != PJ_DTYPE_f32 || config->out != PJ_DTYPE_f32)
        return 1e-2;
    return config->variant == MATMUL_WGMMA_TF32    ? 2e-3
           : config->variant == MATMUL_TENSOR_CORE ? 1e-3
                                                    : 1e-5;
}

/* Row `row` of the float64 reference: B decoded once into floats, so that a row of an 8192³
 * product costs a pass over B rather than a conversion per element (pj_matmul_reference_row's
 * way, the fallback without memory for it). */
static void reference_row(double *out, matmul_data *d, size_t row, int b_nk)
{
    const size_t n = d->n, k = d->k;
    if (!d->b_values && (d->b_values = malloc(k * n * sizeof *d->b_values)))
        for (size_t i = 0; i < k * n; i++)
            d->b_values[i] = (float)pj_matmul_element(d->b, d->dtype, i);
    double *a = malloc(k * sizeof *a);
    if (!d->b_values || !a) {
        free(a);
        pj_matmul_reference_row_layout(out, d->a, d->b, d->dtype, n, k, row, b_nk);
        return;
    }
    for (size_t p = 0; p < k; p++)
        a[p] = pj_matmul_element(d->a, d->dtype, row * k + p);
    const float *b = d->b_values;
    for (size_t j = 0; j < n; j++)
        out[j] = 0;
    if (b_nk) { /* B's column j is row j of its transpose */
        for (size_t j = 0; j < n; j++) {
            double sum = 0;
            for (size_t p = 0; p < k; p++)
                sum += a[p] * b[j * k + p];
            out[j] = sum;
        }
    } else {
        for (size_t p = 0; p < k; p++)
            for (size_t j = 0; j < n; j++)
                out[j] += a[p] * b[p * n + j];
    }
    free(a);
}

/* ‖C − C_ref‖ / ‖C_ref‖ over every row (small products) or 8 rows (first, last, 6 spread),
 * with the reference in float64; NaN if any sampled element is not finite. */
double cli_matmul_relative_error(matmul_data *d, pj_dtype out, int b_nk, const matmul_config *config)
{
    const size_t e = (size_t)pj_dtype_bytes(out);
    int all = (double)d->m * d->n * d->k <= 1e9;
    size_t rows = all || d->m < 8 ? d->m : 8;
    double *want = malloc(d->n * sizeof *want);
    unsigned char *got = malloc(d->n * e);
    double diff = want && got ? 0 : NAN, norm = 0;
    for (size_t i = 0; i < rows && !isnan(diff); i++) {
        size_t row = all || i == 0 ? i : i == rows - 1 ? d->m - 1 : i * d->m / rows;
        if (ptxjit_copy_to_host(d->context, got, d->dc + row * d->n * e, d->n * e) != PTXJIT_OK) {
            diff = NAN;
            break;
        }
        reference_row(want, d, row, b_nk);
        if (config) /* the epilogue: its defaults (alpha 1, beta 0, scales 1), the bias */
            pj_matmul_reference_epilogue(want, d->n, config, NULL, want, d->bias);
        for (size_t j = 0; j < d->n; j++) {
            double g = pj_matmul_element(got, out, j), delta = g - want[j];
            diff = isfinite(g) ? diff + delta * delta : NAN;
            norm += want[j] * want[j];
        }
    }
    free(want);
    free(got);
    return sqrt(diff / (norm > 0 ? norm : 1));
}

/* Fewer timed runs for the slow steps (naive takes about half a second at 4096³). */
static int runs_for(double first_ms, int runs)
{
    if (first_ms * runs <= 2000)
        return runs;
    int fewer = (int)(2000 / first_ms);
    return fewer < 3 ? 3 : fewer;
}

ptxjit_status cli_matmul_measure(measurement *out, matmul_job *job, pj_dtype result_type,
                             double tolerance, int runs)
{
    matmul_data *d = job->data;
    double first = wall_ms();
    ptxjit_status status = cli_matmul_poison(d, job->config, NULL);
    if (status == PTXJIT_OK)
        status = cli_matmul_once(job);
    if (status == PTXJIT_OK)
        status = ptxjit_synchronize(d->context);
    first = wall_ms() - first;
    if (status == PTXJIT_OK)
        status = time_median_ms(&out->ms, d->context, cli_matmul_once, job, 1, runs_for(first, runs));
    if (status != PTXJIT_OK)
        return status;
    out->error = cli_matmul_relative_error(d, result_type, job->b_nk, job->config); /* the last run's */
    out->correct = out->error <= tolerance; /* false for NaN */
    out->tflops = 2.0 * d->m * d->n * d->k / (out->ms * 1e9);
    return PTXJIT_OK;
}

void cli_matmul_print_row(const char *name, const measurement *r, double peer, double writeup)
{
    printf("%-58s %10.1f %8.3f %9.2e %s", name, r->tflops * 1e3, peer > 0 ? r->tflops / peer : 0,
           r->error, r->correct ? "ok   " : "WRONG");
    if (writeup > 0)
        printf(" %9.0f", writeup);
    printf("\n");
    fflush(stdout);
}

/* The configuration of the kernel the op takes for params on d's shape (*fitted: the tile it
 * fitted to the shape, or NULL), checked to take the table's input type. */
ptxjit_status cli_matmul_config_for(matmul_config *config, const pj_matmul_fit_tile **fitted,
                                const matmul_data *d, const char *params)
{
    ptxjit_kernel *kernel;
    ptxjit_status status =
        pj_matmul_fit(&kernel, config, fitted, d->context, params, d->m, d->n, d->k);
    if (status == PTXJIT_OK && config->dtype != d->dtype)
        status = pj_error(PTXJIT_ERR_PARAM, "bench matmul: '%s' takes %s, this table is %s",
                          params, pj_matmul_type_name(config->dtype),
                          pj_matmul_type_name(d->dtype));
    return status;
}

/* cli_product.c — one product, or a strided batch of them, on the command line, for the
 * matmul family's `run` and benches (cli.c, cli_layout.c, cli_shapes.c): random inputs (and
 * random gaps between a layout's rows) and bias, a poisoned C, ptxjit's op or a cuBLAS peer run
 * and timed, the result checked on sampled rows against a float64 reference, and C's gaps
 * checked untouched. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "cli/family_cli.h"
#include "cli/timing.h"
#include "families/matmul/cli_product.h"
#include "families/matmul/stage.h"

/* rows x width bytes from src (rows src_pitch bytes apart) to dst, by the op's staging copy
 * (pad's module's), on the default stream. */
static ptxjit_status pad_copy(const matmul_padding *pad, ptxjit_devptr dst, size_t dst_pitch,
                              ptxjit_devptr src, size_t src_pitch, size_t width, size_t rows)
{
    return pj_matmul_stage_copy(pad->copy, dst, dst_pitch, 0, src, src_pitch, 0, 1, rows, width,
                                NULL);
}

/* The cuBLASLt peer of a product it takes only padded: A and B copied into the padding's
 * rows, the product, C copied back. */
static ptxjit_status padded_lt_once(matmul_job *job)
{
    const matmul_data *d = job->data;
    const matmul_padding *p = job->pad;
    const size_t in = (size_t)p->in_bytes, out = (size_t)p->out_bytes;
    const size_t b_rows = job->b_nk ? d->n : d->k, b_cols = job->b_nk ? d->k : d->n;
    const size_t b_pitch = job->b_nk ? p->kp : p->np;
    ptxjit_status status = pad_copy(p, p->a, p->kp * in, d->da, d->k * in, d->k * in, d->m);
    if (status == PTXJIT_OK)
        status = pad_copy(p, p->b, b_pitch * in, d->db, b_cols * in, b_cols * in, b_rows);
    if (status == PTXJIT_OK) {
        const char *why = cublas_lt_product_run(job->lt, job->lt_algorithm, p->c, p->a, p->b,
                                                job->workspace, CLI_MATMUL_LT_WORKSPACE);
        if (why)
            return pj_error(PTXJIT_ERR_CUDA, "cuBLASLt: %s", why);
    }
    return status == PTXJIT_OK
               ? pad_copy(p, d->dc, d->n * out, p->c, p->np * out, d->n * out, d->m)
               : status;
}

ptxjit_status cli_matmul_once(void *arg)
{
    matmul_job *job = arg;
    matmul_data *d = job->data;
    const ptxjit_matmul_layout *l = &d->layout;
    if (job->lt && job->pad)
        return padded_lt_once(job);
    if (job->lt) {
        const char *why = cublas_lt_product_run(job->lt, job->lt_algorithm, d->dc, d->da, d->db,
                                                job->workspace, CLI_MATMUL_LT_WORKSPACE);
        return why ? pj_error(PTXJIT_ERR_CUDA, "cuBLASLt: %s", why) : PTXJIT_OK;
    }
    /* cuBLAS is given dense rows only: the benches' products are dense. */
    if (job->cublas && l->batch > 1) {
        const cublas_batch batch = {l->batch, l->stride_a, l->stride_b, l->stride_c};
        return cublas_peer_matmul_strided(job->cublas, job->kind, d->dc, d->da, d->db, d->m,
                                          d->n, d->k, job->b_nk, &batch)
                   ? pj_error(PTXJIT_ERR_CUDA, "cublasGemmStridedBatchedEx failed")
                   : PTXJIT_OK;
    }
    if (job->cublas)
        return cublas_peer_matmul(job->cublas, job->kind, d->dc, d->da, d->db, d->m, d->n, d->k,
                                  job->b_nk)
                   ? pj_error(PTXJIT_ERR_CUDA, "cublasGemmEx failed")
                   : PTXJIT_OK;
    ptxjit_matmul_epilogue epilogue; /* bias=column: the random bias */
    ptxjit_matmul_epilogue_init(&epilogue);
    epilogue.bias = d->dbias;
    return ptxjit_matmul_strided(d->context, job->params, d->da, d->db, d->dc, d->m, d->n, d->k,
                                 l, job->config && job->config->bias ? &epilogue : NULL, NULL);
}

/* The layout with every default resolved for B's layout b_nk, in stage.h's form (unchecked: the
 * data was made from a layout the library takes). */
static pj_matmul_layout resolved(const matmul_data *d, int b_nk)
{
    const ptxjit_matmul_layout *l = &d->layout;
    const size_t batch = l->batch > 1 ? l->batch : 1, b_cols = b_nk ? d->k : d->n;
    return (pj_matmul_layout){d->m,
                              d->n,
                              d->k,
                              l->lda ? l->lda : d->k,
                              l->ldb ? l->ldb : b_cols,
                              l->ldc ? l->ldc : d->n,
                              batch,
                              batch > 1 ? l->stride_a : 0,
                              batch > 1 ? l->stride_b : 0,
                              batch > 1 ? l->stride_c : 0};
}

/* Elements from the first element of `count` matrices of rows x cols (rows ld apart, matrices
 * stride apart; one matrix where stride is 0) to past the last one's last; 0 past
 * PJ_COUNT_MAX, which no buffer reaches. */
static size_t span(size_t count, size_t stride, size_t rows, size_t ld, size_t cols)
{
    const unsigned __int128 end = (unsigned __int128)(stride ? count - 1 : 0) * stride +
                                  (unsigned __int128)(rows - 1) * ld + cols;
    return end > PJ_COUNT_MAX ? 0 : (size_t)end;
}

/* a·b, or SIZE_MAX where it does not fit (a stride no buffer can hold: span refuses it). */
static size_t times(size_t a, size_t b)
{
    size_t product;
    return __builtin_mul_overflow(a, b, &product) ? SIZE_MAX : product;
}

ptxjit_matmul_layout cli_matmul_dense_batch(size_t batch, size_t m, size_t n, size_t k)
{
    ptxjit_matmul_layout l;
    ptxjit_matmul_layout_init(&l);
    l.batch = batch;
    l.stride_a = times(m, k), l.stride_b = times(k, n), l.stride_c = times(m, n);
    return l;
}

ptxjit_status cli_matmul_data_make(matmul_data *d, ptxjit_context *context, size_t m, size_t n,
                                   size_t k, pj_dtype dtype)
{
    return cli_matmul_data_make_layout(d, context, m, n, k, dtype, NULL, 0);
}

/* The buffers' sizes in elements (d->span_*), or an error where one is more than exists. */
static ptxjit_status spans(matmul_data *d, int b_nk)
{
    const pj_matmul_layout l = resolved(d, b_nk);
    const size_t b_rows = b_nk ? d->n : d->k, b_cols = b_nk ? d->k : d->n;
    d->span_a = span(l.batch, l.stride_a, d->m, l.lda, d->k);
    d->span_b = span(l.batch, l.stride_b, b_rows, l.ldb, b_cols);
    d->span_c = span(l.batch, l.stride_c, d->m, l.ldc, d->n);
    if (d->span_a && d->span_b && d->span_c)
        return PTXJIT_OK;
    if (l.batch == 1 && l.lda == d->k && l.ldb == b_cols && l.ldc == d->n)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "matmul: %zu x %zu x %zu is more memory than "
                        "exists; give smaller m=, n= and k=", d->m, d->n, d->k);
    return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "matmul: %zu products of %zu x %zu x %zu as laid "
                    "out are more memory than exists; give a smaller batch=, sizes or strides",
                    l.batch, d->m, d->n, d->k);
}

/* B's elements serve both layouts while its rows are dense: read as K x N (b_layout=kn) or as
 * its transpose N x K (nk), random either way. */
ptxjit_status cli_matmul_data_make_layout(matmul_data *d, ptxjit_context *context, size_t m,
                                          size_t n, size_t k, pj_dtype dtype,
                                          const ptxjit_matmul_layout *layout, int b_nk)
{
    memset(d, 0, sizeof *d);
    d->context = context, d->m = m, d->n = n, d->k = k, d->dtype = dtype, d->b_nk = b_nk;
    ptxjit_matmul_layout_init(&d->layout);
    if (layout)
        d->layout = *layout;
    d->layout.batch = d->layout.batch > 1 ? d->layout.batch : 1;
    d->b_values_at = SIZE_MAX; /* none decoded yet */
    const size_t e = (size_t)pj_matmul_type_bytes(dtype);
    ptxjit_status status = spans(d, b_nk);
    if (status != PTXJIT_OK)
        return status;
    float *values = malloc((d->span_a > d->span_b ? d->span_a : d->span_b) * sizeof *values);
    d->a = malloc(d->span_a * e);
    d->b = malloc(d->span_b * e);
    status = values && d->a && d->b ? PTXJIT_OK
                                    : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of host memory");
    for (int which = 0; which < 2 && status == PTXJIT_OK; which++) {
        size_t count = which == 0 ? d->span_a : d->span_b;
        random_f32(values, count); /* [-1, 1), a fresh seed each time; the gaps too */
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
        status = ptxjit_alloc(&d->da, context, d->span_a * e);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&d->db, context, d->span_b * e);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&d->dc, context, d->span_c * 4); /* room for any output type */
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, d->da, d->a, d->span_a * e);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, d->db, d->b, d->span_b * e);
    return status;
}

void cli_matmul_data_free(matmul_data *d)
{
    free(d->a);
    free(d->b);
    free(d->b_values);
    free(d->bias);
    free(d->c_poison);
    if (d->dbias)
        ptxjit_free(d->context, d->dbias);
    if (d->da)
        ptxjit_free(d->context, d->da);
    if (d->db)
        ptxjit_free(d->context, d->db);
    if (d->dc)
        ptxjit_free(d->context, d->dc);
}

int cli_matmul_has_gaps(const matmul_data *d)
{
    /* C's matrices never overlap (the library refuses it), so its buffer holds more elements
     * than the products exactly when some lie outside them. */
    return (unsigned __int128)d->span_c >
           (unsigned __int128)d->layout.batch * d->m * d->n;
}

/* C's buffer NaN (0xff: NaN in every output type) with the products' elements zeros where
 * beta=scaled reads them (beta 0 would still turn NaN into NaN), from a host image that
 * cli_matmul_gap_written compares with. The copy is synchronous: done before any later run. */
static ptxjit_status poison_around(matmul_data *d, const matmul_config *config)
{
    const size_t e = config ? (size_t)pj_dtype_bytes(config->out) : 4;
    const pj_matmul_layout l = resolved(d, d->b_nk);
    free(d->c_poison);
    d->c_poison = malloc(d->span_c * e);
    d->c_poison_bytes = (int)e;
    if (!d->c_poison)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of host memory");
    memset(d->c_poison, 0xff, d->span_c * e);
    for (size_t p = 0; config && config->beta && p < l.batch; p++)
        for (size_t r = 0; r < d->m; r++)
            memset(d->c_poison + (p * l.stride_c + r * l.ldc) * e, 0, d->n * e);
    return ptxjit_copy_to_device(d->context, d->dc, d->c_poison, d->span_c * e);
}

/* NaN in every output byte pattern: an element the kernel never writes cannot pass. Zeros
 * where beta=scaled reads C (beta 0 would still turn NaN into NaN). */
ptxjit_status cli_matmul_poison(matmul_data *d, const matmul_config *config, void *stream)
{
    const unsigned char fill = config && config->beta ? 0 : 0xff;
    if (cli_matmul_has_gaps(d))
        return poison_around(d, config);
    return ptxjit_memset_d8_async(d->context, d->dc, fill, d->span_c * 4, stream);
}

/* The first element from `from` to `to` (exclusive) of e bytes where got and want differ, or
 * SIZE_MAX. */
static size_t first_difference(const unsigned char *got, const unsigned char *want, size_t from,
                               size_t to, size_t e)
{
    if (from >= to || memcmp(got + from * e, want + from * e, (to - from) * e) == 0)
        return SIZE_MAX;
    for (size_t i = from; i < to; i++)
        if (memcmp(got + i * e, want + i * e, e) != 0)
            return i;
    return SIZE_MAX;
}

ptxjit_status cli_matmul_gap_written(size_t *written, matmul_data *d)
{
    *written = SIZE_MAX;
    if (!d->c_poison)
        return PTXJIT_OK;
    const size_t e = (size_t)d->c_poison_bytes;
    const pj_matmul_layout l = resolved(d, d->b_nk);
    unsigned char *got = malloc(d->span_c * e);
    ptxjit_status status = got ? ptxjit_copy_to_host(d->context, got, d->dc, d->span_c * e)
                               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of host memory");
    /* The products' rows follow one another through the buffer (C's matrices never overlap):
     * the gaps are what lies between one row's end and the next row's start. */
    size_t gap = 0;
    for (size_t p = 0; p < l.batch && status == PTXJIT_OK && *written == SIZE_MAX; p++)
        for (size_t r = 0; r < d->m && *written == SIZE_MAX; r++) {
            const size_t row = p * l.stride_c + r * l.ldc;
            *written = first_difference(got, d->c_poison, gap, row, e);
            gap = row + d->n;
        }
    if (status == PTXJIT_OK && *written == SIZE_MAX)
        *written = first_difference(got, d->c_poison, gap, d->span_c, e);
    free(got);
    return status;
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

/* Product p's B as dense floats in d->b_values (decoded where it holds another), or NULL
 * without memory for it. */
static const float *product_b(matmul_data *d, const pj_matmul_layout *l, size_t p, int b_nk)
{
    const size_t b_rows = b_nk ? d->n : d->k, b_cols = b_nk ? d->k : d->n;
    const size_t at = p * l->stride_b;
    const int layout = d->layout.ldb ? b_nk : 0; /* dense rows read alike in both layouts */
    if (!d->b_values && !(d->b_values = malloc(d->k * d->n * sizeof *d->b_values)))
        return NULL;
    if (d->b_values_at == at && d->b_values_nk == layout)
        return d->b_values;
    for (size_t r = 0; r < b_rows; r++)
        for (size_t c = 0; c < b_cols; c++)
            d->b_values[r * b_cols + c] =
                (float)pj_matmul_element(d->b, d->dtype, at + r * l->ldb + c);
    d->b_values_at = at, d->b_values_nk = layout;
    return d->b_values;
}

/* Row `row` of product p of the float64 reference: its B decoded once into floats, so that a
 * row of an 8192³ product costs a pass over B rather than a conversion per element
 * (pj_matmul_reference_row_layout's way, the fallback without memory for it where B's rows
 * are dense; NaN, which fails the check, where they are not). */
static void reference_row(double *out, matmul_data *d, const pj_matmul_layout *l, size_t p,
                          size_t row, int b_nk)
{
    const size_t n = d->n, k = d->k, e = (size_t)pj_matmul_type_bytes(d->dtype);
    const size_t a_at = p * l->stride_a + row * l->lda;
    const float *b = product_b(d, l, p, b_nk);
    double *a = malloc(k * sizeof *a);
    if (!b || !a) {
        free(a);
        if (l->ldb == (b_nk ? k : n))
            pj_matmul_reference_row_layout(out, (const unsigned char *)d->a + a_at * e,
                                           (const unsigned char *)d->b + p * l->stride_b * e,
                                           d->dtype, n, k, 0, b_nk);
        else
            for (size_t j = 0; j < n; j++)
                out[j] = NAN;
        return;
    }
    for (size_t q = 0; q < k; q++)
        a[q] = pj_matmul_element(d->a, d->dtype, a_at + q);
    for (size_t j = 0; j < n; j++)
        out[j] = 0;
    if (b_nk) { /* B's column j is row j of its transpose */
        for (size_t j = 0; j < n; j++) {
            double sum = 0;
            for (size_t q = 0; q < k; q++)
                sum += a[q] * b[j * k + q];
            out[j] = sum;
        }
    } else {
        for (size_t q = 0; q < k; q++)
            for (size_t j = 0; j < n; j++)
                out[j] += a[q] * b[q * n + j];
    }
    free(a);
}

/* The products a check covers: every one while their sampled rows cost at most about 1e9
 * multiply-adds, else as many as do (at least the first and the last). */
static size_t products_checked(size_t batch, size_t rows, size_t n, size_t k)
{
    const double each = (double)rows * (double)n * (double)k;
    if ((double)batch * each <= 1e9)
        return batch;
    const size_t count = (size_t)(1e9 / each);
    return count >= 2 ? count : batch < 2 ? batch : 2;
}

/* The i-th of count samples of 0 .. total - 1: all of them where count is total, else the
 * first, the last and evenly between. */
static size_t spread(size_t i, size_t count, size_t total)
{
    return count >= total ? i : i == 0 ? 0 : i == count - 1 ? total - 1 : i * total / count;
}

/* ‖C − C_ref‖ / ‖C_ref‖ over every row (small products) or 8 rows (first, last, 6 spread) of
 * the products checked, with the reference in float64; NaN if any sampled element is not
 * finite. */
double cli_matmul_relative_error(matmul_data *d, pj_dtype out, int b_nk, const matmul_config *config)
{
    const size_t e = (size_t)pj_dtype_bytes(out);
    const pj_matmul_layout l = resolved(d, b_nk);
    const int all = (double)l.batch * (double)d->m * (double)d->n * (double)d->k <= 1e9;
    const size_t rows = all || d->m < 8 ? d->m : 8;
    const size_t products = products_checked(l.batch, rows, d->n, d->k);
    double *want = malloc(d->n * sizeof *want);
    unsigned char *got = malloc(d->n * e);
    double diff = want && got ? 0 : NAN, norm = 0;
    for (size_t q = 0; q < products && !isnan(diff); q++) {
        const size_t p = spread(q, products, l.batch);
        for (size_t i = 0; i < rows && !isnan(diff); i++) {
            const size_t row = all || i == 0 ? i : i == rows - 1 ? d->m - 1 : i * d->m / rows;
            const size_t at = p * l.stride_c + row * l.ldc;
            if (ptxjit_copy_to_host(d->context, got, d->dc + at * e, d->n * e) != PTXJIT_OK) {
                diff = NAN;
                break;
            }
            reference_row(want, d, &l, p, row, b_nk);
            if (config) /* the epilogue: its defaults (alpha 1, beta 0, scales 1), the bias */
                pj_matmul_reference_epilogue(want, d->n, config, NULL, want, d->bias);
            for (size_t j = 0; j < d->n; j++) {
                double g = pj_matmul_element(got, out, j), delta = g - want[j];
                diff = isfinite(g) ? diff + delta * delta : NAN;
                norm += want[j] * want[j];
            }
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
        status = time_median_ms_flushed(&out->ms, d->context, cli_matmul_once, job, 1,
                                        runs_for(first, runs), d->flush);
    if (status != PTXJIT_OK)
        return status;
    out->error = cli_matmul_relative_error(d, result_type, job->b_nk, job->config); /* the last run's */
    out->correct = out->error <= tolerance; /* false for NaN */
    out->tflops = 2.0 * (double)d->layout.batch * d->m * d->n * d->k / (out->ms * 1e9);
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
    cli_chart_bar(name, r->tflops * 1e3, writeup);
}

/* The configuration of the kernel the op takes for params on d's shape (*fitted: the tile it
 * fitted to every product's rows, or NULL), checked to take the table's input type. */
ptxjit_status cli_matmul_config_for(matmul_config *config, const pj_matmul_fit_tile **fitted,
                                const matmul_data *d, const char *params)
{
    ptxjit_kernel *kernel;
    const size_t rows = (size_t)pj_matmul_plan_rows(d->m, &d->layout);
    ptxjit_status status =
        pj_matmul_fit(&kernel, config, fitted, d->context, params, rows, d->n, d->k);
    if (status == PTXJIT_OK && config->dtype != d->dtype)
        status = pj_error(PTXJIT_ERR_PARAM, "bench matmul: '%s' takes %s, this table is %s",
                          params, pj_matmul_type_name(config->dtype),
                          pj_matmul_type_name(d->dtype));
    return status;
}

/* op.c — the softmax family's host op: the configuration of a request, the checks a launch
 * must pass (each error says what to change), the launch (tpb threads a block, tpb / tpr rows
 * a block, no dynamic shared memory), the float64 reference, and the family's descriptor. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "families/softmax/fit.h"
#include "families/softmax/op.h"
#include "request/plan.h"
#include "util/nvtx.h"

ptxjit_status pj_softmax_config_from(softmax_config *out, const pj_request *request)
{
    const pj_param_reader reader = pj_request_reader(request);
    const pj_decode_result decoded = pj_softmax_decode(out, &reader);
    if (decoded.code == PJ_DECODE_DTYPE)
        return pj_error(PTXJIT_ERR_TEMPLATE, "softmax template %s has dtype '%s'; the softmax "
                        "op takes f32, f16 and bf16", request->schema->origin, decoded.name);
    return decoded.code == PJ_DECODED ? PTXJIT_OK : pj_decode_refusal(&decoded, request);
}

ptxjit_status pj_softmax_config_of(softmax_config *out, const ptxjit_kernel *kernel)
{
    return pj_softmax_config_from(out, &kernel->request);
}

static ptxjit_status softmax_geometry(pj_geometry *out, const pj_request *request)
{
    softmax_config config;
    ptxjit_status status = pj_softmax_config_from(&config, request);
    if (status == PTXJIT_OK)
        *out = (pj_geometry){(unsigned)pj_softmax_threads(&config.shape),
                             pj_softmax_shared_bytes(&config.shape)};
    return status;
}

/* A configuration of variant=online that holds rows of cols elements with this dtype's vec:
 * more items first (up to 128 bytes a thread), then more threads per row. 0 if none does
 * (over 1024 threads x 128 bytes). */
static int online_fix(softmax_shape *fix, const softmax_shape *s, uint64_t cols)
{
    *fix = *s;
    const int most_items = 128 / (s->vec * s->element_bytes);
    for (int tpr = s->tpr; tpr <= 1024; tpr *= 2) {
        uint64_t per_round = (uint64_t)tpr * (uint64_t)s->vec;
        uint64_t items = (cols + per_round - 1) / per_round;
        if (items <= (uint64_t)most_items) {
            fix->tpr = tpr;
            fix->items = (int)items;
            fix->tpb = s->tpb > tpr ? s->tpb : tpr;
            return 1;
        }
    }
    return 0;
}

ptxjit_status pj_softmax_check(const softmax_config *config, uint64_t input, uint64_t output,
                               size_t rows, size_t cols)
{
    const softmax_shape *s = &config->shape;
    const uint64_t e = (uint64_t)s->element_bytes;
    if (rows == 0 || cols == 0)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "softmax: rows and cols must be at least 1 (got %zu x %zu)", rows, cols);
    if (!input || !output || input % e || output % e)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "softmax: input (0x%llx) and output (0x%llx) must be non-null device "
                        "addresses aligned to the %d-byte %s element",
                        (unsigned long long)input, (unsigned long long)output, (int)e,
                        pj_dtype_name(config->dtype));
    if ((uint64_t)cols > PJ_SOFTMAX_MAX_COLS)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "softmax: rows of %zu elements are longer than the kernels index "
                        "(2^31 - 1 elements); split the rows", cols);
    if ((uint64_t)cols > pj_softmax_max_cols(s)) {
        softmax_shape fix;
        char hint[96] = "";
        if (online_fix(&fix, s, cols))
            snprintf(hint, sizeof hint, ", or a longer register row: tpb=%d tpr=%d items=%d",
                     fix.tpb, fix.tpr, fix.items);
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "softmax: variant=online holds rows of at most tpr * vec * items = "
                        "%d * %d * %d = %llu elements, not %zu; use variant=block (any "
                        "length)%s",
                        s->tpr, s->vec, s->items, (unsigned long long)pj_softmax_max_cols(s),
                        cols, hint);
    }
    uint64_t blocks = pj_softmax_grid(s, rows);
    if (blocks > PJ_SOFTMAX_MAX_BLOCKS)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "softmax: %zu rows need %llu blocks of %d rows, over the grid's limit of "
                        "2^31 - 1; raise tpb / tpr (rows per block) or split the matrix",
                        rows, (unsigned long long)blocks, pj_softmax_rows_per_block(s));
    if ((uint64_t)rows > UINT64_MAX / (uint64_t)cols / e)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "softmax: %zu x %zu elements are more bytes than an address holds", rows,
                        cols);
    uint64_t bytes = (uint64_t)rows * (uint64_t)cols * e;
    if (input != output && input < output + bytes && output < input + bytes)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "softmax: input and output overlap without being the same buffer; pass "
                        "one buffer for both (in place) or two that do not overlap");
    return PTXJIT_OK;
}

static ptxjit_status softmax_op(ptxjit_context *context, const char *params, ptxjit_devptr input,
                                ptxjit_devptr output, size_t rows, size_t cols, void *stream)
{
    ptxjit_kernel *kernel;
    softmax_config config;
    const uint64_t sizes[] = {rows, cols};
    ptxjit_status status =
        pj_plan_get_kernel(&kernel, NULL, context, &pj_family_softmax, params, sizes);
    if (status == PTXJIT_OK)
        status = pj_softmax_config_of(&config, kernel);
    if (status == PTXJIT_OK)
        status = pj_softmax_check(&config, input, output, rows, cols);
    if (status != PTXJIT_OK)
        return status;
    /* One launch: ptxjit_launch makes the CUDA context current and puts the caller's back. */
    CUdeviceptr in = input, out = output;
    unsigned long long row_count = rows;
    unsigned col_count = (unsigned)cols;
    void *args[] = {&in, &out, &row_count, &col_count};
    ptxjit_dim3 grid = {(unsigned)pj_softmax_grid(&config.shape, rows), 1, 1};
    ptxjit_dim3 block = {(unsigned)pj_softmax_threads(&config.shape), 1, 1};
    return ptxjit_launch(kernel, NULL, grid, block, pj_softmax_shared_bytes(&config.shape),
                         stream, args);
}

ptxjit_status ptxjit_softmax(ptxjit_context *context, const char *params, ptxjit_devptr input,
                             ptxjit_devptr output, size_t rows, size_t cols, void *stream)
{
    pj_nvtx_push_name("ptxjit softmax");
    ptxjit_status status = softmax_op(context, params, input, output, rows, cols, stream);
    pj_nvtx_pop();
    return status;
}

double pj_softmax_element(const void *data, pj_dtype dtype, size_t index)
{
    if (dtype == PJ_DTYPE_f32)
        return ((const float *)data)[index];
    const uint16_t h = ((const uint16_t *)data)[index];
    if (dtype == PJ_DTYPE_bf16) {
        /* bf16 is the upper half of an f32. */
        uint32_t wide = (uint32_t)h << 16;
        float f;
        memcpy(&f, &wide, sizeof f);
        return f;
    }
    /* f16: 1 sign bit, 5 exponent bits (bias 15), 10 fraction bits. */
    const int exponent = (h >> 10) & 0x1f, fraction = h & 0x3ff;
    double magnitude;
    if (exponent == 0x1f)
        magnitude = fraction ? NAN : INFINITY;
    else if (exponent == 0)
        magnitude = ldexp((double)fraction, -24);
    else
        magnitude = ldexp((double)(fraction | 0x400), exponent - 25);
    return (h & 0x8000) ? -magnitude : magnitude;
}

/* An f32's bits rounded to the upper 16 (nearest, ties to even). */
static uint16_t bf16_bits(float value)
{
    uint32_t u;
    memcpy(&u, &value, sizeof u);
    const uint32_t lower = u & 0xffffu, upper = u >> 16;
    const uint32_t up = lower > 0x8000u || (lower == 0x8000u && (upper & 1u));
    return (uint16_t)(upper + up);
}

/* A finite float rounded to f16 (nearest, ties to even): counted in units of the f16 spacing
 * at its magnitude, which nearbyint rounds as the FPU does. */
static uint16_t f16_bits(float value)
{
    const uint16_t sign = signbit(value) ? 0x8000 : 0;
    double magnitude = fabs((double)value);
    if (magnitude >= 65520.0) /* rounds past the largest f16, 65504 */
        return sign | 0x7c00;
    int exponent = magnitude > 0 ? ilogb(magnitude) : -25;
    if (exponent < -14)
        exponent = -14; /* the subnormals share the spacing of the smallest normals */
    const double units = nearbyint(ldexp(magnitude, 10 - exponent)); /* 2^(exponent - 10) each */
    /* units is 0..2048; 2048 (rounded up to the next power) carries into the exponent. */
    const uint32_t bits = exponent == -14 && units < 1024
                              ? (uint32_t)units
                              : ((uint32_t)(exponent + 15) << 10) + (uint32_t)units - 1024u;
    return sign | (uint16_t)bits;
}

void pj_softmax_set_element(void *data, pj_dtype dtype, size_t index, float value)
{
    if (dtype == PJ_DTYPE_f32)
        ((float *)data)[index] = value;
    else
        ((uint16_t *)data)[index] = dtype == PJ_DTYPE_bf16 ? bf16_bits(value) : f16_bits(value);
}

void pj_softmax_reference(double *out_row, const void *in_row, pj_dtype dtype, size_t cols)
{
    double max = -INFINITY;
    for (size_t c = 0; c < cols; c++) {
        out_row[c] = pj_softmax_element(in_row, dtype, c);
        if (out_row[c] > max)
            max = out_row[c];
    }
    double sum = 0;
    for (size_t c = 0; c < cols; c++) {
        out_row[c] = exp(out_row[c] - max);
        sum += out_row[c];
    }
    for (size_t c = 0; c < cols; c++)
        out_row[c] /= sum;
}

softmax_tolerance pj_softmax_tolerance(pj_dtype dtype)
{
    switch (dtype) {
    case PJ_DTYPE_bf16:
        return (softmax_tolerance){0x1p-8 + 1e-5, 0x1p-126};
    case PJ_DTYPE_f16:
        return (softmax_tolerance){0x1p-11 + 1e-5, 0x1p-25};
    default:
        return (softmax_tolerance){1e-5, 0x1p-126};
    }
}

/* The configurations `ptxjit bench softmax` times, one dtype each; the bench takes those that
 * hold its row (online: registers for 1 to 4 times the row; block: any row). The fastest
 * measured on the H100 at 1024, 4096 and 16384 (each within 1% of the copy there, and of the
 * others), and the defaults. Best on 2026-11-24, GB/s with the copy at 3023: f32 3037 (1024,
 * the defaults), 3019 (4096, 512 threads a row, 2 items), 3029 (16384, block with 1024
 * threads); bf16 3022 (1024, 128 threads, 1 item), 3010 (4096, 256 threads, 2 items), 3014
 * (16384, block with 512 threads, 8 items). */
static const char *const bench_sets[] = {
    /* f32, vec=4 */
    "dtype=f32", /* the defaults, fitted to the row by the op (fit.c) */
    "dtype=f32 tpb=256 tpr=256 items=1",
    "dtype=f32 tpb=128 tpr=128 items=8", /* the defaults' own threads */
    "dtype=f32 tpb=512 tpr=512 items=2",
    "dtype=f32 tpb=1024 tpr=1024 items=4",
    "dtype=f32 tpb=512 tpr=512 items=8",
    "dtype=f32 variant=block tpb=1024 tpr=1024 items=4",
    /* bf16, vec=8 */
    "dtype=bf16", /* the defaults, fitted to the row */
    "dtype=bf16 tpb=128 tpr=128 items=1",
    "dtype=bf16 tpb=128 tpr=64 items=2",
    "dtype=bf16 tpb=256 tpr=64 items=8", /* the defaults' own threads */
    "dtype=bf16 tpb=512 tpr=128 items=4",
    "dtype=bf16 tpb=256 tpr=256 items=2",
    "dtype=bf16 tpb=1024 tpr=1024 items=2",
    "dtype=bf16 tpb=512 tpr=512 items=4",
    "dtype=bf16 variant=block tpb=512 tpr=512 items=8",
    "dtype=bf16 variant=block tpb=1024 tpr=1024 items=2",
    NULL};

/* ---- ptxjit_tune: a random matrix, the output compared with the reference's ---- */

static const char *const problem_names[] = {"rows", "cols", NULL};

/* What ptxjit_softmax would refuse of this shape (a row longer than online holds, the grid),
 * on two aligned buffers that do not overlap. */
static ptxjit_status tune_admits(const pj_request *request, const uint64_t *v)
{
    softmax_config config;
    ptxjit_status status = pj_softmax_config_from(&config, request);
    return status == PTXJIT_OK ? pj_softmax_check(&config, 256, 256, (size_t)v[0], (size_t)v[1])
                               : status;
}

static pj_tune_kind kind_of(pj_dtype dtype)
{
    return dtype == PJ_DTYPE_bf16 ? PJ_TUNE_BF16 : dtype == PJ_DTYPE_f16 ? PJ_TUNE_F16
                                                                          : PJ_TUNE_F32;
}

/* The input and the output. Each output is within the family's tolerance of the float64
 * softmax, so two outputs are within twice it of each other. */
static ptxjit_status tune_buffers(pj_tune_buffer *out, int *count, const pj_request *reference,
                                  const uint64_t *v)
{
    softmax_config config;
    ptxjit_status status = pj_softmax_config_from(&config, reference);
    if (status != PTXJIT_OK)
        return status;
    const uint64_t elements = v[0] * v[1];
    const size_t bytes = elements * (size_t)pj_dtype_bytes(config.dtype);
    const softmax_tolerance tolerance = pj_softmax_tolerance(config.dtype);
    out[0] = (pj_tune_buffer){.role = PJ_TUNE_INPUT, .bytes = bytes,
                              .kind = kind_of(config.dtype), .count = elements, .seed = 5};
    out[1] = (pj_tune_buffer){.role = PJ_TUNE_OUTPUT, .bytes = bytes,
                              .kind = kind_of(config.dtype), .count = elements,
                              .rel = 2 * tolerance.rel, .abs = 2 * tolerance.abs,
                              .what = "the softmax"};
    *count = 2;
    return PTXJIT_OK;
}

static ptxjit_status tune_run(ptxjit_context *context, ptxjit_kernel *kernel,
                              const ptxjit_devptr *buffers, const uint64_t *v, void *stream)
{
    return ptxjit_softmax(context, kernel->canonical, buffers[0], buffers[1], v[0], v[1], stream);
}

static ptxjit_status tune_types(char out[64], const pj_request *request)
{
    softmax_config config;
    ptxjit_status status = pj_softmax_config_from(&config, request);
    if (status == PTXJIT_OK)
        snprintf(out, 64, "dtype %s", pj_dtype_name(config.dtype));
    return status;
}

static const pj_family_tune tune_ops = {
    .problem_names = problem_names,
    .empty_l2 = PJ_TUNE_EMPTY_ALWAYS,
    .admits = tune_admits,
    .buffers = tune_buffers,
    .run = tune_run,
    .types = tune_types,
    .fix_types = "dtype (a fixed parameter)",
};

/* variant=block reads a row in chunks, twice: rows of any length. */
static const char *const shape_fallbacks[] = {"variant=block", NULL};

const pj_family pj_family_softmax = {
    "softmax", PJ_VARIANT_LIST_TEXT(PJ_SOFTMAX_VARIANTS), PJ_SOFTMAX_LLVM_VERSION,
    PJ_SOFTMAX_LLVM_VARIANTS, softmax_geometry, bench_sets, &tune_ops, shape_fallbacks,
    pj_softmax_fit_words, NULL,
};

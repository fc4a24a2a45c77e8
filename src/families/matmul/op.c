/* op.c — the matmul family's host op: a 1-D grid of output tiles (the kernel maps each block to
 * its tile); the tensor_core and wgmma variants get dynamic shared memory, wgmma and
 * tensor_core with load=tma also two tensor maps (A K-major, B N-major, swizzled boxes). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "families/matmul/op.h"
#include "tune/check.h"
#include "tune/tune.h"

static const char *const variant_names[] = {
#define PJ_VARIANT_NAME(name, id) #name,
    PJ_MATMUL_VARIANTS(PJ_VARIANT_NAME)
#undef PJ_VARIANT_NAME
};

static ptxjit_status config_from(matmul_config *out, const pj_request *request)
{
    const pj_schema *schema = request->schema;
    char buf[32];
    static const char *const needed[] = {"variant", "dtype", "out", "mma", "bm", "bn", "bk",
                                         "tm", "tn", "wm", "wn", "stages", "consumers"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(needed); i++)
        if (pj_schema_param_index(schema, needed[i]) < 0)
            return pj_error(PTXJIT_ERR_TEMPLATE,
                            "matmul template %s lacks '%s', which the matmul op needs; launch "
                            "it with ptxjit_launch instead",
                            schema->origin, needed[i]);
    const char *variant = pj_request_value_name(request, "variant", buf);
    out->variant =
        (matmul_variant)pj_variant_index(PJ_VARIANT_LIST_TEXT(PJ_MATMUL_VARIANTS), variant);
    if ((int)out->variant < 0)
        return pj_error(PTXJIT_ERR_TEMPLATE, "matmul template %s has variant '%s', which the "
                        "matmul op does not know", schema->origin, variant);
    out->dtype = (pj_dtype)pj_dtype_from_name(pj_request_value_name(request, "dtype", buf));
    out->out = (pj_dtype)pj_dtype_from_name(pj_request_value_name(request, "out", buf));
    out->bm = (int)pj_request_value(request, "bm");
    out->bk = out->variant == MATMUL_WGMMA ? 64 : (int)pj_request_value(request, "bk");
    out->stages = (int)pj_request_value(request, "stages");
    const int bn = (int)pj_request_value(request, "bn");
    /* The mma list is m16n8k8, then m64nNk16 for N = 8, 16, ...: value i is N = 8 i. */
    out->tile_n = out->variant == MATMUL_WGMMA ? 8 * (int)pj_request_value(request, "mma") : bn;
    /* wgmma's cluster (1 where a template lacks it). */
    out->cluster = out->variant == MATMUL_WGMMA && pj_schema_param_index(schema, "cluster") >= 0
                       ? (int)pj_request_value(request, "cluster") : 1;
    /* tensor_core's load=tma (a parameter that older templates may lack: cp_async then). */
    out->tma = out->variant == MATMUL_TENSOR_CORE && pj_schema_param_index(schema, "load") >= 0 &&
               strcmp(pj_request_value_name(request, "load", buf), "tma") == 0;
    const pj_matmul_tile tile = {
        out->variant, out->bm, out->tile_n, out->bk,
        (int)pj_request_value(request, "tm"), (int)pj_request_value(request, "tn"),
        (int)pj_request_value(request, "wm"), (int)pj_request_value(request, "wn"),
        (int)pj_request_value(request, "consumers"), out->stages, out->tma};
    out->threads = pj_matmul_threads(&tile);
    out->shared_bytes = pj_matmul_shared_bytes(&tile);
    return PTXJIT_OK;
}

ptxjit_status pj_matmul_config_of(matmul_config *out, const ptxjit_kernel *kernel)
{
    return config_from(out, &kernel->request);
}

/* Blocks of the grid: the tiles of C, row tiles rounded up to whole clusters. */
uint64_t pj_matmul_blocks(const matmul_config *config, size_t m, size_t n)
{
    uint64_t rows = (uint64_t)config->bm * (uint64_t)config->cluster;
    return ((uint64_t)m + rows - 1) / rows * (uint64_t)config->cluster *
           (((uint64_t)n + config->tile_n - 1) / config->tile_n);
}

static ptxjit_status shape_error(const matmul_config *config, const char *rule, const char *fix)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "matmul: variant=%s %s; %s",
                    variant_names[config->variant], rule, fix);
}

ptxjit_status pj_matmul_check_shape(const matmul_config *config, uint64_t a, uint64_t b, uint64_t c,
                                 size_t m, size_t n, size_t k)
{
    const uint64_t in = (uint64_t)pj_dtype_bytes(config->dtype), out = (uint64_t)pj_dtype_bytes(config->out);
    if (m == 0 || n == 0 || k == 0 || !a || !b || !c)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "matmul: m, n and k must be at least 1 and a, b, c device addresses");
    if (m > 0x7fffffff || n > 0x7fffffff || k > 0x7fffffff)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "matmul: %zu x %zu x %zu is beyond the kernels' 32-bit sizes (at most "
                        "2^31 - 1 each)", m, n, k);
    if (a % in || b % in || c % out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "matmul: a, b and c must be aligned to their elements");
    if (config->variant == MATMUL_TENSOR_CORE &&
        (k % 4 || n % 4 || a % 16 || b % 16 || c % 8))
        return shape_error(config, "copies A and B in 16-byte pieces: it needs k and n "
                           "multiples of 4 and 16-byte aligned a and b (8-byte aligned c)",
                           "pad k and n, or use variant=block_tiled_vectorized (any shape)");
    if (config->variant == MATMUL_WGMMA &&
        (k % 8 || n % 8 || a % 16 || b % 16 || c % (2 * out)))
        return shape_error(config, "loads A and B with TMA: it needs k and n multiples of 8 "
                           "(rows of 16 bytes) and 16-byte aligned a and b",
                           "pad k and n to multiples of 8 (any m works)");
    uint64_t tiles = pj_matmul_blocks(config, m, n);
    if (tiles > 0x7fffffff)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "matmul: %zu x %zu needs %llu tiles, over the grid's limit; raise bm "
                        "or bn", m, n, (unsigned long long)tiles);
    return PTXJIT_OK;
}

/* A row-major rows x cols matrix in boxes of box_rows x box_cols, each box row of
 * box_cols elements (32, 64 or 128 bytes) swizzled over its own span. */
static ptxjit_status encode(CUtensorMap *map, const pj_driver *d, pj_dtype dtype, uint64_t address,
                            uint64_t rows, uint64_t cols, uint32_t box_cols, uint32_t box_rows)
{
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {cols * (uint64_t)pj_dtype_bytes(dtype)};
    cuuint32_t box[2] = {box_cols, box_rows}, element_strides[2] = {1, 1};
    CUtensorMapDataType type = dtype == PJ_DTYPE_f32    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                               : dtype == PJ_DTYPE_bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                        : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    uint32_t span = box_cols * (uint32_t)pj_dtype_bytes(dtype);
    CUtensorMapSwizzle swizzle = span == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                              : CU_TENSOR_MAP_SWIZZLE_32B;
    /* Out-of-bounds elements arrive as zeros, which add nothing: ragged tiles need no care. */
    return PJ_CU(d->cuTensorMapEncodeTiled(map, type, 2, (void *)(uintptr_t)address, dims, strides,
                                           box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                           swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                 "cuTensorMapEncodeTiled");
}

/* The product's tensor maps and launch, with the context's CUDA context current. */
static ptxjit_status matmul_entered(ptxjit_kernel *kernel, const matmul_config *config,
                                    ptxjit_devptr a, ptxjit_devptr b, ptxjit_devptr c, size_t m,
                                    size_t n, size_t k, void *stream)
{
    ptxjit_context *context = kernel->context;
    ptxjit_status status = pj_matmul_check_shape(config, a, b, c, m, n, k);
    if (status != PTXJIT_OK)
        return status;
    CUtensorMap a_map, b_map;
    memset(&a_map, 0, sizeof a_map);
    memset(&b_map, 0, sizeof b_map);
    if (config->variant == MATMUL_WGMMA) {
        /* A: boxes of 64 k (128 bytes) x bm rows; B: boxes of 64 columns x 64 k rows. */
        status = encode(&a_map, context->driver, config->dtype, a, m, k, 64, (uint32_t)config->bm);
        if (status == PTXJIT_OK)
            status = encode(&b_map, context->driver, config->dtype, b, k, n, 64, 64);
        if (status != PTXJIT_OK)
            return status;
    } else if (config->tma) {
        /* tensor_core: A in boxes of bk columns x bm rows, B of 32 columns x bk rows. */
        status = encode(&a_map, context->driver, config->dtype, a, m, k, (uint32_t)config->bk,
                        (uint32_t)config->bm);
        if (status == PTXJIT_OK)
            status = encode(&b_map, context->driver, config->dtype, b, k, n, 32,
                            (uint32_t)config->bk);
        if (status != PTXJIT_OK)
            return status;
    }
    CUdeviceptr pa = a, pb = b, pc = c;
    int im = (int)m, in = (int)n, ik = (int)k;
    void *args[] = {&pa, &pb, &pc, &im, &in, &ik, &a_map, &b_map};
    ptxjit_dim3 grid = {(unsigned)pj_matmul_blocks(config, m, n), 1, 1};
    ptxjit_dim3 block = {(unsigned)config->threads, 1, 1};
    ptxjit_dim3 cluster = {(unsigned)config->cluster, 1, 1};
    return ptxjit_launch_cluster(kernel, NULL, grid, block, cluster, config->shared_bytes, stream,
                                 args);
}

ptxjit_status ptxjit_matmul(ptxjit_context *context, const char *params, ptxjit_devptr a,
                            ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n, size_t k,
                            void *stream)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    CUcontext saved;
    char problem[96] = "";
    if (pj_tune_has_auto(params)) /* PARAM=auto: the winner tuned for this shape */
        snprintf(problem, sizeof problem, "m=%zu n=%zu k=%zu", m, n, k);
    ptxjit_status status = pj_tune_get_kernel(&kernel, context, "matmul", params, problem, NULL);
    if (status == PTXJIT_OK)
        status = pj_matmul_config_of(&config, kernel);
    if (status == PTXJIT_OK)
        status = pj_gpu_enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = matmul_entered(kernel, &config, a, b, c, m, n, k, stream);
    pj_gpu_leave(context, saved);
    return status;
}

double pj_matmul_element(const void *data, pj_dtype dtype, size_t index)
{
    if (dtype == PJ_DTYPE_f32)
        return ((const float *)data)[index];
    uint16_t bits = ((const uint16_t *)data)[index];
    if (dtype == PJ_DTYPE_bf16) {
        uint32_t wide = (uint32_t)bits << 16;
        float value;
        memcpy(&value, &wide, sizeof value);
        return value;
    }
    /* IEEE half: sign, 5-bit exponent (bias 15), 10-bit fraction. */
    int exponent = (bits >> 10) & 31, fraction = bits & 1023;
    double magnitude = exponent == 0    ? ldexp(fraction, -24)
                       : exponent == 31 ? (fraction ? NAN : INFINITY)
                                        : ldexp(1024 + fraction, exponent - 25);
    return bits & 0x8000 ? -magnitude : magnitude;
}

/* float → the upper 16 bits, rounded to nearest even (inputs are finite). */
static uint16_t to_bf16(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    bits += 0x7fff + ((bits >> 16) & 1);
    return (uint16_t)(bits >> 16);
}

/* float → IEEE half, rounded to nearest even, for finite values of at most 65504. */
static uint16_t to_f16(float value)
{
    uint16_t sign = value < 0 ? 0x8000 : 0;
    double magnitude = fabs((double)value);
    if (magnitude < ldexp(1, -14)) /* subnormal: units of 2^-24 */
        return sign | (uint16_t)nearbyint(magnitude * ldexp(1, 24));
    int exponent;
    double fraction = frexp(magnitude, &exponent); /* [0.5, 1) x 2^exponent */
    double scaled = nearbyint(fraction * 2048);    /* 11 significant bits */
    if (scaled == 2048) {
        scaled = 1024;
        exponent++;
    }
    return sign | (uint16_t)((exponent + 14) << 10) | (uint16_t)((int)scaled - 1024);
}

void pj_matmul_set_element(void *data, pj_dtype dtype, size_t index, float value)
{
    if (dtype == PJ_DTYPE_f32)
        ((float *)data)[index] = value;
    else
        ((uint16_t *)data)[index] = dtype == PJ_DTYPE_bf16 ? to_bf16(value) : to_f16(value);
}

void pj_matmul_reference_row(double *out, const void *a, const void *b, pj_dtype dtype, size_t n,
                          size_t k, size_t row)
{
    for (size_t j = 0; j < n; j++)
        out[j] = 0;
    for (size_t p = 0; p < k; p++) {
        double x = pj_matmul_element(a, dtype, row * k + p);
        for (size_t j = 0; j < n; j++)
            out[j] += x * pj_matmul_element(b, dtype, p * n + j);
    }
}

static ptxjit_status matmul_geometry(pj_geometry *out, const pj_request *request)
{
    matmul_config config;
    ptxjit_status status = config_from(&config, request);
    out->threads = (unsigned)config.threads;
    out->shared_bytes = config.shared_bytes;
    return status;
}

/* The tensor-core configurations worth timing beside the defaults (`ptxjit bench matmul`
 * times the write-up's progression, then these). */
static const char *const bench_sets[] = {
    "variant=tensor_core load=cp_async",
    "variant=wgmma dtype=bf16 out=bf16 cluster=2",
    NULL};

/* ---- ptxjit_tune: random A and B in [-1, 1), C compared with the reference's ---- */

typedef struct {
    ptxjit_context *context;
    pj_tune_checker *checker;
    CUdeviceptr a, b, c, reference;
    size_t m, n, k;
    pj_dtype dtype, out;
} matmul_tuning;

static const char *const problem_names[] = {"m", "n", "k", NULL};

static ptxjit_status tune_problem(char **out, const char *text)
{
    uint64_t v[3] = {0};
    ptxjit_status status = pj_tune_problem_words(v, text, "matmul", problem_names);
    char buf[96];
    snprintf(buf, sizeof buf, "m=%llu n=%llu k=%llu", (unsigned long long)v[0],
             (unsigned long long)v[1], (unsigned long long)v[2]);
    if (status == PTXJIT_OK && !(*out = pj_strdup(buf)))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    return status;
}

static ptxjit_status tune_admits(const pj_request *request, const char *problem)
{
    matmul_config config;
    uint64_t v[3] = {0};
    ptxjit_status status = config_from(&config, request);
    if (status == PTXJIT_OK)
        status = pj_tune_problem_words(v, problem, "matmul", problem_names);
    return status == PTXJIT_OK ? pj_matmul_check_shape(&config, 256, 256, 256, (size_t)v[0],
                                                       (size_t)v[1], (size_t)v[2])
                               : status;
}

static void tune_release(void *state)
{
    matmul_tuning *t = state;
    if (!t)
        return;
    pj_tune_free(t->context, t->a);
    pj_tune_free(t->context, t->b);
    pj_tune_free(t->context, t->c);
    pj_tune_free(t->context, t->reference);
    pj_tune_checker_close(t->checker);
    free(t);
}

static pj_tune_kind kind_of(pj_dtype dtype)
{
    return dtype == PJ_DTYPE_bf16 ? PJ_TUNE_BF16 : dtype == PJ_DTYPE_f16 ? PJ_TUNE_F16
                                                                          : PJ_TUNE_F32;
}

static ptxjit_status tune_prepare(void **state, ptxjit_context *context, const char *problem,
                                  const pj_request *reference)
{
    matmul_config config;
    uint64_t v[3] = {0};
    ptxjit_status status = config_from(&config, reference);
    if (status == PTXJIT_OK)
        status = pj_tune_problem_words(v, problem, "matmul", problem_names);
    if (status != PTXJIT_OK)
        return status;
    matmul_tuning *t = calloc(1, sizeof *t);
    if (!t)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *t = (matmul_tuning){context, NULL, 0, 0, 0, 0, (size_t)v[0], (size_t)v[1], (size_t)v[2],
                         config.dtype, config.out};
    const size_t in = (size_t)pj_dtype_bytes(config.dtype), out = (size_t)pj_dtype_bytes(config.out);
    status = pj_tune_checker_open(&t->checker, context);
    if (status == PTXJIT_OK)
        status = pj_tune_alloc(&t->a, context, t->m * t->k * in);
    if (status == PTXJIT_OK)
        status = pj_tune_alloc(&t->b, context, t->k * t->n * in);
    if (status == PTXJIT_OK)
        status = pj_tune_alloc(&t->c, context, t->m * t->n * out);
    if (status == PTXJIT_OK)
        status = pj_tune_alloc(&t->reference, context, t->m * t->n * out);
    if (status == PTXJIT_OK)
        status = pj_tune_fill(t->checker, t->a, t->m * t->k, kind_of(config.dtype), 3);
    if (status == PTXJIT_OK)
        status = pj_tune_fill(t->checker, t->b, t->k * t->n, kind_of(config.dtype), 4);
    if (status != PTXJIT_OK) {
        tune_release(t);
        return status;
    }
    *state = t;
    return PTXJIT_OK;
}

static ptxjit_status tune_run(void *state, ptxjit_kernel *kernel, void *stream)
{
    matmul_tuning *t = state;
    return ptxjit_matmul(t->context, kernel->canonical, t->a, t->b, t->c, t->m, t->n, t->k,
                         stream);
}

static ptxjit_status tune_poison(void *state)
{
    matmul_tuning *t = state;
    return pj_tune_poison(t->context, t->c, t->m * t->n * (size_t)pj_dtype_bytes(t->out));
}

/* Element-wise, within the output's rounding (two roundings apart: 2^-7 bf16, 2^-10 f16; f32
 * allows tf32 against fp32 products, 2^-10) plus an absolute term for the accumulation order
 * and tf32's rounded inputs near zero: 2^-9 sqrt(k) for inputs in [-1, 1). */
static ptxjit_status tune_check(void *state, ptxjit_kernel *kernel, int reference)
{
    matmul_tuning *t = state;
    matmul_config config;
    ptxjit_status status = pj_matmul_config_of(&config, kernel);
    if (status == PTXJIT_OK && (config.dtype != t->dtype || config.out != t->out))
        return pj_error(PTXJIT_ERR_PARAM, "matmul: a candidate of dtype %s, out %s cannot be "
                        "checked against a reference of dtype %s, out %s; fix dtype and out "
                        "(fixed parameters)", pj_dtype_name(config.dtype),
                        pj_dtype_name(config.out), pj_dtype_name(t->dtype),
                        pj_dtype_name(t->out));
    size_t bytes = t->m * t->n * (size_t)pj_dtype_bytes(t->out);
    if (status == PTXJIT_OK && reference)
        return PJ_CU(t->context->driver->cuMemcpyDtoDAsync(t->reference, t->c, bytes, NULL),
                     "cuMemcpyDtoDAsync");
    double rel = t->out == PJ_DTYPE_bf16 ? 0x1p-7 : 0x1p-10;
    return status == PTXJIT_OK ? pj_tune_compare(t->checker, t->c, t->reference, t->m * t->n,
                                                 kind_of(t->out), rel,
                                                 0x1p-9 * sqrt((double)t->k), "C")
                               : status;
}

static const pj_family_tune tune_ops = {
    tune_problem, tune_admits, tune_prepare, tune_run, tune_poison, tune_check, tune_release, 0,
    problem_names,
};

const pj_family pj_family_matmul = {
    "matmul", PJ_VARIANT_LIST_TEXT(PJ_MATMUL_VARIANTS), PJ_MATMUL_LLVM_VERSION,
    PJ_MATMUL_LLVM_VARIANTS, matmul_geometry, bench_sets, &tune_ops,
};

/* op.c — the transpose family's host op: one block per tile, grid over the output; the TMA
 * variants get two tensor maps (input tile by tile, output at the mirrored coordinates). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "families/transpose/op.h"
#include "request/plan.h"
#include "util/nvtx.h"

static ptxjit_status config_from(transpose_config *out, const pj_request *request)
{
    const pj_param_reader reader = pj_request_reader(request);
    const pj_decode_result decoded = pj_transpose_decode(out, &reader);
    return decoded.code == PJ_DECODED ? PTXJIT_OK : pj_decode_refusal(&decoded, request);
}

ptxjit_status pj_transpose_config_of(transpose_config *out, const ptxjit_kernel *kernel)
{
    return config_from(out, &kernel->request);
}

/* box_cols x box_rows: the tile as one map sees it (the output's is the input's transposed). */
static ptxjit_status plan_one(transpose_map_plan *plan, const transpose_config *config,
                              uint64_t address, size_t rows, size_t cols, int box_cols,
                              int box_rows, const char *which)
{
    const int bytes = pj_dtype_bytes(config->dtype);
    plan->dims[0] = cols;
    plan->dims[1] = rows;
    plan->row_bytes = (uint64_t)cols * (uint64_t)bytes;
    /* A swizzled box is one swizzle span wide; the kernel moves a tile as several boxes. */
    plan->box[0] = (uint32_t)(config->swizzle_bytes ? config->swizzle_bytes / bytes : box_cols);
    plan->box[1] = (uint32_t)box_rows;
    plan->swizzle_bytes = config->swizzle_bytes;
    plan->element_bytes = bytes;
    /* Limits of cuTensorMapEncodeTiled: 16-byte aligned base and strides, dims <= 2^32,
     * strides < 2^40. */
    if (address % 16)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "transpose: the %s buffer is not 16-byte aligned, which the TMA needs; "
                        "use variant=smem or an aligned buffer", which);
    if (plan->row_bytes % 16)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "transpose: %s rows are %zu x %d = %llu bytes, not a multiple of 16, "
                        "which TMA strides must be; use variant=smem, or pad the rows",
                        which, cols, bytes, (unsigned long long)plan->row_bytes);
    if (rows > 0xffffffffu || cols > 0xffffffffu || plan->row_bytes >= (1ull << 40))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "transpose: a %zu x %zu %s matrix is beyond the TMA's limits", rows,
                        cols, which);
    return PTXJIT_OK;
}

ptxjit_status pj_transpose_plan_maps(transpose_map_plan *in, transpose_map_plan *out,
                                  const transpose_config *config, uint64_t input,
                                  uint64_t output, size_t rows, size_t cols)
{
    ptxjit_status status = plan_one(in, config, input, rows, cols, config->block,
                                    config->tile_rows, "input");
    return status == PTXJIT_OK ? plan_one(out, config, output, cols, rows, config->tile_rows,
                                          config->block, "output")
                               : status;
}

static ptxjit_status encode(CUtensorMap *map, const pj_driver *d, const transpose_map_plan *plan,
                            uint64_t address)
{
    static const CUtensorMapSwizzle swizzles[] = {
        CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B, CU_TENSOR_MAP_SWIZZLE_64B,
        CU_TENSOR_MAP_SWIZZLE_128B};
    int mode = plan->swizzle_bytes == 128 ? 3 : plan->swizzle_bytes == 64 ? 2
               : plan->swizzle_bytes == 32 ? 1 : 0;
    /* Unsigned integers of the element's size: the data is only moved, never interpreted. */
    CUtensorMapDataType type = plan->element_bytes == 2   ? CU_TENSOR_MAP_DATA_TYPE_UINT16
                               : plan->element_bytes == 4 ? CU_TENSOR_MAP_DATA_TYPE_UINT32
                                                          : CU_TENSOR_MAP_DATA_TYPE_UINT64;
    cuuint64_t dims[2] = {plan->dims[0], plan->dims[1]}, strides[1] = {plan->row_bytes};
    cuuint32_t box[2] = {plan->box[0], plan->box[1]}, element_strides[2] = {1, 1};
    return PJ_CU(d->cuTensorMapEncodeTiled(map, type, 2, (void *)(uintptr_t)address, dims,
                                           strides, box, element_strides,
                                           CU_TENSOR_MAP_INTERLEAVE_NONE, swizzles[mode],
                                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                 "cuTensorMapEncodeTiled");
}

/* Persistent blocks: as many as are resident at once, never more than there are tiles. */
static ptxjit_status persistent_grid(ptxjit_dim3 *grid, ptxjit_kernel *kernel,
                                     const transpose_config *config, uint64_t tiles)
{
    CUfunction function;
    int per_sm = 0;
    ptxjit_status status = pj_kernel_function(&function, kernel, NULL, config->shared_bytes);
    if (status == PTXJIT_OK)
        status = PJ_CU(kernel->context->driver->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                           &per_sm, function, config->threads, config->shared_bytes),
                       "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    if (status != PTXJIT_OK)
        return status;
    uint64_t resident = (uint64_t)(per_sm > 0 ? per_sm : 1) * (uint64_t)kernel->context->sm_count;
    *grid = (ptxjit_dim3){(unsigned)(resident < tiles ? resident : tiles), 1, 1};
    return PTXJIT_OK;
}

/* The kernels take rows and cols as 32-bit numbers. */
static ptxjit_status check_extent(uint64_t rows, uint64_t cols)
{
    if (rows <= UINT32_MAX && cols <= UINT32_MAX)
        return PTXJIT_OK;
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                    "transpose: %llu x %llu: rows and cols are at most 4294967295 each (the "
                    "kernels count them in 32 bits); transpose a larger matrix in parts",
                    (unsigned long long)rows, (unsigned long long)cols);
}

/* The transpose's tensor maps, grid and launch, with the context's CUDA context current. */
static ptxjit_status transpose_entered(ptxjit_kernel *kernel, const transpose_config *config,
                                       ptxjit_devptr input, ptxjit_devptr output, size_t rows,
                                       size_t cols, void *stream)
{
    ptxjit_context *context = kernel->context;
    ptxjit_status status;
    const uint64_t bytes = (uint64_t)pj_dtype_bytes(config->dtype);
    if (rows == 0 || cols == 0 || !input || !output || input % bytes || output % bytes)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "transpose: rows and cols must be at least 1 and the buffers non-null "
                        "device addresses aligned to the %llu-byte element",
                        (unsigned long long)bytes);
    status = check_extent(rows, cols);
    if (status != PTXJIT_OK)
        return status;
    const uint64_t grid_x = (cols + config->block - 1) / config->block;
    const uint64_t grid_y = (rows + config->tile_rows - 1) / config->tile_rows;
    if (!config->stages && (grid_x > 0x7fffffffu || grid_y > 65535))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "transpose: %zu x %zu needs %llu x %llu tiles of %d, over the grid's "
                        "limit (65535 tile rows); raise block, or use stages=1 (persistent "
                        "blocks)",
                        rows, cols, (unsigned long long)grid_x, (unsigned long long)grid_y,
                        config->block);
    CUtensorMap in_map, out_map;
    memset(&in_map, 0, sizeof in_map);
    memset(&out_map, 0, sizeof out_map);
    if (config->variant != TRANSPOSE_SMEM) {
        transpose_map_plan in_plan, out_plan;
        status = pj_transpose_plan_maps(&in_plan, &out_plan, config, input, output, rows, cols);
        if (status == PTXJIT_OK)
            status = encode(&in_map, context->driver, &in_plan, input);
        if (status == PTXJIT_OK)
            status = encode(&out_map, context->driver, &out_plan, output);
        if (status != PTXJIT_OK)
            return status;
    }
    ptxjit_dim3 grid = {(unsigned)grid_x, (unsigned)grid_y, 1};
    if (config->stages) {
        status = persistent_grid(&grid, kernel, config, grid_x * grid_y);
        if (status != PTXJIT_OK)
            return status;
    }
    CUdeviceptr in = input, out = output;
    unsigned h = (unsigned)rows, w = (unsigned)cols;
    void *args[] = {&in, &out, &h, &w, &in_map, &out_map};
    ptxjit_dim3 block = {(unsigned)config->threads, 1, 1};
    return ptxjit_launch(kernel, NULL, grid, block, config->shared_bytes, stream, args);
}

/* A buffer that is not 16-byte aligned (a matrix inside a larger one) is no TMA base: a
 * request that leaves the variant to the defaults takes variant=smem, as for a shape. */
static ptxjit_status smem_instead(ptxjit_kernel **kernel, transpose_config *config,
                                  ptxjit_context *context, const char *params)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s%svariant=smem", params ? params : "", params && *params ? " " : "");
    char *text = pj_sb_take(&sb);
    if (!text)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = ptxjit_get_kernel(kernel, context, "transpose", text, NULL);
    free(text);
    return status == PTXJIT_OK ? pj_transpose_config_of(config, *kernel) : status;
}

static ptxjit_status transpose_op(ptxjit_context *context, const char *params, ptxjit_devptr input,
                                  ptxjit_devptr output, size_t rows, size_t cols, void *stream)
{
    ptxjit_kernel *kernel;
    transpose_config config;
    CUcontext saved;
    const uint64_t sizes[] = {rows, cols};
    ptxjit_status status =
        pj_plan_get_kernel(&kernel, NULL, context, &pj_family_transpose, params, sizes);
    if (status == PTXJIT_OK)
        status = pj_transpose_config_of(&config, kernel);
    if (status == PTXJIT_OK && config.variant != TRANSPOSE_SMEM && (input % 16 || output % 16) &&
        !pj_plan_names_word(params ? params : "", "variant"))
        status = smem_instead(&kernel, &config, context, params);
    if (status == PTXJIT_OK)
        status = pj_gpu_enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = transpose_entered(kernel, &config, input, output, rows, cols, stream);
    pj_gpu_leave(context, saved);
    return status;
}

ptxjit_status ptxjit_transpose(ptxjit_context *context, const char *params, ptxjit_devptr input,
                               ptxjit_devptr output, size_t rows, size_t cols, void *stream)
{
    pj_nvtx_push_name("ptxjit transpose");
    ptxjit_status status = transpose_op(context, params, input, output, rows, cols, stream);
    pj_nvtx_pop();
    return status;
}

void pj_transpose_reference(void *out, const void *in, size_t rows, size_t cols, int element_bytes)
{
    const char *src = in;
    char *dst = out;
    for (size_t r = 0; r < rows; r++)
        for (size_t c = 0; c < cols; c++)
            memcpy(dst + (c * rows + r) * (size_t)element_bytes,
                   src + (r * cols + c) * (size_t)element_bytes, (size_t)element_bytes);
}

static ptxjit_status transpose_geometry(pj_geometry *out, const pj_request *request)
{
    transpose_config config;
    ptxjit_status status = config_from(&config, request);
    out->threads = (unsigned)config.threads;
    out->shared_bytes = config.shared_bytes;
    return status;
}

/* The tilings `ptxjit bench transpose` sweeps (each row by row and column by column). */
static const char *const bench_sets[] = {
    "variant=smem block=64 batch=8",
    "variant=smem block=64 batch=16",
    "variant=tma_batched block=64 rows=0 batch=16",
    "variant=tma_batched block=64 rows=128 batch=16",
    "variant=tma_batched block=128 rows=64 batch=8",
    "variant=tma_batched block=128 rows=64 batch=16",
    "variant=tma_batched block=128 rows=64 batch=32",
    "variant=tma_batched block=128 rows=128 batch=32",
    "variant=tma_batched block=256 rows=32 batch=8",
    "variant=tma_batched block=256 rows=64 batch=16",
    "variant=tma_batched block=64 rows=0 swizzle=128B xpose=vector batch=16",
    NULL};

/* ---- ptxjit_tune: a random matrix, the output compared bit for bit with the reference's ---- */

static const char *const problem_names[] = {"rows", "cols", NULL};

/* What ptxjit_transpose would refuse of this shape, before any compile. */
static ptxjit_status tune_admits(const pj_request *request, const uint64_t *v)
{
    transpose_config config;
    ptxjit_status status = config_from(&config, request);
    if (status == PTXJIT_OK)
        status = check_extent(v[0], v[1]);
    if (status != PTXJIT_OK)
        return status;
    if (!config.stages && ((v[0] + config.tile_rows - 1) / config.tile_rows > 65535 ||
                           (v[1] + config.block - 1) / config.block > 0x7fffffffu))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "transpose: %llu x %llu needs more tile "
                        "rows than a grid has (65535)", (unsigned long long)v[0],
                        (unsigned long long)v[1]);
    if (config.variant == TRANSPOSE_SMEM)
        return PTXJIT_OK;
    transpose_map_plan in, out;
    return pj_transpose_plan_maps(&in, &out, &config, 256, 256, (size_t)v[0], (size_t)v[1]);
}

/* The input (random bits) and the output, each rounded up to whole 4-byte words: a transpose
 * moves bits, which the fill makes and the compare reads a word at a time. */
static ptxjit_status tune_buffers(pj_tune_buffer *out, int *count, const pj_request *reference,
                                  const uint64_t *v)
{
    transpose_config config;
    ptxjit_status status = config_from(&config, reference);
    if (status != PTXJIT_OK)
        return status;
    size_t bytes;
    if (__builtin_mul_overflow((size_t)v[0], (size_t)v[1], &bytes) ||
        __builtin_mul_overflow(bytes, (size_t)pj_dtype_bytes(config.dtype), &bytes) ||
        bytes > SIZE_MAX - 3)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "transpose: a %llu x %llu problem is more "
                        "memory than exists", (unsigned long long)v[0], (unsigned long long)v[1]);
    bytes = (bytes + 3) / 4 * 4;
    out[0] = (pj_tune_buffer){.role = PJ_TUNE_INPUT, .bytes = bytes, .kind = PJ_TUNE_BITS,
                              .count = bytes / 4, .seed = 2};
    out[1] = (pj_tune_buffer){.role = PJ_TUNE_OUTPUT, .bytes = bytes, .kind = PJ_TUNE_BITS,
                              .count = bytes / 4, .what = "the transposed matrix"};
    *count = 2;
    return PTXJIT_OK;
}

static ptxjit_status tune_run(ptxjit_context *context, ptxjit_kernel *kernel,
                              const ptxjit_devptr *buffers, const uint64_t *v, void *stream)
{
    return ptxjit_transpose(context, kernel->canonical, buffers[0], buffers[1], v[0], v[1],
                            stream);
}

static ptxjit_status tune_types(char out[64], const pj_request *request)
{
    transpose_config config;
    ptxjit_status status = config_from(&config, request);
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

/* variant=smem copies through shared memory with plain loads and stores: any shape, any
 * alignment of the elements. */
static const char *const shape_fallbacks[] = {"variant=smem", NULL};

const pj_family pj_family_transpose = {
    "transpose", PJ_VARIANT_LIST_TEXT(PJ_TRANSPOSE_VARIANTS), PJ_TRANSPOSE_LLVM_VERSION,
    PJ_TRANSPOSE_LLVM_VARIANTS, transpose_geometry, bench_sets, &tune_ops, shape_fallbacks, NULL, NULL,
};

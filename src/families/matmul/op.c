/* op.c — the matmul family's host op: a 1-D grid of output tiles (the kernel maps each block to
 * its tile), or for sched=persistent as many blocks as are resident; the tensor_core and wgmma
 * variants get dynamic shared memory, the wgmma variants and tensor_core with load=tma also
 * tensor maps (A K-major, B N-major or K-major, C for store=tma: swizzled boxes), the wgmma
 * variants the epilogue's values. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "families/matmul/fit.h"
#include "families/matmul/op.h"
#include "families/matmul/stage.h"
#include "families/matmul/tune_bound.h"
#include "request/plan.h"
#include "request/scratch.h"
#include "util/nvtx.h"

static const char *const variant_names[] = {
#define PJ_VARIANT_NAME(name, id) #name,
    PJ_MATMUL_VARIANTS(PJ_VARIANT_NAME)
#undef PJ_VARIANT_NAME
};

unsigned pj_matmul_parts(const matmul_config *config, size_t k)
{
    if (config->splits <= 1 || !pj_matmul_is_wgmma(config->variant))
        return 1;
    const uint64_t k_tiles = ((uint64_t)k + (uint64_t)config->bk - 1) / (uint64_t)config->bk;
    const uint64_t most = k_tiles < (uint64_t)config->splits ? k_tiles : (uint64_t)config->splits;
    const uint64_t per_part = (k_tiles + most - 1) / most;
    return (unsigned)((k_tiles + per_part - 1) / per_part);
}

/* Blocks of the grid: the tiles of C (swap=1: of its transpose, n x m, which the kernel
 * computes), row tiles rounded up to whole clusters. */
uint64_t pj_matmul_blocks(const matmul_config *config, size_t m, size_t n)
{
    const uint64_t rows = (uint64_t)config->bm * (uint64_t)config->cluster;
    const uint64_t km = config->swap ? n : m, kn = config->swap ? m : n;
    return (km + rows - 1) / rows * (uint64_t)config->cluster *
           ((kn + (uint64_t)config->tile_n - 1) / (uint64_t)config->tile_n);
}

static ptxjit_status shape_error(const matmul_config *config, const char *rule, const char *fix)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "matmul: variant=%s %s; %s",
                    variant_names[config->variant], rule, fix);
}

ptxjit_status pj_matmul_check_shape(const matmul_config *config, uint64_t a, uint64_t b, uint64_t c,
                                 size_t m, size_t n, size_t k)
{
    const uint64_t in = (uint64_t)pj_matmul_type_bytes(config->dtype),
                   out = (uint64_t)pj_dtype_bytes(config->out);
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
    if (config->gemv && k * in > PJ_MATMUL_GEMV_ROW_BYTES_MAX)
        return shape_error(config, "sched=gemv counts a row's bytes in 32 bits: k is past it",
                           "use sched=persistent (the default)");
    /* The wgmma variants take any rows: what the TMA cannot read is staged (stage.h). */
    uint64_t tiles = pj_matmul_blocks(config, m, n);
    if (tiles > 0x7fffffff)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "matmul: %zu x %zu needs %llu tiles, over the grid's limit; raise bm "
                        "or bn", m, n, (unsigned long long)tiles);
    return PTXJIT_OK;
}

ptxjit_status pj_matmul_fit(ptxjit_kernel **kernel, matmul_config *config,
                            const pj_matmul_fit_tile **chosen, ptxjit_context *context,
                            const char *params, size_t m, size_t n, size_t k)
{
    const uint64_t sizes[] = {m, n, k};
    pj_plan plan;
    ptxjit_status status = pj_plan_make(&plan, context, &pj_family_matmul, params, sizes);
    if (status != PTXJIT_OK)
        return status;
    status = ptxjit_get_kernel(kernel, context, "matmul", plan.params, NULL);
    if (status == PTXJIT_OK)
        status = pj_matmul_config_of(config, *kernel);
    if (chosen)
        *chosen = pj_matmul_fit_tile_of(plan.fitted);
    pj_plan_free(&plan);
    return status;
}

/* `depth` row-major rows x cols matrices, pitch elements a row and stride elements apart (rank
 * 3; rank 2: the first alone), in boxes of box_rows x box_cols, each box row of box_cols
 * elements (32, 64 or 128 bytes) swizzled over its own span. fp8 travels as bytes. */
static ptxjit_status encode_rank(CUtensorMap *map, const pj_driver *d, pj_dtype dtype,
                                 uint64_t address, uint64_t rows, uint64_t cols, uint64_t pitch,
                                 uint64_t depth, uint64_t stride, uint32_t box_cols,
                                 uint32_t box_rows, cuuint32_t rank)
{
    const uint32_t bytes = (uint32_t)pj_matmul_type_bytes(dtype);
    /* One matrix: a stride past it, which no coordinate reaches. */
    cuuint64_t dims[3] = {cols, rows, depth},
               strides[2] = {pitch * bytes, (depth > 1 ? stride : rows * pitch) * bytes};
    cuuint32_t box[3] = {box_cols, box_rows, 1}, element_strides[3] = {1, 1, 1};
    CUtensorMapDataType type = dtype == PJ_DTYPE_f32    ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                               : dtype == PJ_DTYPE_bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                               : dtype == PJ_DTYPE_f16  ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                                                        : CU_TENSOR_MAP_DATA_TYPE_UINT8;
    uint32_t span = box_cols * bytes;
    CUtensorMapSwizzle swizzle = span == 128 ? CU_TENSOR_MAP_SWIZZLE_128B
                                 : span == 64 ? CU_TENSOR_MAP_SWIZZLE_64B
                                              : CU_TENSOR_MAP_SWIZZLE_32B;
    /* Out-of-bounds elements arrive as zeros, which add nothing: ragged tiles need no care. */
    return PJ_CU(d->cuTensorMapEncodeTiled(map, type, rank, (void *)(uintptr_t)address, dims,
                                           strides, box, element_strides,
                                           CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
                                           CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                           CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
                 "cuTensorMapEncodeTiled");
}

static ptxjit_status encode(CUtensorMap *map, const pj_driver *d, pj_dtype dtype, uint64_t address,
                            uint64_t rows, uint64_t cols, uint64_t pitch, uint32_t box_cols,
                            uint32_t box_rows)
{
    return encode_rank(map, d, dtype, address, rows, cols, pitch, 1, 0, box_cols, box_rows, 2);
}

/* A map of an operand of a batch: 3-D for the template's kernels (a matrix per product, or
 * one where stride is 0), 2-D for the llvm backend's (product `product`'s matrix). */
static ptxjit_status encode_operand(CUtensorMap *map, const pj_driver *d, pj_dtype dtype,
                                    uint64_t address, uint64_t rows, uint64_t cols,
                                    uint64_t pitch, uint64_t stride, uint64_t batch,
                                    pj_matmul_takes takes, uint64_t product, uint32_t box_cols,
                                    uint32_t box_rows)
{
    if (takes != PJ_MATMUL_TAKES_BATCH)
        return encode(map, d, dtype, address + product * stride * pj_matmul_type_bytes(dtype),
                      rows, cols, pitch, box_cols, box_rows);
    return encode_rank(map, d, dtype, address, rows, cols, pitch, stride ? batch : 1, stride,
                       box_cols, box_rows, 3);
}

/* A kernel operand's map of rows x k (its rows `pitch` elements apart, products `stride`
 * apart): K-major in boxes of 128 bytes of k x box_rows rows, else given k x rows (B as kn)
 * in boxes of 64 columns x 64 k rows. */
static ptxjit_status operand_map(CUtensorMap *map, const pj_driver *d, const matmul_config *config,
                                 const pj_matmul_staged *s, pj_matmul_takes takes, size_t product,
                                 uint64_t address, uint64_t rows, size_t pitch, size_t stride,
                                 int k_major, uint32_t box_rows)
{
    const pj_matmul_layout *l = &s->layout;
    return k_major ? encode_operand(map, d, config->dtype, address, rows, l->k, pitch, stride,
                                    l->batch, takes, product, (uint32_t)config->bk, box_rows)
                   : encode_operand(map, d, config->dtype, address, l->k, rows, pitch, stride,
                                    l->batch, takes, product, 64, 64);
}

/* The wgmma variants' maps of the product as staged (of product `product` where the kernel
 * takes one at a time): A in boxes of 128 bytes of k x bm rows; B N-major in boxes of 64
 * columns x 64 k rows, K-major (b_nk) in boxes of 128 bytes of k x the rows (columns of C)
 * pj_matmul_b_box_rows gives (a cluster's share of the tile's N); C (store=tma) in boxes of
 * 128, 64 or 32 bytes (pj_matmul_c_span) x 64 rows. swap=1 trades A and B: the kernel's first
 * operand is B (K-major: bm rows a box; N-major: as above), its second A (K-major, as B nk is).
 * The maps have the true sizes: a padded row's tail is read as zeros, and C's padding columns
 * are not written. */
static ptxjit_status wgmma_maps(CUtensorMap maps[3], const pj_driver *d, const matmul_config *config,
                                const pj_matmul_staged *s, pj_matmul_takes takes, size_t product)
{
    const pj_matmul_layout *l = &s->layout;
    const int swap = config->swap;
    const uint32_t b_rows =
        (uint32_t)pj_matmul_b_box_rows(swap || config->b_nk, config->tile_n, config->cluster);
    ptxjit_status status = operand_map(&maps[0], d, config, s, takes, product,
                                       swap ? s->b : s->a, swap ? l->n : l->m,
                                       swap ? s->b_pitch : s->a_pitch,
                                       swap ? s->b_stride : s->a_stride, !swap || config->b_nk,
                                       (uint32_t)config->bm);
    if (status == PTXJIT_OK)
        status = operand_map(&maps[1], d, config, s, takes, product, swap ? s->a : s->b,
                             swap ? l->m : l->n, swap ? s->a_pitch : s->b_pitch,
                             swap ? s->a_stride : s->b_stride, swap || config->b_nk, b_rows);
    const int out_bytes = pj_dtype_bytes(config->out);
    if (status == PTXJIT_OK && config->store_tma)
        status = encode_operand(&maps[2], d, config->out, s->c, l->m, l->n, s->c_pitch,
                                s->c_stride, l->batch, takes, product,
                                (uint32_t)(pj_matmul_c_span(config->tile_n, out_bytes) / out_bytes),
                                64);
    return status;
}

/* sched=persistent: as many blocks (clusters) as are resident at once, never more than there
 * are tiles. Clusters are counted by the driver (a cluster's blocks share a GPC, so fewer than
 * SMs / cluster may fit); where it cannot say, SMs / cluster. */
static ptxjit_status persistent_blocks(unsigned *out, ptxjit_kernel *kernel,
                                       const matmul_config *config, uint64_t tiles)
{
    const pj_driver *d = kernel->context->driver;
    CUfunction function;
    int per_sm = 0, clusters = 0;
    ptxjit_status status = pj_kernel_function(&function, kernel, NULL, config->shared_bytes);
    if (status == PTXJIT_OK && config->cluster == 1)
        status = PJ_CU(d->cuOccupancyMaxActiveBlocksPerMultiprocessor(
                           &per_sm, function, config->threads, config->shared_bytes),
                       "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    if (status != PTXJIT_OK)
        return status;
    uint64_t resident;
    if (config->cluster == 1) {
        resident = (uint64_t)(per_sm > 0 ? per_sm : 1) * (uint64_t)kernel->context->sm_count;
    } else {
        CUlaunchAttribute attribute;
        memset(&attribute, 0, sizeof attribute);
        attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attribute.value.clusterDim.x = (unsigned)config->cluster;
        attribute.value.clusterDim.y = attribute.value.clusterDim.z = 1;
        CUlaunchConfig launch;
        memset(&launch, 0, sizeof launch);
        launch.gridDimX = (unsigned)config->cluster * (unsigned)kernel->context->sm_count;
        launch.gridDimY = launch.gridDimZ = 1;
        launch.blockDimX = (unsigned)config->threads;
        launch.blockDimY = launch.blockDimZ = 1;
        launch.sharedMemBytes = config->shared_bytes;
        launch.attrs = &attribute;
        launch.numAttrs = 1;
        if (!d->cuOccupancyMaxActiveClusters ||
            d->cuOccupancyMaxActiveClusters(&clusters, function, &launch) != CUDA_SUCCESS ||
            clusters < 1)
            clusters = kernel->context->sm_count / config->cluster;
        resident = (uint64_t)(clusters > 0 ? clusters : 1);
    }
    *out = (unsigned)((resident < tiles ? resident : tiles) * (uint64_t)config->cluster);
    return PTXJIT_OK;
}

/* The kernel's epilogue values from the caller's, each refused where the params do not use it
 * and it is not its default. */
static ptxjit_status epilogue_args(pj_matmul_epilogue_args *out, const matmul_config *config,
                                   const ptxjit_matmul_epilogue *e)
{
    ptxjit_matmul_epilogue defaults;
    ptxjit_matmul_epilogue_init(&defaults);
    if (!e)
        e = &defaults;
    const int fp8 = config->variant == MATMUL_WGMMA_FP8;
    const char *unused = e->alpha != 1.0f && !config->alpha ? "alpha (add alpha=scaled)"
                         : e->beta != 0.0f && !config->beta ? "beta (add beta=scaled)"
                         : e->bias && !config->bias         ? "bias (add bias=column)"
                         : (e->a_scale != 1.0f || e->b_scale != 1.0f) && !fp8
                             ? "a_scale and b_scale (fp8 inputs only: variant=wgmma_fp8)"
                             : NULL;
    if (unused)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "matmul: the epilogue's %s is not used by "
                        "variant=%s with these params", unused, variant_names[config->variant]);
    if (config->bias && (!e->bias || e->bias % 4))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "matmul: bias=column needs the epilogue's "
                        "bias, the device address of n floats (4-byte aligned)");
    out->alpha = (config->alpha ? e->alpha : 1.0f) * (fp8 ? e->a_scale * e->b_scale : 1.0f);
    out->beta = e->beta;
    out->bias = e->bias;
    return PTXJIT_OK;
}

/* sched=gemv's blocks: one per PJ_MATMUL_GEMV_COLUMNS columns of C (rows of B) of every
 * product (the kernel loops past the cap). */
static uint64_t gemv_blocks(size_t n, size_t products)
{
    const uint64_t blocks = ((uint64_t)n + PJ_MATMUL_GEMV_COLUMNS - 1) /
                            PJ_MATMUL_GEMV_COLUMNS * (uint64_t)products;
    return blocks < (1u << 24) ? blocks : (1u << 24);
}

/* Launch `products` products of the batch as staged, from product `first` (the template's
 * wgmma kernels take them all at once; the others one at a time: the pointers are that
 * product's). */
static ptxjit_status launch(ptxjit_kernel *kernel, const matmul_config *config,
                            const pj_matmul_staged *s, CUtensorMap maps[3],
                            pj_matmul_epilogue_args *values, size_t first, size_t products,
                            void *stream)
{
    const pj_matmul_layout *l = &s->layout;
    const uint64_t in = (uint64_t)pj_matmul_type_bytes(config->dtype),
                   out = (uint64_t)pj_dtype_bytes(config->out);
    CUdeviceptr pa = s->a + first * s->a_stride * in, pb = s->b + first * s->b_stride * in,
                pc = s->c + first * s->c_stride * out;
    /* swap=1: the kernel computes C's transpose, B's rows by A's, its first operand B. */
    const int swap = config->swap;
    int im = (int)(swap ? s->n_kernel : l->m), in_ = (int)(swap ? l->m : s->n_kernel),
        ik = (int)l->k;
    pj_matmul_layout_args layout = {(long long)s->c_stride,     (int)s->c_pitch,
                                    (int)products,
                                    (swap ? s->b_stride : s->a_stride) != 0,
                                    (swap ? s->a_stride : s->b_stride) != 0,
                                    0,
                                    0,
                                    (long long)s->a_stride,
                                    (long long)s->b_stride,
                                    (long long)s->a_pitch,
                                    (long long)s->b_pitch,
                                    (int)l->n};
    void *args[] = {&pa, &pb, &pc, &im, &in_, &ik, &maps[0], &maps[1], &maps[2], values, &layout};
    const uint64_t tiles = config->gemv ? gemv_blocks(l->n, products)
                                        : pj_matmul_blocks(config, l->m, s->n_kernel) *
                                              (uint64_t)products;
    const unsigned parts = pj_matmul_parts(config, l->k);
    ptxjit_dim3 grid = {(unsigned)(tiles * parts), 1, 1};
    if (config->persistent) {
        ptxjit_status status = persistent_blocks(&grid.x, kernel, config,
                                                 tiles * parts / (uint64_t)config->cluster);
        if (status != PTXJIT_OK)
            return status;
    }
    ptxjit_dim3 block = {(unsigned)config->threads, 1, 1};
    ptxjit_dim3 cluster = {(unsigned)config->cluster, 1, 1};
    if (parts == 1)
        return ptxjit_launch_cluster(kernel, NULL, grid, block, cluster, config->shared_bytes,
                                     stream, args);
    /* Split-K: an arrival count per tile and consumer, kept at zero between launches, and
     * every part's fp32 sums of its tile (scratch.h orders the borrowers). */
    pj_scratch_lease lease;
    ptxjit_status status = pj_scratch_borrow(
        &lease, kernel->context, tiles * (uint64_t)config->consumers * sizeof(unsigned),
        tiles * parts * (uint64_t)config->bm * (uint64_t)config->tile_n * sizeof(float),
        (CUstream)stream);
    if (status != PTXJIT_OK)
        return status;
    layout.arrivals = lease.zeroed;
    layout.partials = lease.loose;
    status = ptxjit_launch_cluster(kernel, NULL, grid, block, cluster, config->shared_bytes,
                                   stream, args);
    return pj_scratch_return(kernel->context, (CUstream)stream, status);
}

/* tensor_core with load=tma: A in boxes of bk columns x bm rows, B of 32 columns x bk rows, of
 * the product's (dense) matrices. */
static ptxjit_status tensor_core_maps(CUtensorMap maps[3], const pj_driver *d,
                                      const matmul_config *config, const pj_matmul_staged *s,
                                      size_t product)
{
    const pj_matmul_layout *l = &s->layout;
    const uint64_t e = (uint64_t)pj_matmul_type_bytes(config->dtype);
    ptxjit_status status = encode(&maps[0], d, config->dtype, s->a + product * s->a_stride * e,
                                  l->m, l->k, l->k, (uint32_t)config->bk, (uint32_t)config->bm);
    return status == PTXJIT_OK
               ? encode(&maps[1], d, config->dtype, s->b + product * s->b_stride * e, l->k,
                        l->n, l->n, 32, (uint32_t)config->bk)
               : status;
}

/* The launches of the product as staged: one for the template's wgmma kernels, one per product
 * for the others, each with its own maps. */
static ptxjit_status launch_products(ptxjit_kernel *kernel, const matmul_config *config,
                                     pj_matmul_takes takes, const pj_matmul_staged *s,
                                     pj_matmul_epilogue_args *values, void *stream)
{
    const pj_driver *d = kernel->context->driver;
    CUtensorMap maps[3];
    memset(maps, 0, sizeof maps);
    if (takes == PJ_MATMUL_TAKES_BATCH) {
        ptxjit_status status = wgmma_maps(maps, d, config, s, takes, 0);
        return status == PTXJIT_OK ? launch(kernel, config, s, maps, values, 0, s->layout.batch,
                                            stream)
                                   : status;
    }
    ptxjit_status status = PTXJIT_OK;
    for (size_t p = 0; p < s->layout.batch && status == PTXJIT_OK; p++) {
        if (takes == PJ_MATMUL_TAKES_PITCH)
            status = wgmma_maps(maps, d, config, s, takes, p);
        else if (config->tma)
            status = tensor_core_maps(maps, d, config, s, p);
        if (status == PTXJIT_OK)
            status = launch(kernel, config, s, maps, values, p, 1, stream);
    }
    return status;
}

ptxjit_status pj_matmul_check_batch_tiles(const matmul_config *config, pj_matmul_takes takes,
                                          const pj_matmul_layout *l)
{
    const uint64_t tiles = pj_matmul_blocks(config, l->m, l->n) * pj_matmul_parts(config, l->k);
    if (takes != PJ_MATMUL_TAKES_BATCH || l->batch <= 0x7fffffff / tiles)
        return PTXJIT_OK;
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "matmul: %zu products of %llu tiles each are "
                    "over the kernel's 2^31 tiles; split the batch", l->batch,
                    (unsigned long long)tiles);
}

/* The product's tensor maps and launches, with the context's CUDA context current: what the
 * kernel cannot take as it lies staged first (stage.h), C copied back after. */
static ptxjit_status matmul_entered(ptxjit_kernel *kernel, const matmul_config *config,
                                    ptxjit_devptr a, ptxjit_devptr b, ptxjit_devptr c,
                                    const pj_matmul_layout *l,
                                    const ptxjit_matmul_epilogue *epilogue, void *stream)
{
    const pj_matmul_takes takes = pj_matmul_takes_of(config, kernel->backend);
    pj_matmul_epilogue_args values;
    ptxjit_status status = pj_matmul_check_shape(config, a, b, c, l->m, l->n, l->k);
    if (status == PTXJIT_OK)
        status = pj_matmul_check_batch_tiles(config, takes, l);
    if (status == PTXJIT_OK)
        status = epilogue_args(&values, config, epilogue);
    if (status != PTXJIT_OK)
        return status;
    pj_matmul_staged staged;
    status = pj_matmul_stage_in(&staged, kernel, config, takes, a, b, c, &values.bias, l, stream);
    if (status == PTXJIT_OK)
        status = launch_products(kernel, config, takes, &staged, &values, stream);
    return pj_matmul_stage_out(&staged, kernel, status, stream);
}

void ptxjit_matmul_epilogue_init(ptxjit_matmul_epilogue *epilogue)
{
    if (epilogue)
        *epilogue = (ptxjit_matmul_epilogue){1.0f, 0.0f, 0, 1.0f, 1.0f};
}

ptxjit_status ptxjit_matmul(ptxjit_context *context, const char *params, ptxjit_devptr a,
                            ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n, size_t k,
                            void *stream)
{
    return ptxjit_matmul_ex(context, params, a, b, c, m, n, k, NULL, stream);
}

ptxjit_status ptxjit_matmul_ex(ptxjit_context *context, const char *params, ptxjit_devptr a,
                               ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n, size_t k,
                               const ptxjit_matmul_epilogue *epilogue, void *stream)
{
    return ptxjit_matmul_strided(context, params, a, b, c, m, n, k, NULL, epilogue, stream);
}

uint64_t pj_matmul_plan_rows(size_t m, const ptxjit_matmul_layout *layout)
{
    const uint64_t batch = layout && layout->batch > 1 ? layout->batch : 1;
    if (batch == 1)
        return m;
    const uint64_t per = ((uint64_t)m + 63) / 64 * 64;
    return per > PJ_MATMUL_PLAN_ROWS_MAX / batch ? PJ_MATMUL_PLAN_ROWS_MAX : per * batch;
}

static ptxjit_status matmul_strided(ptxjit_context *context, const char *params, ptxjit_devptr a,
                                    ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n,
                                    size_t k, const ptxjit_matmul_layout *layout,
                                    const ptxjit_matmul_epilogue *epilogue, void *stream)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    pj_matmul_layout resolved;
    CUcontext saved;
    const uint64_t sizes[] = {pj_matmul_plan_rows(m, layout), n, k};
    ptxjit_status status =
        pj_plan_get_kernel(&kernel, NULL, context, &pj_family_matmul, params, sizes);
    if (status == PTXJIT_OK)
        status = pj_matmul_config_of(&config, kernel);
    if (status == PTXJIT_OK)
        status = pj_matmul_layout_resolve(&resolved, &config, layout, m, n, k);
    if (status == PTXJIT_OK)
        status = pj_gpu_enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = matmul_entered(kernel, &config, a, b, c, &resolved, epilogue, stream);
    pj_gpu_leave(context, saved);
    return status;
}

ptxjit_status ptxjit_matmul_strided(ptxjit_context *context, const char *params, ptxjit_devptr a,
                                    ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n,
                                    size_t k, const ptxjit_matmul_layout *layout,
                                    const ptxjit_matmul_epilogue *epilogue, void *stream)
{
    pj_nvtx_push_name("ptxjit matmul");
    ptxjit_status status =
        matmul_strided(context, params, a, b, c, m, n, k, layout, epilogue, stream);
    pj_nvtx_pop();
    return status;
}

/* The fp8 formats: mantissa bits, exponent bias, largest finite code. */
typedef struct {
    int mantissa, bias;
    uint8_t largest;
} fp8_format;

static fp8_format fp8_of(pj_dtype type)
{
    return type == PJ_MATMUL_E4M3 ? (fp8_format){3, 7, 0x7e} : (fp8_format){2, 15, 0x7b};
}

static double fp8_value(uint8_t code, fp8_format f)
{
    const int exponent = (code & 0x7f) >> f.mantissa, fraction = code & ((1 << f.mantissa) - 1);
    const int top = (1 << (7 - f.mantissa)) - 1; /* the all-ones exponent */
    double magnitude;
    if (f.mantissa == 3 && exponent == top && fraction == 7)
        magnitude = NAN; /* e4m3 has NaN only, no infinities */
    else if (f.mantissa == 2 && exponent == top)
        magnitude = fraction ? NAN : INFINITY;
    else if (exponent == 0) /* subnormal: units of 2^(1 - bias - mantissa) */
        magnitude = ldexp(fraction, 1 - f.bias - f.mantissa);
    else
        magnitude = ldexp((1 << f.mantissa) + fraction, exponent - f.bias - f.mantissa);
    return code & 0x80 ? -magnitude : magnitude;
}

/* Rounded to nearest even, saturated to the largest finite value (NaN stays NaN), on the float's
 * bits: a host filling a gigabyte of fp8 operands (a batched bench) encodes each in a couple of
 * nanoseconds, where frexp and ldexp took about 30. */
static uint8_t fp8_code(float value, fp8_format f)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    const uint8_t sign = bits >> 31 ? 0x80 : 0;
    const uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u)
        return (uint8_t)(sign | 0x7f);
    const int shift = 23 - f.mantissa;
    const uint32_t smallest_normal = (uint32_t)(127 + 1 - f.bias) << 23;
    uint32_t code;
    if (magnitude < smallest_normal) { /* subnormal (or the smallest normal, rounded up) */
        /* Exact: a power-of-two scaling of a float this small, then rounding to even. */
        code = (uint32_t)nearbyintf(fabsf(value) * ldexpf(1.0f, f.bias + f.mantissa - 1));
    } else { /* round the float's own mantissa to f's, ties to even; a carry bumps the exponent */
        const uint32_t rounded = magnitude + (1u << (shift - 1)) - 1 + ((magnitude >> shift) & 1);
        code = (rounded >> shift) - ((uint32_t)(127 - f.bias) << f.mantissa);
    }
    return (uint8_t)(sign | (code > f.largest ? f.largest : code));
}

double pj_matmul_element(const void *data, pj_dtype dtype, size_t index)
{
    if (dtype == PJ_MATMUL_E4M3 || dtype == PJ_MATMUL_E5M2)
        return fp8_value(((const uint8_t *)data)[index], fp8_of(dtype));
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
    if (dtype == PJ_MATMUL_E4M3 || dtype == PJ_MATMUL_E5M2)
        ((uint8_t *)data)[index] = fp8_code(value, fp8_of(dtype));
    else if (dtype == PJ_DTYPE_f32)
        ((float *)data)[index] = value;
    else
        ((uint16_t *)data)[index] = dtype == PJ_DTYPE_bf16 ? to_bf16(value) : to_f16(value);
}

void pj_matmul_reference_row(double *out, const void *a, const void *b, pj_dtype dtype, size_t n,
                          size_t k, size_t row)
{
    pj_matmul_reference_row_layout(out, a, b, dtype, n, k, row, 0);
}

void pj_matmul_reference_row_layout(double *out, const void *a, const void *b, pj_dtype dtype,
                                    size_t n, size_t k, size_t row, int b_nk)
{
    for (size_t j = 0; j < n; j++)
        out[j] = 0;
    if (b_nk) { /* B's column j is row j of its transpose */
        for (size_t j = 0; j < n; j++)
            for (size_t p = 0; p < k; p++)
                out[j] += pj_matmul_element(a, dtype, row * k + p) *
                          pj_matmul_element(b, dtype, j * k + p);
        return;
    }
    for (size_t p = 0; p < k; p++) {
        double x = pj_matmul_element(a, dtype, row * k + p);
        for (size_t j = 0; j < n; j++)
            out[j] += x * pj_matmul_element(b, dtype, p * n + j);
    }
}

void pj_matmul_reference_epilogue(double *out, size_t n, const matmul_config *config,
                                  const ptxjit_matmul_epilogue *values, const double *c_old,
                                  const float *bias)
{
    ptxjit_matmul_epilogue defaults;
    ptxjit_matmul_epilogue_init(&defaults);
    const ptxjit_matmul_epilogue *e = values ? values : &defaults;
    double scale = config->alpha ? e->alpha : 1.0;
    if (config->variant == MATMUL_WGMMA_FP8)
        scale *= (double)e->a_scale * e->b_scale;
    for (size_t j = 0; j < n; j++) {
        double v = scale * out[j];
        if (config->beta)
            v += e->beta * c_old[j];
        if (config->bias)
            v += bias[j];
        if (config->act == 1)
            v = v > 0 ? v : 0;
        else if (config->act == 2)
            v = 0.5 * v * (1 + tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
        out[j] = v;
    }
}

static ptxjit_status matmul_geometry(pj_geometry *out, const pj_request *request)
{
    matmul_config config;
    ptxjit_status status = pj_matmul_config_from(&config, request);
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

static const char *const problem_names[] = {"m", "n", "k", NULL};

static ptxjit_status tune_admits(const pj_request *request, const uint64_t *v)
{
    matmul_config config;
    ptxjit_status status = pj_matmul_config_from(&config, request);
    return status == PTXJIT_OK ? pj_matmul_check_shape(&config, 256, 256, 256, (size_t)v[0],
                                                       (size_t)v[1], (size_t)v[2])
                               : status;
}

static pj_tune_kind kind_of(pj_dtype dtype)
{
    return dtype == PJ_DTYPE_bf16 ? PJ_TUNE_BF16 : dtype == PJ_DTYPE_f16 ? PJ_TUNE_F16
                                                                          : PJ_TUNE_F32;
}

/* An input of count elements from seed; fp8 is made on the host (the GPU's fill makes 16- and
 * 32-bit floats only). */
static pj_tune_buffer input(const matmul_config *config, uint64_t count, unsigned seed)
{
    const int fp8 = config->dtype == PJ_MATMUL_E4M3 || config->dtype == PJ_MATMUL_E5M2;
    return (pj_tune_buffer){.role = PJ_TUNE_INPUT,
                            .bytes = count * (size_t)pj_matmul_type_bytes(config->dtype),
                            .kind = kind_of(config->dtype), .count = count, .seed = seed,
                            .store = fp8 ? pj_matmul_set_element : NULL, .type = config->dtype};
}

/* A, B, C and (bias=column) a bias of zeros: what matters of it is the epilogue's cost. C is
 * compared element-wise within the output's rounding (two roundings apart: 2^-7 bf16, 2^-10
 * f16; f32 allows tf32 against fp32 products, 2^-10) plus an absolute term for the
 * accumulation order and tf32's rounded inputs near zero: 2^-9 sqrt(k) for inputs in [-1, 1);
 * where beta=scaled reads C it starts as zeros. */
static ptxjit_status tune_buffers(pj_tune_buffer *out, int *count, const pj_request *reference,
                                  const uint64_t *v)
{
    matmul_config config;
    ptxjit_status status = pj_matmul_config_from(&config, reference);
    if (status != PTXJIT_OK)
        return status;
    const uint64_t m = v[0], n = v[1], k = v[2];
    out[0] = input(&config, m * k, 3);
    out[1] = input(&config, k * n, 4);
    out[2] = (pj_tune_buffer){.role = PJ_TUNE_OUTPUT,
                              .bytes = m * n * (size_t)pj_dtype_bytes(config.out),
                              .kind = kind_of(config.out), .count = m * n,
                              .rel = config.out == PJ_DTYPE_bf16 ? 0x1p-7 : 0x1p-10,
                              .abs = 0x1p-9 * sqrt((double)k), .what = "C",
                              .read = config.beta};
    out[3] = (pj_tune_buffer){.role = PJ_TUNE_ZEROS,
                              .bytes = config.bias ? n * sizeof(float) : 0};
    *count = 4;
    return PTXJIT_OK;
}

/* The epilogue's defaults (alpha 1, beta 0), and the bias of zeros where the params add one. */
static ptxjit_status tune_run(ptxjit_context *context, ptxjit_kernel *kernel,
                              const ptxjit_devptr *buffers, const uint64_t *v, void *stream)
{
    ptxjit_matmul_epilogue epilogue;
    ptxjit_matmul_epilogue_init(&epilogue);
    epilogue.bias = buffers[3];
    return ptxjit_matmul_ex(context, kernel->canonical, buffers[0], buffers[1], buffers[2],
                            v[0], v[1], v[2], &epilogue, stream);
}

static ptxjit_status tune_types(char out[64], const pj_request *request)
{
    matmul_config config;
    ptxjit_status status = pj_matmul_config_from(&config, request);
    if (status == PTXJIT_OK)
        snprintf(out, 64, "dtype %s, out %s", pj_matmul_type_name(config.dtype),
                 pj_dtype_name(config.out));
    return status;
}

static const pj_family_tune tune_ops = {
    .problem_names = problem_names,
    /* A decoding's product streams its weights, which fit in L2 (B of 1 x 4096 x 4096 fp8 is
     * 16 MiB): timed warm, 64 x 64 tiles beat the swapped tile by 5-10%, emptied (as `bench
     * matmul` times every row) they ran at 0.72-0.81 of cuBLASLt against its 0.95-0.98.
     * Products larger than twice L2 are timed as they come (tune/runner.c). */
    .empty_l2 = PJ_TUNE_EMPTY_IF_FITS,
    /* Ten tunings of bf16 8192^3 on the H200 timed the same tile 0-2.8% behind each one's
     * fastest (other tiles, each a lucky median of a bimodal 2% spread): a 1% band let five
     * tunings pick three winners; replayed on their rows, 3% picks the sweep's own best in all
     * ten (measured with the L2 rule of empty_l2: 5 of 5). */
    .tie_floor = 0.03,
    .admits = tune_admits,
    .buffers = tune_buffers,
    .run = tune_run,
    .types = tune_types,
    .fix_types = "dtype and out (fixed parameters)",
    .bound_ms = pj_matmul_tune_bound,
};

/* The operands the op stages for the problem (buffers taken as 16-byte aligned). */
static void matmul_explain(char *out, size_t size, const pj_request *request,
                           const uint64_t *v)
{
    matmul_config config;
    out[0] = '\0';
    if (pj_matmul_config_from(&config, request) != PTXJIT_OK) {
        pj_error_clear();
        return;
    }
    pj_matmul_layout l;
    if (pj_matmul_layout_resolve(&l, &config, NULL, (size_t)v[0], (size_t)v[1],
                                 (size_t)v[2]) != PTXJIT_OK) {
        pj_error_clear();
        return;
    }
    /* swap=1 or sched=gemv first: which operand fills which side of the instruction. */
    size_t used = 0;
    if (config.swap && pj_matmul_is_wgmma(config.variant)) {
        const int written = snprintf(out, size, "C is computed as its transpose (swap=1): B's "
                                     "%zu row%s on wgmma's 64-row side, A's %zu row%s on its N "
                                     "side in tiles of %d", l.n, l.n == 1 ? "" : "s", l.m,
                                     l.m == 1 ? "" : "s", config.tile_n);
        used = written > 0 && (size_t)written < size ? (size_t)written : 0;
    } else if (config.gemv && pj_matmul_is_wgmma(config.variant)) {
        const int written = snprintf(out, size, "C's %zu column%s are dot products (sched=gemv): "
                                     "B's rows read once, 16 a block, by mma.sync with A's %zu "
                                     "row%s%s", l.n, l.n == 1 ? "" : "s", l.m,
                                     l.m == 1 ? "" : "s",
                                     l.m > 16 ? ", 16 at a time (B read again for each)" : "");
        used = written > 0 && (size_t)written < size ? (size_t)written : 0;
    }
    /* Dense rows: the llvm backend's kernels stage what the template's do. */
    const pj_matmul_takes takes = pj_matmul_takes_of(&config, PJ_BACKEND_NVRTC);
    char staged[768];
    pj_matmul_stage_describe(staged, sizeof staged, &config,
                             pj_matmul_stage_needed(&config, takes, 256, 256, 256, &l), &l);
    if (*staged)
        snprintf(out + used, size - used, "%s%s", used ? ". " : "", staged);
}

const pj_family pj_family_matmul = {
    "matmul", PJ_VARIANT_LIST_TEXT(PJ_MATMUL_VARIANTS), PJ_MATMUL_LLVM_VERSION,
    PJ_MATMUL_LLVM_VARIANTS, matmul_geometry, bench_sets, &tune_ops, NULL,
    pj_matmul_fit_words, matmul_explain,
};

/* shape.h — the transpose family's shape, shared by its host op, its IR generator and the
 * tests: the variants (templates/transpose.cu's `variant` enum must equal this list), a
 * block's threads and dynamic shared memory, and the one decoder of a request's parameters. */
#ifndef PTXJIT_FAMILIES_TRANSPOSE_SHAPE_H
#define PTXJIT_FAMILIES_TRANSPOSE_SHAPE_H

#include <stdlib.h>

#include "catalog/reader.h"
#include "catalog/variants.h"

#define PJ_TRANSPOSE_VARIANTS(X)                                                             \
    X(smem, TRANSPOSE_SMEM)                                                                  \
    X(tma, TRANSPOSE_TMA)                                                                    \
    X(tma_swizzle, TRANSPOSE_TMA_SWIZZLE)                                                    \
    X(tma_batched, TRANSPOSE_TMA_BATCHED)

typedef enum { PJ_TRANSPOSE_VARIANTS(PJ_VARIANT_ENUM) TRANSPOSE_VARIANT_COUNT } transpose_variant;

#define PJ_TRANSPOSE_LLVM_VERSION 1
#define PJ_TRANSPOSE_LLVM_VARIANTS PJ_VARIANT_LIST_TEXT(PJ_TRANSPOSE_VARIANTS)

/* A block moves one block x rows tile, per_thread elements a thread. */
static inline int pj_transpose_threads(int block, int rows, int per_thread)
{
    return per_thread > 0 ? block * rows / per_thread : 0;
}

/* The TMA variants' tiles in dynamic shared memory: tiles (2, or 1 in place) per stage, plus
 * 1 KiB of slack for aligning them to 1024 bytes, where the 128-byte swizzle repeats. */
static inline unsigned pj_transpose_shared_bytes(int smem, int stages, int tiles, int block,
                                                 int rows, int element_bytes)
{
    return smem ? 0u
                : (unsigned)((stages ? stages : 1) * tiles * block * rows * element_bytes + 1024);
}

/* How tma_batched transposes a tile in shared memory (its `xpose`). */
typedef enum { XPOSE_SCALAR, XPOSE_DIAGONAL, XPOSE_VECTOR } transpose_xpose;

typedef struct {
    transpose_variant variant;
    int block;         /* tile width: input columns, output rows */
    int tile_rows;     /* tile height: input rows, output columns (block unless rows= says) */
    int per_thread, threads;
    int swizzle_bytes; /* 0, 32, 64 or 128 */
    int tiles;         /* shared tiles of the TMA variants: 2, or 1 when transposed in place */
    int stages;        /* 0: a block per tile; else persistent blocks with this many loads ahead */
    unsigned shared_bytes; /* dynamic shared memory of a block (TMA variants), 0 for smem */
    pj_dtype dtype;
    /* What only the kernel's code depends on (the op launches it the same either way): */
    int group;         /* tile rows per raster group (1: row by row) */
    transpose_xpose xpose;
} transpose_config;

/* The tile's shape and the shared-memory layout. */
static inline void pj_transpose_decode_tile(transpose_config *out, const pj_param_value *block,
                                            const pj_param_value *rows,
                                            const pj_param_value *batch,
                                            const pj_param_value *swizzle)
{
    const int batched_tma = out->variant == TRANSPOSE_TMA_BATCHED;
    out->block = (int)block->value;
    out->tile_rows = batched_tma && rows->value ? (int)rows->value : out->block;
    out->per_thread = out->variant == TRANSPOSE_SMEM || batched_tma ? (int)batch->value : 1;
    out->threads = pj_transpose_threads(out->block, out->tile_rows, out->per_thread);
    const int swizzled = out->variant == TRANSPOSE_TMA_SWIZZLE || batched_tma;
    out->swizzle_bytes = !swizzled || strcmp(swizzle->text, "none") == 0 ? 0 : atoi(swizzle->text);
}

/* tma_batched's pipeline, and the order and layout the kernel works in. */
static inline void pj_transpose_decode_batched(transpose_config *out, const pj_param_reader *r,
                                               const pj_param_value *inplace,
                                               const pj_param_value *stages)
{
    const int batched_tma = out->variant == TRANSPOSE_TMA_BATCHED;
    const pj_param_value group = pj_read(r, "group"), xpose = pj_read(r, "xpose");
    out->tiles = batched_tma && inplace->value ? 1 : 2;
    out->stages = batched_tma ? (int)stages->value : 0;
    out->group = group.value < 1 ? 1 : (int)group.value;
    out->xpose = !batched_tma                   ? XPOSE_SCALAR
                 : pj_read_is(&xpose, "vector")   ? XPOSE_VECTOR
                 : pj_read_is(&xpose, "diagonal") ? XPOSE_DIAGONAL
                                                  : XPOSE_SCALAR;
}

/* The configuration a request asks for. */
static inline pj_decode_result pj_transpose_decode(transpose_config *out,
                                                   const pj_param_reader *r)
{
    const pj_param_value variant = pj_read(r, "variant"), block = pj_read(r, "block"),
                         batch = pj_read(r, "batch"), swizzle = pj_read(r, "swizzle"),
                         dtype = pj_read(r, "dtype"), inplace = pj_read(r, "inplace"),
                         stages = pj_read(r, "stages"), rows = pj_read(r, "rows");
    const pj_param_value *const needed[] = {&variant, &block,   &batch,  &swizzle,
                                            &dtype,   &inplace, &stages, &rows};
    const char *lacks = pj_read_lacking(needed, 8);
    if (lacks)
        return pj_decoded(PJ_DECODE_LACKS, lacks);
    const int index =
        pj_variant_index(PJ_VARIANT_LIST_TEXT(PJ_TRANSPOSE_VARIANTS), variant.text);
    if (index < 0)
        return pj_decoded(PJ_DECODE_VARIANT, variant.text);
    out->variant = (transpose_variant)index;
    out->dtype = (pj_dtype)pj_read_dtype(&dtype);
    pj_transpose_decode_tile(out, &block, &rows, &batch, &swizzle);
    pj_transpose_decode_batched(out, r, &inplace, &stages);
    out->shared_bytes = pj_transpose_shared_bytes(out->variant == TRANSPOSE_SMEM, out->stages,
                                                  out->tiles, out->block, out->tile_rows,
                                                  pj_dtype_bytes(out->dtype));
    return PJ_DECODE_OK;
}

#endif

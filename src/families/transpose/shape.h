/* shape.h — the transpose family's shape, shared by its host op, its IR generator and the
 * tests: the variants (templates/transpose.cu's `variant` enum must equal this list) and a
 * block's threads and dynamic shared memory. */
#ifndef PTXJIT_FAMILIES_TRANSPOSE_SHAPE_H
#define PTXJIT_FAMILIES_TRANSPOSE_SHAPE_H

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

#endif

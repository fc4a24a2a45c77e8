/* shape.h — the reduce family's shape, shared by its host op, its IR generator and the tests:
 * the variants (templates/reduce.cu's `variant` enum must equal this list) and a block's
 * threads. */
#ifndef PTXJIT_FAMILIES_REDUCE_SHAPE_H
#define PTXJIT_FAMILIES_REDUCE_SHAPE_H

#include "catalog/variants.h"

#define PJ_REDUCE_VARIANTS(X)                                                                \
    X(two_pass, REDUCE_TWO_PASS)                                                             \
    X(warp_shuffle, REDUCE_WARP_SHUFFLE)                                                     \
    X(one_pass, REDUCE_ONE_PASS)                                                             \
    X(batched, REDUCE_BATCHED)                                                               \
    X(vectorized, REDUCE_VECTORIZED)

typedef enum { PJ_REDUCE_VARIANTS(PJ_VARIANT_ENUM) REDUCE_VARIANT_COUNT } reduce_variant;

/* The IR generator's version (part of every llvm key of the family) and what it builds. */
#define PJ_REDUCE_LLVM_VERSION 3
#define PJ_REDUCE_LLVM_VARIANTS PJ_VARIANT_LIST_TEXT(PJ_REDUCE_VARIANTS)

/* Every variant runs tpb threads a block, with static shared memory only. */
static inline int pj_reduce_threads(int tpb)
{
    return tpb;
}

#endif

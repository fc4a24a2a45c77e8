/* shape.h — the reduce family's shape, shared by its host op, its IR generator and the tests:
 * the variants (templates/reduce.cu's `variant` enum must equal this list), the one decoder of
 * a request's parameters, and a block's threads. */
#ifndef PTXJIT_FAMILIES_REDUCE_SHAPE_H
#define PTXJIT_FAMILIES_REDUCE_SHAPE_H

#include "catalog/reader.h"
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

typedef struct {
    reduce_variant variant;
    int tpb, batch;
    pj_dtype dtype; /* i32 or f32 */
} reduce_config;

/* The configuration a request asks for. */
static inline pj_decode_result pj_reduce_decode(reduce_config *out, const pj_param_reader *r)
{
    const pj_param_value variant = pj_read(r, "variant"), tpb = pj_read(r, "tpb"),
                         batch = pj_read(r, "batch"), dtype = pj_read(r, "dtype");
    const pj_param_value *const needed[] = {&variant, &tpb, &batch, &dtype};
    const char *lacks = pj_read_lacking(needed, 4);
    if (lacks)
        return pj_decoded(PJ_DECODE_LACKS, lacks);
    out->variant =
        (reduce_variant)pj_variant_index(PJ_VARIANT_LIST_TEXT(PJ_REDUCE_VARIANTS), variant.text);
    out->dtype = (pj_dtype)pj_read_dtype(&dtype);
    out->tpb = (int)tpb.value;
    out->batch = (int)batch.value;
    if ((int)out->variant < 0)
        return pj_decoded(PJ_DECODE_VARIANT, variant.text);
    if (out->dtype != PJ_DTYPE_i32 && out->dtype != PJ_DTYPE_f32)
        return pj_decoded(PJ_DECODE_DTYPE, dtype.text);
    return PJ_DECODE_OK;
}

/* Every variant runs tpb threads a block, with static shared memory only. */
static inline int pj_reduce_threads(int tpb)
{
    return tpb;
}

#endif

/* shape.h — the softmax family's shape, shared by its host op (libptxjit), its IR generator
 * (the LLVM plugin) and the tests: the variants (templates/softmax.cu's `variant` enum must
 * equal this list), the one decoder of a request's parameters, the launch geometry, the
 * longest row a configuration holds, and the rule that picks the vector path. Header-only,
 * plain integers, no library state. */
#ifndef PTXJIT_FAMILIES_SOFTMAX_SHAPE_H
#define PTXJIT_FAMILIES_SOFTMAX_SHAPE_H

#include <stdint.h>

#include "catalog/reader.h"
#include "catalog/variants.h"

#define PJ_SOFTMAX_VARIANTS(X)                                                               \
    X(block, SOFTMAX_BLOCK)                                                                  \
    X(online, SOFTMAX_ONLINE)

typedef enum { PJ_SOFTMAX_VARIANTS(PJ_VARIANT_ENUM) SOFTMAX_VARIANT_COUNT } softmax_variant;

/* The IR generator's version (part of every llvm key of the family) and what it builds. */
#define PJ_SOFTMAX_LLVM_VERSION 1
#define PJ_SOFTMAX_LLVM_VARIANTS PJ_VARIANT_LIST_TEXT(PJ_SOFTMAX_VARIANTS)

/* The longest row the kernels take: element indices within a row stay below 2^31 (the
 * kernels index rows with 32-bit arithmetic, chunks of up to 2^15 elements past the end). */
#define PJ_SOFTMAX_MAX_COLS 0x7fffffffull
/* The most blocks of a launch (gridDim.x). */
#define PJ_SOFTMAX_MAX_BLOCKS 0x7fffffffull

/* A configuration as the template's parameters give it. */
typedef struct {
    softmax_variant variant;
    int tpb;           /* threads per block */
    int tpr;           /* threads per row: tpb / tpr rows per block */
    int vec;           /* elements per vector access */
    int items;         /* vector accesses per thread and row (online) or chunk (block) */
    int element_bytes; /* 4 (f32) or 2 (f16, bf16) */
} softmax_shape;

typedef struct {
    softmax_shape shape;
    pj_dtype dtype; /* f32, f16 or bf16 */
} softmax_config;

/* The configuration a request asks for. */
static inline pj_decode_result pj_softmax_decode(softmax_config *out, const pj_param_reader *r)
{
    const pj_param_value variant = pj_read(r, "variant"), dtype = pj_read(r, "dtype"),
                         tpb = pj_read(r, "tpb"), tpr = pj_read(r, "tpr"), vec = pj_read(r, "vec"),
                         items = pj_read(r, "items");
    const pj_param_value *const needed[] = {&variant, &dtype, &tpb, &tpr, &vec, &items};
    const char *lacks = pj_read_lacking(needed, 6);
    if (lacks)
        return pj_decoded(PJ_DECODE_LACKS, lacks);
    const int index = pj_variant_index(PJ_VARIANT_LIST_TEXT(PJ_SOFTMAX_VARIANTS), variant.text);
    out->dtype = (pj_dtype)pj_read_dtype(&dtype);
    out->shape = (softmax_shape){
        .variant = (softmax_variant)index,
        .tpb = (int)tpb.value,
        .tpr = (int)tpr.value,
        .vec = (int)vec.value,
        .items = (int)items.value,
        .element_bytes = pj_dtype_bytes(out->dtype),
    };
    if (index < 0)
        return pj_decoded(PJ_DECODE_VARIANT, variant.text);
    if (out->dtype != PJ_DTYPE_f32 && out->dtype != PJ_DTYPE_f16 && out->dtype != PJ_DTYPE_bf16)
        return pj_decoded(PJ_DECODE_DTYPE, dtype.text);
    return PJ_DECODE_OK;
}

static inline int pj_softmax_threads(const softmax_shape *s)
{
    return s->tpb;
}

static inline int pj_softmax_rows_per_block(const softmax_shape *s)
{
    return s->tpr > 0 && s->tpr <= s->tpb ? s->tpb / s->tpr : 1;
}

/* Dynamic shared memory: none. Rows of more than one warp merge their warps' (max, sum) pairs
 * through static shared memory, two floats per warp of the block. */
static inline unsigned pj_softmax_shared_bytes(const softmax_shape *s)
{
    (void)s;
    return 0;
}

static inline unsigned pj_softmax_static_shared_bytes(const softmax_shape *s)
{
    return s->tpr > 32 ? (unsigned)(2 * 4 * (s->tpb / 32)) : 0u;
}

/* The elements a thread holds at once: items vectors of vec, as fp32 in registers. */
static inline int pj_softmax_per_thread(const softmax_shape *s)
{
    return s->items * s->vec;
}

/* Up to this many 16-bit elements a thread, variant=online keeps their exponentials (fp32) for
 * the write: one exp per element where the exps, not the registers, are what counts. f32 ones
 * always replace their values; longer 16-bit shares are exponentiated again when written. */
#define PJ_SOFTMAX_HELD_MAX 16

/* The 32-bit registers that hold a thread's share: one an f32 element, one a pair of 16-bit
 * ones (kept as loaded) plus their kept exponentials (16 or fewer); element-wide loads
 * (vec = 1) land one to a register before pairs are packed. */
static inline int pj_softmax_held_registers(const softmax_shape *s)
{
    int per_thread = pj_softmax_per_thread(s);
    if (s->element_bytes == 4)
        return per_thread;
    int loaded = s->vec == 1 ? per_thread : (per_thread + 1) / 2;
    return loaded + (per_thread <= PJ_SOFTMAX_HELD_MAX ? per_thread : 0);
}

/* The second number of the kernels' __launch_bounds__: the blocks an SM should hold so that
 * ptxas keeps to the held registers plus 24 (32 for element-wide loads), rounded up to 8 (without a minimum it capped
 * 1024-thread blocks at 32 registers and spilled; with 1 it kept one pass's values live for the
 * next). 1 to 32. */
static inline int pj_softmax_min_blocks(const softmax_shape *s)
{
    int budget = (pj_softmax_held_registers(s) + (s->vec == 1 ? 32 : 24) + 7) / 8 * 8;
    int fit = s->tpb > 0 ? 65536 / (s->tpb * budget) : 1;
    return fit < 1 ? 1 : fit > 32 ? 32 : fit;
}

/* The longest row: online keeps a row in its tpr threads' registers; block walks any row. */
static inline uint64_t pj_softmax_max_cols(const softmax_shape *s)
{
    return s->variant == SOFTMAX_ONLINE ? (uint64_t)s->tpr * (uint64_t)pj_softmax_per_thread(s)
                                        : PJ_SOFTMAX_MAX_COLS;
}

/* Blocks for rows rows: one per tpb / tpr of them. */
static inline uint64_t pj_softmax_grid(const softmax_shape *s, uint64_t rows)
{
    uint64_t per_block = (uint64_t)pj_softmax_rows_per_block(s);
    return (rows + per_block - 1) / per_block;
}

/* Whether the kernel takes the vector path: vec-element accesses need every row start aligned
 * to the vector, so cols a multiple of vec and both buffers aligned to vec * element_bytes
 * (the grid takes one path alike); otherwise it moves element by element. */
static inline int pj_softmax_vector_path(const softmax_shape *s, uint64_t input, uint64_t output,
                                         uint64_t cols)
{
    uint64_t bytes = (uint64_t)s->vec * (uint64_t)s->element_bytes;
    return s->vec > 1 && cols % (uint64_t)s->vec == 0 && (input | output) % bytes == 0;
}

#endif

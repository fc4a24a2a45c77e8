/* shape.h — the matmul family's shape, shared by its host op, its IR generator and the tests:
 * the variants (templates/matmul.cu's `variant` enum must equal this list), a block's
 * threads and its dynamic shared memory, written once for both routes. */
#ifndef PTXJIT_FAMILIES_MATMUL_SHAPE_H
#define PTXJIT_FAMILIES_MATMUL_SHAPE_H

#include "catalog/variants.h"

#define PJ_MATMUL_VARIANTS(X)                                                                \
    X(naive, MATMUL_NAIVE)                                                                   \
    X(coalescing, MATMUL_COALESCING)                                                         \
    X(tiled, MATMUL_TILED)                                                                   \
    X(tiled_register, MATMUL_TILED_REGISTER)                                                 \
    X(block_tiled, MATMUL_BLOCK_TILED)                                                       \
    X(block_tiled_vectorized, MATMUL_BLOCK_TILED_VECTORIZED)                                 \
    X(tensor_core, MATMUL_TENSOR_CORE)                                                       \
    X(wgmma, MATMUL_WGMMA)                                                                   \
    X(wgmma_tf32, MATMUL_WGMMA_TF32)                                                         \
    X(wgmma_fp8, MATMUL_WGMMA_FP8)

/* The variants the LLVM generator builds: all but the last two (the library refuses those for
 * backend=llvm, naming backend=nvrtc). */
#define PJ_MATMUL_LLVM_LIST(X)                                                               \
    X(naive, MATMUL_NAIVE)                                                                   \
    X(coalescing, MATMUL_COALESCING)                                                         \
    X(tiled, MATMUL_TILED)                                                                   \
    X(tiled_register, MATMUL_TILED_REGISTER)                                                 \
    X(block_tiled, MATMUL_BLOCK_TILED)                                                       \
    X(block_tiled_vectorized, MATMUL_BLOCK_TILED_VECTORIZED)                                 \
    X(tensor_core, MATMUL_TENSOR_CORE)                                                       \
    X(wgmma, MATMUL_WGMMA)

typedef enum { PJ_MATMUL_VARIANTS(PJ_VARIANT_ENUM) MATMUL_VARIANT_COUNT } matmul_variant;

/* The wgmma variants (bf16/f16, tf32, fp8): one kernel skeleton, the last three of the list. */
static inline int pj_matmul_is_wgmma(matmul_variant v)
{
    return v == MATMUL_WGMMA || v == MATMUL_WGMMA_TF32 || v == MATMUL_WGMMA_FP8;
}

#define PJ_MATMUL_LLVM_VERSION 4
#define PJ_MATMUL_LLVM_VARIANTS PJ_VARIANT_LIST_TEXT(PJ_MATMUL_LLVM_LIST)

/* The tile parameters that decide a block's size (those a variant lacks are ignored). */
typedef struct {
    matmul_variant variant;
    int bm, bn, bk;     /* the block's tile of C and its K step; wgmma: bn is N of the mma */
    int tm, tn;         /* a thread's micro-tile (tiled_register: tm; block_tiled*: tm x tn) */
    int wm, wn;         /* tensor_core: a warp's tile */
    int consumers;      /* wgmma: consumer warpgroups beside the producer */
    int stages;         /* tensor_core and wgmma: shared-memory stages */
    int tma;            /* tensor_core: load=tma */
    int store_tma;      /* wgmma variants: store=tma (C through shared memory) */
    int out_bytes;      /* wgmma variants with store_tma: bytes of C's element */
} pj_matmul_tile;

/* Threads per block; 0 for a tile that divides by zero (the schema refuses those). */
static inline int pj_matmul_threads(const pj_matmul_tile *t)
{
    switch (t->variant) {
    case MATMUL_NAIVE:
    case MATMUL_COALESCING:
    case MATMUL_TILED:
        return t->bm * t->bn;
    case MATMUL_TILED_REGISTER:
        return t->tm ? t->bm * t->bn / t->tm : 0;
    case MATMUL_BLOCK_TILED:
    case MATMUL_BLOCK_TILED_VECTORIZED:
        return t->tm && t->tn ? t->bm * t->bn / (t->tm * t->tn) : 0;
    case MATMUL_TENSOR_CORE:
        return t->wm && t->wn ? t->bm / t->wm * (t->bn / t->wn) * 32 : 0;
    default:
        return 128 * (t->consumers + 1);
    }
}

/* Dynamic shared memory per block, as the template lays it out: tensor_core's padded stages
 * (load=cp_async) or swizzled ones plus 1 KiB of alignment (load=tma); the wgmma variants'
 * stages of 128-byte rows (B's columns rounded up to 64), store=tma's tile of C (bm x N), plus
 * 1 KiB of alignment; none for SIMT. */
static inline unsigned pj_matmul_shared_bytes(const pj_matmul_tile *t)
{
    if (t->variant == MATMUL_TENSOR_CORE && t->tma)
        return (unsigned)(t->stages * (t->bm + t->bn) * t->bk * 4 + 1024);
    if (t->variant == MATMUL_TENSOR_CORE)
        return (unsigned)(t->stages * (t->bm * (t->bk + 4) + t->bk * (t->bn + 8)) * 4);
    if (pj_matmul_is_wgmma(t->variant)) {
        int b_columns = (t->bn + 63) / 64 * 64;
        int c_tile = t->store_tma ? t->bm * t->bn * t->out_bytes : 0;
        return (unsigned)(t->stages * (t->bm + b_columns) * 128 + c_tile + 1024);
    }
    return 0;
}

#endif

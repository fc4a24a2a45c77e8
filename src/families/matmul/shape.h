/* shape.h — the matmul family's shape, shared by its host op, its IR generator and the tests:
 * the variants (templates/matmul.cu's `variant` enum must equal this list), a block's
 * threads and its dynamic shared memory, and the one decoder of a request's parameters,
 * written once for both routes. */
#ifndef PTXJIT_FAMILIES_MATMUL_SHAPE_H
#define PTXJIT_FAMILIES_MATMUL_SHAPE_H

#include "catalog/reader.h"
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

#define PJ_MATMUL_LLVM_VERSION 10

/* sched=gemv counts a row's bytes in 32 bits, and the offsets of the step K ends inside run up
 * to 124 bytes past K's last whole step (a lane's 32 bytes of a 128-byte step, read in words
 * at its end): the longest rows it takes. */
#define PJ_MATMUL_GEMV_ROW_BYTES_MAX (0x7fffffffull - 128)
/* sched=gemv's block and the columns of C it takes: templates/matmul.cu's GEMV_THREADS and
 * GEMV_COLUMNS. */
#define PJ_MATMUL_GEMV_THREADS 128
#define PJ_MATMUL_GEMV_COLUMNS 16
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
    int b_k_major;      /* wgmma variants: the kernel's B K-major (b_layout=nk, or swap=1's A) */
    int pingpong;       /* wgmma variants: sched=pingpong (C leaves through 64 of its rows) */
    int cluster;        /* wgmma variants: blocks per cluster (their shares of K-major B) */
    int gemv;           /* wgmma variants: sched=gemv (no shared memory for tiles) */
} pj_matmul_tile;

/* store=tma: the bytes of a row of C's boxes (of 64 rows), swizzled over that span: 128 where a
 * tile's row of tile_n outputs is a whole number of them, else 64, else 32 (the schema asks for
 * a multiple of 32). templates/matmul.cu's C_SPAN and the llvm backend's boxes are the same. */
static inline int pj_matmul_c_span(int tile_n, int out_bytes)
{
    const int row = tile_n * out_bytes;
    return row % 128 == 0 ? 128 : row % 64 == 0 ? 64 : 32;
}

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
        return t->gemv ? PJ_MATMUL_GEMV_THREADS : 128 * (t->consumers + 1);
    }
}

/* The rows of the TMA boxes in which the wgmma kernels load a stage's B; the boxes stack up to
 * a whole number of them, tile_n rows or the next multiple of 64. K-major B: a box per block of
 * the cluster, tile_n / cluster rows each, where those are whole 8-row swizzle atoms (one box
 * of tile_n rows alone); else one box of tile_n rows where tile_n is under 64; else 64.
 * N-major B: boxes of 64 columns. templates/matmul.cu's B_BOX_ROWS. */
static inline int pj_matmul_b_box_rows(int b_k_major, int tile_n, int cluster)
{
    if (b_k_major && tile_n % (8 * cluster) == 0)
        return tile_n / cluster;
    return b_k_major && tile_n < 64 ? tile_n : 64;
}

/* Dynamic shared memory per block, as the template lays it out: tensor_core's padded stages
 * (load=cp_async) or swizzled ones plus 1 KiB of alignment (load=tma); the wgmma variants'
 * stages of 128-byte rows (A's bm, B's boxes of pj_matmul_b_box_rows), store=tma's tile of C
 * (bm x N; 64 x N for sched=pingpong's consumers, which store their tiles in turn and in
 * parts), plus 1 KiB of alignment; none for SIMT and sched=gemv. */
static inline unsigned pj_matmul_shared_bytes(const pj_matmul_tile *t)
{
    if (t->variant == MATMUL_TENSOR_CORE && t->tma)
        return (unsigned)(t->stages * (t->bm + t->bn) * t->bk * 4 + 1024);
    if (t->variant == MATMUL_TENSOR_CORE)
        return (unsigned)(t->stages * (t->bm * (t->bk + 4) + t->bk * (t->bn + 8)) * 4);
    if (pj_matmul_is_wgmma(t->variant) && !t->gemv) {
        int box = pj_matmul_b_box_rows(t->b_k_major, t->bn, t->cluster);
        int b_columns = (t->bn + box - 1) / box * box;
        int c_rows = t->pingpong ? 64 : t->bm;
        int c_tile = t->store_tma ? c_rows * t->bn * t->out_bytes : 0;
        return (unsigned)(t->stages * (t->bm + b_columns) * 128 + c_tile + 1024);
    }
    return 0;
}

/* The family's element types beyond the library's dtypes: wgmma_fp8's one-byte floats, as
 * values after PJ_DTYPE_COUNT so that a pj_dtype field holds any input type. e4m3: 4 exponent
 * bits (bias 7), 3 mantissa bits, no infinities, largest 448; e5m2: 5 (bias 15) and 2, IEEE
 * style, largest finite 57344. */
#define PJ_MATMUL_E4M3 ((pj_dtype)PJ_DTYPE_COUNT)
#define PJ_MATMUL_E5M2 ((pj_dtype)(PJ_DTYPE_COUNT + 1))

/* Bytes of an element type (fp8: 1). */
static inline int pj_matmul_element_bytes(pj_dtype type)
{
    return type == PJ_MATMUL_E4M3 || type == PJ_MATMUL_E5M2 ? 1 : pj_dtype_bytes(type);
}

typedef struct {
    matmul_variant variant;
    pj_dtype dtype, out;    /* A and B (PJ_MATMUL_E4M3/E5M2 for wgmma_fp8); C */
    int bm, tile_n, bk;     /* the block's tile of C and its K step (tile_n: wgmma's N) */
    int threads;
    int stages;
    int tma;                /* tensor_core with load=tma: tensor maps as wgmma has them */
    int cluster;            /* blocks per thread-block cluster (wgmma's cluster=), else 1 */
    unsigned shared_bytes;  /* dynamic shared memory per block */
    /* The wgmma variants' (0 elsewhere): */
    int persistent;         /* sched=persistent or pingpong: resident blocks looping over tiles */
    int pingpong;           /* sched=pingpong: the consumers take whole tiles in turn */
    int gemv;               /* sched=gemv: B's rows read once by mma.sync, no wgmma */
    int store_tma;          /* store=tma: C through shared memory and a third tensor map */
    int b_nk;               /* b_layout=nk: B given as its transpose, N x K row-major */
    int alpha, beta, bias;  /* alpha=scaled, beta=scaled, bias=column */
    int splits;             /* split-K: at most this many parts of each tile's K loop */
    int swap;               /* swap=1: the kernel computes C's transpose (B^T A^T) */
    int act;                /* 0 none, 1 relu, 2 gelu */
    /* The work inside a block, which the kernel's code depends on and the op's launch only
     * through threads (each as the request gives it, also where the variant ignores it): */
    int bn, tm, tn;         /* SIMT: the block's tile columns, a thread's tm x tn of C */
    int wm, wn, prefetch;   /* tensor_core: a warp's tile, prefetch=1 */
    int consumers;          /* wgmma: consumer warpgroups */
    int group;              /* tile rows per raster group */
} matmul_config;

/* The parameters every matmul template has (an older one lacks only the newer others). */
typedef struct {
    pj_param_value variant, dtype, out, mma, bm, bn, bk, tm, tn, wm, wn, stages, consumers;
} pj_matmul_words;

/* A and B (wgmma_fp8: one of the fp8 formats), and C. */
static inline void pj_matmul_decode_types(matmul_config *out, const pj_param_reader *r,
                                          const pj_matmul_words *w)
{
    if (out->variant == MATMUL_WGMMA_FP8) {
        const pj_param_value fp8 = pj_read(r, "fp8");
        out->dtype = pj_read_is(&fp8, "e5m2") ? PJ_MATMUL_E5M2 : PJ_MATMUL_E4M3;
    } else {
        out->dtype = (pj_dtype)pj_read_dtype(&w->dtype);
    }
    out->out = (pj_dtype)pj_read_dtype(&w->out);
}

/* The wgmma variants' cluster, schedule and epilogue (1 and none where a template lacks a
 * parameter). */
static inline void pj_matmul_decode_wgmma(matmul_config *out, const pj_param_reader *r)
{
    const pj_param_value cluster = pj_read(r, "cluster"), sched = pj_read(r, "sched"),
                         store = pj_read(r, "store"), b_layout = pj_read(r, "b_layout"),
                         alpha = pj_read(r, "alpha"), beta = pj_read(r, "beta"),
                         bias = pj_read(r, "bias"), act = pj_read(r, "act"),
                         splits = pj_read(r, "splits"), swap = pj_read(r, "swap");
    out->cluster = cluster.present ? (int)cluster.value : 1;
    out->splits = splits.present ? (int)splits.value : 1;
    out->swap = swap.present && swap.value == 1;
    out->pingpong = pj_read_is(&sched, "pingpong");
    out->gemv = pj_read_is(&sched, "gemv");
    out->persistent = pj_read_is(&sched, "persistent") || out->pingpong;
    out->store_tma = pj_read_is(&store, "tma");
    out->b_nk = pj_read_is(&b_layout, "nk");
    out->alpha = pj_read_is(&alpha, "scaled");
    out->beta = pj_read_is(&beta, "scaled");
    out->bias = pj_read_is(&bias, "column");
    out->act = pj_read_is(&act, "relu") ? 1 : pj_read_is(&act, "gelu") ? 2 : 0;
}

/* The block's tile and pipeline, and from them its threads and shared memory. */
static inline void pj_matmul_decode_tile(matmul_config *out, const pj_param_reader *r,
                                         const pj_matmul_words *w)
{
    const int wgmma = pj_matmul_is_wgmma(out->variant);
    out->bm = (int)w->bm.value;
    out->bn = (int)w->bn.value;
    /* wgmma: a stage holds one 128-byte row of K. */
    out->bk = wgmma ? 128 / pj_matmul_element_bytes(out->dtype) : (int)w->bk.value;
    /* The mma list is m16n8k8, then m64nNk16 for N = 8, 16, ...: value i is N = 8 i. */
    out->tile_n = wgmma ? 8 * (int)w->mma.value : out->bn;
    out->tm = (int)w->tm.value;
    out->tn = (int)w->tn.value;
    out->wm = (int)w->wm.value;
    out->wn = (int)w->wn.value;
    out->stages = (int)w->stages.value;
    out->consumers = (int)w->consumers.value;
    out->cluster = 1;
    out->splits = 1;
    if (wgmma)
        pj_matmul_decode_wgmma(out, r);
    if (out->variant == MATMUL_TENSOR_CORE) { /* cp_async and no prefetch where absent */
        const pj_param_value load = pj_read(r, "load"), prefetch = pj_read(r, "prefetch");
        out->tma = pj_read_is(&load, "tma");
        out->prefetch = (int)prefetch.value;
    }
    out->group = (int)pj_read(r, "group").value;
    const pj_matmul_tile tile = {out->variant, out->bm, out->tile_n, out->bk, out->tm, out->tn,
                                 out->wm, out->wn, out->consumers, out->stages, out->tma,
                                 out->store_tma, pj_matmul_element_bytes(out->out),
                                 out->b_nk || out->swap, out->pingpong, out->cluster,
                                 out->gemv};
    out->threads = pj_matmul_threads(&tile);
    out->shared_bytes = pj_matmul_shared_bytes(&tile);
}

/* The configuration a request asks for. */
static inline pj_decode_result pj_matmul_decode(matmul_config *out, const pj_param_reader *r)
{
    const pj_matmul_words w = {
        pj_read(r, "variant"), pj_read(r, "dtype"), pj_read(r, "out"), pj_read(r, "mma"),
        pj_read(r, "bm"),      pj_read(r, "bn"),    pj_read(r, "bk"),  pj_read(r, "tm"),
        pj_read(r, "tn"),      pj_read(r, "wm"),    pj_read(r, "wn"),  pj_read(r, "stages"),
        pj_read(r, "consumers")};
    const pj_param_value *const needed[] = {&w.variant, &w.dtype, &w.out, &w.mma, &w.bm,
                                            &w.bn,      &w.bk,    &w.tm,  &w.tn,  &w.wm,
                                            &w.wn,      &w.stages, &w.consumers};
    memset(out, 0, sizeof *out);
    const char *lacks = pj_read_lacking(needed, 13);
    if (lacks)
        return pj_decoded(PJ_DECODE_LACKS, lacks);
    const int index = pj_variant_index(PJ_VARIANT_LIST_TEXT(PJ_MATMUL_VARIANTS), w.variant.text);
    if (index < 0)
        return pj_decoded(PJ_DECODE_VARIANT, w.variant.text);
    out->variant = (matmul_variant)index;
    pj_matmul_decode_types(out, r, &w);
    pj_matmul_decode_tile(out, r, &w);
    return PJ_DECODE_OK;
}

#endif

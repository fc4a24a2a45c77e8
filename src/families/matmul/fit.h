/* fit.h — the wgmma tile for the product's shape (fit.c), and the op's kernel for a shape (op.c). */
#ifndef PTXJIT_MATMUL_FIT_H
#define PTXJIT_MATMUL_FIT_H

#include "families/matmul/config.h"

typedef struct {
    int bm, bn;        /* the tile of C (swap=1: of C's transpose, bn rows of A) */
    const char *words; /* the parameters that ask for it */
    int splits;        /* split-K's parts (1: none) */
} pj_matmul_fit_tile;

/* 1 when params names a parameter of the tile or its pipeline (mma, bm, consumers, stages,
 * sched, group, cluster, store, splits, swap): the request is then taken as written. */
int pj_matmul_fit_names_tile(const char *params);

/* The smaller tile predicted fastest for an m x n C on sms SMs, where it is predicted at most
 * 0.85 of the bm x bn tile's time; NULL to keep bm x bn. */
const pj_matmul_fit_tile *pj_matmul_fit_choose(uint64_t m, uint64_t n, int bm, int bn, int sms);

/* sched=gemv for an m x n C of in_bytes elements (2: bf16, f16) with K-major B (b_k_major), at
 * most 8 rows and rows of A and B of k_bytes up to PJ_MATMUL_GEMV_ROW_BYTES_MAX (fit.c says
 * what was measured); NULL where not. */
const pj_matmul_fit_tile *pj_matmul_fit_gemv(uint64_t m, uint64_t n, uint64_t k_bytes,
                                             int in_bytes, int b_k_major);

/* A decoding's swapped tile (swap=1: C's transpose, 64 rows of B by 8, 16 or 32 rows of A: all
 * of m up to 32, else 32) for m x n on sms SMs, m at most 64; with one_wave (fp8) only where its
 * tiles are one wave at most. NULL where none. */
const pj_matmul_fit_tile *pj_matmul_fit_swap(uint64_t m, uint64_t n, int sms, int one_wave);

/* fp8's tile, given what the fit chose for m x n (chosen, of pj_matmul_fit_choose or
 * pj_matmul_fit_split_fp8; NULL: the request's bm x bn) on sms SMs: 128 x 128 with persistent
 * blocks and six stages in place of the 128 x 128 tile, and in place of the default 128 x 256
 * for 2 to 12 row tiles of 128 whose last holds more than 64 rows — either 128 x 128 becoming
 * 128 x 112 where its tiles fill the same number of waves (more than one) fuller, the last row
 * tile holds more than 96 rows and C's elements are of out_bytes 2; 64 x 64 with 13 stages in
 * place of the unsplit 64 x 64; else chosen. */
const pj_matmul_fit_tile *pj_matmul_fit_fp8(const pj_matmul_fit_tile *chosen, uint64_t m,
                                            uint64_t n, int bm, int bn, int out_bytes, int sms);

/* Ping-pong consumers (sched=pingpong) for an m x n C on sms SMs, where their 128-row tiles
 * give every block two or more: 128 x 128 with six stages, or where wide (fp8 without a bias:
 * 1) 128 x 176 with four where its waves are predicted at most 0.97 of 128 x 128's time (a
 * tile's time growing as its area to the power 0.89); NULL for fewer tiles. */
const pj_matmul_fit_tile *pj_matmul_fit_pingpong(uint64_t m, uint64_t n, int wide, int sms);

/* fp8 without a bias: the cooperative 128 x 224 (three stages) in place of pingpong (the tile
 * of pj_matmul_fit_pingpong; NULL stays NULL) where m makes four row tiles or more, its tiles
 * more than one wave and at most two, and those waves are predicted at most 0.85 of pingpong's
 * time (the same model); else pingpong. */
const pj_matmul_fit_tile *pj_matmul_fit_two_waves(const pj_matmul_fit_tile *pingpong,
                                                  uint64_t m, uint64_t n, int sms);

/* Split-K for a product of few tiles (m at most 32 rows, a decoding's; or at most 128 where
 * 64 x 64 tiles would leave more than half the SMs idle) of k_tiles k tiles on sms SMs: the
 * 64-row tile (64 x 128 or 64 x 64) and parts (2 to 4, each at least 4 k tiles) whose units
 * (tiles x parts, one wave at most) fill the SMs best, fills within 0.05 of the best taken as
 * equal and then the wider tile and the fewest parts; NULL where none fits one wave, or for
 * other products. */
const pj_matmul_fit_tile *pj_matmul_fit_split(uint64_t m, uint64_t n, uint64_t k_tiles, int sms);

/* The same for fp8 (k_tiles of 128 fp8 elements): 64 x 128, 64 x 64 (13 stages) or 64 x 32 (16
 * stages), and of the fills within 0.05 the fewest parts, then the wider tile. */
const pj_matmul_fit_tile *pj_matmul_fit_split_fp8(uint64_t m, uint64_t n, uint64_t k_tiles,
                                                  int sms);

/* The words of the smaller tile pj_matmul_fit_choose picks for request (params as written)
 * on the problem m, n, k (sizes) on sms SMs, or of split-K's tile and parts (pj_matmul_fit_split,
 * for fp8 pj_matmul_fit_split_fp8; not for the llvm backend: llvm 1), or pj_matmul_fit_swap's
 * tile where it gives one (not for the llvm backend); for fp8 the first as pj_matmul_fit_fp8
 * maps it; then, where that keeps the default tile or fp8's 128-row ones, C is 16-bit and the
 * template has sched=pingpong, pj_matmul_fit_pingpong's tile (not for the llvm backend, nor
 * tf32), for fp8 without a bias as pj_matmul_fit_two_waves maps it. Only where the request
 * is for a wgmma variant without clusters and names no tile parameter; NULL to keep the
 * request's tile. The family's fit (pj_family.fit; request/plan.h
 * adds the words). */
const char *pj_matmul_fit_words(const pj_request *request, const char *params,
                                const uint64_t *sizes, int sms, int llvm);

/* The tile whose words are words (the pointer pj_matmul_fit_words gave), or NULL. */
const pj_matmul_fit_tile *pj_matmul_fit_tile_of(const char *words);

/* The op's kernel for params on m x n x k (its plan's: request/plan.h) and its configuration;
 * *chosen (may be NULL) the tile the plan fitted to the shape, or NULL. */
ptxjit_status pj_matmul_fit(ptxjit_kernel **kernel, matmul_config *config,
                            const pj_matmul_fit_tile **chosen, ptxjit_context *context,
                            const char *params, size_t m, size_t n, size_t k);

#endif

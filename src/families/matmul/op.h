/* op.h — the host side of the matmul family: the shapes each variant accepts, the launch
 * (with TMA maps for the wgmma variants and load=tma, persistent grids, the epilogue's
 * values), the element types (fp8 among them) and the float64 CPU reference that the tests
 * and `ptxjit run` compare with. The configuration of a kernel is config.h's. */
#ifndef PTXJIT_OPS_MATMUL_H
#define PTXJIT_OPS_MATMUL_H

#include "families/matmul/config.h"
#include "families/matmul/stage.h"

/* The epilogue's values as the kernel takes them (its matmul_epilogue parameter). */
typedef struct {
    float alpha; /* alpha times wgmma_fp8's a_scale * b_scale */
    float beta;
    uint64_t bias;
} pj_matmul_epilogue_args;

/* The layout of a batch as the template's wgmma kernels take it (their matmul_layout
 * parameter; stage.h). */
typedef struct {
    long long c_stride;
    int ldc, batch, a_step, b_step;
    CUdeviceptr partials, arrivals; /* splits > 1: the context's workspace (request/scratch.h) */
    /* sched=gemv's, which reads A and B through pointers: elements between products and rows,
     * and B's rows (n: the kernel's N may be C's padded pitch). */
    long long a_stride, b_stride, lda, ldb;
    int b_rows;
} pj_matmul_layout_args;

/* The grid of the template's wgmma kernels counts every product's tiles (times split-K's
 * parts) in 32 bits: PTXJIT_ERR_INVALID_ARGUMENT naming the batch past it. */
ptxjit_status pj_matmul_check_batch_tiles(const matmul_config *config, pj_matmul_takes takes,
                                          const pj_matmul_layout *l);

/* Split-K's parts of each tile of an n x k product, as the kernel counts them (the template's
 * wg_tiles_of): at most config->splits, none empty; 1 without split-K. */
unsigned pj_matmul_parts(const matmul_config *config, size_t k);

/* The rows a batch's plan fits its tile to: m where there is one product; else the rows of
 * every product's whole 64-row tiles (a product's tiles never span two), at most
 * PJ_MATMUL_PLAN_ROWS_MAX: past it every wave of tiles is full alike, and the op's own check
 * counts the batch's tiles, naming the batch. */
#define PJ_MATMUL_PLAN_ROWS_MAX 0x7fffffc0u /* 2^31 - 64: whole 64-row tiles, 31 bits */
uint64_t pj_matmul_plan_rows(size_t m, const ptxjit_matmul_layout *layout);

/* Blocks of the grid for an m x n C: its tiles, row tiles rounded up to whole clusters. */
uint64_t pj_matmul_blocks(const matmul_config *config, size_t m, size_t n);

/* PTXJIT_OK when the variant accepts m x n x k at these addresses; else
 * PTXJIT_ERR_INVALID_ARGUMENT naming the rule and what to do instead. */
ptxjit_status pj_matmul_check_shape(const matmul_config *config, uint64_t a, uint64_t b, uint64_t c,
                                 size_t m, size_t n, size_t k);

/* Row `row` of C = A·B in float64, from A (m x k) and B (k x n; with b_nk its transpose, n x k)
 * of dtype (f32, bf16, f16, PJ_MATMUL_E4M3/E5M2). */
void pj_matmul_reference_row(double *out, const void *a, const void *b, pj_dtype dtype, size_t n,
                          size_t k, size_t row);
void pj_matmul_reference_row_layout(double *out, const void *a, const void *b, pj_dtype dtype,
                                    size_t n, size_t k, size_t row, int b_nk);
/* The wgmma epilogue on a row of products, in float64: out[j] = act(scale * out[j] + beta *
 * c_old[j] + bias[j]), each term where the config applies it (scale: alpha, times a_scale *
 * b_scale for wgmma_fp8; c_old: the row of C before the call; bias: the n floats on the
 * host). values NULL: ptxjit_matmul_epilogue_init's. */
void pj_matmul_reference_epilogue(double *out, size_t n, const matmul_config *config,
                                  const ptxjit_matmul_epilogue *values, const double *c_old,
                                  const float *bias);
/* An element of dtype (f32, bf16, f16, PJ_MATMUL_E4M3/E5M2; any of the first three for C) as a
 * double, and back (rounded to nearest even; fp8 saturates to its largest finite value). */
double pj_matmul_element(const void *data, pj_dtype dtype, size_t index);
void pj_matmul_set_element(void *data, pj_dtype dtype, size_t index, float value);

#endif

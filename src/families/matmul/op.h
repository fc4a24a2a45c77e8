/* op.h — the host side of the matmul family: configuration from the parameters, the
 * shapes each variant accepts, the launch (with TMA maps for wgmma and load=tma), and the float64 CPU
 * reference that the tests and `ptxjit run` compare with. */
#ifndef PTXJIT_OPS_MATMUL_H
#define PTXJIT_OPS_MATMUL_H

#include "context.h"
#include "families/family.h"
#include "families/matmul/shape.h"


typedef struct {
    matmul_variant variant;
    pj_dtype dtype, out;    /* A and B; C */
    int bm, tile_n, bk;     /* the block's tile of C and its K step (tile_n: wgmma's N) */
    int threads;
    int stages;
    int tma;                /* tensor_core with load=tma: tensor maps as wgmma has them */
    int cluster;            /* blocks per thread-block cluster (wgmma's cluster=), else 1 */
    unsigned shared_bytes;  /* dynamic shared memory per block */
} matmul_config;

ptxjit_status pj_matmul_config_of(matmul_config *out, const ptxjit_kernel *kernel);

/* Blocks of the grid for an m x n C: its tiles, row tiles rounded up to whole clusters. */
uint64_t pj_matmul_blocks(const matmul_config *config, size_t m, size_t n);

/* PTXJIT_OK when the variant accepts m x n x k at these addresses; else
 * PTXJIT_ERR_INVALID_ARGUMENT naming the rule and what to do instead. */
ptxjit_status pj_matmul_check_shape(const matmul_config *config, uint64_t a, uint64_t b, uint64_t c,
                                 size_t m, size_t n, size_t k);

/* Row `row` of C = A·B in float64, from A (m x k) and B (k x n) of dtype (f32, bf16, f16). */
void pj_matmul_reference_row(double *out, const void *a, const void *b, pj_dtype dtype, size_t n,
                          size_t k, size_t row);
/* An element of dtype (f32, bf16, f16; any of them for C) as a double, and back (rounded to
 * nearest even). */
double pj_matmul_element(const void *data, pj_dtype dtype, size_t index);
void pj_matmul_set_element(void *data, pj_dtype dtype, size_t index, float value);

#endif

/* op.h — the host side of the matmul family: configuration from the parameters, the
 * shapes each variant accepts, the launch (with TMA maps for the wgmma variants and load=tma,
 * persistent grids, the epilogue's values), the element types (fp8 among them) and the
 * float64 CPU reference that the tests and `ptxjit run` compare with. */
#ifndef PTXJIT_OPS_MATMUL_H
#define PTXJIT_OPS_MATMUL_H

#include "request/context.h"
#include "catalog/family.h"
#include "families/matmul/shape.h"


/* The family's element types beyond the library's dtypes: wgmma_fp8's one-byte floats, as
 * values after PJ_DTYPE_COUNT so that a pj_dtype field holds any input type. e4m3: 4 exponent
 * bits (bias 7), 3 mantissa bits, no infinities, largest 448; e5m2: 5 (bias 15) and 2, IEEE
 * style, largest finite 57344. */
#define PJ_MATMUL_E4M3 ((pj_dtype)PJ_DTYPE_COUNT)
#define PJ_MATMUL_E5M2 ((pj_dtype)(PJ_DTYPE_COUNT + 1))
/* Bytes of an element type (fp8: 1) and its name ("e4m3", "bf16", ...). */
int pj_matmul_type_bytes(pj_dtype type);
const char *pj_matmul_type_name(pj_dtype type);

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
    int persistent;         /* sched=persistent: a grid of resident blocks looping over tiles */
    int store_tma;          /* store=tma: C through shared memory and a third tensor map */
    int b_nk;               /* b_layout=nk: B given as its transpose, N x K row-major */
    int alpha, beta, bias;  /* alpha=scaled, beta=scaled, bias=column */
    int act;                /* 0 none, 1 relu, 2 gelu */
} matmul_config;

/* The epilogue's values as the kernel takes them (its matmul_epilogue parameter). */
typedef struct {
    float alpha; /* alpha times wgmma_fp8's a_scale * b_scale */
    float beta;
    uint64_t bias;
} pj_matmul_epilogue_args;

ptxjit_status pj_matmul_config_of(matmul_config *out, const ptxjit_kernel *kernel);

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

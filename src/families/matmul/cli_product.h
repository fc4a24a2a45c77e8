/* cli_product.h — one product, or a strided batch of them, on the command line
 * (cli_product.c), for the matmul family's `run` and tables (cli.c), `run` with a layout
 * (cli_layout.c) and `bench matmul shapes=` (cli_shapes.c): its buffers and its reference, a
 * timed and checked run of ptxjit or a peer. */
#ifndef PTXJIT_FAMILIES_MATMUL_CLI_PRODUCT_H
#define PTXJIT_FAMILIES_MATMUL_CLI_PRODUCT_H

#include "cli/cublas_peer.h"
#include "cli/timing.h"
#include "families/matmul/fit.h"
#include "families/matmul/op.h"

/* The buffers of one product or of a batch: host inputs (for the reference) and device A, B,
 * C. */
typedef struct {
    ptxjit_context *context;
    size_t m, n, k;
    pj_dtype dtype;
    /* Where the products lie, as ptxjit_matmul_strided takes it: dense rows (lda, ldb, ldc 0)
     * and one product (batch 1) unless a layout is given. B with ldb 0 serves both B layouts
     * (its k x n elements a product read as K x N or as N x K); with an ldb, the one it was
     * made for (b_nk). */
    ptxjit_matmul_layout layout;
    int b_nk;
    size_t span_a, span_b, span_c; /* elements of A's, B's and C's buffers, gaps included */
    void *a, *b;                   /* host copies of A's and B's buffers, gaps included */
    /* A product's B as dense floats (exact for every input type), made on use: which one is
     * b_values_at (its first element in B's buffer) read in layout b_values_nk. */
    float *b_values;
    size_t b_values_at;
    int b_values_nk;
    float *bias; /* n random floats, for bias=column */
    /* C's buffer as the last poisoning left it, where C has gaps (elements of no product):
     * c_poison_bytes a element; NULL while not poisoned or without gaps. */
    unsigned char *c_poison;
    int c_poison_bytes;
    ptxjit_devptr da, db, dc, dbias;
    /* Set by the bench of shapes: how L2 is emptied before each timed run, ours and the
     * peer's alike (time_median_ms_flushed); NULL: not. Not owned. */
    const cli_l2_flush *flush;
} matmul_data;

/* A peer's padded operands, for the products cuBLASLt's fp8 kernels refuse (k or n not a
 * multiple of 16): A, B and C in dense rows of whole 16-element units, zeros past the
 * product's own. Each run copies A and B in and C out with the copy ptxjit stages its own
 * operands with (matmul_stage_rows of `copy`), timed with the product, as a caller of
 * cuBLASLt with such a problem would have to. */
typedef struct {
    size_t np, kp;               /* n and k rounded up to 16 */
    int in_bytes, out_bytes;
    ptxjit_devptr a, b, c;
    ptxjit_kernel *copy;         /* any matmul kernel: every module has the copy */
} matmul_padding;

typedef struct {
    matmul_data *data;
    const char *params;
    cublas_peer *cublas; /* set: time cuBLAS instead of ptxjit */
    cublas_gemm kind;
    int b_nk; /* the buffer at db is B's transpose (n x k), for both ptxjit's params and cuBLAS */
    ptxjit_devptr workspace; /* cuBLASLt's (lt) */
    const matmul_config *config; /* ptxjit's rows: the params' epilogue, for the reference */
    cublas_lt_product *lt; /* set: time this cuBLASLt product's algorithm lt_algorithm */
    int lt_algorithm;
    const matmul_padding *pad; /* set with lt: the product runs on these padded copies */
} matmul_job;

/* cuBLASLt's workspace: what cuBLAS's documentation advises on Hopper. */
enum { CLI_MATMUL_LT_WORKSPACE = 32 << 20 };


typedef struct {
    double ms, error, tflops;
    int correct;
} measurement;

/* One run of the job: ptxjit's op (with the bias for bias=column), cuBLAS, or cuBLASLt. */
ptxjit_status cli_matmul_once(void *job);
/* Random inputs (B serves both layouts), a random bias, room for any C. */
ptxjit_status cli_matmul_data_make(matmul_data *d, ptxjit_context *context, size_t m, size_t n,
                                   size_t k, pj_dtype dtype);
/* The same for the products of layout (NULL: one, dense), as ptxjit_matmul_strided will be
 * given it (B laid out for b_nk where ldb is given): random values in every element of A's
 * and B's buffers, the gaps between the products' rows too. The layout must be one the
 * library takes (pj_matmul_layout_resolve). */
ptxjit_status cli_matmul_data_make_layout(matmul_data *d, ptxjit_context *context, size_t m,
                                          size_t n, size_t k, pj_dtype dtype,
                                          const ptxjit_matmul_layout *layout, int b_nk);
/* `batch` dense m x n x k products, each right after the last (strides m·k, k·n, m·n). */
ptxjit_matmul_layout cli_matmul_dense_batch(size_t batch, size_t m, size_t n, size_t k);
void cli_matmul_data_free(matmul_data *d);
/* NaN in every output byte pattern (zeros where beta=scaled reads C), on stream; where C has
 * gaps, they are NaN whatever beta (copied from the host: config gives the output type). */
ptxjit_status cli_matmul_poison(matmul_data *d, const matmul_config *config, void *stream);
/* 1 when C has elements outside every product (longer rows, space between products). */
int cli_matmul_has_gaps(const matmul_data *d);
/* After a run on the poisoned C: *written the first element of C's buffer outside every
 * product that is no longer as poisoned, or SIZE_MAX where none is (or C has no gaps). */
ptxjit_status cli_matmul_gap_written(size_t *written, matmul_data *d);
/* ‖C − C_ref‖ / ‖C_ref‖ over sampled rows of sampled products (every row of every product
 * while that costs at most about 1e9 multiply-adds), the epilogue applied; NaN for a
 * non-finite one. */
double cli_matmul_relative_error(matmul_data *d, pj_dtype out, int b_nk,
                                 const matmul_config *config);
/* The relative error a configuration's result must be within. */
double cli_matmul_tolerance(const matmul_config *config);
/* Poisons C, runs once, times the median of runs, checks the last run against float64. */
ptxjit_status cli_matmul_measure(measurement *out, matmul_job *job, pj_dtype result_type,
                                 double tolerance, int runs);
void cli_matmul_print_row(const char *name, const measurement *r, double peer, double writeup);
/* The configuration of the kernel the op takes for params on d's shape (every product's rows:
 * pj_matmul_plan_rows; *fitted: the tile it fitted, or NULL), checked to take d's input
 * type. */
ptxjit_status cli_matmul_config_for(matmul_config *config, const pj_matmul_fit_tile **fitted,
                                    const matmul_data *d, const char *params);

#endif

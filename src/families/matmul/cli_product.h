/* cli_product.h — one product on the command line (cli_product.c), for the matmul family's
 * `run` and tables (cli.c) and `bench matmul shapes=` (cli_shapes.c): its buffers and its
 * reference, a timed and checked run of ptxjit or a peer. */
#ifndef PTXJIT_FAMILIES_MATMUL_CLI_PRODUCT_H
#define PTXJIT_FAMILIES_MATMUL_CLI_PRODUCT_H

#include "cli/cublas_peer.h"
#include "families/matmul/fit.h"
#include "families/matmul/op.h"

/* One product's buffers: host inputs (for the reference) and device A, B, C. */
typedef struct {
    ptxjit_context *context;
    size_t m, n, k;
    pj_dtype dtype;
    void *a, *b;
    float *b_values; /* B's elements as floats (exact for every input type), made on first use */
    float *bias;     /* n random floats, for bias=column */
    ptxjit_devptr da, db, dc, dbias;
} matmul_data;

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
void cli_matmul_data_free(matmul_data *d);
/* NaN in every output byte pattern (zeros where beta=scaled reads C), on stream. */
ptxjit_status cli_matmul_poison(const matmul_data *d, const matmul_config *config, void *stream);
/* ‖C − C_ref‖ / ‖C_ref‖ over sampled rows, the epilogue applied; NaN for a non-finite one. */
double cli_matmul_relative_error(matmul_data *d, pj_dtype out, int b_nk,
                                 const matmul_config *config);
/* The relative error a configuration's result must be within. */
double cli_matmul_tolerance(const matmul_config *config);
/* Poisons C, runs once, times the median of runs, checks the last run against float64. */
ptxjit_status cli_matmul_measure(measurement *out, matmul_job *job, pj_dtype result_type,
                                 double tolerance, int runs);
void cli_matmul_print_row(const char *name, const measurement *r, double peer, double writeup);
/* The configuration of the kernel the op takes for params on d's shape (*fitted: the tile it
 * fitted, or NULL), checked to take d's input type. */
ptxjit_status cli_matmul_config_for(matmul_config *config, const pj_matmul_fit_tile **fitted,
                                    const matmul_data *d, const char *params);

#endif

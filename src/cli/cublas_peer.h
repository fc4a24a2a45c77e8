/* cublas_peer.h — cuBLAS, loaded with dlopen, as the peer that benchmarks compare against. */
#ifndef PTXJIT_CLI_CUBLAS_PEER_H
#define PTXJIT_CLI_CUBLAS_PEER_H

#include "ptxjit.h"

typedef struct cublas_peer cublas_peer;

/* NULL (with the reason in *why, valid for the whole process) when libcublas cannot be
 * loaded or initialized. libcublas is loaded once per process and stays loaded. */
cublas_peer *cublas_peer_open(const char **why);
void cublas_peer_close(cublas_peer *peer);
/* out (cols x rows, row-major) = transpose of in (rows x cols, row-major), fp32, through
 * cublasSgeam; 0 on success. */
int cublas_peer_transpose_f32(cublas_peer *peer, ptxjit_devptr out, ptxjit_devptr in,
                              size_t rows, size_t cols);

typedef enum {
    CUBLAS_SGEMM,      /* fp32, no tensor cores */
    CUBLAS_SGEMM_TF32, /* fp32 data, tf32 tensor cores */
    CUBLAS_GEMM_BF16,  /* bf16 in and out, fp32 accumulation */
    CUBLAS_GEMM_F16    /* f16 in and out, fp32 accumulation */
} cublas_gemm;
/* c (m x n) = a (m x k) · b (k x n), all row-major, through cublasGemmEx; with b_nk, b is
 * given as its transpose (n x k row-major); 0 on success. */
int cublas_peer_matmul(cublas_peer *peer, cublas_gemm kind, ptxjit_devptr c, ptxjit_devptr a,
                       ptxjit_devptr b, size_t m, size_t n, size_t k, int b_nk);

/* A strided batch: `count` products, product i's A, B and C at i·a, i·b and i·c elements from
 * the first's (a or b 0: every product reads the same matrix). */
typedef struct {
    size_t count, a, b, c;
} cublas_batch;
/* cublas_peer_matmul on every product of batch (each matrix dense), through
 * cublasGemmStridedBatchedEx; 0 on success. */
int cublas_peer_matmul_strided(cublas_peer *peer, cublas_gemm kind, ptxjit_devptr c,
                               ptxjit_devptr a, ptxjit_devptr b, size_t m, size_t n, size_t k,
                               int b_nk, const cublas_batch *batch);

/* cuBLAS's workspace for cublasGemmEx (cublasSetWorkspace): without one it takes a small
 * one of its own. 0 on success. */
int cublas_peer_set_workspace(cublas_peer *peer, ptxjit_devptr workspace, size_t bytes);

/* ---- cuBLASLt, searched: the algorithms its heuristic ranks for one product ---- */
#define CUBLAS_LT_MAX_ALGORITHMS 16
typedef enum {
    CUBLAS_LT_TF32, /* f32 data, tf32 tensor cores */
    CUBLAS_LT_BF16,
    CUBLAS_LT_F16,
    CUBLAS_LT_E4M3,
    CUBLAS_LT_E5M2
} cublas_lt_input;
typedef struct cublas_lt_product cublas_lt_product;
/* c (m x n, row-major; output: 0 f32, 1 bf16, 2 f16) = a (m x k) · b (k x n; b_nk: given as its
 * transpose), fp32 accumulation (fast: fp8's accumulation in the tensor cores alone), scales
 * 1, for every product of batch (NULL: one product; each matrix dense): the best `most` (at
 * most CUBLAS_LT_MAX_ALGORITHMS) of cuBLASLt's heuristic within workspace bytes. NULL on
 * success (*out: free it), else why. */
const char *cublas_lt_product_make(cublas_lt_product **out, cublas_peer *peer,
                                   cublas_lt_input input, int output, size_t m, size_t n,
                                   size_t k, int b_nk, int fast, const cublas_batch *batch,
                                   size_t workspace, int most);
int cublas_lt_product_count(const cublas_lt_product *p);
/* Runs algorithm (0: the heuristic's first) on the default stream; NULL on success. */
const char *cublas_lt_product_run(cublas_lt_product *p, int algorithm, ptxjit_devptr c,
                                  ptxjit_devptr a, ptxjit_devptr b, ptxjit_devptr workspace,
                                  size_t workspace_bytes);
/* What algorithm is, as cuBLASLt's header numbers it: its index, tile (cublasLtMatmulTile_t),
 * stages (cublasLtMatmulStages_t), cluster shape (cublasLtClusterShape_t) and K splits, into
 * text; 1 where cuBLASLt says, 0 (text empty) where it cannot. */
int cublas_lt_product_describe(const cublas_lt_product *p, int algorithm, char *text,
                               size_t size);
void cublas_lt_product_free(cublas_lt_product *p);

#endif

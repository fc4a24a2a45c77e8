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

/* c (m x n, row-major; out: 0 f32, 1 bf16, 2 f16) = a (m x k) · b (k x n), fp8 (e4m3, or
 * e5m2) with b given as its transpose b_t (n x k row-major: cuBLASLt's fp8 kernels take both
 * operands K-major), scales 1, through cublasLtMatmul with the algorithm of its heuristic and
 * a workspace of workspace_bytes; fast: CUBLASLT_MATMUL_DESC_FAST_ACCUM (accumulation in the
 * tensor cores only, as ptxjit's wgmma_fp8 does; 0: cuBLASLt's default, which adds partial
 * sums in fp32 on the way). NULL on success, else why (libcublasLt missing, no algorithm). */
const char *cublas_peer_matmul_fp8(cublas_peer *peer, ptxjit_devptr c, ptxjit_devptr a,
                                   ptxjit_devptr b_t, size_t m, size_t n, size_t k, int e5m2,
                                   int out, int fast, ptxjit_devptr workspace,
                                   size_t workspace_bytes);

#endif

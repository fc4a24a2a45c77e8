/* cublas_peer.c — cublasSgeam and cublasGemmEx through dlopen (dynlib.h): the library is
 * optional, and linking it would tie ptxjit to one toolkit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cublas_peer.h"
#include "dynlib.h"
#include "internal.h"

typedef int (*create_fn)(void **);
typedef int (*destroy_fn)(void *);
/* cublasSgeam(handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc) */
typedef int (*sgeam_fn)(void *, int, int, int, int, const float *, const float *, int,
                        const float *, const float *, int, float *, int);
/* cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
 * C, Ctype, ldc, computeType, algo) */
typedef int (*gemm_ex_fn)(void *, int, int, int, int, int, const void *, const void *, int, int,
                          const void *, int, int, const void *, void *, int, int, int, int);

struct cublas_peer {
    void *handle; /* cuBLAS's, one per peer */
};

/* Values from cublas_api.h and library_types.h (the library is loaded, not linked). */
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_GEMM_DEFAULT = -1 };

/* libcublas and its entry points, loaded once per process: what the peers share, and the
 * reason it failed (a message that outlives every peer). */
static struct {
    pj_dynlib lib;
    create_fn create;
    destroy_fn destroy;
    sgeam_fn sgeam;
    gemm_ex_fn gemm_ex;
    const char *why;
    char error[PJ_DYNLIB_ERROR_MAX];
} cublas;

static pthread_once_t cublas_once = PTHREAD_ONCE_INIT;

static void cublas_load_once(void)
{
    static const char *const sonames[] = {"libcublas.so.13", "libcublas.so.12", NULL};
    const pj_dynlib_spec spec = {
        .what = "cuBLAS",
        .sonames = sonames,
        .file = "libcublas.so",
        .places = PJ_DYNLIB_TOOLKIT,
        .fix = "install the CUDA toolkit's cuBLAS, or set CUDA_HOME to the toolkit"};
    cublas.why = cublas.error;
    if (!pj_dynlib_open(&cublas.lib, &spec)) {
        snprintf(cublas.error, sizeof cublas.error, "%s", cublas.lib.error);
        return;
    }
    const pj_dynlib_symbol symbols[] = {
        {"cublasCreate_v2", (void **)&cublas.create},
        {"cublasDestroy_v2", (void **)&cublas.destroy},
        {"cublasSgeam", (void **)&cublas.sgeam},
        {"cublasGemmEx", (void **)&cublas.gemm_ex},
    };
    const char *missing = pj_dynlib_resolve(cublas.lib.handle, symbols, PJ_ARRAY_SIZE(symbols));
    if (missing) {
        snprintf(cublas.error, sizeof cublas.error, "the cuBLAS library %s lacks %s",
                 cublas.lib.path, missing);
        return;
    }
    cublas.why = NULL;
}

cublas_peer *cublas_peer_open(const char **why)
{
    pthread_once(&cublas_once, cublas_load_once);
    if (cublas.why)
        return *why = cublas.why, NULL;
    cublas_peer *peer = calloc(1, sizeof *peer);
    if (!peer)
        return *why = "out of memory", NULL;
    if (cublas.create(&peer->handle) != 0) {
        free(peer);
        return *why = "cublasCreate failed", NULL;
    }
    return peer;
}

void cublas_peer_close(cublas_peer *peer)
{
    if (!peer)
        return;
    cublas.destroy(peer->handle);
    free(peer);
}

int cublas_peer_transpose_f32(cublas_peer *peer, ptxjit_devptr out, ptxjit_devptr in,
                              size_t rows, size_t cols)
{
    /* Column-major view: in is cols x rows (ld cols), out is rows x cols (ld rows), and
     * out = 1 * inᵀ + 0 * out. */
    const float one = 1.0f, zero = 0.0f;
    float *c = (float *)(uintptr_t)out;
    return cublas.sgeam(peer->handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)rows, (int)cols, &one,
                       (const float *)(uintptr_t)in, (int)cols, &zero, c, (int)rows, c,
                       (int)rows);
}

int cublas_peer_matmul(cublas_peer *peer, cublas_gemm kind, ptxjit_devptr c, ptxjit_devptr a,
                       ptxjit_devptr b, size_t m, size_t n, size_t k)
{
    /* Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: B and A swap places, nothing transposes. */
    static const struct {
        int input, output, compute;
    } kinds[] = {
        [CUBLAS_SGEMM] = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
        [CUBLAS_SGEMM_TF32] = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
        [CUBLAS_GEMM_BF16] = {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
        [CUBLAS_GEMM_F16] = {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F},
    };
    const float one = 1.0f, zero = 0.0f;
    return cublas.gemm_ex(peer->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                         (const void *)(uintptr_t)b, kinds[kind].input, (int)n,
                         (const void *)(uintptr_t)a, kinds[kind].input, (int)k, &zero,
                         (void *)(uintptr_t)c, kinds[kind].output, (int)n, kinds[kind].compute,
                         CUBLAS_GEMM_DEFAULT);
}

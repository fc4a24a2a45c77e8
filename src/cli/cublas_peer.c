/* cublas_peer.c — cublasSgeam through dlopen: the library is optional, and linking it would
 * tie ptxjit to one toolkit. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cublas_peer.h"

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
    void *library, *handle;
    destroy_fn destroy;
    sgeam_fn sgeam;
    gemm_ex_fn gemm_ex;
};

/* Values from cublas_api.h and library_types.h (the library is loaded, not linked). */
enum { CUBLAS_OP_N = 0, CUBLAS_OP_T = 1 };
enum { CUDA_R_32F = 0, CUDA_R_16F = 2, CUDA_R_16BF = 14 };
enum { CUBLAS_COMPUTE_32F = 68, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_GEMM_DEFAULT = -1 };

/* By soname first; the toolkit's own directory is often not in the loader's cache. */
static void *open_library(void)
{
    const char *cuda = getenv("CUDA_HOME");
    char paths[6][512];
    int count = 0;
    snprintf(paths[count++], sizeof paths[0], "libcublas.so.13");
    snprintf(paths[count++], sizeof paths[0], "libcublas.so.12");
    for (int dir = 0; dir < 2; dir++) {
        const char *root = dir == 0 ? cuda : "/usr/local/cuda";
        if (root && *root) {
            snprintf(paths[count++], sizeof paths[0], "%s/lib64/libcublas.so", root);
            snprintf(paths[count++], sizeof paths[0], "%s/lib/libcublas.so", root);
        }
    }
    for (int i = 0; i < count; i++) {
        void *library = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (library)
            return library;
    }
    return NULL;
}

cublas_peer *cublas_peer_open(const char **why)
{
    cublas_peer *peer = calloc(1, sizeof *peer);
    if (!peer)
        return *why = "out of memory", NULL;
    peer->library = open_library();
    create_fn create = peer->library ? (create_fn)dlsym(peer->library, "cublasCreate_v2") : NULL;
    peer->destroy = peer->library ? (destroy_fn)dlsym(peer->library, "cublasDestroy_v2") : NULL;
    peer->sgeam = peer->library ? (sgeam_fn)dlsym(peer->library, "cublasSgeam") : NULL;
    peer->gemm_ex = peer->library ? (gemm_ex_fn)dlsym(peer->library, "cublasGemmEx") : NULL;
    if (!create || !peer->destroy || !peer->sgeam || !peer->gemm_ex) {
        *why = "libcublas not found (by soname, $CUDA_HOME/lib64 or /usr/local/cuda/lib64) or "
               "it lacks cublasSgeam or cublasGemmEx";
    } else if (create(&peer->handle) != 0) {
        *why = "cublasCreate failed";
    } else {
        return peer;
    }
    if (peer->library)
        dlclose(peer->library);
    free(peer);
    return NULL;
}

void cublas_peer_close(cublas_peer *peer)
{
    if (!peer)
        return;
    peer->destroy(peer->handle);
    dlclose(peer->library);
    free(peer);
}

int cublas_peer_transpose_f32(cublas_peer *peer, ptxjit_devptr out, ptxjit_devptr in,
                              size_t rows, size_t cols)
{
    /* Column-major view: in is cols x rows (ld cols), out is rows x cols (ld rows), and
     * out = 1 * inᵀ + 0 * out. */
    const float one = 1.0f, zero = 0.0f;
    float *c = (float *)(uintptr_t)out;
    return peer->sgeam(peer->handle, CUBLAS_OP_T, CUBLAS_OP_N, (int)rows, (int)cols, &one,
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
    return peer->gemm_ex(peer->handle, CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                         (const void *)(uintptr_t)b, kinds[kind].input, (int)n,
                         (const void *)(uintptr_t)a, kinds[kind].input, (int)k, &zero,
                         (void *)(uintptr_t)c, kinds[kind].output, (int)n, kinds[kind].compute,
                         CUBLAS_GEMM_DEFAULT);
}

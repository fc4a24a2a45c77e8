/* cublas_peer.c — cublasSgeam, cublasGemmEx and cublasGemmStridedBatchedEx, and cuBLASLt's
 * searched matmul (one product or a strided batch), through dlopen
 * (the library's loader, dynlib.h): the libraries are optional, and linking them would tie
 * ptxjit to one toolkit. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/cublas_peer.h"
#include "cli_internal.h"

typedef int (*create_fn)(void **);
typedef int (*destroy_fn)(void *);
/* cublasSgeam(handle, transa, transb, m, n, alpha, A, lda, beta, B, ldb, C, ldc) */
typedef int (*sgeam_fn)(void *, int, int, int, int, const float *, const float *, int,
                        const float *, const float *, int, float *, int);
/* cublasGemmEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, B, Btype, ldb, beta,
 * C, Ctype, ldc, computeType, algo) */
typedef int (*gemm_ex_fn)(void *, int, int, int, int, int, const void *, const void *, int, int,
                          const void *, int, int, const void *, void *, int, int, int, int);
/* cublasGemmStridedBatchedEx(handle, transa, transb, m, n, k, alpha, A, Atype, lda, strideA,
 * B, Btype, ldb, strideB, beta, C, Ctype, ldc, strideC, batchCount, computeType, algo) */
typedef int (*gemm_strided_fn)(void *, int, int, int, int, int, const void *, const void *, int,
                               int, long long, const void *, int, int, long long, const void *,
                               void *, int, int, long long, int, int, int);
typedef int (*set_workspace_fn)(void *, void *, size_t);

struct cublas_peer {
    void *handle;    /* cuBLAS's, one per peer */
    void *lt_handle; /* cuBLASLt's, made on the first fp8 product */
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
    gemm_strided_fn gemm_strided;
    set_workspace_fn set_workspace;
    const char *why;
    char error[PJ_DYNLIB_ERROR_MAX];
} cublas;

static pthread_once_t cublas_once = PTHREAD_ONCE_INIT;

static void lt_close(void *handle); /* cuBLASLt's part, below */

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
        {"cublasGemmStridedBatchedEx", (void **)&cublas.gemm_strided},
        {"cublasSetWorkspace_v2", (void **)&cublas.set_workspace},
    };
    const char *missing = pj_dynlib_resolve(cublas.lib.handle, symbols, CLI_LENGTH(symbols));
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
    lt_close(peer->lt_handle);
    cublas.destroy(peer->handle);
    free(peer);
}

int cublas_peer_set_workspace(cublas_peer *peer, ptxjit_devptr workspace, size_t bytes)
{
    return cublas.set_workspace(peer->handle, (void *)(uintptr_t)workspace, bytes);
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

/* The data and compute types of a kind of GemmEx. */
static const struct {
    int input, output, compute;
} gemm_kinds[] = {
    [CUBLAS_SGEMM] = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F},
    [CUBLAS_SGEMM_TF32] = {CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32},
    [CUBLAS_GEMM_BF16] = {CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F},
    [CUBLAS_GEMM_F16] = {CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F},
};

int cublas_peer_matmul(cublas_peer *peer, cublas_gemm kind, ptxjit_devptr c, ptxjit_devptr a,
                       ptxjit_devptr b, size_t m, size_t n, size_t k, int b_nk)
{
    /* Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: B and A swap places, nothing transposes.
     * B given as its transpose (n x k row-major, b_nk) is column-major k x n: transposed
     * ("TN", both operands K-major). */
    const float one = 1.0f, zero = 0.0f;
    return cublas.gemm_ex(peer->handle, b_nk ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)n,
                         (int)m, (int)k, &one, (const void *)(uintptr_t)b,
                         gemm_kinds[kind].input, b_nk ? (int)k : (int)n,
                         (const void *)(uintptr_t)a, gemm_kinds[kind].input, (int)k, &zero,
                         (void *)(uintptr_t)c, gemm_kinds[kind].output, (int)n,
                         gemm_kinds[kind].compute, CUBLAS_GEMM_DEFAULT);
}

int cublas_peer_matmul_strided(cublas_peer *peer, cublas_gemm kind, ptxjit_devptr c,
                               ptxjit_devptr a, ptxjit_devptr b, size_t m, size_t n, size_t k,
                               int b_nk, const cublas_batch *batch)
{
    /* As cublas_peer_matmul, B and A swapped, with them their strides: cuBLAS's A is our B
     * (stride b), its B our A (stride a). A stride of 0 reads one matrix for every product,
     * as ours does. */
    const float one = 1.0f, zero = 0.0f;
    return cublas.gemm_strided(
        peer->handle, b_nk ? CUBLAS_OP_T : CUBLAS_OP_N, CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
        (const void *)(uintptr_t)b, gemm_kinds[kind].input, b_nk ? (int)k : (int)n,
        (long long)batch->b, (const void *)(uintptr_t)a, gemm_kinds[kind].input, (int)k,
        (long long)batch->a, &zero, (void *)(uintptr_t)c, gemm_kinds[kind].output, (int)n,
        (long long)batch->c, (int)batch->count, gemm_kinds[kind].compute, CUBLAS_GEMM_DEFAULT);
}

/* ---- cuBLASLt: fp8 ---- */

/* cuBLASLt's types, as its header declares them (the library is loaded, not linked). */
typedef struct {
    uint64_t data[8];
} lt_algo;
typedef struct {
    lt_algo algo;
    size_t workspace_size;
    int state;
    float waves;
    int reserved[4];
} lt_heuristic;

typedef int (*lt_create_fn)(void **);
typedef int (*lt_destroy_fn)(void *);
typedef int (*lt_desc_create_fn)(void **, int, int);
typedef int (*lt_set_fn)(void *, int, const void *, size_t);
typedef int (*lt_layout_create_fn)(void **, int, uint64_t, uint64_t, int64_t);
typedef int (*lt_layout_set_fn)(void *, int, const void *, size_t);
typedef int (*lt_pref_create_fn)(void **);
typedef int (*lt_heuristic_fn)(void *, void *, void *, void *, void *, void *, void *, int,
                               lt_heuristic *, int *);
typedef int (*lt_matmul_fn)(void *, void *, const void *, const void *, void *, const void *,
                            void *, const void *, const void *, void *, void *, void *,
                            const lt_algo *, void *, size_t, void *);
typedef int (*lt_algo_get_fn)(const lt_algo *, int, void *, size_t, size_t *);

enum { CUDA_R_8F_E4M3 = 28, CUDA_R_8F_E5M2 = 29 };
enum { LT_TRANSA = 3, LT_TRANSB = 4, LT_FAST_ACCUM = 25, LT_PREF_MAX_WORKSPACE = 1 };
/* cublasLtMatrixLayoutAttribute_t: int32_t count, int64_t stride in elements. */
enum { LT_LAYOUT_BATCH_COUNT = 5, LT_LAYOUT_STRIDED_BATCH_OFFSET = 6 };
/* cublasLtMatmulAlgoConfigAttributes_t: the algorithm's index (int32_t), tile (uint32_t, a
 * cublasLtMatmulTile_t), K splits (int32_t), stages (uint32_t, a cublasLtMatmulStages_t) and
 * cluster shape (uint16_t, a cublasLtClusterShape_t). */
enum { LT_ALGO_ID = 0, LT_ALGO_TILE = 1, LT_ALGO_SPLITS = 2, LT_ALGO_STAGES = 6,
       LT_ALGO_CLUSTER = 8 };

static struct {
    pj_dynlib lib;
    lt_create_fn create;
    lt_destroy_fn destroy, desc_destroy, layout_destroy, pref_destroy;
    lt_desc_create_fn desc_create;
    lt_set_fn desc_set, pref_set;
    lt_layout_create_fn layout_create;
    lt_layout_set_fn layout_set;
    lt_pref_create_fn pref_create;
    lt_heuristic_fn heuristic;
    lt_matmul_fn matmul;
    lt_algo_get_fn algo_get; /* optional: only to name an algorithm */
    const char *why;
    char error[PJ_DYNLIB_ERROR_MAX];
} lt;

static pthread_once_t lt_once = PTHREAD_ONCE_INIT;

static void lt_load_once(void)
{
    static const char *const sonames[] = {"libcublasLt.so.13", "libcublasLt.so.12", NULL};
    const pj_dynlib_spec spec = {
        .what = "cuBLASLt",
        .sonames = sonames,
        .file = "libcublasLt.so",
        .places = PJ_DYNLIB_TOOLKIT,
        .fix = "install the CUDA toolkit's cuBLAS, or set CUDA_HOME to the toolkit"};
    lt.why = lt.error;
    if (!pj_dynlib_open(&lt.lib, &spec)) {
        snprintf(lt.error, sizeof lt.error, "%s", lt.lib.error);
        return;
    }
    const pj_dynlib_symbol symbols[] = {
        {"cublasLtCreate", (void **)&lt.create},
        {"cublasLtDestroy", (void **)&lt.destroy},
        {"cublasLtMatmulDescCreate", (void **)&lt.desc_create},
        {"cublasLtMatmulDescDestroy", (void **)&lt.desc_destroy},
        {"cublasLtMatmulDescSetAttribute", (void **)&lt.desc_set},
        {"cublasLtMatrixLayoutCreate", (void **)&lt.layout_create},
        {"cublasLtMatrixLayoutDestroy", (void **)&lt.layout_destroy},
        {"cublasLtMatrixLayoutSetAttribute", (void **)&lt.layout_set},
        {"cublasLtMatmulPreferenceCreate", (void **)&lt.pref_create},
        {"cublasLtMatmulPreferenceDestroy", (void **)&lt.pref_destroy},
        {"cublasLtMatmulPreferenceSetAttribute", (void **)&lt.pref_set},
        {"cublasLtMatmulAlgoGetHeuristic", (void **)&lt.heuristic},
        {"cublasLtMatmul", (void **)&lt.matmul},
    };
    const char *missing = pj_dynlib_resolve(lt.lib.handle, symbols, CLI_LENGTH(symbols));
    if (missing) {
        snprintf(lt.error, sizeof lt.error, "the cuBLASLt library %s lacks %s", lt.lib.path,
                 missing);
        return;
    }
    const pj_dynlib_symbol naming[] = {
        {"cublasLtMatmulAlgoConfigGetAttribute", (void **)&lt.algo_get}};
    if (pj_dynlib_resolve(lt.lib.handle, naming, CLI_LENGTH(naming)))
        lt.algo_get = NULL;
    lt.why = NULL;
}

static void lt_close(void *handle)
{
    if (handle)
        lt.destroy(handle);
}

/* One product's descriptors and the algorithms cuBLASLt's heuristic ranks for it. */
struct cublas_lt_product {
    void *handle, *desc, *a, *b, *c, *pref;
    lt_heuristic choices[CUBLAS_LT_MAX_ALGORITHMS];
    int count;
};

void cublas_lt_product_free(cublas_lt_product *p)
{
    if (!p)
        return;
    if (p->pref)
        lt.pref_destroy(p->pref);
    if (p->c)
        lt.layout_destroy(p->c);
    if (p->b)
        lt.layout_destroy(p->b);
    if (p->a)
        lt.layout_destroy(p->a);
    if (p->desc)
        lt.desc_destroy(p->desc);
    free(p);
}

/* cuBLASLt's types of an input: its data type and compute type. */
static void lt_types(int *data, int *compute, cublas_lt_input input)
{
    static const int types[] = {[CUBLAS_LT_TF32] = CUDA_R_32F, [CUBLAS_LT_BF16] = CUDA_R_16BF,
                                [CUBLAS_LT_F16] = CUDA_R_16F, [CUBLAS_LT_E4M3] = CUDA_R_8F_E4M3,
                                [CUBLAS_LT_E5M2] = CUDA_R_8F_E5M2};
    *data = types[input];
    *compute = input == CUBLAS_LT_TF32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F;
}

/* A layout's strided batch: `count` matrices `stride` elements apart (left as one matrix for
 * a count of 1). 0 on success. */
static int lt_layout_batch(void *layout, size_t count, size_t stride)
{
    const int32_t matrices = (int32_t)count;
    const int64_t offset = (int64_t)stride;
    return count > 1 &&
           (lt.layout_set(layout, LT_LAYOUT_BATCH_COUNT, &matrices, sizeof matrices) ||
            lt.layout_set(layout, LT_LAYOUT_STRIDED_BATCH_OFFSET, &offset, sizeof offset));
}

/* Row-major C = A·B is column-major Cᵀ = Bᵀ·Aᵀ: B is cuBLASLt's A (n x k column-major with
 * ld n, "N"; given as its transpose, b_nk, it is k x n with ld k, "T"), A its B (k x m, ld k);
 * in a batch each takes its own operand's stride. */
static const char *lt_describe(cublas_lt_product *p, cublas_lt_input input, int out, size_t m,
                               size_t n, size_t k, int b_nk, int fast, const cublas_batch *batch,
                               size_t workspace)
{
    static const int outputs[] = {CUDA_R_32F, CUDA_R_16BF, CUDA_R_16F};
    int data, compute;
    lt_types(&data, &compute, input);
    const int transa = b_nk ? CUBLAS_OP_T : CUBLAS_OP_N, transb = CUBLAS_OP_N;
    const signed char fast_accum = (signed char)(fast != 0);
    const uint64_t workspace_bytes = workspace;
    if (lt.desc_create(&p->desc, compute, CUDA_R_32F) ||
        lt.desc_set(p->desc, LT_TRANSA, &transa, sizeof transa) ||
        lt.desc_set(p->desc, LT_TRANSB, &transb, sizeof transb) ||
        (input >= CUBLAS_LT_E4M3 &&
         lt.desc_set(p->desc, LT_FAST_ACCUM, &fast_accum, sizeof fast_accum)))
        return "cublasLtMatmulDescCreate failed";
    if ((b_nk ? lt.layout_create(&p->a, data, k, n, (int64_t)k)
              : lt.layout_create(&p->a, data, n, k, (int64_t)n)) ||
        lt.layout_create(&p->b, data, k, m, (int64_t)k) ||
        lt.layout_create(&p->c, outputs[out], n, m, (int64_t)n))
        return "cublasLtMatrixLayoutCreate failed";
    if (batch && (lt_layout_batch(p->a, batch->count, batch->b) ||
                  lt_layout_batch(p->b, batch->count, batch->a) ||
                  lt_layout_batch(p->c, batch->count, batch->c)))
        return "cublasLtMatrixLayoutSetAttribute (the batch) failed";
    if (lt.pref_create(&p->pref) ||
        lt.pref_set(p->pref, LT_PREF_MAX_WORKSPACE, &workspace_bytes, sizeof workspace_bytes))
        return "cublasLtMatmulPreferenceCreate failed";
    return NULL;
}

const char *cublas_lt_product_make(cublas_lt_product **out, cublas_peer *peer,
                                   cublas_lt_input input, int output, size_t m, size_t n,
                                   size_t k, int b_nk, int fast, const cublas_batch *batch,
                                   size_t workspace, int most)
{
    *out = NULL;
    pthread_once(&lt_once, lt_load_once);
    if (lt.why)
        return lt.why;
    if (!peer->lt_handle && lt.create(&peer->lt_handle))
        return "cublasLtCreate failed";
    cublas_lt_product *p = calloc(1, sizeof *p);
    if (!p)
        return "out of memory";
    p->handle = peer->lt_handle;
    if (most > CUBLAS_LT_MAX_ALGORITHMS)
        most = CUBLAS_LT_MAX_ALGORITHMS;
    const char *why = lt_describe(p, input, output, m, n, k, b_nk, fast, batch, workspace);
    if (!why && (lt.heuristic(p->handle, p->desc, p->a, p->b, p->c, p->c, p->pref, most,
                              p->choices, &p->count) ||
                 p->count < 1))
        why = "cuBLASLt has no algorithm for this product";
    if (why) {
        cublas_lt_product_free(p);
        return why;
    }
    *out = p;
    return NULL;
}

int cublas_lt_product_count(const cublas_lt_product *p)
{
    return p->count;
}

/* One attribute of algo as an unsigned value of `bytes` bytes; 0 where cuBLASLt cannot say. */
static int lt_algo_value(unsigned *value, const lt_algo *algo, int attribute, size_t bytes)
{
    uint32_t word = 0;
    uint16_t half = 0;
    size_t written = 0;
    void *buf = bytes == 2 ? (void *)&half : (void *)&word;
    if (!lt.algo_get || lt.algo_get(algo, attribute, buf, bytes, &written) || written != bytes)
        return 0;
    *value = bytes == 2 ? half : word;
    return 1;
}

int cublas_lt_product_describe(const cublas_lt_product *p, int algorithm, char *text,
                               size_t size)
{
    unsigned id, tile, splits, stages, cluster;
    if (!size)
        return 0;
    *text = '\0';
    if (algorithm < 0 || algorithm >= p->count)
        return 0;
    const lt_algo *algo = &p->choices[algorithm].algo;
    if (!lt_algo_value(&id, algo, LT_ALGO_ID, 4) || !lt_algo_value(&tile, algo, LT_ALGO_TILE, 4) ||
        !lt_algo_value(&splits, algo, LT_ALGO_SPLITS, 4) ||
        !lt_algo_value(&stages, algo, LT_ALGO_STAGES, 4) ||
        !lt_algo_value(&cluster, algo, LT_ALGO_CLUSTER, 2))
        return 0;
    snprintf(text, size, "id %u, tile %u, stages %u, cluster %u, splits %u", id, tile, stages,
             cluster, splits);
    return 1;
}

const char *cublas_lt_product_run(cublas_lt_product *p, int algorithm, ptxjit_devptr c,
                                  ptxjit_devptr a, ptxjit_devptr b, ptxjit_devptr workspace,
                                  size_t workspace_bytes)
{
    const float one = 1.0f, zero = 0.0f;
    if (algorithm < 0 || algorithm >= p->count)
        return "no such cuBLASLt algorithm";
    if (p->choices[algorithm].workspace_size > workspace_bytes)
        return "the algorithm needs more workspace than was given";
    if (lt.matmul(p->handle, p->desc, &one, (const void *)(uintptr_t)b, p->a,
                  (const void *)(uintptr_t)a, p->b, &zero, (const void *)(uintptr_t)c, p->c,
                  (void *)(uintptr_t)c, p->c, &p->choices[algorithm].algo,
                  (void *)(uintptr_t)workspace, workspace_bytes, NULL))
        return "cublasLtMatmul failed";
    return NULL;
}

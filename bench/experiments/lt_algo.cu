// lt_algo.cu — cuBLASLt's ranked fp8 algorithms for one product, each timed alone (events,
// L2 emptied by a 2x-L2 read before every run, median of 20), its tile, stages and cluster
// printed; with ONLY=I, algorithm I alone launched 3 times (for Nsight Compute: -s 2 -c 1).
// The product is the bench's: row-major C (M x N, bf16) = A (M x K, e4m3) times B given as
// N x K (cuBLASLt's TN, fast accumulation, 32 MiB of workspace).
// Build: nvcc -O2 -arch=sm_90a bench/experiments/lt_algo.cu -lcublasLt -o /tmp/lt_algo
// Usage: /tmp/lt_algo M N K [ONLY]
#include <cublasLt.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>

#define CHECK(x) do { auto r_ = (x); if (r_) { printf("%s: %d\n", #x, (int)r_); exit(1); } } while (0)

__global__ void fill(__nv_fp8_e4m3 *p, size_t n, unsigned seed)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += gridDim.x * (size_t)blockDim.x) {
        unsigned h = (unsigned)i * 2654435761u ^ seed;
        h ^= h >> 13; h *= 0x5bd1e995u; h ^= h >> 15;
        p[i] = __nv_fp8_e4m3(((h & 0xffff) / 32768.0f) - 1.0f);
    }
}

__global__ void sweep(const float4 *p, size_t n, float *sink)
{
    float s = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += gridDim.x * (size_t)blockDim.x)
        s += p[i].x;
    if (s == 12345.0f) *sink = s;
}

int main(int argc, char **argv)
{
    if (argc < 4) { printf("usage: lt_algo M N K [ONLY]\n"); return 2; }
    const long m = atol(argv[1]), n = atol(argv[2]), k = atol(argv[3]);
    const int only = argc > 4 ? atoi(argv[4]) : -1;
    __nv_fp8_e4m3 *a, *b; __nv_bfloat16 *c; void *ws; float4 *junk; float *sink;
    const size_t ws_bytes = 32 << 20, junk_n = (120u << 20) / 16;
    CHECK(cudaMalloc(&a, m * k)); CHECK(cudaMalloc(&b, n * k)); CHECK(cudaMalloc(&c, m * n * 2));
    CHECK(cudaMalloc(&ws, ws_bytes)); CHECK(cudaMalloc(&junk, junk_n * 16)); CHECK(cudaMalloc(&sink, 4));
    fill<<<1024, 256>>>(a, m * k, 1); fill<<<1024, 256>>>(b, n * k, 2);
    CHECK(cudaMemset(junk, 0, junk_n * 16));
    cublasLtHandle_t h; CHECK(cublasLtCreate(&h));
    cublasLtMatmulDesc_t d; CHECK(cublasLtMatmulDescCreate(&d, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N; int8_t fast = 1;
    CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CHECK(cublasLtMatmulDescSetAttribute(d, CUBLASLT_MATMUL_DESC_FAST_ACCUM, &fast, sizeof fast));
    cublasLtMatrixLayout_t la, lb, lc;
    CHECK(cublasLtMatrixLayoutCreate(&la, CUDA_R_8F_E4M3, k, n, k));
    CHECK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_8F_E4M3, k, m, k));
    CHECK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_16BF, n, m, n));
    cublasLtMatmulPreference_t pref; CHECK(cublasLtMatmulPreferenceCreate(&pref));
    uint64_t wsb = ws_bytes;
    CHECK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsb, sizeof wsb));
    cublasLtMatmulHeuristicResult_t res[16]; int count = 0;
    CHECK(cublasLtMatmulAlgoGetHeuristic(h, d, la, lb, lc, lc, pref, 16, res, &count));
    const float one = 1, zero = 0;
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    for (int i = 0; i < count; i++) {
        if (only >= 0 && i != only) continue;
        int tile = 0, stages = 0, id = 0; uint16_t cl = 0; size_t w;
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_ID, &id, 4, &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, 4, &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, 4, &w);
        cublasLtMatmulAlgoConfigGetAttribute(&res[i].algo, CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &cl, 2, &w);
        if (only >= 0) {
            for (int r = 0; r < 3; r++)
                CHECK(cublasLtMatmul(h, d, &one, b, la, a, lb, &zero, c, lc, c, lc, &res[i].algo, ws, ws_bytes, 0));
            CHECK(cudaDeviceSynchronize());
            printf("algorithm %d launched 3 times\n", i);
            return 0;
        }
        std::vector<float> t;
        for (int r = 0; r < 23; r++) {
            sweep<<<1320, 256>>>(junk, junk_n, sink);
            cudaEventRecord(e0);
            cublasStatus_t st = cublasLtMatmul(h, d, &one, b, la, a, lb, &zero, c, lc, c, lc, &res[i].algo, ws, ws_bytes, 0);
            cudaEventRecord(e1); cudaEventSynchronize(e1);
            if (st) { printf("algorithm %d: status %d\n", i, (int)st); break; }
            float ms; cudaEventElapsedTime(&ms, e0, e1);
            if (r >= 3) t.push_back(ms);
        }
        if (t.empty()) continue;
        std::sort(t.begin(), t.end());
        const double ms = t[t.size() / 2];
        printf("algorithm %d: id %d tile %d stages %d cluster %u workspace %zu: %.4f ms, %.1f TFLOP/s\n",
               i, id, tile, stages, cl, res[i].workspaceSize, ms, 2.0 * m * n * k / ms / 1e9);
    }
    return 0;
}

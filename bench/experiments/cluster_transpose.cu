// Experiment (not part of ptxjit; kept because docs/PERFORMANCE.md cites its numbers):
// transpose with thread-block clusters, so that both the reads and the writes of DRAM are
// runs of CL*T*4 bytes (1 KiB for CL=4, T=64) while each CTA keeps a T x CL*T tile.
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90a -o ctx cluster_transpose.cu && ./ctx
// CTA k of a cluster loads input rows R+T*k.., cols C..C+CL*T, transposed into its smem
// (padded); after a cluster barrier it writes output rows C+T*k.. taking each output row's
// CL pieces from the CL CTAs' shared memory (DSMEM).
#include <cooperative_groups.h>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s\n", #x, cudaGetErrorString(e)); exit(1);} } while (0)

template <int CL, int T, int U>
__global__ void __launch_bounds__(256) ctx(const float *__restrict__ in, float *__restrict__ out, int H, int W)
{
    constexpr int L = CL * T, P = T + 1, CH = L / 32;
    extern __shared__ float S[]; // L x P: S[c][r] = in[R + T*k + r][C + c]
    cg::cluster_group cluster = cg::this_cluster();
    const int k = cluster.block_rank();
    const int tile = blockIdx.x / CL;
    const int tiles_x = W / L;
    const int R = (tile / tiles_x) * L, C = (tile % tiles_x) * L;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    constexpr int PER = T * CH / 8; // warp chunks per warp
    const float *src = in + (size_t)(R + T * k) * W + C;
#pragma unroll
    for (int b = 0; b < PER; b += U) {
        float v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            int q = warp + 8 * (b + u), r = q / CH, ch = q % CH;
            v[u] = src[(size_t)r * W + 32 * ch + lane];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            int q = warp + 8 * (b + u), r = q / CH, ch = q % CH;
            S[(32 * ch + lane) * P + r] = v[u];
        }
    }
    cluster.sync();
    // output row C + T*k + j, columns R + T*m + i: S_m[T*k + j][i]
    float *dst = out + (size_t)(C + T * k) * H + R;
    constexpr int HC = T / 32;            // 32-float pieces per CTA per row
    constexpr int PER2 = T * CL * HC / 8; // warp chunks per warp
#pragma unroll
    for (int b = 0; b < PER2; b += U) {
        float v[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            int q = warp + 8 * (b + u);
            int j = q / (CL * HC), rest = q % (CL * HC), m = rest / HC, h = rest % HC;
            const float *Sm = cluster.map_shared_rank(S, m);
            v[u] = Sm[(T * k + j) * P + 32 * h + lane];
        }
#pragma unroll
        for (int u = 0; u < U; u++) {
            int q = warp + 8 * (b + u);
            int j = q / (CL * HC), rest = q % (CL * HC), m = rest / HC, h = rest % HC;
            dst[(size_t)j * H + T * m + 32 * h + lane] = v[u];
        }
    }
    cluster.sync();
}

static float median_ms(std::vector<float> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; }

template <int CL, int T, int U>
static void run(const float *din, float *dout, const float *hin, float *hout, int N)
{
    auto kern = ctx<CL, T, U>;
    size_t smem = (size_t)CL * T * (T + 1) * 4;
    CK(cudaFuncSetAttribute(kern, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    cudaLaunchConfig_t cfg = {};
    cudaLaunchAttribute at[1];
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = CL; at[0].val.clusterDim.y = 1; at[0].val.clusterDim.z = 1;
    cfg.attrs = at; cfg.numAttrs = 1;
    int L = CL * T;
    cfg.gridDim = dim3((N / L) * (N / L) * CL); cfg.blockDim = dim3(256); cfg.dynamicSmemBytes = smem;
    int nclusters = 0;
    cudaOccupancyMaxActiveClusters(&nclusters, (void *)kern, &cfg);
    CK(cudaMemset(dout, 0xff, (size_t)N * N * 4));
    CK(cudaLaunchKernelEx(&cfg, kern, din, dout, N, N));
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(hout, dout, (size_t)N * N * 4, cudaMemcpyDeviceToHost));
    long bad = 0;
    for (long r = 0; r < N; r += 7) for (long c = 0; c < N; c += 3) if (hout[c * N + r] != hin[r * N + c]) bad++;
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    std::vector<float> t;
    for (int i = 0; i < 23; i++) {
        cudaEventRecord(a); cudaLaunchKernelEx(&cfg, kern, din, dout, N, N); cudaEventRecord(b);
        cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (i >= 3) t.push_back(ms);
    }
    double gbs = 2.0 * N * N * 4 / (median_ms(t) * 1e-3) / 1e9;
    printf("N=%5d CL=%d T=%3d U=%2d smem=%6zu clusters/gpu=%4d  %8.1f GB/s  %s\n", N, CL, T, U, smem, nclusters, gbs, bad ? "WRONG" : "ok");
}

int main()
{
    for (int N : {16384, 32768}) {
        size_t bytes = (size_t)N * N * 4;
        float *hin = (float *)malloc(bytes), *hout = (float *)malloc(bytes);
        srand(N);
        for (size_t i = 0; i < (size_t)N * N; i++) hin[i] = (float)rand();
        float *din, *dout; CK(cudaMalloc(&din, bytes)); CK(cudaMalloc(&dout, bytes));
        CK(cudaMemcpy(din, hin, bytes, cudaMemcpyHostToDevice));
        cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
        std::vector<float> t;
        for (int i = 0; i < 23; i++) {
            cudaEventRecord(a); cudaMemcpyAsync(dout, din, bytes, cudaMemcpyDeviceToDevice); cudaEventRecord(b);
            cudaEventSynchronize(b); float ms; cudaEventElapsedTime(&ms, a, b); if (i >= 3) t.push_back(ms);
        }
        double copy = 2.0 * bytes / (median_ms(t) * 1e-3) / 1e9;
        printf("N=%5d copy %.1f GB/s\n", N, copy);
        run<4, 64, 16>(din, dout, hin, hout, N);
        run<4, 64, 8>(din, dout, hin, hout, N);
        run<4, 64, 32>(din, dout, hin, hout, N);
        run<2, 64, 16>(din, dout, hin, hout, N);
        run<4, 32, 8>(din, dout, hin, hout, N);
        run<8, 32, 16>(din, dout, hin, hout, N);
        run<2, 128, 16>(din, dout, hin, hout, N);
        run<8, 64, 16>(din, dout, hin, hout, N);
        cudaFree(din); cudaFree(dout); free(hin); free(hout);
    }
}

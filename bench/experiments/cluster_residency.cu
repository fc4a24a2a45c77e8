// Experiment (not part of ptxjit): how many clusters of 1, 2 and 4 blocks the GPU keeps
// resident at once when each block takes a whole SM, as the wgmma matmul's persistent blocks
// do (384 threads, about 200 KiB of dynamic shared memory). A cluster's blocks must share a
// GPC, so a GPC with an odd number of free SMs leaves one idle for clusters of two: fewer
// resident clusters than SMs / 2 would make matmul's cluster=2 run on fewer SMs than
// cluster=1, which may be why it loses (docs/PERFORMANCE.md, 2026-11-29 22:46).
// Two answers per size: the driver's (cudaOccupancyMaxActiveClusters), and a launch of as many
// blocks as SMs, each recording its SM and when it started: a block that starts after another
// ended waited for a free SM, a second wave.
// Build and run on the GPU machine: nvcc -O3 -arch=sm_90a -o cr cluster_residency.cu && ./cr
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t err_ = (x);                                                                \
        if (err_ != cudaSuccess) {                                                             \
            printf("%s: %s\n", #x, cudaGetErrorString(err_));                                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

__device__ unsigned long long now_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Thread 0 of each block notes its SM and start, holds the SM for spin_ns, notes its end.
__global__ void probe(unsigned long long *start, unsigned long long *end, unsigned *sm,
                      unsigned long long spin_ns)
{
    extern __shared__ char held[];
    held[threadIdx.x] = 0;
    if (threadIdx.x == 0) {
        const unsigned long long t0 = now_ns();
        unsigned id;
        asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
        while (now_ns() - t0 < spin_ns) {
        }
        start[blockIdx.x] = t0;
        sm[blockIdx.x] = id;
        end[blockIdx.x] = now_ns();
    }
}

int main()
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int shared = 200 * 1024, threads = 384;
    CK(cudaFuncSetAttribute(probe, cudaFuncAttributeMaxDynamicSharedMemorySize, shared));
    unsigned long long *start, *end;
    unsigned *sm;
    CK(cudaMalloc(&start, sms * sizeof *start));
    CK(cudaMalloc(&end, sms * sizeof *end));
    CK(cudaMalloc(&sm, sms * sizeof *sm));
    printf("%d SMs, one block of %d threads and %d KiB of shared memory an SM\n", sms, threads,
           shared / 1024);
    for (int size : {1, 2, 4}) {
        const int blocks = sms / size * size;
        cudaLaunchAttribute attribute;
        attribute.id = cudaLaunchAttributeClusterDimension;
        attribute.val.clusterDim.x = size;
        attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
        cudaLaunchConfig_t config = {};
        config.gridDim = dim3(blocks);
        config.blockDim = dim3(threads);
        config.dynamicSmemBytes = shared;
        config.attrs = &attribute;
        config.numAttrs = 1;
        int clusters = 0;
        CK(cudaOccupancyMaxActiveClusters(&clusters, probe, &config));
        CK(cudaLaunchKernelEx(&config, probe, start, end, sm, 200000ull));
        CK(cudaDeviceSynchronize());
        std::vector<unsigned long long> s(blocks), e(blocks);
        std::vector<unsigned> id(blocks);
        CK(cudaMemcpy(s.data(), start, blocks * sizeof s[0], cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(e.data(), end, blocks * sizeof e[0], cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(id.data(), sm, blocks * sizeof id[0], cudaMemcpyDeviceToHost));
        const unsigned long long first_end = *std::min_element(e.begin(), e.end());
        int late = 0;
        for (int b = 0; b < blocks; b++)
            late += s[b] >= first_end;
        const std::set<unsigned> distinct(id.begin(), id.end());
        printf("clusters of %d: the driver says %d resident (%d blocks); a launch of %d blocks: "
               "%d started in a second wave, %zu SMs used\n",
               size, clusters, clusters * size, blocks, late, distinct.size());
    }
    return 0;
}

// cub_reduce.cu — the peers ptxjit's reduce is measured against, in the same call on the same
// GPU: CUB DeviceReduce::Sum over int32 and a device-to-device copy. Built with nvcc on the
// GPU machine by bench/gpu_session.sh. Usage: cub_reduce [log2_n=30] [runs=20]
#include <cub/device/device_reduce.cuh>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                      \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,           \
                         cudaGetErrorString(e_));                                        \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

// Random values from a hash of the index, reproduced on the host for the expected sum.
__host__ __device__ inline int value_at(unsigned long long i, unsigned long long seed)
{
    unsigned long long z = (i + seed) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return (int)(unsigned)(z ^ (z >> 31));
}

__global__ void fill(int *data, unsigned long long n, unsigned long long seed)
{
    for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)
        data[i] = value_at(i, seed);
}

template <typename F> static double median_ms(int runs, F &&body)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 3; i++)
        body();
    std::vector<float> samples(runs);
    for (int i = 0; i < runs; i++) {
        CHECK(cudaEventRecord(start));
        body();
        CHECK(cudaEventRecord(stop));
        CHECK(cudaEventSynchronize(stop));
        CHECK(cudaEventElapsedTime(&samples[i], start, stop));
    }
    std::sort(samples.begin(), samples.end());
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return runs % 2 ? samples[runs / 2] : (samples[runs / 2 - 1] + samples[runs / 2]) / 2.0;
}

int main(int argc, char **argv)
{
    const int log2_n = argc > 1 ? std::atoi(argv[1]) : 30, runs = argc > 2 ? std::atoi(argv[2]) : 20;
    const unsigned long long n = 1ull << log2_n;
    const unsigned long long seed = (unsigned long long)
        std::chrono::steady_clock::now().time_since_epoch().count();
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, %d SMs, n = %llu int32, median of %d\n", prop.name,
                prop.multiProcessorCount, n, runs);

    int *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(int)));
    CHECK(cudaMalloc(&out, sizeof(int)));
    fill<<<4096, 256>>>(in, n, seed);
    CHECK(cudaGetLastError());
    unsigned expected = 0;
    for (unsigned long long i = 0; i < n; i++)
        expected += (unsigned)value_at(i, seed);

    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, (long long)n));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    double ms = median_ms(runs, [&] {
        CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, (long long)n));
    });
    int got;
    CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    if ((unsigned)got != expected) {
        std::fprintf(stderr, "CUB sum %d, expected %d\n", got, (int)expected);
        return 1;
    }

    const size_t copy_bytes = 1ull << 31;
    char *src, *dst;
    CHECK(cudaMalloc(&src, copy_bytes));
    CHECK(cudaMalloc(&dst, copy_bytes));
    CHECK(cudaMemset(src, 0x5a, copy_bytes));
    double copy_ms = median_ms(runs, [&] {
        CHECK(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice));
    });

    std::printf("cub_reduce_i32 n=%llu median_ms=%.4f gbps=%.1f\n", n, ms, n * 4.0 / (ms * 1e6));
    std::printf("memcpy_d2d bytes=%zu median_ms=%.4f gbps=%.1f\n", copy_bytes, copy_ms,
                2.0 * copy_bytes / (copy_ms * 1e6));
    CHECK(cudaFree(temp));
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    return 0;
}

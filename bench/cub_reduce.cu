// cub_reduce.cu — the peers ptxjit's reduce is measured against, in the same call on the same
// GPU: CUB DeviceReduce::Sum over int32 and a 2 GiB device-to-device copy. Built with nvcc on
// the GPU machine by bench/gpu_session.sh. Usage: cub_reduce [log2_n=30] [runs=20]
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

// Values in [-1000, 1000] from a hash (splitmix64) of index and seed: fresh per process, never
// zeros, and cheap to reproduce on the host, so the expected sum needs no 4 GiB host copy.
__host__ __device__ inline int value_at(unsigned long long i, unsigned long long seed)
{
    unsigned long long z = (i + seed) * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (int)(z % 2001) - 1000;
}

__global__ void fill(int *data, unsigned long long n, unsigned long long seed)
{
    for (unsigned long long i = blockIdx.x * 256ull + threadIdx.x; i < n; i += 256ull * gridDim.x)
        data[i] = value_at(i, seed);
}

// Median of `runs` event-timed calls of body() after 3 warm-ups. before() runs ahead of each
// timed call but outside its event pair (used to clear the output, so that the value checked
// afterwards can only have come from the last timed call).
template <typename B, typename F> static double median_ms(int runs, B &&before, F &&body)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < 3; i++)
        body();
    std::vector<float> samples(runs);
    for (int i = 0; i < runs; i++) {
        before();
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
    const int log2_n = argc > 1 ? std::atoi(argv[1]) : 30;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 20;
    if (log2_n < 1 || log2_n > 32 || runs < 1) {
        std::fprintf(stderr, "usage: %s [log2_n=30 (1..32)] [runs=20]\n", argv[0]);
        return 1;
    }
    const unsigned long long n = 1ull << log2_n;
    const unsigned long long seed =
        (unsigned long long)std::chrono::steady_clock::now().time_since_epoch().count();
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("device %s, %d SMs, n = %llu int32, median of %d runs after 3 warm-ups\n",
                prop.name, prop.multiProcessorCount, n, runs);

    // --- CUB DeviceReduce::Sum, int32 in, int32 out ---
    int *in, *out;
    CHECK(cudaMalloc(&in, n * sizeof(int)));
    CHECK(cudaMalloc(&out, sizeof(int)));
    fill<<<4096, 256>>>(in, n, seed);
    CHECK(cudaGetLastError());
    // The int32 sum wraps modulo 2^32; unsigned arithmetic gives that without overflow UB.
    unsigned expected = 0;
    for (unsigned long long i = 0; i < n; i++)
        expected += (unsigned)value_at(i, seed);

    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, (long long)n));
    void *temp;
    CHECK(cudaMalloc(&temp, temp_bytes));
    const double ms = median_ms(
        runs, [&] { CHECK(cudaMemsetAsync(out, 0, sizeof(int))); },
        [&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, (long long)n)); });
    int got;
    CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    if ((unsigned)got != expected) {
        std::fprintf(stderr, "CUB sum %d, expected %d\n", got, (int)expected);
        return 1;
    }
    CHECK(cudaFree(temp));
    CHECK(cudaFree(in));  // freed before the copy buffers so both tests fit on smaller GPUs
    CHECK(cudaFree(out));

    // --- device-to-device copy: 2 GiB (512M int32), 40x the 50 MB L2 ---
    const unsigned long long copy_n = 1ull << 29;
    const size_t copy_bytes = copy_n * sizeof(int);
    int *src, *dst;
    CHECK(cudaMalloc(&src, copy_bytes));
    CHECK(cudaMalloc(&dst, copy_bytes));
    fill<<<4096, 256>>>(src, copy_n, seed + 1);
    CHECK(cudaGetLastError());
    const double copy_ms = median_ms(
        runs, [] {},
        [&] { CHECK(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice)); });
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));

    // Bandwidth in GB/s (1e9 bytes/s): reduce counts bytes read, copy counts read + written.
    std::printf("cub_reduce_i32 n=%llu median_ms=%.4f gbps=%.1f\n", n, ms,
                n * 4.0 / (ms * 1e6));
    std::printf("memcpy_d2d bytes=%zu median_ms=%.4f gbps=%.1f\n", copy_bytes, copy_ms,
                2.0 * copy_bytes / (copy_ms * 1e6));
    return 0;
}

// cub_reduce.cu — the peers ptxjit's reduce is measured against, on the same GPU: CUB
// DeviceReduce::Sum over int32 with 64-bit offsets (num_items a long long) and with 32-bit ones
// (num_items an int: CUB's choose_offset_t makes the offsets uint32_t), and the 2 GiB
// device-to-device copy. Built with nvcc on the GPU machine by bench/gpu_session.sh.
//
// Timed exactly as `ptxjit bench reduce` times its rows (src/cli/timing.c, time_median_ms, and
// src/families/reduce/cli.c): 3 warm-up calls, then `runs` calls each between two CUDA events
// on the legacy default stream, the stream held by cuStreamWaitValue32 on a word of mapped host
// memory until the whole sample (start event, the call, stop event) is enqueued, so that the
// events time the GPU work and not the host's submission; the median of the runs (the mean of
// the middle two for an even count). No L2 flush between runs, as there (the 4 GiB input is
// 80x the H100's 50 MB L2). The result is poisoned once before the warm-ups and checked after
// the last run. The copy is timed first, as there: 2 GiB filled with 0x5a5a5a5a, bytes read +
// written. The rows print in `bench reduce`'s format (params, GB/s, % of the copy, the
// write-up's column empty, ok or WRONG), so that bench/ab_rounds.sh can take turns between the
// two programs and grep the same rows: it takes `bench reduce`'s words.
//
// Usage: cub_reduce bench reduce [n=N] [runs=R]   (n = 2^30, runs = 20 by default; N may be
//                                                 written 2^K)
//        cub_reduce [log2_n=30] [runs=20]          (the older form)
#include <cub/device/device_reduce.cuh>
#include <cub/version.cuh>
#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

// The gate of src/cli/timing.c: the default stream waits until a counter in mapped host memory
// reaches the sample's number, which the host writes once the sample is wholly enqueued.
typedef CUresult (*wait_value_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

struct Gate {
    volatile unsigned *host = nullptr;
    CUdeviceptr device = 0;
    wait_value_fn wait = nullptr;

    Gate()
    {
        void *p = nullptr;
        CHECK(cudaHostAlloc(&p, 4, cudaHostAllocMapped));
        host = static_cast<volatile unsigned *>(p);
        *host = 0;
        void *d = nullptr;
        CHECK(cudaHostGetDevicePointer(&d, p, 0));
        device = reinterpret_cast<CUdeviceptr>(d);
        void *fn = nullptr;
        cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
#if CUDART_VERSION >= 12050
        CHECK(cudaGetDriverEntryPointByVersion("cuStreamWaitValue32", &fn, 12000,
                                               cudaEnableDefault, &found));
#else
        CHECK(cudaGetDriverEntryPoint("cuStreamWaitValue32", &fn, cudaEnableDefault, &found));
#endif
        if (found != cudaDriverEntryPointSuccess || !fn) {
            std::fprintf(stderr, "the CUDA driver has no cuStreamWaitValue32\n");
            std::exit(1);
        }
        wait = reinterpret_cast<wait_value_fn>(fn);
    }
    ~Gate() { cudaFreeHost(const_cast<unsigned *>(host)); }
    void hold(unsigned sample)
    {
        CUresult r = wait(nullptr, device, sample, CU_STREAM_WAIT_VALUE_GEQ);
        if (r != CUDA_SUCCESS) {
            std::fprintf(stderr, "cuStreamWaitValue32 failed: CUDA error %d\n", (int)r);
            std::exit(1);
        }
    }
    void open(unsigned sample) { __atomic_store_n(host, sample, __ATOMIC_RELEASE); }
};

// time_median_ms of src/cli/timing.c: 3 warm-ups, then `runs` gated samples between events.
template <typename F> static double median_ms(int runs, F &&body)
{
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    Gate gate;
    for (int i = 0; i < 3; i++)
        body();
    std::vector<double> samples(runs);
    for (int i = 0; i < runs; i++) {
        const unsigned sample = (unsigned)i + 1;
        gate.hold(sample);
        CHECK(cudaEventRecord(start, 0));
        body();
        CHECK(cudaEventRecord(stop, 0));
        gate.open(sample);
        CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CHECK(cudaEventElapsedTime(&ms, start, stop));
        samples[i] = ms;
    }
    CHECK(cudaDeviceSynchronize()); // nothing may wait on the gate when it is freed
    std::sort(samples.begin(), samples.end());
    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    return runs % 2 ? samples[runs / 2] : (samples[runs / 2 - 1] + samples[runs / 2]) / 2.0;
}

// One row of `bench reduce`'s table: params, GB/s, % of the copy, the write-up column, ok.
static void print_row(const char *label, double gbps, double copy, bool correct)
{
    std::printf("%-40s %8.1f %7.1f%%", label, gbps, 100.0 * gbps / copy);
    std::printf(" %9s", "");
    std::printf("  %s\n", correct ? "ok" : "WRONG");
}

// DeviceReduce::Sum with num_items of type N (its offsets: uint32_t for an int, unsigned long
// long for a long long), timed; 1 when the timed result is the expected sum.
template <typename N>
static bool cub_row(const char *label, const int *in, int *out, unsigned long long n, int runs,
                    unsigned expected, double copy)
{
    size_t temp_bytes = 0;
    CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, (N)n));
    void *temp = nullptr;
    CHECK(cudaMalloc(&temp, temp_bytes));
    CHECK(cudaMemset(out, 0xef, sizeof(int))); // poison: only a run can leave the sum there
    const double ms =
        median_ms(runs, [&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, (N)n)); });
    int got = 0;
    CHECK(cudaMemcpy(&got, out, sizeof got, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(temp));
    const bool correct = (unsigned)got == expected;
    print_row(label, n * 4.0 / (ms * 1e6), copy, correct);
    if (!correct)
        std::fprintf(stderr, "%s: sum %d, expected %d\n", label, got, (int)expected);
    return correct;
}

static int usage(const char *self)
{
    std::fprintf(stderr, "usage: %s bench reduce [n=N (1..2^32, or 2^K)] [runs=R]\n"
                         "       %s [log2_n=30 (1..32)] [runs=20]\n", self, self);
    return 2;
}

// n=N: decimal, or 2^K; 0 where it is not one of those or out of 1..2^32.
static unsigned long long parse_n(const char *text)
{
    char *end = nullptr;
    if (std::strncmp(text, "2^", 2) == 0) {
        long k = std::strtol(text + 2, &end, 10);
        return *end || end == text + 2 || k < 0 || k > 32 ? 0 : 1ull << k;
    }
    unsigned long long n = std::strtoull(text, &end, 10);
    return *end || end == text || n > (1ull << 32) ? 0 : n;
}

int main(int argc, char **argv)
{
    unsigned long long n = 1ull << 30;
    int runs = 20;
    if (argc > 1 && std::strcmp(argv[1], "bench") == 0) {
        if (argc < 3 || std::strcmp(argv[2], "reduce") != 0)
            return usage(argv[0]);
        for (int i = 3; i < argc; i++) {
            if (std::strncmp(argv[i], "n=", 2) == 0 && (n = parse_n(argv[i] + 2)) != 0)
                continue;
            char *end = nullptr;
            long r = std::strncmp(argv[i], "runs=", 5) == 0 ? std::strtol(argv[i] + 5, &end, 10)
                                                            : 0;
            if (end && !*end && end != argv[i] + 5 && r >= 1 && r <= 1000000) {
                runs = (int)r;
                continue;
            }
            return usage(argv[0]);
        }
    } else {
        const int log2_n = argc > 1 ? std::atoi(argv[1]) : 30;
        runs = argc > 2 ? std::atoi(argv[2]) : 20;
        if (argc > 3 || log2_n < 1 || log2_n > 32 || runs < 1)
            return usage(argv[0]);
        n = 1ull << log2_n;
    }
    const unsigned long long seed =
        (unsigned long long)std::chrono::steady_clock::now().time_since_epoch().count();
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));

    // --- the ceiling: a 2 GiB device-to-device copy, timed first as bench reduce does ---
    const size_t copy_bytes = (size_t)1 << 31;
    int *src, *dst;
    CHECK(cudaMalloc(&src, copy_bytes));
    CHECK(cudaMalloc(&dst, copy_bytes));
    CHECK(cudaMemsetAsync(src, 0x5a, copy_bytes)); // 0x5a5a5a5a words, as there
    const double copy_ms = median_ms(
        runs, [&] { CHECK(cudaMemcpyAsync(dst, src, copy_bytes, cudaMemcpyDeviceToDevice)); });
    CHECK(cudaFree(src));
    CHECK(cudaFree(dst));
    const double copy = 2.0 * copy_bytes / (copy_ms * 1e6);

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
    CHECK(cudaDeviceSynchronize());

    std::printf("reduce, int32, n = %llu (%.2f GB read), %s, CUB %d.%d.%d, median of %d\n", n,
                n * 4e-9, prop.name, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION,
                runs);
    std::printf("device-to-device copy, 2 GiB, read + write: %.1f GB/s\n\n", copy);
    std::printf("%-40s %8s %8s %9s\n", "params", "GB/s", "% copy", "write-up");
    bool all_ok = cub_row<long long>("cub Sum, 64-bit offsets (long long n)", in, out, n, runs,
                                     expected, copy);
    if (n <= (unsigned long long)INT_MAX)
        all_ok &= cub_row<int>("cub Sum, 32-bit offsets (int n)", in, out, n, runs, expected,
                               copy);
    else
        std::printf("%-40s (n = %llu does not fit an int)\n", "cub Sum, 32-bit offsets (int n)",
                    n);
    CHECK(cudaFree(in));
    CHECK(cudaFree(out));
    return all_ok ? 0 : 1;
}

// Experiment (not part of ptxjit): the matmul op's staging copy (templates/matmul.cu,
// matmul_stage_rows) against other shapes of the same copy, on the copies of fp8 4093 x 4097 x
// 4095 (docs/PERFORMANCE.md, 2026-11-30 02:17: they run at about 2.0 TB/s, where the GPU
// copies at 4.2). Each variant copies rows of `width` bytes between pitches no TMA takes, a
// thread per 16-byte aligned destination piece gathered from the source with aligned 16-byte
// loads and a funnel shift, byte by byte at a row's ends:
//   piece: the shipped one, a block of 128 threads along a row (x), a row per block row (y);
//   row:   a block of 256 threads per row, looping over its pieces (no near-empty block);
//   warp:  a warp per row, 8 rows a block, two pieces per lane per step (loads in flight);
// and cudaMemcpy2DAsync, and a dense cudaMemcpyAsync of the same bytes as the bound.
// Every result is compared with the host's copy, bytes outside the rows included.
// Build and run on the GPU machine:
//   nvcc -O3 -arch=sm_90a -o sc bench/experiments/stage_copy.cu && ./sc
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t err_ = (x);                                                                \
        if (err_ != cudaSuccess) {                                                             \
            printf("%s: %s\n", #x, cudaGetErrorString(err_));                                  \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

typedef unsigned long long u64;

__device__ __forceinline__ unsigned word_at(const unsigned (&w)[8], unsigned first, int i)
{
    return first == 0 ? w[i] : first == 1 ? w[i + 1] : first == 2 ? w[i + 2] : w[i + 3];
}

// The destination piece at `at` of the row d0 .. d0 + width, from the row at s0.
__device__ __forceinline__ void piece(u64 at, u64 d0, u64 s0, u64 width)
{
    const u64 from = s0 + (at - d0), low = from & ~15ull;
    const unsigned shift = (unsigned)(from & 15);
    if (at >= d0 && at + 16 <= d0 + width && low >= s0 && low + (shift ? 32 : 16) <= s0 + width) {
        const uint4 a = __ldg(reinterpret_cast<const uint4 *>(low));
        uint4 out = a;
        if (shift) {
            const uint4 b = __ldg(reinterpret_cast<const uint4 *>(low + 16));
            const unsigned w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
            const unsigned first = shift / 4, bits = 8 * (shift % 4);
            unsigned o[4];
#pragma unroll
            for (int i = 0; i < 4; i++)
                o[i] = __funnelshift_r(word_at(w, first, i), word_at(w, first, i + 1), bits);
            out = make_uint4(o[0], o[1], o[2], o[3]);
        }
        *reinterpret_cast<uint4 *>(at) = out;
        return;
    }
    for (unsigned i = 0; i < 16; i++)
        if (at + i >= d0 && at + i < d0 + width)
            *reinterpret_cast<unsigned char *>(at + i) =
                *reinterpret_cast<const unsigned char *>(from + i);
}

__global__ void __launch_bounds__(128)
copy_piece(unsigned char *dst, const unsigned char *src, u64 width, u64 rows, u64 dp, u64 sp)
{
    const u64 p = (u64)blockIdx.x * blockDim.x + threadIdx.x;
    for (u64 r = blockIdx.y; r < rows; r += gridDim.y) {
        const u64 d0 = (u64)dst + r * dp, s0 = (u64)src + r * sp, at = (d0 & ~15ull) + 16 * p;
        if (at < d0 + width)
            piece(at, d0, s0, width);
    }
}

__global__ void __launch_bounds__(256)
copy_row(unsigned char *dst, const unsigned char *src, u64 width, u64 rows, u64 dp, u64 sp)
{
    for (u64 r = blockIdx.x; r < rows; r += gridDim.x) {
        const u64 d0 = (u64)dst + r * dp, s0 = (u64)src + r * sp, first = d0 & ~15ull;
        for (u64 at = first + 16 * threadIdx.x; at < d0 + width; at += 16 * blockDim.x)
            piece(at, d0, s0, width);
    }
}

__global__ void __launch_bounds__(256)
copy_warp(unsigned char *dst, const unsigned char *src, u64 width, u64 rows, u64 dp, u64 sp)
{
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    for (u64 r = (u64)blockIdx.x * 8 + warp; r < rows; r += (u64)gridDim.x * 8) {
        const u64 d0 = (u64)dst + r * dp, s0 = (u64)src + r * sp, first = d0 & ~15ull;
        for (u64 at = first + 16 * lane; at < d0 + width; at += 2 * 16 * 32) {
            piece(at, d0, s0, width);
            if (at + 16 * 32 < d0 + width)
                piece(at + 16 * 32, d0, s0, width);
        }
    }
}

struct copy_case {
    const char *name;
    u64 rows, width, dst_pitch, src_pitch, dst_offset, src_offset;
};

typedef void (*launcher)(unsigned char *, const unsigned char *, const copy_case &);

static void launch_piece(unsigned char *d, const unsigned char *s, const copy_case &c)
{
    dim3 grid((unsigned)((c.width / 16 + 2 + 127) / 128),
              (unsigned)(c.rows < 65535 ? c.rows : 65535));
    copy_piece<<<grid, 128>>>(d, s, c.width, c.rows, c.dst_pitch, c.src_pitch);
}

static void launch_row(unsigned char *d, const unsigned char *s, const copy_case &c)
{
    copy_row<<<(unsigned)(c.rows < 65535 ? c.rows : 65535), 256>>>(d, s, c.width, c.rows,
                                                                   c.dst_pitch, c.src_pitch);
}

static void launch_warp(unsigned char *d, const unsigned char *s, const copy_case &c)
{
    const u64 blocks = (c.rows + 7) / 8;
    copy_warp<<<(unsigned)(blocks < 65535 ? blocks : 65535), 256>>>(d, s, c.width, c.rows,
                                                                    c.dst_pitch, c.src_pitch);
}

static void launch_2d(unsigned char *d, const unsigned char *s, const copy_case &c)
{
    CK(cudaMemcpy2DAsync(d, c.dst_pitch, s, c.src_pitch, c.width, c.rows,
                         cudaMemcpyDeviceToDevice));
}

int main()
{
    // A (4093 rows of k = 4095 e4m3) and B (4097 rows) into rows of 4096; C (4093 rows of
    // n = 4097 bf16, 8194 bytes) back from rows of 8208; the same at an odd offset.
    const copy_case cases[] = {
        {"A in: 4093 x 4095 B -> pitch 4096", 4093, 4095, 4096, 4095, 0, 0},
        {"B in: 4097 x 4095 B -> pitch 4096", 4097, 4095, 4096, 4095, 0, 0},
        {"C out: 4093 x 8194 B, pitch 8208 -> 8194", 4093, 8194, 8194, 8208, 0, 0},
        {"A in, source 3 bytes in", 4093, 4095, 4096, 4095, 0, 3},
    };
    const struct {
        const char *name;
        launcher run;
    } variants[] = {{"piece (shipped)", launch_piece}, {"row", launch_row},
                    {"warp", launch_warp}, {"cudaMemcpy2DAsync", launch_2d}};
    // Every timed copy starts with L2 emptied (a write of twice its size, outside the events),
    // as the matmul bench's runs do.
    const size_t flush_bytes = 256 << 20;
    unsigned char *flush;
    CK(cudaMalloc(&flush, flush_bytes));
    cudaEvent_t t0, t1;
    CK(cudaEventCreate(&t0));
    CK(cudaEventCreate(&t1));
    for (const copy_case &c : cases) {
        const size_t dbytes = c.rows * c.dst_pitch + 64, sbytes = c.rows * c.src_pitch + 64;
        std::vector<unsigned char> src(sbytes), want(dbytes, 0xa5), got(dbytes);
        for (size_t i = 0; i < sbytes; i++) { /* any byte but the poison, 0xa5 */
            const int v = rand() % 255;
            src[i] = (unsigned char)(v >= 0xa5 ? v + 1 : v);
        }
        for (u64 r = 0; r < c.rows; r++)
            memcpy(&want[c.dst_offset + r * c.dst_pitch], &src[c.src_offset + r * c.src_pitch],
                   c.width);
        unsigned char *ds, *dd;
        CK(cudaMalloc(&ds, sbytes));
        CK(cudaMalloc(&dd, dbytes));
        CK(cudaMemcpy(ds, src.data(), sbytes, cudaMemcpyHostToDevice));
        const double moved = 2.0 * (double)c.rows * (double)c.width;
        printf("%s (%.1f MB moved)\n", c.name, moved / 1e6);
        for (const auto &v : variants) {
            CK(cudaMemset(dd, 0xa5, dbytes));
            v.run(dd + c.dst_offset, ds + c.src_offset, c);
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(got.data(), dd, dbytes, cudaMemcpyDeviceToHost));
            const bool right = memcmp(got.data(), want.data(), dbytes) == 0;
            std::vector<float> ms(20);
            for (float &m : ms) {
                CK(cudaMemsetAsync(flush, 0, flush_bytes));
                CK(cudaEventRecord(t0));
                v.run(dd + c.dst_offset, ds + c.src_offset, c);
                CK(cudaEventRecord(t1));
                CK(cudaEventSynchronize(t1));
                CK(cudaEventElapsedTime(&m, t0, t1));
            }
            std::sort(ms.begin(), ms.end());
            printf("  %-20s %8.2f us  %7.1f GB/s  %s\n", v.name, ms[10] * 1e3,
                   moved / (ms[10] * 1e-3) / 1e9, right ? "right" : "WRONG");
        }
        std::vector<float> ms(20);
        for (float &m : ms) {
            CK(cudaMemsetAsync(flush, 1, flush_bytes));
            CK(cudaEventRecord(t0));
            CK(cudaMemcpyAsync(dd, ds, c.rows * c.width, cudaMemcpyDeviceToDevice));
            CK(cudaEventRecord(t1));
            CK(cudaEventSynchronize(t1));
            CK(cudaEventElapsedTime(&m, t0, t1));
        }
        std::sort(ms.begin(), ms.end());
        printf("  %-20s %8.2f us  %7.1f GB/s  (the same bytes, dense)\n", "cudaMemcpyAsync",
               ms[10] * 1e3, moved / (ms[10] * 1e-3) / 1e9);
        CK(cudaFree(ds));
        CK(cudaFree(dd));
    }
    CK(cudaFree(flush));
    return 0;
}

// stream_proto.cu — a prototype of matmul for few rows of A (decoding), measured and left out
// (docs/PERFORMANCE.md, 2026-11-29 04:40): no shared-memory pipeline; each warp streams a
// 64-column strip of B (the weights) for its share of K from global memory straight into
// mma.sync fragments, A's few rows riding along as the other operand (the weights on the mma's
// 16-row side, the tokens on its 8-column side). K is permuted inside each load (the same
// permutation for A and B, so the sums are unchanged) so that every thread's loads are 16
// bytes. v1 (stream_kernel): the warps of a block cut K between them and add through shared
// memory; the blocks of a tile's parts (grid.y) leave fp32 sums in a workspace, the last to
// arrive adds them in order and stores C. v2 (stream2_kernel, with SK_P): see below.
// Macros: SK_FP8 (0: bf16, 1: e4m3), SK_KN (bf16 only: B is K x N row-major; else N x K),
// SK_NT (token tiles of 8: M <= 8 * SK_NT), SK_WARPS, SK_U (chunks of 64 bytes of K per row in
// flight per thread), SK_P (v2: the cluster's blocks, K's parts).
typedef unsigned int u32;
struct __align__(16) v4 { u32 x, y, z, w; };
struct __align__(8) v2 { u32 x, y; };

__device__ __forceinline__ v4 ld_stream(const void *p)
{
    v4 r;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
    return r;
}
__device__ __forceinline__ v4 ld_v4(const void *p) { return *reinterpret_cast<const v4 *>(p); }
__device__ __forceinline__ v2 ld_v2(const void *p) { return *reinterpret_cast<const v2 *>(p); }

__device__ __forceinline__ void mma(float (&d)[4], u32 a0, u32 a1, u32 a2, u32 a3, u32 b0, u32 b1)
{
#if SK_FP8
    asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
#else
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, "
                 "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
#endif
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

enum { ES = SK_FP8 ? 1 : 2 };
// kn: a chunk is 32 k rows of 64 columns (4 KB), like nk's 64 rows of 64 bytes.
enum { CHUNK_K = SK_KN ? 32 : 64 / ES };

// One round of the K loop: chunks c, c + step, ... (SK_U of them, those from `end` on
// zeros) of the strip at column n0, loaded together, then multiplied into acc.
__device__ __forceinline__ void stream_round(float (&acc)[4][SK_NT][4],
                                             const unsigned char *__restrict__ A,
                                             const unsigned char *__restrict__ B, int M, int N,
                                             int K, int n0, int c, int step, int end, int g, int q)
{
    const v4 z4 = {0, 0, 0, 0};
    const v2 z2 = {0, 0};
#if SK_KN
    v4 w[SK_U][2][4];
    v2 x[SK_U][SK_NT][2];
#pragma unroll
    for (int u = 0; u < SK_U; u++) {
        const int cc = c + u * step;
#pragma unroll
        for (int h = 0; h < 2; h++) {
#pragma unroll
            for (int r = 0; r < 4; r++) {
                const int k = cc * CHUNK_K + 16 * h + 4 * q + r;
                const bool ok = cc < end && k < K && n0 + 8 * g < N;
                w[u][h][r] = ok ? ld_stream(B + ((size_t)k * N + n0 + 8 * g) * 2) : z4;
            }
#pragma unroll
            for (int j = 0; j < SK_NT; j++) {
                const int k = cc * CHUNK_K + 16 * h + 4 * q, tok = 8 * j + g;
                const bool ok = cc < end && k < K && tok < M;
                x[u][j][h] = ok ? ld_v2(A + ((size_t)tok * K + k) * 2) : z2;
            }
        }
    }
#pragma unroll
    for (int u = 0; u < SK_U; u++)
#pragma unroll
        for (int h = 0; h < 2; h++)
#pragma unroll
            for (int t = 0; t < 4; t++) {
                const u32 w0 = (&w[u][h][0].x)[t], w1 = (&w[u][h][1].x)[t],
                          w2 = (&w[u][h][2].x)[t], w3 = (&w[u][h][3].x)[t];
                const u32 a0 = __byte_perm(w0, w1, 0x5410), a1 = __byte_perm(w0, w1, 0x7632),
                          a2 = __byte_perm(w2, w3, 0x5410), a3 = __byte_perm(w2, w3, 0x7632);
#pragma unroll
                for (int j = 0; j < SK_NT; j++)
                    mma(acc[t][j], a0, a1, a2, a3, x[u][j][h].x, x[u][j][h].y);
            }
#else
    v4 w[SK_U][4][2];
    v4 x[SK_U][SK_NT];
#pragma unroll
    for (int u = 0; u < SK_U; u++) {
        const int cc = c + u * step;
        const size_t byte = (size_t)cc * 64 + 16 * q;
        const bool kin = cc < end && byte < (size_t)K * ES;
#pragma unroll
        for (int t = 0; t < 4; t++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int n = n0 + 16 * t + 8 * h + g;
                w[u][t][h] = kin && n < N ? ld_stream(B + (size_t)n * K * ES + byte) : z4;
            }
#pragma unroll
        for (int j = 0; j < SK_NT; j++) {
            const int tok = 8 * j + g;
            x[u][j] = kin && tok < M ? ld_v4(A + (size_t)tok * K * ES + byte) : z4;
        }
    }
#pragma unroll
    for (int u = 0; u < SK_U; u++)
#pragma unroll
        for (int t = 0; t < 4; t++)
#pragma unroll
            for (int j = 0; j < SK_NT; j++) {
                mma(acc[t][j], w[u][t][0].x, w[u][t][1].x, w[u][t][0].y, w[u][t][1].y,
                    x[u][j].x, x[u][j].y);
                mma(acc[t][j], w[u][t][0].z, w[u][t][1].z, w[u][t][0].w, w[u][t][1].w,
                    x[u][j].z, x[u][j].w);
            }
#endif
}

// The strip's sums over part `part` of K's chunks (of `parts`): chunks first, first + step,
// ..., SK_U of them a round.
__device__ __forceinline__ void stream_part(float (&acc)[4][SK_NT][4],
                                            const unsigned char *__restrict__ A,
                                            const unsigned char *__restrict__ B, int M, int N,
                                            int K, int n0, int parts, int part, int first,
                                            int step, int g, int q)
{
    const int chunks = (K + CHUNK_K - 1) / CHUNK_K, per = (chunks + parts - 1) / parts;
    const int begin = part * per, end = min(chunks, begin + per);
#pragma unroll
    for (int t = 0; t < 4; t++)
#pragma unroll
        for (int j = 0; j < SK_NT; j++)
#pragma unroll
            for (int i = 0; i < 4; i++)
                acc[t][j][i] = 0.0f;
    if (n0 >= N)
        return;
#pragma unroll 1
    for (int c = begin + first; c < end; c += step * SK_U)
        stream_round(acc, A, B, M, N, K, n0, c, step, end, g, q);
}

// A warp's sums of its strip into shared memory as [token][column of the strip].
__device__ __forceinline__ void stream_keep(float *slice, const float (&acc)[4][SK_NT][4], int g,
                                            int q)
{
#pragma unroll
    for (int t = 0; t < 4; t++)
#pragma unroll
        for (int j = 0; j < SK_NT; j++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int tok = 8 * j + 2 * q + (i & 1);
                const int col = SK_KN ? 8 * g + 2 * t + (i >> 1) : 16 * t + g + 8 * (i >> 1);
                slice[tok * 64 + col] = acc[t][j][i];
            }
}

extern "C" __global__ void __launch_bounds__(SK_WARPS * 32)
stream_kernel(const unsigned char *__restrict__ A, const unsigned char *__restrict__ B,
              unsigned short *__restrict__ C, int M, int N, int K, float *partials,
              unsigned *arrivals)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    const int n0 = blockIdx.x * 64, parts = gridDim.y, part = blockIdx.y;
    float acc[4][SK_NT][4];
    stream_part(acc, A, B, M, N, K, n0, parts, part, warp, SK_WARPS, g, q);
    // The warps' sums through shared memory: [warp][token][column of the strip].
    enum { TOK = SK_NT * 8, SLICE = TOK * 64 };
    extern __shared__ float red[]; // [SK_WARPS * SLICE]
    __shared__ int last;
    stream_keep(red + warp * SLICE, acc, g, q);
    __syncthreads();
    const int rows = min(TOK, M), cols = min(64, N - n0);
    const size_t slot = blockIdx.x;
    if (parts > 1) {
        float *mine = partials + (slot * parts + part) * SLICE;
        for (int e = threadIdx.x; e < SLICE; e += SK_WARPS * 32) {
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < SK_WARPS; w++)
                s += red[w * SLICE + e];
            asm volatile("st.global.cg.f32 [%0], %1;" ::"l"(mine + e), "f"(s) : "memory");
        }
        __threadfence();
        __syncthreads();
        if (threadIdx.x == 0) {
            const unsigned before = atomicAdd(arrivals + slot, 1u);
            last = before == (unsigned)parts - 1;
            if (last)
                arrivals[slot] = 0;
            __threadfence();
        }
        __syncthreads();
        if (!last)
            return;
        const float *all = partials + slot * parts * SLICE;
        for (int e = threadIdx.x; e < rows * 64; e += SK_WARPS * 32) {
            const int tok = e / 64, col = e % 64;
            if (col >= cols)
                continue;
            float s = 0.0f;
            for (int p = 0; p < parts; p++)
                { float v; asm volatile("ld.global.cg.f32 %0, [%1];" : "=f"(v) : "l"(all + p * SLICE + e)); s += v; }
            unsigned short h;
            asm("{ .reg .b32 t; cvt.rn.bf16x2.f32 t, 0f00000000, %1; cvt.u16.u32 %0, t; }"
                : "=h"(h) : "f"(s));
            C[(size_t)tok * N + n0 + col] = h;
        }
        return;
    }
    for (int e = threadIdx.x; e < rows * 64; e += SK_WARPS * 32) {
        const int tok = e / 64, col = e % 64;
        if (col >= cols)
            continue;
        float s = 0.0f;
#pragma unroll
        for (int w = 0; w < SK_WARPS; w++)
            s += red[w * SLICE + e];
        unsigned short h;
        asm("{ .reg .b32 t; cvt.rn.bf16x2.f32 t, 0f00000000, %1; cvt.u16.u32 %0, t; }"
            : "=h"(h) : "f"(s));
        C[(size_t)tok * N + n0 + col] = h;
    }
}

// v2: a block's warps take adjacent 64-column strips over the same K part (so they read the
// same lines of A, from L1); the K parts of a strip group are the blocks of one cluster
// (SK_P along y), which add their sums through distributed shared memory in a fixed order:
// no workspace, no counters. Each block adds and stores a slice of the group's C.
#ifdef SK_P
__device__ __forceinline__ void cluster_sync_all()
{
    asm volatile("barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;"
                 ::: "memory");
}

extern "C" __global__ void __cluster_dims__(1, SK_P, 1) __launch_bounds__(SK_WARPS * 32, 1)
stream2_kernel(const unsigned char *__restrict__ A, const unsigned char *__restrict__ B,
               unsigned short *__restrict__ C, int M, int N, int K)
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, q = lane % 4;
    const int n0 = (blockIdx.x * SK_WARPS + warp) * 64;
    unsigned part;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(part));
    float acc[4][SK_NT][4];
    stream_part(acc, A, B, M, N, K, n0, SK_P, part, 0, 1, g, q);
    enum { TOK = SK_NT * 8, SLICE = TOK * 64 };
    extern __shared__ float red[]; // [SK_WARPS][TOK][64]: each warp's strip
    stream_keep(red + warp * SLICE, acc, g, q);
    cluster_sync_all();
    const int rows = min(TOK, M), total = SK_WARPS * rows * 64;
    const int share = (total + SK_P - 1) / SK_P, lo = part * share, hi = min(total, lo + share);
    const unsigned base = (unsigned)__cvta_generic_to_shared(red);
    for (int e = lo + threadIdx.x; e < hi; e += SK_WARPS * 32) {
        const int w = e / (rows * 64), tok = e / 64 % rows, col = e % 64;
        const unsigned at = base + 4 * (w * SLICE + tok * 64 + col);
        float s = 0.0f;
#pragma unroll
        for (int r = 0; r < SK_P; r++) {
            unsigned remote;
            float v;
            asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(at), "r"(r));
            asm volatile("ld.shared::cluster.f32 %0, [%1];" : "=f"(v) : "r"(remote));
            s += v;
        }
        const int n = (blockIdx.x * SK_WARPS + w) * 64 + col;
        if (n < N) {
            unsigned short h;
            asm("{ .reg .b32 t; cvt.rn.bf16x2.f32 t, 0f00000000, %1; cvt.u16.u32 %0, t; }"
                : "=h"(h) : "f"(s));
            C[(size_t)tok * N + n] = h;
        }
    }
    cluster_sync_all(); // the other blocks' shared memory is read before any exits
}
#endif

// softmax.cu — row-wise softmax of an M x N row-major matrix: out[r][c] = exp(x[r][c] - max_r) /
// sum_r, with max_r and sum_r taken over row r. Storage is f32, f16 or bf16; the arithmetic is
// fp32 throughout. Two variants:
//   online  the row is held in registers: each thread loads its share once (items vectors of vec
//           elements), finds its own max m and sum s of exp(x - m), the (m, s) pairs of the row's
//           threads are merged (s = s_hi + s_lo * exp(m_lo - m_hi)), and the outputs are written
//           from the registers: one read and one write of the matrix. N up to tpr * vec * items.
//   block   any N: the row is walked in chunks twice. The first pass keeps a running (m, s) per
//           thread, rescaling s whenever m grows; the pairs are merged as above; the second pass
//           re-reads the row (last chunk first, the likeliest still in cache) and writes it.
// exp is ex2.approx.ftz.f32 of (x - max) * log2(e): about 2 ulp from 2^x, and 2-3 ulp in all
// from exp(x - max) (the product rounds once); outputs under 2^-126 flush to zero.
// Input and output may be the same buffer: every element is read before it is written.
//@ptxjit family softmax
//@ptxjit doc Row-wise softmax of an M x N row-major matrix (f32/f16/bf16 storage, fp32 math): the row held in registers (one read, one write), or two passes over it for any N.
//@ptxjit entry softmax_kernel
//@ptxjit param variant enum(block,online) default=online doc="online: the row held in registers, one read and one write, N up to tpr * vec * items; block: any N, two passes over the row (running max and sum, then a re-read and the write)"
//@ptxjit param dtype dtype(f32,f16,bf16) default=f32 doc="element type of input and output (storage only: the math is fp32)"
//@ptxjit param tpb int(32..1024) pow2 default=256 doc="threads per block"
//@ptxjit param tpr int(1..1024) pow2 default=256 doc="threads per row: tpb / tpr rows per block; up to 32 a row's threads merge by warp shuffles alone, above 32 through shared memory (one barrier)"
//@ptxjit param vec int(1..8) pow2 default=4 default_if="dtype != f32 => 8" doc="elements per vector access: 16 bytes is 4 f32 or 8 f16/bf16; rows whose length or buffers are not aligned to it take element-wide accesses"
//@ptxjit param items int(1..32) default=4 doc="vector accesses per thread and row (online) or chunk (block), all issued before the first use"
//@ptxjit constraint "tpr <= tpb" "tpr (threads per row) must not exceed tpb (threads per block): lower tpr or raise tpb"
//@ptxjit constraint "vec * bytes(dtype) <= 16" "a vector access is at most 16 bytes: vec <= 4 for f32, vec <= 8 for f16 and bf16"
//@ptxjit constraint "items * vec <= 32" "a thread holds items * vec fp32 values in registers, at most 32 (more spill to local memory): lower items or vec; for longer rows raise tpr, or use variant=block"
//@ptxjit constraint "dtype == f32 || sm >= 80" "f16 and bf16 are rounded with cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32, which need sm_80 or newer; use dtype=f32"

using index_t = unsigned long long;

// Elements move as raw bits of their size; vectors as 2 to 16 bytes.
template <int BYTES> struct bits;
template <> struct bits<2> { using type = unsigned short; };
template <> struct bits<4> { using type = unsigned int; };
template <> struct bits<8> { using type = uint2; };
template <> struct bits<16> { using type = uint4; };
enum : int { ELEMENT_BYTES = DTYPE_ID == DTYPE_F32 ? 4 : 2 };
using E = bits<ELEMENT_BYTES>::type;

enum : int { ROWS_PER_BLOCK = TPB / TPR, PER_THREAD = ITEMS * VEC };
// A row's threads first merge within their warp (or the TPR-lane segment of it), then across
// the row's warps.
enum : int { SEGMENT = TPR < 32 ? TPR : 32, WARPS_PER_ROW = TPR / SEGMENT };

__device__ __forceinline__ float ex2(float x)
{
    float y;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
    return y;
}

// The exponent of exp(x - m) in base 2.
__device__ __forceinline__ float exponent(float x, float m)
{
    return (x - m) * 1.44269504088896341f;
}

// The most negative finite float: a thread without elements has this max and a sum of 0, so
// that merging it (exp of -inf differences) adds nothing and never makes inf - inf.
__device__ __forceinline__ float lowest() { return -3.40282346638528859812e+38f; }

// An element's bits (in the low half for 16-bit types) as a float.
__device__ __forceinline__ float to_float(unsigned b)
{
    if constexpr (DTYPE_ID == DTYPE_F32) {
        return __uint_as_float(b);
    } else if constexpr (DTYPE_ID == DTYPE_BF16) {
        return __uint_as_float(b << 16);
    } else {
        float f;
        asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"((unsigned short)b));
        return f;
    }
}

// The upper of two 16-bit elements packed in 32 bits.
__device__ __forceinline__ float upper_to_float(unsigned b)
{
    if constexpr (DTYPE_ID == DTYPE_BF16)
        return __uint_as_float(b & 0xffff0000u);
    else
        return to_float(b >> 16);
}

// Two floats rounded to the 16-bit type, lo in the low half (the lower address once stored).
__device__ __forceinline__ unsigned pack2(float lo, float hi)
{
    unsigned r;
    if constexpr (DTYPE_ID == DTYPE_BF16)
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

__device__ __forceinline__ unsigned from_float(float f)
{
    if constexpr (DTYPE_ID == DTYPE_F32)
        return __float_as_uint(f);
    else
        return pack2(f, 0.0f) & 0xffffu;
}

// W elements from p (read-only, through the non-coherent path), W * ELEMENT_BYTES bytes
// aligned to their size.
template <int W>
__device__ __forceinline__ void load_unit(const E *p, float *x)
{
    constexpr int BYTES = W * ELEMENT_BYTES;
    unsigned w[BYTES >= 4 ? BYTES / 4 : 1];
    if constexpr (BYTES == 16) {
        const uint4 v = __ldg(reinterpret_cast<const uint4 *>(p));
        w[0] = v.x, w[1] = v.y, w[2] = v.z, w[3] = v.w;
    } else if constexpr (BYTES == 8) {
        const uint2 v = __ldg(reinterpret_cast<const uint2 *>(p));
        w[0] = v.x, w[1] = v.y;
    } else if constexpr (BYTES == 4) {
        w[0] = __ldg(reinterpret_cast<const unsigned *>(p));
    } else {
        w[0] = __ldg(reinterpret_cast<const unsigned short *>(p));
    }
    if constexpr (ELEMENT_BYTES == 4 || BYTES == 2) {
#pragma unroll
        for (int k = 0; k < W; k++)
            x[k] = to_float(w[k]);
    } else {
#pragma unroll
        for (int k = 0; k < W / 2; k++) {
            x[2 * k] = to_float(w[k]);
            x[2 * k + 1] = upper_to_float(w[k]);
        }
    }
}

// W values times scale, rounded to the element type, to p.
template <int W>
__device__ __forceinline__ void store_unit(E *p, const float *x, float scale)
{
    constexpr int BYTES = W * ELEMENT_BYTES;
    unsigned w[BYTES >= 4 ? BYTES / 4 : 1];
    if constexpr (ELEMENT_BYTES == 4 || BYTES == 2) {
#pragma unroll
        for (int k = 0; k < W; k++)
            w[k] = from_float(x[k] * scale);
    } else {
#pragma unroll
        for (int k = 0; k < W / 2; k++)
            w[k] = pack2(x[2 * k] * scale, x[2 * k + 1] * scale);
    }
    if constexpr (BYTES == 16)
        *reinterpret_cast<uint4 *>(p) = make_uint4(w[0], w[1], w[2], w[3]);
    else if constexpr (BYTES == 8)
        *reinterpret_cast<uint2 *>(p) = make_uint2(w[0], w[1]);
    else if constexpr (BYTES == 4)
        *reinterpret_cast<unsigned *>(p) = w[0];
    else
        *reinterpret_cast<unsigned short *>(p) = (unsigned short)w[0];
}

// A thread's share of a row: rounds r = 0 .. ROUNDS - 1 of units (vectors of W = VEC elements,
// or single elements when W = 1); in a chunk starting at unit `first`, round r is unit
// first + r * TPR + t, so that each round's accesses by the row's threads are contiguous. Slot
// x[r * W + k] holds its element k. A WHOLE chunk lies inside the row: every round is the
// thread's. Otherwise the thread's rounds are the first `mine` (units past the row's end come
// last), and each pass over them stops at the first that is not: a chain of branches whose
// tests are made where they are used, not kept in registers from the loads to the stores.
// Rows of a block past the last (!live) read the last row instead and write nothing.
template <int W> struct rounds { enum : int { count = PER_THREAD / W }; };

// How many of the chunk's rounds are the thread's.
template <int W, bool WHOLE>
__device__ __forceinline__ int rounds_in_row(unsigned units, unsigned first, unsigned t)
{
    if constexpr (WHOLE)
        return rounds<W>::count;
    const unsigned left = units - first; // units of the row from the chunk's start
    const unsigned mine = t < left ? (left - t + TPR - 1) / TPR : 0;
    return mine < rounds<W>::count ? (int)mine : rounds<W>::count;
}

template <int W, bool WHOLE>
__device__ __forceinline__ void load_chunk(const E *row, unsigned first, unsigned t, int mine,
                                           float *x)
{
    const E *p = row + (index_t)(first + t) * W; // the rounds at constant offsets from here
#pragma unroll
    for (int r = 0; r < rounds<W>::count; r++) {
        if (!WHOLE && r >= mine)
            break;
        load_unit<W>(p + r * TPR * W, x + r * W);
    }
}

template <int W, bool WHOLE>
__device__ __forceinline__ float chunk_max(const float *x, int mine, float m)
{
#pragma unroll
    for (int r = 0; r < rounds<W>::count; r++) {
        if (!WHOLE && r >= mine)
            break;
#pragma unroll
        for (int k = 0; k < W; k++)
            m = fmaxf(m, x[r * W + k]);
    }
    return m;
}

// Replaces each of the thread's slots by exp(x - m) and returns s plus their sum, added in slot
// order.
template <int W, bool WHOLE>
__device__ __forceinline__ float chunk_exp_sum(float *x, int mine, float m, float s)
{
#pragma unroll
    for (int r = 0; r < rounds<W>::count; r++) {
        if (!WHOLE && r >= mine)
            break;
#pragma unroll
        for (int k = 0; k < W; k++) {
            x[r * W + k] = ex2(exponent(x[r * W + k], m));
            s += x[r * W + k];
        }
    }
    return s;
}

template <int W, bool WHOLE>
__device__ __forceinline__ void store_chunk(E *row, unsigned first, unsigned t, int mine,
                                            bool live, const float *x, float scale)
{
    if (!live)
        return;
    E *p = row + (index_t)(first + t) * W;
#pragma unroll
    for (int r = 0; r < rounds<W>::count; r++) {
        if (!WHOLE && r >= mine)
            break;
        store_unit<W>(p + r * TPR * W, x + r * W, scale);
    }
}

// (m, s) with (m2, s2): the larger max is kept and the other sum scaled down to it. The result
// is the same whichever pair is (m, s), so both lanes of a shuffle agree bit for bit.
__device__ __forceinline__ void merge(float &m, float &s, float m2, float s2)
{
    const bool mine = m >= m2;
    const float hi = mine ? m : m2, lo = mine ? m2 : m;
    const float s_hi = mine ? s : s2, s_lo = mine ? s2 : s;
    s = fmaf(s_lo, ex2(exponent(lo, hi)), s_hi);
    m = hi;
}

// The row's max and sum in every one of its threads: shuffles within the warp (segment), then
// for rows of several warps one barrier and a second round of shuffles over the warps' pairs.
__device__ __forceinline__ void merge_row(float &m, float &s)
{
#pragma unroll
    for (int offset = SEGMENT / 2; offset > 0; offset /= 2)
        merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
              __shfl_xor_sync(0xffffffffu, s, offset));
    if constexpr (WARPS_PER_ROW > 1) {
        __shared__ float part_m[TPB / 32], part_s[TPB / 32];
        const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
        if (lane == 0) {
            part_m[warp] = m;
            part_s[warp] = s;
        }
        __syncthreads();
        // Every group of WARPS_PER_ROW lanes holds all the row's pairs, so every lane ends
        // with the total.
        const unsigned slot = warp / WARPS_PER_ROW * WARPS_PER_ROW + lane % WARPS_PER_ROW;
        m = part_m[slot];
        s = part_s[slot];
#pragma unroll
        for (int offset = WARPS_PER_ROW / 2; offset > 0; offset /= 2)
            merge(m, s, __shfl_xor_sync(0xffffffffu, m, offset),
                  __shfl_xor_sync(0xffffffffu, s, offset));
    }
}

// variant=online: the row in registers, read once and written once. Rows that fill every slot
// (N = tpr * vec * items, as the bench's configurations have it) take the path without tests.
template <int W, bool WHOLE>
__device__ __forceinline__ void online_row(const E *src, E *dst, unsigned units, unsigned t,
                                           bool live)
{
    float x[PER_THREAD];
    const int mine = rounds_in_row<W, WHOLE>(units, 0, t);
    load_chunk<W, WHOLE>(src, 0, t, mine, x);
    const float top = chunk_max<W, WHOLE>(x, mine, lowest());
    float m = top, s = chunk_exp_sum<W, WHOLE>(x, mine, top, 0.0f);
    merge_row(m, s);
    store_chunk<W, WHOLE>(dst, 0, t, mine, live, x, ex2(exponent(top, m)) / s);
}

// One chunk of the block variant's first pass: the running max grows to the chunk's, the sum
// so far is scaled to it and the chunk's exponentials added.
template <int W, bool WHOLE>
__device__ __forceinline__ void block_scan(const E *src, unsigned units, unsigned first,
                                           unsigned t, float &m, float &s)
{
    float x[PER_THREAD];
    const int mine = rounds_in_row<W, WHOLE>(units, first, t);
    load_chunk<W, WHOLE>(src, first, t, mine, x);
    const float grown = chunk_max<W, WHOLE>(x, mine, m);
    s = chunk_exp_sum<W, WHOLE>(x, mine, grown, s * ex2(exponent(m, grown)));
    m = grown;
}

// One chunk of the second pass: re-read, exp(x - max) / sum, write.
template <int W, bool WHOLE>
__device__ __forceinline__ void block_write(const E *src, E *dst, unsigned units, unsigned first,
                                            unsigned t, bool live, float m, float inverse)
{
    float x[PER_THREAD];
    const int mine = rounds_in_row<W, WHOLE>(units, first, t);
    load_chunk<W, WHOLE>(src, first, t, mine, x);
    chunk_exp_sum<W, WHOLE>(x, mine, m, 0.0f); // only the exponentials are used
    store_chunk<W, WHOLE>(dst, first, t, mine, live, x, inverse);
}

// variant=block: whole chunks of CHUNK units and a last partial one, a running (max, sum) per
// thread, the merge, then the write pass from the last chunk back to the first.
template <int W>
__device__ __forceinline__ void block_row(const E *src, E *dst, unsigned units, unsigned t,
                                          bool live)
{
    constexpr unsigned CHUNK = TPR * rounds<W>::count;
    // The element-wide path (rows not aligned to vectors) takes every chunk as a partial one.
    const unsigned whole = W == VEC ? units / CHUNK * CHUNK : 0;
    float m = lowest(), s = 0.0f;
#pragma unroll 1
    for (unsigned first = 0; first < whole; first += CHUNK)
        block_scan<W, true>(src, units, first, t, m, s);
#pragma unroll 1
    for (unsigned first = whole; first < units; first += CHUNK)
        block_scan<W, false>(src, units, first, t, m, s);
    merge_row(m, s);
    const float inverse = 1.0f / s;
#pragma unroll 1
    for (unsigned first = (units - 1) / CHUNK * CHUNK; first >= whole; first -= CHUNK) {
        block_write<W, false>(src, dst, units, first, t, live, m, inverse);
        if (first == 0)
            break;
    }
#pragma unroll 1
    for (unsigned first = whole; first > 0; first -= CHUNK)
        block_write<W, true>(src, dst, units, first - CHUNK, t, live, m, inverse);
}

template <int W>
__device__ __forceinline__ void softmax_row(const E *src, E *dst, unsigned units, unsigned t,
                                            bool live)
{
    if constexpr (VARIANT == VARIANT_ONLINE) {
        if (W == VEC && units >= TPR * rounds<W>::count)
            online_row<W, true>(src, dst, units, t, live);
        else
            online_row<W, false>(src, dst, units, t, live);
    } else {
        block_row<W>(src, dst, units, t, live);
    }
}

// A block takes ROWS_PER_BLOCK consecutive rows, TPR threads each. Threads of rows past the
// last still take part in the shuffles and the barrier: they read the last row and write
// nothing. Rows go through VEC-element vectors when every row start is aligned to the vector
// (N a multiple of VEC, both buffers aligned): a branch the whole grid takes alike; else
// element by element.
extern "C" __global__ void __launch_bounds__(TPB, 1)
softmax_kernel(const E *__restrict__ in, E *__restrict__ out, index_t rows, unsigned cols)
{
    const unsigned t = threadIdx.x % TPR;
    const index_t row = (index_t)blockIdx.x * ROWS_PER_BLOCK + threadIdx.x / TPR;
    const bool live = row < rows;
    const E *src = in + (live ? row : rows - 1) * cols;
    E *dst = out + row * cols;
    if constexpr (VEC > 1) {
        const unsigned misaligned = (unsigned)(((index_t)in | (index_t)out) % (VEC * ELEMENT_BYTES));
        if (cols % VEC == 0 && misaligned == 0) {
            softmax_row<VEC>(src, dst, cols / VEC, t, live);
            return;
        }
    }
    softmax_row<1>(src, dst, cols, t, live);
}

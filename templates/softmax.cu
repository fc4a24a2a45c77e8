// softmax.cu — row-wise softmax of an M x N row-major matrix: out[r][c] = exp(x[r][c] - max_r) /
// sum_r, with max_r and sum_r taken over row r. Storage is f32, f16 or bf16; the arithmetic is
// fp32 throughout. Two variants:
//   online  the row is held in registers: each thread loads its share once (items vectors of vec
//           elements, all loads issued before the first use), finds its own max m and sum s of
//           exp(x - m); the (m, s) pairs of the row's threads are merged (s = s_hi + s_lo *
//           exp(m_lo - m_hi)) by warp shuffles and, for rows of several warps, one barrier; the
//           outputs are written from the registers: one read and one write of the matrix.
//           N up to tpr * vec * items.
//   block   any N: the row is walked in chunks twice. The first pass keeps a running (m, s) per
//           thread, rescaling s whenever m grows (Kahan-compensated across chunks); the pairs
//           are merged as above; the second pass re-reads the row (last chunk first, the
//           likeliest still in cache) and writes it.
// exp is ex2.approx.ftz.f32 of (x - max) * log2(e), as Triton's exp: about 2 ulp from 2^x;
// outputs under 2^-126 flush to zero. Measured against float64 on the H100: f32 outputs within
// 2.4e-7 absolute (7.5e-6 relative for outputs near 1e-30); f16/bf16 add their output rounding.
// Input and output may be the same buffer: every element is read before it is written.
//@ptxjit family softmax
//@ptxjit doc Row-wise softmax of an M x N row-major matrix (f32/f16/bf16 storage, fp32 math): the row held in registers (one read, one write), or two passes over it for any N.
//@ptxjit entry softmax_kernel
//@ptxjit nvrtc minimal half_storage
//@ptxjit param variant enum(block,online) default=online doc="online: the row held in registers, one read and one write, N up to tpr * vec * items; block: any N, two passes over the row (running max and sum, then a re-read and the write)"
//@ptxjit param dtype dtype(f32,f16,bf16) default=f32 doc="element type of input and output (storage only: the math is fp32)"
//@ptxjit param tpb int(32..1024) pow2 default=128 default_if="variant == block => 1024" default_if="dtype != f32 => 256" doc="threads per block"
//@ptxjit param tpr int(1..1024) pow2 default=128 default_if="tpb == 32 => 32" default_if="tpb == 64 => 64" default_if="variant == block && tpb == 128 => 128" default_if="variant == block && tpb == 256 => 256" default_if="variant == block && tpb == 512 => 512" default_if="variant == block => 1024" default_if="dtype != f32 => 64" doc="threads per row: tpb / tpr rows per block; up to 32 a row's threads merge by warp shuffles alone, above 32 through shared memory (one barrier)"
//@ptxjit param vec int(1..8) pow2 default=4 default_if="dtype != f32 => 8" doc="elements per vector access: 16 bytes is 4 f32 or 8 f16/bf16; rows whose length or buffers are not aligned to it take element-wide accesses"
//@ptxjit param items int(1..64) default=8 default_if="variant == block && dtype == f32 => 4" default_if="variant == block => 2" doc="vector accesses per thread and row (online) or chunk (block), all issued before the first use; the defaults hold rows of up to 4096 elements (online) in a thread's 32 registers"
//@ptxjit constraint "tpr <= tpb" "tpr (threads per row) must not exceed tpb (threads per block): lower tpr or raise tpb"
//@ptxjit constraint "vec * bytes(dtype) <= 16" "a vector access is at most 16 bytes: vec <= 4 for f32, vec <= 8 for f16 and bf16"
//@ptxjit constraint "items * vec * bytes(dtype) <= 128" "a thread holds items * vec elements in registers, at most 128 bytes of them (32 f32, 64 f16 or bf16; more spill to local memory): lower items or vec; for longer rows raise tpr, or use variant=block"
//@ptxjit constraint "dtype == f32 || sm >= 80" "f16 and bf16 are rounded with cvt.rn.f16x2.f32 / cvt.rn.bf16x2.f32, which need sm_80 or newer; use dtype=f32"
//@ptxjit tune variant online,block
//@ptxjit tune tpb 64..1024
//@ptxjit tune tpr 32..1024
//@ptxjit tune items 1,2,4,6,8

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

// The registers of a thread's share: element i of it (i = round * W + k) is word i of x for f32,
// and half i % 2 of word i / 2 for 16-bit types, kept as loaded: half the registers of fp32
// values, so more threads fit on an SM when a row fills few of them. The exponentials are kept
// for the write (HELD: one exp per element) where that costs no more registers than the
// values: f32 ones replace their values; 16-bit ones go to `kept` when a thread holds at most
// HELD_MAX elements (there the exps, not the registers, are what counts). Beyond, 16-bit
// elements are exponentiated again when written.
enum : int { WORDS = DTYPE_ID == DTYPE_F32 ? PER_THREAD : (PER_THREAD + 1) / 2 };
enum : int { HELD_MAX = 16, HELD = DTYPE_ID == DTYPE_F32 || PER_THREAD <= HELD_MAX };
enum : int { KEPT = HELD && DTYPE_ID != DTYPE_F32 ? PER_THREAD : 1 };
// The blocks an SM should hold, for __launch_bounds__: enough that ptxas keeps to the share's
// registers plus REG_SPARE (without a minimum it capped 1024-thread blocks at 32 and spilled;
// with 1 it kept values of one pass live for the next). Element-wide loads (vec=1) land one to
// a register before 16-bit pairs are packed.
enum : int { HELD_REGS = (VEC == 1 ? PER_THREAD : WORDS) + (KEPT > 1 ? KEPT : 0) };
enum : int { REG_SPARE = VEC == 1 ? 32 : 24, REG_BUDGET = (HELD_REGS + REG_SPARE + 7) / 8 * 8 };
enum : int { FIT = 65536 / (TPB * REG_BUDGET), MIN_BLOCKS = FIT < 1 ? 1 : FIT > 32 ? 32 : FIT };

__device__ __forceinline__ float value(const unsigned *x, int i)
{
    if constexpr (DTYPE_ID == DTYPE_F32)
        return __uint_as_float(x[i]);
    else
        return i % 2 ? upper_to_float(x[i / 2]) : to_float(x[i / 2]);
}

// The same value, spelled with other instructions (a byte permute; a split and a convert), for
// the pass that sums the exponentials: the compilers would otherwise keep one pass's fp32
// values in registers for the next, undoing the packing.
__device__ __forceinline__ float value_again(const unsigned *x, int i)
{
    if constexpr (DTYPE_ID == DTYPE_F32) {
        return __uint_as_float(x[i]);
    } else if constexpr (DTYPE_ID == DTYPE_BF16) {
        unsigned b;
        if (i % 2)
            asm("prmt.b32 %0, %1, 0, 0x3244;" : "=r"(b) : "r"(x[i / 2]));
        else
            asm("prmt.b32 %0, %1, 0, 0x1044;" : "=r"(b) : "r"(x[i / 2]));
        return __uint_as_float(b);
    } else {
        float f;
        if (i % 2)
            asm("{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, %1;\n\tcvt.f32.f16 %0, hi;\n\t}"
                : "=f"(f) : "r"(x[i / 2]));
        else
            asm("{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, %1;\n\tcvt.f32.f16 %0, lo;\n\t}"
                : "=f"(f) : "r"(x[i / 2]));
        return f;
    }
}

// The larger of each half of two packed 16-bit pairs (max.bf16x2 / max.f16x2, sm_80).
__device__ __forceinline__ unsigned max2(unsigned a, unsigned b)
{
    unsigned r;
    if constexpr (DTYPE_ID == DTYPE_BF16)
        asm("max.bf16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    else
        asm("max.f16x2 %0, %1, %2;" : "=r"(r) : "r"(a), "r"(b));
    return r;
}

// The most negative finite 16-bit value in both halves: what packed maxima start from.
__device__ __forceinline__ unsigned lowest2()
{
    return DTYPE_ID == DTYPE_BF16 ? 0xff7fff7fu : 0xfbfffbffu;
}

// W elements from p (read-only, through the non-coherent path; W * ELEMENT_BYTES bytes aligned
// to their size) into elements i .. i + W - 1.
template <int W>
__device__ __forceinline__ void load_unit(const E *p, unsigned *x, int i)
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
    if constexpr (DTYPE_ID == DTYPE_F32) {
#pragma unroll
        for (int k = 0; k < W; k++)
            x[i + k] = w[k];
    } else if constexpr (W == 1) {
        // An even element comes first (rounds go in order) and sets the word's upper half to
        // the lowest value, which a packed max passes over when no odd element follows.
        if (i % 2)
            x[i / 2] = (x[i / 2] & 0xffffu) | (w[0] << 16);
        else
            x[i / 2] = w[0] | (lowest2() & 0xffff0000u);
    } else {
#pragma unroll
        for (int k = 0; k < W / 2; k++)
            x[i / 2 + k] = w[k];
    }
}

// The exponential kept for element i (HELD).
__device__ __forceinline__ float held(const unsigned *x, const float *kept, int i)
{
    return DTYPE_ID == DTYPE_F32 ? __uint_as_float(x[i]) : kept[i];
}

// Elements i .. i + W - 1 to p, each y * scale rounded to the element type, with y the kept
// exponential (KEEPING) or exp(x - m).
template <int W, bool KEEPING>
__device__ __forceinline__ void store_unit(E *p, const unsigned *x, const float *kept, int i,
                                           float m, float scale)
{
    constexpr int BYTES = W * ELEMENT_BYTES;
    float y[W];
#pragma unroll
    for (int k = 0; k < W; k++)
        y[k] = (KEEPING ? held(x, kept, i + k) : ex2(exponent(value(x, i + k), m))) * scale;
    unsigned w[BYTES >= 4 ? BYTES / 4 : 1];
    if constexpr (ELEMENT_BYTES == 4 || BYTES == 2) {
#pragma unroll
        for (int k = 0; k < W; k++)
            w[k] = from_float(y[k]);
    } else {
#pragma unroll
        for (int k = 0; k < W / 2; k++)
            w[k] = pack2(y[2 * k], y[2 * k + 1]);
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
// first + r * TPR + t, so that each round's accesses by the row's threads are contiguous; its
// elements are the share's r * W .. r * W + W - 1. A WHOLE chunk lies inside the row: every
// round is the thread's. Otherwise the thread's rounds are the first `mine` (units past the
// row's end come last), and each pass over them stops at the first that is not: a chain of
// branches whose tests are made where they are used, not kept in registers from the loads to
// the stores. Rows of a block past the last (!live) read the last row instead and write
// nothing.
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
                                           unsigned *x)
{
    const E *p = row + (index_t)(first + t) * W; // the rounds at constant offsets from here
#pragma unroll
    for (int r = 0; r < rounds<W>::count; r++) {
        if (!WHOLE && r >= mine)
            break;
        load_unit<W>(p + r * TPR * W, x, r * W);
    }
}

// The larger of m and the thread's elements: fp32 maxima, or packed 16-bit ones (exact: a
// max is one of the values) over the words, unpacked once.
template <int W, bool WHOLE>
__device__ __forceinline__ float chunk_max(const unsigned *x, int mine, float m)
{
    if constexpr (DTYPE_ID == DTYPE_F32) {
#pragma unroll
        for (int r = 0; r < rounds<W>::count; r++) {
            if (!WHOLE && r >= mine)
                break;
#pragma unroll
            for (int k = 0; k < W; k++)
                m = fmaxf(m, value(x, r * W + k));
        }
        return m;
    } else {
        unsigned pair = lowest2();
        constexpr int PER_ROUND = W >= 2 ? W / 2 : 1; // words a round fills (W = 1: half)
#pragma unroll
        for (int r = 0; r < rounds<W>::count; r += W >= 2 ? 1 : 2) {
            if (!WHOLE && r >= mine)
                break;
#pragma unroll
            for (int k = 0; k < PER_ROUND; k++)
                pair = max2(pair, x[r * W / 2 + k]);
        }
        return fmaxf(m, fmaxf(to_float(pair), upper_to_float(pair)));
    }
}

// s plus the sum of exp(x - m) over the thread's elements, added in order; the exponentials
// are kept where HELD.
template <int W, bool WHOLE>
__device__ __forceinline__ float chunk_exp_sum(unsigned *x, float *kept, int mine, float m,
                                               float s)
{
#pragma unroll
    for (int r = 0; r < rounds<W>::count; r++) {
        if (!WHOLE && r >= mine)
            break;
#pragma unroll
        for (int k = 0; k < W; k++) {
            const float e = ex2(exponent(value_again(x, r * W + k), m));
            if constexpr (DTYPE_ID == DTYPE_F32)
                x[r * W + k] = __float_as_uint(e);
            else if constexpr (HELD)
                kept[r * W + k] = e;
            s += e;
        }
    }
    return s;
}

template <int W, bool WHOLE, bool KEEPING>
__device__ __forceinline__ void store_chunk(E *row, unsigned first, unsigned t, int mine,
                                            bool live, const unsigned *x, const float *kept,
                                            float m, float scale)
{
    if (!live)
        return;
    E *p = row + (index_t)(first + t) * W;
#pragma unroll
    for (int r = 0; r < rounds<W>::count; r++) {
        if (!WHOLE && r >= mine)
            break;
        store_unit<W, KEEPING>(p + r * TPR * W, x, kept, r * W, m, scale);
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
    unsigned x[WORDS];
    float kept[KEPT];
    const int mine = rounds_in_row<W, WHOLE>(units, 0, t);
    load_chunk<W, WHOLE>(src, 0, t, mine, x);
    const float top = chunk_max<W, WHOLE>(x, mine, lowest());
    float m = top, s = chunk_exp_sum<W, WHOLE>(x, kept, mine, top, 0.0f);
    merge_row(m, s);
    if constexpr (HELD) // exp(x - top) kept: times exp(top - m) / s
        store_chunk<W, WHOLE, true>(dst, 0, t, mine, live, x, kept, m,
                                    ex2(exponent(top, m)) / s);
    else
        store_chunk<W, WHOLE, false>(dst, 0, t, mine, live, x, kept, m, 1.0f / s);
}

// One chunk of the block variant's first pass: the running max grows to the chunk's, the sum
// so far is scaled to it, and the chunk's exponentials, summed apart, are added to it with
// Kahan's compensation: a thread may add thousands of chunks (long rows, few threads), and
// plain fp32 additions would lose about sqrt(count) ulps.
template <int W, bool WHOLE>
__device__ __forceinline__ void block_scan(const E *src, unsigned units, unsigned first,
                                           unsigned t, float &m, float &s, float &lost)
{
    unsigned x[WORDS];
    float kept[KEPT]; // not read: the write pass recomputes
    const int mine = rounds_in_row<W, WHOLE>(units, first, t);
    load_chunk<W, WHOLE>(src, first, t, mine, x);
    const float grown = chunk_max<W, WHOLE>(x, mine, m);
    const float scale = ex2(exponent(m, grown));
    const float part = chunk_exp_sum<W, WHOLE>(x, kept, mine, grown, 0.0f);
    s *= scale;
    lost *= scale;
    const float y = part - lost, total = s + y;
    lost = (total - s) - y;
    s = total;
    m = grown;
}

// One chunk of the second pass: re-read, write exp(x - max) / sum.
template <int W, bool WHOLE>
__device__ __forceinline__ void block_write(const E *src, E *dst, unsigned units, unsigned first,
                                            unsigned t, bool live, float m, float inverse)
{
    unsigned x[WORDS];
    const int mine = rounds_in_row<W, WHOLE>(units, first, t);
    load_chunk<W, WHOLE>(src, first, t, mine, x);
    store_chunk<W, WHOLE, false>(dst, first, t, mine, live, x, nullptr, m, inverse);
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
    float m = lowest(), s = 0.0f, lost = 0.0f;
#pragma unroll 1
    for (unsigned first = 0; first < whole; first += CHUNK)
        block_scan<W, true>(src, units, first, t, m, s, lost);
#pragma unroll 1
    for (unsigned first = whole; first < units; first += CHUNK)
        block_scan<W, false>(src, units, first, t, m, s, lost);
    s -= lost;
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
extern "C" __global__ void __launch_bounds__(TPB, MIN_BLOCKS)
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

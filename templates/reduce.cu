// reduce.cu — sum of a vector, in the five steps of the reduction write-up. ptxjit prepends a
// prelude that defines each parameter as a compile-time constant (TPB, BATCH, VARIANT,
// VARIANT_*) and the element type DTYPE; `if constexpr` on them is Mojo's `@parameter if`.
//@ptxjit family reduce
//@ptxjit doc Sum of a vector: two passes through shared memory, a last-warp shuffle, one pass with atomics, batching, 16-byte vector loads.
//@ptxjit entry reduce_kernel
//@ptxjit nvrtc minimal
//@ptxjit param variant enum(two_pass,warp_shuffle,one_pass,batched,vectorized) default=vectorized doc="step of the progression (each adds one idea to the one before)"
//@ptxjit param tpb int(32..1024) pow2 default=512 doc="threads per block"
//@ptxjit param batch int(1..64) default=4 when="variant == batched || variant == vectorized" doc="per thread and block tile: elements (batched) or 16-byte vectors (vectorized)"
//@ptxjit param dtype dtype(i32,f32) default=i32 doc="element type; i32 sums wrap modulo 2^32, f32 sums are accurate to rounding"
//@ptxjit constraint "variant != vectorized || batch <= 16" "vectorized keeps batch 16-byte vectors in registers; batch above 16 spills them to local memory, use batch <= 16"
//@ptxjit tune tpb 64..1024
//@ptxjit tune batch 1,2,4,6,8,12,16

// Integer sums accumulate unsigned so that overflow wraps (signed overflow is undefined).
template <typename X> struct accumulator { using type = X; };
template <> struct accumulator<int> { using type = unsigned int; };
using T = DTYPE;
using ACC = accumulator<T>::type;
using index_t = unsigned long long;

// The 16-byte vector of four elements that one LDG.128 loads.
template <typename X> struct vector16;
template <> struct vector16<int> { using type = int4; };
template <> struct vector16<float> { using type = float4; };
using VEC_T = vector16<T>::type;
enum : int { VEC = 16 / sizeof(T) };

__device__ __forceinline__ ACC warp_sum(ACC v)
{
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_down_sync(0xffffffffu, v, offset);
    return v;
}

// Steps 1 and 2 write one partial per block; the host runs the kernel again on the partials
// with one block. Step 1 halves a shared-memory array with a barrier per level.
__device__ __forceinline__ void block_tree_sum(ACC v, ACC *out)
{
    __shared__ ACC sums[TPB];
    const int tid = threadIdx.x;
    sums[tid] = v;
    __syncthreads();
    // Step 2 stops the tree at 64 partials and lets the last warp finish with shuffles:
    // five barriers fewer.
    constexpr int stop = VARIANT == VARIANT_WARP_SHUFFLE ? 32 : 0;
#pragma unroll
    for (int active = TPB / 2; active > stop; active >>= 1) {
        if (tid < active)
            sums[tid] += sums[tid + active];
        __syncthreads();
    }
    if constexpr (VARIANT == VARIANT_WARP_SHUFFLE) {
        // The tree left 64 partials (or TPB, if only 32): fold the upper half in while
        // loading, then shuffle.
        if (tid < 32) {
            ACC s = warp_sum(TPB > 32 ? sums[tid] + sums[tid + 32] : sums[tid]);
            if (tid == 0)
                out[blockIdx.x] = s;
        }
    } else if (tid == 0) {
        out[blockIdx.x] = sums[0];
    }
}

// Steps 3-5: shuffles inside each warp, one shared slot per warp, then one atomic per block
// into the single result, so the whole sum is one kernel launch.
__device__ __forceinline__ void block_atomic_sum(ACC v, ACC *out)
{
    v = warp_sum(v);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if constexpr (TPB == 32) {
        if (lane == 0)
            atomicAdd(out, v);
    } else {
        __shared__ ACC warp_sums[TPB / 32];
        if (lane == 0)
            warp_sums[warp] = v;
        __syncthreads();
        if (warp == 0) {
            v = warp_sum(lane < TPB / 32 ? warp_sums[lane] : ACC(0));
            if (lane == 0)
                atomicAdd(out, v);
        }
    }
}

// Steps 1-3: one element per thread and grid-stride, as in the write-up.
__device__ __forceinline__ ACC thread_sum_strided(const T *in, index_t n)
{
    ACC sum = 0;
    const index_t stride = (index_t)TPB * gridDim.x;
    for (index_t i = (index_t)blockIdx.x * TPB + threadIdx.x; i < n; i += stride)
        sum += (ACC)in[i];
    return sum;
}

// Steps 4 and 5 walk the input in tiles of TPB * BATCH items (elements or 16-byte vectors).
// Each thread loads BATCH items of a tile, TPB apart so that every load instruction of the warp
// stays coalesced, all before the first add. The host launches one block per tile (a
// persistent grid looping over tiles measured slower); the loop covers grids clamped at the
// launch limit.
template <typename ITEM, typename SUM>
__device__ __forceinline__ ACC sum_tiles(const ITEM *__restrict__ items, index_t count, SUM sum_item)
{
    constexpr index_t tile = (index_t)TPB * BATCH;
    const index_t full_tiles = count / tile;
    ACC sum = 0;
    for (index_t t = blockIdx.x; t < full_tiles; t += gridDim.x) {
        const ITEM *at = items + t * tile + threadIdx.x;
        ITEM v[BATCH];
#pragma unroll
        for (int i = 0; i < BATCH; i++)
            v[i] = at[(index_t)i * TPB];
#pragma unroll
        for (int i = 0; i < BATCH; i++)
            sum += sum_item(v[i]);
    }
    // The last, partial tile goes to the block whose turn it would be.
    if (blockIdx.x == full_tiles % gridDim.x) {
        const index_t base = full_tiles * tile + threadIdx.x;
#pragma unroll
        for (int i = 0; i < BATCH; i++)
            if (base + (index_t)i * TPB < count)
                sum += sum_item(items[base + (index_t)i * TPB]);
    }
    return sum;
}

struct element_sum {
    __device__ ACC operator()(T v) const { return (ACC)v; }
};

// Step 5's 16-byte vector: four elements per load instruction.
struct vector_sum {
    __device__ ACC operator()(VEC_T v) const { return (ACC)v.x + (ACC)v.y + (ACC)v.z + (ACC)v.w; }
};

// Step 4: batching gives each thread several independent loads in flight.
__device__ __forceinline__ ACC thread_sum_batched(const T *__restrict__ in, index_t n)
{
    return sum_tiles(in, n, element_sum());
}

// Step 5: the same walk with 16-byte loads, four times the bytes per instruction. The input
// may start anywhere: block 0 adds the elements before the first 16-byte boundary and after
// the last whole vector.
__device__ __forceinline__ ACC thread_sum_vectorized(const T *__restrict__ in, index_t n)
{
    const unsigned misalignment = (unsigned)((unsigned long long)in & 15u) / sizeof(T);
    const index_t head = misalignment ? (index_t)(VEC - misalignment) < n ? VEC - misalignment : n
                                      : 0;
    const index_t vector_count = (n - head) / VEC;
    ACC sum = sum_tiles(reinterpret_cast<const VEC_T *>(in + head), vector_count, vector_sum());
    if (blockIdx.x == 0) {
        const index_t tail = head + vector_count * VEC;
        if (threadIdx.x < head)
            sum += (ACC)in[threadIdx.x];
        if (tail + threadIdx.x < n)
            sum += (ACC)in[tail + threadIdx.x];
    }
    return sum;
}

// Two-pass variants: out has one slot per block. One-pass variants: out is the single sum,
// zeroed by the host before the launch.
extern "C" __global__ void __launch_bounds__(TPB)
reduce_kernel(const T *__restrict__ in, ACC *__restrict__ out, index_t n)
{
    if constexpr (VARIANT == VARIANT_TWO_PASS || VARIANT == VARIANT_WARP_SHUFFLE) {
        block_tree_sum(thread_sum_strided(in, n), out);
    } else if constexpr (VARIANT == VARIANT_ONE_PASS) {
        block_atomic_sum(thread_sum_strided(in, n), out);
    } else if constexpr (VARIANT == VARIANT_BATCHED) {
        block_atomic_sum(thread_sum_batched(in, n), out);
    } else {
        block_atomic_sum(thread_sum_vectorized(in, n), out);
    }
}

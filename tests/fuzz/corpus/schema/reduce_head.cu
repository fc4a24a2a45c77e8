// reduce.cu — sum of a vector, in the five steps of the reduction write-up. ptxjit prepends a
// prelude that defines each parameter as a compile-time constant (TPB, BATCH, VARIANT,
// VARIANT_*) and the element type DTYPE; `if constexpr` on them is Mojo's `@parameter if`.
//@ptxjit family reduce
//@ptxjit doc Sum of a vector: two passes through shared memory, a last-warp shuffle, one pass with atomics, batching, 16-byte vector loads.
//@ptxjit entry reduce_kernel
//@ptxjit param variant enum(two_pass,warp_shuffle,one_pass,batched,vectorized) default=vectorized doc="step of the progression (each adds one idea to the one before)"
//@ptxjit param tpb int(32..1024) pow2 default=512 doc="threads per block"
//@ptxjit param batch int(1..64) default=4 when="variant == batched || variant == vectorized" doc="per thread and block tile: elements (batched) or 16-byte vectors (vectorized)"
//@ptxjit param dtype dtype(i32,f32) default=i32 doc="element type; i32 sums wrap modulo 2^32, f32 sums are accurate to rounding"
//@ptxjit constraint "variant != vectorized || batch <= 16" "vectorized keeps batch 16-byte vectors in registers; batch above 16 spills them to local memory, use batch <= 16"

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
 
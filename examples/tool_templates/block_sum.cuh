// block_sum.cuh — a helper header, not a template (no //@ptxjit lines): the sum of one value
// per thread over a block of THREADS threads, returned to every thread.
#pragma once

template <typename T, int THREADS>
__device__ __forceinline__ T block_sum(T v)
{
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "THREADS: whole warps, at most 1024");
    __shared__ T partial[THREADS / 32];
    for (int offset = 16; offset > 0; offset >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, offset);
    if (threadIdx.x % 32 == 0)
        partial[threadIdx.x / 32] = v;
    __syncthreads();
    T total = 0;
    for (int w = 0; w < THREADS / 32; w++)
        total += partial[w];
    return total;
}

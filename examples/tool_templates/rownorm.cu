// rownorm.cu — a user family loaded from a directory: each row of a rows x cols matrix divided
// by its L2 norm, y = x / sqrt(sum(x^2) + eps). One block per row; the block sum comes from a
// helper header in this directory, which ptxjit finds next to the template and hashes into the
// cache key (edit it and the next request compiles anew).
//@ptxjit family rownorm
//@ptxjit doc Each row of a matrix divided by its L2 norm (an example of a user template with a helper header).
//@ptxjit entry rownorm_kernel
//@ptxjit param tpb int(32..1024) pow2 default=256 doc="threads per block; one block per row"
//@ptxjit param dtype dtype(f32,f64) default=f32 doc="element type"
#include "block_sum.cuh"

extern "C" __global__ void __launch_bounds__(TPB)
rownorm_kernel(const DTYPE *x, DTYPE *y, int rows, int cols, float eps)
{
    const long long row = blockIdx.x;
    if (row >= rows)
        return;
    const DTYPE *in = x + row * cols;
    DTYPE *out = y + row * cols;
    DTYPE sum = 0;
    for (int c = threadIdx.x; c < cols; c += TPB)
        sum += in[c] * in[c];
    const DTYPE scale = DTYPE(1) / sqrt(block_sum<DTYPE, TPB>(sum) + DTYPE(eps));
    for (int c = threadIdx.x; c < cols; c += TPB)
        out[c] = in[c] * scale;
}

// transpose.cu — out = inᵀ for a row-major H × W matrix, in the steps of the TMA transpose
// write-up: a padded shared-memory tile; a tile loaded and stored by the tensor memory
// accelerator (TMA); the same with swizzled shared memory; and with several columns per thread.
//@ptxjit family transpose
//@ptxjit doc Matrix transpose: shared-memory tiles (any GPU), then TMA loads/stores, swizzling and thread coarsening (sm_90+).
//@ptxjit entry transpose_kernel
//@ptxjit param variant enum(smem,tma,tma_swizzle,tma_batched) default=tma_batched doc="step of the progression"
//@ptxjit param block int(8..64) pow2 default=32 doc="tile edge in elements"
//@ptxjit param batch int(1..64) pow2 default=8 when="variant == smem || variant == tma_batched" doc="elements each thread moves (smem: rows, tma_batched: columns)"
//@ptxjit param swizzle enum(none,32B,64B,128B) default=128B when="variant == tma_swizzle || variant == tma_batched" doc="shared-memory swizzle of the tensor maps"
//@ptxjit param dtype dtype(f32,f16,bf16,f64) default=f32 doc="element type (moved bit-exactly)"
//@ptxjit param group int(1..64) pow2 default=1 doc="tile rows per raster group: blocks run down GROUP tiles of a column before the next column (1: row by row)"
//@ptxjit param xpose enum(scalar,vector) default=scalar when="variant == tma_batched" doc="in-shared-memory transposition: one element per access, or 16-byte micro-tiles (needs swizzle=128B)"
//@ptxjit constraint "variant != tma_batched || xpose != vector || (swizzle == 128B && batch * bytes(dtype) * bytes(dtype) % 256 == 0)" "xpose=vector needs swizzle=128B and batch a multiple of (16/bytes(dtype))^2"
//@ptxjit constraint "variant == smem || sm >= 90" "TMA (cp.async.bulk.tensor) needs sm_90 or newer; use variant=smem"
//@ptxjit constraint "variant == tma || variant == tma_swizzle || batch <= block" "batch must not exceed the tile edge"
//@ptxjit constraint "(variant != tma && variant != tma_swizzle) || block * block <= 1024" "tma and tma_swizzle use one thread per element, at most 1024: lower block, or use tma_batched"
//@ptxjit constraint "variant == tma || variant == tma_swizzle || block * block / batch <= 1024" "a tile needs at most 1024 threads: lower block or raise batch"
//@ptxjit constraint "variant == smem || block * bytes(dtype) % 16 == 0" "a TMA box row must be a multiple of 16 bytes: raise block"
//@ptxjit constraint "variant != smem || block * (block + 1) * bytes(dtype) <= 49152" "the padded tile must fit the 48 KiB of static shared memory: lower block"
//@ptxjit constraint "variant == smem || 2 * block * block * bytes(dtype) <= 49152" "two tiles must fit the 48 KiB of static shared memory: lower block"
//@ptxjit constraint "variant == smem || variant == tma || swizzle != 32B || block * bytes(dtype) % 32 == 0" "with swizzle=32B a tile row must be a multiple of 32 bytes (it is moved as boxes 32 bytes wide): raise block"
//@ptxjit constraint "variant == smem || variant == tma || swizzle != 64B || block * bytes(dtype) % 64 == 0" "with swizzle=64B a tile row must be a multiple of 64 bytes (it is moved as boxes 64 bytes wide): raise block"
//@ptxjit constraint "variant == smem || variant == tma || swizzle != 128B || block * bytes(dtype) % 128 == 0" "with swizzle=128B a tile row must be a multiple of 128 bytes (it is moved as boxes 128 bytes wide): raise block"
// A transpose moves bits: an unsigned integer of the element's size stands for every dtype.
template <int N> struct bits;
template <> struct bits<2> { using type = unsigned short; };
template <> struct bits<4> { using type = unsigned int; };
template <> struct bits<8> { using type = unsigned long long; };
using E = bits<sizeof(DTYPE)>::type;

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned, passed by value.
struct alignas(64) tensor_map { unsigned long long opaque[16]; };

enum : int { B = BLOCK };
enum : int { PER_THREAD = (VARIANT == VARIANT_SMEM || VARIANT == VARIANT_TMA_BATCHED) ? BATCH : 1 };
enum : int { THREADS = B * B / PER_THREAD };
enum : int { SWIZZLE_MODE = (VARIANT == VARIANT_TMA_SWIZZLE || VARIANT == VARIANT_TMA_BATCHED) ? SWIZZLE : 0 };

// The tile this block moves. Blocks are dispatched in linear order; with GROUP > 1 that order
// runs down GROUP tile rows of one tile column before the next column, so the blocks in flight
// cover a squarer region: shorter strides in the reads and in the writes alike.
__device__ __forceinline__ void tile_coords(unsigned &tx, unsigned &ty)
{
    if constexpr (GROUP == 1) {
        tx = blockIdx.x;
        ty = blockIdx.y;
    } else {
        const unsigned linear = blockIdx.y * gridDim.x + blockIdx.x;
        const unsigned per_group = GROUP * gridDim.x;
        const unsigned first = linear / per_group * GROUP;
        const unsigned rows = gridDim.y - first < GROUP ? gridDim.y - first : GROUP;
        ty = first + linear % per_group % rows;
        tx = linear % per_group / rows;
    }
}

// Step 1: each thread copies PER_THREAD rows of a B x (B+1) tile; the padding column puts the
// elements of a tile column in different banks, so the transposed reads do not conflict.
__device__ __forceinline__ void transpose_smem(const E *__restrict__ in, E *__restrict__ out,
                                               unsigned h, unsigned w)
{
    __shared__ E tile[B][B + 1];
    constexpr int ROWS = B / PER_THREAD; // rows covered by one pass of the block
    const int tx = threadIdx.x % B, ty = threadIdx.x / B;
    unsigned bx, by;
    tile_coords(bx, by);
    unsigned x = bx * B + tx, y = by * B + ty;
#pragma unroll
    for (int j = 0; j < B; j += ROWS)
        if (x < w && y + j < h)
            tile[ty + j][tx] = in[(size_t)(y + j) * w + x];
    __syncthreads();
    x = by * B + tx;
    y = bx * B + ty;
#pragma unroll
    for (int j = 0; j < B; j += ROWS)
        if (x < h && y + j < w)
            out[(size_t)(y + j) * h + x] = tile[tx][ty + j];
}

// The TMA writes a swizzled box by XOR-ing the 16-byte chunk bits (4..6) of each shared
// address with its 128-byte row bits (7..9), masked to the mode's width; the tiles are
// 1024-byte aligned so that offsets and addresses agree.
__device__ __forceinline__ unsigned swizzle(unsigned offset)
{
    constexpr unsigned mask = SWIZZLE_MODE == 3 ? 7 : SWIZZLE_MODE == 2 ? 3 : SWIZZLE_MODE == 1 ? 1 : 0;
    return offset ^ (((offset >> 7) & mask) << 4);
}

// A swizzled box row is exactly the swizzle span, so a wider tile row travels as several
// boxes side by side, each stored whole (B rows x BOX_W columns) before the next.
enum : int { SPAN = SWIZZLE_MODE == 3 ? 128 : SWIZZLE_MODE == 2 ? 64 : SWIZZLE_MODE == 1 ? 32 : 0 };
enum : int { BOX_W = SWIZZLE_MODE ? SPAN / (int)sizeof(E) : B };
enum : int { BOXES = B / BOX_W };

// Byte offset of element (row, col) of a B x B tile laid out as BOXES boxes.
__device__ __forceinline__ unsigned tile_offset(int row, int col)
{
    return swizzle((unsigned)((((col / BOX_W) * B + row) * BOX_W + col % BOX_W) * sizeof(E)));
}

// Consecutive threads take consecutive columns of a row: reads along the tile row, writes
// down a column of the transposed tile (the swizzle spreads those over the banks).
__device__ __forceinline__ void transpose_elements(const char *src, char *dst)
{
    constexpr int COLUMN_GROUPS = B / PER_THREAD;
    const int r = threadIdx.x / COLUMN_GROUPS, c0 = threadIdx.x % COLUMN_GROUPS;
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        const int c = c0 + i * COLUMN_GROUPS;
        *reinterpret_cast<E *>(dst + tile_offset(c, r)) =
            *reinterpret_cast<const E *>(src + tile_offset(r, c));
    }
}

// 16-byte micro-tiles of V x V elements: V vector loads, a transpose in registers, V vector
// stores. With the 128-byte swizzle a row's 16-byte chunk c sits at chunk c ^ (row % 8); the
// 8 threads of each quarter-warp take micro-tiles (a, b) = (j ^ p, j), j = 0..7, which puts
// them in 8 distinct chunks both when reading rows V*a.. and when writing rows V*b..: no bank
// conflicts in either direction.
enum : int { V = 16 / (int)sizeof(E), MICRO_EDGE = B / V };
__device__ __forceinline__ unsigned chunk_offset(int row, int chunk)
{
    return (unsigned)((chunk / 8) * (B * 128) + row * 128 + (((chunk % 8) ^ (row % 8)) * 16));
}

__device__ __forceinline__ void transpose_micro_tiles(const char *src, char *dst)
{
    union vector { uint4 q; E e[V]; };
#pragma unroll
    for (int i = 0; i < PER_THREAD / (V * V); i++) {
        const int m = threadIdx.x + i * THREADS;
        const int j = m % 8, p = m / 8 % 8, g = m / 64;
        const int a = g % (MICRO_EDGE / 8) * 8 + (j ^ p), b = g / (MICRO_EDGE / 8) * 8 + j;
        vector in[V], out[V];
#pragma unroll
        for (int k = 0; k < V; k++)
            in[k].q = *reinterpret_cast<const uint4 *>(src + chunk_offset(V * a + k, b));
#pragma unroll
        for (int k = 0; k < V; k++)
#pragma unroll
            for (int l = 0; l < V; l++)
                out[k].e[l] = in[l].e[k];
#pragma unroll
        for (int k = 0; k < V; k++)
            *reinterpret_cast<uint4 *>(dst + chunk_offset(V * b + k, a)) = out[k].q;
    }
}

__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void wait_for_load(unsigned barrier)
{
    asm volatile("{\n\t.reg .pred done;\n"
                 "wait_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], 0;\n\t"
                 "@!done bra wait_%=;\n}" ::"r"(barrier) : "memory");
}

// Steps 2-4: one thread asks the TMA for the tile (one box per swizzle span), everyone waits on
// the mbarrier, transposes
// in shared memory, makes the writes visible to the TMA (fence.proxy.async), and one thread
// stores the transposed tile at the mirrored coordinates. The TMA clips ragged edges.
__device__ __forceinline__ void transpose_tma(const tensor_map *in_map, const tensor_map *out_map)
{
    __shared__ alignas(1024) E tile[B * B];
    __shared__ alignas(1024) E tile_t[B * B];
    __shared__ alignas(8) unsigned long long barrier;
    unsigned bx, by;
    tile_coords(bx, by);
    const int x0 = bx * B, y0 = by * B;
    const unsigned bar = shared_address(&barrier);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                     ::"r"(bar), "r"((unsigned)(B * B * sizeof(E))) : "memory");
#pragma unroll
        for (int k = 0; k < BOXES; k++)
            asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3}], [%4];"
                         ::"r"(shared_address(tile + k * B * BOX_W)), "l"(in_map),
                         "r"(x0 + k * BOX_W), "r"(y0), "r"(bar)
                         : "memory");
    }
    wait_for_load(bar);
    if constexpr (VARIANT == VARIANT_TMA_BATCHED && XPOSE == XPOSE_VECTOR)
        transpose_micro_tiles(reinterpret_cast<const char *>(tile), reinterpret_cast<char *>(tile_t));
    else
        transpose_elements(reinterpret_cast<const char *>(tile), reinterpret_cast<char *>(tile_t));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    if (threadIdx.x == 0) {
#pragma unroll
        for (int k = 0; k < BOXES; k++)
            asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                         ::"l"(out_map), "r"(y0 + k * BOX_W), "r"(x0),
                         "r"(shared_address(tile_t + k * B * BOX_W))
                         : "memory");
        asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        // The block's shared memory must outlive the TMA's reads of it.
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
    }
}

// One signature for every variant: smem uses the pointers, the TMA variants the tensor maps
// (the host passes zeros for what a variant does not use).
extern "C" __global__ void __launch_bounds__(THREADS)
transpose_kernel(const E *__restrict__ in, E *__restrict__ out, unsigned h, unsigned w,
                 const __grid_constant__ tensor_map in_map,
                 const __grid_constant__ tensor_map out_map)
{
    if constexpr (VARIANT == VARIANT_SMEM)
        transpose_smem(in, out, h, w);
    else
        transpose_tma(&in_map, &out_map);
}

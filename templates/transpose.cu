// transpose.cu — out = inᵀ for a row-major H × W matrix, in the steps of the TMA transpose
// write-up: a padded shared-memory tile; a tile loaded and stored by the tensor memory
// accelerator (TMA); the same with swizzled shared memory; and with several columns per thread.
// tma_batched goes on past the write-up: wider tiles, unswizzled, transposed along diagonals
// in place; the defaults are what measured fastest on the H100 (docs/PERFORMANCE.md).
//@ptxjit family transpose
//@ptxjit doc Matrix transpose: shared-memory tiles (any GPU), then TMA loads/stores, swizzling and thread coarsening (sm_90+).
//@ptxjit entry transpose_kernel
//@ptxjit nvrtc minimal half_storage
//@ptxjit param variant enum(smem,tma,tma_swizzle,tma_batched) default=tma_batched doc="step of the progression"
//@ptxjit param block int(8..256) pow2 default=32 default_if="variant == tma_batched => 128" default_if="variant == smem => 64" doc="tile width in elements: input columns, output rows (the tile edge of square tiles)"
//@ptxjit param swizzle enum(none,32B,64B,128B) default=128B default_if="variant == tma_batched => none" when="variant == tma_swizzle || variant == tma_batched" doc="shared-memory swizzle of the tensor maps (tma_batched: none moves longer runs of each row, and diagonals avoid the bank conflicts)"
//@ptxjit param xpose enum(scalar,diagonal,vector) default=diagonal default_if="block < 32 => scalar" when="variant == tma_batched" doc="in-shared-memory transposition: element by element along rows (the write-up), along 32 x 32 diagonals (no bank conflicts, any swizzle), or 16-byte micro-tiles (square tiles, swizzle=128B)"
//@ptxjit param rows int(0..256) default=0 default_if="variant == tma_batched && block == 128 && xpose != vector => 64" when="variant == tma_batched" doc="tile height in input rows (the output's tile width); 0: square tiles, block x block"
//@ptxjit param batch int(1..64) pow2 default=8 default_if="variant == tma_batched && block >= 16 => 16" when="variant == smem || variant == tma_batched" doc="elements each thread moves (smem: rows, tma_batched: elements of the tile)"
//@ptxjit param inplace int(0..1) default=1 when="variant == tma_batched" doc="1: one shared tile, transposed in place through registers (half the shared memory); 0: a second tile"
//@ptxjit param stages int(0..4) default=0 when="variant == tma_batched" doc="0: a block per tile; S >= 1: persistent blocks (as many as fit on the GPU) that loop over tiles with S tile loads in flight each (measured slower; no limit on the grid)"
//@ptxjit param group int(1..4096) pow2 default=4096 doc="tile rows per raster group: blocks run down GROUP tiles of a column before the next column (1: row by row; 4096, or as many as the matrix has: column by column, which measured fastest)"
//@ptxjit param dtype dtype(f32,f16,bf16,f64) default=f32 doc="element type (moved bit-exactly)"
//@ptxjit constraint "variant == smem || sm >= 90" "TMA (cp.async.bulk.tensor) needs sm_90 or newer; use variant=smem"
//@ptxjit constraint "(variant != tma && variant != tma_swizzle) || block * block <= 1024" "tma and tma_swizzle use one thread per element, at most 1024: lower block (32 or less), or use tma_batched"
//@ptxjit constraint "variant == tma || variant == tma_swizzle || batch <= block" "batch must not exceed the tile width (block)"
//@ptxjit constraint "variant == tma || variant == tma_swizzle || block * (rows + block * (rows == 0)) / batch <= 1024" "a tile needs at most 1024 threads: lower block or rows, or raise batch"
//@ptxjit constraint "variant != smem || block * (block + 1) * bytes(dtype) <= 49152" "the padded tile must fit the 48 KiB of static shared memory: lower block"
//@ptxjit constraint "rows == 0 || rows == 8 || rows == 16 || rows == 32 || rows == 64 || rows == 128 || rows == 256" "rows is 0 (square tiles) or a power of two from 8 to 256"
//@ptxjit constraint "variant == smem || block <= 256 && rows <= 256" "a TMA box is at most 256 elements on a side: lower block or rows"
//@ptxjit constraint "variant == smem || block * bytes(dtype) % 16 == 0 && rows * bytes(dtype) % 16 == 0" "a TMA box row must be a multiple of 16 bytes: raise block or rows"
//@ptxjit constraint "variant == smem || (stages + (stages == 0)) * (2 - inplace) * block * (rows + block * (rows == 0)) * bytes(dtype) + 1024 <= 232448" "the tiles must fit the 227 KiB of shared memory a block may have: lower block, rows or stages, or use inplace=1"
//@ptxjit constraint "variant == smem || variant == tma || swizzle != none || (block * bytes(dtype) <= 1024 && rows * bytes(dtype) <= 1024)" "unswizzled TMA boxes are kept to rows of at most 1 KiB: lower block or rows"
//@ptxjit constraint "variant == smem || variant == tma || swizzle != 32B || (block * bytes(dtype) % 32 == 0 && rows * bytes(dtype) % 32 == 0)" "with swizzle=32B a tile row must be a multiple of 32 bytes (it is moved as boxes 32 bytes wide): raise block or rows"
//@ptxjit constraint "variant == smem || variant == tma || swizzle != 64B || (block * bytes(dtype) % 64 == 0 && rows * bytes(dtype) % 64 == 0)" "with swizzle=64B a tile row must be a multiple of 64 bytes (it is moved as boxes 64 bytes wide): raise block or rows"
//@ptxjit constraint "variant == smem || variant == tma || swizzle != 128B || (block * bytes(dtype) % 128 == 0 && rows * bytes(dtype) % 128 == 0)" "with swizzle=128B a tile row must be a multiple of 128 bytes (it is moved as boxes 128 bytes wide): raise block or rows"
//@ptxjit constraint "variant != tma_batched || xpose != diagonal || (block >= 32 && (rows == 0 || rows >= 32) && block * (rows + block * (rows == 0)) / batch >= 32)" "xpose=diagonal needs tiles of at least 32 x 32 and at least one warp: raise block or rows, or use xpose=scalar"
//@ptxjit constraint "variant != tma_batched || xpose != vector || (rows == 0 && swizzle == 128B && batch * bytes(dtype) * bytes(dtype) % 256 == 0)" "xpose=vector needs square tiles (rows=0), swizzle=128B and batch a multiple of (16/bytes(dtype))^2"
//@ptxjit tune block 32,64,128,256
//@ptxjit tune rows 16,32,64,128
//@ptxjit tune batch 8,16,32,64
// A transpose moves bits: an unsigned integer of the element's size stands for every dtype.
template <int N> struct bits;
template <> struct bits<2> { using type = unsigned short; };
template <> struct bits<4> { using type = unsigned int; };
template <> struct bits<8> { using type = unsigned long long; };
using E = bits<sizeof(DTYPE)>::type;

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned, passed by value.
struct alignas(64) tensor_map { unsigned long long opaque[16]; };

// A tile is H input rows by B input columns; its transpose B rows by H columns.
enum : int { B = BLOCK, H = VARIANT == VARIANT_TMA_BATCHED && ROWS ? ROWS : BLOCK };
enum : int { PER_THREAD = (VARIANT == VARIANT_SMEM || VARIANT == VARIANT_TMA_BATCHED) ? BATCH : 1 };
enum : int { THREADS = B * H / PER_THREAD };
enum : int { SWIZZLE_MODE = (VARIANT == VARIANT_TMA_SWIZZLE || VARIANT == VARIANT_TMA_BATCHED) ? SWIZZLE : 0 };

// The tile (tx, ty) at position `linear` of the raster order. Blocks are dispatched in linear
// order; with GROUP > 1 the order runs down GROUP tile rows of one tile column before the next
// column, so the tiles in flight cover a squarer region.
__device__ __forceinline__ void tile_at(unsigned linear, unsigned tiles_x, unsigned tiles_y,
                                        unsigned &tx, unsigned &ty)
{
    if constexpr (GROUP == 1) {
        tx = linear % tiles_x;
        ty = linear / tiles_x;
    } else {
        const unsigned per_group = GROUP * tiles_x;
        const unsigned first = linear / per_group * GROUP;
        const unsigned rows = tiles_y - first < GROUP ? tiles_y - first : GROUP;
        ty = first + linear % per_group % rows;
        tx = linear % per_group / rows;
    }
}

// A block per tile: the grid is tiles_x x tiles_y.
__device__ __forceinline__ void tile_coords(unsigned &tx, unsigned &ty)
{
    tile_at(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y, tx, ty);
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
// boxes side by side, each stored whole (all rows x BOX_W columns) before the next.
enum : int { SPAN = SWIZZLE_MODE == 3 ? 128 : SWIZZLE_MODE == 2 ? 64 : SWIZZLE_MODE == 1 ? 32 : 0 };
enum : int { BOX_W = SWIZZLE_MODE ? SPAN / (int)sizeof(E) : B, BOXES = B / BOX_W };
enum : int { OUT_BOX_W = SWIZZLE_MODE ? SPAN / (int)sizeof(E) : H, OUT_BOXES = H / OUT_BOX_W };

// Byte offset of element (row, col) of a tile of ROWS_ rows laid out as boxes BOX_W_ wide.
template <int ROWS_, int BOX_W_>
__device__ __forceinline__ unsigned boxed_offset(int row, int col)
{
    return swizzle((unsigned)((((col / BOX_W_) * ROWS_ + row) * BOX_W_ + col % BOX_W_) * sizeof(E)));
}

// The input tile (H x B) and the transposed tile (B x H).
__device__ __forceinline__ unsigned tile_offset(int row, int col) { return boxed_offset<H, BOX_W>(row, col); }
__device__ __forceinline__ unsigned tile_t_offset(int row, int col) { return boxed_offset<B, OUT_BOX_W>(row, col); }

// The shared tiles of the TMA variants live in dynamic shared memory (the host asks for
// TILES * B * B elements plus 1024 bytes of slack), aligned here to the 1024 bytes that the
// 128-byte swizzle pattern repeats over.
enum : int { INPLACE_TILE = VARIANT == VARIANT_TMA_BATCHED && INPLACE };
enum : int { TRANSPOSITION = VARIANT == VARIANT_TMA_BATCHED ? XPOSE : XPOSE_SCALAR };

__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ char *aligned_tiles()
{
    extern __shared__ unsigned char dynamic_smem[];
    return reinterpret_cast<char *>(dynamic_smem) + ((1024 - (shared_address(dynamic_smem) & 1023)) & 1023);
}

// Which element (row r, column c) of the tile this thread reads i-th.
__device__ __forceinline__ void element_of(int i, int &r, int &c)
{
    if constexpr (TRANSPOSITION == XPOSE_DIAGONAL) {
        // Lane l of a warp takes (l, l + d) of a 32 x 32 sub-tile: 32 distinct banks when
        // reading rows and when writing columns, even with no swizzle or padding.
        const int lane = threadIdx.x % 32, unit = threadIdx.x / 32 + THREADS / 32 * i;
        const int d = unit % 32, sub = unit / 32;
        r = sub / (B / 32) * 32 + lane;
        c = sub % (B / 32) * 32 + (lane + d) % 32;
    } else {
        // Consecutive threads take consecutive columns of a row: reads along the tile row,
        // writes down a column of the transposed tile (a swizzle spreads those over banks).
        constexpr int COLUMN_GROUPS = B / PER_THREAD;
        r = threadIdx.x / COLUMN_GROUPS;
        c = threadIdx.x % COLUMN_GROUPS + i * COLUMN_GROUPS;
    }
}

// Reads every element first; in place, a barrier separates the reads from the writes.
__device__ __forceinline__ void transpose_elements(const char *src, char *dst)
{
    E v[PER_THREAD];
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        int r, c;
        element_of(i, r, c);
        v[i] = *reinterpret_cast<const E *>(src + tile_offset(r, c));
    }
    if constexpr (INPLACE_TILE)
        __syncthreads();
#pragma unroll
    for (int i = 0; i < PER_THREAD; i++) {
        int r, c;
        element_of(i, r, c);
        *reinterpret_cast<E *>(dst + tile_t_offset(c, r)) = v[i];
    }
}

// 16-byte micro-tiles of V x V elements: V vector loads, a transpose in registers, V vector
// stores. With the 128-byte swizzle a row's 16-byte chunk c sits at chunk c ^ (row % 8); the
// 8 threads of each quarter-warp take micro-tiles (a, b) = (j ^ p, j), j = 0..7, which puts
// them in 8 distinct chunks both when reading rows V*a.. and when writing rows V*b..: no bank
// conflicts in either direction.
enum : int { V = 16 / (int)sizeof(E), MICRO_EDGE = B / V, MICRO = PER_THREAD / (V * V) };
__device__ __forceinline__ unsigned chunk_offset(int row, int chunk)
{
    return (unsigned)((chunk / 8) * (B * 128) + row * 128 + (((chunk % 8) ^ (row % 8)) * 16));
}

__device__ __forceinline__ void micro_tile_of(int i, int &a, int &b)
{
    const int m = threadIdx.x + i * THREADS;
    const int j = m % 8, p = m / 8 % 8, g = m / 64;
    a = g % (MICRO_EDGE / 8) * 8 + (j ^ p);
    b = g / (MICRO_EDGE / 8) * 8 + j;
}

__device__ __forceinline__ void transpose_micro_tiles(const char *src, char *dst)
{
    union vector { uint4 q; E e[V]; };
    vector in[MICRO > 0 ? MICRO : 1][V];
#pragma unroll
    for (int i = 0; i < MICRO; i++) {
        int a, b;
        micro_tile_of(i, a, b);
#pragma unroll
        for (int k = 0; k < V; k++)
            in[i][k].q = *reinterpret_cast<const uint4 *>(src + chunk_offset(V * a + k, b));
    }
    if constexpr (INPLACE_TILE)
        __syncthreads();
#pragma unroll
    for (int i = 0; i < MICRO; i++) {
        int a, b;
        micro_tile_of(i, a, b);
#pragma unroll
        for (int k = 0; k < V; k++) {
            vector out;
#pragma unroll
            for (int l = 0; l < V; l++)
                out.e[l] = in[i][l].e[k];
            *reinterpret_cast<uint4 *>(dst + chunk_offset(V * b + k, a)) = out.q;
        }
    }
}

// Until the mbarrier's phase of the given parity has completed (the tile has landed).
__device__ __forceinline__ void wait_for_load(unsigned barrier, unsigned parity)
{
    asm volatile("{\n\t.reg .pred done;\n"
                 "wait_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
                 "@!done bra wait_%=;\n}" ::"r"(barrier), "r"(parity) : "memory");
}

// The tile at (x0, y0) from global into shared memory, one box per swizzle span, completing
// on the mbarrier. One thread calls it.
__device__ __forceinline__ void load_tile(char *tile, const tensor_map *map, int x0, int y0,
                                          unsigned bar)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(bar), "r"((unsigned)(B * H * sizeof(E))) : "memory");
#pragma unroll
    for (int k = 0; k < BOXES; k++) {
        const unsigned dst = shared_address(tile + k * H * BOX_W * sizeof(E));
        asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                         " [%0], [%1, {%2, %3}], [%4];"
                         ::"r"(dst), "l"(map), "r"(x0 + k * BOX_W), "r"(y0), "r"(bar)
                         : "memory");
    }
}

// The transposed tile to global memory at the mirrored coordinates (x0, y0 of the input);
// the TMA clips what falls outside. One thread calls it; it commits a bulk group.
__device__ __forceinline__ void store_tile(const char *tile_t, const tensor_map *map, int x0,
                                           int y0)
{
#pragma unroll
    for (int k = 0; k < OUT_BOXES; k++) {
        const unsigned src = shared_address(tile_t + k * B * OUT_BOX_W * sizeof(E));
        asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
                         ::"l"(map), "r"(y0 + k * OUT_BOX_W), "r"(x0), "r"(src)
                         : "memory");
    }
    asm volatile("cp.async.bulk.commit_group;" ::: "memory");
}

// Until the TMA has read the shared tiles of every committed store: before the block exits
// or overwrites them.
__device__ __forceinline__ void wait_stores_read()
{
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

__device__ __forceinline__ void init_barriers(unsigned first, int count)
{
    if (threadIdx.x == 0) {
        for (int i = 0; i < count; i++)
            asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(first + 8 * i) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
}

// Transposes a loaded tile into tile_t (the same tile when in place) and makes the writes
// visible to the TMA (fence.proxy.async) before the barrier that precedes the store.
__device__ __forceinline__ void transpose_tile(char *tile, char *tile_t)
{
    if constexpr (TRANSPOSITION == XPOSE_VECTOR)
        transpose_micro_tiles(tile, tile_t);
    else
        transpose_elements(tile, tile_t);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
}

enum : int { TILE_BYTES = B * H * (int)sizeof(E), STAGE_BYTES = (2 - INPLACE_TILE) * TILE_BYTES };

// Steps 2-4: one thread asks the TMA for the tile, everyone waits on the mbarrier, transposes
// in shared memory, and one thread stores the transposed tile at the mirrored coordinates.
__device__ __forceinline__ void transpose_tma(const tensor_map *in_map, const tensor_map *out_map)
{
    __shared__ alignas(8) unsigned long long barrier;
    char *tile = aligned_tiles(), *tile_t = tile + STAGE_BYTES - TILE_BYTES;
    unsigned bx, by;
    tile_coords(bx, by);
    const int x0 = bx * B, y0 = by * H;
    const unsigned bar = shared_address(&barrier);
    init_barriers(bar, 1);
    if (threadIdx.x == 0)
        load_tile(tile, in_map, x0, y0, bar);
    wait_for_load(bar, 0);
    transpose_tile(tile, tile_t);
    if (threadIdx.x == 0) {
        store_tile(tile_t, out_map, x0, y0);
        wait_stores_read();
    }
}

// Persistent blocks: block b moves tiles b, b + grid, b + 2 grid, ... of the raster order,
// with the loads of its next STAGES tiles in flight while it transposes and stores one.
__device__ __forceinline__ void transpose_tma_persistent(const tensor_map *in_map,
                                                         const tensor_map *out_map, unsigned h,
                                                         unsigned w)
{
    constexpr int S = STAGES > 0 ? STAGES : 1;
    __shared__ alignas(8) unsigned long long barriers[S];
    char *stages = aligned_tiles();
    const unsigned tiles_x = (w + B - 1) / B, tiles_y = (h + H - 1) / H;
    const unsigned total = tiles_x * tiles_y;
    const unsigned bar0 = shared_address(barriers);
    init_barriers(bar0, S);
    if (threadIdx.x == 0)
        for (int s = 0; s < S && blockIdx.x + s * gridDim.x < total; s++) {
            unsigned tx, ty;
            tile_at(blockIdx.x + s * gridDim.x, tiles_x, tiles_y, tx, ty);
            load_tile(stages + s * STAGE_BYTES, in_map, tx * B, ty * H, bar0 + 8 * s);
        }
    unsigned k = 0;
    for (unsigned t = blockIdx.x; t < total; t += gridDim.x, k++) {
        const int s = k % S;
        char *tile = stages + s * STAGE_BYTES, *tile_t = tile + STAGE_BYTES - TILE_BYTES;
        unsigned tx, ty;
        tile_at(t, tiles_x, tiles_y, tx, ty);
        wait_for_load(bar0 + 8 * s, (k / S) & 1);
        transpose_tile(tile, tile_t);
        if (threadIdx.x == 0) {
            store_tile(tile_t, out_map, tx * B, ty * H);
            const unsigned next = t + S * gridDim.x;
            if (next < total) {
                unsigned nx, ny;
                tile_at(next, tiles_x, tiles_y, nx, ny);
                wait_stores_read(); /* the stage's tiles are free again */
                load_tile(tile, in_map, nx * B, ny * H, bar0 + 8 * s);
            }
        }
    }
    if (threadIdx.x == 0)
        wait_stores_read();
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
    else if constexpr (VARIANT == VARIANT_TMA_BATCHED && STAGES > 0)
        transpose_tma_persistent(&in_map, &out_map, h, w);
    else
        transpose_tma(&in_map, &out_map);
}

// matmul.cu — C = A·B for row-major A (M × K), B (K × N), C (M × N), in the steps of the matmul
// write-up (naive, coalescing, tiled, tiled_register, block_tiled, block_tiled_vectorized,
// tensor_core), carried on to Hopper's wgmma: TMA loads into 128-byte-swizzled shared memory, a
// multi-stage mbarrier pipeline, one producer warpgroup and one or two consumer warpgroups,
// persistent blocks, TMA stores and a fused epilogue; for bf16/f16 (wgmma), tf32 (wgmma_tf32)
// and fp8 (wgmma_fp8). The wgmma variants are the last three of the list: `variant >= wgmma`
// in the directives names them.
//@ptxjit family matmul
//@ptxjit doc C = A·B, row-major: the seven steps of the matmul write-up (fp32, tf32 tensor cores), then Hopper wgmma (bf16/f16, tf32 or fp8 in, fp32 accumulation, fused epilogue).
//@ptxjit entry matmul_kernel
//@ptxjit entry matmul_stage_rows
//@ptxjit nvrtc minimal half_storage
//@ptxjit param variant enum(naive,coalescing,tiled,tiled_register,block_tiled,block_tiled_vectorized,tensor_core,wgmma,wgmma_tf32,wgmma_fp8) default=wgmma doc="step of the progression (each adds one idea to the one before); wgmma_tf32 and wgmma_fp8: wgmma on f32 (as tf32) and fp8 inputs"
//@ptxjit param dtype dtype(f32,bf16,f16) default=f32 default_if="variant == wgmma => bf16" when="variant != wgmma_fp8" doc="A and B: f32 (the SIMT variants; tensor_core rounds it to tf32, wgmma_tf32 truncates it) or bf16/f16 (wgmma)"
//@ptxjit param out dtype(f32,bf16,f16) default=f32 default_if="variant == wgmma && dtype == bf16 => bf16" default_if="variant == wgmma && dtype == f16 => f16" default_if="variant == wgmma_fp8 => bf16" doc="C; every variant accumulates in fp32 (the wgmma variants may round to any of the three)"
//@ptxjit param fp8 enum(e4m3,e5m2) default=e4m3 when="variant == wgmma_fp8" doc="A and B of wgmma_fp8: one byte each, e4m3 (4 exponent bits, 3 mantissa bits, max 448) or e5m2 (max 57344)"
//@ptxjit param mma enum(m16n8k8,m64n8k16,m64n16k16,m64n24k16,m64n32k16,m64n40k16,m64n48k16,m64n56k16,m64n64k16,m64n72k16,m64n80k16,m64n88k16,m64n96k16,m64n104k16,m64n112k16,m64n120k16,m64n128k16,m64n136k16,m64n144k16,m64n152k16,m64n160k16,m64n168k16,m64n176k16,m64n184k16,m64n192k16,m64n200k16,m64n208k16,m64n216k16,m64n224k16,m64n232k16,m64n240k16,m64n248k16,m64n256k16) default=m16n8k8 default_if="variant >= wgmma => m64n256k16" when="variant == tensor_core || variant >= wgmma" doc="tensor-core instruction shape: mma.sync m16n8k8 (tf32), or wgmma m64nNk16 with N a multiple of 8 up to 256 (the block's tile width; wgmma_tf32 issues m64nNk8 and wgmma_fp8 m64nNk32 of that N)"
//@ptxjit param load enum(cp_async,tma) default=cp_async default_if="sm >= 90 => tma" when="variant == tensor_core" doc="how tensor_core fills its stages: cp_async (the write-up's step: every thread copies 16-byte pieces into padded rows; sm_80+) or tma (one thread, whole swizzled tiles, mbarriers instead of block barriers; sm_90, where it is the default)"
//@ptxjit param bm int(16..256) pow2 default=32 default_if="variant == tiled_register => 64" default_if="variant == tensor_core && load == tma => 256" default_if="variant == block_tiled || variant == block_tiled_vectorized || variant == tensor_core || variant >= wgmma => 128" doc="block tile rows (of C)"
//@ptxjit param bn int(16..256) pow2 default=32 default_if="variant == tiled_register => 64" default_if="variant == block_tiled || variant == block_tiled_vectorized || variant == tensor_core => 128" when="variant < wgmma" doc="block tile columns (wgmma: N of mma)"
//@ptxjit param bk int(4..64) pow2 default=8 default_if="variant == tiled || variant == tensor_core => 32" default_if="variant == block_tiled_vectorized => 16" when="variant != naive && variant != coalescing && variant < wgmma" doc="K step of the shared-memory tiles (wgmma: one 128-byte row, 64 bf16, 32 tf32 or 128 fp8 elements)"
//@ptxjit param tm int(1..16) pow2 default=8 when="variant == tiled_register || variant == block_tiled || variant == block_tiled_vectorized" doc="C rows per thread"
//@ptxjit param tn int(1..16) pow2 default=8 when="variant == block_tiled || variant == block_tiled_vectorized" doc="C columns per thread"
//@ptxjit param wm int(16..128) pow2 default=64 when="variant == tensor_core" doc="warp tile rows"
//@ptxjit param wn int(8..128) pow2 default=32 default_if="load == tma => 64" when="variant == tensor_core" doc="warp tile columns"
//@ptxjit param stages int(2..16) default=3 default_if="variant == tensor_core && load == tma => 4" default_if="variant == wgmma_tf32 => 4" when="variant == tensor_core || variant >= wgmma" doc="shared-memory pipeline depth: tiles loading while one is multiplied"
//@ptxjit param prefetch int(0..1) default=1 when="variant == tensor_core" doc="1: load the next k step's fragments before the mma of this one (more registers, loads hidden behind mma)"
//@ptxjit param consumers int(1..2) default=2 when="variant >= wgmma" doc="consumer warpgroups, each multiplying bm / consumers rows (plus one producer warpgroup issuing the TMA loads)"
//@ptxjit param cluster int(1..2) default=1 when="variant >= wgmma" doc="thread-block cluster along M: 2 blocks on adjacent row tiles share each B tile, every block loading its share of the boxes and multicasting them to both (half the B traffic from L2 where N is a multiple of 128, or a multiple of 16 with B K-major; with swap=1, adjacent tiles of B's rows sharing A's)"
//@ptxjit param group int(1..64) pow2 default=1 default_if="variant >= wgmma || variant == tensor_core => 8" doc="tile rows per raster group: blocks run down GROUP tiles of a column before the next, so the tiles in flight share rows of A and columns of B in L2"
//@ptxjit param sched enum(grid,persistent,pingpong,gemv) default=persistent when="variant >= wgmma" doc="grid: one block per tile of C; persistent (the default): a block per SM (clusters: as many as are resident), each taking every gridDim-th tile of the raster order, its producer loading the next tile's stages while its consumers store this one; pingpong: persistent, but the two consumers take whole 128-row tiles in turn, so one stores its tile while the other multiplies the next (with store=tma through one buffer of 64 rows of C that they take in turn; bm=128 consumers=2, N up to 176); gemv: no wgmma, TMA or pipeline, for a decoding's few rows of A, where the product is B read once: a block per 16 columns of C (16 rows of B, b_layout=nk), its four warps splitting K and feeding mma.sync from 16-byte loads of global memory, up to 16 rows of A at a time (the tile parameters do not apply)"
//@ptxjit param swap int(0..1) default=0 when="variant >= wgmma" doc="1: the kernel computes C's transpose, B^T A^T: B's rows (columns of C) fill wgmma's 64-row side and A's rows its N side (N of mma: 8 rows of A at m64n8k16), so a product of a few rows of A (a decoding's) does not multiply 64-row tiles of mostly zeros; bm x N is then a tile of C^T. Any b_layout (kn: wgmma reads B M-major); needs store=direct"
//@ptxjit param store enum(direct,tma) default=direct default_if="swap == 0 && sched != gemv && 8 * mma * bytes(out) % 32 == 0 && stages * ((bm + (8 * mma + 63) / 64 * 64) * 128 + 16) + (bm - (sched == pingpong) * (bm - 64)) * 8 * mma * bytes(out) + 1024 <= 232448 => tma" when="variant >= wgmma" doc="how C leaves the consumers: direct (each thread's accumulator pairs to global memory) or tma (through a swizzled tile of shared memory and TMA stores, which run on while the next tile is multiplied; the default where the tile fits beside the stages, B counted in 64-row boxes, and its rows are whole 32-byte boxes)"
//@ptxjit param b_layout enum(kn,nk) default=kn default_if="variant == wgmma_tf32 || variant == wgmma_fp8 || sched == gemv => nk" when="variant >= wgmma" doc="B in memory: kn (K x N row-major, C = A·B) or nk (given as its transpose, N x K row-major: K contiguous, which wgmma's tf32 and fp8 shapes need)"
//@ptxjit param alpha enum(none,scaled) default=none when="variant >= wgmma" doc="scaled: C = alpha·A·B + ..., alpha a launch value (ptxjit_matmul_ex)"
//@ptxjit param beta enum(none,scaled) default=none when="variant >= wgmma" doc="scaled: + beta·C, the values C holds before the call (read by the epilogue; beta a launch value)"
//@ptxjit param bias enum(none,column) default=none when="variant >= wgmma" doc="column: + bias[j] on column j (a launch vector of n floats)"
//@ptxjit param act enum(none,relu,gelu) default=none when="variant >= wgmma" doc="activation applied last: relu max(x, 0); gelu its tanh form 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))"
//@ptxjit param splits int(1..16) default=1 when="variant >= wgmma" doc="split-K: each tile's K loop cut into up to this many parts, run by different blocks, which leave their fp32 sums in a workspace the op lends; the last part of a tile to finish adds them in order and stores C. For products with fewer tiles than SMs, as in decoding"
//@ptxjit constraint "variant == wgmma_fp8 || (variant == wgmma) == (dtype != f32)" "the SIMT, tensor_core and wgmma_tf32 variants take dtype=f32; wgmma takes dtype=bf16 or f16"
//@ptxjit constraint "variant >= wgmma || out == f32" "out is f32, or for the wgmma variants f32, bf16 or f16"
//@ptxjit constraint "variant != tensor_core || mma == m16n8k8" "tensor_core issues mma.sync m16n8k8 (tf32); the m64nNk16 shapes are wgmma's"
//@ptxjit constraint "variant < wgmma || mma != m16n8k8" "the wgmma variants take mma=m64nNk16 (N = 8, 16, ..., 256)"
//@ptxjit constraint "variant < wgmma || sm == 90" "the wgmma variants need an sm_90a target (Hopper); use variant=tensor_core elsewhere"
//@ptxjit constraint "variant != tensor_core || sm >= 80" "tensor_core (mma.sync tf32, cp.async) needs sm_80 or newer"
//@ptxjit constraint "variant != naive && variant != coalescing && variant != tiled || bm * bn <= 1024" "one thread per element of C: bm * bn must be at most 1024"
//@ptxjit constraint "variant != tiled_register || bm % tm == 0 && bm * bn / tm <= 1024 && bm * bn / tm >= 32" "tiled_register needs tm to divide bm and 32..1024 threads (bm * bn / tm)"
//@ptxjit constraint "variant != block_tiled && variant != block_tiled_vectorized || bm % tm == 0 && bn % tn == 0 && bm * bn / (tm * tn) <= 1024 && bm * bn / (tm * tn) >= 32" "block tiling needs tm | bm, tn | bn and 32..1024 threads (bm * bn / (tm * tn))"
//@ptxjit constraint "variant != block_tiled_vectorized || tm % 4 == 0 && tn % 4 == 0 && bk % 4 == 0 && bn / tn % 8 == 0 && bm / tm % 4 == 0" "block_tiled_vectorized moves 4-element vectors: tm, tn, bk multiples of 4, bn / tn a multiple of 8 and bm / tm of 4 (a warp covers 4 x 8 threads)"
//@ptxjit constraint "variant != block_tiled_vectorized || bm * bk / 4 % (bm * bn / (tm * tn)) == 0 && bk * bn / 4 % (bm * bn / (tm * tn)) == 0" "block_tiled_vectorized: every thread loads the same number of vectors of each tile (bm * bk / 4 and bk * bn / 4 divisible by the threads)"
//@ptxjit constraint "variant != block_tiled_vectorized || 2 * (bk * (bm + 4) + bk * bn) * 4 <= 49152" "block_tiled_vectorized's two tile buffers must fit 48 KiB: lower bm, bn or bk"
//@ptxjit constraint "variant != tiled && variant != tiled_register && variant != block_tiled || (bm * bk + bk * bn) * 4 <= 49152" "the tiles must fit 48 KiB of shared memory: lower bm, bn or bk"
//@ptxjit constraint "variant != tensor_core || bm % wm == 0 && bn % wn == 0 && wm % 16 == 0 && wn % 8 == 0 && bk % 8 == 0" "tensor_core: warp tiles divide the block tile, in whole 16 x 8 x 8 mma tiles"
//@ptxjit constraint "variant != tensor_core || bm / wm * (bn / wn) * 32 <= 1024" "tensor_core: at most 32 warps (bm / wm * bn / wn)"
//@ptxjit constraint "variant != tensor_core || load == tma || bm * bk / 4 % (bm / wm * (bn / wn) * 32) == 0 && bk * bn / 4 % (bm / wm * (bn / wn) * 32) == 0" "tensor_core load=cp_async: each thread copies the same number of 16-byte pieces of each tile (bm * bk / 4 and bk * bn / 4 divisible by the threads); raise bk or use load=tma"
//@ptxjit constraint "variant != tensor_core || load != tma || sm >= 90" "tensor_core load=tma needs the tensor memory accelerator of sm_90; use load=cp_async"
//@ptxjit constraint "variant != tensor_core || load != tma || bk >= 8 && bk <= 32 && bn % 32 == 0" "tensor_core load=tma: rows of A (bk floats) must be a swizzle span of 32, 64 or 128 bytes (bk = 8, 16, 32) and B comes in boxes of 32 columns (bn a multiple of 32)"
//@ptxjit constraint "variant != tensor_core || wm / 16 * (wn / 8) <= 32" "tensor_core: a warp tile holds at most 32 mma tiles (128 accumulators per thread): lower wm or wn"
//@ptxjit constraint "variant != tensor_core || load == tma || stages * (bm * (bk + 4) + bk * (bn + 8)) * 4 <= 232448" "tensor_core's pipeline must fit 227 KiB of shared memory: lower stages, bm, bn or bk"
//@ptxjit constraint "variant != tensor_core || load != tma || stages * (bm + bn) * bk * 4 + 1024 <= 232448" "tensor_core's pipeline must fit 227 KiB of shared memory: lower stages, bm, bn or bk"
//@ptxjit constraint "variant < wgmma || bm == 64 * consumers || bm == 128 * consumers" "wgmma: each consumer warpgroup multiplies 64 or 128 rows: bm = 64 or 128 times consumers"
//@ptxjit constraint "variant < wgmma || sched == pingpong || bm / (64 * consumers) * 4 * mma <= 128" "wgmma: at most 128 accumulators per thread (rows per consumer / 64 * N / 2): lower N or bm"
//@ptxjit constraint "variant < wgmma || sched != pingpong || bm == 128 && consumers == 2 && splits == 1 && swap == 0" "sched=pingpong: two consumers taking whole tiles of 128 rows in turn (bm=128 consumers=2), without split-K or swapped operands"
//@ptxjit constraint "variant < wgmma || sched != pingpong || mma <= 22" "sched=pingpong: a consumer holds a whole 128-row tile, at most 176 accumulators per thread: N of mma at most 176"
//@ptxjit constraint "variant < wgmma || stages * ((bm + (8 * mma + 63) / 64 * 64 - (b_layout == nk || swap == 1) * (mma < 8 || mma % cluster == 0) * ((8 * mma + 63) / 64 * 64 - 8 * mma)) * 128 + 16) + (store == tma) * (bm - (sched == pingpong) * (bm - 64)) * 8 * mma * bytes(out) + 1024 <= 232448" "wgmma's pipeline (and store=tma's tile of C: 64 rows of it with sched=pingpong) must fit 227 KiB of shared memory: lower stages, bm or N"
//@ptxjit constraint "variant < wgmma || variant == wgmma || b_layout == nk" "wgmma_tf32 and wgmma_fp8 read B K-major (wgmma transposes 16-bit operands only): give B as its transpose (N x K row-major) with b_layout=nk"
//@ptxjit constraint "variant < wgmma || splits == 1 || cluster == 1" "split-K (splits > 1) runs without clusters: use cluster=1"
//@ptxjit constraint "variant < wgmma || store != tma || 8 * mma * bytes(out) % 32 == 0" "store=tma writes C in boxes of 32, 64 or 128 bytes: N of mma must be a multiple of 16 (16-bit out) or 8 (f32 out); use store=direct"
//@ptxjit constraint "variant < wgmma || swap == 0 || store == direct" "swap=1 writes C transposed from the accumulators: use store=direct"
//@ptxjit constraint "variant < wgmma || sched != gemv || b_layout == nk && store == direct && splits == 1 && swap == 0 && cluster == 1" "sched=gemv reads B K-major and stores C from its warps: it takes b_layout=nk, store=direct, and no split-K, swapped operands or clusters (splits=1 swap=0 cluster=1)"
//@ptxjit tune mma m16n8k8,m64n64k16,m64n128k16,m64n192k16,m64n256k16
//@ptxjit tune bm 64,128,256
//@ptxjit tune consumers 1,2
//@ptxjit tune stages 3,4,6,8
//@ptxjit tune cluster 1,2
//@ptxjit tune group 8,16
// store lists tma first: the pick rule takes the earliest of the tied candidates, and where
// both fit, direct's stores ran 4.5-5% behind (bf16 8192^3), on the edge of a band that a
// noisy best widens to 5%: with direct first, five tunings picked the tile with both stores.
//@ptxjit tune store tma,direct
using TI = DTYPE; // A and B
using TO = OUT;   // C

// The driver's CUtensorMap: 128 opaque bytes, 64-byte aligned, passed by value.
struct alignas(64) tensor_map { unsigned long long opaque[16]; };

enum : int { WG_FAMILY = VARIANT == VARIANT_WGMMA || VARIANT == VARIANT_WGMMA_TF32 ||
                         VARIANT == VARIANT_WGMMA_FP8 };

// The block's tile of C: BM rows by TILE_N columns (wgmma: N of its mma shape).
enum : int { MMA_INDEX = (VARIANT == VARIANT_TENSOR_CORE || WG_FAMILY) ? MMA : 0 };
// m64nNk16 is value N/8 of the mma list (8 where a variant has no wgmma, so that its unused
// functions still compile).
enum : int { WG_N = WG_FAMILY ? MMA_INDEX * 8 : 8 };
enum : int { TILE_N = WG_FAMILY ? WG_N : BN };

// Blocks per thread-block cluster (wgmma's cluster=2: two row tiles sharing their B tiles).
enum : int { CLUSTER_SIZE = WG_FAMILY ? CLUSTER : 1 };

// Tile `linear` of the raster order (of clusters' tiles: a cluster's blocks take adjacent row
// tiles of one column). Blocks are dispatched in index order; GROUP > 1 runs down GROUP tile
// rows before moving to the next tile column, so the blocks in flight at once read GROUP row
// panels of A and a few column panels of B, which then stay in L2.
__device__ __forceinline__ void tile_origin(unsigned linear, int M, int N, int &row0, int &col0)
{
    enum : int { ROWS = BM * CLUSTER_SIZE };
    const unsigned tiles_m = (M + ROWS - 1) / ROWS, tiles_n = (N + TILE_N - 1) / TILE_N;
    const unsigned per_group = GROUP * tiles_n;
    const unsigned first = linear / per_group * GROUP;
    const unsigned rows = tiles_m - first < GROUP ? tiles_m - first : GROUP;
    row0 = (int)(first + linear % per_group % rows) * ROWS + (int)(blockIdx.x % CLUSTER_SIZE) * BM;
    col0 = (int)(linear % per_group / rows) * TILE_N;
}

// Which tile of C this block computes (one per block).
__device__ __forceinline__ void block_tile(int M, int N, int &row0, int &col0)
{
    tile_origin(blockIdx.x / CLUSTER_SIZE, M, N, row0, col0);
}

__device__ __forceinline__ float load_or_zero(const float *p, int r, int c, int rows, int cols,
                                              int ld)
{
    return r < rows && c < cols ? p[(size_t)r * ld + c] : 0.0f;
}

// Step 1: one thread per element of C, consecutive threads on consecutive rows: a warp reads
// 32 rows of A (32 strided loads) and writes a column of C.
__device__ __forceinline__ void matmul_naive(const float *A, const float *B, float *C, int M,
                                             int N, int K)
{
    int row0, col0;
    block_tile(M, N, row0, col0);
    const int r = row0 + threadIdx.x % BM, c = col0 + threadIdx.x / BM;
    if (r >= M || c >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[(size_t)r * K + k] * B[(size_t)k * N + c];
    C[(size_t)r * N + c] = acc;
}

// Step 2: consecutive threads on consecutive columns: B and C accesses coalesce, A is one
// broadcast per warp.
__device__ __forceinline__ void matmul_coalescing(const float *A, const float *B, float *C,
                                                  int M, int N, int K)
{
    int row0, col0;
    block_tile(M, N, row0, col0);
    const int r = row0 + threadIdx.x / BN, c = col0 + threadIdx.x % BN;
    if (r >= M || c >= N)
        return;
    float acc = 0.0f;
    for (int k = 0; k < K; k++)
        acc += A[(size_t)r * K + k] * B[(size_t)k * N + c];
    C[(size_t)r * N + c] = acc;
}

// Loads the BM x BK tile of A at (row0, k0) and the BK x BN tile of B at (k0, col0) into
// shared memory, every thread a share, zeros outside the matrices.
template <int THREADS_>
__device__ __forceinline__ void load_tiles(float (*As)[BK], float (*Bs)[BN], const float *A,
                                           const float *B, int M, int N, int K, int row0,
                                           int col0, int k0)
{
    for (int i = threadIdx.x; i < BM * BK; i += THREADS_)
        As[i / BK][i % BK] = load_or_zero(A, row0 + i / BK, k0 + i % BK, M, K, K);
    for (int i = threadIdx.x; i < BK * BN; i += THREADS_)
        Bs[i / BN][i % BN] = load_or_zero(B, k0 + i / BN, col0 + i % BN, K, N, N);
}

// Step 3: the block stages BM x BK of A and BK x BN of B in shared memory, so each element
// fetched from global memory serves BN (or BM) multiply-adds instead of one.
__device__ __forceinline__ void matmul_tiled(const float *A, const float *B, float *C, int M,
                                             int N, int K)
{
    __shared__ float As[BM][BK], Bs[BK][BN];
    int row0, col0;
    block_tile(M, N, row0, col0);
    const int tr = threadIdx.x / BN, tc = threadIdx.x % BN;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tiles<BM * BN>(As, Bs, A, B, M, N, K, row0, col0, k0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++)
            acc += As[tr][k] * Bs[k][tc];
        __syncthreads();
    }
    if (row0 + tr < M && col0 + tc < N)
        C[(size_t)(row0 + tr) * N + col0 + tc] = acc;
}

// Step 4: each thread computes TM rows of one column, so one value of B read from shared
// memory feeds TM multiply-adds held in registers.
__device__ __forceinline__ void matmul_tiled_register(const float *A, const float *B, float *C,
                                                      int M, int N, int K)
{
    constexpr int THREADS_ = BM * BN / TM;
    __shared__ float As[BM][BK], Bs[BK][BN];
    int row0, col0;
    block_tile(M, N, row0, col0);
    const int tr = threadIdx.x / BN * TM, tc = threadIdx.x % BN;
    float acc[TM] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tiles<THREADS_>(As, Bs, A, B, M, N, K, row0, col0, k0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            const float b = Bs[k][tc];
#pragma unroll
            for (int t = 0; t < TM; t++)
                acc[t] += As[tr + t][k] * b;
        }
        __syncthreads();
    }
#pragma unroll
    for (int t = 0; t < TM; t++)
        if (row0 + tr + t < M && col0 + tc < N)
            C[(size_t)(row0 + tr + t) * N + col0 + tc] = acc[t];
}

// Step 5: a TM x TN tile of C per thread, grown by outer products of a column of A's tile and
// a row of B's: TM + TN shared loads feed TM * TN multiply-adds.
__device__ __forceinline__ void matmul_block_tiled(const float *A, const float *B, float *C,
                                                   int M, int N, int K)
{
    constexpr int THREADS_ = BM * BN / (TM * TN);
    __shared__ float As[BM][BK], Bs[BK][BN];
    int row0, col0;
    block_tile(M, N, row0, col0);
    const int tr = threadIdx.x / (BN / TN) * TM, tc = threadIdx.x % (BN / TN) * TN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        load_tiles<THREADS_>(As, Bs, A, B, M, N, K, row0, col0, k0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; i++)
                a[i] = As[tr + i][k];
#pragma unroll
            for (int j = 0; j < TN; j++)
                b[j] = Bs[k][tc + j];
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] += a[i] * b[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++)
#pragma unroll
        for (int j = 0; j < TN; j++)
            if (row0 + tr + i < M && col0 + tc + j < N)
                C[(size_t)(row0 + tr + i) * N + col0 + tc + j] = acc[i][j];
}

// Step 6: block tiling with 16-byte vectors everywhere, and the next tiles loaded into
// registers while this one is multiplied (two shared buffers, one barrier per tile). A is
// stored transposed (k-major), so a thread reads 4 rows of A with one 16-byte load too. A
// thread's TM x TN tile is TM/4 x TN/4 blocks of 4 x 4, spread BM/(TM/4) and BN/(TN/4) apart,
// and a warp covers 4 x 8 threads: its shared reads are 4 and 8 distinct 16-byte vectors.
enum : int { BTV_THREADS = VARIANT == VARIANT_BLOCK_TILED_VECTORIZED ? BM * BN / (TM * TN) : 32 };
enum : int { THREAD_ROWS = BM / TM, THREAD_COLS = BN / TN, PAD_A = 4 };
enum : int { WARP_COLS = THREAD_COLS >= 8 ? THREAD_COLS / 8 : 1 }; // warps across the tile
// (At least 1 where the variant is another: its unused functions must still compile.)
enum : int { A_VECTORS = BM * BK / 4 / BTV_THREADS > 0 ? BM * BK / 4 / BTV_THREADS : 1 };
enum : int { B_VECTORS = BK * BN / 4 / BTV_THREADS > 0 ? BK * BN / 4 / BTV_THREADS : 1 };

struct btv_tiles {
    float a[2][BK][BM + PAD_A];
    float b[2][BK][BN];
};

// The next tiles into registers: 16-byte loads when every row is 16-byte aligned, else single
// elements; zeros outside the matrices.
__device__ __forceinline__ void btv_fetch(float4 *ra, float4 *rb, const float *A, const float *B,
                                          int M, int N, int K, int row0, int col0, int k0,
                                          bool vector_rows)
{
#pragma unroll
    for (int v = 0; v < A_VECTORS; v++) {
        const int i = threadIdx.x + v * BTV_THREADS, r = row0 + i / (BK / 4), k = k0 + i % (BK / 4) * 4;
        if (vector_rows) {
            ra[v] = r < M && k < K ? *reinterpret_cast<const float4 *>(A + (size_t)r * K + k)
                                   : make_float4(0, 0, 0, 0);
        } else {
            ra[v] = make_float4(load_or_zero(A, r, k, M, K, K), load_or_zero(A, r, k + 1, M, K, K),
                                load_or_zero(A, r, k + 2, M, K, K), load_or_zero(A, r, k + 3, M, K, K));
        }
    }
#pragma unroll
    for (int v = 0; v < B_VECTORS; v++) {
        const int i = threadIdx.x + v * BTV_THREADS, k = k0 + i / (BN / 4), c = col0 + i % (BN / 4) * 4;
        if (vector_rows) {
            rb[v] = k < K && c < N ? *reinterpret_cast<const float4 *>(B + (size_t)k * N + c)
                                   : make_float4(0, 0, 0, 0);
        } else {
            rb[v] = make_float4(load_or_zero(B, k, c, K, N, N), load_or_zero(B, k, c + 1, K, N, N),
                                load_or_zero(B, k, c + 2, K, N, N), load_or_zero(B, k, c + 3, K, N, N));
        }
    }
}

__device__ __forceinline__ void btv_store(btv_tiles &s, int buffer, const float4 *ra, const float4 *rb)
{
#pragma unroll
    for (int v = 0; v < A_VECTORS; v++) {
        const int i = threadIdx.x + v * BTV_THREADS, r = i / (BK / 4), k = i % (BK / 4) * 4;
        s.a[buffer][k][r] = ra[v].x;
        s.a[buffer][k + 1][r] = ra[v].y;
        s.a[buffer][k + 2][r] = ra[v].z;
        s.a[buffer][k + 3][r] = ra[v].w;
    }
#pragma unroll
    for (int v = 0; v < B_VECTORS; v++) {
        const int i = threadIdx.x + v * BTV_THREADS, k = i / (BN / 4), c = i % (BN / 4) * 4;
        *reinterpret_cast<float4 *>(&s.b[buffer][k][c]) = rb[v];
    }
}

__device__ __forceinline__ void matmul_block_tiled_vectorized(const float *A, const float *B,
                                                              float *C, int M, int N, int K)
{
    __shared__ __align__(16) btv_tiles s;
    int row0, col0;
    block_tile(M, N, row0, col0);
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int tr = warp / WARP_COLS * 4 + lane / 8; // this thread's row of threads
    const int tc = warp % WARP_COLS * 8 + lane % 8; // and column
    const bool vector_rows = (K % 4 == 0) && (N % 4 == 0) &&
                             ((reinterpret_cast<size_t>(A) | reinterpret_cast<size_t>(B) |
                               reinterpret_cast<size_t>(C)) % 16 == 0);
    float acc[TM][TN] = {};
    float4 ra[A_VECTORS], rb[B_VECTORS];
    btv_fetch(ra, rb, A, B, M, N, K, row0, col0, 0, vector_rows);
    btv_store(s, 0, ra, rb);
    __syncthreads();
    const int tiles = (K + BK - 1) / BK;
    for (int t = 0; t < tiles; t++) {
        const int buffer = t % 2;
        if (t + 1 < tiles)
            btv_fetch(ra, rb, A, B, M, N, K, row0, col0, (t + 1) * BK, vector_rows);
#pragma unroll
        for (int k = 0; k < BK; k++) {
            float a[TM], b[TN];
#pragma unroll
            for (int g = 0; g < TM / 4; g++)
                *reinterpret_cast<float4 *>(&a[g * 4]) =
                    *reinterpret_cast<const float4 *>(&s.a[buffer][k][g * THREAD_ROWS * 4 + tr * 4]);
#pragma unroll
            for (int g = 0; g < TN / 4; g++)
                *reinterpret_cast<float4 *>(&b[g * 4]) =
                    *reinterpret_cast<const float4 *>(&s.b[buffer][k][g * THREAD_COLS * 4 + tc * 4]);
#pragma unroll
            for (int i = 0; i < TM; i++)
#pragma unroll
                for (int j = 0; j < TN; j++)
                    acc[i][j] += a[i] * b[j];
        }
        if (t + 1 < tiles)
            btv_store(s, buffer ^ 1, ra, rb);
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; i++) {
        const int r = row0 + i / 4 * THREAD_ROWS * 4 + tr * 4 + i % 4;
#pragma unroll
        for (int g = 0; g < TN / 4; g++) {
            const int c = col0 + g * THREAD_COLS * 4 + tc * 4;
            if (r >= M)
                continue;
            if (vector_rows && c < N) {
                *reinterpret_cast<float4 *>(C + (size_t)r * N + c) =
                    make_float4(acc[i][g * 4], acc[i][g * 4 + 1], acc[i][g * 4 + 2], acc[i][g * 4 + 3]);
            } else {
#pragma unroll
                for (int j = 0; j < 4; j++)
                    if (c + j < N)
                        C[(size_t)r * N + c + j] = acc[i][g * 4 + j];
            }
        }
    }
}

// mbarriers and TMA (sm_90; the tensor_core variant with load=tma, and wgmma): a barrier
// completes a phase when its arrivals and its expected bytes are in; waiters name the
// phase by its parity.
__device__ __forceinline__ void barrier_init(unsigned bar, unsigned count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void barrier_arrive(unsigned bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void barrier_expect_bytes(unsigned bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;"
                 ::"r"(bar), "r"(bytes) : "memory");
}

// Until the barrier's phase of this parity has completed.
__device__ __forceinline__ void barrier_wait(unsigned bar, unsigned parity)
{
    asm volatile("{\n\t.reg .pred done;\n"
                 "wait_%=:\n\t"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n\t"
                 "@!done bra wait_%=;\n}" ::"r"(bar), "r"(parity) : "memory");
}

__device__ __forceinline__ void tma_load(unsigned dst, const tensor_map *map, int x, int y,
                                         unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];"
                 ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(bar) : "memory");
}

// A tensor map (a kernel parameter) brought into the TMA's descriptor cache ahead of its use.
__device__ __forceinline__ void prefetch_tensor_map(const tensor_map *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
}

// The same as tma_load_2d from a 3-D map (the wgmma variants: z is the product of a batch).
__device__ __forceinline__ void tma_load_3d(unsigned dst, const tensor_map *map, int x, int y,
                                            int z, unsigned bar)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3, %4}], [%5];"
                 ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(z), "r"(bar) : "memory");
}

// Thread-block clusters (sm_90). A multicast TMA copy lands at the same offset in the shared
// memory of every block in cta_mask and completes bytes on each one's barrier at bar's offset.
__device__ __forceinline__ void tma_load_multicast(unsigned dst, const tensor_map *map, int x,
                                                   int y, int z, unsigned bar,
                                                   unsigned short cta_mask)
{
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3, %4}], [%5], %6;"
                 ::"r"(dst), "l"(map), "r"(x), "r"(y), "r"(z), "r"(bar), "h"(cta_mask)
                 : "memory");
}

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned rank;
    asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
    return rank;
}

// One arrival on the barrier at bar's offset in block `rank` of the cluster. The default
// (release at CTA scope) is enough to order this warp's finished reads of the stage before
// the TMA that refills it; a cluster-scope release per warp and stage measured 2.4x slower.
__device__ __forceinline__ void barrier_arrive_in(unsigned bar, unsigned rank)
{
    asm volatile("{\n\t.reg .b32 remote;\n\t"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n\t"
                 "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}"
                 ::"r"(bar), "r"(rank) : "memory");
}

// Every thread of every block of the cluster: barrier inits before, shared-memory traffic
// between the blocks after (a block must not exit while its peer may still write to it).
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}


// Step 7: tensor cores through mma.sync m16n8k8 with tf32 inputs (fp32 rounded to 10 mantissa
// bits, products accumulated in fp32). Warps own WM x WN tiles of C; tiles of A and B stream
// through STAGES shared buffers, so loads of later tiles overlap the mma of this one:
// - load=cp_async (the write-up's step, any sm_80+): every thread copies 16-byte pieces, rows
//   padded so that the fragment loads below are conflict-free, one block barrier per tile;
// - load=tma (sm_90): one thread asks the tensor memory accelerator for whole tiles, which
//   land swizzled (the swizzle, not padding, spreads a fragment load over the banks), and
//   mbarriers replace the block barrier: a warp waits for its tile only and releases the
//   stage when done with it. No load instructions are issued by the other 255 threads.
// A fragments come from ldmatrix, B fragments from 16-byte loads of interleaved columns.
// Warps across the block tile (1 where the variant is another, or a tile is smaller than a warp's).
enum : int { WARP_COLUMNS = BN >= WN ? BN / WN : 1 };
enum : int { TC_WARPS = VARIANT == VARIANT_TENSOR_CORE ? BM / WM * WARP_COLUMNS : 1 };
enum : int { TC_THREADS = TC_WARPS * 32, MT_TILES = WM / 16, NT_TILES = WN / 8 };
enum : int { TC_TMA = VARIANT == VARIANT_TENSOR_CORE && LOAD == LOAD_TMA };
// cp_async stages: A rows padded by 16 bytes, B rows by 32.
enum : int { A_PITCH = BK + 4, B_PITCH = BN + 8 };
// tma stages: A as BM rows of BK * 4 bytes, swizzled over that span (32, 64 or 128 bytes);
// B as BN / 32 boxes of BK rows of 32 columns (128 bytes, 128-byte swizzle).
enum : int { TMA_A_BYTES = BM * BK * 4, TMA_B_BOX_BYTES = BK * 128 };
enum : int { TC_STAGE_BYTES = TC_TMA ? (BM + BN) * BK * 4 : (BM * A_PITCH + BK * B_PITCH) * 4 };
enum : int { A_SWIZZLE = BK * 4 / 16 - 1 }; // the 16-byte-chunk bits the swizzle flips

__device__ __forceinline__ unsigned shared_address(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}


// 16 bytes from global to shared memory, or zeros where the source is outside the matrix.
__device__ __forceinline__ void copy16_async(void *dst, const void *src, bool inside)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;"
                 ::"r"(shared_address(dst)), "l"(src), "r"(inside ? 16 : 0) : "memory");
}

// load=cp_async: the tiles of A and B at k0 into a padded stage, one commit group.
__device__ __forceinline__ void tc_load_stage(char *stage, const float *A, const float *B, int M,
                                              int N, int K, int row0, int col0, int k0)
{
    float *as = reinterpret_cast<float *>(stage), *bs = as + BM * A_PITCH;
#pragma unroll
    for (int v = 0; v < BM * BK / 4 / TC_THREADS; v++) {
        const unsigned i = threadIdx.x + v * TC_THREADS, r = i / (BK / 4), k = i % (BK / 4) * 4;
        const bool inside = row0 + (int)r < M && k0 + (int)k < K;
        copy16_async(as + r * A_PITCH + k, inside ? A + (size_t)(row0 + (int)r) * K + k0 + k : A, inside);
    }
#pragma unroll
    for (int v = 0; v < BK * BN / 4 / TC_THREADS; v++) {
        const unsigned i = threadIdx.x + v * TC_THREADS, k = i / (BN / 4), c = i % (BN / 4) * 4;
        const bool inside = k0 + (int)k < K && col0 + (int)c < N;
        copy16_async(bs + k * B_PITCH + c, inside ? B + (size_t)(k0 + (int)k) * N + col0 + c : B, inside);
    }
    asm volatile("cp.async.commit_group;" ::: "memory");
}

// load=tma: the tiles of A and B at k0 into a stage, completing on barrier `full`. Elements
// outside the matrices arrive as zeros and still count towards the expected bytes.
__device__ __forceinline__ void tc_tma_stage(char *stage, unsigned full, const tensor_map *a_map,
                                             const tensor_map *b_map, int row0, int col0, int k0)
{
    const unsigned dst = shared_address(stage);
    barrier_expect_bytes(full, TC_STAGE_BYTES);
    tma_load(dst, a_map, k0, row0, full);
#pragma unroll
    for (int j = 0; j < BN / 32; j++)
        tma_load(dst + TMA_A_BYTES + j * TMA_B_BOX_BYTES, b_map, col0 + j * 32, k0, full);
}

// load=tma: element (row, col) of the stage's A tile lies at byte (row * BK + col) * 4, and
// (k row, col) of B in box col / 32 at k * 128 + col % 32 * 4; TMA's swizzle then flips each
// offset's 16-byte-chunk bits (4-6, as many as a row spans: A's BK * 4 bytes give 1, 2 or 3,
// B's 128 bytes 3) with the bits above its 128-byte line (the stages start 1024-byte
// aligned). For a fragment load that flip depends only on the thread's row modulo 8 (A's mma
// tiles are 16 rows apart, B's k steps 8), so each address is a base of the thread's plus
// (the chunk it wants XOR its flip) plus an immediate: one XOR per k step for A, none in the
// loop for B.
struct tc_swizzle {
    int a_row, a_chunk; // A: the thread's row bytes, and its flipped chunk at k = 0
    int b_row, b_chunk; // B: box and row t, and the flipped chunk of the thread's columns
};

__device__ __forceinline__ tc_swizzle tc_swizzle_of(int warp_row, int warp_col)
{
    const int lane = threadIdx.x % 32, q = lane / 8, t = lane % 4;
    tc_swizzle z;
    z.a_row = (warp_row * WM + q % 2 * 8 + lane % 8) * BK * 4;
    z.a_chunk = q / 2 * 16 ^ (z.a_row >> 7 & A_SWIZZLE) << 4; // lanes 16-31: k 4-7
    const int col = warp_col * WN + lane / 4 * NT_TILES;      // NT columns within one box
    z.b_row = TMA_A_BYTES + col / 32 * TMA_B_BOX_BYTES + t * 128;
    z.b_chunk = col % 32 * 4 ^ t << 4;
    return z;
}

// fp32 to tf32, rounded to nearest (ties away from zero, as cvt.rna): the tensor core reads
// only the top 19 bits, so adding half a unit of the 13 dropped bits is the whole rounding.
// One integer add, where cvt.rna.tf32.f32 costs a conversion-unit slot.
__device__ __forceinline__ unsigned to_tf32(float v)
{
    return __float_as_uint(v) + 0x1000u;
}

__device__ __forceinline__ void mma_tf32(float *d, const unsigned *a, const unsigned *b)
{
    asm("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
                 "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

// B fragments hold element (k = t, column g) of an 8 x 8 tile. Each warp's n tile n covers
// the columns n, n + NT, n + 2 NT, ... of its WN, so a thread's values for all NT tiles of one
// k row sit side by side: 16-byte loads (conflict-free: padding or swizzle puts the 4 k rows
// of a fragment in distinct banks) instead of NT single ones. C's columns come out permuted
// the same way, which the store undoes.
enum : int { B_VECTOR = NT_TILES % 4 == 0 ? 4 : NT_TILES % 2 == 0 ? 2 : 1 };

// Row k + t + 4 half of the stage's B tile (k: the k step, a multiple of 8).
__device__ __forceinline__ void load_b_row(unsigned (&b)[NT_TILES][2], int half, const char *stage,
                                           int k, int col, const tc_swizzle &z)
{
    const int t = threadIdx.x % 4;
#pragma unroll
    for (int n = 0; n < NT_TILES; n += B_VECTOR) {
        const char *at;
        if constexpr (TC_TMA) // z: box and row t, and t's flip; the half flips bit 6 too
            at = stage + z.b_row + (k + 4 * half) * 128 + (z.b_chunk ^ (half * 64 + n * 4));
        else // the padded B tile after the padded A tile
            at = reinterpret_cast<const char *>(reinterpret_cast<const float *>(stage) +
                                                BM * A_PITCH + (k + t + 4 * half) * B_PITCH +
                                                col + n);
        float v[B_VECTOR];
        if constexpr (B_VECTOR == 4)
            *reinterpret_cast<float4 *>(v) = *reinterpret_cast<const float4 *>(at);
        else if constexpr (B_VECTOR == 2)
            *reinterpret_cast<float2 *>(v) = *reinterpret_cast<const float2 *>(at);
        else
            v[0] = *reinterpret_cast<const float *>(at);
#pragma unroll
        for (int i = 0; i < B_VECTOR; i++)
            b[n + i][half] = to_tf32(v[i]);
    }
}

struct tc_fragments {
    unsigned a[MT_TILES][4], b[NT_TILES][2];
};

// The A (ldmatrix) and B (vector loads) fragments of k step k of the stage.
__device__ __forceinline__ void tc_load_fragments(tc_fragments &f, const char *stage, int k,
                                                  int warp_row, int warp_col, const tc_swizzle &z)
{
    const int lane = threadIdx.x % 32, g = lane / 4, q = lane / 8;
    const unsigned base = shared_address(stage);
#pragma unroll
    for (int m = 0; m < MT_TILES; m++) {
        // Lane l addresses row l % 8 of matrix l / 8: rows 0-7 | 8-15, k 0-3 | 4-7.
        const int row = warp_row * WM + m * 16 + q % 2 * 8 + lane % 8, col = k + q / 2 * 4;
        unsigned p;
        if constexpr (TC_TMA) // k * 4 is a multiple of 32: it leaves the flipped bits alone
            p = base + z.a_row + m * 16 * BK * 4 + (z.a_chunk ^ k * 4);
        else
            p = shared_address(reinterpret_cast<const float *>(stage) + row * A_PITCH + col);
        // Not volatile, so the scheduler may hoist it above earlier mma; the memory clobber
        // keeps it after the barrier that made the tile visible.
        asm("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
            : "=r"(f.a[m][0]), "=r"(f.a[m][1]), "=r"(f.a[m][2]), "=r"(f.a[m][3])
            : "r"(p) : "memory");
#pragma unroll
        for (int i = 0; i < 4; i++)
            f.a[m][i] = to_tf32(__uint_as_float(f.a[m][i]));
    }
    const int col = warp_col * WN + g * NT_TILES;
    load_b_row(f.b, 0, stage, k, col, z);
    load_b_row(f.b, 1, stage, k, col, z);
}

__device__ __forceinline__ void tc_mma_all(float (&acc)[MT_TILES][NT_TILES][4], const tc_fragments &f)
{
#pragma unroll
    for (int m = 0; m < MT_TILES; m++)
#pragma unroll
        for (int n = 0; n < NT_TILES; n++)
            mma_tf32(acc[m][n], f.a[m], f.b[n]);
}

// One BK slice of the stage in k steps of 8. With PREFETCH the fragments of step k + 8 are
// loaded before the mma of step k, so their shared-memory latency hides behind the mma.
__device__ __forceinline__ void tc_multiply_stage(float (&acc)[MT_TILES][NT_TILES][4],
                                                  const char *stage, int warp_row, int warp_col)
{
    const tc_swizzle z = tc_swizzle_of(warp_row, warp_col); // loop-invariant: hoisted
    if constexpr (PREFETCH) {
        tc_fragments f[2];
        tc_load_fragments(f[0], stage, 0, warp_row, warp_col, z);
#pragma unroll
        for (int k = 0; k < BK; k += 8) {
            if (k + 8 < BK)
                tc_load_fragments(f[(k / 8 + 1) % 2], stage, k + 8, warp_row, warp_col, z);
            tc_mma_all(acc, f[k / 8 % 2]);
        }
    } else {
#pragma unroll
        for (int k = 0; k < BK; k += 8) {
            tc_fragments f;
            tc_load_fragments(f, stage, k, warp_row, warp_col, z);
            tc_mma_all(acc, f);
        }
    }
}

// load=cp_async: the first STAGES - 1 tiles in flight (an empty group where there are fewer);
// each turn waits for its tile, then one barrier makes it visible to every warp and frees the
// buffer of the turn before, which then takes the tile STAGES - 1 ahead.
__device__ __forceinline__ void tc_pipeline_cp_async(float (&acc)[MT_TILES][NT_TILES][4],
                                                     char *stages, const float *A,
                                                     const float *B, int M, int N, int K,
                                                     int row0, int col0, int warp_row,
                                                     int warp_col)
{
    const int tiles = (K + BK - 1) / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles)
            tc_load_stage(stages + s * TC_STAGE_BYTES, A, B, M, N, K, row0, col0, s * BK);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
    }
    for (int t = 0; t < tiles; t++) {
        asm volatile("cp.async.wait_group %0;" ::"n"(STAGES - 2) : "memory");
        __syncthreads(); // tile t landed for every thread; tile t - 1's buffer is free
        const int next = t + STAGES - 1;
        if (next < tiles)
            tc_load_stage(stages + next % STAGES * TC_STAGE_BYTES, A, B, M, N, K, row0, col0, next * BK);
        else
            asm volatile("cp.async.commit_group;" ::: "memory");
        tc_multiply_stage(acc, stages + t % STAGES * TC_STAGE_BYTES, warp_row, warp_col);
    }
    asm volatile("cp.async.wait_group 0;" ::: "memory");
}

// load=tma: thread 0 fills all STAGES buffers, then refills each as soon as every warp has
// released it ("empty" barrier, one arrival per warp); a warp waits only on the "full"
// barrier of the tile it multiplies. Thread 0 thus waits for the slowest warp once per tile,
// which costs nothing once its warp is the slowest: the others run ahead within the stages.
__device__ __forceinline__ void tc_pipeline_tma(float (&acc)[MT_TILES][NT_TILES][4], char *stages,
                                                const tensor_map *a_map, const tensor_map *b_map,
                                                int K, int row0, int col0, int warp_row,
                                                int warp_col)
{
    __shared__ alignas(8) unsigned long long full[STAGES], empty[STAGES];
    const unsigned full0 = shared_address(full), empty0 = shared_address(empty);
    const int tiles = (K + BK - 1) / BK;
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; s++) {
            barrier_init(full0 + 8 * s, 1);
            barrier_init(empty0 + 8 * s, TC_WARPS);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        for (int s = 0; s < STAGES && s < tiles; s++)
            tc_tma_stage(stages + s * TC_STAGE_BYTES, full0 + 8 * s, a_map, b_map, row0, col0, s * BK);
    }
    __syncthreads();
    for (int t = 0; t < tiles; t++) {
        const int s = t % STAGES, refill = t - 1 + STAGES;
        if (threadIdx.x == 0 && t > 0 && refill < tiles) {
            const int r = (t - 1) % STAGES;
            barrier_wait(empty0 + 8 * r, (t - 1) / STAGES & 1);
            tc_tma_stage(stages + r * TC_STAGE_BYTES, full0 + 8 * r, a_map, b_map, row0, col0,
                         refill * BK);
        }
        barrier_wait(full0 + 8 * s, t / STAGES & 1);
        tc_multiply_stage(acc, stages + s * TC_STAGE_BYTES, warp_row, warp_col);
        __syncwarp(); // every lane's reads of the stage are done
        if (threadIdx.x % 32 == 0)
            barrier_arrive(empty0 + 8 * s);
    }
}

// Accumulator (row g [+8], tile column 2t [+1]) of n tile n is C column (2t [+1]) NT + n:
// for a fixed row the NT tiles give two runs of NT adjacent columns.
__device__ __forceinline__ void tc_store(const float (&acc)[MT_TILES][NT_TILES][4], float *C,
                                         int M, int N, int row0, int col0, int warp_row,
                                         int warp_col)
{
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
#pragma unroll
    for (int m = 0; m < MT_TILES; m++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int r = row0 + warp_row * WM + m * 16 + g + h * 8;
#pragma unroll
            for (int half = 0; half < 2; half++) {
                const int c = col0 + warp_col * WN + (2 * t + half) * NT_TILES;
                float v[NT_TILES];
#pragma unroll
                for (int n = 0; n < NT_TILES; n++)
                    v[n] = acc[m][n][h * 2 + half];
                if (r >= M)
                    continue;
#pragma unroll
                for (int n = 0; n < NT_TILES; n += B_VECTOR) {
                    if (c + n >= N) // N is a multiple of 4: a vector is wholly in or out
                        continue;
                    if constexpr (B_VECTOR == 4)
                        *reinterpret_cast<float4 *>(C + (size_t)r * N + c + n) = *reinterpret_cast<float4 *>(v + n);
                    else if constexpr (B_VECTOR == 2)
                        *reinterpret_cast<float2 *>(C + (size_t)r * N + c + n) = *reinterpret_cast<float2 *>(v + n);
                    else
                        C[(size_t)r * N + c + n] = v[n];
                }
            }
        }
}

__device__ __forceinline__ void matmul_tensor_core(const float *A, const float *B, float *C,
                                                   int M, int N, int K, const tensor_map *a_map,
                                                   const tensor_map *b_map)
{
    extern __shared__ __align__(16) unsigned char tc_smem[];
    int row0, col0;
    block_tile(M, N, row0, col0);
    const int warp = threadIdx.x / 32, warp_row = warp / WARP_COLUMNS, warp_col = warp % WARP_COLUMNS;
    float acc[MT_TILES][NT_TILES][4] = {};
    if constexpr (TC_TMA) {
        // The swizzle repeats every 1024 bytes: align the stages to it.
        char *stages = reinterpret_cast<char *>(tc_smem) + ((1024 - (shared_address(tc_smem) & 1023)) & 1023);
        tc_pipeline_tma(acc, stages, a_map, b_map, K, row0, col0, warp_row, warp_col);
    } else {
        tc_pipeline_cp_async(acc, reinterpret_cast<char *>(tc_smem), A, B, M, N, K, row0, col0,
                             warp_row, warp_col);
    }
    tc_store(acc, C, M, N, row0, col0, warp_row, warp_col);
}

// Beyond the write-up: Hopper's warpgroup MMA (the variants wgmma, wgmma_tf32 and wgmma_fp8).
// One producer warpgroup (one thread of it) streams BM rows x 128 bytes of K of A and N x 128
// bytes of K of B into STAGES shared buffers with TMA, 128-byte swizzled, each stage completing
// on a "full" mbarrier; the consumer warpgroups each multiply their BM / CONSUMERS rows with
// wgmma (A K-major; B N-major or K-major; both read from shared memory through descriptors)
// and release the stage on its "empty" mbarrier. The register file is re-split: the producer
// needs few, the accumulators many (setmaxnreg). With sched=persistent a block per SM loops
// over tiles: its producer runs on into the next tile's stages while the consumers store this
// one, and with store=tma the TMA writes C out of shared memory while the next tile is
// multiplied. With sched=pingpong the two consumers take whole tiles in turn instead of
// splitting each, so one stores while the other multiplies (wg_turn_*).
enum : int { WG_CONSUMERS = WG_FAMILY ? CONSUMERS : 1 };
enum : int { WG_THREADS = 128 * (WG_CONSUMERS + 1) };
// sched=pingpong: each consumer takes every other tile of the block's sequence whole (BM rows).
enum : int { WG_PINGPONG = WG_FAMILY && SCHED == SCHED_PINGPONG };
enum : int { WG_MT = WG_PINGPONG ? BM / 64 : BM >= 64 * WG_CONSUMERS ? BM / (64 * WG_CONSUMERS) : 1 }; // m64 tiles each
// An input element's bytes: tf32 4, bf16/f16 2, fp8 1. A stage holds one 128-byte swizzle span
// of K per row (WG_BK elements), one wgmma instruction 32 bytes of it (WG_K: k8, k16 or k32).
enum : int { IN_BYTES = VARIANT == VARIANT_WGMMA_TF32 ? 4 : VARIANT == VARIANT_WGMMA_FP8 ? 1 : 2 };
enum : int { WG_BK = 128 / IN_BYTES, WG_K = 32 / IN_BYTES, B_BOXES = (WG_N + 63) / 64 };
// B in a stage: b_layout=kn (N-major, 16-bit only) as boxes of 64 k rows x 64 columns; nk
// (K-major) as N rows (columns of C) x 128 bytes of K, which stack up like A's rows: a box per
// block of the cluster, N / CLUSTER rows each (N = 176 alone loads 176 rows, not three 64-row
// boxes' 192; in a cluster of two each block 88 and multicasts them), where that is whole
// 8-row swizzle atoms; else one box of N rows where N is less than 64 (swap=1's few rows of A:
// 8, not 64), or boxes of 64 rows. A cluster's blocks load box j where j % CLUSTER is their rank.
// swap=1 multiplies B^T A^T: its second operand, A, is K-major whatever b_layout says, and its
// first, B, is N-major with b_layout=kn (16-bit only): stored as B is there, 64-column boxes of
// 64 k rows, read through wgmma's transposed A.
enum : int { B_K_MAJOR = WG_FAMILY && (B_LAYOUT == B_LAYOUT_NK || SWAP) };
enum : int { A_MN_MAJOR = WG_FAMILY && SWAP && B_LAYOUT == B_LAYOUT_KN };
enum : int { B_SHARED_OUT = B_K_MAJOR && WG_N % (8 * CLUSTER_SIZE) == 0 };
enum : int {
    B_BOX_ROWS = B_SHARED_OUT ? WG_N / CLUSTER_SIZE : B_K_MAJOR && WG_N < 64 ? WG_N : 64,
    B_LOADS = B_SHARED_OUT ? CLUSTER_SIZE : B_K_MAJOR && WG_N < 64 ? 1 : B_BOXES
};
enum : int { A_STAGE_BYTES = BM * 128, B_STAGE_BYTES = B_LOADS * B_BOX_ROWS * 128 };
enum : int { STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES };
enum : int { WG_ACC = WG_N / 2 };
enum : int { WG_PERSISTENT = WG_FAMILY && SCHED != SCHED_GRID };
// store=tma: a consumer's rows of C wait in shared memory (after the stages) as boxes of 64 rows
// x C_SPAN bytes, swizzled over that span, for the TMA to store: 128 bytes where the tile's row
// is a whole number of them, else 64 or 32 (N = 112 of bf16: seven boxes of 32 bytes), as the
// op's map of C has them (pj_matmul_c_span).
enum : int { WG_TMA_STORE = WG_FAMILY && STORE == STORE_TMA };
enum : int { OUT_BYTES = OUT_ID == OUT_F32 ? 4 : 2 };
enum : int { C_SPAN = WG_N * OUT_BYTES % 128 == 0 ? 128 : WG_N * OUT_BYTES % 64 == 0 ? 64 : 32 };
enum : int { C_BOX_COLS = C_SPAN / OUT_BYTES, C_BOX_BYTES = 64 * C_SPAN };
enum : int { C_BOXES = WG_N % C_BOX_COLS == 0 ? WG_N / C_BOX_COLS : 1 };
// Ping-pong consumers store their tiles in turn through one buffer of 64 rows, a part of the
// tile at a time (each store overlaps the other consumer's k loop, so waiting for the TMA to
// read a part costs little, and the stages get the room: 128 x 176 holds five); cooperative
// consumers each have a buffer for all their rows.
enum : int { C_PARTS = WG_PINGPONG ? WG_MT : 1 };
enum : int { C_TILE_BYTES = WG_MT / C_PARTS * C_BOXES * C_BOX_BYTES }; // one consumer's
enum : int { C_BUFFERS = WG_PINGPONG ? 1 : WG_CONSUMERS };

// A shared-memory matrix descriptor with the 128-byte swizzle, as two words: the low one, the
// start address and the leading byte offset (each in units of 16 bytes), which the k loop adds
// to; the high one, the stride (1024 bytes: an 8-row swizzle atom, for every operand here) and
// the swizzle.
__device__ __forceinline__ unsigned descriptor_low(unsigned address, unsigned leading)
{
    return (address & 0x3ffff) >> 4 | (leading >> 4) << 16;
}

__device__ __forceinline__ unsigned long long descriptor_of(unsigned low)
{
    return (unsigned long long)((1024 >> 4) | 1u << 30) << 32 | low;
}

// ---- generated by src/tools/wgmma_table.py: do not edit by hand ----
#define R4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define WGMMA_CASES(SHAPE_K, TYPES, SCALE_D, IMMEDIATES) \
    if constexpr (N == 8) asm volatile("wgmma.mma_async.sync.aligned.m64n8" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3}, %4, %5, " SCALE_D ", " IMMEDIATES ";" : R4(0) : "l"(a), "l"(b)); \
    if constexpr (N == 16) asm volatile("wgmma.mma_async.sync.aligned.m64n16" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7}, %8, %9, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4) : "l"(a), "l"(b)); \
    if constexpr (N == 24) asm volatile("wgmma.mma_async.sync.aligned.m64n24" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11}, %12, %13, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8) : "l"(a), "l"(b)); \
    if constexpr (N == 32) asm volatile("wgmma.mma_async.sync.aligned.m64n32" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, %16, %17, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12) : "l"(a), "l"(b)); \
    if constexpr (N == 40) asm volatile("wgmma.mma_async.sync.aligned.m64n40" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19}, %20, %21, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16) : "l"(a), "l"(b)); \
    if constexpr (N == 48) asm volatile("wgmma.mma_async.sync.aligned.m64n48" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23}, %24, %25, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20) : "l"(a), "l"(b)); \
    if constexpr (N == 56) asm volatile("wgmma.mma_async.sync.aligned.m64n56" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27}, %28, %29, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24) : "l"(a), "l"(b)); \
    if constexpr (N == 64) asm volatile("wgmma.mma_async.sync.aligned.m64n64" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28) : "l"(a), "l"(b)); \
    if constexpr (N == 72) asm volatile("wgmma.mma_async.sync.aligned.m64n72" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35}, %36, %37, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32) : "l"(a), "l"(b)); \
    if constexpr (N == 80) asm volatile("wgmma.mma_async.sync.aligned.m64n80" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}, %40, %41, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36) : "l"(a), "l"(b)); \
    if constexpr (N == 88) asm volatile("wgmma.mma_async.sync.aligned.m64n88" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43}, %44, %45, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40) : "l"(a), "l"(b)); \
    if constexpr (N == 96) asm volatile("wgmma.mma_async.sync.aligned.m64n96" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47}, %48, %49, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44) : "l"(a), "l"(b)); \
    if constexpr (N == 104) asm volatile("wgmma.mma_async.sync.aligned.m64n104" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51}, %52, %53, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48) : "l"(a), "l"(b)); \
    if constexpr (N == 112) asm volatile("wgmma.mma_async.sync.aligned.m64n112" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55}, %56, %57, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52) : "l"(a), "l"(b)); \
    if constexpr (N == 120) asm volatile("wgmma.mma_async.sync.aligned.m64n120" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59}, %60, %61, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56) : "l"(a), "l"(b)); \
    if constexpr (N == 128) asm volatile("wgmma.mma_async.sync.aligned.m64n128" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60) : "l"(a), "l"(b)); \
    if constexpr (N == 136) asm volatile("wgmma.mma_async.sync.aligned.m64n136" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67}, %68, %69, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64) : "l"(a), "l"(b)); \
    if constexpr (N == 144) asm volatile("wgmma.mma_async.sync.aligned.m64n144" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71}, %72, %73, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68) : "l"(a), "l"(b)); \
    if constexpr (N == 152) asm volatile("wgmma.mma_async.sync.aligned.m64n152" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75}, %76, %77, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72) : "l"(a), "l"(b)); \
    if constexpr (N == 160) asm volatile("wgmma.mma_async.sync.aligned.m64n160" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79}, %80, %81, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76) : "l"(a), "l"(b)); \
    if constexpr (N == 168) asm volatile("wgmma.mma_async.sync.aligned.m64n168" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83}, %84, %85, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80) : "l"(a), "l"(b)); \
    if constexpr (N == 176) asm volatile("wgmma.mma_async.sync.aligned.m64n176" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}, %88, %89, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84) : "l"(a), "l"(b)); \
    if constexpr (N == 184) asm volatile("wgmma.mma_async.sync.aligned.m64n184" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91}, %92, %93, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88) : "l"(a), "l"(b)); \
    if constexpr (N == 192) asm volatile("wgmma.mma_async.sync.aligned.m64n192" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95}, %96, %97, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92) : "l"(a), "l"(b)); \
    if constexpr (N == 200) asm volatile("wgmma.mma_async.sync.aligned.m64n200" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99}, %100, %101, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96) : "l"(a), "l"(b)); \
    if constexpr (N == 208) asm volatile("wgmma.mma_async.sync.aligned.m64n208" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103}, %104, %105, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96), R4(100) : "l"(a), "l"(b)); \
    if constexpr (N == 216) asm volatile("wgmma.mma_async.sync.aligned.m64n216" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107}, %108, %109, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96), R4(100), R4(104) : "l"(a), "l"(b)); \
    if constexpr (N == 224) asm volatile("wgmma.mma_async.sync.aligned.m64n224" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111}, %112, %113, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96), R4(100), R4(104), R4(108) : "l"(a), "l"(b)); \
    if constexpr (N == 232) asm volatile("wgmma.mma_async.sync.aligned.m64n232" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115}, %116, %117, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96), R4(100), R4(104), R4(108), R4(112) : "l"(a), "l"(b)); \
    if constexpr (N == 240) asm volatile("wgmma.mma_async.sync.aligned.m64n240" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119}, %120, %121, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96), R4(100), R4(104), R4(108), R4(112), R4(116) : "l"(a), "l"(b)); \
    if constexpr (N == 248) asm volatile("wgmma.mma_async.sync.aligned.m64n248" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123}, %124, %125, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96), R4(100), R4(104), R4(108), R4(112), R4(116), R4(120) : "l"(a), "l"(b)); \
    if constexpr (N == 256) asm volatile("wgmma.mma_async.sync.aligned.m64n256" SHAPE_K ".f32." TYPES " {%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127}, %128, %129, " SCALE_D ", " IMMEDIATES ";" : R4(0), R4(4), R4(8), R4(12), R4(16), R4(20), R4(24), R4(28), R4(32), R4(36), R4(40), R4(44), R4(48), R4(52), R4(56), R4(60), R4(64), R4(68), R4(72), R4(76), R4(80), R4(84), R4(88), R4(92), R4(96), R4(100), R4(104), R4(108), R4(112), R4(116), R4(120), R4(124) : "l"(a), "l"(b)); \
    static_assert(N % 8 == 0 && N >= 8 && N <= 256, "wgmma m64nNkK: N = 8, 16, ..., 256");
// ---- end of generated wrappers ----

// The instruction of the variant: m64nNk16 for bf16/f16 (imm-trans-b 1 reads B N-major, 0
// K-major; imm-trans-a 1 reads A M-major, swap=1's B given kn), m64nNk8 for tf32 and m64nNk32
// for fp8, whose operands are K-major only. SCALE_D "1" adds the product to the accumulators,
// "0" overwrites them (a tile's first k step).
#define WGMMA_OF_VARIANT(SCALE_D) \
    if constexpr (VARIANT == VARIANT_WGMMA_TF32) { \
        WGMMA_CASES("k8", "tf32.tf32", SCALE_D, "1, 1") \
    } else if constexpr (VARIANT == VARIANT_WGMMA_FP8 && FP8 == FP8_E5M2) { \
        WGMMA_CASES("k32", "e5m2.e5m2", SCALE_D, "1, 1") \
    } else if constexpr (VARIANT == VARIANT_WGMMA_FP8) { \
        WGMMA_CASES("k32", "e4m3.e4m3", SCALE_D, "1, 1") \
    } else if constexpr (DTYPE_ID == DTYPE_BF16 && A_MN_MAJOR) { \
        WGMMA_CASES("k16", "bf16.bf16", SCALE_D, "1, 1, 1, 0") \
    } else if constexpr (A_MN_MAJOR) { \
        WGMMA_CASES("k16", "f16.f16", SCALE_D, "1, 1, 1, 0") \
    } else if constexpr (DTYPE_ID == DTYPE_BF16 && B_K_MAJOR) { \
        WGMMA_CASES("k16", "bf16.bf16", SCALE_D, "1, 1, 0, 0") \
    } else if constexpr (DTYPE_ID == DTYPE_BF16) { \
        WGMMA_CASES("k16", "bf16.bf16", SCALE_D, "1, 1, 0, 1") \
    } else if constexpr (B_K_MAJOR) { \
        WGMMA_CASES("k16", "f16.f16", SCALE_D, "1, 1, 0, 0") \
    } else { \
        WGMMA_CASES("k16", "f16.f16", SCALE_D, "1, 1, 0, 1") \
    }

template <int N, bool ADD>
__device__ __forceinline__ void wgmma(float *d, unsigned long long a, unsigned long long b)
{
    if constexpr (ADD) {
        WGMMA_OF_VARIANT("1")
    } else {
        WGMMA_OF_VARIANT("0")
    }
}

// A place in the ring of stages: the stage and the parity of its barriers' current phase. The
// producer and the consumers walk the same sequence of stages through all the block's tiles.
struct wg_ring {
    unsigned stage, phase;
    __device__ __forceinline__ void advance()
    {
        if (++stage == STAGES) {
            stage = 0;
            phase ^= 1;
        }
    }
    // n places on at once (a ping-pong consumer passing over the other's tile): the phase
    // flips once per lap of the ring.
    __device__ __forceinline__ void skip(unsigned n)
    {
        const unsigned at = stage + n;
        stage = at % STAGES;
        phase ^= at / STAGES & 1;
    }
};

// Where the products lie (ptxjit_matmul_strided): `batch` products of M x N; C's rows ldc
// elements apart, its matrices c_stride apart. A's and B's maps are 3-D, a matrix per product
// where a_step (b_step) is 1; where it is 0 every product reads the one matrix.
struct matmul_layout {
    long long c_stride;
    int ldc, batch, a_step, b_step;
    float *partials;     // splits > 1: the parts' fp32 sums (the op's workspace)
    unsigned *arrivals;  // splits > 1: parts arrived per tile and consumer, left at zero
    // sched=gemv, which reads A and B through the pointers: elements between products (0: one
    // matrix for all), between rows, and B's rows (C's columns: N may be padded past them).
    long long a_stride, b_stride, lda, ldb;
    int b_rows;
};

// Split-K: a tile's K loop in parts (at most SPLITS, none empty: 5 k tiles in 4 parts run as
// 2, 2, 1), each part a unit of the blocks' sequence; a tile's parts are adjacent in it, so
// they run side by side and the last one waits little.
enum : int { WG_SPLITS = WG_FAMILY ? SPLITS : 1 };

// The block's tiles, in the raster order of tile_origin, product after product: sched=grid
// the one of its index; persistent, from its (cluster's) index on, every gridDim-th.
struct wg_tiles {
    unsigned first, count, step, per_product, parts, k_per_part;
};

__device__ __forceinline__ wg_tiles wg_tiles_of(int M, int N, int batch, int k_tiles)
{
    const unsigned rows = BM * CLUSTER_SIZE;
    const unsigned per = ((unsigned)M + rows - 1) / rows * (((unsigned)N + WG_N - 1) / WG_N);
    unsigned parts = 1, k_per_part = (unsigned)k_tiles;
    if constexpr (WG_SPLITS > 1) { // the host counts the units the same way (split_parts)
        const unsigned most = (unsigned)k_tiles < WG_SPLITS ? (unsigned)k_tiles : WG_SPLITS;
        k_per_part = ((unsigned)k_tiles + most - 1) / most;
        parts = ((unsigned)k_tiles + k_per_part - 1) / k_per_part;
    }
    const unsigned count = per * (unsigned)batch * parts; // the host keeps it under 2^31
    return {blockIdx.x / CLUSTER_SIZE, count, WG_PERSISTENT ? gridDim.x / CLUSTER_SIZE : count,
            per, parts, k_per_part};
}

// Unit t of the block's sequence: part `part` of tile `tile` (counted over the batch), its
// origin in its product's C, that product, and the part's k tiles [k_begin, k_end).
struct wg_unit {
    unsigned tile, part;
    int product, row0, col0, k_begin, k_end;
};

__device__ __forceinline__ wg_unit wg_unit_of(const wg_tiles &tiles, unsigned t, int M, int N,
                                              int k_tiles)
{
    wg_unit u;
    u.tile = t / tiles.parts;
    u.part = t - u.tile * tiles.parts;
    u.product = (int)(u.tile / tiles.per_product);
    tile_origin(u.tile - (unsigned)u.product * tiles.per_product, M, N, u.row0, u.col0);
    u.k_begin = (int)(u.part * tiles.k_per_part);
    u.k_end = min(k_tiles, u.k_begin + (int)tiles.k_per_part);
    return u;
}

// The producer: one thread keeps STAGES loads of A and B in flight, tile after tile. In a
// cluster, block r loads B boxes r, r + CLUSTER, ... for every block of the cluster
// (multicast), so a stage is refilled only once the consumers of every block have released it.
// A fresh barrier's phase "before" the first counts as complete, so the first round of stages
// waits for nothing (parity phase ^ 1).
__device__ __forceinline__ void wg_produce(char *stages, unsigned full0, unsigned empty0,
                                           const tensor_map *a_map, const tensor_map *b_map,
                                           int M, int N, int k_tiles, const matmul_layout &layout)
{
    const unsigned rank = CLUSTER_SIZE > 1 ? cluster_rank() : 0;
    const wg_tiles tiles = wg_tiles_of(M, N, layout.batch, k_tiles);
    wg_ring ring = {0, 0};
    for (unsigned t = tiles.first; t < tiles.count; t += tiles.step) {
        const wg_unit u = wg_unit_of(tiles, t, M, N, k_tiles);
        const int row0 = u.row0, col0 = u.col0;
        const int za = u.product * layout.a_step, zb = u.product * layout.b_step;
#pragma unroll 1
        for (int kt = u.k_begin; kt < u.k_end; kt++, ring.advance()) {
            barrier_wait(empty0 + 8 * ring.stage, ring.phase ^ 1);
            const unsigned full = full0 + 8 * ring.stage;
            const unsigned a = shared_address(stages + ring.stage * STAGE_BYTES);
            barrier_expect_bytes(full, STAGE_BYTES); // A, and all of B from whichever block loads it
            if constexpr (A_MN_MAJOR) {
#pragma unroll
                for (int j = 0; j < BM / 64; j++)
                    tma_load_3d(a + j * 64 * 128, a_map, row0 + j * 64, kt * WG_BK, za, full);
            } else {
                tma_load_3d(a, a_map, kt * WG_BK, row0, za, full);
            }
#pragma unroll
            for (int j = 0; j < B_LOADS; j++) {
                const unsigned b = a + A_STAGE_BYTES + j * B_BOX_ROWS * 128;
                const int x = B_K_MAJOR ? kt * WG_BK : col0 + j * 64;
                const int y = B_K_MAJOR ? col0 + j * B_BOX_ROWS : kt * WG_BK;
                if constexpr (CLUSTER_SIZE == 1)
                    tma_load_3d(b, b_map, x, y, zb, full);
                else if (j % CLUSTER_SIZE == (int)rank)
                    tma_load_multicast(b, b_map, x, y, zb, full, (1u << CLUSTER_SIZE) - 1);
            }
        }
    }
}

// A consumer warp's arrival on the stage's "empty" barrier (of every block of the cluster: each
// block's producer writes into this stage).
__device__ __forceinline__ void wg_release(unsigned empty0, unsigned stage)
{
    if (threadIdx.x % 32 == 0) {
        if constexpr (CLUSTER_SIZE == 1) {
            barrier_arrive(empty0 + 8 * stage);
        } else {
#pragma unroll
            for (int r = 0; r < CLUSTER_SIZE; r++)
                barrier_arrive_in(empty0 + 8 * stage, r);
        }
    }
}

// A consumer's m-th tile of 64 rows within the block's tile: cooperative consumers split the
// rows, a ping-pong one has them all.
__device__ __forceinline__ int wg_row_tile(int consumer, int m)
{
    return WG_PINGPONG ? m : consumer * WG_MT + m;
}

// The wgmma writes the accumulators asynchronously, until wgmma.wait_group says it is done:
// this keeps the compiler from moving other accesses to them across that point.
__device__ __forceinline__ void wg_fence_accumulators(float (&acc)[WG_MT][WG_ACC])
{
#pragma unroll
    for (int m = 0; m < WG_MT; m++)
#pragma unroll
        for (int i = 0; i < WG_ACC; i++)
            asm volatile("" : "+f"(acc[m][i])::"memory");
}

// One stage's wgmma, issued once its data is in and committed as one group: the WG_BK / WG_K
// k steps of each of the consumer's row tiles. ADD false: the tile's first stage, whose first
// k step overwrites the accumulators (scale-d 0), so they need no zeroing. a0 and b0 are the
// descriptors' low words at the first stage (wg_consume).
template <bool ADD>
__device__ __forceinline__ void wg_issue_stage(float (&acc)[WG_MT][WG_ACC], unsigned a0,
                                               unsigned b0, unsigned full0, int consumer,
                                               const wg_ring &ring)
{
    barrier_wait(full0 + 8 * ring.stage, ring.phase);
    const unsigned stage = ring.stage * (STAGE_BYTES / 16), a = a0 + stage, b = b0 + stage;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int k = 0; k < WG_BK / WG_K; k++)
#pragma unroll
        for (int m = 0; m < WG_MT; m++) {
            const unsigned long long da = descriptor_of(
                a + (wg_row_tile(consumer, m) * 64 * 128 + (A_MN_MAJOR ? k * 16 * 128 : k * 32)) /
                        16);
            const unsigned long long db =
                descriptor_of(b + (B_K_MAJOR ? k * 32 : k * 16 * 128) / 16);
            if (ADD || k > 0)
                wgmma<WG_N, true>(acc[m], da, db);
            else
                wgmma<WG_N, false>(acc[m], da, db);
        }
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// A consumer's tile: its WG_MT row tiles of 64 times the stage's B, 4 wgmma k steps of 32 bytes
// per stage. A tile rows are 128 bytes, 8-row swizzle atoms 1024 bytes apart. B N-major is
// stored as 64-column boxes of 64 k rows (8 KiB each), so k atoms are 1024 bytes apart and
// column atoms 8 KiB; B K-major as N rows of 128 bytes, like A (swap=1 with b_layout=kn: A is
// B, N-major, each 64-row tile one such box, and B is A, K-major). One group of wgmma stays in
// flight while the next stage's are issued: the stage of the group before is released once
// wgmma.wait_group 1 says that group is done. Returns the stage of the last group, still in
// flight (wg_drain waits for it). k_tiles is at least 1 (the host refuses K = 0, and a split's
// parts are never empty): the first stage is issued whatever it is.
__device__ __forceinline__ unsigned wg_consume(float (&acc)[WG_MT][WG_ACC], char *stages,
                                               unsigned full0, unsigned empty0, int consumer,
                                               int k_tiles, wg_ring &ring)
{
    // The descriptors' low words at the first stage: a stage's, and each instruction's in it,
    // are those plus the byte offset / 16 (shared memory lies below 256 KiB, so the sum never
    // carries out of the address field). Built afresh for each instruction, descriptors took
    // about 15 SASS instructions between two wgmma (128 x 176 fp8); added to, with the
    // warpgroup warp-uniform (matmul_wgmma), 2 to 4 uniform adds and moves.
    const unsigned first = shared_address(stages);
    const unsigned a0 = descriptor_low(first, A_MN_MAJOR ? 64 * 128 : 16);
    const unsigned b0 = descriptor_low(first + A_STAGE_BYTES, B_K_MAJOR ? 16 : 64 * 128);
    // The first stage apart (every part of a tile has one): its first k step sets the
    // accumulators, which the fence keeps the compiler from touching before it. A branch in
    // the loop instead would make ptxas close each group with an extra wgmma.
    wg_fence_accumulators(acc);
    unsigned held = ring.stage; // the stage of the group in flight
    wg_issue_stage<false>(acc, a0, b0, full0, consumer, ring);
    ring.advance();
    // Not unrolled (nor the producer's loop): NVVM unrolled both by 2 to 4, which doubled the
    // kernel (1320 SASS instructions against 736) and NVRTC's compile (475 -> 260 ms on the dev
    // machine) for no speed: the loop waits on barriers and wgmma groups, not on its own
    // instructions (H100, 3 machines, 7 shapes and tf32/fp8: the same GFLOP/s within noise).
#pragma unroll 1
    for (int kt = 1; kt < k_tiles; kt++) {
        wg_issue_stage<true>(acc, a0, b0, full0, consumer, ring);
        asm volatile("wgmma.wait_group.sync.aligned 1;" ::: "memory");
        wg_release(empty0, held);
        held = ring.stage;
        ring.advance();
    }
    return held;
}

// The last group of a tile done, its stage released: the accumulators hold the tile's sums.
__device__ __forceinline__ void wg_drain(float (&acc)[WG_MT][WG_ACC], unsigned empty0,
                                         unsigned held)
{
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    wg_fence_accumulators(acc);
    wg_release(empty0, held);
}

// The epilogue's launch values (ptxjit_matmul_ex): alpha (times wgmma_fp8's a_scale * b_scale,
// folded on the host), beta, and the bias vector of N floats.
struct matmul_epilogue {
    float alpha, beta;
    const float *bias;
};

enum : int { WG_SCALED = WG_FAMILY && (ALPHA == ALPHA_SCALED || VARIANT == VARIANT_WGMMA_FP8) };
enum : int { WG_BETA = WG_FAMILY && BETA == BETA_SCALED, WG_BIAS = WG_FAMILY && BIAS == BIAS_COLUMN };
enum : int { WG_RELU = WG_FAMILY && ACT == ACT_RELU, WG_GELU = WG_FAMILY && ACT == ACT_GELU };

// GELU in its tanh form: 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
__device__ __forceinline__ float gelu(float x)
{
    return 0.5f * x * (1.0f + tanhf(0.7978845608028654f * fmaf(0.044715f * x, x * x, x)));
}

// C's elements at, at + 1 (before this call's store) as floats.
__device__ __forceinline__ float2 load_c_pair(const TO *C, size_t at)
{
    if constexpr (OUT_ID == OUT_F32) {
        return *reinterpret_cast<const float2 *>(C + at);
    } else {
        const unsigned bits = *reinterpret_cast<const unsigned *>(C + at);
        if constexpr (OUT_ID == OUT_BF16)
            return make_float2(__uint_as_float(bits << 16), __uint_as_float(bits & 0xffff0000u));
        float x, y;
        asm("{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, %2;\n\t"
            "cvt.f32.f16 %0, lo;\n\tcvt.f32.f16 %1, hi;\n}" : "=f"(x), "=f"(y) : "r"(bits));
        return make_float2(x, y);
    }
}

// C's element at as a float.
__device__ __forceinline__ float load_c_one(const TO *C, size_t at)
{
    if constexpr (OUT_ID == OUT_F32) {
        return *reinterpret_cast<const float *>(C + at);
    } else {
        const unsigned short bits = *reinterpret_cast<const unsigned short *>(C + at);
        if constexpr (OUT_ID == OUT_BF16)
            return __uint_as_float((unsigned)bits << 16);
        float x;
        asm("cvt.f32.f16 %0, %1;" : "=f"(x) : "h"(bits));
        return x;
    }
}

// swap=1: the kernel's product is C's transpose (its M is C's columns, its N C's rows).
enum : int { WG_SWAP = WG_FAMILY && SWAP };

// Where element (r, c) of the kernel's product lies in C, whose rows are ldc elements apart:
// C's (r, c), or with swap=1 C's (c, r).
__device__ __forceinline__ size_t c_index(int r, int c, int ldc)
{
    return WG_SWAP ? (size_t)c * ldc + r : (size_t)r * ldc + c;
}

// act(alpha x + beta old + bias[j]) for one output in column j of C, old the value C held
// there (read only with beta).
__device__ __forceinline__ float wg_terms(float x, float old, int j, const matmul_epilogue &ep)
{
    if constexpr (WG_SCALED)
        x *= ep.alpha;
    if constexpr (WG_BETA)
        x = fmaf(ep.beta, old, x);
    if constexpr (WG_BIAS)
        x += __ldg(ep.bias + j);
    if constexpr (WG_RELU)
        x = fmaxf(x, 0.0f);
    else if constexpr (WG_GELU)
        x = gelu(x);
    return x;
}

// The epilogue for the pair at (r, c) and (r, c + 1) of the kernel's product: C's pair read in
// one load (swap=1: two, from two rows of C, both of C's column r).
__device__ __forceinline__ void wg_epilogue(float &x, float &y, const TO *C, int r, int c, int ldc,
                                            const matmul_epilogue &ep)
{
    float2 old = make_float2(0.0f, 0.0f);
    if constexpr (WG_BETA && WG_SWAP)
        old = make_float2(load_c_one(C, c_index(r, c, ldc)), load_c_one(C, c_index(r, c + 1, ldc)));
    else if constexpr (WG_BETA)
        old = load_c_pair(C, (size_t)r * ldc + c);
    x = wg_terms(x, old.x, WG_SWAP ? r : c, ep);
    y = wg_terms(y, old.y, WG_SWAP ? r : c + 1, ep);
}

// One output alone (an odd N's last column): its epilogue, reading neither C nor the bias
// past N.
__device__ __forceinline__ void wg_epilogue_one(float &x, const TO *C, int r, int c, int ldc,
                                                const matmul_epilogue &ep)
{
    float old = 0.0f;
    if constexpr (WG_BETA)
        old = load_c_one(C, c_index(r, c, ldc));
    x = wg_terms(x, old, WG_SWAP ? r : c, ep);
}

// Two outputs rounded to 16 bits in one register, the first in the lower half.
__device__ __forceinline__ unsigned pack_pair(float x, float y)
{
    unsigned packed; // cvt puts its first operand in the upper half
    if constexpr (OUT_ID == OUT_BF16)
        asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(y), "f"(x));
    else
        asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(packed) : "f"(y), "f"(x));
    return packed;
}

// x into C's element at, rounded to C's type.
__device__ __forceinline__ void put_one(TO *C, size_t at, float x)
{
    if constexpr (OUT_ID == OUT_F32)
        *reinterpret_cast<float *>(C + at) = x;
    else
        *reinterpret_cast<unsigned short *>(C + at) = (unsigned short)(pack_pair(x, 0.0f) & 0xffffu);
}

// Elements (r, c) and (r, c + 1) of the kernel's product: the epilogue on the pair of sums x,
// y, then one store (swap=1: one to each of C's rows c and c + 1).
__device__ __forceinline__ void wg_store_pair(float x, float y, TO *C, int r, int c, int ldc,
                                              const matmul_epilogue &ep)
{
    wg_epilogue(x, y, C, r, c, ldc, ep);
    if constexpr (WG_SWAP) {
        put_one(C, c_index(r, c, ldc), x);
        put_one(C, c_index(r, c + 1, ldc), y);
    } else if constexpr (OUT_ID == OUT_F32) {
        *reinterpret_cast<float2 *>(C + (size_t)r * ldc + c) = make_float2(x, y);
    } else {
        *reinterpret_cast<unsigned *>(C + (size_t)r * ldc + c) = pack_pair(x, y);
    }
}

// Element (r, c) alone (an odd N's last column): its epilogue and store.
__device__ __forceinline__ void wg_store_one(float x, TO *C, int r, int c, int ldc,
                                             const matmul_epilogue &ep)
{
    wg_epilogue_one(x, C, r, c, ldc, ep);
    put_one(C, c_index(r, c, ldc), x);
}

// A pair of sums (x at column c, y at c + 1) with `left` columns of C from c on: stored with
// the epilogue, x alone where only it lies inside C (an odd N's last column), neither where
// both lie past it.
__device__ __forceinline__ void wg_store_sums(float x, float y, TO *C, int r, int c, int left,
                                              int ldc, const matmul_epilogue &ep)
{
    if (left >= 2)
        wg_store_pair(x, y, C, r, c, ldc, ep);
    else if (left == 1)
        wg_store_one(x, C, r, c, ldc, ep);
}

// store=direct: accumulator (row, col) pairs, row w*16 + l/4 (+8), column 8i + 2(l%4) (+1) of
// the 64 x N tile, straight to C. N is even (the op stages C where its rows are odd), except
// with swap=1, where N is A's rows (any number) and each output is stored alone.
__device__ __forceinline__ void wg_store(float (&acc)[WG_MT][WG_ACC], TO *C, int M, int N,
                                         int ldc, int row0, int col0, int consumer,
                                         const matmul_epilogue &ep)
{
    const int t = threadIdx.x % 128, w = t / 32, l = t % 32;
#pragma unroll
    for (int m = 0; m < WG_MT; m++)
#pragma unroll
        for (int i = 0; i < WG_N / 8; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int r = row0 + wg_row_tile(consumer, m) * 64 + w * 16 + l / 4 + h * 8;
                const int c = col0 + i * 8 + (l % 4) * 2;
                if (r >= M || c >= N)
                    continue;
                if (WG_SWAP)
                    wg_store_sums(acc[m][i * 4 + h * 2], acc[m][i * 4 + h * 2 + 1], C, r, c,
                                  N - c, ldc, ep);
                else
                    wg_store_pair(acc[m][i * 4 + h * 2], acc[m][i * 4 + h * 2 + 1], C, r, c,
                                  ldc, ep);
            }
}

// The TMA's store of a box of shared memory to C at (x, y) of product z; elements outside C
// are not written.
__device__ __forceinline__ void tma_store(const tensor_map *map, int x, int y, int z, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"
                 ::"l"(map), "r"(x), "r"(y), "r"(z), "r"(src) : "memory");
}

// Barrier `id` of the threads of one consumer warpgroup (the other warpgroups go on).
__device__ __forceinline__ void warpgroup_barrier(int id)
{
    asm volatile("bar.sync %0, 128;" ::"r"(id) : "memory");
}

// store=tma: the consumer's rows of C into its shared tile (element (row, col) of a 64-row box
// at row * C_SPAN + its byte in the row, the 16-byte chunk flipped by the bits of the offset
// above 128 bytes: the swizzle over the box's span, which also spreads a warp's stores over
// all banks), then one thread has the TMA store the boxes and goes on. The tile is written
// again only after those stores have read it. A ping-pong consumer does so once per part of
// 64 rows (C_PARTS), through the buffer the two share, and waits for the TMA to have read its
// last part before the other's turn (wg_turn_*: the TMA's reads are known only to the thread
// that issued the stores).
__device__ __forceinline__ void wg_store_tma(float (&acc)[WG_MT][WG_ACC], char *c_tiles,
                                             const tensor_map *c_map, const TO *C, int M, int N,
                                             int ldc, int row0, int col0, int product,
                                             int consumer, const matmul_epilogue &ep)
{
    enum : int { PART_MT = WG_MT / C_PARTS };
    const int t = threadIdx.x % 128, w = t / 32, l = t % 32;
    const unsigned base = shared_address(c_tiles + (C_BUFFERS > 1) * consumer * C_TILE_BYTES);
#pragma unroll
    for (int part = 0; part < C_PARTS; part++) {
        if (t == 0)
            asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
        warpgroup_barrier(1 + consumer);
#pragma unroll
        for (int m = part * PART_MT; m < (part + 1) * PART_MT; m++)
#pragma unroll
            for (int i = 0; i < WG_N / 8; i++)
#pragma unroll
                for (int h = 0; h < 2; h++) {
                    const int lr = w * 16 + l / 4 + h * 8, lc = i * 8 + (l % 4) * 2;
                    const int r = row0 + wg_row_tile(consumer, m) * 64 + lr, c = col0 + lc;
                    float x = acc[m][i * 4 + h * 2], y = acc[m][i * 4 + h * 2 + 1];
                    // An odd N's last column: y lies past C. (The TMA wrote such a y past its
                    // row on the H200, so the op stages C where N is not whole 16-byte units.)
                    if (r < M && c + 1 < N)
                        wg_epilogue(x, y, C, r, c, ldc, ep);
                    else if (r < M && c < N)
                        wg_epilogue_one(x, C, r, c, ldc, ep);
                    const unsigned at = base +
                                        ((m - part * PART_MT) * C_BOXES + lc / C_BOX_COLS) *
                                            C_BOX_BYTES +
                                        lr * C_SPAN + ((lc % C_BOX_COLS * OUT_BYTES) ^
                                                       (lr * C_SPAN >> 7 & (C_SPAN / 16 - 1)) << 4);
                    if constexpr (OUT_ID == OUT_F32)
                        asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(at), "f"(x), "f"(y)
                                     : "memory");
                    else
                        asm volatile("st.shared.b32 [%0], %1;" ::"r"(at), "r"(pack_pair(x, y))
                                     : "memory");
                }
        // The generic proxy's writes, made visible to the TMA's (async proxy) reads.
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
        warpgroup_barrier(1 + consumer);
        if (t == 0) {
#pragma unroll
            for (int m = part * PART_MT; m < (part + 1) * PART_MT; m++) {
                const int r = row0 + wg_row_tile(consumer, m) * 64;
#pragma unroll
                for (int j = 0; j < C_BOXES; j++)
                    if (r < M && col0 + j * C_BOX_COLS < N)
                        tma_store(c_map, col0 + j * C_BOX_COLS, r, product,
                                  base + ((m - part * PART_MT) * C_BOXES + j) * C_BOX_BYTES);
            }
            asm volatile("cp.async.bulk.commit_group;" ::: "memory");
        }
    }
    if (WG_PINGPONG && t == 0) // the buffer is free for the other consumer's turn
        asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// The last part's adding, over its consumer's rows x cols of the tile: its threads take quads
// of columns in turn, and load every part's sums of a batch of quads (16 bytes each, about 16
// loads in flight per thread) before storing any. The loads are free of branches — each quad
// clamped into the tile, the part loop unrolled to SPLITS with each address clamped to a part
// that exists and the sums of the parts past the tile's count selected away — and come before
// the stores, which the compiler cannot tell from the workspace: a load behind a branch or a
// store waits for the one before it (adding the parts into the accumulators, each load behind
// a branch, ran 16 parts of 1 x 4096 x 4096 15x slower than none; pairs of columns two loads
// deep ran 16 x 4096 x 4096 in four parts at 0.868 of cuBLAS, these quads at 0.947, H200,
// docs/PERFORMANCE.md, 2026-11-29 04:40). The loads bypass L1 (ld.global.cg), which may hold
// the lines of an earlier launch; the parts are added in part order, the same sums whichever
// part is last.
__device__ __forceinline__ void wg_add_quads(const float *parts, TO *C, int row0, int col0,
                                             int rows, int cols, int count, int ldc,
                                             const matmul_epilogue &ep)
{
    enum : int { ROWS = WG_MT * 64, SLICE = ROWS * WG_N, QUADS = WG_N / 4 };
    enum : int { PER_THREAD = (ROWS * QUADS + 127) / 128, WANT = 16 / WG_SPLITS };
    enum : int { BATCH = PER_THREAD < WANT ? PER_THREAD : WANT > 1 ? WANT : 1 };
    const int t = threadIdx.x % 128, total = rows * QUADS;
    // The loop's count is the warpgroup's, not each thread's (the loads clamp q, the stores
    // check it): a loop whose trip count depends on the thread made ptxas treat the whole
    // persistent loop as divergent, the k loop's ring and descriptors built in registers and
    // copied into uniform ones before each wgmma (38 R2UR in fp8 64 x 32 in 2 parts, now 13).
    for (int first = 0; first < total; first += 128 * BATCH) {
        const int q0 = first + t;
        float4 s[BATCH];
#pragma unroll
        for (int j = 0; j < BATCH; j++) {
            const int q = min(q0 + j * 128, total - 1);
            const float *at = parts + q / QUADS * WG_N + q % QUADS * 4;
            s[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
            for (int p = 0; p < WG_SPLITS; p++) {
                const float4 v = __ldcg(reinterpret_cast<const float4 *>(
                    at + (size_t)(p < count ? p : count - 1) * SLICE));
                s[j].x += p < count ? v.x : 0.0f;
                s[j].y += p < count ? v.y : 0.0f;
                s[j].z += p < count ? v.z : 0.0f;
                s[j].w += p < count ? v.w : 0.0f;
            }
        }
#pragma unroll
        for (int j = 0; j < BATCH; j++) {
            const int q = q0 + j * 128, lc = q % QUADS * 4;
            if (q < total) {
                wg_store_sums(s[j].x, s[j].y, C, row0 + q / QUADS, col0 + lc, cols - lc, ldc, ep);
                wg_store_sums(s[j].z, s[j].w, C, row0 + q / QUADS, col0 + lc + 2, cols - lc - 2,
                              ldc, ep);
            }
        }
    }
}

// Split-K, after a part's K loop: the part's fp32 sums go to the workspace (its consumer's
// slice of the tile, row-major: a warp's pairs of one row fill whole 32-byte sectors), rows and
// columns inside C only, so a decoding's one row writes 1/64 of the slice. Then the part counts
// itself in, and the last of the tile's parts adds every part's sums (its own read back too:
// wg_add_quads) and stores C with the epilogue; it leaves the count at zero for the next
// launch.
__device__ __forceinline__ void wg_add_parts(const float (&acc)[WG_MT][WG_ACC],
                                             const wg_tiles &tiles, const wg_unit &u, TO *C,
                                             int M, int N, int ldc, int consumer,
                                             const matmul_layout &layout,
                                             const matmul_epilogue &ep, volatile int *last)
{
    enum : int { ROWS = WG_MT * 64, SLICE = ROWS * WG_N }; // one consumer's part of a tile
    const int t = threadIdx.x % 128, w = t / 32, l = t % 32;
    const int row0 = u.row0 + consumer * ROWS;
    const size_t slot = (size_t)u.tile * WG_CONSUMERS + consumer;
    float *parts = layout.partials + slot * tiles.parts * SLICE;
#pragma unroll
    for (int m = 0; m < WG_MT; m++)
#pragma unroll
        for (int i = 0; i < WG_N / 8; i++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int lr = m * 64 + w * 16 + l / 4 + h * 8, lc = i * 8 + (l % 4) * 2;
                if (row0 + lr < M && u.col0 + lc < N)
                    __stcg(reinterpret_cast<float2 *>(parts + u.part * SLICE + lr * WG_N + lc),
                           make_float2(acc[m][i * 4 + h * 2], acc[m][i * 4 + h * 2 + 1]));
            }
    __threadfence(); // this thread's sums are visible before its part is counted
    warpgroup_barrier(1 + consumer);
    if (t == 0) {
        const unsigned before = atomicAdd(layout.arrivals + slot, 1u);
        last[consumer] = before == tiles.parts - 1;
        if (before == tiles.parts - 1)
            layout.arrivals[slot] = 0;
        __threadfence(); // the other parts' sums are read after their counts were
    }
    warpgroup_barrier(1 + consumer);
    if (!last[consumer])
        return;
    wg_add_quads(parts, C, row0, u.col0, min(ROWS, M - row0), min(WG_N, N - u.col0),
                 tiles.parts, ldc, ep);
}

// Ping-pong turns: a consumer's k loop starts once the other's has issued its last group, so
// the two take the tensor cores in turn while each stores its tile in the other's k loop. The
// turn also keeps a consumer from waiting on a stage's barrier more than one phase ahead of it
// (a barrier tells phases by their parity only). With store=tma their stores take turns too,
// through the one buffer of C. A turn is a named barrier per consumer and kind (the k loop:
// 3 and 4, the store: 5 and 6), where the consumer's 128 threads wait for the other's 128 to
// arrive; each tile's pass has its wait, so none is left behind at the end.
enum : int { TURN_K_LOOP = 3, TURN_STORE = 5 };
__device__ __forceinline__ void wg_turn_wait(int kind, int consumer)
{
    asm volatile("bar.sync %0, 256;" ::"r"(kind + consumer) : "memory");
}

__device__ __forceinline__ void wg_turn_pass(int kind, int consumer)
{
    asm volatile("bar.arrive %0, 256;" ::"r"(kind + 1 - consumer) : "memory");
}

__device__ __forceinline__ void matmul_wgmma(TO *C, int M, int N, int K, const tensor_map *a_map,
                                             const tensor_map *b_map, const tensor_map *c_map,
                                             const matmul_epilogue &ep,
                                             const matmul_layout &layout)
{
    extern __shared__ unsigned char dynamic_smem[];
    __shared__ alignas(8) unsigned long long full[STAGES], empty[STAGES];
    __shared__ int last_part[2]; // split-K: per consumer, whether its part was the tile's last
    // The 128-byte swizzle repeats every 1024 bytes: align the stages (and C's tiles) to it.
    char *stages = reinterpret_cast<char *>(dynamic_smem) +
                   ((1024 - (shared_address(dynamic_smem) & 1023)) & 1023);
    const unsigned full0 = shared_address(full), empty0 = shared_address(empty);
    if (threadIdx.x == 0) {
        // The maps' 128 bytes fetched while the barriers are made, not by the first TMA load:
        // a product of few microseconds waited on that fetch (fp8 128 x 4096 x 4096 ran at
        // 0.894 of cuBLAS without, 0.970 with; H200, docs/PERFORMANCE.md, 2026-11-29 04:40).
        prefetch_tensor_map(a_map);
        prefetch_tensor_map(b_map);
        if constexpr (WG_TMA_STORE)
            prefetch_tensor_map(c_map);
        for (int s = 0; s < STAGES; s++) {
            barrier_init(full0 + 8 * s, 1);
            // per consumer warp that multiplies the stage (ping-pong: one consumer's)
            barrier_init(empty0 + 8 * s, (WG_PINGPONG ? 1 : WG_CONSUMERS) * 4 * CLUSTER_SIZE);
        }
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    }
    if constexpr (CLUSTER_SIZE > 1)
        cluster_sync();
    else
        __syncthreads();
    // Broadcast from lane 0, the warpgroup is warp-uniform to the compiler too: the consumers'
    // ring, tile and descriptor arithmetic then lives in uniform registers, not copied into
    // them (R2UR) before each wgmma.
    const int warpgroup = __shfl_sync(0xffffffff, threadIdx.x / 128, 0);
    const int k_tiles = (K - 1) / WG_BK + 1;
    if (warpgroup == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;");
        if (threadIdx.x == 0)
            wg_produce(stages, full0, empty0, a_map, b_map, M, N, k_tiles, layout);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;");
        const int consumer = warpgroup - 1;
        const wg_tiles tiles = wg_tiles_of(M, N, layout.batch, k_tiles);
        wg_ring ring = {0, 0};
        float acc[WG_MT][WG_ACC];
        // Ping-pong: consumer c takes tiles c, c + 2, ... of the block's sequence, passing over
        // the other's stages in the ring, and their k loops take turns (wg_turn_*).
        const unsigned first = tiles.first + (WG_PINGPONG ? consumer * tiles.step : 0);
        const unsigned step = WG_PINGPONG ? 2 * tiles.step : tiles.step;
        if (WG_PINGPONG && consumer == 1)
            ring.skip(k_tiles);
        for (unsigned t = first; t < tiles.count; t += step) {
            const wg_unit u = wg_unit_of(tiles, t, M, N, k_tiles);
            const int row0 = u.row0, col0 = u.col0, product = u.product;
            TO *c = C + product * layout.c_stride;
            // The other consumer's turn came before this tile's (ping-pong), and its next tile
            // comes after it.
            const bool after = WG_PINGPONG && (consumer == 1 || t != first);
            const bool before = WG_PINGPONG && t + tiles.step < tiles.count;
            if (after)
                wg_turn_wait(TURN_K_LOOP, consumer);
            const unsigned held =
                wg_consume(acc, stages, full0, empty0, consumer, u.k_end - u.k_begin, ring);
            if (before)
                wg_turn_pass(TURN_K_LOOP, consumer);
            if constexpr (WG_PINGPONG)
                ring.skip(k_tiles);
            wg_drain(acc, empty0, held);
            if constexpr (WG_SPLITS > 1) {
                if (tiles.parts > 1) { // the tile's last part stores it
                    wg_add_parts(acc, tiles, u, c, M, N, layout.ldc, consumer, layout, ep,
                                 last_part);
                    continue;
                }
            }
            if constexpr (WG_TMA_STORE) {
                if (after)
                    wg_turn_wait(TURN_STORE, consumer);
                wg_store_tma(acc, stages + STAGES * STAGE_BYTES, c_map, c, M, N, layout.ldc, row0,
                             col0, product, consumer, ep);
                if (before)
                    wg_turn_pass(TURN_STORE, consumer);
            } else
                wg_store(acc, c, M, N, layout.ldc, row0, col0, consumer, ep);
        }
        if constexpr (WG_TMA_STORE) // the last stores are done before the block's memory goes
            if (threadIdx.x % 128 == 0)
                asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    if constexpr (CLUSTER_SIZE > 1)
        cluster_sync(); // the peer's last multicasts and arrivals have landed here
}

// sched=gemv: a decoding's product, a few rows of A, is B's bytes read once, and wgmma's
// 64-row side (or, swapped, its 8-column N) would multiply mostly zeros, with a tile's worth of
// shared memory and barriers for each. Here a block takes 16 columns of C, 16 rows of K-major
// B, and its four warps split K; each warp feeds mma.sync straight from 16-byte loads of
// global memory, B's 16 rows as the m16 side and up to 16 rows of A as the n8 side (a second
// mma for rows 8-15), accumulating in fp32. mma's k order is free: what a lane holds of a row
// is the same k slots of A and B, so each lane reads 32 consecutive bytes of its rows (four
// mma's worth) and calls them its slots, as long as A's and B's agree. The warps' sums meet in
// shared memory and the first warp applies the epilogue and stores. Blocks run over the
// column groups of every product (a grid-stride loop); more than 16 rows of A read B again.
// Blocks of four warps, three an SM, measured faster than one of eight (eight warps: 0.77 of
// cuBLASLt at fp8 1 x 14336 x 4096, four: 0.89; docs/PERFORMANCE.md, 2026-11-30 05:45): a
// block's last loads, its sums and its stores overlap the other blocks' loads.
enum : int { WG_GEMV = WG_FAMILY && SCHED == SCHED_GEMV };
enum : int { GEMV_THREADS = 128, GEMV_WARPS = GEMV_THREADS / 32, GEMV_COLUMNS = 16 };
// Each lane reads GEMV_PIECES consecutive 16-byte pieces of its rows a step, so a warp's step
// is whole 128-byte lines of each row (GEMV_PIECES = 2), the unit L2 and DRAM serve (64-byte
// steps, half lines: 0.89 of the peer against 1.03 at fp8 1 x 14336 x 4096).
enum : int { GEMV_PIECES = 2, GEMV_STEP = 64 * GEMV_PIECES }; // bytes of K a warp's step reads

// One mma of the gemv: a, B's rows g and g + 8 (a0, a1, a2, a3 in mma's order), b, A's row g.
#define GEMV_MMA(shape_and_types)                                                              \
    asm("mma.sync.aligned." shape_and_types " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, " \
        "{%0, %1, %2, %3};"                                                                    \
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                       \
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
__device__ __forceinline__ void gemv_mma(float (&d)[4], const unsigned (&a)[4],
                                         const unsigned (&b)[2])
{
    if constexpr (VARIANT == VARIANT_WGMMA_FP8 && FP8 == FP8_E5M2)
        GEMV_MMA("m16n8k32.row.col.f32.e5m2.e5m2.f32");
    else if constexpr (VARIANT == VARIANT_WGMMA_FP8)
        GEMV_MMA("m16n8k32.row.col.f32.e4m3.e4m3.f32");
    else if constexpr (VARIANT == VARIANT_WGMMA_TF32) // the low 13 bits ignored, as wgmma_tf32
        GEMV_MMA("m16n8k8.row.col.f32.tf32.tf32.f32");
    else if constexpr (DTYPE_ID == DTYPE_BF16)
        GEMV_MMA("m16n8k16.row.col.f32.bf16.bf16.f32");
    else
        GEMV_MMA("m16n8k16.row.col.f32.f16.f16.f32");
}
#undef GEMV_MMA

// The 16 bytes of a row at byte `at` (16-byte aligned), those from byte `end` of the row on
// as zeros: K ends inside them, and no byte past it is read (the rest of the pitch is not the
// caller's: it may hold NaN, or lie past the allocation); all zeros for a row not there.
__device__ __forceinline__ uint4 gemv_load(const unsigned char *row, int at, int end, bool there)
{
    if (!there || at >= end)
        return make_uint4(0, 0, 0, 0);
    if (end - at >= 16)
        return __ldg(reinterpret_cast<const uint4 *>(row + at));
    unsigned w[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        const int bytes = end - at - 4 * i;
        const unsigned char *p = row + at + 4 * i;
        if (bytes >= 4) {
            w[i] = __ldg(reinterpret_cast<const unsigned *>(p));
        } else {
            w[i] = 0;
            for (int b = 0; b < bytes; b++)
                w[i] |= (unsigned)__ldg(p + b) << (8 * b);
        }
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
}

// A lane's pieces of one step: B's rows g and g + 8, A's row g of each group of 8.
template <int GROUPS>
struct gemv_pieces {
    uint4 low[GEMV_PIECES], high[GEMV_PIECES], a[GROUPS][GEMV_PIECES];
};

// The step's mma for each group, two a 16-byte piece: bytes 0-7 of a lane's piece are its k
// slots of the first, 8-15 of the second, the same for A and B.
template <int GROUPS>
__device__ __forceinline__ void gemv_multiply(float (&acc)[GROUPS][4], const gemv_pieces<GROUPS> &p)
{
#pragma unroll
    for (int i = 0; i < GEMV_PIECES; i++) {
        const unsigned first[4] = {p.low[i].x, p.high[i].x, p.low[i].y, p.high[i].y};
        const unsigned second[4] = {p.low[i].z, p.high[i].z, p.low[i].w, p.high[i].w};
#pragma unroll
        for (int r = 0; r < GROUPS; r++) {
            const unsigned bf[2] = {p.a[r][i].x, p.a[r][i].y};
            const unsigned bs[2] = {p.a[r][i].z, p.a[r][i].w};
            gemv_mma(acc[r], first, bf);
            gemv_mma(acc[r], second, bs);
        }
    }
}

// A lane's pieces of a step wholly inside K at byte `at` of its rows: a row that is not there
// reads the group's first (always there), and gemv_keep zeroes it once the loads have landed.
template <int GROUPS>
__device__ __forceinline__ void gemv_fetch(gemv_pieces<GROUPS> &p, const unsigned char *low,
                                           const unsigned char *high,
                                           const unsigned char *const (&arow)[GROUPS], int at)
{
#pragma unroll
    for (int i = 0; i < GEMV_PIECES; i++) {
        p.low[i] = __ldg(reinterpret_cast<const uint4 *>(low + at + 16 * i));
        p.high[i] = __ldg(reinterpret_cast<const uint4 *>(high + at + 16 * i));
#pragma unroll
        for (int r = 0; r < GROUPS; r++)
            p.a[r][i] = __ldg(reinterpret_cast<const uint4 *>(arow[r] + at + 16 * i));
    }
}

template <int GROUPS>
__device__ __forceinline__ void gemv_keep(gemv_pieces<GROUPS> &p, bool low_there,
                                          bool high_there, const bool (&a_there)[GROUPS])
{
    const uint4 zero = make_uint4(0, 0, 0, 0);
#pragma unroll
    for (int i = 0; i < GEMV_PIECES; i++) {
        p.low[i] = low_there ? p.low[i] : zero;
        p.high[i] = high_there ? p.high[i] : zero;
#pragma unroll
        for (int r = 0; r < GROUPS; r++)
            p.a[r][i] = a_there[r] ? p.a[r][i] : zero;
    }
}

// This warp's sums over its share of K (steps warp, warp + 4, ...): the column group at B's
// rows b (ldb bytes apart, `columns` of them left), GROUPS groups of 8 rows of A from a (lda
// bytes apart, `rows` left). acc[r]: mma's accumulators for A's rows 8 r + .... Steps wholly
// inside K load without a branch: a row that is not there reads the group's first (always
// there) and is zeroed after; the step K ends inside goes through gemv_load.
template <int GROUPS>
__device__ __forceinline__ void gemv_sums(float (&acc)[GROUPS][4], const unsigned char *a,
                                          size_t lda, int rows, const unsigned char *b,
                                          size_t ldb, int columns, int k_bytes)
{
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4, warp = threadIdx.x / 32;
    const bool low_there = g < columns, high_there = g + 8 < columns;
    const unsigned char *low = b + (size_t)(low_there ? g : 0) * ldb;
    const unsigned char *high = b + (size_t)(high_there ? g + 8 : 0) * ldb;
    const unsigned char *arow[GROUPS];
    bool a_there[GROUPS];
#pragma unroll
    for (int r = 0; r < GROUPS; r++) {
        a_there[r] = 8 * r + g < rows;
        arow[r] = a + (size_t)(a_there[r] ? 8 * r + g : 0) * lda;
    }
    // Steps in flight per warp: each lane's loads of DEPTH whole steps are issued before the
    // first of their mma (192 bytes a lane, 72 KiB an SM of three blocks; one step for two
    // groups of A's rows).
    constexpr int DEPTH = GROUPS == 1 ? 2 : 1;
    const int whole = k_bytes / GEMV_STEP, lane_at = 16 * GEMV_PIECES * t;
    int step = warp;
    for (; step + (DEPTH - 1) * GEMV_WARPS < whole; step += DEPTH * GEMV_WARPS) {
        gemv_pieces<GROUPS> p[DEPTH];
#pragma unroll
        for (int d = 0; d < DEPTH; d++)
            gemv_fetch<GROUPS>(p[d], low, high, arow,
                               (step + d * GEMV_WARPS) * GEMV_STEP + lane_at);
#pragma unroll
        for (int d = 0; d < DEPTH; d++) {
            gemv_keep<GROUPS>(p[d], low_there, high_there, a_there);
            gemv_multiply<GROUPS>(acc, p[d]);
        }
    }
    for (; step < whole; step += GEMV_WARPS) {
        gemv_pieces<GROUPS> p;
        gemv_fetch<GROUPS>(p, low, high, arow, step * GEMV_STEP + lane_at);
        gemv_keep<GROUPS>(p, low_there, high_there, a_there);
        gemv_multiply<GROUPS>(acc, p);
    }
    if (k_bytes % GEMV_STEP && warp == whole % GEMV_WARPS) {
        const int at = whole * GEMV_STEP + lane_at;
        gemv_pieces<GROUPS> p;
#pragma unroll
        for (int i = 0; i < GEMV_PIECES; i++) {
            p.low[i] = gemv_load(low, at + 16 * i, k_bytes, low_there);
            p.high[i] = gemv_load(high, at + 16 * i, k_bytes, high_there);
#pragma unroll
            for (int r = 0; r < GROUPS; r++)
                p.a[r][i] = gemv_load(arow[r], at + 16 * i, k_bytes, a_there[r]);
        }
        gemv_multiply<GROUPS>(acc, p);
    }
}

// The 16 columns from j0 of up to 8 GROUPS rows of C from r0: the warps' sums added in shared
// memory, then the first warp's lanes each store their four (B's rows g, g + 8 by A's rows
// 2t, 2t + 1 of each group), with the epilogue.
template <int GROUPS>
__device__ __forceinline__ void gemv_group(TO *C, const unsigned char *a, size_t lda, int r0,
                                           int M, const unsigned char *b, size_t ldb, int j0,
                                           int columns, int k_bytes, int ldc,
                                           const matmul_epilogue &ep,
                                           float (*sums)[GROUPS * 4][32])
{
    const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, g = lane / 4, t = lane % 4;
    float acc[GROUPS][4];
#pragma unroll
    for (int r = 0; r < GROUPS; r++)
        acc[r][0] = acc[r][1] = acc[r][2] = acc[r][3] = 0.0f;
    gemv_sums<GROUPS>(acc, a + (size_t)r0 * lda, lda, M - r0, b, ldb, columns, k_bytes);
#pragma unroll
    for (int r = 0; r < GROUPS; r++)
#pragma unroll
        for (int i = 0; i < 4; i++)
            sums[warp][4 * r + i][lane] = acc[r][i];
    __syncthreads();
    if (warp == 0) {
#pragma unroll
        for (int r = 0; r < GROUPS; r++)
#pragma unroll
            for (int i = 0; i < 4; i++) {
                float x = 0.0f;
#pragma unroll
                for (int w = 0; w < GEMV_WARPS; w++)
                    x += sums[w][4 * r + i][lane];
                const int row = r0 + 8 * r + 2 * t + i % 2, column = g + 8 * (i / 2);
                if (row < M && column < columns)
                    wg_store_one(x, C, row, j0 + column, ldc, ep);
            }
    }
    __syncthreads(); // the sums are read before the next group writes them
}

__device__ __forceinline__ void matmul_gemv(const unsigned char *A, const unsigned char *B,
                                            TO *C, int M, int N, int K,
                                            const matmul_epilogue &ep, const matmul_layout &layout)
{
    __shared__ float sums[GEMV_WARPS][8][32];
    const int groups = (layout.b_rows + GEMV_COLUMNS - 1) / GEMV_COLUMNS;
    const long long tasks = (long long)groups * layout.batch;
    const size_t lda = (size_t)layout.lda * IN_BYTES, ldb = (size_t)layout.ldb * IN_BYTES;
    const int k_bytes = K * IN_BYTES;
    for (long long task = blockIdx.x; task < tasks; task += gridDim.x) {
        const long long product = task / groups;
        const int j0 = (int)(task % groups) * GEMV_COLUMNS;
        TO *c = C + product * layout.c_stride;
        const unsigned char *a = A + (size_t)(product * layout.a_stride) * IN_BYTES;
        const unsigned char *b = B + (size_t)(product * layout.b_stride + j0 * (long long)
                                               layout.ldb) * IN_BYTES;
        const int columns = layout.b_rows - j0; // C's padding columns (staged C): left alone
        if (M <= 8) {
            gemv_group<1>(c, a, lda, 0, M, b, ldb, j0, columns, k_bytes, layout.ldc, ep,
                          reinterpret_cast<float (*)[4][32]>(sums));
        } else {
            for (int r0 = 0; r0 < M; r0 += 16)
                gemv_group<2>(c, a, lda, r0, M, b, ldb, j0, columns, k_bytes, layout.ldc, ep,
                              sums);
        }
    }
}

enum : int {
    THREADS = VARIANT == VARIANT_NAIVE || VARIANT == VARIANT_COALESCING || VARIANT == VARIANT_TILED ? BM * BN
              : VARIANT == VARIANT_TILED_REGISTER ? BM * BN / TM
              : VARIANT == VARIANT_BLOCK_TILED || VARIANT == VARIANT_BLOCK_TILED_VECTORIZED ? BM * BN / (TM * TN)
              : VARIANT == VARIANT_TENSOR_CORE ? TC_THREADS
              : WG_GEMV ? GEMV_THREADS
              : WG_THREADS
};

// One signature for every variant: the SIMT and tensor_core variants read A and B through
// pointers, the wgmma variants through the tensor maps (3-D: a matrix per product; c_map:
// store=tma's) and read the epilogue's values and the layout of a batch (the host passes
// zeros for what a variant does not use; it launches the other variants once per product). The block's tile
// of C comes from blockIdx.x (block_tile; wg_tiles_of for the persistent blocks).
// Two blocks per SM for the 256-thread SIMT and mma.sync kernels (a 128-register cap), so one
// block's loads overlap the other's arithmetic, unless a warp's tf32 tile needs more than 64
// accumulators; wgmma's one block holds all shared memory. sched=gemv's blocks of 128 threads
// run three an SM (at most 168 registers: its warps hold two steps of loads each, and fp8's
// mma.sync widens its operands to f16 pairs in registers; 163 used, no spills).
enum : int {
    MIN_BLOCKS = WG_GEMV ? (GEMV_THREADS < 384 ? 384 / GEMV_THREADS : 1)
                 : WG_FAMILY || THREADS > 256 ||
                         (VARIANT == VARIANT_TENSOR_CORE && MT_TILES * NT_TILES * 4 > 64)
                     ? 1 : 2
};

extern "C" __global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
matmul_kernel(const TI *__restrict__ A, const TI *__restrict__ B, TO *__restrict__ C, int M,
              int N, int K, const __grid_constant__ tensor_map a_map,
              const __grid_constant__ tensor_map b_map, const __grid_constant__ tensor_map c_map,
              const __grid_constant__ matmul_epilogue epilogue,
              const __grid_constant__ matmul_layout layout)
{
    if constexpr (WG_GEMV) {
        matmul_gemv(reinterpret_cast<const unsigned char *>(A),
                    reinterpret_cast<const unsigned char *>(B), C, M, N, K, epilogue, layout);
    } else if constexpr (WG_FAMILY) {
        matmul_wgmma(C, M, N, K, &a_map, &b_map, &c_map, epilogue, layout);
    } else {
        const float *a = reinterpret_cast<const float *>(A), *b = reinterpret_cast<const float *>(B);
        float *c = reinterpret_cast<float *>(C);
        if constexpr (VARIANT == VARIANT_NAIVE)
            matmul_naive(a, b, c, M, N, K);
        else if constexpr (VARIANT == VARIANT_COALESCING)
            matmul_coalescing(a, b, c, M, N, K);
        else if constexpr (VARIANT == VARIANT_TILED)
            matmul_tiled(a, b, c, M, N, K);
        else if constexpr (VARIANT == VARIANT_TILED_REGISTER)
            matmul_tiled_register(a, b, c, M, N, K);
        else if constexpr (VARIANT == VARIANT_BLOCK_TILED)
            matmul_block_tiled(a, b, c, M, N, K);
        else if constexpr (VARIANT == VARIANT_BLOCK_TILED_VECTORIZED)
            matmul_block_tiled_vectorized(a, b, c, M, N, K);
        else
            matmul_tensor_core(a, b, c, M, N, K, &a_map, &b_map);
    }
}

// The op's staging copies (src/families/matmul/stage.h): `count` matrices of `rows` rows of
// `width` bytes, between row pitches and matrix strides in bytes that the TMA cannot take
// (k = 4095 e4m3 is rows of 4095 bytes). The driver's pitched copy moves such rows at about a
// quarter of the copy's bandwidth (2026-11-30: 120 us of a 214 us fp8 4093 x 4097 x 4095).
// Here each thread writes one 16-byte aligned piece of a destination row: its bytes gathered
// from the one or two aligned 16-byte pieces of the source that hold them, shifted into place;
// pieces at a row's ends, where those would reach outside either row, go byte by byte, so no
// byte outside the rows is read or written. Blocks run along a row (x), down its matrix (y)
// and across the matrices (z), so a batch of few-row matrices runs as wide as one tall one.
__device__ __forceinline__ unsigned stage_word(const unsigned (&w)[8], unsigned first, int i)
{
    return first == 0 ? w[i] : first == 1 ? w[i + 1] : first == 2 ? w[i + 2] : w[i + 3];
}

__device__ __forceinline__ void stage_piece(unsigned long long at, unsigned long long d0,
                                            unsigned long long s0, unsigned long long width)
{
    const unsigned long long from = s0 + (at - d0); /* wraps where at < d0, as it should */
    const unsigned long long low = from & ~15ull;
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
                o[i] = __funnelshift_r(stage_word(w, first, i), stage_word(w, first, i + 1), bits);
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

extern "C" __global__ void __launch_bounds__(128)
matmul_stage_rows(unsigned char *__restrict__ dst, const unsigned char *__restrict__ src,
                  unsigned long long width, unsigned long long rows, unsigned long long count,
                  unsigned long long dst_pitch, unsigned long long dst_stride,
                  unsigned long long src_pitch, unsigned long long src_stride)
{
    const unsigned long long piece = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    for (unsigned long long matrix = blockIdx.z; matrix < count; matrix += gridDim.z)
        for (unsigned long long r = blockIdx.y; r < rows; r += gridDim.y) {
            const unsigned long long d0 = (unsigned long long)dst + matrix * dst_stride +
                                          r * dst_pitch;
            const unsigned long long s0 = (unsigned long long)src + matrix * src_stride +
                                          r * src_pitch;
            const unsigned long long at = (d0 & ~15ull) + 16 * piece;
            if (at < d0 + width)
                stage_piece(at, d0, s0, width);
        }
}

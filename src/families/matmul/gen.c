/* gen.c — the matmul family as LLVM IR, step by step as templates/matmul.cu builds it:
 * the entry matmul_kernel(const T *A, const T *B, TO *C, int M, int N, int K, tensor_map a_map,
 * tensor_map b_map) with the template's launch bounds, grouped raster, tiles, shared layouts
 * (padded rows, A transposed, double buffers, cp.async and swizzled TMA stages), clusters,
 * fragment order and edge guards, so that src/ops/matmul.c launches it unchanged. Tile shapes
 * are C ints here: k steps, thread tiles and mma tiles are unrolled as they are emitted; K (and
 * tile loads of more than 4 elements a thread) is walked at run time. */
#include <stdio.h>
#include <string.h>

#include "plugin/gen.h"

#include "families/matmul/gen_stage.h"
#include "families/matmul/shape.h"

typedef matmul_variant variant;

/* The most the schema lets a thread hold: a 16 x 16 tile of C (block tiling), 32 mma tiles of
 * 4 (tensor_core), 128 wgmma accumulators; and 16-byte vectors it loads per tile. */
enum { MAX_ACC = 256, MAX_MMA_TILES = 32, MAX_VECTORS = 64 };

typedef struct {
    ir_builder *ir;
    variant variant;
    int bm, bn, bk, tm, tn, wm, wn, stages, prefetch, group, consumers;
    int tma;     /* tensor_core load=tma: stages filled by TMA (else cp.async) */
    int cluster; /* wgmma: blocks per thread-block cluster (1 elsewhere) */
    int persistent, store_tma; /* wgmma: sched=persistent, store=tma */
    int tile_n;  /* the block's tile width: bn, or N of wgmma's m64nNk16 */
    int threads, min_blocks;
    LLVMTypeRef out; /* C's element: f32, or for wgmma also bfloat or half */
    const char *wgmma_types;
    LLVMValueRef a, b, c, m, n, k, a_map, b_map, c_map; /* the parameters */
    LLVMValueRef tid;
} matmul_gen;

static LLVMValueRef i32c(matmul_gen *g, long long v)
{
    return ir_i32(g->ir, v);
}

/* x + c and x * scale + y: offsets inside a block's tiles, which never wrap. */
static LLVMValueRef plus(matmul_gen *g, LLVMValueRef x, long long c)
{
    return ir_add_nw(g->ir, x, i32c(g, c));
}

static LLVMValueRef mad(matmul_gen *g, LLVMValueRef x, long long scale, LLVMValueRef y)
{
    return ir_add_nw(g->ir, ir_mul_nw(g->ir, x, i32c(g, scale)), y);
}

/* ---- what every variant shares ---- */

/* Tiles of the raster along M (of CLUSTER x BM rows) and along N. */
static LLVMValueRef tiles_along_m(matmul_gen *g)
{
    const int rows_per_tile = g->bm * g->cluster;
    return ir_udiv(g->ir, ir_add(g->ir, g->m, i32c(g, rows_per_tile - 1)), i32c(g, rows_per_tile));
}

static LLVMValueRef tiles_along_n(matmul_gen *g)
{
    return ir_udiv(g->ir, ir_add(g->ir, g->n, i32c(g, g->tile_n - 1)), i32c(g, g->tile_n));
}

/* The block's tile number `linear` of the raster (of its cluster's tiles): GROUP tile rows at a
 * time, column by column inside a group, so that the blocks in flight share row panels of A
 * and column panels of B in L2. A cluster's blocks (consecutive indices) take adjacent row
 * tiles of one column: the raster walks tiles of CLUSTER x BM rows. */
static void tile_origin_at(matmul_gen *g, LLVMValueRef linear, LLVMValueRef *row0,
                           LLVMValueRef *col0)
{
    ir_builder *ir = g->ir;
    const int rows_per_tile = g->bm * g->cluster;
    LLVMValueRef tiles_m = tiles_along_m(g), tiles_n = tiles_along_n(g);
    LLVMValueRef block = ir_sreg(ir, IR_CTAID_X), row, col;
    if (g->group == 1) { /* one tile row per group: row by row */
        row = ir_udiv(ir, linear, tiles_n);
        col = ir_urem(ir, linear, tiles_n);
    } else {
        LLVMValueRef per_group = ir_mul(ir, i32c(g, g->group), tiles_n);
        LLVMValueRef first = ir_mul(ir, ir_udiv(ir, linear, per_group), i32c(g, g->group));
        LLVMValueRef rows = ir_umin(ir, ir_sub(ir, tiles_m, first), i32c(g, g->group));
        LLVMValueRef within = ir_urem(ir, linear, per_group);
        row = ir_add(ir, first, ir_urem(ir, within, rows));
        col = ir_udiv(ir, within, rows);
    }
    *row0 = ir_mul(ir, row, i32c(g, rows_per_tile));
    if (g->cluster > 1) /* the block's row tile within its cluster's */
        *row0 = ir_add(ir, *row0, ir_mul(ir, ir_urem(ir, block, i32c(g, g->cluster)),
                                         i32c(g, g->bm)));
    *col0 = ir_mul(ir, col, i32c(g, g->tile_n));
}

/* Which tile of C this block computes (one per block). */
static void tile_origin(matmul_gen *g, LLVMValueRef *row0, LLVMValueRef *col0)
{
    LLVMValueRef linear = ir_sreg(g->ir, IR_CTAID_X);
    if (g->cluster > 1)
        linear = ir_udiv(g->ir, linear, i32c(g, g->cluster));
    tile_origin_at(g, linear, row0, col0);
}

/* (size_t)row * ld + col: an element of a row-major matrix. */
static LLVMValueRef element_index(matmul_gen *g, LLVMValueRef row, LLVMValueRef ld,
                                  LLVMValueRef col)
{
    ir_builder *ir = g->ir;
    return ir_add(ir, ir_mul(ir, ir_zext(ir, row, ir->i64), ir_zext(ir, ld, ir->i64)),
                  ir_zext(ir, col, ir->i64));
}

static LLVMValueRef inside(matmul_gen *g, LLVMValueRef r, LLVMValueRef rows, LLVMValueRef c,
                           LLVMValueRef cols)
{
    return ir_and(g->ir, ir_ult(g->ir, r, rows), ir_ult(g->ir, c, cols));
}

/* Element (r, c) of input p (A or B) with ld columns: read-only, so ld.global.nc. */
static LLVMValueRef load_input(matmul_gen *g, LLVMValueRef p, LLVMValueRef r, LLVMValueRef ld,
                               LLVMValueRef c)
{
    ir_builder *ir = g->ir;
    return ir_load_readonly(ir, ir->f32, ir_at(ir, ir->f32, p, element_index(g, r, ld, c)), 4);
}

/* Element (r, c) of an input with rows x cols elements, or zero outside it. */
static LLVMValueRef load_or_zero(matmul_gen *g, LLVMValueRef p, LLVMValueRef r, LLVMValueRef c,
                                 LLVMValueRef rows, LLVMValueRef cols)
{
    ir_builder *ir = g->ir;
    LLVMValueRef v = ir_var(ir, ir->f32, ir_zero(ir->f32), "element");
    ir_if_state in;
    ir_if(ir, &in, inside(g, r, rows, c, cols));
    ir_set(ir, v, load_input(g, p, r, cols, c));
    ir_end_if(ir, &in);
    return ir_get(ir, v);
}

/* C[r][c] = value where (r, c) is inside C. */
static void store_inside(matmul_gen *g, LLVMValueRef r, LLVMValueRef c, LLVMValueRef value)
{
    ir_builder *ir = g->ir;
    ir_if_state in;
    ir_if(ir, &in, inside(g, r, g->m, c, g->n));
    ir_store(ir, value, ir_at(ir, ir->f32, g->c, element_index(g, r, g->n, c)), 4);
    ir_end_if(ir, &in);
}

/* count accumulators, zero. */
static void zero_accumulators(matmul_gen *g, LLVMValueRef *acc, int count)
{
    for (int i = 0; i < count; i++)
        acc[i] = ir_var(g->ir, g->ir->f32, ir_zero(g->ir->f32), "acc");
}

static void fma_into(matmul_gen *g, LLVMValueRef acc, LLVMValueRef x, LLVMValueRef y)
{
    ir_set(g->ir, acc, ir_fma(g->ir, x, y, ir_get(g->ir, acc)));
}

/* ---- steps 1 and 2: one thread per element of C ---- */

/* acc += A[r][k] * B[k][c], with a_row = &A[r][0] and *b_at = &B[k][c], which then moves down
 * one row (b_row_step = N elements). */
static void dot_step(matmul_gen *g, LLVMValueRef acc, LLVMValueRef a_row, LLVMValueRef k,
                     LLVMValueRef b_at, LLVMValueRef b_row_step)
{
    ir_builder *ir = g->ir;
    LLVMValueRef a = ir_at(ir, ir->f32, a_row, ir_zext(ir, k, ir->i64));
    LLVMValueRef b = ir_get(ir, b_at);
    fma_into(g, acc, ir_load_readonly(ir, ir->f32, a, 4), ir_load_readonly(ir, ir->f32, b, 4));
    ir_set(ir, b_at, ir_at(ir, ir->f32, b, b_row_step));
}

/* Step 1 (naive): consecutive threads on consecutive rows, a warp reads 32 rows of A. Step 2
 * (coalescing): consecutive threads on consecutive columns, B and C accesses coalesce.
 * The k loop is shaped as NVVM compiles the template's: 4 steps an iteration, which ptxas
 * unrolls 4 times more (16 steps, 32 loads in flight), then the last K % 4 steps one by one,
 * B's column walked by a pointer. Left to LLVM, the loop took 8 steps an iteration (32 after
 * ptxas, 64 registers against 56) and coalescing ran at 0.855x the template's kernel (H100). */
static void matmul_simple(matmul_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMValueRef row0, col0;
    tile_origin(g, &row0, &col0);
    const int naive = g->variant == MATMUL_NAIVE;
    LLVMValueRef r = ir_add(ir, row0, naive ? ir_urem(ir, g->tid, i32c(g, g->bm))
                                            : ir_udiv(ir, g->tid, i32c(g, g->bn)));
    LLVMValueRef c = ir_add(ir, col0, naive ? ir_udiv(ir, g->tid, i32c(g, g->bm))
                                            : ir_urem(ir, g->tid, i32c(g, g->bn)));
    ir_if_state in;
    ir_if(ir, &in, inside(g, r, g->m, c, g->n));
    LLVMValueRef acc = ir_var(ir, ir->f32, ir_zero(ir->f32), "acc");
    LLVMValueRef a_row = ir_at(ir, ir->f32, g->a, element_index(g, r, g->k, i32c(g, 0)));
    LLVMValueRef b_at = ir_var(ir, ir->global_ptr,
                               ir_at(ir, ir->f32, g->b, ir_zext(ir, c, ir->i64)), "b_at");
    LLVMValueRef b_row_step = ir_zext(ir, g->n, ir->i64);
    LLVMValueRef k = ir_var(ir, ir->i32, i32c(g, 0), "k");
    ir_loop_state by_four, by_one;
    ir_while(ir, &by_four);
    ir_do(ir, &by_four, ir_ult(ir, ir_get(ir, k), ir_and(ir, g->k, i32c(g, ~3))));
    for (int step = 0; step < 4; step++)
        dot_step(g, acc, a_row, plus(g, ir_get(ir, k), step), b_at, b_row_step);
    ir_set(ir, k, plus(g, ir_get(ir, k), 4));
    by_four.unroll = IR_UNROLL_BY_PTXAS;
    ir_end_while(ir, &by_four);
    ir_while(ir, &by_one);
    ir_do(ir, &by_one, ir_ult(ir, ir_get(ir, k), g->k));
    dot_step(g, acc, a_row, ir_get(ir, k), b_at, b_row_step);
    ir_set(ir, k, plus(g, ir_get(ir, k), 1));
    by_one.unroll = IR_UNROLL_NONE;
    ir_end_while(ir, &by_one);
    ir_store(ir, ir_get(ir, acc), ir_at(ir, ir->f32, g->c, element_index(g, r, g->n, c)), 4);
    ir_end_if(ir, &in);
}

/* ---- steps 3 to 5: tiles of A and B in shared memory ---- */

/* Element i of a rows x cols tile of p at (r0, c0) into shared memory, zero outside the
 * matrix. */
static void load_tile_element(matmul_gen *g, LLVMValueRef tile, LLVMValueRef p, int cols,
                              LLVMValueRef i, LLVMValueRef r0, LLVMValueRef c0,
                              LLVMValueRef row_count, LLVMValueRef col_count)
{
    ir_builder *ir = g->ir;
    LLVMValueRef r = ir_add(ir, r0, ir_udiv(ir, i, i32c(g, cols)));
    LLVMValueRef c = ir_add(ir, c0, ir_urem(ir, i, i32c(g, cols)));
    LLVMValueRef v = load_or_zero(g, p, r, c, row_count, col_count);
    ir_store(ir, v, ir_at(ir, ir->f32, tile, i), 4);
}

/* Up to this many elements per thread a tile load is unrolled; beyond, it is the template's
 * loop, which keeps ptxas from hoisting every load ahead of the stores (out of registers:
 * 128 loads a thread at bm=128 bk=64 with 64 threads). */
enum { UNROLLED_TILE_LOADS = 4 };

/* A rows x cols tile of p at (r0, c0) into shared memory: element i by thread i % THREADS
 * (guarded where the threads do not divide the tile). */
static void load_tile(matmul_gen *g, LLVMValueRef tile, LLVMValueRef p, int rows, int cols,
                      LLVMValueRef r0, LLVMValueRef c0, LLVMValueRef row_count,
                      LLVMValueRef col_count)
{
    ir_builder *ir = g->ir;
    const int count = rows * cols;
    if (count > UNROLLED_TILE_LOADS * g->threads) {
        LLVMValueRef i = ir_var(ir, ir->i32, g->tid, "i");
        ir_loop_state loop;
        ir_while(ir, &loop);
        ir_do(ir, &loop, ir_ult(ir, ir_get(ir, i), i32c(g, count)));
        load_tile_element(g, tile, p, cols, ir_get(ir, i), r0, c0, row_count, col_count);
        ir_set(ir, i, plus(g, ir_get(ir, i), g->threads));
        ir_end_while(ir, &loop);
        return;
    }
    for (int first = 0; first < count; first += g->threads) {
        LLVMValueRef i = plus(g, g->tid, first);
        const int ragged = first + g->threads > count;
        ir_if_state in;
        if (ragged)
            ir_if(ir, &in, ir_ult(ir, i, i32c(g, count)));
        load_tile_element(g, tile, p, cols, i, r0, c0, row_count, col_count);
        if (ragged)
            ir_end_if(ir, &in);
    }
}

typedef struct {
    ir_loop_state loop;
    LLVMValueRef k0;       /* the variable */
    LLVMValueRef as, bs;   /* As[BM][BK], Bs[BK][BN] */
} tile_loop;

/* for (k0 = 0; k0 < K; k0 += BK) { the tiles at k0 into shared memory; barrier; ... */
static void tile_loop_begin(matmul_gen *g, tile_loop *t, LLVMValueRef row0, LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    /* Declared 16-byte aligned: ptxas then merges a thread's reads of 4 neighbouring floats
     * into one 16-byte load (LDS.128). In the template's kernel it knows where its
     * whole-program compile puts As and Bs; nvJitLink's relocatable compile trusts only the
     * declared alignment, and with 4 kept block_tiled's 128 scalar reads a tile for 32
     * (0.78x the template's kernel on the H100). */
    t->as = ir_shared_array(ir, "As", ir->f32, (unsigned)(g->bm * g->bk), 16);
    t->bs = ir_shared_array(ir, "Bs", ir->f32, (unsigned)(g->bk * g->bn), 16);
    t->k0 = ir_var(ir, ir->i32, i32c(g, 0), "k0");
    ir_while(ir, &t->loop);
    ir_do(ir, &t->loop, ir_ult(ir, ir_get(ir, t->k0), g->k));
    LLVMValueRef k0 = ir_get(ir, t->k0);
    load_tile(g, t->as, g->a, g->bm, g->bk, row0, k0, g->m, g->k);
    load_tile(g, t->bs, g->b, g->bk, g->bn, k0, col0, g->k, g->n);
    ir_barrier(ir);
}

/* ... barrier; } */
static void tile_loop_end(matmul_gen *g, tile_loop *t)
{
    ir_builder *ir = g->ir;
    ir_barrier(ir);
    ir_set(ir, t->k0, ir_add(ir, ir_get(ir, t->k0), i32c(g, g->bk)));
    ir_end_while(ir, &t->loop);
}

/* &base[index] for a constant index. A thread's shared reads are one address computed at run
 * time plus constants; kept as two steps, the constants stay immediate offsets of the loads
 * ([%rd5+768]). Folded into one index, the passes may turn the addition into an `or` that
 * NVPTX then cannot see through: a 64-bit address register per load, and spills. */
static LLVMValueRef at_offset(matmul_gen *g, LLVMTypeRef element, LLVMValueRef base,
                              long long index)
{
    return ir_at(g->ir, element, base, ir_i64(g->ir, index));
}

/* The float at base + index (a constant index). */
static LLVMValueRef shared_at(matmul_gen *g, LLVMValueRef base, long long index)
{
    return ir_load(g->ir, g->ir->f32, at_offset(g, g->ir->f32, base, index), 4);
}

/* &tile[index], the thread's base in a shared tile. */
static LLVMValueRef thread_base(matmul_gen *g, LLVMValueRef tile, LLVMValueRef index)
{
    return ir_at(g->ir, g->ir->f32, tile, index);
}

/* Step 3: BM x BK of A and BK x BN of B staged in shared memory, one element of C per thread:
 * each element fetched from global memory serves BN (or BM) multiply-adds. */
static void matmul_tiled(matmul_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMValueRef row0, col0;
    tile_origin(g, &row0, &col0);
    LLVMValueRef tr = ir_udiv(ir, g->tid, i32c(g, g->bn));
    LLVMValueRef tc = ir_urem(ir, g->tid, i32c(g, g->bn));
    LLVMValueRef acc;
    zero_accumulators(g, &acc, 1);
    tile_loop t;
    tile_loop_begin(g, &t, row0, col0);
    LLVMValueRef a = thread_base(g, t.as, ir_mul_nw(ir, tr, i32c(g, g->bk)));
    LLVMValueRef b = thread_base(g, t.bs, tc);
    for (int k = 0; k < g->bk; k++)
        fma_into(g, acc, shared_at(g, a, k), shared_at(g, b, k * g->bn));
    tile_loop_end(g, &t);
    store_inside(g, ir_add(ir, row0, tr), ir_add(ir, col0, tc), ir_get(ir, acc));
}

/* Step 4: TM rows of one column per thread: one value of B from shared memory feeds TM
 * multiply-adds held in registers. */
static void matmul_tiled_register(matmul_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMValueRef row0, col0, acc[MAX_ACC];
    tile_origin(g, &row0, &col0);
    LLVMValueRef tr = ir_mul_nw(ir, ir_udiv(ir, g->tid, i32c(g, g->bn)), i32c(g, g->tm));
    LLVMValueRef tc = ir_urem(ir, g->tid, i32c(g, g->bn));
    zero_accumulators(g, acc, g->tm);
    tile_loop t;
    tile_loop_begin(g, &t, row0, col0);
    LLVMValueRef a_rows = thread_base(g, t.as, ir_mul_nw(ir, tr, i32c(g, g->bk)));
    LLVMValueRef b_column = thread_base(g, t.bs, tc);
    for (int k = 0; k < g->bk; k++) {
        LLVMValueRef b = shared_at(g, b_column, k * g->bn);
        for (int i = 0; i < g->tm; i++)
            fma_into(g, acc[i], shared_at(g, a_rows, i * g->bk + k), b);
    }
    tile_loop_end(g, &t);
    for (int i = 0; i < g->tm; i++)
        store_inside(g, ir_add(ir, row0, plus(g, tr, i)), ir_add(ir, col0, tc), ir_get(ir, acc[i]));
}

/* Step 5: a TM x TN tile of C per thread, grown by outer products of a column of A's tile and
 * a row of B's: TM + TN shared loads feed TM * TN multiply-adds. */
static void matmul_block_tiled(matmul_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMValueRef row0, col0, acc[MAX_ACC], a[16], b[16];
    tile_origin(g, &row0, &col0);
    LLVMValueRef tr = ir_mul_nw(ir, ir_udiv(ir, g->tid, i32c(g, g->bn / g->tn)), i32c(g, g->tm));
    LLVMValueRef tc = ir_mul_nw(ir, ir_urem(ir, g->tid, i32c(g, g->bn / g->tn)), i32c(g, g->tn));
    zero_accumulators(g, acc, g->tm * g->tn);
    tile_loop t;
    tile_loop_begin(g, &t, row0, col0);
    LLVMValueRef a_rows = thread_base(g, t.as, ir_mul_nw(ir, tr, i32c(g, g->bk)));
    LLVMValueRef b_columns = thread_base(g, t.bs, tc);
    for (int k = 0; k < g->bk; k++) {
        for (int i = 0; i < g->tm; i++)
            a[i] = shared_at(g, a_rows, i * g->bk + k);
        for (int j = 0; j < g->tn; j++)
            b[j] = shared_at(g, b_columns, k * g->bn + j);
        for (int i = 0; i < g->tm; i++)
            for (int j = 0; j < g->tn; j++)
                fma_into(g, acc[i * g->tn + j], a[i], b[j]);
    }
    tile_loop_end(g, &t);
    for (int i = 0; i < g->tm; i++)
        for (int j = 0; j < g->tn; j++)
            store_inside(g, ir_add(ir, row0, plus(g, tr, i)), ir_add(ir, col0, plus(g, tc, j)),
                         ir_get(ir, acc[i * g->tn + j]));
}

/* ---- step 6: block tiling with 16-byte vectors and double buffers ---- */

/* A thread's TM x TN tile is TM/4 x TN/4 blocks of 4 x 4, spread BM/(TM/4) and BN/(TN/4)
 * apart; a warp covers 4 x 8 threads, so its shared reads are 4 and 8 distinct vectors. A is
 * stored transposed (k-major, rows padded by 4 floats): 4 rows of A in one 16-byte load. */
typedef struct {
    LLVMValueRef tiles;       /* float a[2][BK][BM + 4], b[2][BK][BN] */
    LLVMValueRef tr, tc;      /* this thread's row and column of threads */
    LLVMValueRef vector_rows; /* every row 16-byte aligned: vector global accesses */
    LLVMValueRef ra[MAX_VECTORS], rb[MAX_VECTORS]; /* the next tiles, <4 x float> variables */
    int a_vectors, b_vectors;
} btv_state;

enum { PAD_A = 4 };

static int btv_a_floats(const matmul_gen *g)
{
    return g->bk * (g->bm + PAD_A);
}

/* &a[buffer][0][0] or &b[buffer][0][0], buffer an i32. */
static LLVMValueRef btv_buffer(matmul_gen *g, btv_state *s, int is_b, LLVMValueRef buffer)
{
    ir_builder *ir = g->ir;
    const int floats = is_b ? g->bk * g->bn : btv_a_floats(g);
    LLVMValueRef first = ir_mul_nw(ir, buffer, i32c(g, floats));
    if (is_b)
        first = ir_add_nw(ir, first, i32c(g, 2 * btv_a_floats(g)));
    return ir_at(ir, ir->f32, s->tiles, first);
}

/* Four elements of row r from column c on, as one vector: a 16-byte load where rows are whole
 * vectors (c < cols then means c + 3 < cols), else one element at a time; zeros outside. */
static LLVMValueRef load_four(matmul_gen *g, LLVMValueRef p, LLVMValueRef r, LLVMValueRef c,
                              LLVMValueRef rows, LLVMValueRef cols, int whole)
{
    ir_builder *ir = g->ir;
    LLVMTypeRef vector = LLVMVectorType(ir->f32, 4);
    if (!whole) {
        LLVMValueRef v = LLVMGetUndef(vector);
        for (int j = 0; j < 4; j++)
            v = ir_with_element(ir, v, load_or_zero(g, p, r, plus(g, c, j), rows, cols), j);
        return v;
    }
    LLVMValueRef v = ir_var(ir, vector, ir_zero(vector), "vector");
    ir_if_state in;
    ir_if(ir, &in, inside(g, r, rows, c, cols));
    LLVMValueRef at = ir_at(ir, ir->f32, p, element_index(g, r, cols, c));
    ir_set(ir, v, ir_load_readonly(ir, vector, at, 16));
    ir_end_if(ir, &in);
    return ir_get(ir, v);
}

static void btv_fetch_path(matmul_gen *g, btv_state *s, LLVMValueRef row0, LLVMValueRef col0,
                           LLVMValueRef k0, int whole)
{
    ir_builder *ir = g->ir;
    for (int v = 0; v < s->a_vectors; v++) {
        LLVMValueRef i = plus(g, g->tid, v * g->threads);
        LLVMValueRef r = ir_add(ir, row0, ir_udiv(ir, i, i32c(g, g->bk / 4)));
        LLVMValueRef k = ir_add(ir, k0, mad(g, ir_urem(ir, i, i32c(g, g->bk / 4)), 4, i32c(g, 0)));
        ir_set(ir, s->ra[v], load_four(g, g->a, r, k, g->m, g->k, whole));
    }
    for (int v = 0; v < s->b_vectors; v++) {
        LLVMValueRef i = plus(g, g->tid, v * g->threads);
        LLVMValueRef k = ir_add(ir, k0, ir_udiv(ir, i, i32c(g, g->bn / 4)));
        LLVMValueRef c = ir_add(ir, col0, mad(g, ir_urem(ir, i, i32c(g, g->bn / 4)), 4, i32c(g, 0)));
        ir_set(ir, s->rb[v], load_four(g, g->b, k, c, g->k, g->n, whole));
    }
}

/* The next tiles into registers: 16-byte loads when every row is 16-byte aligned, else
 * single elements. */
static void btv_fetch(matmul_gen *g, btv_state *s, LLVMValueRef row0, LLVMValueRef col0,
                      LLVMValueRef k0)
{
    ir_if_state vectors;
    ir_if(g->ir, &vectors, s->vector_rows);
    btv_fetch_path(g, s, row0, col0, k0, 1);
    ir_else(g->ir, &vectors);
    btv_fetch_path(g, s, row0, col0, k0, 0);
    ir_end_if(g->ir, &vectors);
}

/* The fetched tiles into shared buffer `buffer`: A transposed one element at a time, B as
 * vectors. */
static void btv_store(matmul_gen *g, btv_state *s, LLVMValueRef buffer)
{
    ir_builder *ir = g->ir;
    LLVMValueRef a = btv_buffer(g, s, 0, buffer), b = btv_buffer(g, s, 1, buffer);
    for (int v = 0; v < s->a_vectors; v++) {
        LLVMValueRef i = plus(g, g->tid, v * g->threads);
        LLVMValueRef r = ir_udiv(ir, i, i32c(g, g->bk / 4));
        LLVMValueRef k = ir_mul_nw(ir, ir_urem(ir, i, i32c(g, g->bk / 4)), i32c(g, 4));
        LLVMValueRef vector = ir_get(ir, s->ra[v]);
        for (int j = 0; j < 4; j++) {
            LLVMValueRef slot = mad(g, plus(g, k, j), g->bm + PAD_A, r);
            ir_store(ir, ir_element(ir, vector, j), ir_at(ir, ir->f32, a, slot), 4);
        }
    }
    for (int v = 0; v < s->b_vectors; v++) {
        LLVMValueRef i = plus(g, g->tid, v * g->threads);
        LLVMValueRef k = ir_udiv(ir, i, i32c(g, g->bn / 4));
        LLVMValueRef c = ir_mul_nw(ir, ir_urem(ir, i, i32c(g, g->bn / 4)), i32c(g, 4));
        ir_store(ir, ir_get(ir, s->rb[v]), ir_at(ir, ir->f32, b, mad(g, k, g->bn, c)), 16);
    }
}

/* The BK outer products of buffer `buffer` into acc: TM/4 + TN/4 shared vector loads each. */
static void btv_multiply(matmul_gen *g, btv_state *s, LLVMValueRef *acc, LLVMValueRef buffer)
{
    ir_builder *ir = g->ir;
    LLVMTypeRef vector = LLVMVectorType(ir->f32, 4);
    LLVMValueRef a_tile = btv_buffer(g, s, 0, buffer), b_tile = btv_buffer(g, s, 1, buffer);
    LLVMValueRef a_rows = thread_base(g, a_tile, ir_mul_nw(ir, s->tr, i32c(g, 4)));
    LLVMValueRef b_columns = thread_base(g, b_tile, ir_mul_nw(ir, s->tc, i32c(g, 4)));
    const int thread_rows = g->bm / g->tm, thread_cols = g->bn / g->tn;
    LLVMValueRef a[16], b[16];
    for (int k = 0; k < g->bk; k++) {
        for (int q = 0; q < g->tm / 4; q++) {
            LLVMValueRef at = at_offset(g, ir->f32, a_rows, k * (g->bm + PAD_A) + q * thread_rows * 4);
            LLVMValueRef v = ir_load(ir, vector, at, 16);
            for (int j = 0; j < 4; j++)
                a[q * 4 + j] = ir_element(ir, v, j);
        }
        for (int q = 0; q < g->tn / 4; q++) {
            LLVMValueRef at = at_offset(g, ir->f32, b_columns, k * g->bn + q * thread_cols * 4);
            LLVMValueRef v = ir_load(ir, vector, at, 16);
            for (int j = 0; j < 4; j++)
                b[q * 4 + j] = ir_element(ir, v, j);
        }
        for (int i = 0; i < g->tm; i++)
            for (int j = 0; j < g->tn; j++)
                fma_into(g, acc[i * g->tn + j], a[i], b[j]);
    }
}

/* The thread's TM x TN tile into C, row by row in runs of 4: 16-byte stores where C's rows are
 * whole vectors, else the elements inside C one at a time. */
static void btv_store_c(matmul_gen *g, btv_state *s, LLVMValueRef *acc, LLVMValueRef row0,
                        LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    LLVMTypeRef vector = LLVMVectorType(ir->f32, 4);
    const int thread_rows = g->bm / g->tm, thread_cols = g->bn / g->tn;
    for (int i = 0; i < g->tm; i++) {
        LLVMValueRef r = ir_add(ir, row0, mad(g, s->tr, 4, i32c(g, i / 4 * thread_rows * 4 + i % 4)));
        ir_if_state row_in;
        ir_if(ir, &row_in, ir_ult(ir, r, g->m));
        for (int q = 0; q < g->tn / 4; q++) {
            LLVMValueRef c = ir_add(ir, col0, mad(g, s->tc, 4, i32c(g, q * thread_cols * 4)));
            ir_if_state whole;
            ir_if(ir, &whole, ir_and(ir, s->vector_rows, ir_ult(ir, c, g->n)));
            LLVMValueRef v = LLVMGetUndef(vector);
            for (int j = 0; j < 4; j++)
                v = ir_with_element(ir, v, ir_get(ir, acc[i * g->tn + q * 4 + j]), j);
            ir_store(ir, v, ir_at(ir, ir->f32, g->c, element_index(g, r, g->n, c)), 16);
            ir_else(ir, &whole);
            for (int j = 0; j < 4; j++)
                store_inside(g, r, plus(g, c, j), ir_get(ir, acc[i * g->tn + q * 4 + j]));
            ir_end_if(ir, &whole);
        }
        ir_end_if(ir, &row_in);
    }
}

/* Where the thread is among the block's (warps of 4 x 8 threads), and whether every row of
 * A, B and C is whole 16-byte vectors: k and n multiples of 4, the matrices 16-byte aligned. */
static void btv_place(matmul_gen *g, btv_state *s)
{
    ir_builder *ir = g->ir;
    const int warp_cols = g->bn / g->tn / 8;
    LLVMValueRef warp = ir_udiv(ir, g->tid, i32c(g, 32)), lane = ir_urem(ir, g->tid, i32c(g, 32));
    s->tr = mad(g, ir_udiv(ir, warp, i32c(g, warp_cols)), 4, ir_udiv(ir, lane, i32c(g, 8)));
    s->tc = mad(g, ir_urem(ir, warp, i32c(g, warp_cols)), 8, ir_urem(ir, lane, i32c(g, 8)));
    LLVMValueRef addresses = ir_or(ir, ir_or(ir, LLVMBuildPtrToInt(ir->builder, g->a, ir->i64, ""),
                                             LLVMBuildPtrToInt(ir->builder, g->b, ir->i64, "")),
                                   LLVMBuildPtrToInt(ir->builder, g->c, ir->i64, ""));
    LLVMValueRef aligned = ir_eq(ir, ir_and(ir, addresses, ir_i64(ir, 15)), ir_i64(ir, 0));
    LLVMValueRef multiples = ir_eq(ir, ir_and(ir, ir_or(ir, g->k, g->n), i32c(g, 3)), i32c(g, 0));
    s->vector_rows = ir_and(ir, multiples, aligned);
}

/* Step 6: block tiling with 16-byte vectors everywhere, and the next tiles loaded into
 * registers while this one is multiplied (two shared buffers, one barrier per tile). */
static void matmul_block_tiled_vectorized(matmul_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMTypeRef vector = LLVMVectorType(ir->f32, 4);
    btv_state s = {.a_vectors = g->bm * g->bk / 4 / g->threads,
                   .b_vectors = g->bk * g->bn / 4 / g->threads};
    LLVMValueRef row0, col0, acc[MAX_ACC];
    tile_origin(g, &row0, &col0);
    s.tiles = ir_shared_array(ir, "tiles", ir->f32,
                              (unsigned)(2 * btv_a_floats(g) + 2 * g->bk * g->bn), 16);
    btv_place(g, &s);
    zero_accumulators(g, acc, g->tm * g->tn);
    for (int v = 0; v < s.a_vectors; v++)
        s.ra[v] = ir_var(ir, vector, NULL, "ra");
    for (int v = 0; v < s.b_vectors; v++)
        s.rb[v] = ir_var(ir, vector, NULL, "rb");
    btv_fetch(g, &s, row0, col0, i32c(g, 0));
    btv_store(g, &s, i32c(g, 0));
    ir_barrier(ir);
    LLVMValueRef tiles = ir_udiv(ir, ir_add(ir, g->k, i32c(g, g->bk - 1)), i32c(g, g->bk));
    LLVMValueRef t = ir_var(ir, ir->i32, i32c(g, 0), "t");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, t), tiles));
    LLVMValueRef buffer = ir_and(ir, ir_get(ir, t), i32c(g, 1));
    LLVMValueRef next = plus(g, ir_get(ir, t), 1), more = ir_ult(ir, next, tiles);
    ir_if_state fetch, store;
    ir_if(ir, &fetch, more);
    btv_fetch(g, &s, row0, col0, ir_mul(ir, next, i32c(g, g->bk)));
    ir_end_if(ir, &fetch);
    btv_multiply(g, &s, acc, buffer);
    ir_if(ir, &store, more);
    btv_store(g, &s, ir_xor(ir, buffer, i32c(g, 1)));
    ir_end_if(ir, &store);
    ir_barrier(ir);
    ir_set(ir, t, next);
    ir_end_while(ir, &loop);
    btv_store_c(g, &s, acc, row0, col0);
}

/* ---- what the TMA variants share (tensor_core load=tma, wgmma) ---- */

/* The dynamic shared memory from its first 1024-byte boundary, where the swizzle pattern of
 * the TMA's boxes starts over (the host gives 1 KiB of slack). */
static LLVMValueRef swizzle_aligned(matmul_gen *g, LLVMValueRef dynamic)
{
    ir_builder *ir = g->ir;
    LLVMValueRef low = ir_and(ir, ir_shared_address(ir, dynamic), i32c(g, 1023));
    LLVMValueRef pad = ir_and(ir, ir_sub(ir, i32c(g, 1024), low), i32c(g, 1023));
    return ir_byte_offset(ir, dynamic, pad);
}

/* The shared address (i32) of stage `stage`'s mbarrier, the barriers 8 bytes apart from first. */
static LLVMValueRef stage_barrier(matmul_gen *g, LLVMValueRef first, LLVMValueRef stage)
{
    return ir_add(g->ir, first, ir_mul_nw(g->ir, stage, i32c(g, 8)));
}

/* ---- step 7: tensor cores, mma.sync m16n8k8 tf32 ---- */

/* Warps own WM x WN tiles of C; tiles of A and B stream through STAGES shared buffers:
 * - load=cp_async: every thread copies 16-byte pieces; A rows are padded by 16 bytes (ldmatrix
 *   conflict-free), B rows by 32 (the 4 k rows of a fragment in distinct banks); one block
 *   barrier per tile;
 * - load=tma: thread 0 asks the TMA for whole tiles, which land swizzled (the swizzle, not
 *   padding, spreads a fragment load over the banks): A as BM rows of BK * 4 bytes, B as BN / 32
 *   boxes of BK rows of 32 columns; mbarriers per stage instead of the block barrier. */
typedef struct {
    LLVMValueRef stages;             /* the dynamic shared memory (load=tma: 1024-byte aligned) */
    LLVMValueRef warp_row, warp_col; /* this warp's tile of the block's */
    LLVMValueRef full0, empty0;      /* load=tma: shared addresses (i32) of the barrier arrays */
    LLVMValueRef acc[MAX_MMA_TILES][4];
    int mt, nt, a_pitch, b_pitch, stage_floats;
    int a_bytes, stage_bytes; /* load=tma: the A tile's bytes, a stage's */
    int b_vector; /* B fragments per load: permuted columns make a thread's values adjacent */
} tc_state;

typedef struct {
    LLVMValueRef a[MAX_MMA_TILES][4], b[MAX_MMA_TILES][2];
} tc_fragments;

/* Stage `index` (an i32) of the pipeline. */
static LLVMValueRef tc_stage(matmul_gen *g, tc_state *s, LLVMValueRef index)
{
    if (g->tma)
        return ir_byte_offset(g->ir, s->stages,
                              ir_mul_nw(g->ir, index, i32c(g, s->stage_bytes)));
    return ir_at(g->ir, g->ir->f32, s->stages, ir_mul_nw(g->ir, index, i32c(g, s->stage_floats)));
}

/* One rows x cols tile of p at (r0, c0) into a pitched shared tile, 16 bytes per cp.async;
 * chunks outside the matrix become zeros (source size 0, source address the matrix's start). */
static void tc_copy_tile(matmul_gen *g, LLVMValueRef tile, int pitch, LLVMValueRef p, int rows,
                         int cols, LLVMValueRef r0, LLVMValueRef c0, LLVMValueRef row_count,
                         LLVMValueRef col_count)
{
    ir_builder *ir = g->ir;
    for (int v = 0; v < rows * cols / 4 / g->threads; v++) {
        LLVMValueRef i = plus(g, g->tid, v * g->threads);
        LLVMValueRef r = ir_udiv(ir, i, i32c(g, cols / 4));
        LLVMValueRef c = ir_mul_nw(ir, ir_urem(ir, i, i32c(g, cols / 4)), i32c(g, 4));
        LLVMValueRef gr = ir_add(ir, r0, r), gc = ir_add(ir, c0, c);
        LLVMValueRef in = inside(g, gr, row_count, gc, col_count);
        LLVMValueRef chunk = ir_at(ir, ir->f32, p, element_index(g, gr, col_count, gc));
        ir_cp_async_16(ir, ir_at(ir, ir->f32, tile, mad(g, r, pitch, c)), ir_select(ir, in, chunk, p),
                       ir_select(ir, in, i32c(g, 16), i32c(g, 0)));
    }
}

/* The tiles of A and B at k0 into a stage, one commit group. */
static void tc_load_stage(matmul_gen *g, tc_state *s, LLVMValueRef stage, LLVMValueRef row0,
                          LLVMValueRef col0, LLVMValueRef k0)
{
    ir_builder *ir = g->ir;
    LLVMValueRef bs = ir_at(ir, ir->f32, stage, i32c(g, g->bm * s->a_pitch));
    tc_copy_tile(g, stage, s->a_pitch, g->a, g->bm, g->bk, row0, k0, g->m, g->k);
    tc_copy_tile(g, bs, s->b_pitch, g->b, g->bk, g->bn, k0, col0, g->k, g->n);
    ir_cp_async_commit(ir);
}

/* Tile `index` (an i32) of K into its stage, index % STAGES; past the last tile an empty
 * group, so that cp.async.wait_group's count means the same on every turn. */
static void tc_issue(matmul_gen *g, tc_state *s, LLVMValueRef index, LLVMValueRef tiles,
                     LLVMValueRef row0, LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    ir_if_state exists;
    ir_if(ir, &exists, ir_ult(ir, index, tiles));
    tc_load_stage(g, s, tc_stage(g, s, ir_urem(ir, index, i32c(g, g->stages))), row0, col0,
                  ir_mul(ir, index, i32c(g, g->bk)));
    ir_else(ir, &exists);
    ir_cp_async_commit(ir);
    ir_end_if(ir, &exists);
}

/* fp32 to tf32, rounded to nearest (ties away from zero): the tensor core reads the top 19
 * bits, so adding half a unit of the 13 dropped bits is the whole rounding. */
static LLVMValueRef to_tf32(matmul_gen *g, LLVMValueRef bits)
{
    return ir_add(g->ir, bits, i32c(g, 0x1000));
}

/* The A fragments of k step k of a stage: one ldmatrix x4 per 16-row mma tile, lane l
 * addressing row l % 8 of matrix l / 8 (rows 0-7 | 8-15, k 0-3 | 4-7), rounded to tf32. */
static void tc_load_a(matmul_gen *g, tc_state *s, tc_fragments *f, LLVMValueRef stage, int k)
{
    ir_builder *ir = g->ir;
    LLVMValueRef lane = ir_urem(ir, g->tid, i32c(g, 32)), q = ir_udiv(ir, lane, i32c(g, 8));
    LLVMValueRef lane_row = mad(g, ir_urem(ir, q, i32c(g, 2)), 8, ir_urem(ir, lane, i32c(g, 8)));
    LLVMValueRef lane_k = ir_mul_nw(ir, ir_udiv(ir, q, i32c(g, 2)), i32c(g, 4));
    LLVMValueRef first_row = mad(g, s->warp_row, g->wm, lane_row);
    LLVMValueRef base = thread_base(g, stage, mad(g, first_row, s->a_pitch, lane_k));
    for (int m = 0; m < s->mt; m++) {
        ir_ldmatrix_x4(ir, at_offset(g, ir->f32, base, m * 16 * s->a_pitch + k), f->a[m]);
        for (int i = 0; i < 4; i++)
            f->a[m][i] = to_tf32(g, f->a[m][i]);
    }
}

/* The B fragments of k step k: element (k = t, column g) of each 8 x 8 tile, rows t and t + 4.
 * n tile n covers the warp's columns n, n + NT, n + 2 NT, ..., so a thread's values of all NT
 * tiles in one k row are adjacent: B_VECTOR per load (rows padded by 32 bytes: conflict-free). */
static void tc_load_b(matmul_gen *g, tc_state *s, tc_fragments *f, LLVMValueRef stage, int k)
{
    ir_builder *ir = g->ir;
    LLVMValueRef lane = ir_urem(ir, g->tid, i32c(g, 32));
    LLVMValueRef group = ir_udiv(ir, lane, i32c(g, 4)), t = ir_urem(ir, lane, i32c(g, 4));
    LLVMValueRef bs = ir_at(ir, ir->f32, stage, i32c(g, g->bm * s->a_pitch));
    LLVMValueRef column = mad(g, s->warp_col, g->wn, ir_mul_nw(ir, group, i32c(g, s->nt)));
    LLVMTypeRef chunk = s->b_vector > 1 ? LLVMVectorType(ir->i32, (unsigned)s->b_vector) : ir->i32;
    LLVMValueRef base = thread_base(g, bs, mad(g, t, s->b_pitch, column));
    for (int half = 0; half < 2; half++) {
        for (int n = 0; n < s->nt; n += s->b_vector) {
            LLVMValueRef at = at_offset(g, ir->f32, base, (k + 4 * half) * s->b_pitch + n);
            LLVMValueRef v = ir_load(ir, chunk, at, (unsigned)(4 * s->b_vector));
            for (int i = 0; i < s->b_vector; i++)
                f->b[n + i][half] = to_tf32(g, s->b_vector > 1 ? ir_element(ir, v, i) : v);
        }
    }
}

/* load=tma: the TMA's swizzle flips the 16-byte-chunk bits of an offset (bits 4-6, as many as
 * a row spans: A's BK * 4 bytes give 1, 2 or 3; B's 128 bytes 3) with the bits above its
 * 128-byte line. For a fragment load that flip depends only on the thread's row modulo 8 (A:
 * mma tiles are 16 rows apart; B: k steps are 8 rows apart), so an address is a base of the
 * thread's plus (the chunk it wants XOR its flip) plus a constant: one XOR a k step for A,
 * loop-invariant XORs for B, and the tile's offsets stay immediates of the loads. */

/* The A fragments of k step k of a swizzled stage: element (row, col) of the tile is at
 * (row * BK + col) * 4, chunk bits flipped by (row * BK * 4) >> 7. */
static void tc_load_a_swizzled(matmul_gen *g, tc_state *s, tc_fragments *f, LLVMValueRef stage,
                               int k)
{
    ir_builder *ir = g->ir;
    LLVMValueRef lane = ir_urem(ir, g->tid, i32c(g, 32)), q = ir_udiv(ir, lane, i32c(g, 8));
    LLVMValueRef lane_row = mad(g, ir_urem(ir, q, i32c(g, 2)), 8, ir_urem(ir, lane, i32c(g, 8)));
    LLVMValueRef row_bytes = ir_mul_nw(ir, mad(g, s->warp_row, g->wm, lane_row),
                                       i32c(g, g->bk * 4));
    LLVMValueRef flip = ir_shl(ir, ir_and(ir, ir_lshr(ir, row_bytes, i32c(g, 7)),
                                          i32c(g, g->bk * 4 / 16 - 1)), i32c(g, 4));
    /* lanes 16-31 address k 4-7: the second chunk of the step's 32 bytes */
    LLVMValueRef chunk = ir_xor(ir, ir_mul_nw(ir, ir_udiv(ir, q, i32c(g, 2)), i32c(g, 16)), flip);
    LLVMValueRef base = ir_byte_offset(ir, stage, ir_add_nw(ir, row_bytes,
                                                            ir_xor(ir, chunk, i32c(g, k * 4))));
    for (int m = 0; m < s->mt; m++) {
        ir_ldmatrix_x4(ir, at_offset(g, ir->i8, base, m * 16 * g->bk * 4), f->a[m]);
        for (int i = 0; i < 4; i++)
            f->a[m][i] = to_tf32(g, f->a[m][i]);
    }
}

/* The B fragments of k step k of a swizzled stage: (k row, column c) is in box c / 32 at
 * k * 128 + c % 32 * 4, chunk bits flipped by k % 8 (t, or t + 4 for the second half). The
 * thread's NT columns start at a multiple of NT (< 32), so they share a box. */
static void tc_load_b_swizzled(matmul_gen *g, tc_state *s, tc_fragments *f, LLVMValueRef stage,
                               int k)
{
    ir_builder *ir = g->ir;
    LLVMValueRef lane = ir_urem(ir, g->tid, i32c(g, 32));
    LLVMValueRef group = ir_udiv(ir, lane, i32c(g, 4)), t = ir_urem(ir, lane, i32c(g, 4));
    LLVMValueRef column = mad(g, s->warp_col, g->wn, ir_mul_nw(ir, group, i32c(g, s->nt)));
    LLVMValueRef box = ir_udiv(ir, column, i32c(g, 32));
    LLVMValueRef flip = ir_xor(ir, ir_mul_nw(ir, ir_urem(ir, column, i32c(g, 32)), i32c(g, 4)),
                               ir_shl(ir, t, i32c(g, 4)));
    LLVMValueRef row = mad(g, box, g->bk * 128, ir_mul_nw(ir, t, i32c(g, 128)));
    LLVMValueRef base = ir_byte_offset(ir, stage, ir_add_nw(ir, row, i32c(g, s->a_bytes)));
    LLVMTypeRef chunk = s->b_vector > 1 ? LLVMVectorType(ir->i32, (unsigned)s->b_vector) : ir->i32;
    for (int half = 0; half < 2; half++) {
        for (int n = 0; n < s->nt; n += s->b_vector) {
            LLVMValueRef chunk_at = ir_xor(ir, flip, i32c(g, half * 64 + n * 4));
            LLVMValueRef at = at_offset(g, ir->i8, ir_byte_offset(ir, base, chunk_at),
                                        (k + 4 * half) * 128);
            LLVMValueRef v = ir_load(ir, chunk, at, (unsigned)(4 * s->b_vector));
            for (int i = 0; i < s->b_vector; i++)
                f->b[n + i][half] = to_tf32(g, s->b_vector > 1 ? ir_element(ir, v, i) : v);
        }
    }
}

static void tc_load_fragments(matmul_gen *g, tc_state *s, tc_fragments *f, LLVMValueRef stage,
                              int k)
{
    if (g->tma) {
        tc_load_a_swizzled(g, s, f, stage, k);
        tc_load_b_swizzled(g, s, f, stage, k);
    } else {
        tc_load_a(g, s, f, stage, k);
        tc_load_b(g, s, f, stage, k);
    }
}

static void tc_mma_all(matmul_gen *g, tc_state *s, const tc_fragments *f)
{
    ir_builder *ir = g->ir;
    for (int m = 0; m < s->mt; m++)
        for (int n = 0; n < s->nt; n++) {
            LLVMValueRef *acc = s->acc[m * s->nt + n], d[4];
            for (int i = 0; i < 4; i++)
                d[i] = ir_get(ir, acc[i]);
            ir_mma_tf32(ir, d, f->a[m], f->b[n]);
            for (int i = 0; i < 4; i++)
                ir_set(ir, acc[i], d[i]);
        }
}

/* One BK slice of a stage in k steps of 8. With prefetch the fragments of step k + 8 are
 * loaded before the mma of step k, so their shared-memory latency hides behind the mma. */
static void tc_multiply_stage(matmul_gen *g, tc_state *s, LLVMValueRef stage)
{
    tc_fragments fragments[2];
    if (g->prefetch) {
        tc_load_fragments(g, s, &fragments[0], stage, 0);
        for (int k = 0; k < g->bk; k += 8) {
            if (k + 8 < g->bk)
                tc_load_fragments(g, s, &fragments[(k / 8 + 1) % 2], stage, k + 8);
            tc_mma_all(g, s, &fragments[k / 8 % 2]);
        }
    } else {
        for (int k = 0; k < g->bk; k += 8) {
            tc_load_fragments(g, s, &fragments[0], stage, k);
            tc_mma_all(g, s, &fragments[0]);
        }
    }
}

/* Accumulator (row g [+8], tile column 2t [+1]) of n tile n is C column (2t [+1]) NT + n: for
 * a fixed row the NT tiles give two runs of NT adjacent columns, stored B_VECTOR at a time (N
 * is a multiple of 4: a vector is wholly in or out). */
static void tc_store(matmul_gen *g, tc_state *s, LLVMValueRef row0, LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    LLVMValueRef lane = ir_urem(ir, g->tid, i32c(g, 32));
    LLVMValueRef group = ir_udiv(ir, lane, i32c(g, 4)), t = ir_urem(ir, lane, i32c(g, 4));
    LLVMTypeRef chunk = s->b_vector > 1 ? LLVMVectorType(ir->f32, (unsigned)s->b_vector) : ir->f32;
    LLVMValueRef warp_r = ir_add(ir, row0, ir_mul_nw(ir, s->warp_row, i32c(g, g->wm)));
    LLVMValueRef warp_c = ir_add(ir, col0, ir_mul_nw(ir, s->warp_col, i32c(g, g->wn)));
    const int v = s->b_vector;
    for (int m = 0; m < s->mt; m++)
        for (int h = 0; h < 2; h++) {
            LLVMValueRef r = ir_add(ir, warp_r, plus(g, group, m * 16 + h * 8));
            ir_if_state row_in;
            ir_if(ir, &row_in, ir_ult(ir, r, g->m));
            for (int half = 0; half < 2; half++) {
                LLVMValueRef pair = mad(g, t, 2, i32c(g, half));
                LLVMValueRef c = ir_add(ir, warp_c, ir_mul_nw(ir, pair, i32c(g, s->nt)));
                for (int n = 0; n < s->nt; n += v) {
                    LLVMValueRef column = ir_add(ir, c, i32c(g, n));
                    ir_if_state in;
                    ir_if(ir, &in, ir_ult(ir, column, g->n));
                    LLVMValueRef values = v > 1 ? LLVMGetUndef(chunk) : NULL;
                    for (int i = 0; i < v; i++) {
                        LLVMValueRef x = ir_get(ir, s->acc[m * s->nt + n + i][h * 2 + half]);
                        values = v > 1 ? ir_with_element(ir, values, x, i) : x;
                    }
                    LLVMValueRef at = ir_at(ir, ir->f32, g->c, element_index(g, r, g->n, column));
                    ir_store(ir, values, at, (unsigned)(4 * v));
                    ir_end_if(ir, &in);
                }
            }
            ir_end_if(ir, &row_in);
        }
}

/* load=cp_async: the first STAGES - 1 tiles in flight before the loop; each turn waits for its
 * tile, issues the load of the tile STAGES - 1 ahead (an empty group past the end),
 * multiplies. */
static void tc_pipeline_cp_async(matmul_gen *g, tc_state *s, LLVMValueRef tiles,
                                 LLVMValueRef row0, LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    for (int stage = 0; stage < g->stages - 1; stage++)
        tc_issue(g, s, i32c(g, stage), tiles, row0, col0);
    LLVMValueRef t = ir_var(ir, ir->i32, i32c(g, 0), "t");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, t), tiles));
    ir_cp_async_wait(ir, g->stages - 2);
    ir_barrier(ir); /* tile t landed for every thread; tile t - 1's buffer is free */
    tc_issue(g, s, plus(g, ir_get(ir, t), g->stages - 1), tiles, row0, col0);
    tc_multiply_stage(g, s, tc_stage(g, s, ir_urem(ir, ir_get(ir, t), i32c(g, g->stages))));
    ir_set(ir, t, plus(g, ir_get(ir, t), 1));
    ir_end_while(ir, &loop);
    ir_cp_async_wait(ir, 0);
}

/* load=tma: tile `tile` (an i32) of K into stage `index` (an i32), completing on the stage's
 * "full" barrier: A as one box of BK x BM, B as BN / 32 boxes of 32 columns x BK. Elements
 * outside the matrices arrive as zeros and still count towards the expected bytes. */
static void tc_tma_issue(matmul_gen *g, tc_state *s, LLVMValueRef index, LLVMValueRef tile,
                         LLVMValueRef row0, LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    LLVMValueRef dst = ir_shared_address(ir, tc_stage(g, s, index));
    LLVMValueRef full = stage_barrier(g, s->full0, index), k0 = ir_mul(ir, tile, i32c(g, g->bk));
    LLVMValueRef map_a = ir_param_address(ir, g->a_map), map_b = ir_param_address(ir, g->b_map);
    ir_mbarrier_arrive_expect_tx(ir, full, (unsigned)s->stage_bytes);
    ir_tma_load_2d(ir, dst, map_a, k0, row0, full);
    for (int j = 0; j < g->bn / 32; j++)
        ir_tma_load_2d(ir, ir_add(ir, dst, i32c(g, s->a_bytes + j * g->bk * 128)), map_b,
                       ir_add(ir, col0, i32c(g, j * 32)), k0, full);
}

/* load=tma, before any warp waits: thread 0 initializes the barriers ("full": its own arrival
 * and the stage's bytes; "empty": one arrival per warp) and fills every stage it has a tile
 * for. */
static void tc_tma_start(matmul_gen *g, tc_state *s, LLVMValueRef tiles, LLVMValueRef row0,
                         LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    const unsigned stages = (unsigned)g->stages;
    s->full0 = ir_shared_address(ir, ir_shared_array(ir, "full", ir->i64, stages, 8));
    s->empty0 = ir_shared_address(ir, ir_shared_array(ir, "empty", ir->i64, stages, 8));
    ir_if_state only;
    ir_if(ir, &only, ir_eq(ir, g->tid, i32c(g, 0)));
    for (int stage = 0; stage < g->stages; stage++) {
        ir_mbarrier_init(ir, ir_add(ir, s->full0, i32c(g, 8 * stage)), 1);
        ir_mbarrier_init(ir, ir_add(ir, s->empty0, i32c(g, 8 * stage)), g->threads / 32);
    }
    ir_fence_mbarrier_init(ir);
    for (int stage = 0; stage < g->stages; stage++) {
        ir_if_state exists;
        ir_if(ir, &exists, ir_ult(ir, i32c(g, stage), tiles));
        tc_tma_issue(g, s, i32c(g, stage), i32c(g, stage), row0, col0);
        ir_end_if(ir, &exists);
    }
    ir_end_if(ir, &only);
    ir_barrier(ir);
}

/* load=tma: thread 0 refills each stage as soon as every warp has released it (at the top of
 * the turn after its use, the tile STAGES ahead of it); a warp waits only on the "full" barrier
 * of the tile it multiplies, and releases the stage once all its lanes are done reading. */
static void tc_pipeline_tma(matmul_gen *g, tc_state *s, LLVMValueRef tiles, LLVMValueRef row0,
                            LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    LLVMValueRef stages = i32c(g, g->stages);
    tc_tma_start(g, s, tiles, row0, col0);
    LLVMValueRef t = ir_var(ir, ir->i32, i32c(g, 0), "t");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, t), tiles));
    LLVMValueRef now = ir_get(ir, t), index = ir_urem(ir, now, stages);
    LLVMValueRef refill = plus(g, now, g->stages - 1);
    LLVMValueRef later = ir_and(ir, ir_ult(ir, i32c(g, 0), now), ir_ult(ir, refill, tiles));
    LLVMValueRef producer = ir_and(ir, ir_eq(ir, g->tid, i32c(g, 0)), later);
    ir_if_state refills;
    ir_if(ir, &refills, producer);
    LLVMValueRef before = ir_sub(ir, now, i32c(g, 1)), released = ir_urem(ir, before, stages);
    ir_mbarrier_wait(ir, stage_barrier(g, s->empty0, released),
                     ir_and(ir, ir_udiv(ir, before, stages), i32c(g, 1)));
    tc_tma_issue(g, s, released, refill, row0, col0);
    ir_end_if(ir, &refills);
    ir_mbarrier_wait(ir, stage_barrier(g, s->full0, index),
                     ir_and(ir, ir_udiv(ir, now, stages), i32c(g, 1)));
    tc_multiply_stage(g, s, tc_stage(g, s, index));
    ir_syncwarp(ir); /* every lane's reads of the stage are done */
    ir_if_state lane0;
    ir_if(ir, &lane0, ir_eq(ir, ir_urem(ir, g->tid, i32c(g, 32)), i32c(g, 0)));
    ir_mbarrier_arrive(ir, stage_barrier(g, s->empty0, index));
    ir_end_if(ir, &lane0);
    ir_set(ir, t, plus(g, now, 1));
    ir_end_while(ir, &loop);
}

/* Step 7: warps of mma.sync tiles over a pipeline of STAGES tiles of A and B. */
static void matmul_tensor_core(matmul_gen *g)
{
    ir_builder *ir = g->ir;
    tc_state s = {.mt = g->wm / 16, .nt = g->wn / 8, .a_pitch = g->bk + 4, .b_pitch = g->bn + 8};
    s.stage_floats = g->bm * s.a_pitch + g->bk * s.b_pitch;
    s.a_bytes = g->bm * g->bk * 4;
    s.stage_bytes = (g->bm + g->bn) * g->bk * 4;
    s.b_vector = s.nt % 4 == 0 ? 4 : s.nt % 2 == 0 ? 2 : 1;
    s.stages = ir_dynamic_shared(ir, "stages", 16);
    if (g->tma)
        s.stages = swizzle_aligned(g, s.stages);
    LLVMValueRef row0, col0;
    tile_origin(g, &row0, &col0);
    LLVMValueRef warp = ir_udiv(ir, g->tid, i32c(g, 32));
    s.warp_row = ir_udiv(ir, warp, i32c(g, g->bn / g->wn));
    s.warp_col = ir_urem(ir, warp, i32c(g, g->bn / g->wn));
    for (int i = 0; i < s.mt * s.nt; i++)
        zero_accumulators(g, s.acc[i], 4);
    LLVMValueRef tiles = ir_udiv(ir, ir_add(ir, g->k, i32c(g, g->bk - 1)), i32c(g, g->bk));
    if (g->tma)
        tc_pipeline_tma(g, &s, tiles, row0, col0);
    else
        tc_pipeline_cp_async(g, &s, tiles, row0, col0);
    tc_store(g, &s, row0, col0);
}

/* ---- beyond the write-up: Hopper's wgmma ---- */

/* One producer warpgroup (one thread of it) streams BM x 64 tiles of A and 64 x N tiles of B
 * into STAGES shared buffers with TMA, 128-byte swizzled, each stage completing on a "full"
 * mbarrier; the consumer warpgroups multiply their BM / CONSUMERS rows with wgmma, keeping one
 * group in flight, and release a stage on its "empty" mbarrier once its group is done.
 * setmaxnreg moves registers from producer to consumers. With cluster=2 the two blocks of a
 * cluster (adjacent row tiles) share B: each producer loads every other 64-column box and
 * multicasts it into both blocks' stages, so a stage is free again once the consumers of both
 * blocks released it. sched=persistent: the blocks walk every gridDim-th tile of the raster,
 * the ring of stages running on across tiles; store=tma: C leaves through a swizzled tile of
 * shared memory and TMA stores. */
typedef struct {
    LLVMValueRef stages;        /* in dynamic shared memory, aligned to 1024 bytes */
    LLVMValueRef full0, empty0; /* shared addresses (i32) of the two barrier arrays */
    LLVMValueRef stage, phase;  /* the ring: the next stage and its barriers' phase parity (vars) */
    LLVMValueRef acc[2][MAX_ACC / 2]; /* [m64 tile][accumulator] */
    int mt, b_boxes, a_stage_bytes, stage_bytes, accumulators;
    /* store=tma: C's boxes of c_span bytes x 64 rows */
    int c_span, c_box_cols, c_boxes, c_tile_bytes;
} wg_state;

enum { WG_BK = 64, WG_BOX_BYTES = 64 * 128 };

/* A shared-memory matrix descriptor with the 128-byte swizzle, as two words: the low one
 * (i32), the start address and the leading byte offset, each in units of 16 bytes, which the k
 * loop adds to; the high one, the stride (1024 bytes: an 8-row swizzle atom, for A and B
 * alike) and the swizzle. */
static LLVMValueRef descriptor_low(matmul_gen *g, LLVMValueRef address, unsigned leading)
{
    ir_builder *ir = g->ir;
    LLVMValueRef start = ir_lshr(ir, ir_and(ir, address, i32c(g, 0x3ffff)), i32c(g, 4));
    return ir_or(ir, start, i32c(g, (long long)(leading >> 4) << 16));
}

static LLVMValueRef descriptor_of(matmul_gen *g, LLVMValueRef low)
{
    ir_builder *ir = g->ir;
    const unsigned long long high = (unsigned long long)(1024 >> 4) << 32 | 1ull << 62;
    return ir_or(ir, ir_zext(ir, low, ir->i64), ir_i64(ir, (long long)high));
}

/* The shared address (i32) of stage `stage`. */
static LLVMValueRef wg_stage(matmul_gen *g, wg_state *w, LLVMValueRef stage)
{
    ir_builder *ir = g->ir;
    return ir_add(ir, ir_shared_address(ir, w->stages),
                  ir_mul_nw(ir, stage, i32c(g, w->stage_bytes)));
}

/* The ring's next stage: the phase flips as it wraps around. */
static void wg_advance(matmul_gen *g, wg_state *w)
{
    ir_builder *ir = g->ir;
    LLVMValueRef next = plus(g, ir_get(ir, w->stage), 1);
    LLVMValueRef wrap = ir_eq(ir, next, i32c(g, g->stages));
    ir_set(ir, w->stage, ir_select(ir, wrap, i32c(g, 0), next));
    ir_set(ir, w->phase, ir_xor(ir, ir_get(ir, w->phase), ir_zext(ir, wrap, ir->i32)));
}

/* The B boxes of stage `a` (its shared address) at k0: all of them, or in a cluster those
 * whose index modulo CLUSTER is the block's rank, multicast to every block of the cluster. */
static void wg_load_b(matmul_gen *g, wg_state *w, LLVMValueRef a, LLVMValueRef col0,
                      LLVMValueRef k0, LLVMValueRef full, LLVMValueRef rank)
{
    ir_builder *ir = g->ir;
    LLVMValueRef map_b = ir_param_address(ir, g->b_map);
    for (int j = 0; j < w->b_boxes; j++) {
        LLVMValueRef dst = ir_add(ir, a, i32c(g, w->a_stage_bytes + j * WG_BOX_BYTES));
        LLVMValueRef x = ir_add(ir, col0, i32c(g, j * 64));
        if (g->cluster == 1) {
            ir_tma_load_2d(ir, dst, map_b, x, k0, full);
            continue;
        }
        ir_if_state mine;
        ir_if(ir, &mine, ir_eq(ir, rank, i32c(g, j % g->cluster)));
        ir_tma_load_2d_multicast(ir, dst, map_b, x, k0, full, (1u << g->cluster) - 1);
        ir_end_if(ir, &mine);
    }
}

/* The producer's loads of one tile: each stage reused once the consumers (of every block of
 * the cluster) released it — a fresh barrier's phase before the first counts as complete, so
 * the first round waits on parity phase ^ 1 for nothing. Its "full" barrier expects the whole
 * stage: A, and B from whichever block loads each box. */
static void wg_produce(matmul_gen *g, wg_state *w, LLVMValueRef row0, LLVMValueRef col0,
                       LLVMValueRef tiles, LLVMValueRef rank)
{
    ir_builder *ir = g->ir;
    LLVMValueRef kt = ir_var(ir, ir->i32, i32c(g, 0), "kt");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, kt), tiles));
    LLVMValueRef s = ir_get(ir, w->stage);
    ir_mbarrier_wait(ir, stage_barrier(g, w->empty0, s),
                     ir_xor(ir, ir_get(ir, w->phase), i32c(g, 1)));
    LLVMValueRef full = stage_barrier(g, w->full0, s), a = wg_stage(g, w, s);
    LLVMValueRef k0 = ir_mul(ir, ir_get(ir, kt), i32c(g, WG_BK));
    ir_mbarrier_arrive_expect_tx(ir, full, (unsigned)w->stage_bytes);
    ir_tma_load_2d(ir, a, ir_param_address(ir, g->a_map), k0, row0, full);
    wg_load_b(g, w, a, col0, k0, full, rank);
    wg_advance(g, w);
    ir_set(ir, kt, plus(g, ir_get(ir, kt), 1));
    ir_end_while(ir, &loop);
}

/* One arrival per consumer warp on the stage's "empty" barrier (of every block of the
 * cluster: each block's producer writes into this stage). */
static void wg_release(matmul_gen *g, wg_state *w, LLVMValueRef stage)
{
    ir_builder *ir = g->ir;
    ir_if_state lane0;
    ir_if(ir, &lane0, ir_eq(ir, ir_urem(ir, g->tid, i32c(g, 32)), i32c(g, 0)));
    if (g->cluster == 1) {
        ir_mbarrier_arrive(ir, stage_barrier(g, w->empty0, stage));
    } else {
        for (int r = 0; r < g->cluster; r++)
            ir_mbarrier_arrive_cluster(ir, stage_barrier(g, w->empty0, stage), i32c(g, r));
    }
    ir_end_if(ir, &lane0);
}

/* One stage's wgmma, issued once its data is in and committed as one group: the WG_BK / 16
 * k steps of each of the consumer's MT row tiles (from first_tile). a0 and b0 are the
 * descriptors' low words at the first stage; a stage's, and each instruction's, are those plus
 * the byte offset / 16 (shared memory lies below 256 KiB, so the sum never carries out of the
 * address field). accumulate 0: a tile's first stage, whose first k step overwrites the
 * accumulators (scale-d 0), so they are never zeroed. */
static void wg_issue_stage(matmul_gen *g, wg_state *w, LLVMValueRef a0, LLVMValueRef b0,
                           LLVMValueRef first_tile, int accumulate)
{
    ir_builder *ir = g->ir;
    LLVMValueRef s = ir_get(ir, w->stage);
    ir_mbarrier_wait(ir, stage_barrier(g, w->full0, s), ir_get(ir, w->phase));
    LLVMValueRef at = ir_mul_nw(ir, s, i32c(g, w->stage_bytes / 16));
    LLVMValueRef a = ir_add(ir, a0, at), b = ir_add(ir, b0, at);
    ir_wgmma_fence(ir);
    LLVMValueRef d[MAX_ACC / 2];
    for (int k = 0; k < WG_BK / 16; k++)
        for (int m = 0; m < w->mt; m++) {
            LLVMValueRef a_at =
                ir_add(ir, a, mad(g, plus(g, first_tile, m), WG_BOX_BYTES / 16, i32c(g, k * 2)));
            LLVMValueRef b_at = ir_add(ir, b, i32c(g, k * 16 * 128 / 16));
            for (int i = 0; i < w->accumulators; i++)
                d[i] = ir_get(ir, w->acc[m][i]);
            ir_wgmma(ir, g->tile_n, g->wgmma_types, d, descriptor_of(g, a_at),
                     descriptor_of(g, b_at), accumulate || k > 0);
            for (int i = 0; i < w->accumulators; i++)
                ir_set(ir, w->acc[m][i], d[i]);
        }
    ir_wgmma_commit(ir);
}

/* A consumer's tile: its MT row tiles of 64 times the stage's B, 4 wgmma k steps of 16 per
 * stage. A tile rows are 128 bytes, 8-row swizzle atoms 1024 bytes apart; B is stored as
 * 64-column boxes of 64 k rows (8 KiB each), so k atoms are 1024 bytes apart and column atoms
 * 8 KiB. One group stays in flight while the next stage's is issued; the stage of the group
 * before is released once wgmma.wait_group 1 says it is done. The first stage is issued apart
 * (tiles is at least 1: the host refuses K = 0), as the template's k loop does. */
static void wg_consume(matmul_gen *g, wg_state *w, LLVMValueRef consumer, LLVMValueRef tiles)
{
    ir_builder *ir = g->ir;
    LLVMValueRef first_tile = ir_mul_nw(ir, consumer, i32c(g, w->mt));
    LLVMValueRef shared = ir_shared_address(ir, w->stages);
    LLVMValueRef a0 = descriptor_low(g, shared, 16);
    LLVMValueRef b0 = descriptor_low(g, ir_add(ir, shared, i32c(g, w->a_stage_bytes)),
                                     WG_BOX_BYTES);
    LLVMValueRef held = ir_var(ir, ir->i32, ir_get(ir, w->stage), "held");
    wg_issue_stage(g, w, a0, b0, first_tile, 0);
    wg_advance(g, w);
    LLVMValueRef kt = ir_var(ir, ir->i32, i32c(g, 1), "kt");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, kt), tiles));
    wg_issue_stage(g, w, a0, b0, first_tile, 1);
    ir_wgmma_wait(ir, 1);
    wg_release(g, w, ir_get(ir, held));
    ir_set(ir, held, ir_get(ir, w->stage));
    wg_advance(g, w);
    ir_set(ir, kt, plus(g, ir_get(ir, kt), 1));
    ir_end_while(ir, &loop);
    ir_wgmma_wait(ir, 0);
    /* The accumulators through an empty asm each: the stores read them after the wait. */
    for (int m = 0; m < w->mt; m++)
        for (int i = 0; i < w->accumulators; i++) {
            LLVMValueRef v = ir_get(ir, w->acc[m][i]);
            ir_set(ir, w->acc[m][i], ir_asm(ir, ir->f32, "", "=f,0", &v, 1));
        }
    wg_release(g, w, ir_get(ir, held));
}

/* Accumulator pairs (row w*16 + l/4 (+8), columns 8i + 2(l%4), +1) of each 64 x N tile: a
 * float2, or both rounded to 16 bits in one 32-bit store. N is a multiple of 8: c + 1 < N
 * where c < N. */
static void wg_store(matmul_gen *g, wg_state *w, LLVMValueRef consumer, LLVMValueRef row0,
                     LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    LLVMValueRef t = ir_urem(ir, g->tid, i32c(g, 128));
    LLVMValueRef warp = ir_udiv(ir, t, i32c(g, 32)), lane = ir_urem(ir, t, i32c(g, 32));
    LLVMValueRef lane_row = mad(g, warp, 16, ir_udiv(ir, lane, i32c(g, 4)));
    LLVMValueRef lane_col = ir_mul_nw(ir, ir_urem(ir, lane, i32c(g, 4)), i32c(g, 2));
    LLVMTypeRef pair_type = LLVMVectorType(ir->f32, 2);
    const int bfloat = g->out == LLVMBFloatTypeInContext(ir->context);
    for (int m = 0; m < w->mt; m++) {
        LLVMValueRef tile = mad(g, consumer, w->mt, i32c(g, m));
        LLVMValueRef tile_row = ir_add(ir, row0, mad(g, tile, 64, lane_row));
        for (int i = 0; i < g->tile_n / 8; i++)
            for (int h = 0; h < 2; h++) {
                LLVMValueRef r = ir_add(ir, tile_row, i32c(g, h * 8));
                LLVMValueRef c = ir_add(ir, col0, plus(g, lane_col, i * 8));
                ir_if_state in;
                ir_if(ir, &in, inside(g, r, g->m, c, g->n));
                LLVMValueRef x = ir_get(ir, w->acc[m][i * 4 + h * 2]);
                LLVMValueRef y = ir_get(ir, w->acc[m][i * 4 + h * 2 + 1]);
                LLVMValueRef at = ir_at(ir, g->out, g->c, element_index(g, r, g->n, c));
                if (g->out == ir->f32) {
                    LLVMValueRef pair = ir_with_element(ir, LLVMGetUndef(pair_type), x, 0);
                    ir_store(ir, ir_with_element(ir, pair, y, 1), at, 8);
                } else {
                    ir_store(ir, ir_pack_half2(ir, x, y, bfloat), at, 4);
                }
                ir_end_if(ir, &in);
            }
    }
}

/* bar.sync id, 128: the threads of one consumer warpgroup (the others go on). */
static void warpgroup_barrier(matmul_gen *g, LLVMValueRef id)
{
    ir_builder *ir = g->ir;
    ir_convergent(ir, ir_asm(ir, ir->void_type, "bar.sync $0, 128;", "r,~{memory}", &id, 1));
}

/* store=tma: the consumer's rows of C into its shared tile (element (row, col) of a 64-row box
 * at row * span + its byte in the row, the 16-byte chunk flipped by the offset's bits above 128
 * bytes: the swizzle over the box's span; row * span >> 7 depends on the lane's l / 4 only, the
 * warp's 16 rows and h's 8 being whole swizzle atoms), then one thread has the TMA store the
 * boxes and goes on. The tile is written again only after those stores have read it. */
static void wg_store_tma(matmul_gen *g, wg_state *w, LLVMValueRef consumer, LLVMValueRef row0,
                         LLVMValueRef col0)
{
    ir_builder *ir = g->ir;
    LLVMValueRef t = ir_urem(ir, g->tid, i32c(g, 128));
    LLVMValueRef warp = ir_udiv(ir, t, i32c(g, 32)), lane = ir_urem(ir, t, i32c(g, 32));
    LLVMValueRef quad = ir_udiv(ir, lane, i32c(g, 4)); /* the lane's row in its warp's 8 */
    LLVMValueRef lane_row = mad(g, warp, 16, quad);
    LLVMValueRef lane_byte = ir_mul_nw(ir, ir_urem(ir, lane, i32c(g, 4)),
                                       i32c(g, 2 * (g->out == ir->f32 ? 4 : 2)));
    /* (quad * span >> 7 & (span / 16 - 1)) << 4: the 16-byte chunks the swizzle flips */
    LLVMValueRef atoms = ir_lshr(ir, ir_mul_nw(ir, quad, i32c(g, w->c_span)), i32c(g, 7));
    LLVMValueRef flip =
        ir_shl(ir, ir_and(ir, atoms, i32c(g, w->c_span / 16 - 1)), i32c(g, 4));
    LLVMValueRef tiles = ir_byte_offset(ir, w->stages,
                                        mad(g, consumer, w->c_tile_bytes,
                                            i32c(g, g->stages * w->stage_bytes)));
    LLVMValueRef id = plus(g, consumer, 1), leader = ir_eq(ir, t, i32c(g, 0));
    ir_if_state first;
    ir_if(ir, &first, leader);
    ir_tma_store_wait_read(ir);
    ir_end_if(ir, &first);
    warpgroup_barrier(g, id);
    LLVMTypeRef pair_type = LLVMVectorType(ir->f32, 2);
    const int bfloat = g->out == LLVMBFloatTypeInContext(ir->context), bytes = g->out == ir->f32 ? 4 : 2;
    for (int m = 0; m < w->mt; m++)
        for (int i = 0; i < g->tile_n / 8; i++)
            for (int h = 0; h < 2; h++) {
                const int col = i * 8 % w->c_box_cols, box = m * w->c_boxes + i * 8 / w->c_box_cols;
                LLVMValueRef row = plus(g, lane_row, h * 8);
                LLVMValueRef in_row = ir_xor(ir, plus(g, lane_byte, col * bytes), flip);
                LLVMValueRef at = ir_add(ir, mad(g, row, w->c_span, in_row),
                                         i32c(g, box * 64 * w->c_span));
                LLVMValueRef x = ir_get(ir, w->acc[m][i * 4 + h * 2]);
                LLVMValueRef y = ir_get(ir, w->acc[m][i * 4 + h * 2 + 1]);
                LLVMValueRef p = ir_byte_offset(ir, tiles, at);
                if (g->out == ir->f32) {
                    LLVMValueRef pair = ir_with_element(ir, LLVMGetUndef(pair_type), x, 0);
                    ir_store(ir, ir_with_element(ir, pair, y, 1), p, 8);
                } else {
                    ir_store(ir, ir_pack_half2(ir, x, y, bfloat), p, 4);
                }
            }
    ir_fence_proxy_async_shared(ir);
    warpgroup_barrier(g, id);
    ir_if_state issue;
    ir_if(ir, &issue, leader);
    LLVMValueRef map_c = ir_param_address(ir, g->c_map), base = ir_shared_address(ir, tiles);
    for (int m = 0; m < w->mt; m++) {
        LLVMValueRef r = ir_add(ir, row0, mad(g, consumer, w->mt * 64, i32c(g, m * 64)));
        for (int j = 0; j < w->c_boxes; j++) {
            LLVMValueRef c = ir_add(ir, col0, i32c(g, j * w->c_box_cols));
            ir_if_state in;
            ir_if(ir, &in, inside(g, r, g->m, c, g->n));
            ir_tma_store_2d(ir, map_c, c, r,
                            ir_add(ir, base, i32c(g, (m * w->c_boxes + j) * 64 * w->c_span)));
            ir_end_if(ir, &in);
        }
    }
    ir_tma_store_commit(ir);
    ir_end_if(ir, &issue);
}

/* The stages, aligned to the 1024 bytes over which the 128-byte swizzle repeats (the host
 * gives 1 KiB of slack), and the barriers: "full" completes on the TMA's bytes, "empty" on
 * one arrival per consumer warp (of every block of the cluster). Thread 0 initializes them
 * before anyone waits; in a cluster, before the peer block's multicasts and arrivals too. It
 * first prefetches the tensor maps, whose fetch the first TMA load would otherwise wait for
 * (the template's matmul_wgmma says what that cost). */
static void wg_setup(matmul_gen *g, wg_state *w)
{
    ir_builder *ir = g->ir;
    w->stages = swizzle_aligned(g, ir_dynamic_shared(ir, "dynamic_smem", 16));
    w->full0 = ir_shared_address(ir, ir_shared_array(ir, "full", ir->i64, (unsigned)g->stages, 8));
    w->empty0 = ir_shared_address(ir, ir_shared_array(ir, "empty", ir->i64, (unsigned)g->stages, 8));
    ir_if_state only;
    ir_if(ir, &only, ir_eq(ir, g->tid, i32c(g, 0)));
    ir_prefetch_tensormap(ir, ir_param_address(ir, g->a_map));
    ir_prefetch_tensormap(ir, ir_param_address(ir, g->b_map));
    if (g->store_tma)
        ir_prefetch_tensormap(ir, ir_param_address(ir, g->c_map));
    for (int s = 0; s < g->stages; s++) {
        ir_mbarrier_init(ir, ir_add(ir, w->full0, i32c(g, 8 * s)), 1);
        ir_mbarrier_init(ir, ir_add(ir, w->empty0, i32c(g, 8 * s)),
                         g->consumers * 4 * g->cluster);
    }
    ir_fence_mbarrier_init(ir);
    ir_end_if(ir, &only);
    if (g->cluster > 1)
        ir_cluster_sync(ir);
    else
        ir_barrier(ir);
}

/* The block's tiles: with sched=grid the one of its index; persistent, from its cluster's
 * index on, every gridDim-th of the raster. The body runs with the tile's row0 and col0. */
typedef struct {
    LLVMValueRef t, count, step;
    ir_loop_state loop;
} wg_tile_loop;

static void wg_tiles_begin(matmul_gen *g, wg_tile_loop *l, LLVMValueRef *row0, LLVMValueRef *col0)
{
    ir_builder *ir = g->ir;
    LLVMValueRef first = ir_udiv(ir, ir_sreg(ir, IR_CTAID_X), i32c(g, g->cluster));
    l->count = ir_mul(ir, tiles_along_m(g), tiles_along_n(g));
    l->step = g->persistent ? ir_udiv(ir, ir_sreg(ir, IR_NCTAID_X), i32c(g, g->cluster))
                            : l->count;
    l->t = ir_var(ir, ir->i32, first, "tile");
    ir_while(ir, &l->loop);
    ir_do(ir, &l->loop, ir_ult(ir, ir_get(ir, l->t), l->count));
    tile_origin_at(g, ir_get(ir, l->t), row0, col0);
}

static void wg_tiles_end(matmul_gen *g, wg_tile_loop *l)
{
    ir_set(g->ir, l->t, ir_add(g->ir, ir_get(g->ir, l->t), l->step));
    ir_end_while(g->ir, &l->loop);
}

static void matmul_wgmma(matmul_gen *g)
{
    ir_builder *ir = g->ir;
    const int out_bytes = g->out == ir->f32 ? 4 : 2;
    wg_state w = {.mt = g->bm / (64 * g->consumers), .b_boxes = (g->tile_n + 63) / 64,
                  .a_stage_bytes = g->bm * 128, .accumulators = g->tile_n / 2,
                  .c_span = pj_matmul_c_span(g->tile_n, out_bytes)};
    w.c_box_cols = w.c_span / out_bytes;
    w.stage_bytes = w.a_stage_bytes + w.b_boxes * WG_BOX_BYTES;
    w.c_boxes = g->tile_n / w.c_box_cols > 0 ? g->tile_n / w.c_box_cols : 1;
    w.c_tile_bytes = w.mt * w.c_boxes * 64 * w.c_span;
    wg_setup(g, &w);
    w.stage = ir_var(ir, ir->i32, i32c(g, 0), "stage");
    w.phase = ir_var(ir, ir->i32, i32c(g, 0), "phase");
    ir_if_state role, first;
    /* Broadcast from lane 0, the warpgroup is warp-uniform to the compiler too: the consumers'
     * ring and descriptor arithmetic then stays in uniform registers. */
    LLVMValueRef warpgroup = ir_shfl_idx(ir, ir_udiv(ir, g->tid, i32c(g, 128)), 0);
    LLVMValueRef tiles = ir_add(ir, ir_udiv(ir, ir_sub(ir, g->k, i32c(g, 1)), i32c(g, WG_BK)), i32c(g, 1));
    LLVMValueRef row0, col0;
    wg_tile_loop loop;
    ir_if(ir, &role, ir_eq(ir, warpgroup, i32c(g, 0)));
    ir_setmaxnreg(ir, 0, 40);
    ir_if(ir, &first, ir_eq(ir, g->tid, i32c(g, 0)));
    LLVMValueRef rank = g->cluster > 1 ? ir_cluster_rank(ir) : NULL;
    wg_tiles_begin(g, &loop, &row0, &col0);
    wg_produce(g, &w, row0, col0, tiles, rank);
    wg_tiles_end(g, &loop);
    ir_end_if(ir, &first);
    ir_else(ir, &role);
    ir_setmaxnreg(ir, 1, 232);
    LLVMValueRef consumer = ir_sub(ir, warpgroup, i32c(g, 1));
    /* Never zeroed: each tile's first k step overwrites them. */
    for (int m = 0; m < w.mt; m++)
        for (int i = 0; i < w.accumulators; i++)
            w.acc[m][i] = ir_var(ir, ir->f32, NULL, "acc");
    wg_tiles_begin(g, &loop, &row0, &col0);
    wg_consume(g, &w, consumer, tiles);
    if (g->store_tma)
        wg_store_tma(g, &w, consumer, row0, col0);
    else
        wg_store(g, &w, consumer, row0, col0);
    wg_tiles_end(g, &loop);
    if (g->store_tma) { /* the last stores are done before the block's memory goes */
        ir_if_state leader;
        ir_if(ir, &leader, ir_eq(ir, ir_urem(ir, g->tid, i32c(g, 128)), i32c(g, 0)));
        ir_asm(ir, ir->void_type, "cp.async.bulk.wait_group 0;", "~{memory}", NULL, 0);
        ir_end_if(ir, &leader);
    }
    ir_end_if(ir, &role);
    if (g->cluster > 1) /* the peer's last multicasts and arrivals have landed here */
        ir_cluster_sync(ir);
}

/* ---- the request ---- */

/* The generator's own guard: the shapes whose code it knows how to unroll and whose fixed-size
 * arrays (MAX_ACC, MAX_MMA_TILES, MAX_VECTORS) they fit. The library sends only requests the
 * built-in schema accepted, which are all inside these (the sweeps in the tests check that
 * every accepted request is built); the guard keeps a mismatch a message, never an
 * out-of-bounds write inside the plugin. */
static int shape_is_built(const matmul_gen *g)
{
    const int threads = g->threads, tiled = g->variant >= MATMUL_TILED && g->variant <= MATMUL_TENSOR_CORE;
    if (threads < 32 || threads > 1024 || g->bm < 1 || g->tile_n < 1 || g->group < 1 ||
        (tiled && g->bk < 1))
        return 0;
    switch (g->variant) {
    case MATMUL_TILED_REGISTER:
        return g->tm >= 1 && g->tm <= 16 && g->bm % g->tm == 0;
    case MATMUL_BLOCK_TILED:
        return g->tm >= 1 && g->tm <= 16 && g->tn >= 1 && g->tn <= 16 && g->bm % g->tm == 0 &&
               g->bn % g->tn == 0;
    case MATMUL_BLOCK_TILED_VECTORIZED:
        return g->tm % 4 == 0 && g->tm <= 16 && g->tn % 4 == 0 && g->tn <= 16 && g->bk % 4 == 0 &&
               g->bm % g->tm == 0 && g->bn % g->tn == 0 && g->bn / g->tn % 8 == 0 &&
               g->bm / g->tm % 4 == 0 && g->bm * g->bk / 4 % threads == 0 &&
               g->bk * g->bn / 4 % threads == 0 && g->bm * g->bk / 4 / threads <= MAX_VECTORS &&
               g->bk * g->bn / 4 / threads <= MAX_VECTORS;
    case MATMUL_TENSOR_CORE:
        if (!(g->wm >= 16 && g->wm % 16 == 0 && g->wn >= 8 && g->wn % 8 == 0 &&
              g->bm % g->wm == 0 && g->bn % g->wn == 0 && g->bk % 8 == 0 &&
              g->wm / 16 * (g->wn / 8) <= MAX_MMA_TILES && g->stages >= 2 && g->stages <= 16))
            return 0;
        if (g->tma) /* A rows span 32, 64 or 128 bytes; B comes in boxes of 32 columns */
            return g->bk <= 32 && g->bn % 32 == 0 && g->wn <= 128;
        return g->bm * g->bk / 4 % threads == 0 && g->bk * g->bn / 4 % threads == 0;
    case MATMUL_WGMMA:
        return g->tile_n % 8 == 0 && g->tile_n <= 256 && g->consumers >= 1 &&
               g->consumers <= 2 && (g->bm == 64 * g->consumers || g->bm == 128 * g->consumers) &&
               g->bm / (64 * g->consumers) * g->tile_n / 2 <= MAX_ACC / 2 && g->stages >= 1 &&
               g->stages <= 16 && (g->cluster == 1 || g->cluster == 2);
    default:
        return 1;
    }
}

/* The decoded configuration as the generator keeps it, and the blocks an SM should hold. */
static void read_shape(matmul_gen *g, const matmul_config *c)
{
    g->bm = c->bm;
    g->bn = c->bn;
    g->bk = c->bk;
    g->tm = c->tm;
    g->tn = c->tn;
    g->wm = c->wm;
    g->wn = c->wn;
    g->prefetch = c->prefetch;
    g->tma = c->tma;
    g->cluster = c->cluster;
    g->stages = c->stages;
    g->consumers = c->consumers;
    g->persistent = c->persistent;
    g->store_tma = c->store_tma;
    g->group = c->group;
    g->tile_n = c->tile_n;
    g->threads = c->threads;
    const int mma_accumulators =
        g->variant == MATMUL_TENSOR_CORE && g->wm && g->wn ? g->wm / 16 * (g->wn / 8) * 4 : 0;
    g->min_blocks =
        g->variant == MATMUL_WGMMA || g->threads > 256 || mma_accumulators > 64 ? 1 : 2;
}

/* The element types: f32 in and out (tensor_core rounds to tf32), or for wgmma bf16/f16 in
 * and f32 or the input type out. */
static int read_types(matmul_gen *g, const matmul_config *c)
{
    ir_builder *ir = g->ir;
    if (g->variant != MATMUL_WGMMA) {
        g->out = ir->f32;
        return c->dtype == PJ_DTYPE_f32 && c->out == PJ_DTYPE_f32;
    }
    if (c->dtype != PJ_DTYPE_bf16 && c->dtype != PJ_DTYPE_f16)
        return 0;
    g->wgmma_types = c->dtype == PJ_DTYPE_bf16 ? "bf16.bf16" : "f16.f16";
    if (c->out == PJ_DTYPE_f32)
        g->out = ir->f32;
    else if (c->out == c->dtype)
        g->out = c->out == PJ_DTYPE_bf16 ? LLVMBFloatTypeInContext(ir->context)
                                         : LLVMHalfTypeInContext(ir->context);
    else
        return 0;
    return 1;
}

/* The wgmma parameter that the generator does not build (ping-pong consumers or sched=gemv's
 * columns, B's transpose, the fused epilogue, split-K, swapped operands) that the request sets
 * away from its default, or NULL. */
static const char *unbuilt_wgmma_param(const matmul_config *c)
{
    return c->pingpong || c->gemv ? "sched" : c->b_nk ? "b_layout" : c->alpha ? "alpha"
           : c->beta ? "beta" : c->bias ? "bias" : c->act ? "act" : c->splits > 1 ? "splits"
           : c->swap ? "swap" : NULL;
}

static int read_request(matmul_gen *g, const pj_llvm_request *request, char *error,
                        size_t size)
{
    const pj_param_reader reader = gen_reader(request);
    matmul_config config;
    const int decoded = pj_matmul_decode(&config, &reader).code == PJ_DECODED;
    g->variant = config.variant;
    if (!decoded || !read_types(g, &config) ||
        (g->variant == MATMUL_TENSOR_CORE && !gen_is(request, "mma", "m16n8k8"))) {
        snprintf(error, size, "matmul variant=%s dtype=%s out=%s is not supported by the llvm "
                 "backend's generator; use backend=nvrtc", gen_text(request, "variant"),
                 gen_text(request, "dtype"), gen_text(request, "out"));
        return PJ_LLVM_UNSUPPORTED;
    }
    const char *unbuilt = g->variant == MATMUL_WGMMA ? unbuilt_wgmma_param(&config) : NULL;
    if (unbuilt) {
        snprintf(error, size, "matmul variant=wgmma %s=%s is not supported by the llvm backend; "
                 "use backend=nvrtc", unbuilt, gen_text(request, unbuilt));
        return PJ_LLVM_UNSUPPORTED;
    }
    read_shape(g, &config);
    if (!shape_is_built(g)) {
        snprintf(error, size, "matmul %s is outside the shapes the llvm backend's generator "
                 "builds", request->canonical);
        return PJ_LLVM_UNSUPPORTED;
    }
    return PJ_LLVM_OK;
}

static int gen_matmul(ir_builder *ir, const pj_llvm_request *request, char *error, size_t error_size)
{
    matmul_gen g = {.ir = ir};
    int code = read_request(&g, request, error, error_size);
    if (code != PJ_LLVM_OK)
        return code;
    const ir_param_spec params[] = {
        {"A", ir->global_ptr, 1, 1, 0, 0}, {"B", ir->global_ptr, 1, 1, 0, 0},
        {"C", ir->global_ptr, 1, 0, 0, 0}, {"M", ir->i32, 0, 0, 0, 0},
        {"N", ir->i32, 0, 0, 0, 0},        {"K", ir->i32, 0, 0, 0, 0},
        {"a_map", NULL, 0, 0, 128, 64},    {"b_map", NULL, 0, 0, 128, 64},
        {"c_map", NULL, 0, 0, 128, 64},    {"epilogue", NULL, 0, 0, 16, 8}, /* unused here */
        {"layout", NULL, 0, 0, 80, 8}, /* unused: the op launches these kernels per product */
    };
    ir_kernel(ir, "matmul_kernel", params, (int)(sizeof params / sizeof params[0]), g.threads);
    ir_kernel_min_blocks(ir, g.min_blocks);
    g.a = ir_param(ir, 0);
    g.b = ir_param(ir, 1);
    g.c = ir_param(ir, 2);
    g.m = ir_param(ir, 3);
    g.n = ir_param(ir, 4);
    g.k = ir_param(ir, 5);
    g.a_map = ir_param(ir, 6);
    g.b_map = ir_param(ir, 7);
    g.c_map = ir_param(ir, 8);
    g.tid = ir_sreg(ir, IR_TID_X);
    switch (g.variant) {
    case MATMUL_NAIVE:
    case MATMUL_COALESCING:
        matmul_simple(&g);
        break;
    case MATMUL_TILED:
        matmul_tiled(&g);
        break;
    case MATMUL_TILED_REGISTER:
        matmul_tiled_register(&g);
        break;
    case MATMUL_BLOCK_TILED:
        matmul_block_tiled(&g);
        break;
    case MATMUL_BLOCK_TILED_VECTORIZED:
        matmul_block_tiled_vectorized(&g);
        break;
    case MATMUL_TENSOR_CORE:
        matmul_tensor_core(&g);
        break;
    default:
        matmul_wgmma(&g);
        break;
    }
    ir_kernel_end(ir);
    gen_matmul_stage_rows(ir);
    return PJ_LLVM_OK;
}

const gen_family gen_family_matmul = {"matmul", PJ_MATMUL_LLVM_VERSION, PJ_MATMUL_LLVM_VARIANTS, gen_matmul};

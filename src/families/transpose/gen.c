/* gen.c — the transpose family as LLVM IR, as templates/transpose.cu builds it: the
 * entry transpose_kernel(const E *in, E *out, u32 h, u32 w, tensor_map in_map, tensor_map
 * out_map) with __grid_constant__ maps, the same tiles (square or rows x block), raster order,
 * shared layouts (padded, swizzled boxes, 16-byte micro-tiles, diagonals, in place),
 * persistent stages and TRANSPOSE_TMA traffic, so that
 * src/ops/transpose.c launches it unchanged. A transpose moves bits: E is the unsigned
 * integer of the element's size. Every tile-shape constant is a C int here. */
#include <stdio.h>
#include <string.h>

#include "plugin/gen.h"

#include "families/transpose/shape.h"

typedef transpose_variant variant;

typedef struct {
    ir_builder *ir;
    variant variant;
    int bytes;          /* sizeof(E) */
    LLVMTypeRef e;      /* E */
    int b, h;           /* tile: H input rows x B input columns */
    int per_thread, threads, group;
    int swizzle_mask, box_w, boxes, out_box_w, out_boxes;
    transpose_xpose xpose;
    int inplace, stages;
    LLVMValueRef in, out, height, width, in_map, out_map; /* the parameters */
    LLVMValueRef tid;
} transpose_gen;

static LLVMValueRef i32c(transpose_gen *g, long long v)
{
    return ir_i32(g->ir, v);
}

/* ---- the raster order ---- */

/* The tile (tx, ty) at position linear: row by row, or down GROUP tile rows of a column
 * before the next column. */
static void tile_at(transpose_gen *g, LLVMValueRef linear, LLVMValueRef tiles_x,
                    LLVMValueRef tiles_y, LLVMValueRef *tx, LLVMValueRef *ty)
{
    ir_builder *ir = g->ir;
    if (g->group == 1) {
        *tx = ir_urem(ir, linear, tiles_x);
        *ty = ir_udiv(ir, linear, tiles_x);
        return;
    }
    LLVMValueRef per_group = ir_mul(ir, i32c(g, g->group), tiles_x);
    LLVMValueRef first = ir_mul(ir, ir_udiv(ir, linear, per_group), i32c(g, g->group));
    LLVMValueRef rows = ir_umin(ir, ir_sub(ir, tiles_y, first), i32c(g, g->group));
    LLVMValueRef within = ir_urem(ir, linear, per_group);
    *ty = ir_add(ir, first, ir_urem(ir, within, rows));
    *tx = ir_udiv(ir, within, rows);
}

/* A block per tile over a tiles_x x tiles_y grid. Row by row that is the block's own index. */
static void tile_coords(transpose_gen *g, LLVMValueRef *tx, LLVMValueRef *ty)
{
    ir_builder *ir = g->ir;
    LLVMValueRef bx = ir_sreg(ir, IR_CTAID_X), by = ir_sreg(ir, IR_CTAID_Y);
    if (g->group == 1) {
        *tx = bx;
        *ty = by;
        return;
    }
    LLVMValueRef gx = ir_sreg(ir, IR_NCTAID_X), gy = ir_sreg(ir, IR_NCTAID_Y);
    tile_at(g, ir_add(ir, ir_mul(ir, by, gx), bx), gx, gy, tx, ty);
}

/* ---- step 1: a padded tile in static shared memory ---- */

static LLVMValueRef global_index(transpose_gen *g, LLVMValueRef row, LLVMValueRef stride,
                                 LLVMValueRef col)
{
    ir_builder *ir = g->ir;
    return ir_add(ir, ir_mul(ir, ir_zext(ir, row, ir->i64), ir_zext(ir, stride, ir->i64)),
                  ir_zext(ir, col, ir->i64));
}

/* Each thread copies PER_THREAD rows of a B x (B+1) tile; the padding column puts a tile
 * column's elements in distinct banks. */
static void transpose_smem(transpose_gen *g)
{
    ir_builder *ir = g->ir;
    const int b = g->b, rows = b / g->per_thread;
    LLVMValueRef tile = ir_shared_array(ir, "tile", g->e, (unsigned)(b * (b + 1)),
                                        (unsigned)(g->bytes > 4 ? g->bytes : 4));
    LLVMValueRef tx = ir_urem(ir, g->tid, i32c(g, b)), ty = ir_udiv(ir, g->tid, i32c(g, b));
    LLVMValueRef bx, by;
    tile_coords(g, &bx, &by);
    LLVMValueRef x = ir_add(ir, ir_mul(ir, bx, i32c(g, b)), tx);
    LLVMValueRef y = ir_add(ir, ir_mul(ir, by, i32c(g, b)), ty);
    for (int j = 0; j < b; j += rows) {
        LLVMValueRef row = ir_add(ir, y, i32c(g, j));
        ir_if_state inside;
        ir_if(ir, &inside, ir_and(ir, ir_ult(ir, x, g->width), ir_ult(ir, row, g->height)));
        LLVMValueRef v = ir_load_readonly(ir, g->e, ir_at(ir, g->e, g->in, global_index(g, row, g->width, x)),
                                          (unsigned)g->bytes);
        LLVMValueRef slot = ir_add_nw(ir, ir_mul_nw(ir, ir_add_nw(ir, ty, i32c(g, j)), i32c(g, b + 1)), tx);
        ir_store(ir, v, ir_at(ir, g->e, tile, slot), (unsigned)g->bytes);
        ir_end_if(ir, &inside);
    }
    ir_barrier(ir);
    x = ir_add(ir, ir_mul(ir, by, i32c(g, b)), tx);
    y = ir_add(ir, ir_mul(ir, bx, i32c(g, b)), ty);
    for (int j = 0; j < b; j += rows) {
        LLVMValueRef row = ir_add(ir, y, i32c(g, j));
        ir_if_state inside;
        ir_if(ir, &inside, ir_and(ir, ir_ult(ir, x, g->height), ir_ult(ir, row, g->width)));
        LLVMValueRef slot = ir_add_nw(ir, ir_mul_nw(ir, tx, i32c(g, b + 1)), ir_add_nw(ir, ty, i32c(g, j)));
        LLVMValueRef v = ir_load(ir, g->e, ir_at(ir, g->e, tile, slot), (unsigned)g->bytes);
        ir_store(ir, v, ir_at(ir, g->e, g->out, global_index(g, row, g->height, x)),
                 (unsigned)g->bytes);
        ir_end_if(ir, &inside);
    }
}

/* ---- shared layouts of the TRANSPOSE_TMA variants ---- */

/* The TRANSPOSE_TMA writes a swizzled box by XOR-ing the 16-byte chunk bits (4..6) of each address with
 * its 128-byte row bits (7..9), masked to the mode's width. */
static LLVMValueRef swizzle(transpose_gen *g, LLVMValueRef offset)
{
    if (!g->swizzle_mask)
        return offset;
    ir_builder *ir = g->ir;
    LLVMValueRef bits = ir_and(ir, ir_lshr(ir, offset, i32c(g, 7)), i32c(g, g->swizzle_mask));
    return ir_xor(ir, offset, ir_shl(ir, bits, i32c(g, 4)));
}

/* Byte offset of element (row, col) of a tile of `rows` rows laid out as boxes box_w wide. */
static LLVMValueRef boxed_offset(transpose_gen *g, int rows, int box_w, LLVMValueRef row,
                                 LLVMValueRef col)
{
    ir_builder *ir = g->ir;
    LLVMValueRef box = ir_udiv(ir, col, i32c(g, box_w)), inner = ir_urem(ir, col, i32c(g, box_w));
    LLVMValueRef element = ir_add_nw(ir, ir_mul_nw(ir, ir_add_nw(ir, ir_mul_nw(ir, box, i32c(g, rows)), row),
                                             i32c(g, box_w)),
                                  inner);
    return swizzle(g, ir_mul_nw(ir, element, i32c(g, g->bytes)));
}

/* Which element (row, column) of the tile this thread reads i-th. */
static void element_of(transpose_gen *g, int i, LLVMValueRef *r, LLVMValueRef *c)
{
    ir_builder *ir = g->ir;
    if (g->xpose == XPOSE_DIAGONAL) {
        /* Lane l takes (l, l + d) of a 32 x 32 sub-tile: distinct banks both ways. */
        LLVMValueRef lane = ir_urem(ir, g->tid, i32c(g, 32));
        LLVMValueRef unit = ir_add_nw(ir, ir_udiv(ir, g->tid, i32c(g, 32)),
                                   i32c(g, g->threads / 32 * i));
        LLVMValueRef d = ir_urem(ir, unit, i32c(g, 32)), sub = ir_udiv(ir, unit, i32c(g, 32));
        *r = ir_add_nw(ir, ir_mul_nw(ir, ir_udiv(ir, sub, i32c(g, g->b / 32)), i32c(g, 32)), lane);
        *c = ir_add_nw(ir, ir_mul_nw(ir, ir_urem(ir, sub, i32c(g, g->b / 32)), i32c(g, 32)),
                    ir_urem(ir, ir_add_nw(ir, lane, d), i32c(g, 32)));
        return;
    }
    /* Consecutive threads take consecutive columns of a row. */
    const int column_groups = g->b / g->per_thread;
    *r = ir_udiv(ir, g->tid, i32c(g, column_groups));
    *c = ir_add_nw(ir, ir_urem(ir, g->tid, i32c(g, column_groups)), i32c(g, i * column_groups));
}

/* Every element read first; in place, a barrier separates the reads from the writes. */
static void transpose_elements(transpose_gen *g, LLVMValueRef src, LLVMValueRef dst)
{
    ir_builder *ir = g->ir;
    LLVMValueRef v[64];
    for (int i = 0; i < g->per_thread; i++) {
        LLVMValueRef r, c;
        element_of(g, i, &r, &c);
        v[i] = ir_load(ir, g->e, ir_byte_offset(ir, src, boxed_offset(g, g->h, g->box_w, r, c)),
                       (unsigned)g->bytes);
    }
    if (g->inplace)
        ir_barrier(ir);
    for (int i = 0; i < g->per_thread; i++) {
        LLVMValueRef r, c;
        element_of(g, i, &r, &c);
        ir_store(ir, v[i], ir_byte_offset(ir, dst, boxed_offset(g, g->b, g->out_box_w, c, r)),
                 (unsigned)g->bytes);
    }
}

/* With the 128-byte swizzle a row's 16-byte chunk c sits at chunk c ^ (row % 8). */
static LLVMValueRef chunk_offset_at(transpose_gen *g, LLVMValueRef row, LLVMValueRef chunk)
{
    ir_builder *ir = g->ir;
    LLVMValueRef base = ir_add_nw(ir, ir_mul_nw(ir, ir_udiv(ir, chunk, i32c(g, 8)), i32c(g, g->b * 128)),
                               ir_mul_nw(ir, row, i32c(g, 128)));
    LLVMValueRef spot = ir_xor(ir, ir_urem(ir, chunk, i32c(g, 8)), ir_urem(ir, row, i32c(g, 8)));
    return ir_add_nw(ir, base, ir_mul_nw(ir, spot, i32c(g, 16)));
}

/* The 8 threads of a quarter-warp take micro-tiles (j ^ p, j): 8 distinct chunks when reading
 * rows and when writing them. */
static void micro_tile_of(transpose_gen *g, int i, LLVMValueRef *a, LLVMValueRef *b)
{
    ir_builder *ir = g->ir;
    const int edge = g->b / (16 / g->bytes);
    LLVMValueRef m = ir_add_nw(ir, g->tid, i32c(g, (long long)i * g->threads));
    LLVMValueRef j = ir_urem(ir, m, i32c(g, 8));
    LLVMValueRef p = ir_urem(ir, ir_udiv(ir, m, i32c(g, 8)), i32c(g, 8));
    LLVMValueRef group = ir_udiv(ir, m, i32c(g, 64));
    *a = ir_add_nw(ir, ir_mul_nw(ir, ir_urem(ir, group, i32c(g, edge / 8)), i32c(g, 8)), ir_xor(ir, j, p));
    *b = ir_add_nw(ir, ir_mul_nw(ir, ir_udiv(ir, group, i32c(g, edge / 8)), i32c(g, 8)), j);
}

/* 16-byte micro-tiles of V x V elements: V vector loads, a transpose in registers, V vector
 * stores. */
static void transpose_micro_tiles(transpose_gen *g, LLVMValueRef src, LLVMValueRef dst)
{
    ir_builder *ir = g->ir;
    const int v = 16 / g->bytes, micro = g->per_thread / (v * v);
    LLVMTypeRef chunk = LLVMVectorType(g->e, (unsigned)v);
    LLVMValueRef in[16][16];
    for (int i = 0; i < micro; i++) {
        LLVMValueRef a, b;
        micro_tile_of(g, i, &a, &b);
        for (int k = 0; k < v; k++) {
            LLVMValueRef row = ir_add_nw(ir, ir_mul_nw(ir, a, i32c(g, v)), i32c(g, k));
            in[i][k] = ir_load(ir, chunk, ir_byte_offset(ir, src, chunk_offset_at(g, row, b)), 16);
        }
    }
    if (g->inplace)
        ir_barrier(ir);
    for (int i = 0; i < micro; i++) {
        LLVMValueRef a, b;
        micro_tile_of(g, i, &a, &b);
        for (int k = 0; k < v; k++) {
            LLVMValueRef out = LLVMGetUndef(chunk);
            for (int l = 0; l < v; l++)
                out = ir_with_element(ir, out, ir_element(ir, in[i][l], k), l);
            LLVMValueRef row = ir_add_nw(ir, ir_mul_nw(ir, b, i32c(g, v)), i32c(g, k));
            ir_store(ir, out, ir_byte_offset(ir, dst, chunk_offset_at(g, row, a)), 16);
        }
    }
}

/* ---- TRANSPOSE_TMA traffic ---- */

/* One thread: the tile at (x0, y0) into shared memory, one box per swizzle span. */
static void load_tile(transpose_gen *g, LLVMValueRef tile, LLVMValueRef x0, LLVMValueRef y0,
                      LLVMValueRef bar)
{
    ir_builder *ir = g->ir;
    ir_mbarrier_arrive_expect_tx(ir, bar, (unsigned)(g->b * g->h * g->bytes));
    for (int k = 0; k < g->boxes; k++) {
        LLVMValueRef dst = ir_shared_address(
            ir, ir_byte_offset(ir, tile, i32c(g, (long long)k * g->h * g->box_w * g->bytes)));
        ir_tma_load_2d(ir, dst, ir_param_address(ir, g->in_map),
                       ir_add(ir, x0, i32c(g, (long long)k * g->box_w)), y0, bar);
    }
}

/* One thread: the transposed tile at the mirrored coordinates; commits a bulk group. */
static void store_tile(transpose_gen *g, LLVMValueRef tile_t, LLVMValueRef x0, LLVMValueRef y0)
{
    ir_builder *ir = g->ir;
    for (int k = 0; k < g->out_boxes; k++) {
        LLVMValueRef src = ir_shared_address(
            ir, ir_byte_offset(ir, tile_t, i32c(g, (long long)k * g->b * g->out_box_w * g->bytes)));
        ir_tma_store_2d(ir, ir_param_address(ir, g->out_map),
                        ir_add(ir, y0, i32c(g, (long long)k * g->out_box_w)), x0, src);
    }
    ir_tma_store_commit(ir);
}

static LLVMValueRef thread_0(transpose_gen *g)
{
    return ir_eq(g->ir, g->tid, i32c(g, 0));
}

static void init_barriers(transpose_gen *g, LLVMValueRef first, int count)
{
    ir_builder *ir = g->ir;
    ir_if_state only;
    ir_if(ir, &only, thread_0(g));
    for (int i = 0; i < count; i++)
        ir_mbarrier_init(ir, ir_add(ir, first, i32c(g, 8 * i)), 1);
    ir_fence_proxy_async_shared(ir);
    ir_end_if(ir, &only);
    ir_barrier(ir);
}

/* Transposes a loaded tile into tile_t and makes the writes visible to the TRANSPOSE_TMA. */
static void transpose_tile(transpose_gen *g, LLVMValueRef tile, LLVMValueRef tile_t)
{
    if (g->xpose == XPOSE_VECTOR)
        transpose_micro_tiles(g, tile, tile_t);
    else
        transpose_elements(g, tile, tile_t);
    ir_fence_proxy_async_shared(g->ir);
    ir_barrier(g->ir);
}

static int tile_bytes(const transpose_gen *g)
{
    return g->b * g->h * g->bytes;
}

static int stage_bytes(const transpose_gen *g)
{
    return (2 - g->inplace) * tile_bytes(g);
}

/* The tiles in dynamic shared memory (the host asks for them plus 1024 bytes of slack),
 * aligned to the 1024 bytes over which the 128-byte swizzle repeats. */
static LLVMValueRef aligned_tiles(transpose_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMValueRef base = ir_dynamic_shared(ir, "dynamic_smem", 16);
    LLVMValueRef low = ir_and(ir, ir_shared_address(ir, base), i32c(g, 1023));
    LLVMValueRef pad = ir_and(ir, ir_sub(ir, i32c(g, 1024), low), i32c(g, 1023));
    return ir_byte_offset(ir, base, pad);
}

/* Steps 2-4: one thread asks the TRANSPOSE_TMA for the tile, everyone waits on the mbarrier and
 * transposes in shared memory, one thread stores the result. */
static void transpose_tma(transpose_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMValueRef barrier = ir_shared_array(ir, "barrier", ir->i64, 1, 8);
    LLVMValueRef tile = aligned_tiles(g);
    LLVMValueRef tile_t = ir_byte_offset(ir, tile, i32c(g, stage_bytes(g) - tile_bytes(g)));
    LLVMValueRef bx, by;
    tile_coords(g, &bx, &by);
    LLVMValueRef x0 = ir_mul(ir, bx, i32c(g, g->b)), y0 = ir_mul(ir, by, i32c(g, g->h));
    LLVMValueRef bar = ir_shared_address(ir, barrier);
    init_barriers(g, bar, 1);
    ir_if_state only;
    ir_if(ir, &only, thread_0(g));
    load_tile(g, tile, x0, y0, bar);
    ir_end_if(ir, &only);
    ir_mbarrier_wait(ir, bar, i32c(g, 0));
    transpose_tile(g, tile, tile_t);
    ir_if(ir, &only, thread_0(g));
    store_tile(g, tile_t, x0, y0);
    ir_tma_store_wait_read(ir);
    ir_end_if(ir, &only);
}

/* Persistent blocks: block b moves tiles b, b + grid, ... with the loads of its next STAGES
 * tiles in flight while it transposes and stores one. */
static void transpose_tma_persistent(transpose_gen *g)
{
    ir_builder *ir = g->ir;
    const int s_count = g->stages;
    LLVMValueRef barriers = ir_shared_array(ir, "barriers", ir->i64, (unsigned)s_count, 8);
    LLVMValueRef stages = aligned_tiles(g);
    LLVMValueRef tiles_x = ir_udiv(ir, ir_add(ir, g->width, i32c(g, g->b - 1)), i32c(g, g->b));
    LLVMValueRef tiles_y = ir_udiv(ir, ir_add(ir, g->height, i32c(g, g->h - 1)), i32c(g, g->h));
    LLVMValueRef total = ir_mul(ir, tiles_x, tiles_y);
    LLVMValueRef block = ir_sreg(ir, IR_CTAID_X), grid = ir_sreg(ir, IR_NCTAID_X);
    LLVMValueRef bar0 = ir_shared_address(ir, barriers);
    init_barriers(g, bar0, s_count);
    ir_if_state only, exists;
    ir_if(ir, &only, thread_0(g));
    for (int s = 0; s < s_count; s++) {
        LLVMValueRef t = ir_add(ir, block, ir_mul(ir, i32c(g, s), grid));
        ir_if(ir, &exists, ir_ult(ir, t, total));
        LLVMValueRef tx, ty;
        tile_at(g, t, tiles_x, tiles_y, &tx, &ty);
        load_tile(g, ir_byte_offset(ir, stages, i32c(g, (long long)s * stage_bytes(g))),
                  ir_mul(ir, tx, i32c(g, g->b)), ir_mul(ir, ty, i32c(g, g->h)),
                  ir_add(ir, bar0, i32c(g, 8 * s)));
        ir_end_if(ir, &exists);
    }
    ir_end_if(ir, &only);
    LLVMValueRef t = ir_var(ir, ir->i32, block, "tile_index");
    LLVMValueRef k = ir_var(ir, ir->i32, i32c(g, 0), "round");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, t), total));
    LLVMValueRef s = ir_urem(ir, ir_get(ir, k), i32c(g, s_count));
    LLVMValueRef tile = ir_byte_offset(ir, stages, ir_mul_nw(ir, s, i32c(g, stage_bytes(g))));
    LLVMValueRef tile_t = ir_byte_offset(ir, tile, i32c(g, stage_bytes(g) - tile_bytes(g)));
    LLVMValueRef bar = ir_add(ir, bar0, ir_mul(ir, s, i32c(g, 8)));
    LLVMValueRef tx, ty;
    tile_at(g, ir_get(ir, t), tiles_x, tiles_y, &tx, &ty);
    LLVMValueRef parity = ir_and(ir, ir_udiv(ir, ir_get(ir, k), i32c(g, s_count)), i32c(g, 1));
    ir_mbarrier_wait(ir, bar, parity);
    transpose_tile(g, tile, tile_t);
    ir_if(ir, &only, thread_0(g));
    store_tile(g, tile_t, ir_mul(ir, tx, i32c(g, g->b)), ir_mul(ir, ty, i32c(g, g->h)));
    LLVMValueRef next = ir_add(ir, ir_get(ir, t), ir_mul(ir, i32c(g, s_count), grid));
    ir_if(ir, &exists, ir_ult(ir, next, total));
    LLVMValueRef nx, ny;
    tile_at(g, next, tiles_x, tiles_y, &nx, &ny);
    ir_tma_store_wait_read(ir); /* the stage's tiles are free again */
    load_tile(g, tile, ir_mul(ir, nx, i32c(g, g->b)), ir_mul(ir, ny, i32c(g, g->h)), bar);
    ir_end_if(ir, &exists);
    ir_end_if(ir, &only);
    ir_set(ir, t, ir_add(ir, ir_get(ir, t), grid));
    ir_set(ir, k, ir_add(ir, ir_get(ir, k), i32c(g, 1)));
    ir_end_while(ir, &loop);
    ir_if(ir, &only, thread_0(g));
    ir_tma_store_wait_read(ir);
    ir_end_if(ir, &only);
}

/* ---- the request ---- */

/* The generator's shape of the decoded configuration: boxes one swizzle span wide where the
 * tiles are swizzled (the 16-byte chunk bits the TMA XORs: 1, 3 or 7), else whole tile rows. */
static void read_shape(transpose_gen *g, const transpose_config *config)
{
    g->b = config->block;
    g->h = config->tile_rows;
    g->per_thread = config->per_thread;
    g->threads = config->threads;
    g->group = config->group;
    const int span = config->swizzle_bytes;
    g->swizzle_mask = span ? span / 16 - 1 : 0;
    g->box_w = span ? span / g->bytes : g->b;
    g->boxes = g->b / g->box_w;
    g->out_box_w = span ? span / g->bytes : g->h;
    g->out_boxes = g->h / g->out_box_w;
    g->xpose = config->xpose;
    g->inplace = config->tiles == 1;
    g->stages = config->stages;
}

static int read_request(transpose_gen *g, const pj_llvm_request *request, char *error,
                        size_t size)
{
    const pj_param_reader reader = gen_reader(request);
    transpose_config config = {0};
    const int decoded = pj_transpose_decode(&config, &reader).code == PJ_DECODED;
    g->bytes = decoded ? pj_dtype_bytes(config.dtype) : 0;
    if (!g->bytes) {
        snprintf(error, size, "transpose variant=%s dtype=%s is not supported by the llvm "
                 "backend's generator", gen_text(request, "variant"), gen_text(request, "dtype"));
        return PJ_LLVM_UNSUPPORTED;
    }
    g->variant = config.variant;
    read_shape(g, &config);
    /* The schema's constraints guarantee these; a template that loosened them would need
     * a generator that knows what the new shapes mean. */
    if (g->per_thread < 1 || g->per_thread > 64 || g->threads < 1 || g->threads > 1024 ||
        g->box_w < 1 || g->out_box_w < 1 || g->stages < 0 || g->stages > 8 ||
        (g->xpose == XPOSE_VECTOR && g->per_thread / ((16 / g->bytes) * (16 / g->bytes)) > 16)) {
        snprintf(error, size, "transpose %s is outside the shapes the llvm backend's generator "
                 "builds", request->canonical);
        return PJ_LLVM_UNSUPPORTED;
    }
    return PJ_LLVM_OK;
}

static int gen_transpose(ir_builder *ir, const pj_llvm_request *request, char *error,
                  size_t error_size)
{
    transpose_gen g = {.ir = ir};
    int code = read_request(&g, request, error, error_size);
    if (code != PJ_LLVM_OK)
        return code;
    g.e = LLVMIntTypeInContext(ir->context, (unsigned)g.bytes * 8);
    const ir_param_spec params[] = {
        {"in", ir->global_ptr, 1, 1, 0, 0}, {"out", ir->global_ptr, 1, 0, 0, 0},
        {"h", ir->i32, 0, 0, 0, 0},         {"w", ir->i32, 0, 0, 0, 0},
        {"in_map", NULL, 0, 0, 128, 64},    {"out_map", NULL, 0, 0, 128, 64},
    };
    ir_kernel(ir, "transpose_kernel", params, 6, g.threads);
    g.in = ir_param(ir, 0);
    g.out = ir_param(ir, 1);
    g.height = ir_param(ir, 2);
    g.width = ir_param(ir, 3);
    g.in_map = ir_param(ir, 4);
    g.out_map = ir_param(ir, 5);
    g.tid = ir_sreg(ir, IR_TID_X);
    if (g.variant == TRANSPOSE_SMEM)
        transpose_smem(&g);
    else if (g.stages > 0)
        transpose_tma_persistent(&g);
    else
        transpose_tma(&g);
    ir_kernel_end(ir);
    return PJ_LLVM_OK;
}

const gen_family gen_family_transpose = {"transpose", PJ_TRANSPOSE_LLVM_VERSION, PJ_TRANSPOSE_LLVM_VARIANTS, gen_transpose};

/* gen.c — the reduce family as LLVM IR, step by step as templates/reduce.cu: the
 * same entry (reduce_kernel(const T *in, ACC *out, u64 n)), the same work per thread and
 * block, so that src/ops/reduce.c launches it unchanged. TPB and BATCH are C constants here:
 * the tree's levels, the shuffles and the batch's loads are unrolled as they are emitted. */
#include <stdio.h>
#include <string.h>

#include "plugin/gen.h"

#include "families/reduce/shape.h"

typedef reduce_variant variant;

typedef struct {
    ir_builder *ir;
    variant variant;
    int tpb, batch;
    LLVMTypeRef element;    /* T: i32 or f32; the accumulator is the same type (i32 wraps) */
    LLVMTypeRef vector;     /* 16 bytes: <4 x T> */
    LLVMValueRef in, out, n; /* the kernel's parameters */
    LLVMValueRef tid, bid, grid; /* i32 */
} reduce_gen;

static LLVMValueRef wide(reduce_gen *g, LLVMValueRef value)
{
    return ir_zext(g->ir, value, g->ir->i64);
}

/* Five shuffles down fold the warp's 32 values into lane 0. */
static LLVMValueRef warp_sum(reduce_gen *g, LLVMValueRef v)
{
    for (int offset = 16; offset > 0; offset >>= 1)
        v = ir_add(g->ir, v, ir_shfl_down(g->ir, v, offset));
    return v;
}

/* Steps 1 and 2: halve a shared array with a barrier per level; one partial per block. Step 2
 * stops at 64 partials and lets the first warp finish with shuffles. */
static void block_tree_sum(reduce_gen *g, LLVMValueRef v)
{
    ir_builder *ir = g->ir;
    LLVMValueRef sums = ir_shared_array(ir, "sums", g->element, (unsigned)g->tpb, 4);
    ir_store(ir, v, ir_at(ir, g->element, sums, g->tid), 4);
    ir_barrier(ir);
    const int stop = g->variant == REDUCE_WARP_SHUFFLE ? 32 : 0;
    for (int active = g->tpb / 2; active > stop; active >>= 1) {
        ir_if_state inside;
        ir_if(ir, &inside, ir_ult(ir, g->tid, ir_i32(ir, active)));
        LLVMValueRef mine = ir_at(ir, g->element, sums, g->tid);
        LLVMValueRef other = ir_at(ir, g->element, sums, ir_add(ir, g->tid, ir_i32(ir, active)));
        ir_store(ir, ir_add(ir, ir_load(ir, g->element, mine, 4), ir_load(ir, g->element, other, 4)),
                 mine, 4);
        ir_end_if(ir, &inside);
        ir_barrier(ir);
    }
    LLVMValueRef slot = ir_at(ir, g->element, g->out, wide(g, g->bid));
    ir_if_state first;
    if (g->variant == REDUCE_WARP_SHUFFLE) {
        ir_if(ir, &first, ir_ult(ir, g->tid, ir_i32(ir, 32)));
        LLVMValueRef s = ir_load(ir, g->element, ir_at(ir, g->element, sums, g->tid), 4);
        if (g->tpb > 32) {
            LLVMValueRef upper = ir_at(ir, g->element, sums, ir_add(ir, g->tid, ir_i32(ir, 32)));
            s = ir_add(ir, s, ir_load(ir, g->element, upper, 4));
        }
        s = warp_sum(g, s);
        ir_if_state lane0;
        ir_if(ir, &lane0, ir_eq(ir, g->tid, ir_i32(ir, 0)));
        ir_store(ir, s, slot, 4);
        ir_end_if(ir, &lane0);
        ir_end_if(ir, &first);
    } else {
        ir_if(ir, &first, ir_eq(ir, g->tid, ir_i32(ir, 0)));
        ir_store(ir, ir_load(ir, g->element, ir_at(ir, g->element, sums, ir_i32(ir, 0)), 4), slot,
                 4);
        ir_end_if(ir, &first);
    }
}

/* Steps 3-5: shuffles inside each warp, one shared slot per warp, then the first warp
 * shuffles those and adds the block's sum to the result with one atomic. */
static void block_atomic_sum(reduce_gen *g, LLVMValueRef v)
{
    ir_builder *ir = g->ir;
    v = warp_sum(g, v);
    LLVMValueRef lane = ir_and(ir, g->tid, ir_i32(ir, 31));
    LLVMValueRef warp = ir_lshr(ir, g->tid, ir_i32(ir, 5));
    LLVMValueRef lane_is_0 = ir_eq(ir, lane, ir_i32(ir, 0));
    ir_if_state state;
    if (g->tpb == 32) {
        ir_if(ir, &state, lane_is_0);
        ir_atomic_add(ir, g->out, v);
        ir_end_if(ir, &state);
        return;
    }
    const int warps = g->tpb / 32;
    LLVMValueRef warp_sums = ir_shared_array(ir, "warp_sums", g->element, (unsigned)warps, 4);
    ir_if(ir, &state, lane_is_0);
    ir_store(ir, v, ir_at(ir, g->element, warp_sums, warp), 4);
    ir_end_if(ir, &state);
    ir_barrier(ir);
    ir_if(ir, &state, ir_eq(ir, warp, ir_i32(ir, 0)));
    /* Lanes past the last warp add zero; they must not read past the array. */
    LLVMValueRef x = ir_var(ir, g->element, ir_zero(g->element), "warp_sum");
    ir_if_state in_range;
    ir_if(ir, &in_range, ir_ult(ir, lane, ir_i32(ir, warps)));
    ir_set(ir, x, ir_load(ir, g->element, ir_at(ir, g->element, warp_sums, lane), 4));
    ir_end_if(ir, &in_range);
    LLVMValueRef s = warp_sum(g, ir_get(ir, x));
    ir_if_state first_lane;
    ir_if(ir, &first_lane, lane_is_0);
    ir_atomic_add(ir, g->out, s);
    ir_end_if(ir, &first_lane);
    ir_end_if(ir, &state);
}

/* Steps 1-3: one element per thread, grid-stride. The first element is peeled off the loop:
 * with the usual grid (one element per thread) the loop never runs, and the pointer that
 * LLVM's strength reduction sets up for it (NVVM's loop keeps the index) is set up only when
 * it does; the one-element path was 5% slower with it (one_pass i32). */
static LLVMValueRef thread_sum_strided(reduce_gen *g)
{
    ir_builder *ir = g->ir;
    LLVMValueRef sum = ir_var(ir, g->element, ir_zero(g->element), "sum");
    LLVMValueRef stride = ir_mul(ir, ir_i64(ir, g->tpb), wide(g, g->grid));
    LLVMValueRef first = ir_add(ir, ir_mul(ir, wide(g, g->bid), ir_i64(ir, g->tpb)),
                                wide(g, g->tid));
    ir_if_state any;
    ir_if(ir, &any, ir_ult(ir, first, g->n));
    ir_set(ir, sum, ir_load_readonly(ir, g->element, ir_at(ir, g->element, g->in, first), 4));
    LLVMValueRef i = ir_var(ir, ir->i64, ir_add(ir, first, stride), "i");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, i), g->n));
    LLVMValueRef x = ir_load_readonly(ir, g->element, ir_at(ir, g->element, g->in, ir_get(ir, i)), 4);
    ir_set(ir, sum, ir_add(ir, ir_get(ir, sum), x));
    ir_set(ir, i, ir_add(ir, ir_get(ir, i), stride));
    ir_end_while(ir, &loop);
    ir_end_if(ir, &any);
    return ir_get(ir, sum);
}

/* The lanes of a vector added left to right. */
static LLVMValueRef lanes_sum(reduce_gen *g, LLVMValueRef vector)
{
    LLVMValueRef s = ir_element(g->ir, vector, 0);
    for (int k = 1; k < 4; k++)
        s = ir_add(g->ir, s, ir_element(g->ir, vector, k));
    return s;
}

/* Steps 4 and 5: tiles of TPB * BATCH items; each thread loads its BATCH items, TPB apart so
 * that each load instruction of the warp is coalesced, all before the first add. The block
 * whose turn it would be takes the last, partial tile. Vectors are summed as vectors (four
 * independent sums, folded at the end): the loads stay whole 16-byte loads through the
 * passes, and int32 sums are the same modulo 2^32; f32 sums differ from the template's order
 * by rounding only. */
static LLVMValueRef sum_tiles(reduce_gen *g, LLVMValueRef items, LLVMValueRef count, int is_vector)
{
    ir_builder *ir = g->ir;
    LLVMTypeRef type = is_vector ? g->vector : g->element;
    unsigned align = is_vector ? 16 : 4;
    LLVMValueRef tile = ir_i64(ir, (long long)g->tpb * g->batch);
    LLVMValueRef full_tiles = ir_udiv(ir, count, tile);
    LLVMValueRef sum = ir_var(ir, type, ir_zero(type), "sum");
    LLVMValueRef t = ir_var(ir, ir->i64, wide(g, g->bid), "tile");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, t), full_tiles));
    LLVMValueRef at = ir_at(ir, type, items,
                            ir_add(ir, ir_mul(ir, ir_get(ir, t), tile), wide(g, g->tid)));
    LLVMValueRef v[64];
    for (int i = 0; i < g->batch; i++)
        v[i] = ir_load_readonly(ir, type, ir_at(ir, type, at, ir_i64(ir, (long long)i * g->tpb)),
                                align);
    for (int i = 0; i < g->batch; i++)
        ir_set(ir, sum, ir_add(ir, ir_get(ir, sum), v[i]));
    ir_set(ir, t, ir_add(ir, ir_get(ir, t), wide(g, g->grid)));
    ir_end_while(ir, &loop);
    /* The block whose turn it would be (bid == full_tiles % grid, as the template says) is
     * the one whose walk stopped exactly at full_tiles: the same test without a 64-bit
     * remainder, whose expansion alone costs ptxas 9 of its 26 ms on this kernel. */
    ir_if_state last;
    ir_if(ir, &last, ir_eq(ir, ir_get(ir, t), full_tiles));
    LLVMValueRef base = ir_add(ir, ir_mul(ir, full_tiles, tile), wide(g, g->tid));
    for (int i = 0; i < g->batch; i++) {
        LLVMValueRef index = ir_add(ir, base, ir_i64(ir, (long long)i * g->tpb));
        ir_if_state inside;
        ir_if(ir, &inside, ir_ult(ir, index, count));
        LLVMValueRef item = ir_load_readonly(ir, type, ir_at(ir, type, items, index), align);
        ir_set(ir, sum, ir_add(ir, ir_get(ir, sum), item));
        ir_end_if(ir, &inside);
    }
    ir_end_if(ir, &last);
    return is_vector ? lanes_sum(g, ir_get(ir, sum)) : ir_get(ir, sum);
}

/* Step 5: 16-byte loads. Block 0 adds the elements before the first 16-byte boundary and
 * after the last whole vector, so the input may start at any element. */
static LLVMValueRef thread_sum_vectorized(reduce_gen *g)
{
    ir_builder *ir = g->ir;
    const long long per_vector = 4;
    LLVMValueRef address = LLVMBuildPtrToInt(ir->builder, g->in, ir->i64, "");
    LLVMValueRef misalignment = ir_udiv(ir, ir_and(ir, address, ir_i64(ir, 15)), ir_i64(ir, 4));
    LLVMValueRef to_boundary = ir_umin(ir, ir_sub(ir, ir_i64(ir, per_vector), misalignment), g->n);
    LLVMValueRef head = ir_select(ir, ir_eq(ir, misalignment, ir_i64(ir, 0)), ir_i64(ir, 0),
                                  to_boundary);
    LLVMValueRef vector_count = ir_udiv(ir, ir_sub(ir, g->n, head), ir_i64(ir, per_vector));
    LLVMValueRef vectors = ir_at(ir, g->element, g->in, head);
    LLVMValueRef sum = ir_var(ir, g->element, sum_tiles(g, vectors, vector_count, 1), "total");
    ir_if_state block0, in_head, in_tail;
    ir_if(ir, &block0, ir_eq(ir, g->bid, ir_i32(ir, 0)));
    LLVMValueRef tail = ir_add(ir, head, ir_mul(ir, vector_count, ir_i64(ir, per_vector)));
    ir_if(ir, &in_head, ir_ult(ir, wide(g, g->tid), head));
    LLVMValueRef x = ir_load_readonly(ir, g->element, ir_at(ir, g->element, g->in, wide(g, g->tid)), 4);
    ir_set(ir, sum, ir_add(ir, ir_get(ir, sum), x));
    ir_end_if(ir, &in_head);
    LLVMValueRef index = ir_add(ir, tail, wide(g, g->tid));
    ir_if(ir, &in_tail, ir_ult(ir, index, g->n));
    x = ir_load_readonly(ir, g->element, ir_at(ir, g->element, g->in, index), 4);
    ir_set(ir, sum, ir_add(ir, ir_get(ir, sum), x));
    ir_end_if(ir, &in_tail);
    ir_end_if(ir, &block0);
    return ir_get(ir, sum);
}

static int read_request(reduce_gen *g, const pj_llvm_request *request, char *error, size_t size)
{
    const pj_param_reader reader = gen_reader(request);
    reduce_config config = {0};
    const int decoded = pj_reduce_decode(&config, &reader).code == PJ_DECODED;
    g->variant = config.variant;
    g->tpb = config.tpb;
    g->batch = config.batch;
    if (!decoded || g->tpb < 32 || g->tpb > 1024 || (g->tpb & (g->tpb - 1)) || g->batch < 1 ||
        g->batch > 64) {
        snprintf(error, size, "reduce %s dtype=%s tpb=%d batch=%d is not supported by the llvm "
                 "backend's generator", gen_text(request, "variant"), gen_text(request, "dtype"),
                 g->tpb, g->batch);
        return PJ_LLVM_UNSUPPORTED;
    }
    g->element = config.dtype == PJ_DTYPE_f32 ? g->ir->f32 : g->ir->i32;
    g->vector = LLVMVectorType(g->element, 4);
    return PJ_LLVM_OK;
}

static int gen_reduce(ir_builder *ir, const pj_llvm_request *request, char *error, size_t error_size)
{
    reduce_gen g = {.ir = ir};
    int code = read_request(&g, request, error, error_size);
    if (code != PJ_LLVM_OK)
        return code;
    const ir_param_spec params[] = {
        {"in", ir->global_ptr, 1, 1, 0, 0},
        {"out", ir->global_ptr, 1, 0, 0, 0},
        {"n", ir->i64, 0, 0, 0, 0},
    };
    ir_kernel(ir, "reduce_kernel", params, 3, pj_reduce_threads(g.tpb));
    g.in = ir_param(ir, 0);
    g.out = ir_param(ir, 1);
    g.n = ir_param(ir, 2);
    g.tid = ir_sreg(ir, IR_TID_X);
    g.bid = ir_sreg(ir, IR_CTAID_X);
    g.grid = ir_sreg(ir, IR_NCTAID_X);
    switch (g.variant) {
    case REDUCE_TWO_PASS:
    case REDUCE_WARP_SHUFFLE:
        block_tree_sum(&g, thread_sum_strided(&g));
        break;
    case REDUCE_ONE_PASS:
        block_atomic_sum(&g, thread_sum_strided(&g));
        break;
    case REDUCE_BATCHED:
        block_atomic_sum(&g, sum_tiles(&g, g.in, g.n, 0));
        break;
    default:
        block_atomic_sum(&g, thread_sum_vectorized(&g));
        break;
    }
    ir_kernel_end(ir);
    return PJ_LLVM_OK;
}

const gen_family gen_family_reduce = {"reduce", PJ_REDUCE_LLVM_VERSION, PJ_REDUCE_LLVM_VARIANTS, gen_reduce};

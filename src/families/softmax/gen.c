/* gen.c — the softmax family as LLVM IR, as templates/softmax.cu builds it: the entry
 * softmax_kernel(const E *in, E *out, u64 rows, u32 cols), tpb threads a block (the launch
 * bound), tpb / tpr rows a block, static shared memory for the warps' (max, sum) pairs, the
 * same vector and element-wide paths, rounds, chunks and merges, so that the family's host op
 * launches it unchanged. The rounds, the slots of a thread and the shuffle steps are C loops
 * here: each iteration emits its code, as #pragma unroll unrolls the template's. */
#include <stdio.h>
#include <string.h>

#include "plugin/gen.h"
#include "families/softmax/shape.h"

typedef enum { F32, F16, BF16 } storage;

/* The most 32-bit registers of elements a thread holds (128 bytes, as the schema bounds it). */
#define MAX_SLOTS 32
/* The most rounds of a chunk: 64 16-bit elements one at a time. */
#define MAX_ROUNDS 64

typedef struct {
    ir_builder *ir;
    softmax_shape shape;
    storage dtype;
    LLVMTypeRef e;                    /* the element's bits: i32 or i16 */
    LLVMValueRef in, out, rows, cols; /* the parameters */
    LLVMValueRef t;                   /* the thread's place in its row (i32) */
    LLVMValueRef live;                /* its row is one of the matrix's (i1) */
    LLVMValueRef src, dst;            /* the row's start (the last row's for !live reads) */
    LLVMValueRef part_m, part_s;      /* the warps' pairs: [tpb / 32] floats each */
} softmax_gen;

/* One pass over a thread's share of a chunk: W elements a unit, rounds = per_thread / W units
 * a thread, unit first + r * tpr + t in round r; whole: the chunk lies inside the row. */
typedef struct {
    int w, rounds, whole;
    LLVMValueRef units, first; /* i32 */
} chunk;

static LLVMValueRef f32_const(softmax_gen *g, double value)
{
    return LLVMConstReal(g->ir->f32, value);
}

static LLVMValueRef fcmp_ge(softmax_gen *g, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildFCmp(g->ir->builder, LLVMRealOGE, a, b, "");
}

/* The exponent of exp(x - m) in base 2, and 2^that. */
static LLVMValueRef exp_of(softmax_gen *g, LLVMValueRef x, LLVMValueRef m)
{
    LLVMValueRef exponent = ir_mul(g->ir, ir_sub(g->ir, x, m), f32_const(g, 1.44269504088896341));
    return ir_ex2_approx(g->ir, exponent);
}

/* ---- elements: bits <-> fp32 ---- */

/* An element's bits (the low half for 16-bit types, in an i32) as a float. */
static LLVMValueRef to_float(softmax_gen *g, LLVMValueRef bits)
{
    ir_builder *ir = g->ir;
    switch (g->dtype) {
    case F32:
        return ir_bitcast(ir, bits, ir->f32);
    case BF16:
        return ir_bitcast(ir, ir_shl(ir, bits, ir_i32(ir, 16)), ir->f32);
    default: {
        LLVMTypeRef half = LLVMHalfTypeInContext(ir->context);
        LLVMValueRef h = ir_bitcast(ir, ir_trunc(ir, bits, ir->i16), half);
        return LLVMBuildFPExt(ir->builder, h, ir->f32, "");
    }
    }
}

static LLVMValueRef upper_to_float(softmax_gen *g, LLVMValueRef word)
{
    ir_builder *ir = g->ir;
    if (g->dtype == BF16)
        return ir_bitcast(ir, ir_and(ir, word, ir_i32(ir, (long long)0xffff0000u)), ir->f32);
    return to_float(g, ir_lshr(ir, word, ir_i32(ir, 16)));
}

/* A float rounded to the element type, in the low bits of an i32. */
static LLVMValueRef from_float(softmax_gen *g, LLVMValueRef f)
{
    ir_builder *ir = g->ir;
    if (g->dtype == F32)
        return ir_bitcast(ir, f, ir->i32);
    LLVMValueRef pair = ir_pack_half2(ir, f, f32_const(g, 0.0), g->dtype == BF16);
    return ir_and(ir, pair, ir_i32(ir, 0xffff));
}

/* ---- a thread's registers: element i of its share is word i (f32: the float's bits, replaced
 * by its exponential) or half i % 2 of word i / 2 (16-bit types, as loaded) ---- */

static int words_of(const softmax_gen *g)
{
    const int per_thread = g->shape.items * g->shape.vec;
    return g->dtype == F32 ? per_thread : (per_thread + 1) / 2;
}

/* Whether variant=online keeps the exponentials for the write (the template's HELD): f32 ones
 * replace their values, 16-bit ones go to `kept` up to PJ_SOFTMAX_HELD_MAX a thread. */
static int keeps_exps(const softmax_gen *g)
{
    return g->dtype == F32 || g->shape.items * g->shape.vec <= PJ_SOFTMAX_HELD_MAX;
}

/* Element i as a float: plain shifts and masks (the pass that writes). */
static LLVMValueRef value(softmax_gen *g, LLVMValueRef *x, int i)
{
    ir_builder *ir = g->ir;
    if (g->dtype == F32)
        return ir_bitcast(ir, ir_get(ir, x[i]), ir->f32);
    LLVMValueRef word = ir_get(ir, x[i / 2]);
    return i % 2 ? upper_to_float(g, word) : to_float(g, word);
}

/* The same, spelled with other instructions (a byte permute; a split and a convert) for the
 * pass that sums the exponentials, as the template's value_again: so that no pass's fp32
 * values are kept for the next. */
static LLVMValueRef value_again(softmax_gen *g, LLVMValueRef *x, int i)
{
    ir_builder *ir = g->ir;
    if (g->dtype == F32)
        return ir_bitcast(ir, ir_get(ir, x[i]), ir->f32);
    LLVMValueRef word = ir_get(ir, x[i / 2]);
    if (g->dtype == BF16) {
        LLVMValueRef bits = ir_asm_pure(ir, ir->i32, i % 2 ? "prmt.b32 $0, $1, 0, 0x3244;"
                                                           : "prmt.b32 $0, $1, 0, 0x1044;",
                                        "=r,r", &word, 1);
        return ir_bitcast(ir, bits, ir->f32);
    }
    return ir_asm_pure(ir, ir->f32,
                       i % 2 ? "{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, $1;\n\t"
                               "cvt.f32.f16 $0, hi;\n\t}"
                             : "{\n\t.reg .b16 lo, hi;\n\tmov.b32 {lo, hi}, $1;\n\t"
                               "cvt.f32.f16 $0, lo;\n\t}",
                       "=f,r", &word, 1);
}

/* max.bf16x2 / max.f16x2, and the lowest finite value in both halves. */
static LLVMValueRef max2(softmax_gen *g, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef args[] = {a, b};
    return ir_asm_pure(g->ir, g->ir->i32, g->dtype == BF16 ? "max.bf16x2 $0, $1, $2;"
                                                           : "max.f16x2 $0, $1, $2;",
                       "=r,r,r", args, 2);
}

static LLVMValueRef lowest2(softmax_gen *g)
{
    return ir_i32(g->ir, g->dtype == BF16 ? (long long)0xff7fff7fu : (long long)0xfbfffbffu);
}

/* ---- units: W elements, one access of W * element bytes ---- */

static LLVMTypeRef unit_type(softmax_gen *g, int bytes)
{
    ir_builder *ir = g->ir;
    return bytes == 16 ? LLVMVectorType(ir->i32, 4)
           : bytes == 8 ? LLVMVectorType(ir->i32, 2)
           : bytes == 4 ? ir->i32
                        : ir->i16;
}

/* W elements from p through the non-coherent path into elements i .. i + W - 1. */
static void load_unit(softmax_gen *g, int w, LLVMValueRef p, LLVMValueRef *x, int i)
{
    ir_builder *ir = g->ir;
    const int bytes = w * g->shape.element_bytes;
    LLVMTypeRef type = unit_type(g, bytes);
    LLVMValueRef v = ir_load_readonly(ir, type, p, (unsigned)bytes);
    LLVMValueRef words[4];
    const int count = bytes >= 4 ? bytes / 4 : 1;
    for (int k = 0; k < count; k++)
        words[k] = bytes > 4 ? ir_element(ir, v, k) : ir_zext(ir, v, ir->i32);
    if (g->dtype == F32) {
        for (int k = 0; k < w; k++)
            ir_set(ir, x[i + k], words[k]);
    } else if (w == 1) {
        /* An even element comes first and sets the upper half to the lowest value, which a
         * packed max passes over when no odd element follows. */
        LLVMValueRef slot = x[i / 2];
        if (i % 2)
            ir_set(ir, slot, ir_or(ir, ir_and(ir, ir_get(ir, slot), ir_i32(ir, 0xffff)),
                                   ir_shl(ir, words[0], ir_i32(ir, 16))));
        else
            ir_set(ir, slot, ir_or(ir, words[0],
                                   ir_and(ir, lowest2(g), ir_i32(ir, (long long)0xffff0000u))));
    } else {
        for (int k = 0; k < w / 2; k++)
            ir_set(ir, x[i / 2 + k], words[k]);
    }
}

/* Elements i .. i + W - 1 to p, each y * scale rounded to the element type, with y the kept
 * exponential (kept: f32 ones in x, 16-bit ones in kept) or exp(x - m) (kept NULL). */
static void store_unit(softmax_gen *g, int w, LLVMValueRef p, LLVMValueRef *x, int i,
                       LLVMValueRef *kept, LLVMValueRef m, LLVMValueRef scale)
{
    ir_builder *ir = g->ir;
    const int bytes = w * g->shape.element_bytes;
    LLVMValueRef y[8], words[4];
    for (int k = 0; k < w; k++) {
        LLVMValueRef e = !kept ? exp_of(g, value(g, x, i + k), m)
                         : g->dtype == F32 ? value(g, x, i + k)
                                           : ir_get(ir, kept[i + k]);
        y[k] = ir_mul(ir, e, scale);
    }
    if (g->dtype == F32 || bytes == 2) {
        for (int k = 0; k < w; k++)
            words[k] = from_float(g, y[k]);
    } else {
        for (int k = 0; k < w / 2; k++)
            words[k] = ir_pack_half2(ir, y[2 * k], y[2 * k + 1], g->dtype == BF16);
    }
    LLVMTypeRef type = unit_type(g, bytes);
    LLVMValueRef v;
    if (bytes > 4) {
        v = LLVMGetUndef(type);
        for (int k = 0; k < bytes / 4; k++)
            v = ir_with_element(ir, v, words[k], k);
    } else {
        v = bytes == 4 ? words[0] : ir_trunc(ir, words[0], ir->i16);
    }
    ir_store(ir, v, p, (unsigned)bytes);
}

/* ---- a thread's share of a chunk ---- */

/* How many of the chunk's rounds are the thread's: all of a whole chunk; else those before the
 * row's end, min(ceil((units - first - t) / tpr), rounds), 0 past it. */
static LLVMValueRef rounds_in_row(softmax_gen *g, const chunk *c)
{
    ir_builder *ir = g->ir;
    if (c->whole)
        return ir_i32(ir, c->rounds);
    LLVMValueRef left = ir_sub(ir, c->units, c->first);
    LLVMValueRef ahead = ir_add(ir, ir_sub(ir, left, g->t), ir_i32(ir, g->shape.tpr - 1));
    LLVMValueRef mine = ir_umin(ir, ir_udiv(ir, ahead, ir_i32(ir, g->shape.tpr)),
                                ir_i32(ir, c->rounds));
    return ir_select(ir, ir_ult(ir, g->t, left), mine, ir_i32(ir, 0));
}

/* A pass over the thread's rounds that stops at the first not its own: round r's code is
 * nested in round r - 1's test (as the template's `break`), so each test is made where it is
 * used; a whole chunk has no tests. */
typedef struct {
    ir_if_state tests[MAX_ROUNDS];
    int open;
} round_chain;

static void round_enter(softmax_gen *g, const chunk *c, round_chain *chain, int r,
                        LLVMValueRef mine)
{
    if (c->whole)
        return;
    ir_if(g->ir, &chain->tests[chain->open++], ir_ult(g->ir, ir_i32(g->ir, r), mine));
}

static void round_close(softmax_gen *g, round_chain *chain)
{
    while (chain->open > 0)
        ir_end_if(g->ir, &chain->tests[--chain->open]);
}

/* The thread's first unit of the chunk: rounds follow at constant offsets from it. */
static LLVMValueRef chunk_base(softmax_gen *g, const chunk *c, LLVMValueRef row)
{
    ir_builder *ir = g->ir;
    LLVMValueRef unit = ir_zext(ir, ir_add(ir, c->first, g->t), ir->i64);
    return ir_at(ir, g->e, row, ir_mul(ir, unit, ir_i64(ir, c->w)));
}

static LLVMValueRef round_pointer(softmax_gen *g, const chunk *c, LLVMValueRef base, int r)
{
    return ir_at(g->ir, g->e, base, ir_i64(g->ir, (long long)r * g->shape.tpr * c->w));
}

static void load_chunk(softmax_gen *g, const chunk *c, LLVMValueRef mine, LLVMValueRef *slots)
{
    LLVMValueRef base = chunk_base(g, c, g->src);
    round_chain chain = {.open = 0};
    for (int r = 0; r < c->rounds; r++) {
        round_enter(g, c, &chain, r, mine);
        load_unit(g, c->w, round_pointer(g, c, base, r), slots, r * c->w);
    }
    round_close(g, &chain);
}

/* The variable m grown to the max of the thread's elements: fp32 maxima, or packed 16-bit ones
 * over the words (a round of single elements fills half a word: every other round), unpacked
 * once. */
static void chunk_max(softmax_gen *g, const chunk *c, LLVMValueRef mine, LLVMValueRef *slots,
                      LLVMValueRef m)
{
    ir_builder *ir = g->ir;
    round_chain chain = {.open = 0};
    if (g->dtype == F32) {
        for (int r = 0; r < c->rounds; r++) {
            round_enter(g, c, &chain, r, mine);
            for (int k = 0; k < c->w; k++)
                ir_set(ir, m, ir_fmax(ir, ir_get(ir, m), value(g, slots, r * c->w + k)));
        }
        round_close(g, &chain);
        return;
    }
    LLVMValueRef pair = ir_var(ir, ir->i32, lowest2(g), "pair");
    const int per_round = c->w >= 2 ? c->w / 2 : 1;
    for (int r = 0; r < c->rounds; r += c->w >= 2 ? 1 : 2) {
        round_enter(g, c, &chain, r, mine);
        for (int k = 0; k < per_round; k++)
            ir_set(ir, pair, max2(g, ir_get(ir, pair), ir_get(ir, slots[r * c->w / 2 + k])));
    }
    round_close(g, &chain);
    LLVMValueRef both = ir_get(ir, pair);
    LLVMValueRef top = ir_fmax(ir, to_float(g, both), upper_to_float(g, both));
    ir_set(ir, m, ir_fmax(ir, ir_get(ir, m), top));
}

/* The variable s (if any) plus exp(x - m) over the thread's elements, added in order; f32
 * exponentials replace their values, 16-bit ones go to kept (if any). */
static void chunk_exp_sum(softmax_gen *g, const chunk *c, LLVMValueRef mine, LLVMValueRef *slots,
                          LLVMValueRef *kept, LLVMValueRef m, LLVMValueRef s)
{
    ir_builder *ir = g->ir;
    round_chain chain = {.open = 0};
    for (int r = 0; r < c->rounds; r++) {
        round_enter(g, c, &chain, r, mine);
        for (int k = 0; k < c->w; k++) {
            const int i = r * c->w + k;
            LLVMValueRef e = exp_of(g, value_again(g, slots, i), m);
            if (g->dtype == F32)
                ir_set(ir, slots[i], ir_bitcast(ir, e, ir->i32));
            else if (kept)
                ir_set(ir, kept[i], e);
            if (s)
                ir_set(ir, s, ir_add(ir, ir_get(ir, s), e));
        }
    }
    round_close(g, &chain);
}

static void store_chunk(softmax_gen *g, const chunk *c, LLVMValueRef mine, LLVMValueRef *slots,
                        LLVMValueRef *kept, LLVMValueRef m, LLVMValueRef scale)
{
    ir_builder *ir = g->ir;
    ir_if_state live;
    ir_if(ir, &live, g->live);
    LLVMValueRef base = chunk_base(g, c, g->dst);
    round_chain chain = {.open = 0};
    for (int r = 0; r < c->rounds; r++) {
        round_enter(g, c, &chain, r, mine);
        store_unit(g, c->w, round_pointer(g, c, base, r), slots, r * c->w, kept, m, scale);
    }
    round_close(g, &chain);
    ir_end_if(ir, &live);
}

/* ---- merging (max, sum) pairs ---- */

/* (m, s) with (m2, s2), the same whichever pair is whose: the larger max kept, the other sum
 * scaled down to it with one fma. m and s are variables. */
static void merge(softmax_gen *g, LLVMValueRef m, LLVMValueRef s, LLVMValueRef m2,
                  LLVMValueRef s2)
{
    ir_builder *ir = g->ir;
    LLVMValueRef m1 = ir_get(ir, m), s1 = ir_get(ir, s);
    LLVMValueRef mine = fcmp_ge(g, m1, m2);
    LLVMValueRef hi = ir_select(ir, mine, m1, m2), lo = ir_select(ir, mine, m2, m1);
    LLVMValueRef s_hi = ir_select(ir, mine, s1, s2), s_lo = ir_select(ir, mine, s2, s1);
    ir_set(ir, s, ir_fma(ir, s_lo, exp_of(g, lo, hi), s_hi));
    ir_set(ir, m, hi);
}

static void butterfly(softmax_gen *g, LLVMValueRef m, LLVMValueRef s, int width)
{
    ir_builder *ir = g->ir;
    for (int offset = width / 2; offset > 0; offset /= 2) {
        LLVMValueRef m2 = ir_shfl_xor(ir, ir_get(ir, m), offset);
        LLVMValueRef s2 = ir_shfl_xor(ir, ir_get(ir, s), offset);
        merge(g, m, s, m2, s2);
    }
}

/* The row's (max, sum) in every one of its threads: shuffles within the warp (or tpr-lane
 * segment), then for rows of several warps a barrier and shuffles over the warps' pairs, every
 * group of warps-per-row lanes holding all of them. */
static void merge_row(softmax_gen *g, LLVMValueRef m, LLVMValueRef s)
{
    ir_builder *ir = g->ir;
    const int tpr = g->shape.tpr, segment = tpr < 32 ? tpr : 32, warps = tpr / segment;
    butterfly(g, m, s, segment);
    if (warps == 1)
        return;
    LLVMValueRef tid = ir_sreg(ir, IR_TID_X);
    LLVMValueRef lane = ir_and(ir, tid, ir_i32(ir, 31)), warp = ir_lshr(ir, tid, ir_i32(ir, 5));
    ir_if_state first_lane;
    ir_if(ir, &first_lane, ir_eq(ir, lane, ir_i32(ir, 0)));
    ir_store(ir, ir_get(ir, m), ir_at(ir, ir->f32, g->part_m, warp), 4);
    ir_store(ir, ir_get(ir, s), ir_at(ir, ir->f32, g->part_s, warp), 4);
    ir_end_if(ir, &first_lane);
    ir_barrier(ir);
    LLVMValueRef slot = ir_add(ir, ir_mul(ir, ir_udiv(ir, warp, ir_i32(ir, warps)),
                                          ir_i32(ir, warps)),
                               ir_urem(ir, lane, ir_i32(ir, warps)));
    ir_set(ir, m, ir_load(ir, ir->f32, ir_at(ir, ir->f32, g->part_m, slot), 4));
    ir_set(ir, s, ir_load(ir, ir->f32, ir_at(ir, ir->f32, g->part_s, slot), 4));
    butterfly(g, m, s, warps);
}

/* ---- the variants ---- */

static void make_slots(softmax_gen *g, LLVMValueRef *slots)
{
    for (int i = 0; i < words_of(g); i++)
        slots[i] = ir_var(g->ir, g->ir->i32, NULL, "x");
}

static chunk chunk_of(softmax_gen *g, int w, int whole, LLVMValueRef units, LLVMValueRef first)
{
    return (chunk){w, g->shape.items * g->shape.vec / w, whole, units, first};
}

/* variant=online: load, the thread's max and sum, the merge, the scaled write from the slots. */
static void online_row(softmax_gen *g, int w, int whole, LLVMValueRef units)
{
    ir_builder *ir = g->ir;
    LLVMValueRef slots[MAX_SLOTS];
    make_slots(g, slots);
    chunk c = chunk_of(g, w, whole, units, ir_i32(ir, 0));
    LLVMValueRef mine = rounds_in_row(g, &c);
    load_chunk(g, &c, mine, slots);
    LLVMValueRef m = ir_var(ir, ir->f32, f32_const(g, -3.40282346638528859812e+38), "max");
    chunk_max(g, &c, mine, slots, m);
    LLVMValueRef top = ir_get(ir, m);
    LLVMValueRef s = ir_var(ir, ir->f32, f32_const(g, 0.0), "sum");
    LLVMValueRef kept[PJ_SOFTMAX_HELD_MAX];
    const int keeping = keeps_exps(g);
    for (int i = 0; keeping && g->dtype != F32 && i < g->shape.items * g->shape.vec; i++)
        kept[i] = ir_var(ir, ir->f32, NULL, "kept");
    chunk_exp_sum(g, &c, mine, slots, keeping ? kept : NULL, top, s);
    merge_row(g, m, s);
    LLVMValueRef max = ir_get(ir, m);
    if (keeping) { /* exp(x - top) kept: times exp(top - max) / sum */
        LLVMValueRef scale = LLVMBuildFDiv(ir->builder, exp_of(g, top, max), ir_get(ir, s), "");
        store_chunk(g, &c, mine, slots, kept, max, scale);
    } else {
        LLVMValueRef scale = LLVMBuildFDiv(ir->builder, f32_const(g, 1.0), ir_get(ir, s), "");
        store_chunk(g, &c, mine, slots, NULL, max, scale);
    }
}

/* One chunk of the first pass: the running max grows, the sum so far (and the part its
 * additions lost) is scaled to it, and the chunk's exponentials, summed apart, are added with
 * Kahan's compensation. */
static void block_scan(softmax_gen *g, const chunk *c, LLVMValueRef m, LLVMValueRef s,
                       LLVMValueRef lost)
{
    ir_builder *ir = g->ir;
    LLVMValueRef slots[MAX_SLOTS];
    make_slots(g, slots);
    LLVMValueRef mine = rounds_in_row(g, c);
    load_chunk(g, c, mine, slots);
    LLVMValueRef old = ir_get(ir, m);
    chunk_max(g, c, mine, slots, m);
    LLVMValueRef grown = ir_get(ir, m);
    LLVMValueRef scale = exp_of(g, old, grown);
    LLVMValueRef part = ir_var(ir, ir->f32, f32_const(g, 0.0), "part");
    chunk_exp_sum(g, c, mine, slots, NULL, grown, part);
    LLVMValueRef sum = ir_mul(ir, ir_get(ir, s), scale);
    LLVMValueRef error = ir_mul(ir, ir_get(ir, lost), scale);
    LLVMValueRef y = ir_sub(ir, ir_get(ir, part), error), total = ir_add(ir, sum, y);
    ir_set(ir, lost, ir_sub(ir, ir_sub(ir, total, sum), y));
    ir_set(ir, s, total);
}

/* One chunk of the second pass: re-read, write exp(x - max) / sum. */
static void block_write(softmax_gen *g, const chunk *c, LLVMValueRef m, LLVMValueRef inverse)
{
    LLVMValueRef slots[MAX_SLOTS];
    make_slots(g, slots);
    LLVMValueRef mine = rounds_in_row(g, c);
    load_chunk(g, c, mine, slots);
    store_chunk(g, c, mine, slots, NULL, m, inverse);
}

/* for (first = from; first < to; first += step) scan, no unrolling (#pragma unroll 1). */
static void scan_chunks(softmax_gen *g, int w, int whole, LLVMValueRef units, LLVMValueRef from,
                        LLVMValueRef to, LLVMValueRef step, LLVMValueRef m, LLVMValueRef s,
                        LLVMValueRef lost)
{
    ir_builder *ir = g->ir;
    LLVMValueRef first = ir_var(ir, ir->i32, from, "first");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, first), to));
    chunk c = chunk_of(g, w, whole, units, ir_get(ir, first));
    block_scan(g, &c, m, s, lost);
    ir_set(ir, first, ir_add(ir, ir_get(ir, first), step));
    loop.unroll = IR_UNROLL_NONE;
    ir_end_while(ir, &loop);
}

/* variant=block: whole chunks of tpr * rounds units (the vector path only), then the partial
 * ones; the merge; then the write pass from the last chunk back to the first. */
static void block_row(softmax_gen *g, int w, LLVMValueRef units)
{
    ir_builder *ir = g->ir;
    const int rounds = g->shape.items * g->shape.vec / w;
    LLVMValueRef size = ir_i32(ir, (long long)g->shape.tpr * rounds);
    LLVMValueRef whole = w == g->shape.vec ? ir_mul(ir, ir_udiv(ir, units, size), size)
                                           : ir_i32(ir, 0);
    LLVMValueRef m = ir_var(ir, ir->f32, f32_const(g, -3.40282346638528859812e+38), "max");
    LLVMValueRef s = ir_var(ir, ir->f32, f32_const(g, 0.0), "sum");
    LLVMValueRef lost = ir_var(ir, ir->f32, f32_const(g, 0.0), "lost");
    scan_chunks(g, w, 1, units, ir_i32(ir, 0), whole, size, m, s, lost);
    scan_chunks(g, w, 0, units, whole, units, size, m, s, lost);
    ir_set(ir, s, ir_sub(ir, ir_get(ir, s), ir_get(ir, lost)));
    merge_row(g, m, s);
    LLVMValueRef max = ir_get(ir, m);
    LLVMValueRef inverse = LLVMBuildFDiv(ir->builder, f32_const(g, 1.0), ir_get(ir, s), "");
    /* The partial chunks, last first: first = (units - 1) / size * size down to whole. */
    LLVMValueRef first = ir_var(ir, ir->i32,
                                ir_mul(ir, ir_udiv(ir, ir_sub(ir, units, ir_i32(ir, 1)), size),
                                       size),
                                "first");
    LLVMValueRef more = ir_var(ir, ir->i1, ir_ult(ir, whole, units), "more");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_get(ir, more));
    chunk c = chunk_of(g, w, 0, units, ir_get(ir, first));
    block_write(g, &c, max, inverse);
    LLVMValueRef at = ir_get(ir, first);
    ir_set(ir, more, ir_and(ir, ir_ult(ir, whole, at), ir_ult(ir, ir_i32(ir, 0), at)));
    ir_set(ir, first, ir_sub(ir, at, size));
    loop.unroll = IR_UNROLL_NONE;
    ir_end_while(ir, &loop);
    /* Then the whole ones, last first. */
    ir_set(ir, first, whole);
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_i32(ir, 0), ir_get(ir, first)));
    LLVMValueRef start = ir_sub(ir, ir_get(ir, first), size);
    c = chunk_of(g, w, 1, units, start);
    block_write(g, &c, max, inverse);
    ir_set(ir, first, start);
    loop.unroll = IR_UNROLL_NONE;
    ir_end_while(ir, &loop);
}

static void softmax_row(softmax_gen *g, int w, LLVMValueRef units)
{
    ir_builder *ir = g->ir;
    if (g->shape.variant == SOFTMAX_BLOCK) {
        block_row(g, w, units);
        return;
    }
    if (w != g->shape.vec) {
        online_row(g, w, 0, units);
        return;
    }
    /* Rows that fill every slot take the path without tests. */
    const int rounds = g->shape.items * g->shape.vec / w;
    ir_if_state full;
    ir_if(ir, &full, ir_ult(ir, ir_i32(ir, (long long)g->shape.tpr * rounds - 1), units));
    online_row(g, w, 1, units);
    ir_else(ir, &full);
    online_row(g, w, 0, units);
    ir_end_if(ir, &full);
}

static int read_request(softmax_gen *g, const pj_llvm_request *request, char *error, size_t size)
{
    ir_builder *ir = g->ir;
    const pj_param_reader reader = gen_reader(request);
    softmax_config config = {0};
    const int decoded = pj_softmax_decode(&config, &reader).code == PJ_DECODED;
    g->dtype = config.dtype == PJ_DTYPE_f32 ? F32 : config.dtype == PJ_DTYPE_f16 ? F16 : BF16;
    g->shape = config.shape;
    const softmax_shape *s = &g->shape;
    int pow2 = s->tpb > 0 && !(s->tpb & (s->tpb - 1)) && s->tpr > 0 && !(s->tpr & (s->tpr - 1)) &&
               s->vec > 0 && !(s->vec & (s->vec - 1));
    if (!decoded || !pow2 ||
        s->tpb < 32 || s->tpb > 1024 || s->tpr > s->tpb || s->items < 1 ||
        s->items * s->vec * s->element_bytes > 4 * MAX_SLOTS || s->vec * s->element_bytes > 16) {
        snprintf(error, size, "softmax %s dtype=%s tpb=%d tpr=%d vec=%d items=%d is not supported "
                 "by the llvm backend's generator", gen_text(request, "variant"),
                 gen_text(request, "dtype"), s->tpb, s->tpr, s->vec, s->items);
        return PJ_LLVM_UNSUPPORTED;
    }
    g->e = g->dtype == F32 ? ir->i32 : ir->i16;
    return PJ_LLVM_OK;
}

static int gen_softmax(ir_builder *ir, const pj_llvm_request *request, char *error,
                       size_t error_size)
{
    softmax_gen g = {.ir = ir};
    int code = read_request(&g, request, error, error_size);
    if (code != PJ_LLVM_OK)
        return code;
    const ir_param_spec params[] = {
        {"in", ir->global_ptr, 1, 1, 0, 0},
        {"out", ir->global_ptr, 1, 0, 0, 0},
        {"rows", ir->i64, 0, 0, 0, 0},
        {"cols", ir->i32, 0, 0, 0, 0},
    };
    ir_kernel(ir, "softmax_kernel", params, 4, g.shape.tpb);
    /* __launch_bounds__(TPB, MIN_BLOCKS): the register budget of the template. */
    ir_kernel_min_blocks(ir, pj_softmax_min_blocks(&g.shape));
    g.in = ir_param(ir, 0);
    g.out = ir_param(ir, 1);
    g.rows = ir_param(ir, 2);
    g.cols = ir_param(ir, 3);
    if (g.shape.tpr > 32) {
        const unsigned warps = (unsigned)g.shape.tpb / 32;
        g.part_m = ir_shared_array(ir, "part_m", ir->f32, warps, 4);
        g.part_s = ir_shared_array(ir, "part_s", ir->f32, warps, 4);
    }
    /* The row: blockIdx.x * (tpb / tpr) + threadIdx.x / tpr; rows past the last read the last
     * row and write nothing. */
    LLVMValueRef tid = ir_sreg(ir, IR_TID_X);
    g.t = ir_urem(ir, tid, ir_i32(ir, g.shape.tpr));
    LLVMValueRef row = ir_add(ir, ir_mul(ir, ir_zext(ir, ir_sreg(ir, IR_CTAID_X), ir->i64),
                                         ir_i64(ir, pj_softmax_rows_per_block(&g.shape))),
                              ir_zext(ir, ir_udiv(ir, tid, ir_i32(ir, g.shape.tpr)), ir->i64));
    g.live = ir_ult(ir, row, g.rows);
    LLVMValueRef read_row = ir_select(ir, g.live, row, ir_sub(ir, g.rows, ir_i64(ir, 1)));
    LLVMValueRef cols = ir_zext(ir, g.cols, ir->i64);
    g.src = ir_at(ir, g.e, g.in, ir_mul(ir, read_row, cols));
    g.dst = ir_at(ir, g.e, g.out, ir_mul(ir, row, cols));
    const int vec = g.shape.vec;
    if (vec > 1) {
        /* Vectors when every row start is aligned to one: a branch the grid takes alike. */
        LLVMValueRef in = LLVMBuildPtrToInt(ir->builder, g.in, ir->i64, "");
        LLVMValueRef out = LLVMBuildPtrToInt(ir->builder, g.out, ir->i64, "");
        LLVMValueRef misaligned = ir_urem(ir, ir_or(ir, in, out),
                                          ir_i64(ir, (long long)vec * g.shape.element_bytes));
        LLVMValueRef aligned = ir_and(ir, ir_eq(ir, ir_urem(ir, g.cols, ir_i32(ir, vec)),
                                                ir_i32(ir, 0)),
                                      ir_eq(ir, misaligned, ir_i64(ir, 0)));
        ir_if_state path;
        ir_if(ir, &path, aligned);
        softmax_row(&g, vec, ir_udiv(ir, g.cols, ir_i32(ir, vec)));
        ir_else(ir, &path);
        softmax_row(&g, 1, g.cols);
        ir_end_if(ir, &path);
    } else {
        softmax_row(&g, 1, g.cols);
    }
    ir_kernel_end(ir);
    return PJ_LLVM_OK;
}

const gen_family gen_family_softmax = {"softmax", PJ_SOFTMAX_LLVM_VERSION,
                                       PJ_SOFTMAX_LLVM_VARIANTS, gen_softmax};

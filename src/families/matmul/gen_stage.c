/* gen_stage.c — matmul_stage_rows as LLVM IR, the op's staging copy as templates/matmul.cu
 * writes it (the reasons are there): each thread one 16-byte aligned piece of a destination
 * row, gathered from the source's aligned 16-byte pieces and shifted into place, byte by
 * byte where those would reach outside either row; blocks along a row (x), down its matrix
 * (y) and across the matrices (z). */
#include "families/matmul/gen_stage.h"

static LLVMValueRef sreg64(ir_builder *ir, ir_sreg_kind which)
{
    return ir_zext(ir, ir_sreg(ir, which), ir->i64);
}

static LLVMValueRef address_of(ir_builder *ir, LLVMValueRef pointer)
{
    return LLVMBuildPtrToInt(ir->builder, pointer, ir->i64, "");
}

static LLVMValueRef not(ir_builder *ir, LLVMValueRef flag)
{
    return ir_xor(ir, flag, LLVMConstInt(ir->i1, 1, 0));
}

/* Word first + i of the 32 bytes a:b (first, an i32 from 0 to 3: the same in every thread of
 * a row, so these selects are not branches). */
static LLVMValueRef word_at(ir_builder *ir, LLVMValueRef w[8], LLVMValueRef first, int i)
{
    LLVMValueRef word = w[i + 3];
    for (int f = 2; f >= 0; f--)
        word = ir_select(ir, ir_eq(ir, first, ir_i32(ir, f)), w[i + f], word);
    return word;
}

/* The 16 bytes from `shift` (1 to 15) on of the aligned 32 at low. */
static LLVMValueRef shifted_piece(ir_builder *ir, LLVMValueRef src, LLVMValueRef offset,
                                  LLVMValueRef shift)
{
    LLVMTypeRef vector = LLVMVectorType(ir->i32, 4);
    LLVMValueRef a = ir_load_readonly(ir, vector, ir_byte_offset(ir, src, offset), 16);
    LLVMValueRef b = ir_load_readonly(ir, vector, ir_byte_offset(ir, src, ir_add(ir, offset,
                                                                  ir_i64(ir, 16))), 16);
    LLVMValueRef w[8];
    for (int i = 0; i < 4; i++)
        w[i] = ir_element(ir, a, i), w[i + 4] = ir_element(ir, b, i);
    LLVMValueRef shift32 = ir_trunc(ir, shift, ir->i32);
    LLVMValueRef first = ir_lshr(ir, shift32, ir_i32(ir, 2));
    LLVMValueRef bits = ir_shl(ir, ir_and(ir, shift32, ir_i32(ir, 3)), ir_i32(ir, 3));
    LLVMValueRef out = LLVMGetUndef(vector);
    for (int i = 0; i < 4; i++) {
        /* llvm.fshr(hi, lo, n): the low 32 bits of hi:lo >> n (shf.r.wrap) */
        LLVMValueRef args[] = {word_at(ir, w, first, i + 1), word_at(ir, w, first, i), bits};
        LLVMTypeRef type = ir->i32;
        out = ir_with_element(ir, out, ir_intrinsic(ir, "llvm.fshr", &type, 1, args, 3), i);
    }
    return out;
}

/* The bytes of the piece at `at` that lie in the destination row [d0, d0 + width), one at a
 * time from src at from_offset. */
static void piece_by_bytes(ir_builder *ir, LLVMValueRef dst, LLVMValueRef dst_base,
                           LLVMValueRef src, LLVMValueRef from_offset, LLVMValueRef at,
                           LLVMValueRef d0, LLVMValueRef d_end)
{
    LLVMValueRef i = ir_var(ir, ir->i64, ir_i64(ir, 0), "byte");
    ir_loop_state loop;
    ir_while(ir, &loop);
    ir_do(ir, &loop, ir_ult(ir, ir_get(ir, i), ir_i64(ir, 16)));
    LLVMValueRef where = ir_add(ir, at, ir_get(ir, i));
    ir_if_state in_row;
    ir_if(ir, &in_row, ir_and(ir, not(ir, ir_ult(ir, where, d0)), ir_ult(ir, where, d_end)));
    LLVMValueRef byte = ir_load(ir, ir->i8, ir_byte_offset(ir, src, ir_add(ir, from_offset,
                                                                          ir_get(ir, i))), 1);
    ir_store(ir, byte, ir_byte_offset(ir, dst, ir_sub(ir, where, dst_base)), 1);
    ir_end_if(ir, &in_row);
    ir_set(ir, i, ir_add(ir, ir_get(ir, i), ir_i64(ir, 1)));
    ir_end_while(ir, &loop);
}

typedef struct {
    LLVMValueRef dst, src, dst_base, src_base, width;
} stage_args;

/* The thread's piece of the row whose first bytes are at d0 (destination) and s0 (source). */
static void stage_piece(ir_builder *ir, const stage_args *a, LLVMValueRef at, LLVMValueRef d0,
                        LLVMValueRef s0)
{
    LLVMValueRef from = ir_add(ir, s0, ir_sub(ir, at, d0)); /* wraps where at < d0 */
    LLVMValueRef low = ir_and(ir, from, ir_i64(ir, ~15ll));
    LLVMValueRef shift = ir_and(ir, from, ir_i64(ir, 15));
    LLVMValueRef shifted = not(ir, ir_eq(ir, shift, ir_i64(ir, 0)));
    LLVMValueRef need = ir_select(ir, shifted, ir_i64(ir, 32), ir_i64(ir, 16));
    LLVMValueRef d_end = ir_add(ir, d0, a->width), s_end = ir_add(ir, s0, a->width);
    LLVMValueRef outside = ir_or(ir, ir_or(ir, ir_ult(ir, at, d0),
                                           ir_ult(ir, d_end, ir_add(ir, at, ir_i64(ir, 16)))),
                                 ir_or(ir, ir_ult(ir, low, s0),
                                       ir_ult(ir, s_end, ir_add(ir, low, need))));
    LLVMValueRef low_offset = ir_sub(ir, low, a->src_base);
    LLVMValueRef target = ir_byte_offset(ir, a->dst, ir_sub(ir, at, a->dst_base));
    ir_if_state whole, aligned;
    ir_if(ir, &whole, not(ir, outside));
    ir_if(ir, &aligned, shifted);
    ir_store(ir, shifted_piece(ir, a->src, low_offset, shift), target, 16);
    ir_else(ir, &aligned);
    LLVMTypeRef vector = LLVMVectorType(ir->i32, 4);
    ir_store(ir, ir_load_readonly(ir, vector, ir_byte_offset(ir, a->src, low_offset), 16), target,
             16);
    ir_end_if(ir, &aligned);
    ir_else(ir, &whole);
    piece_by_bytes(ir, a->dst, a->dst_base, a->src, ir_sub(ir, from, a->src_base), at, d0,
                   d_end);
    ir_end_if(ir, &whole);
}

void gen_matmul_stage_rows(ir_builder *ir)
{
    const ir_param_spec params[] = {
        {"dst", ir->global_ptr, 1, 0, 0, 0},   {"src", ir->global_ptr, 1, 1, 0, 0},
        {"width", ir->i64, 0, 0, 0, 0},        {"rows", ir->i64, 0, 0, 0, 0},
        {"count", ir->i64, 0, 0, 0, 0},        {"dst_pitch", ir->i64, 0, 0, 0, 0},
        {"dst_stride", ir->i64, 0, 0, 0, 0},   {"src_pitch", ir->i64, 0, 0, 0, 0},
        {"src_stride", ir->i64, 0, 0, 0, 0},
    };
    ir_kernel(ir, "matmul_stage_rows", params, (int)(sizeof params / sizeof params[0]), 128);
    stage_args a = {ir_param(ir, 0), ir_param(ir, 1), NULL, NULL, ir_param(ir, 2)};
    a.dst_base = address_of(ir, a.dst), a.src_base = address_of(ir, a.src);
    LLVMValueRef rows = ir_param(ir, 3), count = ir_param(ir, 4);
    LLVMValueRef piece = ir_add(ir, ir_mul(ir, sreg64(ir, IR_CTAID_X), sreg64(ir, IR_NTID_X)),
                                sreg64(ir, IR_TID_X));
    LLVMValueRef matrix = ir_var(ir, ir->i64, sreg64(ir, IR_CTAID_Z), "matrix");
    LLVMValueRef r = ir_var(ir, ir->i64, NULL, "row");
    ir_loop_state matrices, down;
    ir_while(ir, &matrices);
    ir_do(ir, &matrices, ir_ult(ir, ir_get(ir, matrix), count));
    ir_set(ir, r, sreg64(ir, IR_CTAID_Y));
    ir_while(ir, &down);
    ir_do(ir, &down, ir_ult(ir, ir_get(ir, r), rows));
    LLVMValueRef d0 = ir_add(ir, a.dst_base,
                             ir_add(ir, ir_mul(ir, ir_get(ir, matrix), ir_param(ir, 6)),
                                    ir_mul(ir, ir_get(ir, r), ir_param(ir, 5))));
    LLVMValueRef s0 = ir_add(ir, a.src_base,
                             ir_add(ir, ir_mul(ir, ir_get(ir, matrix), ir_param(ir, 8)),
                                    ir_mul(ir, ir_get(ir, r), ir_param(ir, 7))));
    LLVMValueRef at = ir_add(ir, ir_and(ir, d0, ir_i64(ir, ~15ll)),
                             ir_mul(ir, piece, ir_i64(ir, 16)));
    ir_if_state in_row;
    ir_if(ir, &in_row, ir_ult(ir, at, ir_add(ir, d0, a.width)));
    stage_piece(ir, &a, at, d0, s0);
    ir_end_if(ir, &in_row);
    ir_set(ir, r, ir_add(ir, ir_get(ir, r), sreg64(ir, IR_NCTAID_Y)));
    ir_end_while(ir, &down);
    ir_set(ir, matrix, ir_add(ir, ir_get(ir, matrix), sreg64(ir, IR_NCTAID_Z)));
    ir_end_while(ir, &matrices);
    ir_kernel_end(ir);
}

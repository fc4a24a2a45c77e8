/* ir_tensor.c — tensor cores and asynchronous copies: cp.async, ldmatrix and mma.sync through
 * the NVVM intrinsics LLVM 19 has for them (sm_80), wgmma as inline PTX (sm_90a; LLVM 19 has
 * no intrinsic for it), each warp- or warpgroup-wide statement marked convergent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

void ir_cp_async_16(ir_builder *ir, LLVMValueRef shared_dst, LLVMValueRef global_src,
                    LLVMValueRef src_bytes)
{
    LLVMValueRef args[] = {shared_dst, global_src, src_bytes};
    ir_intrinsic(ir, "llvm.nvvm.cp.async.cg.shared.global.16.s", NULL, 0, args, 3);
}

void ir_cp_async_commit(ir_builder *ir)
{
    ir_intrinsic(ir, "llvm.nvvm.cp.async.commit.group", NULL, 0, NULL, 0);
}

void ir_cp_async_wait(ir_builder *ir, int pending)
{
    LLVMValueRef count = ir_i32(ir, pending);
    ir_intrinsic(ir, "llvm.nvvm.cp.async.wait.group", NULL, 0, &count, 1);
}

void ir_ldmatrix_x4(ir_builder *ir, LLVMValueRef shared_row, LLVMValueRef out[4])
{
    LLVMTypeRef pointer = LLVMTypeOf(shared_row);
    LLVMValueRef matrices = ir_intrinsic(ir, "llvm.nvvm.ldmatrix.sync.aligned.m8n8.x4.b16",
                                         &pointer, 1, &shared_row, 1);
    ir_convergent(ir, matrices);
    for (int i = 0; i < 4; i++)
        out[i] = ir_field(ir, matrices, i);
}

void ir_mma_tf32(ir_builder *ir, LLVMValueRef acc[4], const LLVMValueRef a[4],
                 const LLVMValueRef b[2])
{
    LLVMValueRef args[] = {a[0], a[1], a[2], a[3], b[0], b[1], acc[0], acc[1], acc[2], acc[3]};
    LLVMValueRef d = ir_intrinsic(ir, "llvm.nvvm.mma.m16n8k8.row.col.tf32", NULL, 0, args, 10);
    ir_convergent(ir, d);
    for (int i = 0; i < 4; i++)
        acc[i] = ir_field(ir, d, i);
}

/* {$0, ..., $(n/2 - 1)}, $(n/2), $(n/2 + 1): the accumulators are outputs tied to inputs
 * (C's "+f"); scale-d `accumulate`, A and B unscaled, A K-major, B transposed. */
void ir_wgmma(ir_builder *ir, int n, const char *types, LLVMValueRef *acc, LLVMValueRef a_desc,
              LLVMValueRef b_desc, int accumulate)
{
    const int count = n / 2;
    char text[2048], constraints[1024];
    LLVMTypeRef fields[IR_MAX_ASM_OPERANDS];
    LLVMValueRef args[IR_MAX_ASM_OPERANDS];
    if (count < 1 || count + 2 > IR_MAX_ASM_OPERANDS)
        return;
    int t = snprintf(text, sizeof text, "wgmma.mma_async.sync.aligned.m64n%dk16.f32.%s {", n,
                     types);
    int c = 0;
    for (int i = 0; i < count; i++) {
        t += snprintf(text + t, sizeof text - (size_t)t, "%s$%d", i ? ", " : "", i);
        c += snprintf(constraints + c, sizeof constraints - (size_t)c, "=f,");
        fields[i] = ir->f32;
        args[i + 2] = acc[i];
    }
    snprintf(text + t, sizeof text - (size_t)t, "}, $%d, $%d, %d, 1, 1, 0, 1;", count, count + 1,
             accumulate ? 1 : 0);
    c += snprintf(constraints + c, sizeof constraints - (size_t)c, "l,l");
    for (int i = 0; i < count; i++)
        c += snprintf(constraints + c, sizeof constraints - (size_t)c, ",%d", i);
    args[0] = a_desc;
    args[1] = b_desc;
    LLVMTypeRef result = LLVMStructTypeInContext(ir->context, fields, (unsigned)count, 0);
    LLVMValueRef d = ir_asm(ir, result, text, constraints, args, count + 2);
    ir_convergent(ir, d);
    for (int i = 0; i < count; i++)
        acc[i] = ir_field(ir, d, i);
}

static void aligned_statement(ir_builder *ir, const char *text)
{
    ir_convergent(ir, ir_asm(ir, ir->void_type, text, "~{memory}", NULL, 0));
}

void ir_wgmma_fence(ir_builder *ir)
{
    aligned_statement(ir, "wgmma.fence.sync.aligned;");
}

void ir_wgmma_commit(ir_builder *ir)
{
    aligned_statement(ir, "wgmma.commit_group.sync.aligned;");
}

void ir_wgmma_wait(ir_builder *ir, int pending)
{
    char text[64];
    snprintf(text, sizeof text, "wgmma.wait_group.sync.aligned %d;", pending);
    aligned_statement(ir, text);
}

LLVMValueRef ir_pack_half2(ir_builder *ir, LLVMValueRef lo, LLVMValueRef hi, int bfloat)
{
    /* The first source operand lands in the upper half. */
    LLVMValueRef args[] = {hi, lo};
    return ir_asm_pure(ir, ir->i32, bfloat ? "cvt.rn.bf16x2.f32 $0, $1, $2;"
                                           : "cvt.rn.f16x2.f32 $0, $1, $2;",
                       "=r,f,f", args, 2);
}

void ir_setmaxnreg(ir_builder *ir, int increase, int count)
{
    LLVMValueRef registers = ir_i32(ir, count);
    ir_convergent(ir, ir_intrinsic(ir, increase ? "llvm.nvvm.setmaxnreg.inc.sync.aligned.u32"
                                                : "llvm.nvvm.setmaxnreg.dec.sync.aligned.u32",
                                   NULL, 0, &registers, 1));
}

/* ir_thread.c — where a thread is (PTX special registers), block barriers and warp shuffles,
 * through the NVVM intrinsics LLVM 19 has for them, and atomic adds (inline PTX red). */
#include "ir.h"

LLVMValueRef ir_sreg(ir_builder *ir, ir_sreg_kind which)
{
    static const char *const names[] = {
        [IR_TID_X] = "llvm.nvvm.read.ptx.sreg.tid.x",
        [IR_TID_Y] = "llvm.nvvm.read.ptx.sreg.tid.y",
        [IR_CTAID_X] = "llvm.nvvm.read.ptx.sreg.ctaid.x",
        [IR_CTAID_Y] = "llvm.nvvm.read.ptx.sreg.ctaid.y",
        [IR_CTAID_Z] = "llvm.nvvm.read.ptx.sreg.ctaid.z",
        [IR_NCTAID_X] = "llvm.nvvm.read.ptx.sreg.nctaid.x",
        [IR_NCTAID_Y] = "llvm.nvvm.read.ptx.sreg.nctaid.y",
        [IR_NCTAID_Z] = "llvm.nvvm.read.ptx.sreg.nctaid.z",
        [IR_NTID_X] = "llvm.nvvm.read.ptx.sreg.ntid.x",
    };
    return ir_intrinsic(ir, names[which], NULL, 0, NULL, 0);
}

void ir_barrier(ir_builder *ir)
{
    ir_intrinsic(ir, "llvm.nvvm.barrier0", NULL, 0, NULL, 0);
}

LLVMValueRef ir_shfl_down(ir_builder *ir, LLVMValueRef value, int offset)
{
    int is_float = LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMFloatTypeKind;
    /* The last operand packs the segment mask (0: whole warp) and the clamp lane, 31. */
    LLVMValueRef args[] = {ir_i32(ir, -1), value, ir_i32(ir, offset), ir_i32(ir, 0x1f)};
    return ir_intrinsic(ir, is_float ? "llvm.nvvm.shfl.sync.down.f32"
                                     : "llvm.nvvm.shfl.sync.down.i32",
                        NULL, 0, args, 4);
}

LLVMValueRef ir_shfl_xor(ir_builder *ir, LLVMValueRef value, int mask)
{
    int is_float = LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMFloatTypeKind;
    /* As for shfl down: the whole warp (segment mask 0), lanes up to 31. */
    LLVMValueRef args[] = {ir_i32(ir, -1), value, ir_i32(ir, mask), ir_i32(ir, 0x1f)};
    return ir_intrinsic(ir, is_float ? "llvm.nvvm.shfl.sync.bfly.f32"
                                     : "llvm.nvvm.shfl.sync.bfly.i32",
                        NULL, 0, args, 4);
}

LLVMValueRef ir_shfl_idx(ir_builder *ir, LLVMValueRef value, int lane)
{
    LLVMValueRef args[] = {ir_i32(ir, -1), value, ir_i32(ir, lane), ir_i32(ir, 0x1f)};
    return ir_intrinsic(ir, "llvm.nvvm.shfl.sync.idx.i32", NULL, 0, args, 4);
}

/* An atomicrmw whose result is unused becomes PTX atom, which ptxas turns into the cheaper
 * RED (no reply) only when it compiles the whole program, as NVRTC's cubin does; nvJitLink's
 * relocatable compile keeps ATOMG, which cut reduce one_pass i32 to 0.83x the template's
 * kernel on the H100. So the reduction is spelled red, whatever compiles it. */
void ir_atomic_add(ir_builder *ir, LLVMValueRef pointer, LLVMValueRef value)
{
    int is_float = LLVMGetTypeKind(LLVMTypeOf(value)) == LLVMFloatTypeKind;
    LLVMValueRef args[] = {pointer, value};
    if (is_float)
        ir_asm(ir, ir->void_type, "red.global.add.f32 [$0], $1;", "l,f,~{memory}", args, 2);
    else
        ir_asm(ir, ir->void_type, "red.global.add.u32 [$0], $1;", "l,r,~{memory}", args, 2);
}

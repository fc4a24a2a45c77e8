/* ir_values.c — constants, variables and arithmetic, each spelled once so that generators
 * read like the template's C++. */
#include "ir.h"

LLVMValueRef ir_i32(ir_builder *ir, long long value)
{
    return LLVMConstInt(ir->i32, (unsigned long long)value, 1);
}

LLVMValueRef ir_i64(ir_builder *ir, long long value)
{
    return LLVMConstInt(ir->i64, (unsigned long long)value, 1);
}

LLVMValueRef ir_zero(LLVMTypeRef type)
{
    return LLVMConstNull(type);
}

/* Allocas at the top of the entry block, where mem2reg/SROA promote them to registers. */
LLVMValueRef ir_var(ir_builder *ir, LLVMTypeRef type, LLVMValueRef init, const char *name)
{
    LLVMBasicBlockRef here = LLVMGetInsertBlock(ir->builder);
    LLVMValueRef first = LLVMGetFirstInstruction(ir->entry);
    if (first)
        LLVMPositionBuilderBefore(ir->builder, first);
    else
        LLVMPositionBuilderAtEnd(ir->builder, ir->entry);
    LLVMValueRef var = LLVMBuildAlloca(ir->builder, type, name);
    LLVMPositionBuilderAtEnd(ir->builder, here);
    if (init)
        ir_set(ir, var, init);
    return var;
}

LLVMValueRef ir_get(ir_builder *ir, LLVMValueRef var)
{
    return LLVMBuildLoad2(ir->builder, LLVMGetAllocatedType(var), var, "");
}

void ir_set(ir_builder *ir, LLVMValueRef var, LLVMValueRef value)
{
    LLVMBuildStore(ir->builder, value, var);
}

/* Floats and vectors of floats. */
static int is_float(LLVMValueRef value)
{
    LLVMTypeRef type = LLVMTypeOf(value);
    if (LLVMGetTypeKind(type) == LLVMVectorTypeKind)
        type = LLVMGetElementType(type);
    LLVMTypeKind kind = LLVMGetTypeKind(type);
    return kind == LLVMFloatTypeKind || kind == LLVMDoubleTypeKind || kind == LLVMHalfTypeKind;
}

LLVMValueRef ir_add(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return is_float(a) ? LLVMBuildFAdd(ir->builder, a, b, "") : LLVMBuildAdd(ir->builder, a, b, "");
}

LLVMValueRef ir_mul(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return is_float(a) ? LLVMBuildFMul(ir->builder, a, b, "") : LLVMBuildMul(ir->builder, a, b, "");
}

LLVMValueRef ir_sub(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return is_float(a) ? LLVMBuildFSub(ir->builder, a, b, "") : LLVMBuildSub(ir->builder, a, b, "");
}

LLVMValueRef ir_fma(ir_builder *ir, LLVMValueRef a, LLVMValueRef b, LLVMValueRef c)
{
    LLVMTypeRef type = LLVMTypeOf(a);
    LLVMValueRef args[] = {a, b, c};
    return ir_intrinsic(ir, "llvm.fma", &type, 1, args, 3);
}

LLVMValueRef ir_ex2_approx(ir_builder *ir, LLVMValueRef x)
{
    return ir_intrinsic(ir, "llvm.nvvm.ex2.approx.ftz.f", NULL, 0, &x, 1);
}

LLVMValueRef ir_fmax(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    LLVMTypeRef type = LLVMTypeOf(a);
    LLVMValueRef args[] = {a, b};
    return ir_intrinsic(ir, "llvm.maxnum", &type, 1, args, 2);
}

LLVMValueRef ir_field(ir_builder *ir, LLVMValueRef aggregate, int index)
{
    return LLVMBuildExtractValue(ir->builder, aggregate, (unsigned)index, "");
}

LLVMValueRef ir_bitcast(ir_builder *ir, LLVMValueRef value, LLVMTypeRef type)
{
    return LLVMBuildBitCast(ir->builder, value, type, "");
}

LLVMValueRef ir_add_nw(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef sum = LLVMBuildNUWAdd(ir->builder, a, b, "");
    if (LLVMIsAInstruction(sum))
        LLVMSetNSW(sum, 1);
    return sum;
}

LLVMValueRef ir_mul_nw(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    LLVMValueRef product = LLVMBuildNUWMul(ir->builder, a, b, "");
    if (LLVMIsAInstruction(product))
        LLVMSetNSW(product, 1);
    return product;
}

LLVMValueRef ir_udiv(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildUDiv(ir->builder, a, b, "");
}

LLVMValueRef ir_urem(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildURem(ir->builder, a, b, "");
}

LLVMValueRef ir_ult(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildICmp(ir->builder, LLVMIntULT, a, b, "");
}

LLVMValueRef ir_eq(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildICmp(ir->builder, LLVMIntEQ, a, b, "");
}

LLVMValueRef ir_and(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildAnd(ir->builder, a, b, "");
}

LLVMValueRef ir_or(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildOr(ir->builder, a, b, "");
}

LLVMValueRef ir_xor(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildXor(ir->builder, a, b, "");
}

LLVMValueRef ir_shl(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildShl(ir->builder, a, b, "");
}

LLVMValueRef ir_lshr(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildLShr(ir->builder, a, b, "");
}

LLVMValueRef ir_umin(ir_builder *ir, LLVMValueRef a, LLVMValueRef b)
{
    return ir_select(ir, ir_ult(ir, a, b), a, b);
}

LLVMValueRef ir_select(ir_builder *ir, LLVMValueRef cond, LLVMValueRef a, LLVMValueRef b)
{
    return LLVMBuildSelect(ir->builder, cond, a, b, "");
}

LLVMValueRef ir_zext(ir_builder *ir, LLVMValueRef value, LLVMTypeRef type)
{
    return LLVMBuildZExtOrBitCast(ir->builder, value, type, "");
}

LLVMValueRef ir_trunc(ir_builder *ir, LLVMValueRef value, LLVMTypeRef type)
{
    return LLVMBuildTruncOrBitCast(ir->builder, value, type, "");
}

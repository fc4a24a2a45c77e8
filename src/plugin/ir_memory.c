/* ir_memory.c — shared arrays, element addresses, loads and stores in NVPTX's address
 * spaces. */
#include <string.h>

#include "ir.h"

LLVMValueRef ir_shared_array(ir_builder *ir, const char *name, LLVMTypeRef element,
                             unsigned count, unsigned align)
{
    LLVMTypeRef type = LLVMArrayType2(element, count);
    LLVMValueRef array = LLVMAddGlobalInAddressSpace(ir->module, type, name, IR_SHARED);
    /* Shared memory has no initializer: undef, with internal linkage, as NVVM emits it. */
    LLVMSetInitializer(array, LLVMGetUndef(type));
    LLVMSetLinkage(array, LLVMInternalLinkage);
    LLVMSetAlignment(array, align);
    return array;
}

LLVMValueRef ir_dynamic_shared(ir_builder *ir, const char *name, unsigned align)
{
    LLVMTypeRef type = LLVMArrayType2(ir->i8, 0);
    LLVMValueRef array = LLVMAddGlobalInAddressSpace(ir->module, type, name, IR_SHARED);
    LLVMSetLinkage(array, LLVMExternalLinkage);
    LLVMSetAlignment(array, align);
    return array;
}

LLVMValueRef ir_at(ir_builder *ir, LLVMTypeRef element, LLVMValueRef base, LLVMValueRef index)
{
    return LLVMBuildInBoundsGEP2(ir->builder, element, base, &index, 1, "");
}

LLVMValueRef ir_byte_offset(ir_builder *ir, LLVMValueRef base, LLVMValueRef bytes)
{
    return ir_at(ir, ir->i8, base, bytes);
}

LLVMValueRef ir_load(ir_builder *ir, LLVMTypeRef type, LLVMValueRef pointer, unsigned align)
{
    LLVMValueRef load = LLVMBuildLoad2(ir->builder, type, pointer, "");
    LLVMSetAlignment(load, align);
    return load;
}

LLVMValueRef ir_load_readonly(ir_builder *ir, LLVMTypeRef type, LLVMValueRef pointer,
                              unsigned align)
{
    LLVMValueRef load = ir_load(ir, type, pointer, align);
    unsigned kind = LLVMGetMDKindIDInContext(ir->context, "invariant.load", 14);
    LLVMSetMetadata(load, kind, LLVMMetadataAsValue(ir->context,
                                                    LLVMMDNodeInContext2(ir->context, NULL, 0)));
    return load;
}

void ir_store(ir_builder *ir, LLVMValueRef value, LLVMValueRef pointer, unsigned align)
{
    LLVMValueRef store = LLVMBuildStore(ir->builder, value, pointer);
    LLVMSetAlignment(store, align);
}

/* A shared pointer is its offset in the shared window, which is what .shared operands take. */
LLVMValueRef ir_shared_address(ir_builder *ir, LLVMValueRef shared_pointer)
{
    return LLVMBuildPtrToInt(ir->builder, shared_pointer, ir->i32, "");
}

/* With the grid_constant annotation NVPTX lowers the parameter's address to a generic
 * address of the parameter space (cvta.param), which TMA instructions accept. */
LLVMValueRef ir_param_address(ir_builder *ir, LLVMValueRef param)
{
    return LLVMBuildPtrToInt(ir->builder, param, ir->i64, "");
}

LLVMValueRef ir_element(ir_builder *ir, LLVMValueRef vector, int index)
{
    return LLVMBuildExtractElement(ir->builder, vector, ir_i32(ir, index), "");
}

LLVMValueRef ir_with_element(ir_builder *ir, LLVMValueRef vector, LLVMValueRef value, int index)
{
    return LLVMBuildInsertElement(ir->builder, vector, value, ir_i32(ir, index), "");
}

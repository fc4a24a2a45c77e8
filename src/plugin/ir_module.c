/* ir_module.c — one module per kernel: the types every generator uses, the kernel function
 * with its calling convention, launch bound and parameter attributes, and its text. */
#include <llvm-c/Analysis.h>
#include <string.h>

#include "ir.h"

void ir_open(ir_builder *ir, const char *module_name)
{
    memset(ir, 0, sizeof *ir);
    ir->context = LLVMContextCreate();
    ir->module = LLVMModuleCreateWithNameInContext(module_name, ir->context);
    LLVMSetTarget(ir->module, "nvptx64-nvidia-cuda");
    ir->builder = LLVMCreateBuilderInContext(ir->context);
    ir->void_type = LLVMVoidTypeInContext(ir->context);
    ir->i1 = LLVMInt1TypeInContext(ir->context);
    ir->i8 = LLVMInt8TypeInContext(ir->context);
    ir->i16 = LLVMInt16TypeInContext(ir->context);
    ir->i32 = LLVMInt32TypeInContext(ir->context);
    ir->i64 = LLVMInt64TypeInContext(ir->context);
    ir->f32 = LLVMFloatTypeInContext(ir->context);
    ir->f64 = LLVMDoubleTypeInContext(ir->context);
    ir->global_ptr = LLVMPointerTypeInContext(ir->context, IR_GLOBAL);
    ir->shared_ptr = LLVMPointerTypeInContext(ir->context, IR_SHARED);
    ir->generic_ptr = LLVMPointerTypeInContext(ir->context, IR_GENERIC);
}

void ir_close(ir_builder *ir)
{
    if (ir->builder)
        LLVMDisposeBuilder(ir->builder);
    if (ir->module)
        LLVMDisposeModule(ir->module);
    if (ir->context)
        LLVMContextDispose(ir->context);
    memset(ir, 0, sizeof *ir);
}

static void add_attribute(ir_builder *ir, unsigned index, const char *name, unsigned long long value)
{
    unsigned kind = LLVMGetEnumAttributeKindForName(name, strlen(name));
    LLVMAddAttributeAtIndex(ir->function, index, LLVMCreateEnumAttribute(ir->context, kind, value));
}

/* !nvvm.annotations = !{!{ptr @kernel, !"key", i32 value}}: how NVPTX learns launch bounds. */
static void annotate(ir_builder *ir, const char *key, LLVMValueRef value)
{
    LLVMValueRef fields[] = {ir->function, LLVMMDStringInContext(ir->context, key, strlen(key)),
                             value};
    LLVMAddNamedMetadataOperand(ir->module, "nvvm.annotations",
                                LLVMMDNodeInContext(ir->context, fields, 3));
}

/* A by-value struct read in place: byval + align, and the grid_constant annotation so that
 * NVPTX takes its address in the parameter space instead of copying it to local memory. */
static void byval_param(ir_builder *ir, int index, const ir_param_spec *spec,
                        LLVMValueRef *grid_constants, int *count)
{
    LLVMTypeRef bytes = LLVMArrayType2(ir->i8, spec->byval_bytes);
    unsigned kind = LLVMGetEnumAttributeKindForName("byval", 5);
    LLVMAddAttributeAtIndex(ir->function, (unsigned)index + 1,
                            LLVMCreateTypeAttribute(ir->context, kind, bytes));
    add_attribute(ir, (unsigned)index + 1, "align", spec->byval_align);
    grid_constants[(*count)++] = LLVMConstInt(ir->i32, (unsigned long long)index + 1, 0);
}

void ir_kernel(ir_builder *ir, const char *name, const ir_param_spec *params, int count,
               int max_threads)
{
    LLVMTypeRef types[IR_MAX_PARAMS];
    LLVMValueRef grid_constants[IR_MAX_PARAMS];
    int grid_constant_count = 0;
    count = count < IR_MAX_PARAMS ? count : IR_MAX_PARAMS;
    for (int i = 0; i < count; i++)
        types[i] = params[i].byval_bytes ? ir->generic_ptr : params[i].type;
    LLVMTypeRef type = LLVMFunctionType(ir->void_type, types, (unsigned)count, 0);
    ir->function = LLVMAddFunction(ir->module, name, type);
    LLVMSetFunctionCallConv(ir->function, LLVMPTXKernelCallConv);
    for (int i = 0; i < count; i++) {
        LLVMSetValueName2(LLVMGetParam(ir->function, (unsigned)i), params[i].name,
                          strlen(params[i].name));
        if (params[i].byval_bytes)
            byval_param(ir, i, &params[i], grid_constants, &grid_constant_count);
        if (params[i].noalias)
            add_attribute(ir, (unsigned)i + 1, "noalias", 0);
        if (params[i].readonly)
            add_attribute(ir, (unsigned)i + 1, "readonly", 0);
    }
    annotate(ir, "kernel", LLVMConstInt(ir->i32, 1, 0));
    annotate(ir, "maxntidx", LLVMConstInt(ir->i32, (unsigned long long)max_threads, 0));
    if (grid_constant_count) {
        LLVMValueRef list = LLVMMDNodeInContext(ir->context, grid_constants,
                                                (unsigned)grid_constant_count);
        annotate(ir, "grid_constant", list);
    }
    ir->entry = LLVMAppendBasicBlockInContext(ir->context, ir->function, "entry");
    LLVMPositionBuilderAtEnd(ir->builder, ir->entry);
}

void ir_kernel_min_blocks(ir_builder *ir, int blocks)
{
    annotate(ir, "minctasm", LLVMConstInt(ir->i32, (unsigned long long)blocks, 0));
}

LLVMValueRef ir_param(ir_builder *ir, int index)
{
    return LLVMGetParam(ir->function, (unsigned)index);
}

void ir_kernel_end(ir_builder *ir)
{
    LLVMBuildRetVoid(ir->builder);
}

char *ir_text(ir_builder *ir)
{
    return LLVMPrintModuleToString(ir->module);
}

char *ir_verify(ir_builder *ir)
{
    char *message = NULL;
    if (!LLVMVerifyModule(ir->module, LLVMReturnStatusAction, &message)) {
        LLVMDisposeMessage(message);
        return NULL;
    }
    return message;
}

LLVMValueRef ir_intrinsic(ir_builder *ir, const char *name, LLVMTypeRef *overloads,
                          int overload_count, LLVMValueRef *args, int count)
{
    unsigned id = LLVMLookupIntrinsicID(name, strlen(name));
    LLVMValueRef function =
        LLVMGetIntrinsicDeclaration(ir->module, id, overloads, (size_t)overload_count);
    LLVMTypeRef type = LLVMIntrinsicGetType(ir->context, id, overloads, (size_t)overload_count);
    return LLVMBuildCall2(ir->builder, type, function, args, (unsigned)count, "");
}

void ir_convergent(ir_builder *ir, LLVMValueRef call)
{
    unsigned kind = LLVMGetEnumAttributeKindForName("convergent", strlen("convergent"));
    LLVMAddCallSiteAttribute(call, LLVMAttributeFunctionIndex,
                             LLVMCreateEnumAttribute(ir->context, kind, 0));
}

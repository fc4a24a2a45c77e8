/* ir_flow.c — structured if/else and while loops over basic blocks. */
#include <llvm-c/DebugInfo.h>
#include <string.h>

#include "ir.h"

static LLVMBasicBlockRef new_block(ir_builder *ir, const char *name)
{
    return LLVMAppendBasicBlockInContext(ir->context, ir->function, name);
}

void ir_if(ir_builder *ir, ir_if_state *state, LLVMValueRef cond)
{
    LLVMBasicBlockRef then = new_block(ir, "then");
    state->otherwise = new_block(ir, "else");
    state->end = NULL;
    LLVMBuildCondBr(ir->builder, cond, then, state->otherwise);
    LLVMPositionBuilderAtEnd(ir->builder, then);
}

void ir_else(ir_builder *ir, ir_if_state *state)
{
    state->end = new_block(ir, "endif");
    LLVMBuildBr(ir->builder, state->end);
    LLVMPositionBuilderAtEnd(ir->builder, state->otherwise);
}

/* Without an else, the else block is where both paths meet. */
void ir_end_if(ir_builder *ir, ir_if_state *state)
{
    LLVMBasicBlockRef end = state->end ? state->end : state->otherwise;
    LLVMBuildBr(ir->builder, end);
    LLVMPositionBuilderAtEnd(ir->builder, end);
}

void ir_while(ir_builder *ir, ir_loop_state *state)
{
    state->header = new_block(ir, "loop");
    state->body = new_block(ir, "body");
    state->exit = new_block(ir, "done");
    state->unroll = IR_UNROLL_ANY;
    LLVMBuildBr(ir->builder, state->header);
    LLVMPositionBuilderAtEnd(ir->builder, state->header);
}

void ir_do(ir_builder *ir, ir_loop_state *state, LLVMValueRef cond)
{
    LLVMBuildCondBr(ir->builder, cond, state->body, state->exit);
    LLVMPositionBuilderAtEnd(ir->builder, state->body);
}

/* The loop's identity: a metadata node whose first operand is itself, then its hint. */
static void set_loop_hint(ir_builder *ir, LLVMValueRef latch, const char *hint)
{
    LLVMMetadataRef name = LLVMMDStringInContext2(ir->context, hint, strlen(hint));
    LLVMMetadataRef self = LLVMTemporaryMDNode(ir->context, NULL, 0);
    LLVMMetadataRef loop[] = {self, LLVMMDNodeInContext2(ir->context, &name, 1)};
    LLVMMetadataRef id = LLVMMDNodeInContext2(ir->context, loop, 2);
    LLVMMetadataReplaceAllUsesWith(self, id);
    LLVMSetMetadata(latch, LLVMGetMDKindIDInContext(ir->context, "llvm.loop", 9),
                    LLVMMetadataAsValue(ir->context, id));
}

void ir_end_while(ir_builder *ir, ir_loop_state *state)
{
    LLVMValueRef latch = LLVMBuildBr(ir->builder, state->header);
    if (state->unroll == IR_UNROLL_BY_PTXAS)
        set_loop_hint(ir, latch, "llvm.loop.unroll.runtime.disable");
    else if (state->unroll == IR_UNROLL_NONE)
        set_loop_hint(ir, latch, "llvm.loop.unroll.disable");
    LLVMPositionBuilderAtEnd(ir->builder, state->exit);
}

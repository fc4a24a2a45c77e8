/* gen_stage.h — the matmul module's second kernel on the llvm route: matmul_stage_rows, the
 * copy the op stages operands with (stage.h), as templates/matmul.cu defines it. */
#ifndef PTXJIT_MATMUL_GEN_STAGE_H
#define PTXJIT_MATMUL_GEN_STAGE_H

#include "plugin/ir.h"

/* Adds matmul_stage_rows(dst, src, width, rows, count, dst_pitch, dst_stride, src_pitch,
 * src_stride) to ir's module, every size in bytes. */
void gen_matmul_stage_rows(ir_builder *ir);

#endif

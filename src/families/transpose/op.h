/* op.h — the host side of the transpose family: the configuration of a kernel (decoded by
 * shape.h), the two tensor maps' geometry, launch, and the CPU reference. */
#ifndef PTXJIT_OPS_TRANSPOSE_H
#define PTXJIT_OPS_TRANSPOSE_H

#include "request/context.h"
#include "catalog/family.h"
#include "families/transpose/shape.h"

ptxjit_status pj_transpose_config_of(transpose_config *out, const ptxjit_kernel *kernel);

/* One tensor map's geometry, innermost dimension first, as cuTensorMapEncodeTiled takes it. */
typedef struct {
    uint64_t dims[2];
    uint64_t row_bytes; /* stride of dimension 1 */
    uint32_t box[2];    /* one swizzle span wide when swizzled, else the tile */
    int swizzle_bytes;
    int element_bytes;
} transpose_map_plan;

/* The maps of input (rows x cols) and output (cols x rows), or PTXJIT_ERR_INVALID_ARGUMENT
 * naming the shape or address the TMA cannot describe and what to do instead. */
ptxjit_status pj_transpose_plan_maps(transpose_map_plan *in, transpose_map_plan *out,
                                  const transpose_config *config, uint64_t input,
                                  uint64_t output, size_t rows, size_t cols);

/* out[c * rows + r] = in[r * cols + c] for elements of element_bytes. */
void pj_transpose_reference(void *out, const void *in, size_t rows, size_t cols, int element_bytes);

#endif

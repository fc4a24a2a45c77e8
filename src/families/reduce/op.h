/* op.h — the host side of the reduce family: launch geometry per variant, the passes,
 * and the CPU references the tests and `ptxjit run` compare with. */
#ifndef PTXJIT_OPS_REDUCE_H
#define PTXJIT_OPS_REDUCE_H

#include "request/context.h"
#include "catalog/family.h"
#include "families/reduce/shape.h"

/* Reads the kernel's parameters; fails if a user template named "reduce" lacks them. */
ptxjit_status pj_reduce_config_of(reduce_config *out, const ptxjit_kernel *kernel);
/* Blocks of the first (or only) launch for n elements starting at byte address input. */
uint64_t pj_reduce_grid(const reduce_config *config, uint64_t input, uint64_t n);

/* Sums modulo 2^32, as the GPU does. */
uint32_t pj_reduce_reference_i32(const int32_t *data, size_t n);
/* The sum in double, and the sum of magnitudes (the scale of the rounding error). */
double pj_reduce_reference_f32(const float *data, size_t n, double *magnitude);
/* Whether got is within f32 rounding of the reference: |got - sum| <= 1e-5 * magnitude. */
int pj_reduce_f32_close(float got, double sum, double magnitude);

#endif

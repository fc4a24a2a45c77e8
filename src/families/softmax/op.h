/* op.h — the host side of the softmax family: the configuration of a request, the checks
 * of a launch's shape and buffers, and the float64 reference the tests and the CLI compare
 * with. */
#ifndef PTXJIT_FAMILIES_SOFTMAX_OP_H
#define PTXJIT_FAMILIES_SOFTMAX_OP_H

#include "request/context.h"
#include "catalog/family.h"
#include "families/softmax/shape.h"

/* The request's configuration (shape.h decodes it); fails if a user template named "softmax"
 * lacks a parameter the op needs. */
ptxjit_status pj_softmax_config_from(softmax_config *out, const pj_request *request);
ptxjit_status pj_softmax_config_of(softmax_config *out, const ptxjit_kernel *kernel);

/* PTXJIT_OK when the configuration takes a rows x cols matrix at these device addresses;
 * else PTXJIT_ERR_INVALID_ARGUMENT naming the rule broken and what to do instead (a row longer
 * than variant=online holds names the limit and a configuration that holds it). */
ptxjit_status pj_softmax_check(const softmax_config *config, uint64_t input, uint64_t output,
                               size_t rows, size_t cols);

/* Element index of dtype (f32, f16, bf16) as a double, and a float stored there (rounded to
 * nearest even; finite values within the type's range). */
double pj_softmax_element(const void *data, pj_dtype dtype, size_t index);
void pj_softmax_set_element(void *data, pj_dtype dtype, size_t index, float value);

/* out_row[c] = exp(x[c] - max) / sum of exp(x - max) over the row of cols elements of dtype at
 * in_row, in float64. */
void pj_softmax_reference(double *out_row, const void *in_row, pj_dtype dtype, size_t cols);

/* What a kernel's output of dtype may differ from the float64 softmax by, element-wise:
 * |got - want| <= rel * want + abs. fp32: ex2.approx and the fp32 roundings (a few 1e-7,
 * bounded at 1e-5 with margin); f16 and bf16 add the rounding of the output (half an ulp:
 * 2^-11 and 2^-8 relative), f16 also its subnormal step below 2^-14 (abs 2^-25). abs covers
 * the outputs below 2^-126 that ex2.approx.ftz flushes to zero. */
typedef struct {
    double rel, abs;
} softmax_tolerance;
softmax_tolerance pj_softmax_tolerance(pj_dtype dtype);

#endif

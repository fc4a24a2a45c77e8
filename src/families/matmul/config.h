/* config.h — the configuration of a matmul request or kernel, as the op launches it: shape.h's
 * decoding, with the errors a user template of the family's name gets when the op cannot
 * drive it. Below the op and the fit (fit.c), which both read it. */
#ifndef PTXJIT_MATMUL_CONFIG_H
#define PTXJIT_MATMUL_CONFIG_H

#include "request/context.h"
#include "catalog/family.h"
#include "families/matmul/shape.h"

/* PTXJIT_ERR_TEMPLATE when a template named "matmul" lacks a parameter or has a variant the
 * op needs or knows. */
ptxjit_status pj_matmul_config_from(matmul_config *out, const pj_request *request);
ptxjit_status pj_matmul_config_of(matmul_config *out, const ptxjit_kernel *kernel);

/* Bytes of an element type (fp8: 1) and its name ("e4m3", "bf16", ...). */
int pj_matmul_type_bytes(pj_dtype type);
const char *pj_matmul_type_name(pj_dtype type);

#endif

/* auto.h — PARAM=auto resolved to a tuned winner for a problem, and the record keys it reads. */
#ifndef PTXJIT_REQUEST_AUTO_H
#define PTXJIT_REQUEST_AUTO_H

#include "request/select.h"
#include "params/schema.h"
#include "request/context.h"

/* 1 when params has a word PARAM=auto. */
int pj_tune_has_auto(const char *params);
/* ptxjit_get_kernel_tuned with a canonical problem: what the family ops call. */
ptxjit_status pj_tune_get_kernel(ptxjit_kernel **out, ptxjit_context *context,
                                 const char *family, const char *params, const char *problem,
                                 ptxjit_origin *origin);

/* The record key of (family, fixed, space or NULL, problem) on this context's device,
 * backend and compiler, as hex. */
ptxjit_status pj_tune_key(char out[33], ptxjit_context *context, const pj_schema *schema,
                          const char *fixed, const char *space, const char *problem,
                          pj_backend backend);

#endif

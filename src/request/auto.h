/* auto.h — the kernel of a request for a problem, PARAM=auto resolved to a tuned winner: the one
 * way the family ops and ptxjit_get_kernel_tuned get theirs; the record keys that resolution
 * reads (the tuner writes under the same) and the context's memo of records. */
#ifndef PTXJIT_REQUEST_AUTO_H
#define PTXJIT_REQUEST_AUTO_H

#include "catalog/family.h"
#include "params/schema.h"
#include "records/memo.h"
#include "request/context.h"
#include "request/select.h"

/* 1 when params has a word PARAM=auto. */
int pj_auto_has(const char *params);
/* params with each PARAM=auto word resolved for the problem of sizes (the values of the
 * family's problem_names, in order) to the value of the winner tuned for it, or dropped where
 * no winner applies (*out the caller's; a copy of params when it has none). *tuned (may be
 * NULL): 1 when a winner's values were taken; auto words dropped leave their parameters to the
 * defaults, which a family op fits to the shape as for a request without them. */
ptxjit_status pj_auto_resolve(char **out, int *tuned, ptxjit_context *context,
                              const pj_family *family, const char *params,
                              const uint64_t *sizes);

/* The record key of (family, fixed, space or NULL, problem) on this context's device,
 * backend and compiler, as hex. */
ptxjit_status pj_tune_key(char out[33], ptxjit_context *context, const pj_schema *schema,
                          const char *fixed, const char *space, const char *problem,
                          pj_backend backend);
/* "NVIDIA H100 80GB HBM3, 132 SMs, driver 13000": what a record's times are from; fails with
 * the GPU's status when there is none. */
ptxjit_status pj_tune_device_identity(char out[256], ptxjit_context *context);
/* Tests set this to stand for the GPU in record keys (NULL: the context's GPU). */
extern const char *pj_tune_device_override;

/* The context's memo, made on first use (NULL when out of memory, which the memo's calls take
 * as an empty memo). */
pj_tune_memo *pj_tune_memo_of(ptxjit_context *context);

#endif

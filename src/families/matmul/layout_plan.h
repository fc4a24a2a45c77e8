/* layout_plan.h — what ptxjit_matmul_strided launches for a batch laid out in memory, with no
 * GPU and no compile (`ptxjit run matmul batch=B lda=... --plan`): the plan of its request for
 * every product's rows at once (the tile fitted as the op fits it: pj_matmul_plan_rows), how
 * the products run (one launch, or one per product) and what the layout makes the op stage.
 * ptxjit_plan takes a problem of sizes only; a layout is the matmul family's own. */
#ifndef PTXJIT_MATMUL_LAYOUT_PLAN_H
#define PTXJIT_MATMUL_LAYOUT_PLAN_H

#include "families/matmul/stage.h"
#include "request/plan.h"

typedef struct {
    pj_plan plan;          /* the request the op launches and why (the request's words alone) */
    matmul_config config;  /* the request's configuration */
    pj_matmul_takes takes; /* how its kernel takes a layout (its backend's) */
} pj_matmul_layout_plan;

/* The plan for params on `batch` products of m x n x k (0 taken as 1). Fails as the op would.
 * Freed with pj_matmul_layout_plan_free, also after a failure. */
ptxjit_status pj_matmul_layout_plan_make(pj_matmul_layout_plan *out, ptxjit_context *context,
                                         const char *params, size_t m, size_t n, size_t k,
                                         size_t batch);
/* *why: the plan's why and the layout's sentences (buffers taken as 16-byte aligned): how the
 * products run, what is staged; NULL where there is nothing to say (the caller frees it). A
 * layout that cannot hold the product is PTXJIT_ERR_INVALID_ARGUMENT naming the value, as the
 * op refuses it; layout NULL: dense rows, one product. */
ptxjit_status pj_matmul_layout_plan_why(char **why, const pj_matmul_layout_plan *plan,
                                        const ptxjit_matmul_layout *layout, size_t m, size_t n,
                                        size_t k);
void pj_matmul_layout_plan_free(pj_matmul_layout_plan *plan);

#endif

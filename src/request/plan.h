/* plan.h — what a family's op launches for a problem. A request that leaves its variant to
 * the defaults is never refused for its shape: where the default variant cannot run the
 * problem (a TMA stride that is not a multiple of 16 bytes, a row longer than registers hold),
 * the op takes the first of the family's shape fallbacks (pj_family.shape_fallbacks) that
 * can. A request that names its variant is taken as written, and refused with that variant's
 * own reason. PARAM=auto is resolved first (request/auto.h): a tuned winner is taken as it
 * was timed; without one the auto words are dropped, their parameters left to the defaults
 * like any other left out. Then the family's fit (pj_family.fit: the matmul's tile for its shape,
 * softmax's threads for its row) adds its words where the request leaves them to the
 * defaults — before any fallback, where the fitted request runs a shape the defaults cannot
 * (softmax's online rows of up to 4096 vectors). */
#ifndef PTXJIT_REQUEST_PLAN_H
#define PTXJIT_REQUEST_PLAN_H

#include "request/auto.h"

/* The SMs a plan fits a request to where the context has no GPU: the H100 SXM's and the
 * H200's (an H100 PCIe has 114). */
#define PJ_PLAN_SMS_WITHOUT_GPU 132

typedef struct {
    char *params; /* the request the op launches: auto resolved, with the words added */
    char *why;    /* why it is not the request as asked, in a sentence or two; NULL: it is */
    const char *fallback; /* the shape fallback's words taken, or NULL */
    const char *fitted;   /* the family's fit's words added, or NULL */
    int tuned;            /* a tuned winner's values were taken for its PARAM=auto words */
} pj_plan;

/* The plan for params on the problem of sizes (the family's problem_names' values), with no
 * GPU and no compile. Fails as the op would: the request's own error, or, where nothing it
 * may take runs the problem, the default's (or the named variant's) reason. */
ptxjit_status pj_plan_make(pj_plan *out, ptxjit_context *context, const pj_family *family,
                           const char *params, const uint64_t *sizes);
void pj_plan_free(pj_plan *plan);

/* 1 when params has a word NAME=VALUE ("variant": the request names its variant). */
int pj_plan_names_word(const char *params, const char *name);

/* The kernel a family op launches for params on the problem: the plan's. A request the
 * context answered before whose kernel runs the problem costs no parse (two lookups where the
 * family fits it). *tuned (may be NULL): a tuned winner's values were taken. */
ptxjit_status pj_plan_get_kernel(ptxjit_kernel **out, int *tuned, ptxjit_context *context,
                                 const pj_family *family, const char *params,
                                 const uint64_t *sizes);

#endif

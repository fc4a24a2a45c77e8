/* layout_plan.c — the plan of a batch laid out in memory (layout_plan.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "families/matmul/layout_plan.h"
#include "families/matmul/op.h"
#include "request/select.h"

/* The planned request's configuration and backend, read as the op reads it (no compile). */
static ptxjit_status read_planned(matmul_config *config, pj_backend *backend,
                                  ptxjit_context *context, const char *params)
{
    const pj_schema *schema;
    char *rest = NULL;
    pj_request request;
    ptxjit_status status = pj_context_schema(&schema, context, pj_family_matmul.name);
    if (status == PTXJIT_OK)
        status = pj_backend_take(backend, &rest, params, context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&request, schema, rest, pj_context_sm(context));
    free(rest);
    if (status != PTXJIT_OK)
        return status;
    status = pj_matmul_config_from(config, &request);
    pj_request_free(&request);
    return status;
}

ptxjit_status pj_matmul_layout_plan_make(pj_matmul_layout_plan *out, ptxjit_context *context,
                                         const char *params, size_t m, size_t n, size_t k,
                                         size_t batch)
{
    memset(out, 0, sizeof *out);
    ptxjit_matmul_layout products;
    ptxjit_matmul_layout_init(&products);
    products.batch = batch;
    const uint64_t sizes[] = {pj_matmul_plan_rows(m, &products), n, k};
    /* The family's own sentence (matmul_explain) is on the staging of one dense product of
     * all those rows, which a layout changes: the layout's sentences replace it. */
    pj_family without_staging = pj_family_matmul;
    without_staging.explain = NULL;
    ptxjit_status status = pj_plan_make(&out->plan, context, &without_staging, params, sizes);
    pj_backend backend = PJ_BACKEND_NVRTC;
    if (status == PTXJIT_OK)
        status = read_planned(&out->config, &backend, context, out->plan.params);
    out->takes = pj_matmul_takes_of(&out->config, backend);
    return status;
}

/* How a batch's products run, in a sentence ("" for one product). */
static void describe_launches(char *out, size_t size, pj_matmul_takes takes,
                              const pj_matmul_layout *l)
{
    out[0] = '\0';
    if (l->batch < 2)
        return;
    if (takes == PJ_MATMUL_TAKES_BATCH)
        snprintf(out, size, "The %zu products run in one launch: 3-D tensor maps give the "
                 "kernel each product's A and B%s, and it writes each C at its stride",
                 l->batch, !l->stride_a && !l->stride_b ? " (one A and one B for all)"
                           : !l->stride_a             ? " (one A for all)"
                           : !l->stride_b             ? " (one B for all)"
                                                      : "");
    else if (takes == PJ_MATMUL_TAKES_PITCH)
        snprintf(out, size, "The llvm backend's kernel runs once per product (%zu launches), "
                 "reading A and B at their pitch and writing C in dense rows", l->batch);
    else
        snprintf(out, size, "This variant runs once per product (%zu launches), on dense rows",
                 l->batch);
}

ptxjit_status pj_matmul_layout_plan_why(char **why, const pj_matmul_layout_plan *plan,
                                        const ptxjit_matmul_layout *layout, size_t m, size_t n,
                                        size_t k)
{
    *why = NULL;
    pj_matmul_layout l;
    ptxjit_status status = pj_matmul_layout_resolve(&l, &plan->config, layout, m, n, k);
    if (status == PTXJIT_OK) /* refused as the op refuses it */
        status = pj_matmul_check_batch_tiles(&plan->config, plan->takes, &l);
    if (status != PTXJIT_OK)
        return status;
    char launches[256], staged[1024];
    describe_launches(launches, sizeof launches, plan->takes, &l);
    pj_matmul_stage_describe(staged, sizeof staged, &plan->config,
                             pj_matmul_stage_needed(&plan->config, plan->takes, 256, 256, 256, &l),
                             &l);
    if (!plan->plan.why && !*launches && !*staged)
        return PTXJIT_OK;
    pj_strbuf sb;
    pj_sb_init(&sb);
    const char *sentences[] = {plan->plan.why, launches, staged};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(sentences); i++)
        if (sentences[i] && *sentences[i])
            pj_sb_appendf(&sb, "%s%s%s", sb.length ? " " : "", sentences[i], i ? "." : "");
    *why = pj_sb_take(&sb);
    return *why ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

void pj_matmul_layout_plan_free(pj_matmul_layout_plan *plan)
{
    if (plan)
        pj_plan_free(&plan->plan);
}

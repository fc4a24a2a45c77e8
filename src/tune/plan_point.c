/* plan_point.c — the request a family's op launches for a problem without a tuning record,
 * where its fit changed it from the plain defaults (matmul's tile for the shape, softmax's
 * threads for the row), as a tuning's extra point: the tuner times it beside the template's
 * space, so a tuning never records a winner slower than what the op runs untuned (matmul's
 * fit takes swapped or split tiles and 16 stages, which its tune lines lack). A shape
 * fallback is not added: it replaces a variant the problem's shape refuses whatever the tuned
 * values, so every point of such a space is refused, and the tuning says to fix the variant
 * the fallback names. */
#include <stdlib.h>

#include "request/plan.h"
#include "request/route.h"
#include "tune/tune.h"

/* The canonical request of text on backend where the route builds it and it runs the
 * problem, else NULL (why is no concern here: the point is simply not added). */
static char *runnable(const pj_schema *schema, const pj_family *builtin, const char *text,
                      pj_backend backend, int sm, const uint64_t *sizes)
{
    pj_request request;
    pj_backend planned;
    char *rest = NULL, *canonical = NULL;
    if (pj_backend_take(&planned, &rest, text, backend) == PTXJIT_OK &&
        pj_request_parse(&request, schema, rest, sm) == PTXJIT_OK) {
        if (pj_route_of(planned)->check(&request) == PTXJIT_OK &&
            builtin->tune->admits(&request, sizes) == PTXJIT_OK)
            canonical = pj_backend_canonical(pj_request_canonical(&request), planned);
        pj_request_free(&request);
    }
    free(rest);
    pj_error_clear();
    return canonical;
}

ptxjit_status pj_tune_plan_point(char **out, ptxjit_context *context, const pj_schema *schema,
                                 const pj_family *builtin, const char *fixed,
                                 pj_backend backend, const uint64_t *sizes)
{
    *out = NULL;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s%sbackend=%s", fixed ? fixed : "", fixed && *fixed ? " " : "",
                  pj_backend_name(backend));
    char *request = pj_sb_take(&sb);
    if (!request)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    pj_plan plan;
    ptxjit_status status = pj_plan_make(&plan, context, builtin, request, sizes);
    free(request);
    if (status == PTXJIT_ERR_OUT_OF_MEMORY)
        return status;
    if (status != PTXJIT_OK) { /* the points' own refusals say why the defaults cannot run */
        pj_error_clear();
        return PTXJIT_OK;
    }
    if (plan.fitted)
        *out = runnable(schema, builtin, plan.params, backend, pj_context_sm(context), sizes);
    pj_plan_free(&plan);
    return PTXJIT_OK;
}

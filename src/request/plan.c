/* plan.c — the request a family op launches for a problem: as asked (auto resolved) where it
 * can run the problem's shape, else, when it leaves the variant to the defaults, the first
 * shape fallback of the family that can; then the family's fit. Reading a request costs a
 * parse, no compile: a default that cannot run a shape is never compiled for it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/problem.h"
#include "request/alias.h"
#include "request/plan.h"

int pj_plan_names_word(const char *params, const char *name)
{
    const size_t n = strlen(name);
    for (const char *s = params; *s;) {
        s += strspn(s, " \t\n,");
        size_t length = strcspn(s, " \t\n,");
        if (length > n && s[n] == '=' && strncmp(s, name, n) == 0)
            return 1;
        s += length;
    }
    return 0;
}

/* The request text as the context reads it (its backend word taken out first). */
static ptxjit_status read_request(pj_request *out, ptxjit_context *context,
                                  const pj_family *family, const char *text)
{
    const pj_schema *schema;
    pj_backend backend;
    char *rest = NULL;
    ptxjit_status status = pj_context_schema(&schema, context, family->name);
    if (status == PTXJIT_OK)
        status = pj_backend_take(&backend, &rest, text, context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(out, schema, rest, pj_context_sm(context));
    free(rest);
    return status;
}

/* Whether the request can run the problem: PTXJIT_OK, or PTXJIT_ERR_INVALID_ARGUMENT saying
 * why its shape cannot (a family without tune ops runs whatever it is given). */
static ptxjit_status admits(const pj_family *family, const pj_request *request,
                            const uint64_t *sizes)
{
    return family->tune ? family->tune->admits(request, sizes) : PTXJIT_OK;
}

static int plan_sms(const ptxjit_context *context)
{
    return context->sm_count > 0 ? context->sm_count : PJ_PLAN_SMS_WITHOUT_GPU;
}

static char *joined(const char *params, const char *words)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s%s%s", params, *params ? " " : "", words);
    return pj_sb_take(&sb);
}

/* Adds a sentence to out->why. */
static ptxjit_status say(pj_plan *out, const char *format, const char *a, const char *b)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    if (out->why)
        pj_sb_appendf(&sb, "%s ", out->why);
    pj_sb_appendf(&sb, format, a, b);
    char *why = pj_sb_take(&sb);
    if (!why)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    free(out->why);
    out->why = why;
    return PTXJIT_OK;
}

/* out->params (the request as asked, which its defaults cannot run: `reason`) with the first
 * fallback that runs the problem, read into *request. */
static ptxjit_status take_fallback(pj_plan *out, pj_request *request, ptxjit_context *context,
                                   const pj_family *family, const uint64_t *sizes,
                                   const char *reason)
{
    for (const char *const *f = family->shape_fallbacks; *f; f++) {
        char *text = joined(out->params, *f);
        if (!text)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        pj_request candidate;
        if (read_request(&candidate, context, family, text) == PTXJIT_OK) {
            if (admits(family, &candidate, sizes) == PTXJIT_OK) {
                free(out->params);
                out->params = text;
                out->fallback = *f;
                *request = candidate;
                pj_error_clear();
                return say(out, "The defaults cannot run this problem (%s); the request "
                           "leaves the variant to them, so it takes %s.", reason, *f);
            }
            pj_request_free(&candidate);
        }
        free(text);
    }
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "%s", reason); /* no fallback runs it either */
}

/* The request read and able to run the problem: as asked, or with a fallback. */
static ptxjit_status settle_variant(pj_plan *out, pj_request *request, ptxjit_context *context,
                                    const pj_family *family, const uint64_t *sizes)
{
    ptxjit_status status = read_request(request, context, family, out->params);
    if (status != PTXJIT_OK)
        return status;
    status = admits(family, request, sizes);
    if (status == PTXJIT_OK)
        return PTXJIT_OK;
    pj_request_free(request);
    /* Only a shape refusal of the defaults' variant is planned around. */
    if (status != PTXJIT_ERR_INVALID_ARGUMENT || !family->shape_fallbacks ||
        pj_plan_names_word(out->params, "variant"))
        return status;
    char *reason = pj_strdup(ptxjit_last_error());
    status = reason ? take_fallback(out, request, context, family, sizes, reason)
                    : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    free(reason);
    return status;
}

/* The family's fit for the settled request (a tuned request was timed as it is). */
static ptxjit_status fit(pj_plan *out, const pj_request *request, ptxjit_context *context,
                         const pj_family *family, const char *params, const uint64_t *sizes)
{
    if (!family->fit || out->tuned)
        return PTXJIT_OK;
    const int sms = plan_sms(context);
    const char *words = family->fit(request, params, sizes, sms);
    if (!words)
        return PTXJIT_OK;
    char *text = joined(out->params, words);
    if (!text)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    pj_request fitted;
    if (read_request(&fitted, context, family, text) != PTXJIT_OK) {
        /* A template of its own without the fit's parameters or values: as asked. */
        free(text);
        pj_error_clear();
        return PTXJIT_OK;
    }
    pj_request_free(&fitted);
    free(out->params);
    out->params = text;
    out->fitted = words;
    char count[48];
    snprintf(count, sizeof count, "%d SMs%s", sms,
             context->sm_count > 0 ? "" : ", assumed: no GPU here");
    return say(out, "The tile is fitted to the problem's shape on %s: %s.", count, words);
}

/* The family's sentence on what its op does beyond the launch, for the final request. */
static ptxjit_status explain(pj_plan *out, ptxjit_context *context, const pj_family *family,
                             const uint64_t *sizes)
{
    pj_request request;
    if (read_request(&request, context, family, out->params) != PTXJIT_OK) {
        pj_error_clear(); /* read before: only memory can fail here, and a plan can do without */
        return PTXJIT_OK;
    }
    char sentence[1024];
    family->explain(sentence, sizeof sentence, &request, sizes);
    pj_request_free(&request);
    return *sentence ? say(out, "%s%s.", sentence, "") : PTXJIT_OK;
}

ptxjit_status pj_plan_make(pj_plan *out, ptxjit_context *context, const pj_family *family,
                           const char *params, const uint64_t *sizes)
{
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    memset(out, 0, sizeof *out);
    ptxjit_status status =
        pj_auto_resolve(&out->params, &out->tuned, context, family, params, sizes);
    pj_request request;
    if (status == PTXJIT_OK)
        status = settle_variant(out, &request, context, family, sizes);
    if (status == PTXJIT_OK) {
        status = fit(out, &request, context, family, params ? params : "", sizes);
        pj_request_free(&request);
    }
    if (status == PTXJIT_OK && family->explain)
        status = explain(out, context, family, sizes);
    if (status != PTXJIT_OK)
        pj_plan_free(out);
    return status;
}

void pj_plan_free(pj_plan *plan)
{
    if (!plan)
        return;
    free(plan->params);
    free(plan->why);
    memset(plan, 0, sizeof *plan);
}

/* The kernel the context answered text with before, or NULL. */
static ptxjit_kernel *known(ptxjit_context *context, const pj_family *family, const char *text)
{
    pj_request_text r = {family->name, text, ""};
    return pj_alias_find(context, pj_alias_hash(&r), &r);
}

/* The op's kernel without a parse where the context answered the request before and its
 * kernel runs the problem: the request's own, or its fitted one's; NULL otherwise. */
static ptxjit_kernel *known_plan(ptxjit_context *context, const pj_family *family,
                                 const char *params, const uint64_t *sizes)
{
    if (pj_auto_has(params))
        return NULL;
    ptxjit_kernel *kernel = known(context, family, params);
    if (!kernel || admits(family, &kernel->request, sizes) != PTXJIT_OK)
        return NULL;
    const char *words = family->fit ? family->fit(&kernel->request, params, sizes,
                                                  plan_sms(context))
                                    : NULL;
    if (!words)
        return kernel;
    char text[512];
    if (snprintf(text, sizeof text, "%s%s%s", params, *params ? " " : "", words) >=
        (int)sizeof text)
        return NULL;
    return known(context, family, text);
}

ptxjit_status pj_plan_get_kernel(ptxjit_kernel **out, int *tuned, ptxjit_context *context,
                                 const pj_family *family, const char *params,
                                 const uint64_t *sizes)
{
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    if (tuned)
        *tuned = 0;
    ptxjit_kernel *kernel = known_plan(context, family, params ? params : "", sizes);
    if (kernel) {
        pj_error_clear();
        *out = kernel;
        return PTXJIT_OK;
    }
    pj_plan plan;
    ptxjit_status status = pj_plan_make(&plan, context, family, params, sizes);
    if (status != PTXJIT_OK)
        return status;
    if (tuned)
        *tuned = plan.tuned;
    status = ptxjit_get_kernel(out, context, family->name, plan.params, NULL);
    pj_plan_free(&plan);
    return status;
}

ptxjit_status ptxjit_plan(char **request, char **why, ptxjit_context *context,
                          const char *family, const char *params, const char *problem)
{
    if (!request || !why || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "request, why, context and family must be given");
    *request = *why = NULL;
    const pj_family *builtin = pj_family_find(family);
    if (!builtin || !builtin->tune) {
        char names[256] = "";
        for (int i = 0; pj_families[i]; i++)
            if (pj_families[i]->tune)
                snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s",
                         *names ? ", " : "", pj_families[i]->name);
        return pj_error(PTXJIT_ERR_PARAM, "ptxjit_plan: '%s' has no op; the families with one "
                        "are %s", family, names);
    }
    uint64_t sizes[PJ_TUNE_MAX_SIZES];
    char *canonical_problem = NULL;
    pj_plan plan;
    ptxjit_status status = pj_tune_problem_canonical(&canonical_problem, sizes,
                                                     problem ? problem : "", family,
                                                     builtin->tune->problem_names);
    free(canonical_problem);
    if (status == PTXJIT_OK)
        status = pj_plan_make(&plan, context, builtin, params, sizes);
    if (status != PTXJIT_OK)
        return status;
    status = ptxjit_canonical_params(request, context, family, plan.params);
    if (status == PTXJIT_OK) {
        *why = plan.why;
        plan.why = NULL;
    }
    pj_plan_free(&plan);
    return status;
}

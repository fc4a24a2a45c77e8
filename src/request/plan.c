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
#include "request/select.h"

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

/* 1 where text compiles through the llvm backend (its backend= word, else the context's). */
static int compiles_with_llvm(ptxjit_context *context, const char *text)
{
    pj_backend backend;
    char *rest = NULL;
    if (pj_backend_take(&backend, &rest, text, context->default_backend) != PTXJIT_OK) {
        pj_error_clear(); /* read before: the request's own error is reported there */
        backend = context->default_backend;
    }
    free(rest);
    return backend == PJ_BACKEND_LLVM;
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

/* The family's fit for the request as read (a tuned request was timed as it is): its words
 * added to out->params where the fitted request reads (a template of its own may lack the
 * fit's parameters: then as asked) and, with must_admit, runs the problem. 0: not fitted. */
static int try_fit(pj_plan *out, const pj_request *request, ptxjit_context *context,
                   const pj_family *family, const char *params, const uint64_t *sizes,
                   int must_admit, ptxjit_status *status)
{
    *status = PTXJIT_OK;
    if (!family->fit || out->tuned || out->fitted)
        return 0;
    const int sms = plan_sms(context);
    const char *words =
        family->fit(request, params, sizes, sms, compiles_with_llvm(context, out->params));
    if (!words)
        return 0;
    char *text = joined(out->params, words);
    if (!text) {
        *status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        return 0;
    }
    pj_request fitted;
    if (read_request(&fitted, context, family, text) != PTXJIT_OK) {
        free(text);
        pj_error_clear();
        return 0;
    }
    const int runs = !must_admit || admits(family, &fitted, sizes) == PTXJIT_OK;
    pj_request_free(&fitted);
    if (!runs) {
        free(text);
        pj_error_clear();
        return 0;
    }
    free(out->params);
    out->params = text;
    out->fitted = words;
    char count[48];
    snprintf(count, sizeof count, "%d SMs%s", sms,
             context->sm_count > 0 ? "" : ", assumed: no GPU here");
    *status = say(out, "The kernel is fitted to the problem's shape on %s: %s.", count, words);
    return 1;
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

/* The request read and able to run the problem: as asked, fitted to it (a fit may make the
 * defaults' variant hold it: softmax's longer rows), or with a fallback. */
static ptxjit_status settle_variant(pj_plan *out, pj_request *request, ptxjit_context *context,
                                    const pj_family *family, const char *params,
                                    const uint64_t *sizes)
{
    ptxjit_status status = read_request(request, context, family, out->params);
    if (status != PTXJIT_OK)
        return status;
    status = admits(family, request, sizes);
    if (status == PTXJIT_OK)
        return PTXJIT_OK;
    if (status != PTXJIT_ERR_INVALID_ARGUMENT) {
        pj_request_free(request);
        return status;
    }
    char *reason = pj_strdup(ptxjit_last_error());
    ptxjit_status fit_status;
    const int fitted = try_fit(out, request, context, family, params, sizes, 1, &fit_status);
    pj_request_free(request);
    if (fitted || fit_status != PTXJIT_OK || !reason) {
        free(reason);
        return fit_status != PTXJIT_OK ? fit_status
               : fitted ? read_request(request, context, family, out->params)
                        : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    /* Only a shape refusal of the defaults' variant is planned around. */
    if (!family->shape_fallbacks || pj_plan_names_word(out->params, "variant")) {
        status = pj_error(status, "%s", reason);
        free(reason);
        return status;
    }
    status = take_fallback(out, request, context, family, sizes, reason);
    free(reason);
    return status;
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
    /* The request as its fit reads it: auto words that took no winner were dropped, so their
     * parameters are left to the defaults and fitted like any other left out. */
    char *written = NULL;
    if (status == PTXJIT_OK && !(written = pj_strdup(out->tuned && params ? params : out->params)))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == PTXJIT_OK && pj_auto_has(params))
        status = say(out, "%s%s.", out->tuned ? "The auto parameters take the values of the "
                     "problem's tuned winner" : "No tuned winner applies to this request on this "
                     "problem: the auto parameters are left to the defaults", "");
    pj_request request;
    if (status == PTXJIT_OK)
        status = settle_variant(out, &request, context, family, written, sizes);
    if (status == PTXJIT_OK) {
        (void)try_fit(out, &request, context, family, written, sizes, 0, &status);
        pj_request_free(&request);
    }
    free(written);
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
                                                  plan_sms(context),
                                                  kernel->backend == PJ_BACKEND_LLVM)
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

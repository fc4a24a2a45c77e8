/* auto.c — PARAM=auto in a request: each auto parameter takes the value of the winner of the
 * latest tuning of the family for the problem, the request's other (fixed) words and the
 * device; without one (or with one that disagrees with the request's other parameters) the
 * defaults, said in an INFO line. Resolved before the canonical form and the cache key, which
 * never see `auto`: the family ops and ptxjit_get_kernel_tuned get their kernels here. Also
 * the record keys the resolution reads (the tuner writes under the same), and the context's
 * memo of records. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/bucket.h"
#include "records/fixed.h"
#include "records/problem.h"
#include "request/aot.h"
#include "request/auto.h"

const char *pj_tune_device_override;

/* ---- the device, the keys and the memo ---- */

ptxjit_status pj_tune_device_identity(char out[256], ptxjit_context *context)
{
    if (pj_tune_device_override) {
        snprintf(out, 256, "%s", pj_tune_device_override);
        return PTXJIT_OK;
    }
    ptxjit_status status = ptxjit_gpu_status(context);
    if (status != PTXJIT_OK)
        return status;
    char name[200] = "?";
    context->driver->cuDeviceGetName(name, sizeof name, context->device);
    snprintf(out, 256, "%s, %d SMs, driver %d", name, context->sm_count, context->driver->version);
    return PTXJIT_OK;
}

ptxjit_status pj_tune_key(char out[33], ptxjit_context *context, const pj_schema *schema,
                          const char *fixed, const char *space, const char *problem,
                          pj_backend backend)
{
    char device[256], compiler[64];
    ptxjit_status status = pj_tune_device_identity(device, context);
    if (status == PTXJIT_OK)
        status = pj_context_compiler_version(context, backend, compiler);
    if (status != PTXJIT_OK)
        return status;
    pj_tune_key_inputs in = {schema->family, schema->source, fixed, space, problem,
                             device, context->arch, pj_backend_name(backend), compiler};
    pj_hash128 key;
    status = pj_tune_record_key(&key, &in);
    if (status == PTXJIT_OK)
        pj_hash_hex(&key, out);
    return status;
}

pj_tune_memo *pj_tune_memo_of(ptxjit_context *context)
{
    pthread_mutex_lock(&context->lock);
    if (!context->tune_memo)
        context->tune_memo = pj_tune_memo_new();
    pj_tune_memo *memo = context->tune_memo;
    pthread_mutex_unlock(&context->lock);
    return memo;
}

/* ---- resolution ---- */

/* Whether word (length n) is PARAM=auto. */
static int is_auto_word(const char *word, size_t n)
{
    return n > 5 && strncmp(word + n - 5, "=auto", 5) == 0;
}

int pj_auto_has(const char *params)
{
    for (const char *s = params ? strstr(params, "=auto") : NULL; s; s = strstr(s + 1, "=auto"))
        if (s[5] == '\0' || strchr(" \t\n,", s[5]))
            return 1;
    return 0;
}

/* The word of name in a canonical params text, or NULL; *n its length. */
static const char *word_of(const char *canonical, const char *name, size_t name_length,
                           size_t *n)
{
    for (const char *s = canonical; *s;) {
        s += strspn(s, " ");
        size_t length = strcspn(s, " ");
        if (length > name_length && s[name_length] == '=' && !strncmp(s, name, name_length)) {
            *n = length;
            return s;
        }
        s += length;
    }
    return NULL;
}

/* params with each auto word replaced by the winner's word of that parameter (dropped where
 * the winner has none: the parameter did not apply to it), or, winner NULL, dropped. */
static char *substitute(const char *params, const char *winner)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, "");
    for (const char *s = params; *s;) {
        s += strspn(s, " \t\n,");
        size_t length = strcspn(s, " \t\n,");
        if (!length)
            break;
        const char *word = s;
        size_t n = length;
        if (is_auto_word(s, length))
            word = winner ? word_of(winner, s, length - 5, &n) : NULL;
        if (word)
            pj_sb_appendf(&sb, "%s%.*s", sb.length ? " " : "", (int)n, word);
        s += length;
    }
    return pj_sb_take(&sb);
}

/* The latest record of (fixed, problem) on this device, or 0. */
static int latest_record(pj_tune_record *out, ptxjit_context *context, const pj_schema *schema,
                         const char *fixed, const char *problem, pj_backend backend)
{
    char key[33];
    if (pj_tune_key(key, context, schema, fixed, NULL, problem, backend) != PTXJIT_OK)
        return 0;
    if (pj_tune_memo_find(pj_tune_memo_of(context), key, out))
        return 1;
    int found = 0;
    if (!context->disk ||
        pj_tune_record_load(context->disk, context->remote, key, schema->family, out,
                            &found) != PTXJIT_OK ||
        !found)
        return 0;
    if (strcmp(out->problem, problem) || strcmp(out->fixed, fixed)) {
        pj_tune_record_free(out);
        return 0;
    }
    pj_tune_memo_put(pj_tune_memo_of(context), key, out);
    return 1;
}

/* Whether winner can run problem: a bucket's winner was timed at another problem of the
 * bucket (a user family's problem means nothing to us: it can). */
static int winner_admits(ptxjit_context *context, const pj_schema *schema, const char *winner,
                         const char *problem)
{
    const pj_family *builtin = pj_family_find(schema->family);
    if (!builtin || !builtin->tune)
        return 1;
    pj_backend backend;
    pj_request request;
    char *rest = NULL;
    uint64_t sizes[PJ_TUNE_MAX_SIZES];
    ptxjit_status status = pj_tune_problem_words(sizes, problem, schema->family,
                                                 builtin->tune->problem_names);
    if (status == PTXJIT_OK)
        status = pj_backend_take(&backend, &rest, winner, context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&request, schema, rest, pj_context_sm(context));
    free(rest);
    if (status != PTXJIT_OK)
        return 0;
    status = builtin->tune->admits(&request, sizes);
    pj_request_free(&request);
    return status == PTXJIT_OK;
}

/* The latest record of the problem, else of its pow2 bucket when that one's winner can run
 * the problem. */
static int record_for(pj_tune_record *out, ptxjit_context *context, const pj_schema *schema,
                      const char *fixed, const char *problem, pj_backend backend)
{
    if (latest_record(out, context, schema, fixed, problem, backend))
        return 1;
    char *bucket = NULL;
    int found = pj_tune_bucket(&bucket, problem) == PTXJIT_OK &&
                latest_record(out, context, schema, fixed, bucket, backend);
    free(bucket);
    if (found && !winner_admits(context, schema, out->winner, problem)) {
        pj_tune_record_free(out);
        found = 0;
    }
    return found;
}

/* The request with the record's winner in its auto words; NULL when the winner disagrees with
 * the request's other parameters (why in *why). */
static char *apply_winner(ptxjit_context *context, const pj_schema *schema, const char *params,
                          const char *winner, char **why)
{
    char *resolved = substitute(params, winner), *canonical = NULL;
    if (!resolved)
        return NULL;
    if (ptxjit_canonical_params(&canonical, context, schema->family, resolved) == PTXJIT_OK &&
        strcmp(canonical, winner) == 0) {
        free(canonical);
        return resolved;
    }
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "the tuned winner %s differs from the request's other parameters (%s)",
                  winner, canonical ? canonical : ptxjit_last_error());
    *why = pj_sb_take(&sb);
    free(canonical);
    free(resolved);
    return NULL;
}

/* The winner of a registered AOT table's record for the problem, else for its pow2 bucket
 * where that winner can run the problem; NULL: none. */
static const char *aot_winner(ptxjit_context *context, const pj_schema *schema,
                              pj_backend backend, const char *fixed, const char *problem)
{
    if (!context->aot)
        return NULL;
    const char *name = pj_backend_name(backend);
    const char *winner = pj_aot_winner(context, schema, name, fixed, problem);
    char *bucket = NULL;
    if (!winner && pj_tune_bucket(&bucket, problem) == PTXJIT_OK) {
        winner = pj_aot_winner(context, schema, name, fixed, bucket);
        if (winner && !winner_admits(context, schema, winner, problem))
            winner = NULL;
    }
    free(bucket);
    return winner;
}

static char *resolve(ptxjit_context *context, const pj_schema *schema, const char *params,
                     const char *problem)
{
    pj_backend backend;
    char *rest = NULL, *fixed = NULL, *resolved = NULL, *why = NULL;
    pj_tune_record record;
    if (pj_backend_take(&backend, &rest, params, context->default_backend) != PTXJIT_OK ||
        pj_tune_fixed_canonical(&fixed, schema, rest) != PTXJIT_OK) {
        free(rest);
        return substitute(params, NULL); /* the request's own error comes from get_kernel */
    }
    free(rest);
    const char *registered = aot_winner(context, schema, backend, fixed, problem);
    if (registered) {
        resolved = apply_winner(context, schema, params, registered, &why);
    } else if (record_for(&record, context, schema, fixed, problem, backend)) {
        resolved = apply_winner(context, schema, params, record.winner, &why);
        pj_tune_record_free(&record);
    }
    if (!resolved) {
        resolved = substitute(params, NULL);
        pj_log(&context->logger, PTXJIT_LOG_INFO,
               "%s %s: %s; the auto parameters are left to the defaults (a family op fits "
               "them to the problem's shape as it fits a request without them; call "
               "ptxjit_tune for the problem '%s' with the fixed parameters '%s' first to "
               "record a winner)",
               schema->family, params, why ? why : "no tuning record for this problem, these "
               "fixed parameters and this device", problem, fixed);
    }
    free(why);
    free(fixed);
    return resolved;
}

/* params with its auto words resolved for the canonical problem (caller frees). */
static ptxjit_status resolve_text(char **out, ptxjit_context *context, const char *family,
                                  const char *params, const char *problem)
{
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    const pj_schema *schema;
    ptxjit_status status = pj_context_schema(&schema, context, family);
    if (status != PTXJIT_OK)
        return status;
    pj_tune_memo *memo = pj_tune_memo_of(context);
    char *resolved = pj_tune_memo_resolved(memo, family, params, problem);
    if (!resolved) {
        resolved = resolve(context, schema, params, problem);
        if (!resolved)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        pj_tune_memo_resolve(memo, family, params, problem, resolved);
    }
    *out = resolved;
    return PTXJIT_OK;
}

/* The kernel of params, its auto words resolved for the canonical problem. */
static ptxjit_status get_resolved(ptxjit_kernel **out, ptxjit_context *context,
                                  const char *family, const char *params, const char *problem,
                                  ptxjit_origin *origin)
{
    char *resolved = NULL;
    ptxjit_status status = resolve_text(&resolved, context, family, params, problem);
    if (status == PTXJIT_OK)
        status = ptxjit_get_kernel(out, context, family, resolved, origin);
    free(resolved);
    return status;
}

/* 1 when resolved took a winner's values: the auto words were not merely dropped (a winner
 * names its value of every parameter that applies to it). A winner to which none of the auto
 * parameters applies counts as none: the resolved request is then the request without them,
 * and is fitted like it. */
static int winner_applied(const char *params, const char *resolved)
{
    char *dropped = substitute(params, NULL);
    const int applied = !dropped || strcmp(dropped, resolved) != 0;
    free(dropped);
    return applied;
}

ptxjit_status pj_auto_resolve(char **out, int *tuned, ptxjit_context *context,
                              const pj_family *family, const char *params, const uint64_t *sizes)
{
    if (tuned)
        *tuned = 0;
    if (!pj_auto_has(params)) {
        *out = pj_strdup(params ? params : "");
        return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    char *problem = pj_tune_problem_text(family->tune->problem_names, sizes);
    if (!problem)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = resolve_text(out, context, family->name, params, problem);
    free(problem);
    if (status == PTXJIT_OK && tuned)
        *tuned = winner_applied(params, *out);
    return status;
}

/* A built-in family's problem as its words make it canonical; any other family's as given. */
static ptxjit_status canonical_problem(char **out, const char *family, const char *problem)
{
    const pj_family *builtin = pj_family_find(family);
    uint64_t sizes[PJ_TUNE_MAX_SIZES];
    if (builtin && builtin->tune)
        return pj_tune_problem_canonical(out, sizes, problem, family,
                                         builtin->tune->problem_names);
    *out = pj_strdup(problem);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status ptxjit_get_kernel_tuned(ptxjit_kernel **out, ptxjit_context *context,
                                      const char *family, const char *params,
                                      const char *problem, ptxjit_origin *origin)
{
    if (!pj_auto_has(params))
        return ptxjit_get_kernel(out, context, family, params, origin);
    if (!context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    char *canonical = NULL;
    ptxjit_status status = canonical_problem(&canonical, family, problem ? problem : "");
    if (status == PTXJIT_OK)
        status = get_resolved(out, context, family, params, canonical, origin);
    free(canonical);
    return status;
}

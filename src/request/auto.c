/* auto.c — PARAM=auto in a request: each auto parameter takes the value of the winner of the
 * latest tuning of the family for the problem, the request's other (fixed) words and the
 * device; without one (or with one that disagrees with the request's other parameters) the
 * defaults, said in an INFO line. Resolved before the canonical form and the cache key, which
 * never see `auto`. Also the listing and clearing of records. */
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

/* Whether word (length n) is PARAM=auto. */
static int is_auto_word(const char *word, size_t n)
{
    return n > 5 && strncmp(word + n - 5, "=auto", 5) == 0;
}

int pj_tune_has_auto(const char *params)
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
    if (pj_tune_memo_find(context, key, out))
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
    pj_tune_memo_put(context, key, out);
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
    ptxjit_status status = pj_backend_take(&backend, &rest, winner, context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&request, schema, rest, pj_context_sm(context));
    free(rest);
    if (status != PTXJIT_OK)
        return 0;
    status = builtin->tune->admits(&request, problem);
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
    if (record_for(&record, context, schema, fixed, problem, backend)) {
        resolved = apply_winner(context, schema, params, record.winner, &why);
        pj_tune_record_free(&record);
    }
    if (!resolved) {
        resolved = substitute(params, NULL);
        pj_log(&context->logger, PTXJIT_LOG_INFO,
               "%s %s: %s; the auto parameters take their defaults (call ptxjit_tune for the "
               "problem '%s' with the fixed parameters '%s' first to record a winner)",
               schema->family, params, why ? why : "no tuning record for this problem, these "
               "fixed parameters and this device", problem, fixed);
    }
    free(why);
    free(fixed);
    return resolved;
}

ptxjit_status pj_tune_get_kernel(ptxjit_kernel **out, ptxjit_context *context,
                                 const char *family, const char *params, const char *problem,
                                 ptxjit_origin *origin)
{
    if (!pj_tune_has_auto(params))
        return ptxjit_get_kernel(out, context, family, params, origin);
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    const pj_schema *schema;
    ptxjit_status status = pj_context_schema(&schema, context, family);
    if (status != PTXJIT_OK)
        return status;
    char *resolved = pj_tune_memo_resolved(context, family, params, problem);
    if (!resolved) {
        resolved = resolve(context, schema, params, problem);
        if (!resolved)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        pj_tune_memo_resolve(context, family, params, problem, resolved);
    }
    status = ptxjit_get_kernel(out, context, family, resolved, origin);
    free(resolved);
    return status;
}

ptxjit_status ptxjit_get_kernel_tuned(ptxjit_kernel **out, ptxjit_context *context,
                                      const char *family, const char *params,
                                      const char *problem, ptxjit_origin *origin)
{
    if (!pj_tune_has_auto(params))
        return ptxjit_get_kernel(out, context, family, params, origin);
    if (!context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    const pj_family *builtin = pj_family_find(family);
    char *canonical = NULL;
    ptxjit_status status =
        builtin && builtin->tune ? builtin->tune->problem(&canonical, problem ? problem : "")
        : (canonical = pj_strdup(problem ? problem : "")) ? PTXJIT_OK
                                                           : PTXJIT_ERR_OUT_OF_MEMORY;
    if (status == PTXJIT_OK)
        status = pj_tune_get_kernel(out, context, family, params, canonical, origin);
    free(canonical);
    return status;
}

/* ---- listing and clearing ---- */

typedef struct {
    ptxjit_context *context;
    ptxjit_tune_result **list;
    int count;
    ptxjit_status status;
} listing;

static void add_listed(void *user, const char *key)
{
    listing *l = user;
    pj_tune_record record;
    int found = 0;
    if (l->status != PTXJIT_OK ||
        pj_tune_record_load(l->context->disk, NULL, key, NULL, &record, &found) != PTXJIT_OK ||
        !found)
        return;
    ptxjit_tune_result *result = calloc(1, sizeof *result);
    ptxjit_tune_result **grown = realloc(l->list, (size_t)(l->count + 1) * sizeof *grown);
    if (grown)
        l->list = grown;
    if (record.latest || !result || !grown) { /* latest: a copy of a space's own record */
        l->status = record.latest || (result && grown) ? l->status : PTXJIT_ERR_OUT_OF_MEMORY;
        free(result);
        pj_tune_record_free(&record);
        return;
    }
    result->record = record;
    result->from_record = 1;
    result->record_path = pj_disk_cache_record_path(l->context->disk, key);
    l->list[l->count++] = result;
}

static int by_family_then_problem(const void *a, const void *b)
{
    const pj_tune_record *x = &(*(ptxjit_tune_result *const *)a)->record;
    const pj_tune_record *y = &(*(ptxjit_tune_result *const *)b)->record;
    int c = strcmp(x->family, y->family);
    if (!c)
        c = strcmp(x->problem, y->problem);
    if (!c)
        c = strcmp(x->fixed, y->fixed);
    return c ? c : strcmp(x->space, y->space);
}

ptxjit_status ptxjit_tune_list(ptxjit_tune_result ***out, int *count, ptxjit_context *context)
{
    if (!out || !count || !context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_tune_list: out, count and context must be given");
    listing l = {context, NULL, 0, PTXJIT_OK};
    if (context->disk)
        pj_disk_cache_each_record(context->disk, add_listed, &l);
    if (l.status != PTXJIT_OK) {
        ptxjit_tune_list_free(l.list, l.count);
        return pj_error(l.status, "out of memory listing the tuning records");
    }
    if (l.count)
        qsort(l.list, (size_t)l.count, sizeof *l.list, by_family_then_problem);
    *out = l.list;
    *count = l.count;
    return PTXJIT_OK;
}

void ptxjit_tune_list_free(ptxjit_tune_result **list, int count)
{
    for (int i = 0; list && i < count; i++)
        ptxjit_tune_result_free(list[i]);
    free(list);
}

ptxjit_status ptxjit_tune_clear(ptxjit_context *context, uint64_t *removed)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_tune_clear: context is NULL");
    uint64_t count = 0;
    pj_tune_memo_clear(context);
    ptxjit_status status =
        context->disk ? pj_disk_cache_clear_records(context->disk, &count) : PTXJIT_OK;
    if (removed)
        *removed = count;
    return status;
}

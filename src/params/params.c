/* params.c — a request's "key=value" list checked against its family's schema, with the
 * canonical form (applicable parameters, defaults filled, sorted) that keys and prints use. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "params/schema.h"

static ptxjit_status param_error(const pj_schema *schema, const pj_param *param,
                                 const char *value, const char *why)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_schema_describe_allowed(&sb, param);
    ptxjit_status status = pj_error(
        PTXJIT_ERR_PARAM, "%s: %s=%s is not allowed%s%s: %s must be %s (ptxjit_family_describe(\"%s\") "
        "describes every parameter)",
        schema->family, param->name, value, why ? ": " : "", why ? why : "", param->name,
        sb.data ? sb.data : "?", schema->family);
    pj_sb_free(&sb);
    return status;
}

static ptxjit_status parse_value(int64_t *out, const pj_schema *schema, const pj_param *param,
                                 const char *text)
{
    if (strcmp(text, "auto") == 0) /* resolved before parsing where the problem is known */
        return pj_error(PTXJIT_ERR_PARAM,
                        "%s: %s=auto asks for the value tuned for a problem, which this request "
                        "does not name; ask through ptxjit_get_kernel_tuned (with the problem) "
                        "or a family op (ptxjit_reduce, ...), or give a value",
                        schema->family, param->name);
    if (param->kind != PJ_PARAM_INT) {
        const int v = pj_param_value_index(param, text);
        if (v >= 0) {
            *out = v;
            return PTXJIT_OK;
        }
        return param_error(schema, param, text, NULL);
    }
    char *end;
    errno = 0;
    long long value = strtoll(text, &end, 10); /* decimal: "0100" is 100, never octal 64 */
    if (errno || end == text || *end)
        return param_error(schema, param, text, "not an integer");
    if (value < param->min || value > param->max)
        return param_error(schema, param, text, "out of range");
    if (param->pow2 && !pj_is_power_of_two(value))
        return param_error(schema, param, text, "not a power of two");
    *out = value;
    return PTXJIT_OK;
}

static ptxjit_status unknown_key(const pj_schema *schema, const char *key)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; i < schema->param_count; i++)
        pj_sb_appendf(&sb, "%s%s", i ? ", " : "", schema->params[i].name);
    ptxjit_status status = pj_error(
        PTXJIT_ERR_PARAM, "%s: unknown parameter '%s'; %s takes: %s (ptxjit_family_describe(\"%s\") "
        "describes each)",
        schema->family, key, schema->family, sb.data ? sb.data : "nothing", schema->family);
    pj_sb_free(&sb);
    return status;
}

/* Parses one "key=value" word into the request; seen[] catches duplicates. */
static ptxjit_status parse_pair(pj_request *request, int *seen, const char *word, size_t length)
{
    const pj_schema *schema = request->schema;
    char pair[256];
    if (length >= sizeof pair)
        return pj_error(PTXJIT_ERR_PARAM, "%s: parameter '%.40s...' is too long",
                        schema->family, word);
    memcpy(pair, word, length);
    pair[length] = '\0';
    char *equals = strchr(pair, '=');
    if (!equals || equals == pair || !equals[1])
        return pj_error(PTXJIT_ERR_PARAM,
                        "%s: '%s' is not key=value (write e.g. %s=%s)", schema->family, pair,
                        schema->param_count ? schema->params[0].name : "key",
                        schema->param_count ? "..." : "value");
    *equals = '\0';
    int index = pj_schema_param_index(schema, pair);
    if (index < 0)
        return unknown_key(schema, pair);
    if (seen[index])
        return pj_error(PTXJIT_ERR_PARAM, "%s: parameter '%s' is given twice", schema->family,
                        pair);
    seen[index] = 1;
    return parse_value(&request->values[index], schema, &schema->params[index], equals + 1);
}

/* Parameters not given take the first default_if case that holds, in declaration order. */
static void apply_default_cases(pj_request *request, const int *seen)
{
    const pj_schema *schema = request->schema;
    for (int i = 0; i < schema->param_count; i++) {
        const pj_param *param = &schema->params[i];
        for (int c = 0; !seen[i] && c < param->case_count; c++)
            if (pj_expr_eval(param->case_when[c], request->values, schema)) {
                request->values[i] = param->case_value[c];
                break;
            }
    }
}

static void evaluate_applicability(pj_request *request)
{
    const pj_schema *schema = request->schema;
    for (int i = 0; i < schema->param_count; i++) {
        const pj_param *param = &schema->params[i];
        request->applies[i] = !param->when || pj_expr_eval(param->when, request->values, schema);
    }
}

/* A tuning point names every tuned parameter, also where one does not apply to the point (batch
 * of a variant without batches): such a parameter is taken back, as if the point had not named
 * it, until the applicable set stops changing (taking one back can change what applies). */
static void drop_inapplicable(pj_request *request, int *seen)
{
    const pj_schema *schema = request->schema;
    for (int round = 0; round <= schema->param_count; round++) {
        int dropped = 0;
        evaluate_applicability(request);
        for (int i = 0; i < schema->param_count; i++)
            if (seen[i] && !request->applies[i]) {
                seen[i] = 0;
                dropped = 1;
            }
        if (!dropped)
            return;
        for (int i = 0; i < schema->param_count; i++)
            if (!seen[i])
                request->values[i] = schema->params[i].default_value;
        apply_default_cases(request, seen);
    }
}

static ptxjit_status check_applicability(pj_request *request, const int *seen)
{
    const pj_schema *schema = request->schema;
    evaluate_applicability(request);
    for (int i = 0; i < schema->param_count; i++) {
        if (!seen[i] || request->applies[i])
            continue;
        char *canonical = pj_request_canonical(request);
        ptxjit_status status = pj_error(
            PTXJIT_ERR_PARAM, "%s: parameter '%s' does not apply to %s; it applies when %s",
            schema->family, schema->params[i].name, canonical ? canonical : "this request",
            schema->params[i].when_text);
        free(canonical);
        return status;
    }
    return PTXJIT_OK;
}

static ptxjit_status check_constraints(const pj_request *request)
{
    const pj_schema *schema = request->schema;
    for (int i = 0; i < schema->constraint_count; i++) {
        const pj_constraint *c = &schema->constraints[i];
        if (pj_expr_eval(c->expr, request->values, schema))
            continue;
        char *canonical = pj_request_canonical(request);
        ptxjit_status status =
            pj_error(PTXJIT_ERR_PARAM, "%s: %s (constraint '%s' fails for %s)", schema->family,
                     c->message, c->text, canonical ? canonical : "this request");
        free(canonical);
        return status;
    }
    return PTXJIT_OK;
}

static ptxjit_status request_parse(pj_request *out, const pj_schema *schema, const char *text,
                                   int sm, int lenient);

ptxjit_status pj_request_parse(pj_request *out, const pj_schema *schema, const char *text, int sm)
{
    return request_parse(out, schema, text, sm, 0);
}

ptxjit_status pj_request_parse_point(pj_request *out, const pj_schema *schema, const char *text,
                                     int sm)
{
    return request_parse(out, schema, text, sm, 1);
}

static ptxjit_status request_parse(pj_request *out, const pj_schema *schema, const char *text,
                                   int sm, int lenient)
{
    memset(out, 0, sizeof *out);
    out->schema = schema;
    size_t count = (size_t)schema->param_count + 1;
    out->values = calloc(count, sizeof *out->values);
    out->applies = calloc(count, sizeof *out->applies);
    int *seen = calloc(count, sizeof *seen);
    ptxjit_status status = PTXJIT_OK;
    if (!out->values || !out->applies || !seen) {
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (int i = 0; i < schema->param_count; i++)
        out->values[i] = schema->params[i].default_value;
    out->values[schema->param_count] = sm; /* `sm` in expressions */
    for (const char *s = text ? text : ""; *s && status == PTXJIT_OK;) {
        size_t skip = strspn(s, " \t\n,");
        s += skip;
        size_t length = strcspn(s, " \t\n,");
        if (length)
            status = parse_pair(out, seen, s, length);
        s += length;
    }
    if (status == PTXJIT_OK) {
        apply_default_cases(out, seen);
        if (lenient)
            drop_inapplicable(out, seen);
        status = check_applicability(out, seen);
    }
    if (status == PTXJIT_OK)
        status = check_constraints(out);
done:
    free(seen);
    if (status != PTXJIT_OK)
        pj_request_free(out);
    return status;
}

void pj_request_free(pj_request *request)
{
    free(request->values);
    free(request->applies);
    request->values = NULL;
    request->applies = NULL;
}

const char *pj_request_value_name(const pj_request *request, const char *name, char buf[32])
{
    int index = pj_schema_param_index(request->schema, name);
    if (index < 0)
        return "?";
    const pj_param *param = &request->schema->params[index];
    if (param->kind != PJ_PARAM_INT)
        return param->values[request->values[index]];
    return pj_format_int(buf, (long long)request->values[index]);
}

/* By name; an insertion sort: a schema has a handful of parameters, and every request that
 * misses the fast path sorts them (qsort's call through a comparator costs more). */
static void sort_by_name(const pj_param **params, int count)
{
    for (int i = 1; i < count; i++) {
        const pj_param *p = params[i];
        int j = i;
        for (; j > 0 && strcmp(params[j - 1]->name, p->name) > 0; j--)
            params[j] = params[j - 1];
        params[j] = p;
    }
}

char *pj_request_canonical(const pj_request *request)
{
    const pj_schema *schema = request->schema;
    const pj_param **sorted = calloc((size_t)schema->param_count + 1, sizeof *sorted);
    if (!sorted)
        return NULL;
    for (int i = 0; i < schema->param_count; i++)
        sorted[i] = &schema->params[i];
    sort_by_name(sorted, schema->param_count);
    pj_strbuf sb;
    pj_sb_init(&sb);
    int written = 0;
    for (int i = 0; i < schema->param_count; i++) {
        int index = (int)(sorted[i] - schema->params);
        if (request->applies && !request->applies[index])
            continue;
        char buf[32];
        if (written++)
            pj_sb_append(&sb, " ");
        pj_sb_append(&sb, sorted[i]->name);
        pj_sb_append(&sb, "=");
        pj_sb_append(&sb, pj_request_value_name(request, sorted[i]->name, buf));
    }
    free(sorted);
    return pj_sb_take(&sb);
}

int64_t pj_request_value(const pj_request *request, const char *name)
{
    int index = pj_schema_param_index(request->schema, name);
    return index >= 0 ? request->values[index] : 0;
}

/* space.c — a tuning space: the tuned parameters' values (template lines, then the caller's
 * override), their product enumerated with the first declared parameter varying slowest,
 * each point validated as a request (constraints, `when`, the route), duplicates merged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/route.h"
#include "tune/space.h"

typedef struct {
    int param;       /* schema index */
    int64_t *values;
    int count;
} axis;

/* ---- axes ---- */

typedef struct {
    const pj_schema *schema;
    axis *axes; /* one per schema parameter; count 0: not tuned */
} axis_set;

static ptxjit_status set_axis(axis_set *set, int param, const char *values)
{
    axis *a = &set->axes[param];
    free(a->values);
    a->values = NULL;
    a->count = 0;
    return pj_tune_values_parse(&a->values, &a->count, &set->schema->params[param], values);
}

static ptxjit_status take_override(void *user, const char *word, size_t length)
{
    axis_set *set = user;
    const char *equals = memchr(word, '=', length);
    if (!equals || equals == word || equals == word + length - 1)
        return pj_error(PTXJIT_ERR_PARAM,
                        "%s: space word '%.*s' is not PARAM=VALUES (e.g. tpb=128,256 or "
                        "batch=1..16)", set->schema->family, (int)length, word);
    size_t n = (size_t)(equals - word);
    int index;
    ptxjit_status status = pj_tune_param_named(&index, set->schema, word, n, "the space");
    if (status != PTXJIT_OK)
        return status;
    char *values = pj_strndup(equals + 1, length - n - 1);
    if (!values)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    status = set_axis(set, index, values);
    free(values);
    return status == PTXJIT_ERR_PARAM
               ? pj_error_wrap(status, "%s: space \"%.*s\"", set->schema->family, (int)length,
                               word)
               : status;
}

static void axes_free(axis_set *set)
{
    for (int i = 0; set->axes && i < set->schema->param_count; i++)
        free(set->axes[i].values);
    free(set->axes);
}

static ptxjit_status axes_read(axis_set *set, const pj_schema *schema, const char *override,
                               const int *fixed)
{
    set->schema = schema;
    set->axes = calloc((size_t)schema->param_count + 1, sizeof *set->axes);
    if (!set->axes)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; i < schema->tune_count && status == PTXJIT_OK; i++)
        status = set_axis(set, schema->tunes[i].param, schema->tunes[i].values);
    if (status == PTXJIT_OK)
        status = pj_tune_each_word(override, " \t\n", take_override, set);
    for (int i = 0; i < schema->param_count; i++)
        if (fixed[i] == 1) { /* pinned: its fixed value, not its tune line */
            free(set->axes[i].values);
            set->axes[i] = (axis){i, NULL, 0};
        }
    return status;
}

static void value_text(pj_strbuf *sb, const pj_param *param, int64_t value)
{
    if (param->kind == PJ_PARAM_INT)
        pj_sb_appendf(sb, "%lld", (long long)value);
    else
        pj_sb_append(sb, param->values[value]);
}

static char *space_text(const axis_set *set)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, "");
    int written = 0;
    for (int i = 0; i < set->schema->param_count; i++) {
        const axis *a = &set->axes[i];
        if (!a->count)
            continue;
        pj_sb_appendf(&sb, "%s%s=", written++ ? " " : "", set->schema->params[i].name);
        for (int v = 0; v < a->count; v++) {
            pj_sb_append(&sb, v ? "," : "");
            value_text(&sb, &set->schema->params[i], a->values[v]);
        }
    }
    return pj_sb_take(&sb);
}

/* ---- points ---- */

ptxjit_status pj_tune_space_add(pj_tune_space *space, char *canonical)
{
    if (!canonical)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < space->count; i++)
        if (strcmp(space->points[i], canonical) == 0) {
            free(canonical);
            return PTXJIT_OK;
        }
    char **grown = realloc(space->points, (size_t)(space->count + 1) * sizeof *grown);
    if (!grown) {
        free(canonical);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    space->points = grown;
    grown[space->count++] = canonical;
    return PTXJIT_OK;
}

/* A point of the product: added, or counted as merged where an earlier point is the same
 * request. */
static ptxjit_status add_point(pj_tune_space *space, char *canonical)
{
    const int before = space->count;
    ptxjit_status status = pj_tune_space_add(space, canonical);
    space->merged += status == PTXJIT_OK && space->count == before;
    return status;
}

static void note_refusal(pj_tune_space *space)
{
    space->refused++;
    if (!space->refusal[0]) {
        free(space->refusal);
        space->refusal = pj_strdup(ptxjit_last_error());
        if (!space->refusal)
            space->refusal = pj_strdup("");
    }
}

/* The request of the point at digits (an index per axis), pruned or added. */
static ptxjit_status visit_point(pj_tune_space *space, const axis_set *set, const int *digits,
                                 const char *fixed, int sm, pj_backend backend)
{
    const pj_schema *schema = set->schema;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, fixed);
    for (int i = 0; i < schema->param_count; i++)
        if (set->axes[i].count) {
            pj_sb_appendf(&sb, " %s=", schema->params[i].name);
            value_text(&sb, &schema->params[i], set->axes[i].values[digits[i]]);
        }
    char *text = pj_sb_take(&sb);
    if (!text)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    pj_request request;
    ptxjit_status status = pj_request_parse_point(&request, schema, text, sm);
    free(text);
    if (status == PTXJIT_ERR_PARAM) {
        note_refusal(space);
        return PTXJIT_OK;
    }
    if (status != PTXJIT_OK)
        return status;
    status = pj_route_of(backend)->check(&request);
    if (status == PTXJIT_OK) {
        char *canonical = pj_backend_canonical(pj_request_canonical(&request), backend);
        status = add_point(space, canonical); /* NULL: out of memory */
    } else if (status != PTXJIT_ERR_OUT_OF_MEMORY) {
        note_refusal(space); /* the route does not build it: UNSUPPORTED, NO_COMPILER */
        status = PTXJIT_OK;
    }
    pj_request_free(&request);
    return status;
}

/* Every point, the first declared parameter varying slowest. */
static ptxjit_status enumerate(pj_tune_space *space, const axis_set *set, const char *fixed,
                               int sm, pj_backend backend)
{
    const pj_schema *schema = set->schema;
    int *digits = calloc((size_t)schema->param_count + 1, sizeof *digits);
    if (!digits)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = PTXJIT_OK;
    for (int done = 0; !done && status == PTXJIT_OK;) {
        space->considered++;
        status = visit_point(space, set, digits, fixed, sm, backend);
        done = 1;
        for (int i = schema->param_count - 1; i >= 0 && done; i--) {
            if (!set->axes[i].count)
                continue;
            if (++digits[i] < set->axes[i].count)
                done = 0;
            else
                digits[i] = 0;
        }
    }
    free(digits);
    return status;
}

static ptxjit_status check_size(const axis_set *set, const char *space)
{
    uint64_t product = 1;
    int tuned = 0;
    for (int i = 0; i < set->schema->param_count; i++)
        if (set->axes[i].count) {
            tuned++;
            product *= (uint64_t)set->axes[i].count;
            if (product > PJ_TUNE_MAX_POINTS)
                return pj_error(PTXJIT_ERR_PARAM,
                                "%s: the space %s has more than %d points; narrow it (a space "
                                "string such as \"%s=%s\" replaces the template's values)",
                                set->schema->family, space, PJ_TUNE_MAX_POINTS,
                                set->schema->params[i].name,
                                set->schema->params[i].default_text);
        }
    if (!tuned)
        return pj_error(PTXJIT_ERR_PARAM,
                        "%s: nothing to tune: the template declares no tune line for a parameter "
                        "that is not fixed; name the values to try in a space string (e.g. "
                        "\"%s=...\")",
                        set->schema->family,
                        set->schema->param_count ? set->schema->params[0].name : "param");
    return PTXJIT_OK;
}

/* The request of the fixed parameters alone: the reference configuration. */
static ptxjit_status reference_of(pj_tune_space *space, const pj_schema *schema, const char *rest,
                                  int sm, pj_backend backend)
{
    pj_request request;
    ptxjit_status status = pj_request_parse(&request, schema, rest, sm);
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "the fixed parameters '%s'", rest);
    space->reference = pj_backend_canonical(pj_request_canonical(&request), backend);
    pj_request_free(&request);
    return space->reference ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

static ptxjit_status build(pj_tune_space *out, const pj_schema *schema, const char *fixed,
                           const char *override, int sm, pj_backend default_backend, int points);

ptxjit_status pj_tune_space_build(pj_tune_space *out, const pj_schema *schema, const char *fixed,
                                  const char *override, int sm, pj_backend default_backend)
{
    return build(out, schema, fixed, override, sm, default_backend, 1);
}

ptxjit_status pj_tune_space_describe(pj_tune_space *out, const pj_schema *schema,
                                     const char *fixed, const char *override, int sm,
                                     pj_backend default_backend)
{
    return build(out, schema, fixed, override, sm, default_backend, 0);
}

static ptxjit_status build(pj_tune_space *out, const pj_schema *schema, const char *fixed,
                           const char *override, int sm, pj_backend default_backend, int points)
{
    memset(out, 0, sizeof *out);
    pj_backend backend;
    char *rest = NULL;
    pj_tune_fixed pinned;
    axis_set set = {schema, NULL};
    ptxjit_status status = pj_backend_take(&backend, &rest, fixed ? fixed : "", default_backend);
    if (status == PTXJIT_OK)
        status = pj_tune_fixed_read(&pinned, schema, rest);
    else
        memset(&pinned, 0, sizeof pinned);
    free(rest);
    rest = NULL;
    if (status == PTXJIT_OK)
        status = axes_read(&set, schema, override, pinned.seen);
    if (status == PTXJIT_OK) {
        out->fixed = pj_tune_fixed_text(&pinned);
        out->space = space_text(&set);
        out->refusal = pj_strdup("");
        if (!out->fixed || !out->space || !out->refusal)
            status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (status == PTXJIT_OK)
        status = check_size(&set, out->space);
    if (status == PTXJIT_OK)
        status = reference_of(out, schema, out->fixed, sm, backend);
    if (status == PTXJIT_OK && points)
        status = enumerate(out, &set, out->fixed, sm, backend);
    if (status == PTXJIT_OK && points && out->count == 0)
        status = pj_error(PTXJIT_ERR_PARAM,
                          "%s: every one of the %d points of the space %s is refused; the first "
                          "because: %s",
                          schema->family, out->considered, out->space, out->refusal);
    axes_free(&set);
    pj_tune_fixed_free(&pinned);
    if (status != PTXJIT_OK)
        pj_tune_space_free(out);
    return status;
}

void pj_tune_space_free(pj_tune_space *space)
{
    for (int i = 0; i < space->count; i++)
        free(space->points[i]);
    free(space->points);
    free(space->space);
    free(space->fixed);
    free(space->reference);
    free(space->refusal);
    memset(space, 0, sizeof *space);
}

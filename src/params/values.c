/* values.c — the values of one tuned parameter ("128,256,512", "64..1024"): apart from the
 * tuning space (space.c), since the schema parser checks every `tune` line with it and the
 * build tool that writes the built-in schemas (src/tools/embed_templates.c) links the parser
 * alone. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "params/values.h"

static ptxjit_status values_error(const pj_param *param, const char *text, const char *why)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_schema_describe_allowed(&sb, param);
    ptxjit_status status = pj_error(PTXJIT_ERR_PARAM,
                                    "tune values '%s' of parameter '%s': %s; %s must be %s",
                                    text, param->name, why, param->name,
                                    sb.data ? sb.data : "?");
    pj_sb_free(&sb);
    return status;
}

static int parse_number(const char *text, size_t length, int64_t *out)
{
    char buf[32];
    if (length == 0 || length >= sizeof buf)
        return 0;
    memcpy(buf, text, length);
    buf[length] = '\0';
    char *end;
    errno = 0;
    long long value = strtoll(buf, &end, 10);
    if (errno || *end)
        return 0;
    *out = value;
    return 1;
}

static int allowed_int(const pj_param *param, int64_t value)
{
    return value >= param->min && value <= param->max &&
           (!param->pow2 || pj_is_power_of_two(value));
}

static ptxjit_status append_value(int64_t **values, int *count, int64_t value,
                                  const pj_param *param, const char *text)
{
    for (int i = 0; i < *count; i++)
        if ((*values)[i] == value)
            return values_error(param, text, "a value is listed twice");
    if (*count == PJ_TUNE_MAX_VALUES)
        return values_error(param, text, "more than 64 values; narrow the list or the range");
    int64_t *grown = realloc(*values, (size_t)(*count + 1) * sizeof *grown);
    if (!grown)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    grown[(*count)++] = value;
    *values = grown;
    return PTXJIT_OK;
}

/* "LO..HI" of an int parameter: its powers of two (pow2) or every integer in the range. */
static ptxjit_status parse_range(int64_t **values, int *count, const pj_param *param,
                                 const char *text, const char *dots)
{
    int64_t low, high;
    if (!parse_number(text, (size_t)(dots - text), &low) ||
        !parse_number(dots + 2, strlen(dots + 2), &high) || low > high)
        return values_error(param, text, "a range is written LO..HI with LO <= HI");
    if (low < param->min || high > param->max)
        return values_error(param, text, "the range goes outside the parameter's own");
    /* The span in unsigned arithmetic: high - low overflows int64 for the widest ranges. */
    if (!param->pow2 && (uint64_t)high - (uint64_t)low >= PJ_TUNE_MAX_VALUES)
        return values_error(param, text, "more than 64 values; narrow the range or list them");
    ptxjit_status status = PTXJIT_OK;
    if (param->pow2) { /* powers of two from the first at or above low: at most 63 of them */
        for (uint64_t v = 1; status == PTXJIT_OK && v <= (uint64_t)INT64_MAX && (int64_t)v <= high;
             v *= 2) {
            if ((int64_t)v >= low)
                status = append_value(values, count, (int64_t)v, param, text);
            if (v > (uint64_t)INT64_MAX / 2)
                break;
        }
    } else {
        for (int64_t v = low; status == PTXJIT_OK; v++) {
            status = append_value(values, count, v, param, text);
            if (v == high)
                break; /* before v++ could pass INT64_MAX */
        }
    }
    if (status == PTXJIT_OK && *count == 0)
        status = values_error(param, text, "no power of two in the range");
    return status;
}

static ptxjit_status parse_list(int64_t **values, int *count, const pj_param *param,
                                const char *text)
{
    ptxjit_status status = PTXJIT_OK;
    for (const char *s = text; status == PTXJIT_OK;) {
        size_t n = strcspn(s, ",");
        int64_t value = -1;
        if (param->kind == PJ_PARAM_INT) {
            if (!parse_number(s, n, &value) || !allowed_int(param, value))
                return values_error(param, text, n ? "a value is not allowed" : "an empty value");
        } else {
            for (int v = 0; v < param->value_count; v++)
                if (strlen(param->values[v]) == n && strncmp(param->values[v], s, n) == 0)
                    value = v;
            if (value < 0)
                return values_error(param, text, n ? "a value is not allowed" : "an empty value");
        }
        status = append_value(values, count, value, param, text);
        if (!s[n])
            break;
        s += n + 1;
    }
    return status;
}

ptxjit_status pj_tune_values_parse(int64_t **out, int *count, const pj_param *param,
                                   const char *text)
{
    *out = NULL;
    *count = 0;
    const char *dots = strstr(text, "..");
    ptxjit_status status = !*text ? values_error(param, text, "no values")
                           : dots && param->kind == PJ_PARAM_INT
                               ? parse_range(out, count, param, text, dots)
                               : parse_list(out, count, param, text);
    if (status != PTXJIT_OK) {
        free(*out);
        *out = NULL;
        *count = 0;
    }
    return status;
}

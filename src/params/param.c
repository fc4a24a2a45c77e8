/* param.c — a schema's parameters by name, and what one of them allows, as messages say it. */
#include <string.h>

#include "params/param.h"

/* The family ops look up some forty names per call (matmul's config: 90 % of its time in
 * strcmp); comparing the first character before calling strcmp skips most of the calls. */
int pj_schema_param_index(const pj_schema *schema, const char *name)
{
    for (int i = 0; i < schema->param_count; i++)
        if (schema->params[i].name[0] == name[0] && strcmp(schema->params[i].name, name) == 0)
            return i;
    return -1;
}

int pj_param_value_index(const pj_param *param, const char *text)
{
    for (int i = 0; i < param->value_count; i++)
        if (strcmp(param->values[i], text) == 0)
            return i;
    return -1;
}

/* "a power of two in 32..1024", "one of a, b": the allowed values, as error messages and
 * pj_schema_describe show them. */
void pj_schema_describe_allowed(pj_strbuf *sb, const pj_param *param)
{
    if (param->kind == PJ_PARAM_INT) {
        pj_sb_appendf(sb, "%s in %lld..%lld", param->pow2 ? "a power of two" : "an integer",
                   (long long)param->min, (long long)param->max);
        return;
    }
    pj_sb_append(sb, param->kind == PJ_PARAM_DTYPE ? "dtype, one of " : "one of ");
    for (int v = 0; v < param->value_count; v++)
        pj_sb_appendf(sb, "%s%s", v ? ", " : "", param->values[v]);
}

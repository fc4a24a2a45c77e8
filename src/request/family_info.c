/* family_info.c — a family's schema as data (ptxjit_family_param and the rest): views of the
 * pj_schema the registry parsed from the template, so every string stays the context's; its
 * description as text (ptxjit_family_describe) and the canonical form of a request. */
#include <stdlib.h>
#include <string.h>

#include "request/route_llvm.h"
#include "context.h"
#include "select.h"
#include "templates.h"

/* ptxjit_param_kind is pj_param_kind under its public name. */
_Static_assert(PTXJIT_PARAM_INT == (int)PJ_PARAM_INT && PTXJIT_PARAM_ENUM == (int)PJ_PARAM_ENUM &&
                   PTXJIT_PARAM_DTYPE == (int)PJ_PARAM_DTYPE,
               "ptxjit_param_kind and pj_param_kind must agree");
static const char *const kind_names[] = {
    [PJ_PARAM_INT] = "int", [PJ_PARAM_ENUM] = "enum", [PJ_PARAM_DTYPE] = "dtype"};

/* The family's template in the registry's current snapshot, after checking the
 * out-parameter the caller passed. */
static ptxjit_status find_template(pj_template **template, const void *out,
                                   ptxjit_context *context, const char *family)
{
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "the out-parameter is NULL; pass where the answer should go");
    return pj_templates_find(template, NULL, context, family);
}

static ptxjit_status find(const pj_schema **schema, const void *out, ptxjit_context *context,
                          const char *family)
{
    pj_template *template;
    ptxjit_status status = find_template(&template, out, context, family);
    if (status == PTXJIT_OK)
        *schema = pj_template_schema(template);
    return status;
}

/* counter: the public function that says how many there are, for the fix. */
static ptxjit_status check_index(const pj_schema *schema, const char *what, const char *counter,
                                 int index, int count)
{
    if (index >= 0 && index < count)
        return PTXJIT_OK;
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                    "%s index %d is out of range: family '%s' has %d; ask %s how many there are",
                    what, index, schema->family, count, counter);
}

ptxjit_status ptxjit_family_doc(const char **out, ptxjit_context *context, const char *family)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        *out = schema->doc;
    return status;
}

ptxjit_status ptxjit_family_param_count(int *out, ptxjit_context *context, const char *family)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        *out = schema->param_count;
    return status;
}

ptxjit_status ptxjit_family_param(ptxjit_param_info *out, ptxjit_context *context,
                                  const char *family, int index)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        status = check_index(schema, "parameter", "ptxjit_family_param_count", index,
                             schema->param_count);
    if (status != PTXJIT_OK)
        return status;
    const pj_param *param = &schema->params[index];
    int integer = param->kind == PJ_PARAM_INT;
    *out = (ptxjit_param_info){
        .name = param->name,
        .kind = (ptxjit_param_kind)param->kind,
        .kind_name = kind_names[param->kind],
        .min = integer ? param->min : 0,
        .max = integer ? param->max : 0,
        .pow2 = integer && param->pow2,
        .value_count = integer ? 0 : param->value_count,
        /* char ** to const char *const *: C converts it only with a cast. */
        .values = integer ? NULL : (const char *const *)param->values,
        .default_value = param->default_value,
        .default_text = param->default_text,
        .default_if_count = param->case_count,
        .doc = param->doc,
        .when = param->when_text,
    };
    return PTXJIT_OK;
}

ptxjit_status ptxjit_family_default_if(ptxjit_default_if_info *out, ptxjit_context *context,
                                       const char *family, int param, int index)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        status = check_index(schema, "parameter", "ptxjit_family_param_count", param,
                             schema->param_count);
    if (status != PTXJIT_OK)
        return status;
    const pj_param *p = &schema->params[param];
    if (index < 0 || index >= p->case_count)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "default_if index %d is out of range: parameter '%s' of family '%s' has "
                        "%d; take the count from ptxjit_param_info's default_if_count",
                        index, p->name, schema->family, p->case_count);
    *out = (ptxjit_default_if_info){
        .condition = p->case_text[index],
        .value = p->case_value[index],
        .value_text = p->case_value_text[index],
    };
    return PTXJIT_OK;
}

ptxjit_status ptxjit_family_constraint_count(int *out, ptxjit_context *context,
                                             const char *family)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        *out = schema->constraint_count;
    return status;
}

ptxjit_status ptxjit_family_constraint(ptxjit_constraint_info *out, ptxjit_context *context,
                                       const char *family, int index)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        status = check_index(schema, "constraint", "ptxjit_family_constraint_count", index,
                             schema->constraint_count);
    if (status == PTXJIT_OK)
        *out = (ptxjit_constraint_info){.expression = schema->constraints[index].text,
                                        .message = schema->constraints[index].message};
    return status;
}

ptxjit_status ptxjit_family_entry_count(int *out, ptxjit_context *context, const char *family)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        *out = schema->entry_count;
    return status;
}

ptxjit_status ptxjit_family_entry(const char **out, ptxjit_context *context, const char *family,
                                  int index)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        status = check_index(schema, "entry", "ptxjit_family_entry_count", index,
                             schema->entry_count);
    if (status == PTXJIT_OK)
        *out = schema->entries[index];
    return status;
}

static char *describe_backends(char *text, const pj_schema *schema)
{
    if (!text)
        return NULL;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, text);
    free(text);
    const char *variants = pj_llvm_generator_variants(schema->family);
    pj_sb_append(&sb, "backends:\n  nvrtc  every request (the template, compiled by NVRTC)\n");
    if (!variants)
        pj_sb_append(&sb, "  llvm   not supported by this backend (no IR generator for the family)\n");
    else if (!pj_origin_is_builtin(schema->origin))
        pj_sb_append(&sb, "  llvm   not supported by this backend (it generates the built-in template's "
                       "kernels; this one is a user template)\n");
    else
        pj_sb_appendf(&sb, "  llvm   variants %s (IR generator v%d; backend=llvm)\n", variants,
                   pj_llvm_generator_version(schema->family));
    return pj_sb_take(&sb);
}

ptxjit_status ptxjit_family_describe(const char **out, ptxjit_context *context,
                                     const char *family)
{
    pj_template *template;
    ptxjit_status status = find_template(&template, out, context, family);
    if (status != PTXJIT_OK)
        return status;
    /* Made once per template and kept with it: the string outlives any reload. Built-in
     * templates are shared by every context of the process, so it is published with a
     * compare-and-swap rather than under one context's lock. */
    char *made = NULL, *expected = NULL;
    *out = __atomic_load_n(&template->description, __ATOMIC_ACQUIRE);
    const pj_schema *schema = pj_template_schema(template);
    if (!*out && (made = describe_backends(pj_schema_describe(schema), schema))) {
        if (__atomic_compare_exchange_n(&template->description, &expected, made, 0,
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            expected = made;
        else
            free(made);
        *out = expected;
    }
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status ptxjit_canonical_params(char **out, ptxjit_context *context, const char *family,
                                      const char *params)
{
    if (out)
        *out = NULL;
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    params = params ? params : "";
    const pj_schema *schema;
    ptxjit_status status = pj_context_schema(&schema, context, family);
    if (status != PTXJIT_OK)
        return status;
    pj_request request;
    pj_backend backend;
    char *rest = NULL;
    status = pj_backend_take(&backend, &rest, params, context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&request, schema, rest, pj_context_sm(context));
    free(rest);
    if (status != PTXJIT_OK)
        return status;
    *out = pj_backend_canonical(pj_request_canonical(&request), backend);
    pj_request_free(&request);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status ptxjit_family_tune_count(int *out, ptxjit_context *context, const char *family)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        *out = schema->tune_count;
    return status;
}

ptxjit_status ptxjit_family_tune_line(ptxjit_tune_line_info *out, ptxjit_context *context,
                                      const char *family, int index)
{
    const pj_schema *schema;
    ptxjit_status status = find(&schema, out, context, family);
    if (status == PTXJIT_OK)
        status = check_index(schema, "tune line", "ptxjit_family_tune_count", index,
                             schema->tune_count);
    if (status == PTXJIT_OK)
        *out = (ptxjit_tune_line_info){.param = schema->tunes[index].param_name,
                                       .values = schema->tunes[index].values};
    return status;
}

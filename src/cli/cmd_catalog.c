/* cmd_catalog.c — `list` and `info`: the families a context knows and one family's schema, as
 * text, or under --json as one document. No GPU needed. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"

/* {"families": [{"name": "reduce", "origin": "built-in:reduce.cu"}, ...],
 *  "problems": ["PATH: message", ...]} */
static void list_json(ptxjit_context *context)
{
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_key(&json, "families");
    cli_json_array_begin(&json);
    for (int i = 0; i < ptxjit_family_count(context); i++) {
        cli_json_object_begin(&json);
        cli_json_member_string(&json, "name", ptxjit_family_name(context, i));
        cli_json_member_string(&json, "origin", ptxjit_family_origin(context, i));
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    cli_json_key(&json, "problems");
    cli_json_array_begin(&json);
    for (int i = 0; i < ptxjit_template_problem_count(context); i++)
        cli_json_string(&json, ptxjit_template_problem(context, i));
    cli_json_array_end(&json);
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

/* The templates that could not be used were each logged as a warning when the context
 * opened; the list ends by saying what that means for it. */
static void list_problems(ptxjit_context *context)
{
    int count = ptxjit_template_problem_count(context);
    if (count)
        fprintf(stderr, "ptxjit: %d template problem%s, warned above: the families they name "
                        "are unavailable until the files are fixed\n",
                count, count == 1 ? "" : "s");
}

int cmd_list(cli_args *args)
{
    if (args->argc) {
        fprintf(stderr, "ptxjit: list takes no arguments, not '%s'; usage: ptxjit [--json] "
                        "list\n",
                args->argv[0]);
        return CLI_USAGE;
    }
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (args->json)
        list_json(context);
    else
        for (int i = 0; i < ptxjit_family_count(context); i++)
            printf("%-12s %s\n", ptxjit_family_name(context, i),
                   ptxjit_family_origin(context, i));
    list_problems(context);
    ptxjit_close(context);
    return CLI_OK;
}

static const char *family_origin(ptxjit_context *context, const char *family)
{
    for (int i = 0; i < ptxjit_family_count(context); i++)
        if (strcmp(ptxjit_family_name(context, i), family) == 0)
            return ptxjit_family_origin(context, i);
    return NULL;
}

/* One parameter: its kind's own members (int: min, max, pow2; enum and dtype: values), then
 * the default as a request writes it, the conditional defaults in the order they are tried,
 * doc and when (null when the template gives none). */
static ptxjit_status param_json(cli_json *json, ptxjit_context *context, const char *family,
                                int index)
{
    ptxjit_param_info param;
    ptxjit_status status = ptxjit_family_param(&param, context, family, index);
    if (status != PTXJIT_OK)
        return status;
    cli_json_object_begin(json);
    cli_json_member_string(json, "name", param.name);
    cli_json_member_string(json, "kind", param.kind_name);
    if (param.kind == PTXJIT_PARAM_INT) {
        cli_json_member_int(json, "min", param.min);
        cli_json_member_int(json, "max", param.max);
        cli_json_key(json, "pow2");
        cli_json_bool(json, param.pow2);
    } else {
        cli_json_key(json, "values");
        cli_json_flat_array_begin(json);
        for (int v = 0; v < param.value_count; v++)
            cli_json_string(json, param.values[v]);
        cli_json_array_end(json);
    }
    cli_json_member_string(json, "default", param.default_text);
    cli_json_key(json, "default_if");
    cli_json_array_begin(json);
    for (int c = 0; c < param.default_if_count; c++) {
        ptxjit_default_if_info when;
        status = ptxjit_family_default_if(&when, context, family, index, c);
        if (status != PTXJIT_OK)
            break;
        cli_json_object_begin(json);
        cli_json_member_string(json, "when", when.condition);
        cli_json_member_string(json, "value", when.value_text);
        cli_json_object_end(json);
    }
    cli_json_array_end(json);
    cli_json_member_string(json, "doc", param.doc);
    cli_json_member_string(json, "when", param.when);
    cli_json_object_end(json);
    return status;
}

/* The family's schema as one object. The counts are asked first: an unknown family fails
 * there, before anything is written; past them no call can fail. */
static ptxjit_status info_json(ptxjit_context *context, const char *family)
{
    const char *doc;
    int params, constraints, entries;
    ptxjit_status status = ptxjit_family_doc(&doc, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_param_count(&params, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_constraint_count(&constraints, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_entry_count(&entries, context, family);
    if (status != PTXJIT_OK)
        return status;
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_member_string(&json, "family", family);
    cli_json_member_string(&json, "origin", family_origin(context, family));
    cli_json_member_string(&json, "doc", doc);
    cli_json_key(&json, "params");
    cli_json_array_begin(&json);
    for (int i = 0; i < params && status == PTXJIT_OK; i++)
        status = param_json(&json, context, family, i);
    cli_json_array_end(&json);
    cli_json_key(&json, "constraints");
    cli_json_array_begin(&json);
    for (int i = 0; i < constraints && status == PTXJIT_OK; i++) {
        ptxjit_constraint_info constraint;
        if ((status = ptxjit_family_constraint(&constraint, context, family, i)) != PTXJIT_OK)
            break;
        cli_json_object_begin(&json);
        cli_json_member_string(&json, "expression", constraint.expression);
        cli_json_member_string(&json, "message", constraint.message);
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    int tunes = 0;
    if (status == PTXJIT_OK)
        status = ptxjit_family_tune_count(&tunes, context, family);
    cli_json_key(&json, "tune");
    cli_json_array_begin(&json);
    for (int i = 0; i < tunes && status == PTXJIT_OK; i++) {
        ptxjit_tune_line_info line;
        if ((status = ptxjit_family_tune_line(&line, context, family, i)) != PTXJIT_OK)
            break;
        cli_json_object_begin(&json);
        cli_json_member_string(&json, "param", line.param);
        cli_json_member_string(&json, "values", line.values);
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    cli_json_key(&json, "entries");
    cli_json_flat_array_begin(&json);
    for (int i = 0; i < entries && status == PTXJIT_OK; i++) {
        const char *entry;
        if ((status = ptxjit_family_entry(&entry, context, family, i)) == PTXJIT_OK)
            cli_json_string(&json, entry);
    }
    cli_json_array_end(&json);
    cli_json_object_end(&json);
    cli_json_finish(&json);
    return status;
}

int cmd_info(cli_args *args)
{
    if (args->argc != 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit info FAMILY\n");
        return CLI_USAGE;
    }
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    const char *text;
    ptxjit_status status = args->json ? info_json(context, args->argv[0])
                                      : ptxjit_family_describe(&text, context, args->argv[0]);
    if (status == PTXJIT_OK && !args->json)
        fputs(text, stdout);
    if (status != PTXJIT_OK)
        code = cli_fail(status);
    ptxjit_close(context);
    return code;
}

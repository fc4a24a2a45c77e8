/* test_builtins.c — the built-in templates' schemas made at build time
 * (src/tools/embed_templates.c): each equals, field by field and tree by tree, what
 * pj_schema_parse makes of the embedded text at run time, its text hash included; a request
 * for a built-in family gets that schema without parsing; the key made from the schema's
 * hash is the key of the text itself. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/key.h"
#include "request/context.h"
#include "request/templates.h"
#include "params/expr_node.h"
#include "test_util.h"

/* Both NULL, or both equal text; path names the field in a failure. */
static void same_string(const char *built, const char *parsed, const char *path)
{
    if (!built || !parsed) {
        ck_assert_msg(built == parsed, "%s: %s against %s", path, built ? built : "NULL",
                      parsed ? parsed : "NULL");
        return;
    }
    ck_assert_msg(strcmp(built, parsed) == 0, "%s: '%s' against '%s'", path, built, parsed);
}

static void same_expr(const pj_expr *built, const pj_expr *parsed, const char *path)
{
    if (!built || !parsed) {
        ck_assert_msg(built == parsed, "%s: a tree against none", path);
        return;
    }
    ck_assert_msg(built->kind == parsed->kind && built->value == parsed->value &&
                      memcmp(built->op, parsed->op, sizeof built->op) == 0,
                  "%s: node %d/%lld/'%s' against %d/%lld/'%s'", path, (int)built->kind,
                  (long long)built->value, built->op, (int)parsed->kind,
                  (long long)parsed->value, parsed->op);
    same_expr(built->left, parsed->left, path);
    same_expr(built->right, parsed->right, path);
}

static void same_param(const pj_param *b, const pj_param *p, const char *family)
{
    char path[256];
    snprintf(path, sizeof path, "%s.%s", family, p->name);
    same_string(b->name, p->name, path);
    ck_assert_msg(b->kind == p->kind && b->min == p->min && b->max == p->max &&
                      b->pow2 == p->pow2 && b->value_count == p->value_count &&
                      b->default_value == p->default_value && b->case_count == p->case_count,
                  "%s: type, range, default or counts differ", path);
    for (int v = 0; v < p->value_count; v++) {
        same_string(b->values[v], p->values[v], path);
        if (p->kind == PJ_PARAM_DTYPE)
            ck_assert_msg(b->dtypes[v] == p->dtypes[v], "%s: dtype %d differs", path, v);
    }
    ck_assert_msg((b->dtypes != NULL) == (p->dtypes != NULL), "%s: dtypes", path);
    same_string(b->default_text, p->default_text, path);
    for (int c = 0; c < p->case_count; c++) {
        same_string(b->case_text[c], p->case_text[c], path);
        same_string(b->case_value_text[c], p->case_value_text[c], path);
        ck_assert_msg(b->case_value[c] == p->case_value[c], "%s: case %d's value", path, c);
        same_expr(b->case_when[c], p->case_when[c], path);
    }
    ck_assert_msg(b->case_when && !b->case_when[b->case_count],
                  "%s: case_when must end with NULL as the parser's does", path);
    same_string(b->doc, p->doc, path);
    same_string(b->when_text, p->when_text, path);
    same_expr(b->when, p->when, path);
}

static void same_schema(const pj_schema *b, const pj_schema *p)
{
    const char *family = p->family;
    same_string(b->family, p->family, "family");
    same_string(b->doc, p->doc, family);
    same_string(b->origin, p->origin, family);
    same_string(b->source, p->source, family);
    ck_assert_msg(b->source_hash.low == p->source_hash.low &&
                      b->source_hash.high == p->source_hash.high,
                  "%s: the text's hash differs", family);
    pj_hash128 text = pj_hash(p->source, strlen(p->source));
    ck_assert(text.low == b->source_hash.low && text.high == b->source_hash.high);
    ck_assert_int_eq(b->param_count, p->param_count);
    for (int i = 0; i < p->param_count; i++)
        same_param(&b->params[i], &p->params[i], family);
    ck_assert_int_eq(b->constraint_count, p->constraint_count);
    for (int i = 0; i < p->constraint_count; i++) {
        same_string(b->constraints[i].text, p->constraints[i].text, family);
        same_string(b->constraints[i].message, p->constraints[i].message, family);
        same_expr(b->constraints[i].expr, p->constraints[i].expr, family);
    }
    ck_assert_int_eq(b->entry_count, p->entry_count);
    for (int i = 0; i < p->entry_count; i++)
        same_string(b->entries[i], p->entries[i], family);
    ck_assert_int_eq(b->tune_count, p->tune_count);
    for (int i = 0; i < p->tune_count; i++) {
        same_string(b->tunes[i].param_name, p->tunes[i].param_name, family);
        same_string(b->tunes[i].values, p->tunes[i].values, family);
        ck_assert_int_eq(b->tunes[i].param, p->tunes[i].param);
        ck_assert_int_eq(b->tunes[i].line, p->tunes[i].line);
    }
    ck_assert_int_eq(b->nvrtc_half_storage, p->nvrtc_half_storage);
    ck_assert_int_eq(b->nvrtc_minimal, p->nvrtc_minimal);
    ck_assert_int_eq(b->nvrtc_fast_compile, p->nvrtc_fast_compile);
    char *described = pj_schema_describe(b), *parse_described = pj_schema_describe(p);
    ck_assert_str_eq(described, parse_described);
    free(described);
    free(parse_described);
}

START_TEST(every_builtin_schema_equals_its_parse)
{
    int count = 0;
    for (const pj_embedded_template *t = pj_embedded_templates; t->path; t++, count++) {
        pj_schema *parsed = NULL;
        ck_assert_msg(pj_schema_parse(&parsed, t->text, t->origin) == PTXJIT_OK, "%s: %s",
                      t->path, ptxjit_last_error());
        ck_assert_ptr_nonnull(t->schema);
        same_schema(t->schema, parsed);
        ck_assert_str_eq(t->family, parsed->family);
        /* The registry's table of the same template. */
        ck_assert_int_lt(count, pj_builtin_template_count);
        ck_assert_ptr_eq(pj_builtin_templates[count].schema, t->schema);
        ck_assert_str_eq(pj_builtin_templates[count].family, t->family);
        ck_assert_str_eq(pj_builtin_templates[count].origin, t->origin);
        pj_schema_free(parsed);
    }
    ck_assert_int_ge(count, 4); /* reduce, transpose, matmul, softmax at least */
    ck_assert_int_eq(count, pj_builtin_template_count);
}
END_TEST

/* A request for every built-in family gets the build's schema itself: nothing was parsed. */
START_TEST(requests_use_the_built_schema)
{
    ptxjit_context *context = test_open_offline(NULL);
    for (const pj_embedded_template *t = pj_embedded_templates; t->path; t++) {
        const pj_schema *schema = NULL;
        ck_assert_int_eq(pj_context_schema(&schema, context, t->family), PTXJIT_OK);
        ck_assert_ptr_eq(schema, t->schema);
    }
    ptxjit_kernel *kernel = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "tpb=128", NULL), PTXJIT_OK);
    const pj_embedded_template *reduce = pj_embedded_templates;
    while (strcmp(reduce->family, "reduce") != 0)
        reduce++;
    ck_assert_ptr_eq(kernel->schema, reduce->schema);
    ptxjit_close(context);
}
END_TEST

/* The key holds the template as its hash: a schema's hash, given, makes the key that the
 * text makes when the key hashes it itself; another text, another key. */
START_TEST(key_of_the_hash_is_the_key_of_the_text)
{
    const pj_schema *schema = pj_embedded_templates[0].schema;
    const char *options[] = {"-arch=sm_90a"};
    pj_key_inputs in = {schema->family, "tpb=128", schema->source, "nvrtc", "nvrtc 13.0",
                        "sm_90a", options, 1, 4, NULL, &schema->source_hash, NULL};
    pj_hash128 from_hash, from_text, other;
    ck_assert_int_eq(pj_cache_key(&from_hash, &in), PTXJIT_OK);
    in.template_hash = NULL;
    ck_assert_int_eq(pj_cache_key(&from_text, &in), PTXJIT_OK);
    ck_assert(from_hash.low == from_text.low && from_hash.high == from_text.high);
    in.template_source = "//@ptxjit family reduce\n";
    ck_assert_int_eq(pj_cache_key(&other, &in), PTXJIT_OK);
    ck_assert(other.low != from_text.low || other.high != from_text.high);
}
END_TEST

Suite *suite_builtins(void)
{
    Suite *s = suite_create("builtins");
    TCase *tc = tcase_create("schemas");
    tcase_add_test(tc, every_builtin_schema_equals_its_parse);
    tcase_add_test(tc, requests_use_the_built_schema);
    tcase_add_test(tc, key_of_the_hash_is_the_key_of_the_text);
    suite_add_tcase(s, tc);
    return s;
}

/* test_families.c — the family table against what else describes each family: its built-in
 * template's name and `variant` enum, the LLVM generator's variants, and a launch geometry
 * for every variant's defaults. A family that drifted in one place fails here. */
#include <stdio.h>
#include <string.h>

#include "request/route_llvm.h"
#include "request/context.h"
#include "catalog/family.h"
#include "catalog/variants.h"
#include "test_util.h"

/* The `variant` enum of schema as "a,b,c" ("" when it has none). */
static void schema_variants(char *out, size_t size, const pj_schema *schema)
{
    out[0] = '\0';
    int index = pj_schema_param_index(schema, "variant");
    if (index < 0)
        return;
    const pj_param *param = &schema->params[index];
    for (int v = 0; v < param->value_count; v++)
        snprintf(out + strlen(out), size - strlen(out), "%s%s", v ? "," : "", param->values[v]);
}

START_TEST(each_template_declares_its_family_and_variant_list)
{
    ptxjit_context *context = test_open_offline(NULL);
    int count = 0;
    for (int i = 0; pj_families[i]; i++, count++) {
        const pj_family *family = pj_families[i];
        const pj_schema *schema = pj_context_find_schema(context, family->name);
        ck_assert_msg(schema, "family %s has no template", family->name);
        char origin[128];
        snprintf(origin, sizeof origin, "built-in:%s.cu", family->name);
        ck_assert_str_eq(schema->origin, origin);
        char variants[1024];
        schema_variants(variants, sizeof variants, schema);
        ck_assert_msg(strcmp(variants, family->variants) == 0,
                      "%s: the template's variants '%s' differ from the family's '%s'",
                      family->name, variants, family->variants);
    }
    /* And no built-in template without a family. */
    int builtin = 0;
    for (int i = 0; i < ptxjit_family_count(context); i++)
        builtin += strncmp(ptxjit_family_origin(context, i), "built-in:", 9) == 0;
    ck_assert_int_eq(builtin, count);
    ptxjit_close(context);
}
END_TEST

START_TEST(generator_variants_are_the_familys)
{
    for (int i = 0; pj_families[i]; i++) {
        const pj_family *family = pj_families[i];
        ck_assert_int_gt(family->llvm_version, 0);
        for (const char *s = family->llvm_variants; *s;) {
            size_t n = strcspn(s, ",");
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)n, s);
            ck_assert_msg(pj_variant_index(family->variants, name) >= 0,
                          "%s: the generator builds '%s', which the family lacks", family->name,
                          name);
            s += n + (s[n] == ',');
        }
        ck_assert_int_eq(pj_llvm_generator_version(family->name), family->llvm_version);
    }
}
END_TEST

START_TEST(every_variant_has_a_launch_geometry)
{
    ptxjit_context *context = test_open_offline(NULL);
    for (int i = 0; pj_families[i]; i++) {
        const pj_family *family = pj_families[i];
        const pj_schema *schema = pj_context_find_schema(context, family->name);
        for (const char *s = family->variants; *s;) {
            size_t n = strcspn(s, ",");
            char params[96];
            snprintf(params, sizeof params, "variant=%.*s", (int)n, s);
            pj_request request;
            ck_assert_msg(pj_request_parse(&request, schema, params, 90) == PTXJIT_OK, "%s %s: %s",
                          family->name, params, ptxjit_last_error());
            pj_geometry geometry = {0, 0};
            ck_assert_int_eq(family->geometry(&geometry, &request), PTXJIT_OK);
            ck_assert_msg(geometry.threads >= 32 && geometry.threads <= 1024, "%s %s: %u threads",
                          family->name, params, geometry.threads);
            ck_assert_uint_le(geometry.shared_bytes, 232448);
            pj_request_free(&request);
            s += n + (s[n] == ',');
        }
    }
    ptxjit_close(context);
}
END_TEST

START_TEST(bench_sets_are_valid_requests)
{
    ptxjit_context *context = test_open_offline(NULL);
    for (int i = 0; pj_families[i]; i++) {
        const pj_family *family = pj_families[i];
        for (const char *const *set = family->bench_sets; set && *set; set++) {
            char *canonical = NULL;
            ck_assert_msg(ptxjit_canonical_params(&canonical, context, family->name, *set) ==
                              PTXJIT_OK,
                          "%s %s: %s", family->name, *set, ptxjit_last_error());
            free(canonical);
        }
    }
    ptxjit_close(context);
}
END_TEST

START_TEST(find_knows_each_family_and_nothing_else)
{
    for (int i = 0; pj_families[i]; i++)
        ck_assert_ptr_eq(pj_family_find(pj_families[i]->name), pj_families[i]);
    ck_assert_ptr_null(pj_family_find("no_such_family"));
    ck_assert_ptr_null(pj_family_find(NULL));
}
END_TEST

Suite *suite_families(void)
{
    Suite *s = suite_create("families");
    TCase *t = tcase_create("table");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, each_template_declares_its_family_and_variant_list);
    tcase_add_test(t, generator_variants_are_the_familys);
    tcase_add_test(t, every_variant_has_a_launch_geometry);
    tcase_add_test(t, bench_sets_are_valid_requests);
    tcase_add_test(t, find_knows_each_family_and_nothing_else);
    suite_add_tcase(s, t);
    return s;
}

/* test_params.c — template schemas, the constraint language, requests and canonical form. */
#include <stdio.h>
#include <string.h>

#include "params/schema.h"
#include "test_util.h"

static const char *const small_template =
    "//@ptxjit family demo\n"
    "//@ptxjit entry k\n"
    "//@ptxjit param mode enum(slow,fast) default=fast doc=\"which path\"\n"
    "//@ptxjit param width int(1..64) pow2 default=8\n"
    "//@ptxjit param depth int(1..10) default=3 when=\"mode == fast\"\n"
    "//@ptxjit param dtype dtype(i32,f32,f16) default=f32\n"
    "//@ptxjit constraint \"width * bytes(dtype) <= 128\" \"a row must fit 128 bytes\"\n"
    "extern \"C\" __global__ void k() {}\n";

static pj_schema *demo_schema(void)
{
    pj_schema *schema = NULL;
    ck_assert_int_eq(pj_schema_parse(&schema, small_template, "demo.cu"), PTXJIT_OK);
    return schema;
}

/* Parses text against the demo schema; returns the canonical form or the error message. */
static char *canonical_or_error(const char *text, ptxjit_status *status)
{
    pj_schema *schema = demo_schema();
    pj_request request;
    *status = pj_request_parse(&request, schema, text, 90);
    char *result = *status == PTXJIT_OK ? pj_request_canonical(&request) : pj_strdup(ptxjit_last_error());
    if (*status == PTXJIT_OK)
        pj_request_free(&request);
    pj_schema_free(schema);
    return result;
}

static void expect_template_error(const char *source, const char *needle)
{
    pj_schema *schema = NULL;
    ck_assert_int_eq(pj_schema_parse(&schema, source, "bad.cu"), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_null(schema);
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "message '%s' lacks '%s'",
                  ptxjit_last_error(), needle);
}

START_TEST(schema_reads_every_directive)
{
    pj_schema *schema = demo_schema();
    ck_assert_str_eq(schema->family, "demo");
    ck_assert_int_eq(schema->param_count, 4);
    ck_assert_int_eq(schema->entry_count, 1);
    ck_assert_int_eq(schema->constraint_count, 1);
    ck_assert_int_eq(schema->params[1].pow2, 1);
    ck_assert_int_eq(schema->params[1].max, 64);
    ck_assert_str_eq(schema->params[0].doc, "which path");
    ck_assert_int_eq(schema->params[0].default_value, 1);
    char *text = pj_schema_describe(schema);
    ck_assert_ptr_nonnull(strstr(text, "power of two in 1..64"));
    ck_assert_ptr_nonnull(strstr(text, "applies when mode == fast"));
    free(text);
    pj_schema_free(schema);
}
END_TEST

START_TEST(schema_requires_family_and_entry)
{
    expect_template_error("//@ptxjit entry k\n", "family");
    expect_template_error("//@ptxjit family x\n", "entry");
}
END_TEST

START_TEST(schema_rejects_unknown_directive_with_line)
{
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n//@ptxjit colour red\n",
                          "bad.cu:3: unknown directive 'colour'");
}
END_TEST

START_TEST(schema_rejects_bad_types_and_defaults)
{
    expect_template_error("//@ptxjit family x\n//@ptxjit param a int(9..1) default=3\n",
                          "MIN <= MAX");
    expect_template_error("//@ptxjit family x\n//@ptxjit param a int(1..8) default=30\n",
                          "outside");
    expect_template_error("//@ptxjit family x\n//@ptxjit param a int(1..8) pow2 default=3\n",
                          "outside");
    expect_template_error("//@ptxjit family x\n//@ptxjit param a dtype(i32,q7) default=i32\n",
                          "unknown dtype 'q7'");
    expect_template_error("//@ptxjit family x\n//@ptxjit param a enum(p,q) default=r\n",
                          "not one of the listed values");
    expect_template_error("//@ptxjit family x\n//@ptxjit param a float(1) default=1\n",
                          "unknown parameter type");
    expect_template_error("//@ptxjit family x\n//@ptxjit param a int(1..8)\n", "default=");
}
END_TEST

/* Found by review: each was accepted, and each made a template that misbehaved later. */
START_TEST(schema_rejects_reserved_names_and_late_checks)
{
    static const char *const reserved[] = {"backend", "sm", "bytes"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(reserved); i++) {
        char text[256];
        snprintf(text, sizeof text, "//@ptxjit family x\n//@ptxjit param %s int(1..8) default=1\n",
                 reserved[i]);
        expect_template_error(text, "is reserved");
    }
    expect_template_error("//@ptxjit family x\n//@ptxjit param a enum(p,auto) default=p\n",
                          "value 'auto' is reserved");
    expect_template_error("//@ptxjit family x\n//@ptxjit param w enum(64,128) default=64\n",
                          "value '64' is a number");
    /* names that meet in the prelude, upper-cased and joined by '_' */
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param tpb int(1..8) default=1\n"
                          "//@ptxjit param TPB int(1..8) default=1\n",
                          "both define TPB");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param m enum(a,A) default=a\n",
                          "both define M_A");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a_b enum(c,d) default=c\n"
                          "//@ptxjit param a enum(b_c,e) default=e\n",
                          "both define A_B_C");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param t dtype(f32,f16) default=f32\n"
                          "//@ptxjit param t_id int(1..8) default=1\n",
                          "both define T_ID");
    /* default_if read before the pow2 word that follows it */
    expect_template_error("//@ptxjit family x\n//@ptxjit param m int(1..4) default=2\n"
                          "//@ptxjit param t int(1..1024) default_if=\"m == 1 => 3\" pow2 "
                          "default=64\n",
                          "not a power of two");
    /* an integer literal past int64 in an expression */
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1\n"
                          "//@ptxjit constraint \"99999999999999999999 == 9223372036854775807\" "
                          "\"never\"\n",
                          "out of range");
    /* the widest pow2 range: its powers of two, not a walk of 2^63 values */
    pj_schema *schema = NULL;
    ck_assert_int_eq(pj_schema_parse(&schema,
                                     "//@ptxjit family x\n//@ptxjit entry k\n"
                                     "//@ptxjit param a int(1..9223372036854775807) pow2 default=1\n"
                                     "//@ptxjit param b int(-9223372036854775807..9223372036854775807) "
                                     "default=1\n"
                                     "//@ptxjit tune a 1..4611686018427387904\n"
                                     "//@ptxjit tune b 9223372036854775800..9223372036854775807\n",
                                     "wide.cu"),
                     PTXJIT_OK);
    pj_schema_free(schema);
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param b int(-9223372036854775807..9223372036854775807) "
                          "default=1\n//@ptxjit tune b -9223372036854775807..9223372036854775807\n",
                          "more than 64 values");
}
END_TEST

/* Integers in a request are decimal: a leading zero is no octal. */
START_TEST(request_integers_are_decimal)
{
    ptxjit_status status;
    char *canonical = canonical_or_error("width=008", &status);
    ck_assert_int_eq(status, PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(canonical, "width=8"));
    free(canonical);
    canonical = canonical_or_error("width=0x10", &status);
    ck_assert_int_eq(status, PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(canonical, "not an integer"));
    free(canonical);
}
END_TEST

START_TEST(schema_rejects_duplicates)
{
    expect_template_error("//@ptxjit family x\n//@ptxjit param a int(1..8) default=1\n"
                          "//@ptxjit param a int(1..8) default=1\n",
                          "declared twice");
    expect_template_error("//@ptxjit family x\n//@ptxjit param a enum(p,p) default=p\n",
                          "listed twice");
}
END_TEST

START_TEST(schema_rejects_bad_expressions)
{
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1\n"
                          "//@ptxjit constraint \"a < nothing\" \"m\"\n",
                          "unknown name 'nothing'");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1\n"
                          "//@ptxjit constraint \"(a < 3\" \"m\"\n",
                          "expected ')'");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1\n"
                          "//@ptxjit constraint \"bytes(a) > 1\" \"m\"\n",
                          "bytes() takes a dtype");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit constraint \"1 < 2\" \"unterminated\n",
                          "unbalanced quotes");
    /* A constraint's expression is parsed after every param line: its error still names the
     * constraint's own line (issue 29, 10). */
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit constraint \"a >\" \"m\"\n"
                          "//@ptxjit param a int(1..8) default=1\n",
                          "bad.cu:3: constraint: in expression \"a >\"");
}
END_TEST

/* Found by fuzzing: a second doc= (or when=) replaced and leaked the first. */
START_TEST(schema_rejects_an_attribute_given_twice)
{
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1 doc=one doc=two\n",
                          "bad.cu:3: param attribute 'doc=' is given twice");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1 default=2\n",
                          "'default=' is given twice");
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param a enum(p,q) pow2 default=p\n",
                          "unknown param attribute 'pow2'");
}
END_TEST

/* Found by fuzzing: bytes(sm) read one parameter past the end of the schema's list. */
START_TEST(schema_rejects_bytes_of_sm)
{
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param t dtype(f32) default=f32\n"
                          "//@ptxjit constraint \"bytes(sm) == 4\" \"m\"\n",
                          "bytes() takes a dtype");
}
END_TEST

START_TEST(schema_rejects_expressions_nested_too_deeply)
{
    char source[1024] = "//@ptxjit family x\n//@ptxjit entry k\n//@ptxjit constraint \"";
    for (int i = 0; i < 70; i++)
        strcat(source, "(");
    strcat(source, "1");
    for (int i = 0; i < 70; i++)
        strcat(source, ")");
    strcat(source, "\" \"m\"\n");
    expect_template_error(source, "nested too deeply");
}
END_TEST

START_TEST(schema_power_of_two_default_is_positive)
{
    expect_template_error("//@ptxjit family x\n//@ptxjit entry k\n"
                          "//@ptxjit param n int(-9223372036854775808..4) pow2 "
                          "default=-9223372036854775808\n",
                          "outside");
}
END_TEST

static int64_t eval_text(const char *text, int64_t mode, int64_t width, int64_t dtype)
{
    pj_schema *schema = demo_schema();
    pj_expr *expr;
    ck_assert_int_eq(pj_expr_parse(&expr, text, schema), PTXJIT_OK);
    int64_t values[5] = {mode, width, 3, dtype, 90};
    int64_t result = pj_expr_eval(expr, values, schema);
    pj_expr_free(expr);
    pj_schema_free(schema);
    return result;
}

START_TEST(expr_follows_c_precedence)
{
    ck_assert_int_eq(eval_text("1 + 2 * 3", 0, 0, 0), 7);
    ck_assert_int_eq(eval_text("(1 + 2) * 3", 0, 0, 0), 9);
    ck_assert_int_eq(eval_text("10 - 4 - 3", 0, 0, 0), 3);
    ck_assert_int_eq(eval_text("7 % 4 == 3 && !(2 > 3)", 0, 0, 0), 1);
    ck_assert_int_eq(eval_text("1 < 2 == 1", 0, 0, 0), 1);
    ck_assert_int_eq(eval_text("-width + 10", 0, 4, 0), 6);
    ck_assert_int_eq(eval_text("width / 0", 0, 4, 0), 0);
}
END_TEST

/* Found by fuzzing: overflow was undefined behaviour (and INT64_MIN / -1 a SIGFPE). */
START_TEST(expr_arithmetic_wraps_instead_of_overflowing)
{
    ck_assert_int_eq(eval_text("9223372036854775807 + 1 < 0", 0, 0, 0), 1);
    ck_assert_int_eq(eval_text("9223372036854775807 * 2", 0, 0, 0), -2);
    ck_assert_int_eq(eval_text("(0 - 9223372036854775807 - 1) / -1 < 0", 0, 0, 0), 1);
    ck_assert_int_eq(eval_text("(0 - 9223372036854775807 - 1) % -1", 0, 0, 0), 0);
    ck_assert_int_eq(eval_text("-(0 - 9223372036854775807 - 1) < 0", 0, 0, 0), 1);
    ck_assert_int_eq(eval_text("-7 / 2", 0, 0, 0), -3);
}
END_TEST

START_TEST(expr_reads_params_enums_and_dtype_sizes)
{
    ck_assert_int_eq(eval_text("mode == fast", 1, 0, 0), 1);
    ck_assert_int_eq(eval_text("mode == fast", 0, 0, 0), 0);
    ck_assert_int_eq(eval_text("mode != slow || width > 100", 0, 8, 0), 0);
    ck_assert_int_eq(eval_text("bytes(dtype)", 0, 0, 2), 2);
    ck_assert_int_eq(eval_text("bytes(dtype) * width", 0, 16, 0), 64);
    ck_assert_int_eq(eval_text("dtype == f32", 0, 0, 1), 1);
    ck_assert_int_eq(eval_text("sm >= 90", 0, 0, 0), 1);
}
END_TEST

START_TEST(request_fills_defaults_in_canonical_order)
{
    ptxjit_status status;
    char *text = canonical_or_error("", &status);
    ck_assert_int_eq(status, PTXJIT_OK);
    ck_assert_str_eq(text, "depth=3 dtype=f32 mode=fast width=8");
    free(text);
}
END_TEST

START_TEST(request_canonical_ignores_order_and_separators)
{
    ptxjit_status status;
    char *a = canonical_or_error("width=16 dtype=i32", &status);
    ck_assert_int_eq(status, PTXJIT_OK);
    char *b = canonical_or_error(" dtype=i32,width=16\t", &status);
    ck_assert_int_eq(status, PTXJIT_OK);
    ck_assert_str_eq(a, b);
    ck_assert_str_eq(a, "depth=3 dtype=i32 mode=fast width=16");
    free(a);
    free(b);
}
END_TEST

START_TEST(request_drops_parameters_that_do_not_apply)
{
    ptxjit_status status;
    char *text = canonical_or_error("mode=slow", &status);
    ck_assert_int_eq(status, PTXJIT_OK);
    ck_assert_str_eq(text, "dtype=f32 mode=slow width=8");
    free(text);
}
END_TEST

static void expect_param_error(const char *text, const char *const *needles)
{
    ptxjit_status status;
    char *message = canonical_or_error(text, &status);
    ck_assert_int_eq(status, PTXJIT_ERR_PARAM);
    for (; *needles; needles++)
        ck_assert_msg(strstr(message, *needles), "'%s' lacks '%s'", message, *needles);
    free(message);
}

START_TEST(request_unknown_key_lists_the_parameters)
{
    const char *const needles[] = {"demo", "unknown parameter 'colour'",
                                   "mode, width, depth, dtype", NULL};
    expect_param_error("colour=red", needles);
}
END_TEST

START_TEST(request_non_power_of_two_names_allowed_values)
{
    const char *const needles[] = {"width=12", "not a power of two", "power of two in 1..64",
                                   NULL};
    expect_param_error("width=12", needles);
}
END_TEST

START_TEST(request_out_of_range_and_non_integer)
{
    const char *const range[] = {"width=128", "out of range", NULL};
    expect_param_error("width=128", range);
    const char *const text[] = {"width=eight", "not an integer", NULL};
    expect_param_error("width=eight", text);
    const char *const negative[] = {"depth=-1", "out of range", NULL};
    expect_param_error("depth=-1", negative);
}
END_TEST

START_TEST(request_bad_enum_lists_values)
{
    const char *const needles[] = {"mode=medium", "one of slow, fast", NULL};
    expect_param_error("mode=medium", needles);
    const char *const dtypes[] = {"dtype=f64", "dtype, one of i32, f32, f16", NULL};
    expect_param_error("dtype=f64", dtypes);
}
END_TEST

START_TEST(request_rejects_duplicates_and_malformed_pairs)
{
    const char *const twice[] = {"'width' is given twice", NULL};
    expect_param_error("width=8 width=16", twice);
    const char *const bare[] = {"'width' is not key=value", NULL};
    expect_param_error("width", bare);
    const char *const empty[] = {"'width=' is not key=value", NULL};
    expect_param_error("width=", empty);
}
END_TEST

START_TEST(request_rejects_parameter_that_does_not_apply)
{
    const char *const needles[] = {"'depth' does not apply", "mode == fast", NULL};
    expect_param_error("mode=slow depth=4", needles);
}
END_TEST

static const char *const cased_template =
    "//@ptxjit family cased\n"
    "//@ptxjit entry k\n"
    "//@ptxjit param mode enum(slow,fast,wide) default=fast\n"
    "//@ptxjit param width int(1..64) pow2 default=8 default_if=\"mode == wide => 64\" "
    "default_if=\"mode == slow => 2\"\n"
    "//@ptxjit param kind enum(a,b) default=a default_if=\"width >= 32 => b\"\n"
    "extern \"C\" __global__ void k() {}\n";

static char *cased_canonical(const char *text)
{
    pj_schema *schema = NULL;
    ck_assert_int_eq(pj_schema_parse(&schema, cased_template, "cased.cu"), PTXJIT_OK);
    pj_request request;
    ck_assert_int_eq(pj_request_parse(&request, schema, text, 90), PTXJIT_OK);
    char *result = pj_request_canonical(&request);
    pj_request_free(&request);
    pj_schema_free(schema);
    return result;
}

/* default_if: the first case that holds, in order; a given value always wins; a case may
 * read earlier parameters whose own value came from a case. */
START_TEST(request_default_cases_follow_earlier_parameters)
{
    struct {
        const char *text, *want;
    } cases[] = {{"", "kind=a mode=fast width=8"},
                 {"mode=wide", "kind=b mode=wide width=64"},
                 {"mode=slow", "kind=a mode=slow width=2"},
                 {"mode=wide width=4", "kind=a mode=wide width=4"},
                 {"mode=wide kind=a", "kind=a mode=wide width=64"},
                 {"width=32", "kind=b mode=fast width=32"}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        char *got = cased_canonical(cases[i].text);
        ck_assert_msg(strcmp(got, cases[i].want) == 0, "'%s' gave '%s', not '%s'",
                      cases[i].text, got, cases[i].want);
        free(got);
    }
    pj_schema *schema = NULL;
    ck_assert_int_eq(pj_schema_parse(&schema, cased_template, "cased.cu"), PTXJIT_OK);
    char *text = pj_schema_describe(schema);
    ck_assert_ptr_nonnull(strstr(text, "default 64 when mode == wide"));
    ck_assert_ptr_nonnull(strstr(text, "default b when width >= 32"));
    free(text);
    pj_schema_free(schema);
}
END_TEST

START_TEST(schema_rejects_bad_default_cases)
{
    expect_template_error("//@ptxjit family f\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1 default_if=\"b == 2 => 4\"\n"
                          "//@ptxjit param b int(1..8) default=1\n",
                          "bad.cu:3: default_if \"b == 2\" of parameter 'a' names 'a' or a "
                          "parameter declared after it");
    expect_template_error("//@ptxjit family f\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1 default_if=\"a == 2 => 4\"\n",
                          "names 'a' or a parameter declared after it");
    expect_template_error("//@ptxjit family f\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1 default_if=\"sm >= 90 => 9\"\n",
                          "default '9' is outside the parameter's own range");
    expect_template_error("//@ptxjit family f\n//@ptxjit entry k\n"
                          "//@ptxjit param a int(1..8) default=1 default_if=\"sm >= 90\"\n",
                          "must be written \"EXPR => VALUE\"");
    expect_template_error("//@ptxjit family f\n//@ptxjit entry k\n"
                          "//@ptxjit param a enum(x,y) default=x default_if=\"sm >= 90 => z\"\n",
                          "default 'z' is not one of the listed values");
    /* Expressions are parsed once every parameter is known; their errors still name the
     * declaration's line. */
    expect_template_error("//@ptxjit family f\n//@ptxjit entry k\n\n"
                          "//@ptxjit param a int(1..8) default=1 default_if=\"zz >= 2 => 4\"\n",
                          "bad.cu:4: default_if of parameter 'a'");
    expect_template_error("//@ptxjit family f\n//@ptxjit entry k\n"
                          "//@ptxjit param b int(1..8) default=1\n"
                          "//@ptxjit param a int(1..8) default=1 when=\"b >=\"\n",
                          "bad.cu:4: `when` of parameter 'a'");
}
END_TEST

START_TEST(request_reports_violated_constraint)
{
    /* 64 x 4-byte f32 = 256 bytes > 128. */
    const char *const needles[] = {"a row must fit 128 bytes", "width * bytes(dtype) <= 128",
                                   "width=64", NULL};
    expect_param_error("width=64", needles);
    ptxjit_status status;
    char *ok = canonical_or_error("width=64 dtype=f16", &status);
    ck_assert_int_eq(status, PTXJIT_OK);
    free(ok);
}
END_TEST

Suite *suite_params(void)
{
    Suite *suite = suite_create("params");
    TCase *tc = tcase_create("schema");
    tcase_add_test(tc, schema_reads_every_directive);
    tcase_add_test(tc, schema_requires_family_and_entry);
    tcase_add_test(tc, schema_rejects_unknown_directive_with_line);
    tcase_add_test(tc, schema_rejects_bad_types_and_defaults);
    tcase_add_test(tc, schema_rejects_duplicates);
    tcase_add_test(tc, schema_rejects_reserved_names_and_late_checks);
    tcase_add_test(tc, schema_rejects_bad_expressions);
    tcase_add_test(tc, schema_rejects_an_attribute_given_twice);
    tcase_add_test(tc, schema_rejects_bytes_of_sm);
    tcase_add_test(tc, schema_rejects_expressions_nested_too_deeply);
    tcase_add_test(tc, schema_power_of_two_default_is_positive);
    tcase_add_test(tc, expr_follows_c_precedence);
    tcase_add_test(tc, expr_arithmetic_wraps_instead_of_overflowing);
    tcase_add_test(tc, expr_reads_params_enums_and_dtype_sizes);
    suite_add_tcase(suite, tc);
    tc = tcase_create("request");
    tcase_add_test(tc, request_fills_defaults_in_canonical_order);
    tcase_add_test(tc, request_integers_are_decimal);
    tcase_add_test(tc, request_canonical_ignores_order_and_separators);
    tcase_add_test(tc, request_drops_parameters_that_do_not_apply);
    tcase_add_test(tc, request_unknown_key_lists_the_parameters);
    tcase_add_test(tc, request_non_power_of_two_names_allowed_values);
    tcase_add_test(tc, request_out_of_range_and_non_integer);
    tcase_add_test(tc, request_bad_enum_lists_values);
    tcase_add_test(tc, request_rejects_duplicates_and_malformed_pairs);
    tcase_add_test(tc, request_rejects_parameter_that_does_not_apply);
    tcase_add_test(tc, request_reports_violated_constraint);
    tcase_add_test(tc, request_default_cases_follow_earlier_parameters);
    tcase_add_test(tc, schema_rejects_bad_default_cases);
    suite_add_tcase(suite, tc);
    return suite;
}

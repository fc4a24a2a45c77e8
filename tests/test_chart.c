/* test_chart.c — issue 33, `bench ... --svg`: the chart writer (src/cli/chart.c, linked into the
 * runner on its own) fed tables like the benches', read back as XML: well-formed (tests/
 * xml_check.c, and Python's parser where python3 is installed), one row group a table row and
 * one bar a row and series, labels escaped, references and marks drawn; and its refusals (a
 * path it cannot write, nothing to draw, two charts). A GPU run draws the real benches
 * (test_cli.c's GPU suite). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "cli/chart.h"
#include "cli/cli.h"
#include "test_util.h"
#include "xml_check.h"

static char *read_text(const char *path)
{
    char *text = NULL;
    ck_assert_msg(pj_read_file(&text, NULL, path) == PTXJIT_OK, "%s", ptxjit_last_error());
    return text;
}

/* Python's own XML parser, where python3 is installed: 1 parsed, 0 refused, -1 not run. */
static int python_parses(const char *path)
{
    char command[4400];
    snprintf(command, sizeof command,
             "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' '%s' "
             ">/dev/null 2>&1",
             path);
    if (system("python3 -c '' >/dev/null 2>&1") != 0)
        return -1;
    int status = system(command);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

START_TEST(a_chart_has_one_row_a_table_row_and_one_bar_a_series)
{
    char *dir = test_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/chart.svg", dir);
    ck_assert_int_eq(cli_chart_open(path, "ptxjit bench reduce n=2^30 \"tpb=<512> & more\""),
                     CLI_OK);
    ck_assert(cli_chart_active());
    /* One series with the write-up's marks and the copy as a reference (reduce's table). */
    cli_chart_table("reduce, int32 <n = 2^30> & co", "GB/s", NULL);
    cli_chart_reference("device-to-device copy", 3291.4);
    cli_chart_bar("variant=two_pass tpb=512", 623.5, 623);
    cli_chart_bar("variant=vectorized tpb=512 batch=8", 3134.0, 3134);
    cli_chart_bar("a \"quoted\" <label> & 'apostrophes'", 1500, 0);
    cli_chart_bar("a row that failed: no value", 0.0 / 0.0, 0);
    /* Two series (a backends table), a label long enough to be cut. */
    static const char *const series[] = {"nvrtc", "llvm", NULL};
    cli_chart_table("softmax bf16, 262144 x 1024", "GB/s", series);
    char long_label[200];
    memset(long_label, 'x', sizeof long_label - 1);
    long_label[sizeof long_label - 1] = '\0';
    cli_chart_row("variant=block dtype=bf16", (double[CLI_CHART_SERIES_MAX]){3000, 3100}, 0);
    cli_chart_row(long_label, (double[CLI_CHART_SERIES_MAX]){2900, 1.0 / 0.0}, 0);
    cli_chart_row("variant=online dtype=bf16", (double[CLI_CHART_SERIES_MAX]){2800, 2850}, 0);
    ck_assert_int_eq(cli_chart_close(), CLI_OK);
    ck_assert(!cli_chart_active());

    char *svg = read_text(path);
    const char *fault = xml_check(svg);
    ck_assert_msg(fault == NULL, "%s", fault);
    ck_assert_int_ne(python_parses(path), 0);
    ck_assert_uint_eq(xml_count(svg, "<svg "), 1);
    ck_assert_uint_eq(xml_count(svg, "<g class=\"panel\">"), 2);
    ck_assert_uint_eq(xml_count(svg, "<g class=\"row\">"), 4 + 3);
    ck_assert_uint_eq(xml_count(svg, "<rect class=\"bar\""), 4 * 1 + 3 * 2);
    ck_assert_uint_eq(xml_count(svg, "class=\"reference\"/>"), 1 + 1); /* line and legend */
    ck_assert_uint_eq(xml_count(svg, "class=\"mark\"/>"), 2 + 1);      /* two rows, legend */
    ck_assert_ptr_nonnull(strstr(svg, "a &quot;quoted&quot; &lt;label&gt; &amp; &apos;"));
    ck_assert_ptr_nonnull(strstr(svg, "reduce, int32 &lt;n = 2^30&gt; &amp; co"));
    ck_assert_ptr_nonnull(strstr(svg, "&quot;tpb=&lt;512&gt; &amp; more&quot;"));
    ck_assert_ptr_nonnull(strstr(svg, ">nvrtc</text>"));
    ck_assert_ptr_nonnull(strstr(svg, "device-to-device copy 3291.4 GB/s"));
    /* A value that is not a number draws an empty bar; the cut label keeps its whole text in
     * the row's title. */
    ck_assert_ptr_nonnull(strstr(svg, "width=\"0.0\""));
    ck_assert_ptr_nonnull(strstr(svg, long_label));
    free(svg);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(a_chart_it_cannot_write_or_draw_is_refused_and_leaves_nothing)
{
    char *dir = test_mkdtemp();
    char path[4200];
    /* nothing printed: no file */
    snprintf(path, sizeof path, "%s/empty.svg", dir);
    ck_assert_int_eq(cli_chart_open(path, "ptxjit bench x"), CLI_OK);
    cli_chart_table("a table with no row", "GB/s", NULL);
    ck_assert_int_eq(cli_chart_close(), CLI_FAIL);
    struct stat st;
    ck_assert_int_ne(stat(path, &st), 0);
    /* a directory that does not exist: said at the open, before any bench runs */
    snprintf(path, sizeof path, "%s/missing/chart.svg", dir);
    ck_assert_int_eq(cli_chart_open(path, "ptxjit bench x"), CLI_USAGE);
    ck_assert(!cli_chart_active());
    cli_chart_table("t", "GB/s", NULL); /* calls without a chart do nothing */
    cli_chart_bar("row", 1, 0);
    ck_assert_int_eq(cli_chart_close(), CLI_OK);
    /* one chart at a time */
    snprintf(path, sizeof path, "%s/chart.svg", dir);
    ck_assert_int_eq(cli_chart_open(path, "a"), CLI_OK);
    ck_assert_int_eq(cli_chart_open(path, "b"), CLI_USAGE);
    ck_assert_int_eq(cli_chart_close(), CLI_FAIL); /* nothing drawn */
    /* an abandoned chart (the bench failed first) leaves nothing either */
    ck_assert_int_eq(cli_chart_open(path, "c"), CLI_OK);
    cli_chart_abandon();
    ck_assert(!cli_chart_active());
    char listing[4300];
    snprintf(listing, sizeof listing, "ls -A '%s' | grep -q .", dir);
    ck_assert_int_ne(system(listing), 0);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* The command line: --svg is bench's; a tool with no table refuses it; a bench that needs a
 * GPU and has none says so and writes nothing. */
START_TEST(the_cli_takes_svg_for_the_benches_that_draw)
{
    char *dir = test_mkdtemp(), *out = NULL, args[4400], path[4200];
    snprintf(path, sizeof path, "%s/chart.svg", dir);
    snprintf(args, sizeof args, "bench jit --svg %s", path);
    ck_assert_int_eq(test_run_cli(&out, dir, "", args, NULL), CLI_USAGE);
    ck_assert_msg(strstr(out, "bench jit prints no table to draw"), "%s", out);
    free(out);
    ck_assert_int_eq(test_run_cli(&out, dir, "", "bench reduce --svg -", NULL), CLI_USAGE);
    ck_assert_msg(strstr(out, "--svg takes a file"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "list --svg %s", path);
    ck_assert_int_eq(test_run_cli(&out, dir, "", args, NULL), CLI_USAGE);
    ck_assert_msg(strstr(out, "--svg is bench's option"), "%s", out);
    free(out);
    snprintf(args, sizeof args, "bench reduce --no-gpu --svg %s", path);
    ck_assert_int_eq(test_run_cli(&out, dir, "", args, NULL), CLI_FAIL);
    ck_assert_msg(strstr(out, "needs a GPU") && !strstr(out, "draw"), "%s", out);
    free(out);
    struct stat st;
    ck_assert_int_ne(stat(path, &st), 0);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Labels are the user's words: multi-byte characters are never cut in two, and bytes that are
 * not UTF-8 (a Latin-1 parameter) become '?', so the file stays what it declares. */
START_TEST(labels_that_are_not_ascii_stay_well_formed_utf8)
{
    char *dir = test_mkdtemp();
    char path[4200], heading[400], label[400];
    snprintf(path, sizeof path, "%s/chart.svg", dir);
    size_t n = 0;
    for (int i = 0; i < 97; i++) /* the heading holds 98 characters: the chart's width */
        heading[n++] = 'h';
    n += (size_t)snprintf(heading + n, sizeof heading - n, "\xc3\xa9\xc3\xa9 tail");
    ck_assert_int_eq(cli_chart_open(path, heading), CLI_OK);
    cli_chart_table("t\xe9st \xff\xfe title", "GB/s", NULL);
    n = 0;
    for (int i = 0; i < 100; i++)
        n += (size_t)snprintf(label + n, sizeof label - n, "\xc3\xa9");
    cli_chart_bar(label, 10, 0);
    cli_chart_bar("cut \xe2\x82 euro, surrogate \xed\xa0\x80, overlong \xc0\xaf", 20, 0);
    ck_assert_int_eq(cli_chart_close(), CLI_OK);
    char *svg = read_text(path);
    const char *fault = xml_check(svg);
    ck_assert_msg(fault == NULL, "%s", fault);
    ck_assert_int_ne(python_parses(path), 0);
    ck_assert_ptr_nonnull(strstr(svg, "t?st ?? title"));
    ck_assert_ptr_nonnull(strstr(svg, "hhh\xc3\xa9...")); /* 98 characters, the cut whole */
    ck_assert_ptr_nonnull(strstr(svg, "cut ?? euro, surrogate ???, overlong ??"));
    free(svg);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(the_xml_check_finds_what_a_writer_gets_wrong)
{
    ck_assert_ptr_null(xml_check("<?xml version=\"1.0\"?>\n<a x=\"1\"><b/>t &amp; u</a>\n"));
    static const char *const bad[] = {
        "<a><b></a></b>",   "<a>x & y</a>",      "<a x=1/>",      "<a x=\"<\"/>",
        "<a></a><b></b>",   "<a>",               "text<a/>",      "<a>1 < 2</a>",
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        ck_assert_msg(xml_check(bad[i]) != NULL, "'%s' passed", bad[i]);
}
END_TEST

Suite *suite_chart(void)
{
    Suite *suite = suite_create("chart");
    TCase *tc = tcase_create("chart");
    tcase_add_test(tc, a_chart_has_one_row_a_table_row_and_one_bar_a_series);
    tcase_add_test(tc, a_chart_it_cannot_write_or_draw_is_refused_and_leaves_nothing);
    tcase_add_test(tc, the_cli_takes_svg_for_the_benches_that_draw);
    tcase_add_test(tc, labels_that_are_not_ascii_stay_well_formed_utf8);
    tcase_add_test(tc, the_xml_check_finds_what_a_writer_gets_wrong);
    suite_add_tcase(suite, tc);
    return suite;
}

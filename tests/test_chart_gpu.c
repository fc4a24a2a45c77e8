/* test_chart_gpu.c — issue 33 on a GPU: `ptxjit bench reduce --svg` and `bench matmul shapes=
 * --svg` draw the tables they print: the file is well-formed XML with one row group for each
 * row of the printed tables (the lines that end in "ok" or "WRONG") and one bar for each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "xml_check.h"

/* The printed table rows: lines that end in " ok" or " WRONG" (after the status words every
 * bench row carries). */
static size_t table_rows(const char *out)
{
    size_t rows = 0;
    for (const char *line = out; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) : strlen(line);
        while (length && line[length - 1] == ' ')
            length--;
        if ((length >= 3 && strncmp(line + length - 3, " ok", 3) == 0) ||
            (length >= 6 && strncmp(line + length - 6, " WRONG", 6) == 0))
            rows++;
        line = end ? end + 1 : line + length;
    }
    return rows;
}

static void bench_draws_its_table(const char *test, const char *bench)
{
    ptxjit_context *context = test_gpu_context(test);
    if (!context)
        return;
    ptxjit_close(context);
    char *dir = test_mkdtemp(), *out = NULL, args[4600], path[4200];
    snprintf(path, sizeof path, "%s/chart.svg", dir);
    snprintf(args, sizeof args, "%s --svg %s", bench, path);
    int status = test_run_cli(&out, dir, "", args, NULL);
    printf("%s", out);
    ck_assert_msg(status == 0, "ptxjit %s: exit %d", args, status);
    char *svg = NULL;
    ck_assert_msg(pj_read_file(&svg, NULL, path) == PTXJIT_OK, "%s", ptxjit_last_error());
    const char *fault = xml_check(svg);
    ck_assert_msg(fault == NULL, "%s: %s", path, fault);
    size_t rows = table_rows(out);
    ck_assert_uint_gt(rows, 0);
    ck_assert_uint_eq(xml_count(svg, "<g class=\"row\">"), rows);
    ck_assert_uint_eq(xml_count(svg, "<rect class=\"bar\""), rows);
    printf("%s: %zu rows printed, %zu drawn\n", bench, rows, xml_count(svg, "<g class=\"row\">"));
    free(svg);
    free(out);
    test_rmtree(dir);
    free(dir);
}

START_TEST(bench_reduce_svg_draws_every_row)
{
    bench_draws_its_table("bench_reduce_svg_draws_every_row", "bench reduce n=2^24 runs=5");
}
END_TEST

START_TEST(bench_matmul_shapes_svg_draws_every_row)
{
    bench_draws_its_table("bench_matmul_shapes_svg_draws_every_row",
                          "bench matmul shapes=1000x1000x1000,4x256x512x128 runs=3 "
                          "\"variant=wgmma dtype=bf16\" \"dtype=bf16\"");
}
END_TEST

Suite *suite_chart_gpu(void)
{
    Suite *suite = suite_create("chart_gpu");
    TCase *tc = tcase_create("chart_gpu");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, bench_reduce_svg_draws_every_row);
    tcase_add_test(tc, bench_matmul_shapes_svg_draws_every_row);
    suite_add_tcase(suite, tc);
    return suite;
}

/* test_examples.c — the embedding example (examples/tool.c) as its users run it: built
 * against the installed library through pkg-config (`make examples`, which `make test` runs
 * first), with its own templates from a string and from examples/tool_templates. Without a GPU
 * it compiles and inspects both kernels and shows a refused launch; with one it also runs them
 * on its own stream and checks them against the CPU, and this test requires that it did. */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "test_util.h"

/* The tool's stdout and stderr together, and its exit status. */
static int run_tool(char **output, const char *tool, const char *cache_dir)
{
    char command[16384];
    snprintf(command, sizeof command, "PTXJIT_CACHE_DIR='%s' '%s' '%s/examples/tool_templates' 2>&1",
             cache_dir, tool, PJ_SOURCE_DIR);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    pj_strbuf sb;
    pj_sb_init(&sb);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, pipe)) > 0)
        pj_sb_append_n(&sb, chunk, n);
    int status = pclose(pipe);
    *output = pj_sb_take(&sb);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int gpu_usable(void)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.disk_cache = 0;
    ptxjit_context *context;
    if (ptxjit_open(&context, &options) != PTXJIT_OK)
        return 0;
    int usable = ptxjit_gpu_status(context) == PTXJIT_OK;
    ptxjit_close(context);
    return usable;
}

START_TEST(tool_example_brings_its_own_kernels)
{
    const char *tool = getenv("PTXJIT_EXAMPLE_TOOL");
    if (!tool || !*tool) {
        printf("tool_example_brings_its_own_kernels: skipped, PTXJIT_EXAMPLE_TOOL is not set "
               "(make test builds the example and sets it)\n");
        return;
    }
    char *cache = test_mkdtemp(), *output;
    int status = run_tool(&output, tool, cache);
    ck_assert_msg(status == 0, "the example failed (%d):\n%s", status, output);
    /* Both families, compiled, with entries read from the cubin and their parameter layouts:
     * axpy(float, const float *, float *, long long) and rownorm(ptr, ptr, int, int, float). */
    ck_assert_msg(strstr(output, "axpy items=4 tpb=256: key "), "%s", output);
    ck_assert_msg(strstr(output, "rownorm dtype=f32 tpb=128: key "), "%s", output);
    ck_assert_msg(strstr(output, "parameters [0..4) [8..16) [16..24) [24..32)"), "%s", output);
    ck_assert_msg(strstr(output, "parameters [0..8) [8..16) [16..20) [20..24) [24..28)"), "%s",
                  output);
    ck_assert_msg(strstr(output, "refused as expected: ") && strstr(output, "axpy_kernel"),
                  "%s", output);
    if (gpu_usable())
        ck_assert_msg(strstr(output, "results match the CPU"), "%s", output);
    else
        ck_assert_msg(strstr(output, "kernels compiled and inspected, not run"), "%s", output);
    /* A second run finds both kernels in the disk cache. */
    free(output);
    ck_assert_int_eq(run_tool(&output, tool, cache), 0);
    ck_assert_msg(strstr(output, "axpy items=4 tpb=256") && strstr(output, "(disk cache)"), "%s",
                  output);
    free(output);
    test_rmtree(cache);
    free(cache);
}
END_TEST

Suite *suite_examples(void)
{
    Suite *suite = suite_create("examples");
    TCase *tc = tcase_create("tool");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, tool_example_brings_its_own_kernels);
    suite_add_tcase(suite, tc);
    return suite;
}

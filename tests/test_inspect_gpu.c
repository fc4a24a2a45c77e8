/* test_inspect_gpu.c — what ptxjit_kernel_resources_static reads from a cubin against what
 * the driver reports for the loaded module (ptxjit_kernel_resources_get): registers, static
 * shared memory, local memory and threads per block, for every built-in family's default,
 * reduce's variants, matmul's wgmma and others, both backends, and a user template with a
 * stack frame and entries without a launch bound whose registers limit their blocks. Every pair is printed; every mismatch is
 * collected before the test fails, so that one run shows them all. */
#include <string.h>

#include "inspect_util.h"

static pj_strbuf problems; /* the mismatches, each on a line of its own */

/* Compares every entry of (family, params); appends the mismatches to problems. */
static void compare_kernel(ptxjit_context *context, const char *family, const char *params)
{
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK,
                  "%s %s: %s", family, params, ptxjit_last_error());
    for (int i = 0; i < ptxjit_kernel_entry_count(kernel); i++) {
        const char *entry = ptxjit_kernel_entry_name(kernel, i);
        ptxjit_kernel_resources cubin, driver;
        ck_assert_msg(ptxjit_kernel_resources_static(&cubin, kernel, entry) == PTXJIT_OK, "%s",
                      ptxjit_last_error());
        ck_assert_msg(ptxjit_kernel_resources_get(&driver, kernel, entry) == PTXJIT_OK, "%s",
                      ptxjit_last_error());
        printf("%s %s %s: cubin %d regs %d smem %d local %d threads; driver %d %d %d %d\n",
               family, ptxjit_kernel_params(kernel), entry, cubin.registers, cubin.static_smem,
               cubin.local_bytes, cubin.max_threads, driver.registers, driver.static_smem,
               driver.local_bytes, driver.max_threads);
        if (cubin.registers != driver.registers || cubin.static_smem != driver.static_smem ||
            cubin.local_bytes != driver.local_bytes || cubin.max_threads != driver.max_threads)
            pj_sb_appendf(&problems, "\n  %s %s %s: cubin %d/%d/%d/%d, driver %d/%d/%d/%d",
                          family, ptxjit_kernel_params(kernel), entry, cubin.registers,
                          cubin.static_smem, cubin.local_bytes, cubin.max_threads,
                          driver.registers, driver.static_smem, driver.local_bytes,
                          driver.max_threads);
        ck_assert_int_eq(driver.param_bytes, cubin.param_bytes); /* both from the cubin */
    }
}

START_TEST(cubin_resources_equal_the_drivers)
{
    ptxjit_context *context = test_gpu_context("cubin_resources_equal_the_drivers");
    if (!context)
        return;
    pj_sb_init(&problems);
    inspect_each_family(context, compare_kernel);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(inspect_requests); i++) {
        if (!strstr(inspect_requests[i].params, "llvm") || test_llvm_or_skip("llvm kernels"))
            compare_kernel(context, inspect_requests[i].family, inspect_requests[i].params);
    }
    ptxjit_close(context);
    char *dir = inspect_write_stack_template();
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.disk_cache = 0;
    options.template_path = dir;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    /* heavy_kernel: ~70, ~110 (where rounding the warps to 4 matters: 16, not 18), ~210 and
     * 255 registers (with spills). */
    static const char *const sizes[] = {"n=64", "n=100", "n=200", "n=256"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(sizes); i++)
        compare_kernel(context, "stack", sizes[i]);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
    fflush(stdout);
    ck_assert_msg(!problems.data || !*problems.data, "cubin and driver differ:%s",
                  problems.data);
    pj_sb_free(&problems);
}
END_TEST

Suite *suite_inspect_gpu(void)
{
    Suite *s = suite_create("inspect_gpu");
    TCase *tc = tcase_create("gpu");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, cubin_resources_equal_the_drivers);
    suite_add_tcase(s, tc);
    return s;
}

/* test_bench_compile.c — `ptxjit bench compile` times any family: a built-in one and one of
 * the user's templates (the cases of `bench compile`'s options and errors are in test_cli.c). */
#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* Runs the CLI ($PTXJIT_CLI) with args, stdout and stderr together into *out; exit status. */
static int run_cli(char **out, const char *args)
{
    return test_run_cli(out, NULL, "", args, NULL);
}

/* Any family: a built-in one at its defaults (both routes), and one from --templates, which
 * the llvm route does not build (nvrtc alone, saying why). */
START_TEST(bench_compile_times_any_family)
{
    char *dir = test_mkdtemp(), path[4200], args[4400], *out;
    snprintf(path, sizeof path, "%s/scale.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("//@ptxjit family scale\n//@ptxjit entry scale_kernel\n"
          "//@ptxjit param factor int(1..100) default=3\n"
          "extern \"C\" __global__ void scale_kernel(float *x, int n)\n"
          "{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
          "    if (i < n)\n        x[i] *= FACTOR;\n}\n",
          file);
    ck_assert_int_eq(fclose(file), 0);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' bench compile scale samples=1", dir);
    ck_assert_msg(run_cli(&out, args) == 0, "%s", out);
    ck_assert_msg(strstr(out, "scale (the family's defaults), median of 1") &&
                      strstr(out, "| nvrtc (prelude; NVRTC -> PTX + cubin) |") &&
                      strstr(out, "llvm: not timed: ") &&
                      strstr(out, "cubin, nvrtc: ") && !strstr(out, "cubin, llvm:"),
                  "%s", out);
    free(out);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' bench compile scale factor=7 "
                                "samples=1", dir);
    ck_assert_msg(run_cli(&out, args) == 0, "%s", out);
    ck_assert_msg(strstr(out, "scale factor=7, median of 1"), "%s", out);
    free(out);
    ck_assert_int_eq(run_cli(&out, "--no-gpu bench compile softmax samples=1"), 0);
    ck_assert_msg(strstr(out, "softmax (the family's defaults)") &&
                      (strstr(out, "cubin, llvm:") || !test_llvm_or_skip("softmax's llvm row")),
                  "%s", out);
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_bench_compile(void)
{
    Suite *s = suite_create("bench_compile");
    TCase *tc = tcase_create("families");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, bench_compile_times_any_family);
    suite_add_tcase(s, tc);
    return s;
}

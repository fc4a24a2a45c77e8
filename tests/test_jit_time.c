/* test_jit_time.c — `bench jit`'s first use with a GPU, on the CPU: `jit-time --launch` and
 * `jit-time --bare` refuse cleanly without a GPU and name what is wrong with their arguments;
 * against the stand-in driver (build/fake_cuda, $PJ_FAKE_DEVICES=1: every driver call answered,
 * no kernel run) both go through every stage to the result's check, which the stand-in fails;
 * `bench jit` without a GPU still runs, its lookup named so, and says the first use was not
 * measured, in text and JSON. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

/* The CLI's stdout and stderr apart, after the environment assignments of env. */
static int run_split(char **out, char **err, const char *dir, const char *env, const char *args)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/stderr", dir);
    int status = test_run_cli(out, dir, env, args, path);
    ck_assert_int_eq(pj_read_file(err, NULL, path), PTXJIT_OK);
    return status;
}

/* bench jit's request compiled without a GPU (for sm_90a, the stand-in's default), its cubin
 * written to path; its entry's name. */
static const char *write_reduce_cubin(const char *path)
{
    static char entry[256];
    ptxjit_context *context = test_open_offline("sm_90a");
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "reduce",
                                    "variant=vectorized tpb=512 batch=8", NULL) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    size_t size = 0;
    const void *cubin = ptxjit_kernel_cubin(kernel, &size);
    ck_assert_ptr_nonnull(cubin);
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    ck_assert_uint_eq(fwrite(cubin, 1, size, file), size);
    ck_assert_int_eq(fclose(file), 0);
    snprintf(entry, sizeof entry, "%s", ptxjit_kernel_entry_name(kernel, 0));
    ptxjit_close(context);
    return entry;
}

START_TEST(jit_time_launch_and_bare_refuse_what_they_cannot_time)
{
    char *dir = test_mkdtemp(), *out, *err, cubin[4200], text[4200], line[9000];
    snprintf(cubin, sizeof cubin, "%s/reduce.cubin", dir);
    snprintf(text, sizeof text, "%s/text.cubin", dir);
    const char *entry = write_reduce_cubin(cubin);
    FILE *file = fopen(text, "w");
    ck_assert_ptr_nonnull(file);
    fputs("no ELF file, though long enough to be one: sixty-four bytes and more of text\n",
          file);
    ck_assert_int_eq(fclose(file), 0);
    struct {
        char args[9000];
        int code;
        const char *message;
    } cases[] = {
        {"--no-gpu jit-time --launch reduce", 1, "jit-time --launch needs a usable GPU: "},
        {"--no-gpu jit-time --bare C E", 1, "jit-time --bare needs a usable GPU: --no-gpu"},
        {"jit-time --launch transpose", 2, "first use of bench jit's family, reduce, not "
                                           "'transpose'"},
        {"jit-time --launch nosuch", 2, "not 'nosuch'"},
        {"jit-time --launch", 2, "usage: ptxjit jit-time [--launch] FAMILY"},
        {"jit-time --launch --bare a b", 2, "takes --launch or --bare, not both"},
        {"jit-time --bare onlyone", 2, "usage: ptxjit jit-time --bare CUBIN ENTRY"},
        {"jit-time --bare a b c", 2, "usage: ptxjit jit-time --bare CUBIN ENTRY"},
        {"jit-time --bare /nonexistent/x.cubin e", 1, "cannot read the cubin "
                                                      "/nonexistent/x.cubin"},
        {"", 1, "is not a cubin (no ELF header)"},
        {"", 1, "has no entry 'no_such_entry'"},
        {"list --launch", 2, "--launch and --bare are jit-time's options, not 'list''s"},
    };
    size_t count = sizeof cases / sizeof cases[0];
    snprintf(cases[count - 3].args, sizeof cases[0].args, "jit-time --bare '%s' %s", text,
             entry);
    snprintf(cases[count - 2].args, sizeof cases[0].args, "jit-time --bare '%s' no_such_entry",
             cubin);
    for (size_t i = 0; i < count; i++) {
        int code = run_split(&out, &err, dir, "", cases[i].args);
        ck_assert_msg(code == cases[i].code, "%s: exit %d, not %d: %s", cases[i].args, code,
                      cases[i].code, err);
        ck_assert_msg(strstr(err, cases[i].message), "%s: stderr '%s' lacks '%s'",
                      cases[i].args, err, cases[i].message);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }

    /* The stand-in driver: every call answered, no kernel run, so each mode gets through
     * every stage and fails the result's check; a device of another SM refuses the module. */
    const char *cli = getenv("PTXJIT_CLI"), *slash = strrchr(cli, '/');
    char fake[4200];
    snprintf(fake, sizeof fake, "%.*sfake_cuda/libcuda.so.1", slash ? (int)(slash + 1 - cli) : 0,
             cli);
    if (access(fake, R_OK) != 0) {
        printf("SKIP the stand-in driver's part: no %s (make test builds it)\n", fake);
    } else {
        char env[9000];
        snprintf(env, sizeof env, "PJ_FAKE_DEVICES=1 PTXJIT_CUDA_LIBRARY='%s'", fake);
        snprintf(line, sizeof line, "jit-time --bare '%s' %s", cubin, entry);
        ck_assert_int_eq(run_split(&out, &err, dir, env, line), 1);
        ck_assert_msg(strstr(err, "jit-time --bare: the result of reduce of 4096 int32 is "
                                  "wrong"), "%s", err);
        ck_assert_str_eq(out, "");
        free(out), free(err);
        ck_assert_int_eq(run_split(&out, &err, dir, env, "--arch sm_90a jit-time --launch "
                                                         "reduce variant=vectorized tpb=512 "
                                                         "batch=8"), 1);
        ck_assert_msg(strstr(err, "jit-time --launch: the result of reduce of 4096 int32 "
                                  "(variant=vectorized tpb=512 batch=8) is wrong"), "%s", err);
        ck_assert_str_eq(out, "");
        free(out), free(err);
        snprintf(env, sizeof env, "PJ_FAKE_DEVICES=1 PJ_FAKE_DEVICE_ARCHS=80 "
                 "PTXJIT_CUDA_LIBRARY='%s'", fake);
        ck_assert_int_eq(run_split(&out, &err, dir, env, line), 1);
        ck_assert_msg(strstr(err, "cuModuleLoadData failed: CUDA_ERROR_NO_BINARY_FOR_GPU"),
                      "%s", err);
        free(out), free(err);
        snprintf(env, sizeof env, "PTXJIT_CUDA_LIBRARY='%s'", fake); /* no device */
        ck_assert_int_eq(run_split(&out, &err, dir, env, line), 1);
        ck_assert_msg(strstr(err, "jit-time --bare needs a usable GPU: "), "%s", err);
        free(out), free(err);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(bench_jit_without_a_gpu_says_the_first_use_was_not_measured)
{
    char *dir = test_mkdtemp(), *out, *err;
    ck_assert_msg(run_split(&out, &err, dir, "", "--no-gpu bench jit") == 0, "%s", err);
    ck_assert_msg(strstr(out, "\n  lookup (a disk hit), fresh process without a GPU (no driver, "
                              "context or module load), median of 31: ptxjit_open + "
                              "ptxjit_get_kernel "), "%s", out);
    ck_assert_msg(strstr(out, "\n  first use, fresh process with the GPU (open, get, first "
                              "launch, sync) beside a bare driver program: not measured (no "
                              "usable GPU)\n"), "%s", out);
    ck_assert_msg(strstr(out, "\n  memory hit + launch: not measured (no usable GPU)\n"), "%s",
                  out);
    free(out), free(err);
    ck_assert_msg(run_split(&out, &err, dir, "", "--no-gpu --json bench jit") == 0, "%s", err);
    static const char *const keys[] = {
        "\"fresh_disk_hit\": {", "\"gpu\": false", "\"fresh_gpu\": null",
        "\"bare_driver\": null", "\"fresh_gpu_not_measured\": \"no usable GPU\"",
        "\"launch\": null",      "\"memory_hit_ns\": ",
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
        ck_assert_msg(strstr(out, keys[i]), "no %s in %s", keys[i], out);
    size_t length = strlen(out);
    ck_assert_msg(out[0] == '{' && length > 2 && strcmp(out + length - 2, "}\n") == 0, "%s",
                  out);
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_jit_time(void)
{
    Suite *suite = suite_create("jit_time");
    TCase *tc = tcase_create("first use");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, jit_time_launch_and_bare_refuse_what_they_cannot_time);
    tcase_add_test(tc, bench_jit_without_a_gpu_says_the_first_use_was_not_measured);
    suite_add_tcase(suite, tc);
    return suite;
}

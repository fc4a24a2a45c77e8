/* test_cli.c — the ptxjit command line as users call it: output, exit status, cache hits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* Runs the CLI (from $PTXJIT_CLI) with args and the given cache dir, after the environment
 * assignments in env ("" for none); captures stdout and stderr together; returns the exit
 * status. */
static int run_cli_env(char **output, const char *cache_dir, const char *env, const char *args)
{
    const char *cli = getenv("PTXJIT_CLI");
    ck_assert_msg(cli != NULL, "PTXJIT_CLI is not set (make test sets it)");
    char command[16384];
    snprintf(command, sizeof command, "%s PTXJIT_CACHE_DIR='%s' '%s' %s 2>&1", env, cache_dir,
             cli, args);
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

static int run_cli(char **output, const char *cache_dir, const char *args)
{
    return run_cli_env(output, cache_dir, "", args);
}

START_TEST(cli_ptx_prints_entry_and_vector_loads)
{
    char *dir = test_mkdtemp(), *out;
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce variant=vectorized tpb=256 batch=8"),
                     0);
    ck_assert_ptr_nonnull(strstr(out, ".entry reduce_kernel("));
    ck_assert_ptr_nonnull(strstr(out, "ld.global.nc.v4.u32"));
    ck_assert_ptr_nonnull(strstr(out, "compiled in"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_bad_tpb_exits_2_naming_tpb_and_allowed_values)
{
    char *dir = test_mkdtemp(), *out;
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce tpb=100"), 2);
    ck_assert_ptr_nonnull(strstr(out, "tpb=100"));
    ck_assert_ptr_nonnull(strstr(out, "power of two in 32..1024"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce colour=red"), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown parameter 'colour'"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_second_ptx_call_is_a_disk_hit_in_stats)
{
    char *dir = test_mkdtemp(), *out;
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce variant=one_pass"), 0);
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce variant=one_pass"), 0);
    ck_assert_ptr_nonnull(strstr(out, "disk cache hit"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "cache stats"), 0);
    ck_assert_ptr_nonnull(strstr(out, "entries  1\n"));
    ck_assert_ptr_nonnull(strstr(out, "hits     1\n"));
    ck_assert_ptr_nonnull(strstr(out, "stores   1\n"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "cache clear"), 0);
    ck_assert_ptr_nonnull(strstr(out, "removed 1 entries"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_cache_trim_keeps_the_cap_from_the_environment)
{
    char *dir = test_mkdtemp(), *out;
    static const char *const params[] = {"variant=one_pass", "variant=two_pass",
                                         "variant=warp_shuffle"};
    for (int i = 0; i < 3; i++) {
        char args[128];
        snprintf(args, sizeof args, "--no-gpu ptx reduce %s", params[i]);
        ck_assert_int_eq(run_cli(&out, dir, args), 0);
        free(out);
    }
    ck_assert_int_eq(run_cli(&out, dir, "cache trim"), 0);
    ck_assert_ptr_nonnull(strstr(out, "evicted 0 entries and removed 0 stale temporary files"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "cache stats"), 0);
    ck_assert_ptr_nonnull(strstr(out, "entries  3\n"));
    ck_assert_ptr_nonnull(strstr(out, "(cap 1073741824)"));
    unsigned long long bytes = 0;
    ck_assert_int_eq(sscanf(strstr(out, "bytes    "), "bytes %llu", &bytes), 1);
    free(out);
    /* Three entries of about the same size; half of them as the cap keeps one. */
    char environment[64], cap[32];
    snprintf(environment, sizeof environment, "PTXJIT_CACHE_MAX_BYTES=%llu", bytes / 2);
    snprintf(cap, sizeof cap, "(cap %llu)", bytes / 2);
    ck_assert_int_eq(run_cli_env(&out, dir, environment, "cache trim"), 0);
    ck_assert_ptr_nonnull(strstr(out, "evicted 2 entries"));
    free(out);
    ck_assert_int_eq(run_cli_env(&out, dir, environment, "cache stats"), 0);
    ck_assert_ptr_nonnull(strstr(out, "entries  1\n"));
    ck_assert_ptr_nonnull(strstr(out, cap));
    ck_assert_ptr_nonnull(strstr(out, "evicted  2 "));
    free(out);
    ck_assert_int_eq(run_cli_env(&out, dir, "PTXJIT_CACHE_MAX_BYTES=huge", "cache stats"), 0);
    ck_assert_ptr_nonnull(strstr(out, "PTXJIT_CACHE_MAX_BYTES='huge' is not a size"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_usage_errors_exit_2_and_help_exits_0)
{
    char *dir = test_mkdtemp(), *out;
    ck_assert_int_eq(run_cli(&out, dir, "frobnicate"), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown command 'frobnicate'"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--bogus list"), 2);
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "cache sweep"), 2);
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "ptx nosuchfamily"), 2);
    ck_assert_ptr_nonnull(strstr(out, "unknown kernel family"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: ptxjit"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "ptx --help"), 0);
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_info_and_list_describe_the_reduce_family)
{
    char *dir = test_mkdtemp(), *out;
    ck_assert_int_eq(run_cli(&out, dir, "list"), 0);
    ck_assert_ptr_nonnull(strstr(out, "reduce       built-in:reduce.cu"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "info reduce"), 0);
    ck_assert_ptr_nonnull(strstr(out, "two_pass, warp_shuffle, one_pass, batched, vectorized"));
    ck_assert_ptr_nonnull(strstr(out, "power of two in 32..1024"));
    ck_assert_ptr_nonnull(strstr(out, "batch <= 16"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_run_without_gpu_fails_with_reason)
{
    char *dir = test_mkdtemp(), *out;
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu run reduce n=1000"), 1);
    ck_assert_ptr_nonnull(strstr(out, "needs a GPU"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "run reduce n=zero"), 2);
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_ir_and_backend_flag_show_the_llvm_route)
{
    char *dir = test_mkdtemp(), *out;
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ir reduce variant=vectorized dtype=f32"), 0);
    ck_assert_ptr_nonnull(strstr(out, "define ptx_kernel void @reduce_kernel("));
    ck_assert_ptr_nonnull(strstr(out, "load <4 x float>, ptr addrspace(1)"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu --backend llvm ptx reduce variant=one_pass"), 0);
    ck_assert_ptr_nonnull(strstr(out, "backend=llvm dtype=i32 tpb=512 variant=one_pass"));
    ck_assert_ptr_nonnull(strstr(out, "Generated by LLVM NVPTX"));
    ck_assert_ptr_nonnull(strstr(out, "shfl.sync.down.b32"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce backend=llvm backend=llvm"), 2);
    ck_assert_ptr_nonnull(strstr(out, "given twice"));
    free(out);
    /* Cold compiles of both routes need no GPU: the stage table, the ratio, and cubins that
     * hold SASS (nothing left for the driver to compile at load). */
    ck_assert_int_eq(run_cli(&out, dir, "bench compile reduce variant=one_pass tpb=64 samples=2"),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "reduce variant=one_pass tpb=64, median of 2"));
    ck_assert_ptr_nonnull(strstr(out, "| nvrtc (prelude; NVRTC -> PTX + cubin) |"));
    ck_assert_ptr_nonnull(strstr(out, "| llvm (IR build; O3; NVPTX; nvJitLink) |"));
    ck_assert_ptr_nonnull(strstr(out, "llvm / nvrtc total: "));
    ck_assert_ptr_nonnull(strstr(out, "cubin, nvrtc: "));
    ck_assert_ptr_nonnull(strstr(strstr(out, "cubin, nvrtc: "), "CUDA ELF for sm_90: SASS "));
    ck_assert_ptr_nonnull(strstr(strstr(out, "cubin, llvm: "), "CUDA ELF for sm_90: SASS "));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "bench compile samples=0"), 2);
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--backend gcc list"), 1);
    ck_assert_ptr_nonnull(strstr(out, "available: nvrtc, llvm"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* NVRTC (12.9+) and nvJitLink would start the CUDA driver (cuInit) to use its compute cache;
 * ptxjit turns that off, so --no-gpu (use_gpu=0) really leaves the driver alone. A stand-in
 * libcuda.so.1 (build/fake_cuda, found first through LD_LIBRARY_PATH) logs its loading and
 * every cuInit. */
START_TEST(cli_no_gpu_compiles_leave_the_cuda_driver_unstarted)
{
    const char *cli = getenv("PTXJIT_CLI");
    ck_assert_ptr_nonnull(cli);
    char fake[4096];
    const char *slash = strrchr(cli, '/');
    snprintf(fake, sizeof fake, "%.*sfake_cuda", slash ? (int)(slash + 1 - cli) : 0, cli);
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/libcuda.so.1", fake);
    if (access(probe, R_OK) != 0) {
        printf("SKIP cli_no_gpu_compiles_leave_the_cuda_driver_unstarted: no %s (make test "
               "builds it)\n", probe);
        return;
    }
    char *dir = test_mkdtemp(), *out, log[4200], env[9000];
    snprintf(log, sizeof log, "%s/cuda.log", dir);
    snprintf(env, sizeof env, "LD_LIBRARY_PATH='%s' PTXJIT_TEST_CUDA_LOG='%s' "
             "PTXJIT_CUDA_LIBRARY=", fake, log);
    ck_assert_int_eq(run_cli_env(&out, dir, env, "--no-gpu --no-disk-cache ptx reduce "
                                                 "variant=one_pass"), 0);
    free(out);
    ck_assert_int_eq(run_cli_env(&out, dir, env, "--no-gpu --no-disk-cache ptx reduce "
                                                 "variant=one_pass backend=llvm"), 0);
    free(out);
    char *text = NULL;
    if (pj_read_file(&text, NULL, log) != PTXJIT_OK)
        text = NULL; /* no log: nothing loaded the stand-in at all */
    ck_assert_msg(!text || !strstr(text, "cuInit"), "cuInit was called during --no-gpu compiles");
    free(text);
    /* The stand-in is the libcuda these processes find: without --no-gpu, ptxjit loads it. */
    ck_assert_int_eq(run_cli_env(&out, dir, env, "ptx reduce variant=one_pass"), 0);
    free(out);
    ck_assert_int_eq(pj_read_file(&text, NULL, log), PTXJIT_OK);
    ck_assert_msg(strstr(text, "loaded"), "the stand-in libcuda was not the one loaded");
    free(text);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_cli(void)
{
    Suite *suite = suite_create("cli");
    TCase *tc = tcase_create("commands");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cli_ptx_prints_entry_and_vector_loads);
    tcase_add_test(tc, cli_bad_tpb_exits_2_naming_tpb_and_allowed_values);
    tcase_add_test(tc, cli_second_ptx_call_is_a_disk_hit_in_stats);
    tcase_add_test(tc, cli_cache_trim_keeps_the_cap_from_the_environment);
    tcase_add_test(tc, cli_usage_errors_exit_2_and_help_exits_0);
    tcase_add_test(tc, cli_info_and_list_describe_the_reduce_family);
    tcase_add_test(tc, cli_run_without_gpu_fails_with_reason);
    tcase_add_test(tc, cli_ir_and_backend_flag_show_the_llvm_route);
    tcase_add_test(tc, cli_no_gpu_compiles_leave_the_cuda_driver_unstarted);
    suite_add_tcase(suite, tc);
    return suite;
}

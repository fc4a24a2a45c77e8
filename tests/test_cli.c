/* test_cli.c — the ptxjit command line as users call it: output, exit status, cache hits. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/cubin.h"
#include "catalog/list.h"
#include "cli/bench/tools.h"
#include "compilers/nvjitlink.h"
#include "compilers/nvrtc.h"
#include "request/route_llvm.h"
#include "test_util.h"
/* The command line's one internal header declares again what it takes of the library: beside
 * the headers of the definitions (above), a declaration that drifts stops the build. */
#include "cli_internal.h"

static int run_cli_to(char **output, const char *cache_dir, const char *env, const char *args,
                      const char *err_path)
{
    return test_run_cli(output, cache_dir, env, args, err_path);
}

static int run_cli_env(char **output, const char *cache_dir, const char *env, const char *args)
{
    return run_cli_to(output, cache_dir, env, args, NULL);
}

static int run_cli(char **output, const char *cache_dir, const char *args)
{
    return run_cli_env(output, cache_dir, "", args);
}

/* Like run_cli, with stdout and stderr kept apart: *out is exactly what went to stdout. */
static int run_cli_split(char **out, char **err, const char *cache_dir, const char *args)
{
    char *err_dir = test_mkdtemp(), err_path[4200];
    snprintf(err_path, sizeof err_path, "%s/stderr", err_dir);
    int status = run_cli_to(out, cache_dir, "", args, err_path);
    ck_assert_int_eq(pj_read_file(err, NULL, err_path), PTXJIT_OK);
    test_rmtree(err_dir);
    free(err_dir);
    return status;
}

/* ---- A strict JSON checker (RFC 8259), so that the --json tests need nothing outside C.
 * Each returns the position after what it read, or NULL where the text is not JSON. */
static const char *json_value(const char *s, int depth);

static const char *json_space(const char *s)
{
    while (*s == ' ' || *s == '\t' || *s == '\n' || *s == '\r')
        s++;
    return s;
}

static const char *json_string(const char *s)
{
    if (*s++ != '"')
        return NULL;
    while (*s != '"') {
        unsigned char c = (unsigned char)*s;
        if (c < 0x20) /* raw control characters (and the end of the text) are not allowed */
            return NULL;
        if (c == '\\') {
            s++;
            if (*s == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)s[i]))
                        return NULL;
                s += 5;
            } else if (*s && strchr("\"\\/bfnrt", *s)) {
                s++;
            } else {
                return NULL;
            }
        } else if (c >= 0x80) { /* UTF-8: a lead byte and its continuation bytes */
            int n = c >= 0xF5 ? 0 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
            if (!n)
                return NULL;
            for (int i = 1; i < n; i++)
                if (((unsigned char)s[i] & 0xC0) != 0x80)
                    return NULL;
            s += n;
        } else {
            s++;
        }
    }
    return s + 1;
}

static const char *json_digits(const char *s)
{
    if (!isdigit((unsigned char)*s))
        return NULL;
    while (isdigit((unsigned char)*s))
        s++;
    return s;
}

static const char *json_number(const char *s)
{
    if (*s == '-')
        s++;
    s = *s == '0' ? s + 1 : json_digits(s);
    if (s && *s == '.')
        s = json_digits(s + 1);
    if (s && (*s == 'e' || *s == 'E')) {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        s = json_digits(s);
    }
    return s;
}

/* The members of an object (close '}') or the elements of an array (']'), after the bracket. */
static const char *json_items(const char *s, char close, int depth)
{
    s = json_space(s);
    if (*s == close)
        return s + 1;
    for (;;) {
        if (close == '}') {
            if (!(s = json_string(s)))
                return NULL;
            s = json_space(s);
            if (*s++ != ':')
                return NULL;
        }
        if (!(s = json_value(s, depth + 1)))
            return NULL;
        s = json_space(s);
        if (*s == close)
            return s + 1;
        if (*s++ != ',')
            return NULL;
        s = json_space(s);
    }
}

static const char *json_value(const char *s, int depth)
{
    s = json_space(s);
    if (depth > 64)
        return NULL;
    if (*s == '{' || *s == '[')
        return json_items(s + 1, *s == '{' ? '}' : ']', depth);
    if (*s == '"')
        return json_string(s);
    if (strncmp(s, "true", 4) == 0 || strncmp(s, "null", 4) == 0)
        return s + 4;
    if (strncmp(s, "false", 5) == 0)
        return s + 5;
    return json_number(s);
}

/* What --json promises: one JSON value, one newline after it, nothing else. */
static int is_json_document(const char *text)
{
    const char *end = json_value(text, 0);
    return end && end[0] == '\n' && end[1] == '\0';
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
    if (!test_llvm_or_skip("cli_ir_and_backend_flag_show_the_llvm_route"))
        return;
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
    /* Without a family: issue 15's two requests and the table of its four targets. */
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu bench compile samples=1"), 0);
    ck_assert_ptr_nonnull(strstr(out, "matmul variant=wgmma dtype=bf16, median of 1"));
    ck_assert_ptr_nonnull(strstr(out, "| reduce | "));
    ck_assert_ptr_nonnull(strstr(out, "| matmul wgmma bf16 | "));
    ck_assert_ptr_nonnull(strstr(out, "| <= 350 |"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "bench compile ofc=fast"), 2);
    ck_assert_ptr_nonnull(strstr(out, "give min, mid or max"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--backend gcc list"), 2); /* a usage error */
    ck_assert_ptr_nonnull(strstr(out, "--backend takes nvrtc or llvm, not 'gcc'"));
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
    if (pj_llvm_built()) { /* the llvm route (plugin, nvJitLink) must not start it either */
        ck_assert_int_eq(run_cli_env(&out, dir, env, "--no-gpu --no-disk-cache ptx reduce "
                                                     "variant=one_pass backend=llvm"), 0);
        free(out);
    }
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

/* stdout is the artefact alone: a cold compile and the disk hit after it print the same
 * bytes; which of the two it was is said on stderr only. */
START_TEST(cli_ptx_stdout_is_the_same_bytes_cold_and_warm)
{
    char *dir = test_mkdtemp(), *cold, *cold_err, *warm, *warm_err;
    ck_assert_int_eq(run_cli_split(&cold, &cold_err, dir, "ptx reduce"), 0);
    ck_assert_int_eq(run_cli_split(&warm, &warm_err, dir, "ptx reduce"), 0);
    ck_assert_ptr_nonnull(strstr(cold, ".entry reduce_kernel("));
    ck_assert_msg(strlen(cold) == strlen(warm) && memcmp(cold, warm, strlen(cold)) == 0,
                  "ptx reduce printed %zu bytes cold and %zu different ones warm", strlen(cold),
                  strlen(warm));
    ck_assert_ptr_nonnull(strstr(cold_err, ": compiled in "));
    ck_assert_ptr_nonnull(strstr(warm_err, ": disk cache hit in "));
    ck_assert_ptr_null(strstr(cold, "// ptxjit:"));
    free(cold), free(cold_err), free(warm), free(warm_err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Global options work before, between and after the command's words, also as --name=value;
 * '--' ends them; a quoted parameter set stays one argument. */
START_TEST(cli_global_options_anywhere_on_the_line)
{
    if (!test_llvm_or_skip("cli_global_options_anywhere_on_the_line"))
        return;
    static const char *const lines[] = {
        "--no-gpu --backend llvm ptx reduce variant=two_pass",
        "ptx --backend llvm reduce variant=two_pass --no-gpu",
        "ptx reduce variant=two_pass --no-gpu --backend llvm",
        "ptx reduce --backend=llvm --no-gpu variant=two_pass",
    };
    char *dir = test_mkdtemp(), *out, *err, *first = NULL;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        ck_assert_msg(run_cli_split(&out, &err, dir, lines[i]) == 0, "%s: %s", lines[i], err);
        ck_assert_ptr_nonnull(strstr(err, "reduce backend=llvm dtype=i32 tpb=512 "
                                          "variant=two_pass"));
        ck_assert_ptr_nonnull(strstr(out, "Generated by LLVM NVPTX"));
        if (first)
            ck_assert_str_eq(out, first);
        free(err);
        if (first)
            free(out);
        else
            first = out;
    }
    free(first);
    ck_assert_int_eq(run_cli(&out, dir, "info reduce --help"), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: ptxjit"));
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "list --version"), 0);
    ck_assert_str_eq(out, "ptxjit " PTXJIT_VERSION "\n");
    free(out);
    /* After '--' a word is an argument even if it looks like an option: here a bad parameter. */
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce -- --weird"), 2);
    ck_assert_ptr_nonnull(strstr(out, "'--weird' is not key=value"));
    ck_assert_ptr_null(strstr(out, "unknown option"));
    free(out);
    /* The quoted set reaches bench whole (and bench then needs a GPU: exit 1, not a usage
     * error). */
    ck_assert_int_eq(run_cli(&out, dir, "bench transpose \"variant=smem tile=32\" --no-gpu"), 1);
    ck_assert_ptr_nonnull(strstr(out, "needs a GPU"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_unknown_and_incomplete_options_are_usage_errors)
{
    static const struct {
        const char *args, *message;
    } cases[] = {
        {"ptx reduce --bogus", "unknown option '--bogus'"},
        {"--bogus=1 list", "unknown option '--bogus'"},
        {"list -x", "unknown option '-x'"},
        {"ptx reduce --arch", "--arch needs a value, e.g. --arch sm_90a"},
        {"ptx reduce --arch --no-gpu", "--arch needs a value"},
        {"list --cache-dir=", "--cache-dir needs a value"},
        {"list --device x", "--device takes a CUDA device ordinal (0, 1, ...), not 'x'"},
        {"list --device -1", "--device takes a CUDA device ordinal"},
        {"list --no-gpu=yes", "--no-gpu takes no value"},
    };
    char *dir = test_mkdtemp(), *out, *err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_msg(run_cli_split(&out, &err, dir, cases[i].args) == 2, "%s", cases[i].args);
        ck_assert_msg(strstr(err, cases[i].message), "%s: stderr '%s' lacks '%s'",
                      cases[i].args, err, cases[i].message);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* The checker above must itself refuse what is not JSON, or the tests below prove nothing. */
START_TEST(cli_json_checker_refuses_what_is_not_json)
{
    ck_assert(is_json_document("{\"a\": [1, -2.5e3, true, null, \"\\u00e9\\n\"], \"b\": {}}\n"));
    ck_assert(is_json_document("[]\n"));
    static const char *const bad[] = {
        "{\"a\": 1}",          "{\"a\": 1,}\n",   "[1 2]\n",        "{\"a\" 1}\n",
        "[\"\x01\"]\n",        "[\"\\x\"]\n",     "[\"a]\n",        "[01]\n",
        "[1.]\n",              "[tru]\n",         "{a: 1}\n",       "[\"\xff\"]\n",
        "{\"a\": 1}\n{}\n",    "[\"\\u12\"]\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(!is_json_document(bad[i]), "accepted '%s'", bad[i]);
}
END_TEST

START_TEST(cli_json_list_and_cache_stats)
{
    char *dir = test_mkdtemp(), *out, *err;
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "--json list"), 0);
    ck_assert_msg(is_json_document(out), "not JSON: %s", out);
    ck_assert_ptr_nonnull(
        strstr(out, "\"name\": \"reduce\",\n      \"origin\": \"built-in:reduce.cu\""));
    ck_assert_ptr_nonnull(strstr(out, "\"problems\": []"));
    free(out), free(err);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce variant=one_pass"), 0);
    free(out);
    ck_assert_int_eq(run_cli(&out, dir, "--no-gpu ptx reduce variant=one_pass"), 0);
    free(out);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "cache stats --json"), 0);
    ck_assert_msg(is_json_document(out), "not JSON: %s", out);
    static const char *const counters[] = {"\"path\": \"", "\"entries\": 1,", "\"bytes\": ",
                                           "\"max_bytes\": 1073741824,", "\"hits\": 1,",
                                           "\"misses\": 1,", "\"stores\": 1,", "\"corrupt\": 0,",
                                           "\"evicted\": 0,", "\"tune_records\": 0,\n",
                                           "\"remote_configured\": false,",
                                           "\"remote_hits\": 0,", "\"remote_ms\": 0,",
                                           "\"compile_waits\": 0,", "\"lease_timeouts\": 0,\n",
                                           "\"compiles\": 1,", "\"compile_buckets_ms\": {\n"};
    for (size_t i = 0; i < sizeof counters / sizeof counters[0]; i++)
        ck_assert_msg(strstr(out, counters[i]), "no %s in %s", counters[i], out);
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_json_info_is_the_schema_as_data)
{
    char *dir = test_mkdtemp(), *out, *err;
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "--json info reduce"), 0);
    ck_assert_msg(is_json_document(out), "not JSON: %s", out);
    static const char *const facts[] = {
        "\"family\": \"reduce\"",
        "\"origin\": \"built-in:reduce.cu\"",
        "\"values\": [\"two_pass\", \"warp_shuffle\", \"one_pass\", \"batched\", \"vectorized\"]",
        "\"name\": \"tpb\",\n      \"kind\": \"int\",\n      \"min\": 32,\n      \"max\": 1024,\n"
        "      \"pow2\": true,\n      \"default\": \"512\",\n      \"default_if\": [],\n"
        "      \"doc\": \"threads per block\",\n      \"when\": null",
        "\"when\": \"variant == batched || variant == vectorized\"",
        "\"expression\": \"variant != vectorized || batch <= 16\"",
        "\"entries\": [\"reduce_kernel\"]",
    };
    for (size_t i = 0; i < sizeof facts / sizeof facts[0]; i++)
        ck_assert_msg(strstr(out, facts[i]), "no %s in %s", facts[i], out);
    free(out), free(err);
    /* Conditional defaults, in the order they are tried. */
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "info matmul --json"), 0);
    ck_assert_msg(is_json_document(out), "not JSON: %s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"when\": \"variant == wgmma && dtype == bf16\",\n"
                                      "          \"value\": \"bf16\"\n        },\n        {\n"
                                      "          \"when\": \"variant == wgmma && dtype == f16\""));
    free(out), free(err);
    /* An unknown family writes nothing to stdout. */
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "--json info nosuchfamily"), 2);
    ck_assert_str_eq(out, "");
    ck_assert_ptr_nonnull(strstr(err, "unknown kernel family 'nosuchfamily'"));
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Template text reaches the JSON escaped: quotes, backslashes, a tab, and a byte that is not
 * UTF-8 (U+FFFD), next to UTF-8 that passes as it is. */
/* `source` specializes without compiling: a template that does not compile still shows the
 * source its error message points at; `ptx` of it fails with the compiler's log. */
START_TEST(cli_source_of_a_request_that_fails_to_compile)
{
    char *dir = test_mkdtemp(), *out, *err, path[4200], args[4400];
    snprintf(path, sizeof path, "%s/broken.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("//@ptxjit family broken\n//@ptxjit entry broken_kernel\n"
          "//@ptxjit param factor int(1..9) default=2\n"
          "extern \"C\" __global__ void broken_kernel(int *x) { x[0] = FACTOR * missing; }\n",
          file);
    ck_assert_int_eq(fclose(file), 0);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' ptx broken factor=3", dir);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, args), 1);
    ck_assert_str_eq(out, "");
    ck_assert_ptr_nonnull(strstr(err, "'ptxjit source broken factor=3'"));
    ck_assert_ptr_nonnull(strstr(err, "--- the whole compiler log ---"));
    free(out), free(err);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' source broken factor=3", dir);
    ck_assert_msg(run_cli_split(&out, &err, dir, args) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(out, "FACTOR = 3"));
    ck_assert_ptr_nonnull(strstr(out, "FACTOR * missing"));
    ck_assert_ptr_nonnull(strstr(err, "specialized, not compiled"));
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_json_escapes_what_templates_say)
{
    char *dir = test_mkdtemp(), *out, *err, path[4200], args[4400];
    snprintf(path, sizeof path, "%s/escape.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("//@ptxjit family escape\n"
          "//@ptxjit doc a \"quote\", a back\\slash, a\ttab, a bad \xff byte, caf\xc3\xa9\n"
          "//@ptxjit entry escape_kernel\n"
          "//@ptxjit param mode enum(a,b) default=a doc=\"say \\\"hi\\\"\"\n"
          "extern \"C\" __global__ void escape_kernel() {}\n",
          file);
    ck_assert_int_eq(fclose(file), 0);
    snprintf(args, sizeof args, "--templates '%s' --json info escape", dir);
    ck_assert_msg(run_cli_split(&out, &err, dir, args) == 0, "%s", err);
    ck_assert_msg(is_json_document(out), "not JSON: %s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"doc\": \"a \\\"quote\\\", a back\\\\slash, a\\u0009tab, "
                                      "a bad \\ufffd byte, caf\xc3\xa9\""));
    ck_assert_ptr_nonnull(strstr(out, "\"doc\": \"say \\\"hi\\\"\""));
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_json_inspect_says_where_the_kernel_came_from)
{
    char *dir = test_mkdtemp(), *out, *err;
    static const char *const origins[] = {"\"origin\": \"compiled\"", "\"origin\": \"disk\""};
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(run_cli_split(&out, &err, dir, "inspect reduce --no-gpu --json"), 0);
        ck_assert_msg(is_json_document(out), "not JSON: %s", out);
        ck_assert_msg(strstr(out, origins[i]), "run %d: no %s in %s", i, origins[i], out);
        static const char *const facts[] = {
            "\"family\": \"reduce\"",
            "\"params\": \"batch=4 dtype=i32 tpb=512 variant=vectorized\"",
            "\"arch\": \"sm_90a\"", "\"key\": \"", "\"ptx_bytes\": ", "\"cubin_bytes\": ",
            "\"cache_dir\": \"", "\"name\": \"reduce_kernel\"", "\"resources\": null",
            "\"resources_error\": \"the GPU was turned off", "\"log\": \""};
        for (size_t f = 0; f < sizeof facts / sizeof facts[0]; f++)
            ck_assert_msg(strstr(out, facts[f]), "no %s in %s", facts[f], out);
        free(out), free(err);
    }
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "--json --no-disk-cache --no-gpu inspect "
                                                    "reduce variant=one_pass"), 0);
    ck_assert_msg(is_json_document(out), "not JSON: %s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"cache_dir\": null"));
    ck_assert_ptr_nonnull(strstr(out, "\"origin\": \"compiled\""));
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Counts and words are read strictly, before anything runs (no GPU needed to see it): a sign,
 * hex, a number past 2^48 (or runs past a million), junk after digits, an unknown mode, words
 * a command does not take; and bundles that are no bundles. */
START_TEST(cli_counts_and_words_are_strict)
{
    static const char *const usage[] = {
        "run reduce runs=-1",         "run reduce n=99999999999999999999", "run reduce n=2^49",
        "run reduce n=0x10",          "run reduce runs=2^32",             "bench reduce runs=0",
        "bench reduce n=2^47+2^47",   "bench backends reduce n=5x",       "bench multigpu n=5x",
        "bench multigpu devices=abc", "bench multigpu runs=7junk",        "bench tune swep",
        "bench tune sweep cold",      "list foo",                         "jit-time",
        "list --bucket exact",        "list --backend foo",               "bench tune search nosuch",
        "bench tune cold reduce",     "bench tune search matmul x",
    };
    char *dir = test_mkdtemp(), *out, *err, line[8400];
    for (size_t i = 0; i < sizeof usage / sizeof usage[0]; i++) {
        int code = run_cli_split(&out, &err, dir, usage[i]);
        ck_assert_msg(code == 2, "%s: exit %d, not 2: %s", usage[i], code, err);
        ck_assert_msg(strlen(err) > 10, "%s: no message", usage[i]);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
    snprintf(line, sizeof line, "cache export %s/b.tar nosuch", dir);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, line), 2);
    ck_assert_msg(strstr(err, "nosuch"), "%s", err);
    free(out), free(err);
    snprintf(line, sizeof line, "cache import %s", dir); /* a directory */
    ck_assert_int_eq(run_cli_split(&out, &err, dir, line), 1);
    ck_assert_msg(strstr(err, "not a regular file"), "%s", err);
    free(out), free(err);
    char path[4300];
    snprintf(path, sizeof path, "%s/short.tar", dir);
    FILE *f = fopen(path, "wb");
    fputs("forty bytes of text that are no tar file", f);
    fclose(f);
    snprintf(line, sizeof line, "cache import %s", path);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, line), 1);
    ck_assert_msg(strstr(err, "not a tar file"), "%s", err);
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(cli_json_is_refused_where_there_is_none)
{
    static const char *const lines[] = {"--json ptx reduce", "source reduce --json",
                                        "--json cache path", "cache clear --json",
                                        "--json run reduce", "--json bench reduce",
                                        "--json bench compile", "bench backends reduce --json",
                                        "--json bench tune reduce", "--json bench multigpu"};
    char *dir = test_mkdtemp(), *out, *err;
    for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
        ck_assert_msg(run_cli_split(&out, &err, dir, lines[i]) == 2, "%s", lines[i]);
        ck_assert_msg(strstr(err, "--json works with list, info, inspect, cache stats, tune, warm and bench jit"),
                      "%s: %s", lines[i], err);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* `ptxjit bench NAME` looks NAME up among its tools before the families: a family bearing a
 * tool's name could never be benched, so none may. */
START_TEST(cli_no_family_bears_a_bench_tool_name)
{
#define TOOL_NAME(name, json, svg) #name,
    static const char *const tools[] = {CLI_BENCH_TOOLS(TOOL_NAME)};
#undef TOOL_NAME
#define FAMILY_NAME(name) #name,
    static const char *const families[] = {PJ_FAMILY_LIST(FAMILY_NAME)};
#undef FAMILY_NAME
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++)
        for (size_t t = 0; t < sizeof tools / sizeof tools[0]; t++)
            ck_assert_msg(strcmp(families[f], tools[t]) != 0,
                          "the family '%s' bears the name of a tool of ptxjit bench; rename one",
                          families[f]);
    /* The binary's own table says the same: its usage lists the tools. */
    char *dir = test_mkdtemp(), *out, *err;
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "bench"), 2);
    for (size_t t = 0; t < sizeof tools / sizeof tools[0]; t++) {
        char listed[64];
        snprintf(listed, sizeof listed, "|%s", tools[t]);
        ck_assert_msg(strstr(err, listed), "'%s' not in: %s", listed, err);
    }
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* text with each run of spaces and newlines made one space: a wrapped description as one line. */
static char *one_line(const char *text)
{
    char *line = malloc(strlen(text) + 1), *at = line;
    ck_assert_ptr_nonnull(line);
    for (; *text; text++)
        if (!isspace((unsigned char)*text))
            *at++ = *text;
        else if (at > line && at[-1] != ' ')
            *at++ = ' ';
    *at = '\0';
    return line;
}

/* The family words of the bench tools' lines in `ptxjit --help` come from the family table:
 * the requests of bench compile, the families of bench tune's cold problem and pool, the run
 * sizes tune takes. The binary checks before any command that the roles one family alone
 * plays (bench jit's request, the pool's space, the cold problem) have one family each:
 * nothing said on stderr. */
START_TEST(cli_help_takes_the_bench_requests_from_the_family_table)
{
    static const char *const said[] = {
        "without FAMILY: reduce variant=vectorized tpb=512 batch=8 and matmul variant=wgmma "
        "dtype=bf16, then the table of issue 15's targets",
        "a FAMILY alone: its defaults (reduce: variant=vectorized tpb=512 batch=8); one the llvm",
        "an exhaustive sweep of its space and the tuned winner's time against the sweep's best",
        "cold: the transpose space tuned cold and its record in a fresh process",
        "the cold compiles of the reduce space tpb=128..1024 batch=1..8 serially",
        "(its run sizes: reduce n=, transpose h= w=, matmul m= n= k=, softmax rows= cols=; a "
        "user family",
    };
    char *dir = test_mkdtemp(), *out, *err;
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "--help"), 0);
    ck_assert_str_eq(err, "");
    char *help = one_line(out);
    for (size_t i = 0; i < sizeof said / sizeof said[0]; i++)
        ck_assert_msg(strstr(help, said[i]), "'%s' not in: %s", said[i], out);
    free(help), free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* `bench multigpu` takes every family (each has an op for it), its size words, and refuses a
 * size that is no count before it looks for a GPU. */
START_TEST(cli_bench_multigpu_takes_every_family)
{
#define FAMILY_NAME(name) #name,
    static const char *const families[] = {PJ_FAMILY_LIST(FAMILY_NAME)};
#undef FAMILY_NAME
    char *dir = test_mkdtemp(), *out, *err, line[256];
    for (size_t f = 0; f < sizeof families / sizeof families[0]; f++) {
        snprintf(line, sizeof line, "bench multigpu %s runs=3 --no-gpu", families[f]);
        ck_assert_int_eq(run_cli_split(&out, &err, dir, line), 1);
        ck_assert_msg(strstr(err, "needs a GPU (--no-gpu was given)"), "%s: %s", line, err);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "bench multigpu matmul k=2^49"), 2);
    ck_assert_msg(strstr(err, "k=2^49 is not a count"), "%s", err);
    free(out), free(err);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, "bench multigpu \"dtype=bf16\""), 2);
    ck_assert_msg(strstr(err, "a parameter set needs its family"), "%s", err);
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A command's own options (tune's, warm's) stand anywhere on the line, like the global ones,
 * and every other command refuses them, naming their command. */
START_TEST(cli_command_options_belong_to_their_command)
{
    static const struct {
        const char *args, *message;
        int code;
    } cases[] = {
        {"list --bucket exact", "--space, --retune, --compile-only, --bucket, --list and "
                                "--clear are tune's options, not 'list''s; leave them out", 2},
        {"ptx reduce --from-records", "--from-records is warm's option, not 'ptx''s; leave it "
                                      "out", 2},
        {"warm --retune x.txt", "are tune's options, not 'warm''s", 2},
        {"tune --from-records", "--from-records is warm's option, not 'tune''s", 2},
        {"ptx reduce --bucket foo", "--bucket takes pow2 or exact, not 'foo'", 2},
        {"tune reduce --space", "--space needs a value, e.g. --space \"tpb=128,256", 2},
        {"--list=1 tune", "--list takes no value", 2},
        {"--list --clear tune", "usage: ptxjit tune FAMILY", 2},
        {"--no-gpu tune --list", "no tuning records in", 0},
    };
    char *dir = test_mkdtemp(), *out, *err;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        int code = run_cli_split(&out, &err, dir, cases[i].args);
        ck_assert_msg(code == cases[i].code, "%s: exit %d: %s", cases[i].args, code, err);
        ck_assert_msg(strstr(err, cases[i].message), "%s: stderr '%s' lacks '%s'",
                      cases[i].args, err, cases[i].message);
        ck_assert_str_eq(out, "");
        free(out), free(err);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* The library API that `info --json` is built on, as an embedding program calls it. */
START_TEST(cli_family_schema_api_hands_out_the_template_as_data)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    int count = -1;
    ck_assert_int_eq(ptxjit_family_param_count(&count, context, "matmul"), PTXJIT_OK);
    ck_assert_int_gt(count, 2);
    ptxjit_param_info param;
    ck_assert_int_eq(ptxjit_family_param(&param, context, "matmul", 2), PTXJIT_OK);
    ck_assert_str_eq(param.name, "out");
    ck_assert_int_eq(param.kind, PTXJIT_PARAM_DTYPE);
    ck_assert_str_eq(param.kind_name, "dtype");
    ck_assert_int_eq(param.value_count, 3);
    ck_assert_str_eq(param.values[param.default_value], "f32");
    ck_assert_str_eq(param.default_text, "f32");
    ck_assert_int_eq(param.default_if_count, 3);
    ptxjit_default_if_info when;
    ck_assert_int_eq(ptxjit_family_default_if(&when, context, "matmul", 2, 1), PTXJIT_OK);
    ck_assert_str_eq(when.condition, "variant == wgmma && dtype == f16");
    ck_assert_str_eq(when.value_text, "f16");
    ck_assert_str_eq(param.values[when.value], "f16");
    ck_assert_int_eq(ptxjit_family_default_if(&when, context, "matmul", 2, 3),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "default_if index 3 is out of range"));
    ck_assert_int_eq(ptxjit_family_param(&param, context, "reduce", 1), PTXJIT_OK);
    ck_assert_str_eq(param.name, "tpb");
    ck_assert_int_eq(param.kind, PTXJIT_PARAM_INT);
    ck_assert(param.min == 32 && param.max == 1024 && param.pow2 && param.default_value == 512);
    ck_assert_str_eq(param.default_text, "512");
    ck_assert_ptr_null(param.values);
    ck_assert_ptr_null(param.when);
    ck_assert_int_eq(ptxjit_family_param(&param, context, "reduce", count + 10),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "ptxjit_family_param_count"));
    ptxjit_constraint_info constraint;
    ck_assert_int_eq(ptxjit_family_constraint_count(&count, context, "reduce"), PTXJIT_OK);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(ptxjit_family_constraint(&constraint, context, "reduce", 0), PTXJIT_OK);
    ck_assert_str_eq(constraint.expression, "variant != vectorized || batch <= 16");
    ck_assert_ptr_nonnull(strstr(constraint.message, "use batch <= 16"));
    const char *text;
    ck_assert_int_eq(ptxjit_family_entry_count(&count, context, "reduce"), PTXJIT_OK);
    ck_assert_int_eq(count, 1);
    ck_assert_int_eq(ptxjit_family_entry(&text, context, "reduce", 0), PTXJIT_OK);
    ck_assert_str_eq(text, "reduce_kernel");
    ck_assert_int_eq(ptxjit_family_doc(&text, context, "reduce"), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(text, "Sum of a vector"));
    ck_assert_int_eq(ptxjit_family_doc(&text, context, "nosuch"), PTXJIT_ERR_UNKNOWN_FAMILY);
    ck_assert_int_eq(ptxjit_family_param_count(NULL, context, "reduce"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

/* A broken template is a problem, not a failure: list exits 0, shows the other families and
 * names the file and its parse error on stderr (and in --json's "problems"). */
START_TEST(cli_list_with_a_broken_template_exits_0_naming_it)
{
    char *dir = test_mkdtemp(), *out, *err, path[4200], args[4400];
    snprintf(path, sizeof path, "%s/bad.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("//@ptxjit family bad\n//@ptxjit entry k\n//@ptxjit param f int(1..9)\n", file);
    ck_assert_int_eq(fclose(file), 0);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' list", dir);
    ck_assert_msg(run_cli_split(&out, &err, dir, args) == 0, "%s", err);
    ck_assert_ptr_nonnull(strstr(out, "reduce       built-in:reduce.cu"));
    ck_assert_ptr_null(strstr(out, "bad"));
    ck_assert_msg(strstr(err, "bad.cu:3:") && strstr(err, "family 'bad' is unavailable"), "%s",
                  err);
    ck_assert_ptr_nonnull(strstr(err, "1 template problem"));
    free(out), free(err);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' --json list", dir);
    ck_assert_msg(run_cli_split(&out, &err, dir, args) == 0, "%s", err);
    ck_assert_msg(is_json_document(out), "not JSON: %s", out);
    ck_assert_msg(strstr(out, "\"problems\": [\n    \"") && strstr(out, "bad.cu:3: "), "%s", out);
    free(out), free(err);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' ptx bad", dir);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, args), 1);
    ck_assert_msg(strstr(err, "ptxjit: family 'bad' is unavailable: ") && strstr(err, "bad.cu:3:"),
                  "%s", err);
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* What the command line can do with a user family, said in commands: tune compiles its space
 * (--compile-only) but cannot time it, run cannot launch it, and auto points at the commands
 * that resolve it; no message names an API call as the way (issue 29, 9). */
START_TEST(cli_a_user_family_is_told_what_the_commands_do)
{
    char *dir = test_mkdtemp(), *out, *err, path[4200], args[4400];
    snprintf(path, sizeof path, "%s/scale.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("//@ptxjit family scale\n//@ptxjit entry scale\n"
          "//@ptxjit param tpb int(32..1024) pow2 default=256\n"
          "//@ptxjit tune tpb 64,128\n"
          "extern \"C\" __global__ void scale(float *x) { x[threadIdx.x] *= 2; }\n",
          file);
    ck_assert_int_eq(fclose(file), 0);
    snprintf(args, sizeof args, "--templates '%s' tune scale problem=\"rows=4\"", dir);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, args), 2);
    ck_assert_msg(strstr(err, "'ptxjit tune scale problem=\"TEXT\" [fixed params] "
                              "--compile-only' compiles its space") &&
                      !strstr(err, "options.run"),
                  "%s", err);
    free(out), free(err);
    snprintf(args, sizeof args, "--templates '%s' tune scale problem=\"rows=4\" --compile-only",
             dir);
    ck_assert_msg(run_cli_split(&out, &err, dir, args) == 0, "%s", err);
    ck_assert_msg(strstr(err, "tpb=64  ") && strstr(err, "tpb=128  ") &&
                      strstr(err, "compiled only: no winner"),
                  "%s", err);
    free(out), free(err);
    snprintf(args, sizeof args, "--no-gpu --templates '%s' ptx scale tpb=auto", dir);
    ck_assert_int_eq(run_cli_split(&out, &err, dir, args), 2);
    ck_assert_msg(strstr(err, "'ptxjit run FAMILY SIZE=N ... PARAM=auto'") &&
                      !strstr(err, "ptxjit_get_kernel_tuned"),
                  "%s", err);
    free(out), free(err);
    snprintf(args, sizeof args, "--templates '%s' run scale", dir);
    ck_assert_int_ne(run_cli_split(&out, &err, dir, args), 0);
    ck_assert_msg(strstr(err, "'ptxjit ptx scale [key=value ...]'"), "%s", err);
    free(out), free(err);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* `run matmul` with a layout on the fake driver (tests/fake_cuda: host memory, no kernel
 * runs): the whole run but the kernel — the layout's buffers, C poisoned, the op's launch per
 * product, the checks — without a GPU. Nothing writes C, so the products are NaN (WRONG, exit
 * 1) and C's gaps are as poisoned. */
START_TEST(cli_run_matmul_layout_on_a_driver_that_runs_nothing)
{
    char env[4200];
    if (!test_fake_driver_env(env, sizeof env,
                              "cli_run_matmul_layout_on_a_driver_that_runs_nothing"))
        return;
    char *dir = test_mkdtemp(), *out = NULL;
    ck_assert_int_eq(test_run_cli(&out, dir, env, "run matmul variant=naive m=9 n=8 k=5 batch=3 "
                                  "stride_a=0 stride_c=100 runs=1", NULL), 1);
    ck_assert_msg(strstr(out, ", 3 x 9 x 8 x 5 (batch x m x n x k; lda=5 ldb=8 ldc=8 "
                              "stride_a=0 stride_b=40 stride_c=100): relative error nan") &&
                      strstr(out, "C's gaps untouched: WRONG;"),
                  "%s", out);
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* `run REQUEST` on env's driver prints, before its first comma, the request line of `run
 * REQUEST --plan`, which must hold want. */
static void expect_run_as_planned(const char *env, const char *dir, const char *request,
                                  const char *want)
{
    char args[256], *out = NULL, *planned = NULL;
    snprintf(args, sizeof args, "run %s --plan", request);
    ck_assert_int_eq(test_run_cli(&planned, dir, env, args, NULL), 0);
    snprintf(args, sizeof args, "run %s runs=1", request);
    ck_assert_int_eq(test_run_cli(&out, dir, env, args, NULL), 1); /* nothing ran: WRONG */
    char *end = strchr(planned, '\n');
    ck_assert_msg(end && strstr(planned, want), "%s: planned '%s'", request, planned);
    *end = '\0'; /* the plan's request line: "FAMILY PARAMS" */
    ck_assert_msg(strncmp(out, planned, strlen(planned)) == 0 && out[strlen(planned)] == ',',
                  "%s: planned '%s', ran '%s'", request, planned, out);
    free(out);
    free(planned);
}

/* `run` with auto words and no record launches what `run --plan` says (the defaults fitted to
 * the shape: a decoding's swapped tile; a layout's batch of rows; reduce, whose run read its
 * kernel apart from the op), on the fake driver, which runs no kernel (so the result is
 * WRONG, exit 1); before, run resolved auto to the unfitted template defaults. */
START_TEST(cli_run_with_auto_and_no_record_runs_the_plan)
{
    char env[4200];
    if (!test_fake_driver_env(env, sizeof env, "cli_run_with_auto_and_no_record_runs_the_plan"))
        return;
    char *dir = test_mkdtemp();
    expect_run_as_planned(env, dir, "matmul m=1 n=4096 k=4096 mma=auto stages=auto", "swap=1");
    expect_run_as_planned(env, dir, "matmul m=1 n=4096 k=4096 batch=2 mma=auto", "bm=64");
    expect_run_as_planned(env, dir, "reduce n=1000 tpb=auto", "reduce batch=");
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
    tcase_add_test(tc, cli_ptx_stdout_is_the_same_bytes_cold_and_warm);
    tcase_add_test(tc, cli_global_options_anywhere_on_the_line);
    tcase_add_test(tc, cli_unknown_and_incomplete_options_are_usage_errors);
    tcase_add_test(tc, cli_json_checker_refuses_what_is_not_json);
    tcase_add_test(tc, cli_json_list_and_cache_stats);
    tcase_add_test(tc, cli_json_info_is_the_schema_as_data);
    tcase_add_test(tc, cli_json_escapes_what_templates_say);
    tcase_add_test(tc, cli_source_of_a_request_that_fails_to_compile);
    tcase_add_test(tc, cli_json_inspect_says_where_the_kernel_came_from);
    tcase_add_test(tc, cli_json_is_refused_where_there_is_none);
    tcase_add_test(tc, cli_counts_and_words_are_strict);
    tcase_add_test(tc, cli_family_schema_api_hands_out_the_template_as_data);
    tcase_add_test(tc, cli_list_with_a_broken_template_exits_0_naming_it);
    tcase_add_test(tc, cli_a_user_family_is_told_what_the_commands_do);
    tcase_add_test(tc, cli_no_family_bears_a_bench_tool_name);
    tcase_add_test(tc, cli_help_takes_the_bench_requests_from_the_family_table);
    tcase_add_test(tc, cli_bench_multigpu_takes_every_family);
    tcase_add_test(tc, cli_command_options_belong_to_their_command);
    tcase_add_test(tc, cli_run_matmul_layout_on_a_driver_that_runs_nothing);
    tcase_add_test(tc, cli_run_with_auto_and_no_record_runs_the_plan);
    suite_add_tcase(suite, tc);
    return suite;
}

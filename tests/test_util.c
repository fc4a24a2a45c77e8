/* test_util.c — temporary directories, GPU detection and the sweep stride for the tests. */
#define _XOPEN_SOURCE 700
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "request/route_llvm.h"
#include "test_util.h"

char *test_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/ptxjit-test-XXXXXX", base && *base ? base : "/tmp");
    char *made = mkdtemp(path);
    ck_assert_msg(made != NULL, "mkdtemp failed");
    return pj_strdup(made);
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

void test_rmtree(const char *path)
{
    if (path)
        nftw(path, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

ptxjit_context *test_gpu_context(const char *test)
{
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, NULL), PTXJIT_OK);
    if (ptxjit_gpu_status(context) == PTXJIT_OK)
        return context;
    printf("SKIP %s: no GPU (%s)\n", test, ptxjit_last_error());
    fflush(stdout);
    ptxjit_close(context);
    return NULL;
}

TCase *test_many_compiles_case(Suite *suite, int timeout_seconds)
{
    TCase *tc = tcase_create("many_compiles");
    tcase_set_tags(tc, "many_compiles");
    tcase_set_timeout(tc, timeout_seconds);
    suite_add_tcase(suite, tc);
    return tc;
}

int test_sweep_stride(void)
{
    const char *text = getenv("PTXJIT_TEST_SWEEP_STRIDE");
    int stride = text ? atoi(text) : 1;
    return stride > 1 ? stride : 1;
}

int test_sweep_offset(void)
{
    const char *text = getenv("PTXJIT_TEST_SWEEP_OFFSET");
    int offset = text ? atoi(text) : 0;
    return offset > 0 ? offset % test_sweep_stride() : 0;
}

int test_sweep_takes(size_t index)
{
    return index % (size_t)test_sweep_stride() == (size_t)test_sweep_offset();
}

size_t test_sweep_taken(size_t count)
{
    const size_t stride = (size_t)test_sweep_stride(), offset = (size_t)test_sweep_offset();
    return count > offset ? (count - offset + stride - 1) / stride : 0;
}

int test_llvm_or_skip(const char *test)
{
    if (pj_llvm_built())
        return 1;
    printf("%s: skipped (this build has no LLVM; the llvm route says how to get it)\n", test);
    return 0;
}

int test_fake_driver_env(char *env, size_t size, const char *test)
{
    const char *cli = getenv("PTXJIT_CLI"), *slash = cli ? strrchr(cli, '/') : NULL;
    char fake[4096];
    snprintf(fake, sizeof fake, "%.*sfake_cuda/libcuda.so.1", slash ? (int)(slash + 1 - cli) : 0,
             cli ? cli : "");
    if (!cli || access(fake, R_OK) != 0) {
        printf("SKIP %s: no %s (make test builds it)\n", test, fake);
        return 0;
    }
    snprintf(env, size, "PJ_FAKE_DEVICES=1 PTXJIT_CUDA_LIBRARY='%s'", fake);
    return 1;
}

ptxjit_context *test_open_offline(const char *arch)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.arch = arch;
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

void test_expect_refused(const char *family, const char *params, const char *needle,
                         const char *arch)
{
    ptxjit_context *context = test_open_offline(arch);
    char *canonical = NULL;
    ck_assert_msg(ptxjit_canonical_params(&canonical, context, family, params) ==
                      PTXJIT_ERR_PARAM,
                  "%s '%s' was accepted", family, params);
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "'%s' lacks '%s'", ptxjit_last_error(),
                  needle);
    free(canonical);
    ptxjit_close(context);
}

/* Runs the CLI (from $PTXJIT_CLI) with args and the given cache dir, after the environment
 * assignments in env ("" for none); captures stdout, and stderr with it unless err_path
 * names a file for it; returns the exit status. */
int test_run_cli(char **output, const char *cache_dir, const char *env, const char *args,
                 const char *err_path)
{
    const char *cli = getenv("PTXJIT_CLI");
    ck_assert_msg(cli != NULL, "PTXJIT_CLI is not set (make test sets it)");
    char command[16384], redirect[4200] = "2>&1";
    if (err_path)
        snprintf(redirect, sizeof redirect, "2>'%s'", err_path);
    char cache[4200] = "";
    if (cache_dir)
        snprintf(cache, sizeof cache, "PTXJIT_CACHE_DIR='%s'", cache_dir);
    snprintf(command, sizeof command, "%s %s '%s' %s %s", env, cache, cli, args, redirect);
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

/* This process's data segment as the kernel counts it against RLIMIT_DATA, in bytes; 0 when
 * /proc cannot tell. */
static unsigned long long vm_data_bytes(void)
{
    FILE *status = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long kib = 0;
    while (status && fgets(line, sizeof line, status))
        if (sscanf(line, "VmData: %llu kB", &kib) == 1)
            break;
    if (status)
        fclose(status);
    return kib * 1024;
}

void test_bounded_child(const char *what, int (*fn)(void *), void *arg, int seconds)
{
    unsigned long long data = vm_data_bytes();
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        /* Check's runner handles SIGALRM by killing the test's whole process group: the
         * child's alarm must end the child alone, which the parent then reports. */
        signal(SIGALRM, SIG_DFL);
        alarm((unsigned)seconds);
        if (data) {
            struct rlimit limit = {data + (1ull << 30), data + (1ull << 30)};
            setrlimit(RLIMIT_DATA, &limit);
        }
        _exit(fn(arg));
    }
    int status = 0;
    pid_t done;
    while ((done = waitpid(child, &status, 0)) < 0 && errno == EINTR)
        ;
    ck_assert_int_eq(done, child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "%s: the child %s %d (a hang ends with signal %d, the alarm after %d s)", what,
                  WIFEXITED(status) ? "exited with" : "was killed by signal",
                  WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), SIGALRM, seconds);
}

/* test_util.c — temporary directories, GPU detection and the sweep stride for the tests. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

int test_sweep_stride(void)
{
    const char *text = getenv("PTXJIT_TEST_SWEEP_STRIDE");
    int stride = text ? atoi(text) : 1;
    return stride > 1 ? stride : 1;
}

int test_llvm_or_skip(const char *test)
{
    if (pj_llvm_built())
        return 1;
    printf("%s: skipped (this build has no LLVM; the llvm route says how to get it)\n", test);
    return 0;
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

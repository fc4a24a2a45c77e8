/* test_util.c — temporary directories, GPU detection and the sweep stride for the tests. */
#define _XOPEN_SOURCE 700
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend/route_llvm.h"
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

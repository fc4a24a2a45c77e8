/* llvm_util.c — contexts, compiles and PTX counts for the LLVM generators' tests. */
#include <stdlib.h>
#include <string.h>

#include "llvm_util.h"

ptxjit_context *test_open_sm_90a(const char *backend)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.backend = backend;
    options.arch = "sm_90a";
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    return context;
}

ptxjit_kernel *test_compile(ptxjit_context *context, const char *family, const char *params)
{
    ptxjit_kernel *kernel = NULL;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    return kernel;
}

int test_valid(ptxjit_context *context, const char *family, const char *params)
{
    char *canonical = NULL;
    int ok = ptxjit_canonical_params(&canonical, context, family, params) == PTXJIT_OK;
    free(canonical);
    return ok;
}

int test_count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

long test_number_after(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    return at ? strtol(at + strlen(needle), NULL, 10) : -1;
}

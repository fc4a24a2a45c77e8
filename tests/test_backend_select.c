/* test_backend_select.c — the backend= word of a request: taken out before the schema sees
 * the parameters, checked, and put back into the canonical form in its sorted place. */
#include <stdio.h>
#include <string.h>

#include "request/route_llvm.h"
#include "request/select.h"
#include "test_util.h"

START_TEST(backend_word_is_taken_out_and_the_rest_kept_in_order)
{
    pj_backend backend;
    char *rest = NULL;
    ck_assert_int_eq(pj_backend_take(&backend, &rest, "variant=batched, backend=llvm tpb=64",
                                  PJ_BACKEND_NVRTC),
                     PTXJIT_OK);
    ck_assert_int_eq(backend, PJ_BACKEND_LLVM);
    ck_assert_str_eq(rest, "variant=batched tpb=64");
    free(rest);
    ck_assert_int_eq(pj_backend_take(&backend, &rest, "tpb=64", PJ_BACKEND_LLVM), PTXJIT_OK);
    ck_assert_int_eq(backend, PJ_BACKEND_LLVM); /* the context's default */
    ck_assert_str_eq(rest, "tpb=64");
    free(rest);
    ck_assert_int_eq(pj_backend_take(&backend, &rest, NULL, PJ_BACKEND_NVRTC), PTXJIT_OK);
    ck_assert_int_eq(backend, PJ_BACKEND_NVRTC);
    ck_assert_str_eq(rest, "");
    free(rest);
}
END_TEST

START_TEST(backend_word_twice_or_unknown_is_a_parameter_error)
{
    pj_backend backend;
    char *rest = NULL;
    ck_assert_int_eq(pj_backend_take(&backend, &rest, "backend=llvm backend=nvrtc", PJ_BACKEND_NVRTC),
                     PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "given twice"));
    ck_assert_ptr_null(rest);
    ck_assert_int_eq(pj_backend_take(&backend, &rest, "backend=gcc", PJ_BACKEND_NVRTC),
                     PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "one of nvrtc, llvm"));
    ck_assert_int_eq(pj_backend_from_name(&backend, "gcc"), PTXJIT_ERR_UNSUPPORTED);
}
END_TEST

START_TEST(canonical_form_names_llvm_in_sorted_place_and_leaves_nvrtc_unchanged)
{
    char *c = pj_backend_canonical(pj_strdup("batch=8 dtype=i32 tpb=256"), PJ_BACKEND_LLVM);
    ck_assert_str_eq(c, "backend=llvm batch=8 dtype=i32 tpb=256");
    free(c);
    c = pj_backend_canonical(pj_strdup("alpha=1 zeta=2"), PJ_BACKEND_LLVM);
    ck_assert_str_eq(c, "alpha=1 backend=llvm zeta=2");
    free(c);
    c = pj_backend_canonical(pj_strdup("alpha=1"), PJ_BACKEND_LLVM);
    ck_assert_str_eq(c, "alpha=1 backend=llvm");
    free(c);
    c = pj_backend_canonical(pj_strdup(""), PJ_BACKEND_LLVM);
    ck_assert_str_eq(c, "backend=llvm");
    free(c);
    c = pj_backend_canonical(pj_strdup("batch=8 dtype=i32"), PJ_BACKEND_NVRTC);
    ck_assert_str_eq(c, "batch=8 dtype=i32");
    free(c);
}
END_TEST

START_TEST(public_canonical_params_take_the_backend_word)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "reduce",
                                             "variant=one_pass backend=llvm"),
                     PTXJIT_OK);
    ck_assert_str_eq(canonical, "backend=llvm dtype=i32 tpb=512 variant=one_pass");
    free(canonical);
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "reduce",
                                             "variant=one_pass backend=nvrtc"),
                     PTXJIT_OK);
    ck_assert_str_eq(canonical, "dtype=i32 tpb=512 variant=one_pass");
    free(canonical);
    ptxjit_close(context);
}
END_TEST

/* A build without LLVM refuses backend=llvm before compiling anything, with the fix. */
START_TEST(llvm_request_in_a_build_without_llvm_names_the_fix)
{
    if (pj_llvm_built()) {
        printf("llvm_request_in_a_build_without_llvm_names_the_fix: this build has LLVM "
               "(make test-no-llvm runs it)\n");
        return;
    }
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.disk_cache = 0;
    options.use_gpu = 0;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "backend=llvm", NULL),
                     PTXJIT_ERR_NO_COMPILER);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "install llvm-19-dev"));
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "backend=nvrtc", NULL),
                     PTXJIT_OK);
    ptxjit_close(context);
}
END_TEST

Suite *suite_backend_select(void)
{
    Suite *s = suite_create("backend_select");
    TCase *tc = tcase_create("select");
    tcase_add_test(tc, backend_word_is_taken_out_and_the_rest_kept_in_order);
    tcase_add_test(tc, backend_word_twice_or_unknown_is_a_parameter_error);
    tcase_add_test(tc, canonical_form_names_llvm_in_sorted_place_and_leaves_nvrtc_unchanged);
    tcase_add_test(tc, public_canonical_params_take_the_backend_word);
    tcase_add_test(tc, llvm_request_in_a_build_without_llvm_names_the_fix);
    suite_add_tcase(s, tc);
    return s;
}

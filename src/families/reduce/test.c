/* test.c — the reduce family without a GPU: its grid per variant (the vectorized head before
 * the first 16-byte boundary included), its CPU references, and its kernels' PTX through both
 * routes. */
#include <stdio.h>
#include <string.h>

#include "request/route_llvm.h"
#include "families/reduce/op.h"
#include "test_util.h"

START_TEST(grid_covers_every_element_once)
{
    reduce_config vectorized = {REDUCE_VECTORIZED, 256, 4, PJ_DTYPE_f32};
    /* 16-byte aligned: n / 4 vectors in tiles of 256 x 4. */
    ck_assert_uint_eq(pj_reduce_grid(&vectorized, 0x1000, 4096), 1);
    ck_assert_uint_eq(pj_reduce_grid(&vectorized, 0x1000, 4100), 2);
    /* 4 bytes past a boundary: 3 head elements first, then whole vectors. */
    ck_assert_uint_eq(pj_reduce_grid(&vectorized, 0x1004, 4099), 1);
    ck_assert_uint_eq(pj_reduce_grid(&vectorized, 0x1004, 4100), 1);
    ck_assert_uint_eq(pj_reduce_grid(&vectorized, 0x1004, 4103), 2);
    /* Fewer elements than the head: one block still runs. */
    ck_assert_uint_eq(pj_reduce_grid(&vectorized, 0x1004, 2), 1);
    reduce_config strided = {REDUCE_ONE_PASS, 512, 1, PJ_DTYPE_i32};
    ck_assert_uint_eq(pj_reduce_grid(&strided, 0x1000, 1), 1);
    ck_assert_uint_eq(pj_reduce_grid(&strided, 0x1000, 513), 2);
    ck_assert_uint_eq(pj_reduce_grid(&strided, 0x1000, (uint64_t)1 << 50), 0x7fffffffu);
}
END_TEST

START_TEST(references_wrap_and_bound_rounding)
{
    const int32_t wraps[] = {INT32_MAX, 1, -3};
    ck_assert_uint_eq(pj_reduce_reference_i32(wraps, 3), (uint32_t)INT32_MAX + 1u - 3u);
    const float values[] = {1e8f, 1.0f, -1e8f, 0.5f};
    double magnitude = 0;
    double sum = pj_reduce_reference_f32(values, 4, &magnitude);
    ck_assert_double_eq(sum, 1.5);
    ck_assert_double_eq(magnitude, 2e8 + 1.5);
    ck_assert(pj_reduce_f32_close(0.0f, sum, magnitude));   /* lost to f32 rounding: allowed */
    ck_assert(!pj_reduce_f32_close(5000.0f, sum, magnitude)); /* beyond 1e-5 of the scale */
}
END_TEST

START_TEST(each_variant_compiles_through_each_route)
{
    ptxjit_context *context = test_open_offline(NULL);
    const char *routes[] = {"nvrtc", "llvm"};
    for (int r = 0; r < (pj_llvm_built() ? 2 : 1); r++) {
        int v = 0;
        for (const char *s = PJ_VARIANT_LIST_TEXT(PJ_REDUCE_VARIANTS); *s; v++) {
            const size_t length = strcspn(s, ",");
            char params[128];
            snprintf(params, sizeof params, "variant=%.*s dtype=f32 backend=%s", (int)length, s,
                     routes[r]);
            s += length + (s[length] == ',');
            ptxjit_kernel *kernel;
            ck_assert_msg(ptxjit_get_kernel(&kernel, context, "reduce", params, NULL) == PTXJIT_OK,
                          "%s: %s", params, ptxjit_last_error());
            ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), ".entry reduce_kernel"));
            const int atomics = v >= REDUCE_ONE_PASS;
            ck_assert_msg((strstr(ptxjit_kernel_ptx(kernel), "red.global.add") != NULL ||
                           strstr(ptxjit_kernel_ptx(kernel), "atom.global.add") != NULL) ==
                              atomics,
                          "%s: atomics expected %d", params, atomics);
        }
        ck_assert_int_eq(v, REDUCE_VARIANT_COUNT);
    }
    ptxjit_close(context);
}
END_TEST

Suite *suite_reduce(void)
{
    Suite *s = suite_create("reduce");
    TCase *t = tcase_create("cpu");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, grid_covers_every_element_once);
    tcase_add_test(t, references_wrap_and_bound_rounding);
    suite_add_tcase(s, t);
    TCase *many = test_many_compiles_case(s, 120);
    tcase_add_test(many, each_variant_compiles_through_each_route);
    return s;
}

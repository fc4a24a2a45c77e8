/* test_transpose.c — the transpose family without a GPU: schema constraints, the specialized
 * code of each variant, and the tensor maps' geometry. */
#include <string.h>

#include "families/transpose/op.h"
#include "test_util.h"

static void expect_refused(const char *params, const char *needle, const char *arch)
{
    test_expect_refused("transpose", params, needle, arch);
}

START_TEST(transpose_constraints_fail_early_with_the_fix)
{
    expect_refused("variant=tma_swizzle block=16",
                   "with swizzle=128B a tile row must be a multiple of 128 bytes", NULL);
    expect_refused("variant=tma_swizzle dtype=f16 block=32", "a multiple of 128 bytes", NULL);
    expect_refused("variant=tma_batched swizzle=64B block=8",
                   "with swizzle=64B a tile row must be a multiple of 64", NULL);
    expect_refused("variant=tma_batched swizzle=128B block=128 rows=16",
                   "with swizzle=128B a tile row must be a multiple of 128 bytes", NULL);
    expect_refused("variant=tma block=64 dtype=f16", "one thread per element, at most 1024",
                   NULL);
    expect_refused("variant=tma_batched block=8 batch=16 xpose=scalar",
                   "must not exceed the tile width", NULL);
    expect_refused("variant=tma_batched block=128 rows=128 batch=8",
                   "at most 1024 threads", NULL);
    expect_refused("variant=tma", "needs sm_90 or newer; use variant=smem", "sm_80");
    expect_refused("variant=tma_batched block=128 rows=0 dtype=f64 batch=64 inplace=0", "227 KiB",
                   NULL);
    expect_refused("variant=tma_batched block=128 rows=128 dtype=f32 batch=64 inplace=0 stages=2",
                   "227 KiB", NULL);
    expect_refused("variant=smem block=128 batch=32", "48 KiB of static shared memory", NULL);
    expect_refused("variant=tma_batched block=256 dtype=f64 rows=8 batch=8",
                   "rows of at most 1 KiB", NULL);
    expect_refused("variant=tma_batched rows=48", "power of two from 8 to 256", NULL);
    expect_refused("variant=tma_batched block=16 rows=16 batch=1 xpose=diagonal",
                   "xpose=diagonal needs tiles of at least 32 x 32", NULL);
    expect_refused("variant=tma_batched xpose=vector", "xpose=vector needs square tiles", NULL);
    expect_refused("variant=tma_batched block=64 swizzle=128B xpose=vector batch=8",
                   "batch a multiple of", NULL);
    /* Swizzle limits do not bind variants without a swizzle. */
    ptxjit_context *context = test_open_offline(NULL);
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "transpose",
                                             "variant=smem dtype=f64 block=32 batch=1"),
                     PTXJIT_OK);
    free(canonical);
    ptxjit_close(context);
    expect_refused("variant=tma swizzle=128B", "'swizzle' does not apply", NULL);
    expect_refused("variant=smem rows=32", "'rows' does not apply", NULL);
    expect_refused("swizzle=256B", "one of none, 32B, 64B, 128B", NULL);
}
END_TEST

static void expect_canonical(ptxjit_context *context, const char *params, const char *want)
{
    char *canonical = NULL;
    ck_assert_msg(ptxjit_canonical_params(&canonical, context, "transpose", params) ==
                      PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_str_eq(canonical, want);
    free(canonical);
}

/* Defaults depend on the variant (default_if): each step of the write-up by its name alone,
 * and the fastest measured tile for tma_batched. */
START_TEST(transpose_defaults_follow_the_variant)
{
    ptxjit_context *context = test_open_offline(NULL);
    expect_canonical(context, "", "batch=16 block=128 dtype=f32 group=4096 inplace=1 rows=64 "
                                  "stages=0 swizzle=none variant=tma_batched xpose=diagonal");
    expect_canonical(context, "variant=smem", "batch=8 block=64 dtype=f32 group=4096 variant=smem");
    expect_canonical(context, "variant=tma", "block=32 dtype=f32 group=4096 variant=tma");
    expect_canonical(context, "variant=tma_swizzle",
                     "block=32 dtype=f32 group=4096 swizzle=128B variant=tma_swizzle");
    /* A given value wins over every default case; a square tile unless rows= says. */
    expect_canonical(context, "variant=tma_batched block=64 swizzle=64B xpose=scalar",
                     "batch=16 block=64 dtype=f32 group=4096 inplace=1 rows=0 stages=0 "
                     "swizzle=64B variant=tma_batched xpose=scalar");
    expect_canonical(context, "variant=tma_batched block=128 swizzle=128B xpose=vector",
                     "batch=16 block=128 dtype=f32 group=4096 inplace=1 rows=0 stages=0 "
                     "swizzle=128B variant=tma_batched xpose=vector");
    ptxjit_close(context);
    /* smem needs no TMA: it compiles for an older architecture. */
    context = test_open_offline("sm_80");
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "transpose", "variant=smem", NULL),
                     PTXJIT_OK);
    ck_assert_ptr_null(strstr(ptxjit_kernel_ptx(kernel), "cp.async.bulk"));
    ptxjit_close(context);
}
END_TEST

START_TEST(transpose_tma_variants_use_bulk_tensor_copies)
{
    static const char *const requests[] = {
        "variant=tma", "variant=tma_swizzle swizzle=none", "variant=tma_batched batch=32",
        "dtype=f16 block=64", "dtype=bf16 block=32 swizzle=64B", "dtype=f64 block=16 batch=8",
        "variant=tma_batched block=64 swizzle=none", "", "stages=2",
        "block=64 swizzle=128B xpose=vector"};
    ptxjit_context *context = test_open_offline(NULL);
    for (size_t i = 0; i < sizeof requests / sizeof *requests; i++) {
        ptxjit_kernel *kernel;
        ck_assert_msg(ptxjit_get_kernel(&kernel, context, "transpose", requests[i], NULL) ==
                          PTXJIT_OK,
                      "%s: %s", requests[i], ptxjit_last_error());
        const char *ptx = ptxjit_kernel_ptx(kernel);
        ck_assert_ptr_nonnull(strstr(ptx, "cp.async.bulk.tensor.2d.shared::cluster.global"));
        ck_assert_ptr_nonnull(strstr(ptx, "cp.async.bulk.tensor.2d.global.shared::cta"));
        ck_assert_ptr_nonnull(strstr(ptx, "mbarrier.try_wait.parity"));
        ck_assert_ptr_nonnull(strstr(ptx, "fence.proxy.async.shared::cta"));
    }
    ptxjit_close(context);
}
END_TEST

static transpose_config config_of(const char *params)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "transpose", params, NULL), PTXJIT_OK);
    transpose_config config;
    ck_assert_int_eq(pj_transpose_config_of(&config, kernel), PTXJIT_OK);
    ptxjit_close(context);
    return config;
}

START_TEST(transpose_maps_mirror_each_other)
{
    transpose_config config = config_of("variant=tma_batched block=32 batch=4 swizzle=128B");
    ck_assert_int_eq(config.threads, 256);
    ck_assert_int_eq(config.swizzle_bytes, 128);
    transpose_map_plan in, out;
    ck_assert_int_eq(pj_transpose_plan_maps(&in, &out, &config, 0x10000, 0x20000, 36, 68),
                     PTXJIT_OK);
    ck_assert_uint_eq(in.dims[0], 68);  /* innermost: the input's columns */
    ck_assert_uint_eq(in.dims[1], 36);
    ck_assert_uint_eq(in.row_bytes, 68 * 4);
    ck_assert_uint_eq(out.dims[0], 36); /* the output's rows are the input's columns */
    ck_assert_uint_eq(out.dims[1], 68);
    ck_assert_uint_eq(out.row_bytes, 36 * 4);
    ck_assert_uint_eq(in.box[0], 32);
    ck_assert_uint_eq(out.box[1], 32);
    ck_assert_int_eq(out.swizzle_bytes, 128);
    /* A 64-wide fp32 tile with the 128-byte swizzle moves as two boxes 32 wide. */
    config = config_of("variant=tma_batched block=64 batch=8 swizzle=128B");
    ck_assert_int_eq(pj_transpose_plan_maps(&in, &out, &config, 0x10000, 0x20000, 128, 256),
                     PTXJIT_OK);
    ck_assert_uint_eq(in.box[0], 32);
    ck_assert_uint_eq(in.box[1], 64);
    ck_assert_uint_eq(out.box[0], 32);
    /* The default rectangular tile: 128 columns x 64 rows in, 64 columns x 128 rows out, one
     * unswizzled box each; in place, so one tile of shared memory (+1 KiB for alignment). */
    config = config_of("");
    ck_assert_int_eq(config.block, 128);
    ck_assert_int_eq(config.tile_rows, 64);
    ck_assert_int_eq(config.threads, 512);
    ck_assert_int_eq(config.tiles, 1);
    ck_assert_uint_eq(config.shared_bytes, 128 * 64 * 4 + 1024);
    ck_assert_int_eq(pj_transpose_plan_maps(&in, &out, &config, 0x10000, 0x20000, 100, 300),
                     PTXJIT_OK);
    ck_assert_uint_eq(in.box[0], 128);
    ck_assert_uint_eq(in.box[1], 64);
    ck_assert_uint_eq(out.box[0], 64);
    ck_assert_uint_eq(out.box[1], 128);
    config = config_of("stages=3 inplace=0 block=64");
    ck_assert_int_eq(config.stages, 3);
    ck_assert_uint_eq(config.shared_bytes, 3 * 2 * 64 * 64 * 4 + 1024);
}
END_TEST

START_TEST(transpose_maps_refuse_what_the_tma_cannot_describe)
{
    transpose_config config = config_of("variant=tma");
    transpose_map_plan in, out;
    ck_assert_int_eq(pj_transpose_plan_maps(&in, &out, &config, 0x10000, 0x20000, 1, 4097),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "16388 bytes, not a multiple of 16"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "variant=smem"));
    ck_assert_int_eq(pj_transpose_plan_maps(&in, &out, &config, 0x10000, 0x20000, 33, 64),
                     PTXJIT_ERR_INVALID_ARGUMENT); /* the output's rows: 33 x 4 bytes */
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "output rows"));
    ck_assert_int_eq(pj_transpose_plan_maps(&in, &out, &config, 0x10004, 0x20000, 64, 64),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "16-byte aligned"));
}
END_TEST

START_TEST(transpose_reference_moves_every_element)
{
    const uint16_t in[6] = {1, 2, 3, 4, 5, 6}; /* 2 x 3 */
    uint16_t out[6] = {0};
    pj_transpose_reference(out, in, 2, 3, 2);
    const uint16_t want[6] = {1, 4, 2, 5, 3, 6};
    ck_assert_mem_eq(out, want, sizeof want);
}
END_TEST

Suite *suite_transpose(void)
{
    Suite *suite = suite_create("transpose");
    TCase *tc = tcase_create("schema");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, transpose_constraints_fail_early_with_the_fix);
    tcase_add_test(tc, transpose_defaults_follow_the_variant);
    tcase_add_test(tc, transpose_maps_mirror_each_other);
    tcase_add_test(tc, transpose_maps_refuse_what_the_tma_cannot_describe);
    tcase_add_test(tc, transpose_reference_moves_every_element);
    suite_add_tcase(suite, tc);
    TCase *many = test_many_compiles_case(suite, 120);
    tcase_add_test(many, transpose_tma_variants_use_bulk_tensor_copies);
    return suite;
}

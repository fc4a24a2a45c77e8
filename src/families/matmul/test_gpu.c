/* test_matmul_gpu.c — every matmul variant on the GPU against a float64 CPU reference, fresh
 * random inputs, NaN-poisoned outputs, square and ragged shapes. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "families/matmul/op.h"
#include "test_util.h"

typedef struct {
    size_t m, n, k;
} shape;

static uint64_t state;
static float next_uniform(void) /* [-1, 1) */
{
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)((double)(state >> 11) * 0x1.0p-52 - 1.0);
}

/* Runs params on m x n x k: every element of C must be written and finite, sampled rows (all
 * for small products) within tolerance of the float64 product, as ‖C − ref‖ / ‖ref‖. */
static void check(ptxjit_context *context, const char *params, shape s, double tolerance)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK, "%s: %s",
                  params, ptxjit_last_error());
    ck_assert_int_eq(pj_matmul_config_of(&config, kernel), PTXJIT_OK);
    const size_t e = (size_t)pj_dtype_bytes(config.dtype), eo = (size_t)pj_dtype_bytes(config.out);
    void *a = malloc(s.m * s.k * e), *b = malloc(s.k * s.n * e), *c = malloc(s.m * s.n * eo);
    double *want = malloc(s.n * sizeof *want);
    ck_assert(a && b && c && want);
    state ^= (uint64_t)time(NULL) ^ ((uint64_t)clock() << 17);
    for (size_t i = 0; i < s.m * s.k; i++)
        pj_matmul_set_element(a, config.dtype, i, next_uniform());
    for (size_t i = 0; i < s.k * s.n; i++)
        pj_matmul_set_element(b, config.dtype, i, next_uniform());
    ptxjit_devptr da, db, dc;
    ck_assert_int_eq(ptxjit_alloc(&da, context, s.m * s.k * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&db, context, s.k * s.n * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dc, context, s.m * s.n * eo), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, da, a, s.m * s.k * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, db, b, s.k * s.n * e), PTXJIT_OK);
    memset(c, 0xff, s.m * s.n * eo); /* NaN in every type */
    ck_assert_int_eq(ptxjit_copy_to_device(context, dc, c, s.m * s.n * eo), PTXJIT_OK);
    ptxjit_status status = ptxjit_matmul(context, params, da, db, dc, s.m, s.n, s.k, NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s %zux%zux%zu: %s", params, s.m, s.n, s.k,
                  ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(context, c, dc, s.m * s.n * eo), PTXJIT_OK);
    /* One assertion, not one per element: in Check's forking mode each passing assertion
     * writes to a pipe. */
    size_t unwritten = 0;
    while (unwritten < s.m * s.n && isfinite(pj_matmul_element(c, config.out, unwritten)))
        unwritten++;
    ck_assert_msg(unwritten == s.m * s.n, "%s %zux%zux%zu: C[%zu][%zu] not written", params, s.m,
                  s.n, s.k, unwritten / s.n, unwritten % s.n);
    int all = (double)s.m * s.n * s.k <= 3e7;
    size_t rows = all || s.m < 6 ? s.m : 6;
    double diff = 0, norm = 0;
    for (size_t i = 0; i < rows; i++) {
        size_t row = all ? i : i == rows - 1 ? s.m - 1 : i * s.m / rows;
        pj_matmul_reference_row(want, a, b, config.dtype, s.n, s.k, row);
        for (size_t j = 0; j < s.n; j++) {
            double delta = pj_matmul_element(c, config.out, row * s.n + j) - want[j];
            diff += delta * delta;
            norm += want[j] * want[j];
        }
    }
    double error = sqrt(diff / norm);
    ck_assert_msg(error <= tolerance, "%s %zux%zux%zu: relative error %.3e over %.0e", params,
                  s.m, s.n, s.k, error, tolerance);
    ptxjit_free(context, da);
    ptxjit_free(context, db);
    ptxjit_free(context, dc);
    free(a);
    free(b);
    free(c);
    free(want);
}

static const char *const simt[] = {"variant=naive", "variant=coalescing", "variant=tiled",
                                   "variant=tiled_register", "variant=block_tiled",
                                   "variant=block_tiled_vectorized"};

START_TEST(matmul_simt_variants_any_shape)
{
    ptxjit_context *context = test_gpu_context("matmul_simt_variants_any_shape");
    if (!context)
        return;
    static const shape shapes[] = {{1, 1, 1}, {127, 129, 65}, {33, 7, 300}, {512, 512, 512},
                                   {130, 260, 516}};
    for (size_t v = 0; v < PJ_ARRAY_SIZE(simt); v++)
        for (size_t s = 0; s < PJ_ARRAY_SIZE(shapes); s++)
            check(context, simt[v], shapes[s], 1e-5);
    /* Other tiles: BK larger than K, one warp column, wider thread tiles. */
    check(context, "variant=block_tiled_vectorized bk=16 tm=4 tn=8 bm=64 bn=128",
          (shape){127, 129, 65}, 1e-5);
    check(context, "variant=block_tiled_vectorized bk=8 tm=8 tn=4 bm=64 bn=64",
          (shape){200, 96, 40}, 1e-5);
    check(context, "variant=tiled_register bm=32 bn=32 bk=16 tm=4", (shape){127, 129, 65}, 1e-5);
    ptxjit_close(context);
}
END_TEST

START_TEST(matmul_simt_variants_4096)
{
    ptxjit_context *context = test_gpu_context("matmul_simt_variants_4096");
    if (!context)
        return;
    for (size_t v = 0; v < PJ_ARRAY_SIZE(simt); v++)
        check(context, simt[v], (shape){4096, 4096, 4096}, 1e-5);
    ptxjit_close(context);
}
END_TEST

/* tf32: k and n multiples of 4; m and the tile edges ragged. */
START_TEST(matmul_tensor_core_shapes_and_tiles)
{
    ptxjit_context *context = test_gpu_context("matmul_tensor_core_shapes_and_tiles");
    if (!context)
        return;
    static const shape shapes[] = {{1, 4, 4}, {127, 132, 68}, {512, 512, 512},
                                   {4096, 4096, 4096}, {300, 20, 1000}};
    for (size_t s = 0; s < PJ_ARRAY_SIZE(shapes); s++)
        check(context, "variant=tensor_core load=cp_async", shapes[s], 1e-3);
    static const char *const tiles[] = {
        "variant=tensor_core load=cp_async stages=2", "variant=tensor_core load=cp_async stages=4 bk=16",
        "variant=tensor_core load=cp_async bm=64 bn=64 wm=32 wn=32", "variant=tensor_core load=cp_async wm=32 wn=64 bk=64 stages=2",
        "variant=tensor_core load=cp_async wm=64 wn=64 bn=256", "variant=tensor_core load=cp_async wm=64 wn=16",
        "variant=tensor_core load=cp_async wm=16 wn=8 bm=32 bn=32"};
    for (size_t t = 0; t < PJ_ARRAY_SIZE(tiles); t++)
        check(context, tiles[t], (shape){127, 132, 68}, 1e-3);
    ptxjit_close(context);
}
END_TEST

/* tensor_core with TMA loads: the same shapes; every swizzle span (bk = 8, 16, 32), vectors of
 * B of 1, 2 and 4 columns (wn = 8, 16, 32 and more), more warps, deep and shallow pipelines,
 * fewer tiles of K than stages. */
START_TEST(matmul_tensor_core_tma_shapes_and_tiles)
{
    ptxjit_context *context = test_gpu_context("matmul_tensor_core_tma_shapes_and_tiles");
    if (!context)
        return;
    static const shape shapes[] = {{1, 4, 4}, {127, 132, 68}, {512, 512, 512},
                                   {4096, 4096, 4096}, {300, 20, 1000}, {257, 36, 4}};
    for (size_t s = 0; s < PJ_ARRAY_SIZE(shapes); s++)
        check(context, "variant=tensor_core load=tma", shapes[s], 1e-3);
    static const char *const tiles[] = {
        "bk=16 stages=4", "bk=8 stages=6", "stages=2", "prefetch=0",
        "bm=256 wm=64 wn=32", "bm=256 wm=64 wn=64", "wm=64 wn=64 bn=256 bk=16",
        "wm=32 wn=16 bm=64 bn=64", "wm=16 wn=8 bm=32 bn=32 bk=8 stages=8"};
    for (size_t t = 0; t < PJ_ARRAY_SIZE(tiles); t++) {
        char params[160];
        snprintf(params, sizeof params, "variant=tensor_core load=tma %s", tiles[t]);
        check(context, params, (shape){127, 132, 68}, 1e-3);
        check(context, params, (shape){260, 200, 300}, 1e-3);
    }
    ptxjit_close(context);
}
END_TEST

/* wgmma: k and n multiples of 8, any m; bf16 and f16, both outputs, several N and depths. */
START_TEST(matmul_wgmma_shapes_types_and_tiles)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_shapes_types_and_tiles");
    if (!context)
        return;
    static const shape shapes[] = {{1, 8, 8}, {127, 136, 72}, {512, 512, 512}, {300, 264, 1000},
                                   {4096, 4096, 4096}};
    for (size_t s = 0; s < PJ_ARRAY_SIZE(shapes); s++) {
        check(context, "variant=wgmma", shapes[s], 1e-2);
        check(context, "variant=wgmma out=f32", shapes[s], 1e-2);
    }
    static const char *const tiles[] = {
        "dtype=f16", "dtype=f16 out=f32", "mma=m64n128k16", "mma=m64n64k16 consumers=1 bm=64",
        "mma=m64n200k16 stages=3", "mma=m64n8k16 consumers=1 bm=128", "mma=m64n128k16 bm=256",
        "stages=2", "stages=6 mma=m64n128k16", "group=1", "mma=m64n96k16 consumers=1 bm=64 stages=8"};
    for (size_t t = 0; t < PJ_ARRAY_SIZE(tiles); t++) {
        char params[128];
        snprintf(params, sizeof params, "variant=wgmma %s", tiles[t]);
        check(context, params, (shape){300, 264, 1000}, 1e-2);
        check(context, params, (shape){127, 136, 72}, 1e-2);
    }
    check(context, "variant=wgmma", (shape){8192, 8192, 1024}, 1e-2);
    /* Clusters of 2 row tiles sharing B: whole clusters, a half-empty last one (m of 1, 3 or
     * 5 row tiles), both outputs, one B box (split unevenly), one consumer. */
    static const char *const clustered[] = {"cluster=2", "cluster=2 out=f32 dtype=f16",
                                            "cluster=2 mma=m64n64k16 consumers=1 bm=64",
                                            "cluster=2 mma=m64n120k16 stages=4"};
    static const shape cluster_shapes[] = {{1, 8, 8}, {300, 264, 200}, {640, 520, 1000},
                                           {1024, 1024, 1024}};
    for (size_t t = 0; t < PJ_ARRAY_SIZE(clustered); t++)
        for (size_t s = 0; s < PJ_ARRAY_SIZE(cluster_shapes); s++) {
            char params[160];
            snprintf(params, sizeof params, "variant=wgmma %s", clustered[t]);
            check(context, params, cluster_shapes[s], 1e-2);
        }
    ptxjit_close(context);
}
END_TEST

START_TEST(matmul_refuses_shapes_it_cannot_take)
{
    ptxjit_context *context = test_gpu_context("matmul_refuses_shapes_it_cannot_take");
    if (!context)
        return;
    ptxjit_devptr buffer;
    ck_assert_int_eq(ptxjit_alloc(&buffer, context, 1 << 20), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_matmul(context, "", buffer, buffer + 4096, buffer + 8192, 16, 20, 16,
                                   NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "multiples of 8"));
    ck_assert_int_eq(ptxjit_matmul(context, "variant=tensor_core load=cp_async", buffer + 4, buffer + 4096,
                                   buffer + 8192, 16, 16, 16, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_free(context, buffer);
    ptxjit_close(context);
}
END_TEST

Suite *suite_matmul_gpu(void)
{
    Suite *suite = suite_create("matmul_gpu");
    TCase *tc = tcase_create("variants");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, matmul_simt_variants_any_shape);
    tcase_add_test(tc, matmul_simt_variants_4096);
    tcase_add_test(tc, matmul_tensor_core_shapes_and_tiles);
    tcase_add_test(tc, matmul_tensor_core_tma_shapes_and_tiles);
    tcase_add_test(tc, matmul_wgmma_shapes_types_and_tiles);
    tcase_add_test(tc, matmul_refuses_shapes_it_cannot_take);
    suite_add_tcase(suite, tc);
    return suite;
}

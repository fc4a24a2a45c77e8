/* test_matmul_gpu.c — every matmul variant on the GPU against a float64 CPU reference, fresh
 * random inputs, NaN-poisoned outputs, square and ragged shapes. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "families/matmul/fit.h"
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

/* The epilogue's values of a check: alpha, beta, the scales, and whether to pass a random bias
 * (the params say which are used; the others stay at their defaults). */
typedef struct {
    float alpha, beta, a_scale, b_scale;
    int bias;
} epilogue_case;

static const epilogue_case plain = {1.0f, 0.0f, 1.0f, 1.0f, 0};

/* Elements A, B and C start into their buffers (a matrix inside a larger one): 0, or 1 for
 * buffers that are aligned to their elements only. */
static size_t misalign;

/* Runs params on m x n x k: every element of C must be written and finite (poisoned with NaN
 * first; with beta=scaled, C holds random values the epilogue adds), sampled rows (all for
 * small products) within tolerance of the float64 product, as ‖C − ref‖ / ‖ref‖. B is given
 * as the params' layout says (K x N, or N x K for b_layout=nk); the reference applies the
 * epilogue of the params in float64. */
static void check_epilogue(ptxjit_context *context, const char *params, shape s,
                           double tolerance, epilogue_case ec)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK, "%s: %s",
                  params, ptxjit_last_error());
    ck_assert_int_eq(pj_matmul_config_of(&config, kernel), PTXJIT_OK);
    const size_t e = (size_t)pj_matmul_type_bytes(config.dtype), eo = (size_t)pj_dtype_bytes(config.out);
    void *a = malloc(s.m * s.k * e), *b = malloc(s.k * s.n * e), *c = malloc(s.m * s.n * eo);
    void *c_old = malloc(s.m * s.n * eo);
    float *bias = malloc(s.n * sizeof *bias);
    double *want = malloc(s.n * sizeof *want), *old_row = malloc(s.n * sizeof *old_row);
    ck_assert(a && b && c && c_old && bias && want && old_row);
    state ^= (uint64_t)time(NULL) ^ ((uint64_t)clock() << 17);
    for (size_t i = 0; i < s.m * s.k; i++)
        pj_matmul_set_element(a, config.dtype, i, next_uniform());
    for (size_t i = 0; i < s.k * s.n; i++)
        pj_matmul_set_element(b, config.dtype, i, next_uniform());
    for (size_t i = 0; i < s.n; i++)
        bias[i] = next_uniform();
    ptxjit_devptr da, db, dc, dbias = 0;
    ck_assert_int_eq(ptxjit_alloc(&da, context, (s.m * s.k + misalign) * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&db, context, (s.k * s.n + misalign) * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dc, context, (s.m * s.n + misalign) * eo), PTXJIT_OK);
    const ptxjit_devptr a_base = da, b_base = db, c_base = dc;
    da += misalign * e, db += misalign * e, dc += misalign * eo;
    ck_assert_int_eq(ptxjit_copy_to_device(context, da, a, s.m * s.k * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, db, b, s.k * s.n * e), PTXJIT_OK);
    if (ec.bias) {
        ck_assert_int_eq(ptxjit_alloc(&dbias, context, s.n * sizeof *bias), PTXJIT_OK);
        ck_assert_int_eq(ptxjit_copy_to_device(context, dbias, bias, s.n * sizeof *bias), PTXJIT_OK);
    }
    if (config.beta) /* values the epilogue reads */
        for (size_t i = 0; i < s.m * s.n; i++)
            pj_matmul_set_element(c_old, config.out, i, next_uniform());
    else
        memset(c_old, 0xff, s.m * s.n * eo); /* NaN in every type */
    ck_assert_int_eq(ptxjit_copy_to_device(context, dc, c_old, s.m * s.n * eo), PTXJIT_OK);
    ptxjit_matmul_epilogue epilogue = {ec.alpha, ec.beta, dbias, ec.a_scale, ec.b_scale};
    ptxjit_status status =
        ptxjit_matmul_ex(context, params, da, db, dc, s.m, s.n, s.k, &epilogue, NULL);
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
        pj_matmul_reference_row_layout(want, a, b, config.dtype, s.n, s.k, row, config.b_nk);
        for (size_t j = 0; j < s.n && config.beta; j++)
            old_row[j] = pj_matmul_element(c_old, config.out, row * s.n + j);
        pj_matmul_reference_epilogue(want, s.n, &config, &epilogue, old_row, bias);
        for (size_t j = 0; j < s.n; j++) {
            double delta = pj_matmul_element(c, config.out, row * s.n + j) - want[j];
            diff += delta * delta;
            norm += want[j] * want[j];
        }
    }
    /* A reference of zeros (relu of a negative 1 x 1 product) is compared absolutely. */
    double error = norm > 0 ? sqrt(diff / norm) : sqrt(diff);
    ck_assert_msg(error <= tolerance, "%s %zux%zux%zu: relative error %.3e over %.0e", params,
                  s.m, s.n, s.k, error, tolerance);
    ptxjit_free(context, a_base);
    ptxjit_free(context, b_base);
    ptxjit_free(context, c_base);
    if (dbias)
        ptxjit_free(context, dbias);
    free(a);
    free(b);
    free(c);
    free(c_old);
    free(bias);
    free(want);
    free(old_row);
}

static void check(ptxjit_context *context, const char *params, shape s, double tolerance)
{
    check_epilogue(context, params, s, tolerance, plain);
}

/* A request with its epilogue's values and tolerance. */
typedef struct {
    const char *params;
    epilogue_case values;
    double tolerance;
} epilogue_request;

/* Every request on every shape. */
static void check_requests(ptxjit_context *context, const epilogue_request *requests,
                           size_t count, const shape *shapes, size_t shape_count)
{
    for (size_t t = 0; t < count; t++)
        for (size_t i = 0; i < shape_count; i++)
            check_epilogue(context, requests[t].params, shapes[i], requests[t].tolerance,
                           requests[t].values);
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
        /* The default tile as written (a named tile word turns the shape's fit off). */
        check(context, "variant=wgmma sched=persistent", shapes[s], 1e-2);
        check(context, "variant=wgmma out=f32 sched=persistent", shapes[s], 1e-2);
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

/* The persistent schedule, TMA stores and B's transpose: fewer tiles than blocks, more (every
 * block loops, the ring of stages running on across tiles of few k steps), ragged edges, both
 * clusters, every output type. */
START_TEST(matmul_wgmma_persistent_and_tma_stores)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_persistent_and_tma_stores");
    if (!context)
        return;
    static const shape shapes[] = {{1, 8, 8}, {127, 136, 72}, {300, 264, 1000},
                                   {4096, 2048, 200}, {1000, 1032, 64}};
    static const char *const configs[] = {
        "sched=persistent", "store=tma", "sched=persistent store=tma",
        "sched=persistent store=tma out=f32 stages=2", "sched=persistent cluster=2",
        "sched=persistent store=tma cluster=2 mma=m64n128k16",
        "sched=persistent mma=m64n64k16 consumers=1 bm=64 stages=8 group=1",
        "sched=persistent store=tma dtype=f16 mma=m64n128k16 bm=256",
        "sched=persistent store=tma out=f16", "b_layout=nk",
        "b_layout=nk sched=persistent store=tma dtype=f16 out=f32 stages=2",
        "sched=persistent mma=m64n200k16 out=f32",
        /* C's boxes of 32 bytes (N = 112 of bf16) and 64 (N = 48 of f32, 96 of f16) */
        "store=tma mma=m64n112k16", "store=tma mma=m64n48k16 consumers=1 bm=64 out=f32",
        "store=tma mma=m64n96k16 out=f16 cluster=2"};
    for (size_t t = 0; t < PJ_ARRAY_SIZE(configs); t++)
        for (size_t i = 0; i < PJ_ARRAY_SIZE(shapes); i++) {
            char params[160];
            snprintf(params, sizeof params, "variant=wgmma %s", configs[t]);
            check(context, params, shapes[i], 1e-2);
        }
    ptxjit_close(context);
}
END_TEST

/* Ping-pong consumers (sched=pingpong): a block of one tile (the second consumer has none), of
 * an odd and an even count, ragged edges, every input type, both stores, a cluster, f32 C and
 * the full epilogue; each consumer passes over the other's stages in the ring. */
START_TEST(matmul_wgmma_pingpong_consumers)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_pingpong_consumers");
    if (!context)
        return;
    static const shape shapes[] = {{1, 8, 16}, {127, 136, 80}, {300, 264, 1008},
                                   {4096, 2048, 160}, {1000, 3000, 2000}};
    static const epilogue_request cases[] = {
        {"variant=wgmma_fp8 sched=pingpong mma=m64n176k16 stages=4", {1, 0, 0.5f, 4, 0}, 1e-2},
        {"variant=wgmma_fp8 sched=pingpong fp8=e5m2 out=f16 mma=m64n128k16 stages=6",
         {1, 0, 1, 1, 0}, 1e-2},
        {"variant=wgmma sched=pingpong mma=m64n128k16 stages=6", {1, 0, 1, 1, 0}, 1e-2},
        {"variant=wgmma sched=pingpong b_layout=nk dtype=f16 mma=m64n176k16 stages=4",
         {1, 0, 1, 1, 0}, 1e-2},
        {"variant=wgmma sched=pingpong out=f32 mma=m64n128k16 stages=3", {1, 0, 1, 1, 0}, 1e-2},
        {"variant=wgmma_fp8 sched=pingpong store=direct mma=m64n176k16 stages=5",
         {1, 0, 1, 1, 0}, 1e-2},
        {"variant=wgmma sched=pingpong cluster=2 mma=m64n128k16 stages=5", {1, 0, 1, 1, 0}, 1e-2},
        {"variant=wgmma_tf32 sched=pingpong mma=m64n128k16 stages=4", {1, 0, 1, 1, 0}, 2e-3},
        {"variant=wgmma_fp8 sched=pingpong alpha=scaled beta=scaled bias=column act=gelu "
         "mma=m64n176k16 stages=4",
         {0.5f, -2.0f, 0.5f, 0.25f, 1}, 1e-2},
    };
    check_requests(context, cases, PJ_ARRAY_SIZE(cases), shapes, PJ_ARRAY_SIZE(shapes));
    ptxjit_close(context);
}
END_TEST

/* fp8's fit on a product whose 128-row tiles make four waves of ping-pong and two of the
 * cooperative 128 x 224 on 132 SMs (pj_matmul_fit_two_waves; whatever it picks on this GPU's
 * SMs), ragged M and N, with either fp8 format: the tile the fit functions name, right. */
START_TEST(matmul_wgmma_fp8_fit_for_two_waves)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_fp8_fit_for_two_waves");
    if (!context)
        return;
    const shape shape = {1900, 3580, 160};
    static const char *const requests[] = {"variant=wgmma_fp8",
                                           "variant=wgmma_fp8 fp8=e5m2 out=f16"};
    const pj_matmul_fit_tile *want = pj_matmul_fit_two_waves(
        pj_matmul_fit_pingpong(shape.m, shape.n, 1, context->sm_count), shape.m, shape.n,
        context->sm_count);
    for (size_t r = 0; r < PJ_ARRAY_SIZE(requests); r++) {
        ptxjit_kernel *kernel;
        matmul_config config;
        const pj_matmul_fit_tile *chosen;
        ck_assert_int_eq(pj_matmul_fit(&kernel, &config, &chosen, context, requests[r], shape.m,
                                       shape.n, shape.k),
                         PTXJIT_OK);
        ck_assert_ptr_eq(chosen, want);
        check_epilogue(context, requests[r], shape, 1e-2, plain);
    }
    ptxjit_close(context);
}
END_TEST

/* tf32 through wgmma: f32 A and B (B given as its transpose), the tensor core's truncation to
 * tf32 (2e-3 of the float64 product), any output type, both schedules and stores. */
START_TEST(matmul_wgmma_tf32_shapes_and_tiles)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_tf32_shapes_and_tiles");
    if (!context)
        return;
    static const shape shapes[] = {{1, 8, 4}, {127, 136, 68}, {300, 264, 1000}, {4096, 2048, 100}};
    static const char *const configs[] = {
        "", "sched=persistent store=tma mma=m64n128k16", "mma=m64n128k16 stages=4", "out=bf16",
        "sched=persistent cluster=2 store=tma out=f16 mma=m64n128k16",
        "mma=m64n64k16 consumers=1 bm=64 stages=6 sched=persistent",
        "mma=m64n40k16 consumers=1 bm=64 store=tma"}; /* f32 C in 32-byte boxes */
    for (size_t t = 0; t < PJ_ARRAY_SIZE(configs); t++)
        for (size_t i = 0; i < PJ_ARRAY_SIZE(shapes); i++) {
            char params[160];
            snprintf(params, sizeof params, "variant=wgmma_tf32 %s", configs[t]);
            check(context, params, shapes[i], strstr(configs[t], "out=") ? 1e-2 : 2e-3);
        }
    ptxjit_close(context);
}
END_TEST

/* fp8 through wgmma: e4m3 and e5m2, per-tensor scales, every output type, against float64
 * products of the dequantized inputs. */
START_TEST(matmul_wgmma_fp8_types_scales_and_tiles)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_fp8_types_scales_and_tiles");
    if (!context)
        return;
    static const shape shapes[] = {{1, 8, 16}, {127, 136, 80}, {300, 264, 1008}, {4096, 2048, 160}};
    static const char *const configs[] = {
        "", "fp8=e5m2", "out=f32", "out=f16 fp8=e5m2", "sched=persistent store=tma",
        "sched=persistent store=tma out=f32 stages=2 cluster=2",
        "mma=m64n128k16 stages=5 sched=persistent", "mma=m64n64k16 consumers=1 bm=64",
        "mma=m64n112k16 stages=6 store=tma", /* the fit's 128 x 112: C in 32-byte boxes */
        "mma=m64n224k16 stages=3 store=tma"};
    const epilogue_case scaled = {1.0f, 0.0f, 0.5f, 4.0f, 0};
    for (size_t t = 0; t < PJ_ARRAY_SIZE(configs); t++)
        for (size_t i = 0; i < PJ_ARRAY_SIZE(shapes); i++) {
            char params[160];
            snprintf(params, sizeof params, "variant=wgmma_fp8 %s", configs[t]);
            check_epilogue(context, params, shapes[i], 1e-2, i % 2 ? scaled : plain);
        }
    ptxjit_close(context);
}
END_TEST

/* The fused epilogue: alpha, beta (C read), a bias per column, relu and gelu, alone and
 * together, through both stores, on every input type. */
START_TEST(matmul_wgmma_epilogue_terms)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_epilogue_terms");
    if (!context)
        return;
    static const shape shapes[] = {{127, 136, 80}, {300, 264, 1008}}; /* k: fp8's 16 too */
    static const epilogue_request cases[] = {
        {"variant=wgmma alpha=scaled", {-1.5f, 0.0f, 1.0f, 1.0f, 0}, 1e-2},
        {"variant=wgmma beta=scaled out=f32", {1.0f, 0.75f, 1.0f, 1.0f, 0}, 1e-2},
        {"variant=wgmma bias=column store=tma", {1.0f, 0.0f, 1.0f, 1.0f, 1}, 1e-2},
        {"variant=wgmma act=relu sched=persistent", {1.0f, 0.0f, 1.0f, 1.0f, 0}, 1e-2},
        {"variant=wgmma act=gelu out=f32", {1.0f, 0.0f, 1.0f, 1.0f, 0}, 1e-2},
        {"variant=wgmma alpha=scaled beta=scaled bias=column act=gelu sched=persistent store=tma",
         {0.5f, -2.0f, 1.0f, 1.0f, 1}, 1e-2},
        {"variant=wgmma alpha=scaled beta=scaled bias=column act=relu dtype=f16 out=f16 "
         "b_layout=nk",
         {2.0f, 1.0f, 1.0f, 1.0f, 1}, 1e-2},
        {"variant=wgmma_tf32 alpha=scaled beta=scaled bias=column act=gelu sched=persistent "
         "store=tma mma=m64n128k16",
         {0.25f, 0.5f, 1.0f, 1.0f, 1}, 2e-3},
        {"variant=wgmma_fp8 alpha=scaled beta=scaled bias=column act=relu out=f32 store=tma "
         "stages=2",
         {2.0f, -1.0f, 0.5f, 0.25f, 1}, 1e-2},
    };
    check_requests(context, cases, PJ_ARRAY_SIZE(cases), shapes, PJ_ARRAY_SIZE(shapes));
    ptxjit_close(context);
}
END_TEST

/* Epilogue values the params do not use are refused, naming the parameter that would use
 * them; bias=column needs a bias. */
START_TEST(matmul_ex_refuses_values_the_params_do_not_use)
{
    ptxjit_context *context = test_gpu_context("matmul_ex_refuses_values_the_params_do_not_use");
    if (!context)
        return;
    ptxjit_devptr buffer;
    ck_assert_int_eq(ptxjit_alloc(&buffer, context, 1 << 20), PTXJIT_OK);
    ptxjit_matmul_epilogue e;
    ptxjit_matmul_epilogue_init(&e);
    e.alpha = 2.0f;
    ck_assert_int_eq(ptxjit_matmul_ex(context, "", buffer, buffer + 65536, buffer + 131072, 64,
                                      64, 64, &e, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "alpha=scaled"));
    ptxjit_matmul_epilogue_init(&e);
    e.a_scale = 2.0f;
    ck_assert_int_eq(ptxjit_matmul_ex(context, "", buffer, buffer + 65536, buffer + 131072, 64,
                                      64, 64, &e, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "wgmma_fp8"));
    ck_assert_int_eq(ptxjit_matmul_ex(context, "bias=column", buffer, buffer + 65536,
                                      buffer + 131072, 64, 64, 64, NULL, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "bias"));
    ptxjit_matmul_epilogue_init(&e);
    e.beta = 1.0f;
    ck_assert_int_eq(ptxjit_matmul_ex(context, "variant=naive", buffer, buffer + 65536,
                                      buffer + 131072, 64, 64, 64, &e, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "beta=scaled"));
    ptxjit_free(context, buffer);
    ptxjit_close(context);
}
END_TEST

/* The wgmma variants take any m, n, k and buffers aligned to their elements only: what the TMA
 * cannot read or write is staged through padded copies (stage.h). Every dtype, both B
 * layouts, both stores, the epilogue; fixed ragged shapes and fresh random ones. */
START_TEST(matmul_wgmma_any_shape_and_alignment)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_any_shape_and_alignment");
    if (!context)
        return;
    static const shape shapes[] = {{1, 1, 1},     {55, 213, 15},   {7, 9, 33},
                                   {129, 257, 1023}, {300, 1001, 77}, {1000, 4097, 4095}};
    static const char *const requests[] = {
        "",
        "dtype=f16 out=f32 store=direct",
        "variant=wgmma b_layout=nk",
        "variant=wgmma_tf32",
        "variant=wgmma_fp8 out=f32",
        "variant=wgmma_fp8 fp8=e5m2",
        "alpha=scaled beta=scaled bias=column act=relu"};
    const epilogue_case full = {1.5f, 0.5f, 1.0f, 1.0f, 1};
    state ^= (uint64_t)time(NULL);
    for (size_t r = 0; r < PJ_ARRAY_SIZE(requests); r++) {
        const double tolerance = strstr(requests[r], "tf32") ? 2e-3 : 1e-2;
        const epilogue_case ec = strstr(requests[r], "bias") ? full : plain;
        for (misalign = 0; misalign < 2; misalign++) {
            for (size_t i = 0; i < PJ_ARRAY_SIZE(shapes); i++)
                check_epilogue(context, requests[r], shapes[i], tolerance, ec);
            shape random_shape = {1 + (size_t)((next_uniform() + 1) * 300),
                                  1 + (size_t)((next_uniform() + 1) * 300),
                                  1 + (size_t)((next_uniform() + 1) * 300)};
            check_epilogue(context, requests[r], random_shape, tolerance, ec);
        }
    }
    misalign = 0;
    ptxjit_close(context);
}
END_TEST

/* `ptxjit run matmul` with a bias (a random one, checked) on a ragged shape, and the plan
 * it names. */
START_TEST(cli_run_matmul_takes_a_bias_and_any_shape)
{
    ptxjit_context *context = test_gpu_context("cli_run_matmul_takes_a_bias_and_any_shape");
    if (!context)
        return;
    ptxjit_close(context);
    char *dir = test_mkdtemp(), *out = NULL;
    ck_assert_int_eq(test_run_cli(&out, dir, "", "run matmul bias=column act=relu m=127 n=213 "
                                  "k=77 runs=2", NULL), 0);
    ck_assert_msg(strstr(out, "bias=column") && strstr(out, " ok;"), "%s", out);
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* `ptxjit run matmul` with layouts: a ragged strided batch (rows and strides the TMA cannot
 * take, staged) with a bias and one B for all; a dense batch; a batch in rows of 16-byte units
 * (one launch, in place); one a SIMT variant runs product by product. Each checked against
 * float64, and C's gaps untouched. */
START_TEST(cli_run_matmul_takes_a_layout_and_a_bias)
{
    ptxjit_context *context = test_gpu_context("cli_run_matmul_takes_a_layout_and_a_bias");
    if (!context)
        return;
    ptxjit_close(context);
    static const struct {
        const char *args;
        int gaps;
    } runs[] = {
        {"run matmul bias=column m=130 n=200 k=72 batch=3 lda=75 ldb=203 ldc=210 stride_a=9999 "
         "stride_b=0 stride_c=27500 runs=2", 1},
        {"run matmul bias=column act=relu m=127 n=213 k=77 batch=5 runs=2", 0},
        {"run matmul m=130 n=200 k=72 batch=4 lda=80 ldb=208 ldc=216 runs=2", 1},
        {"run matmul variant=block_tiled_vectorized m=65 n=40 k=33 batch=2 lda=40 ldc=48 "
         "stride_c=4000 runs=2", 1},
    };
    char *dir = test_mkdtemp();
    for (size_t i = 0; i < PJ_ARRAY_SIZE(runs); i++) {
        char *out = NULL;
        ck_assert_msg(test_run_cli(&out, dir, "", runs[i].args, NULL) == 0, "%s: %s",
                      runs[i].args, out);
        ck_assert_msg(strstr(out, " (batch x m x n x k; lda=") && strstr(out, ": ok;") &&
                          (!runs[i].gaps || strstr(out, ", C's gaps untouched: ok;")),
                      "%s: %s", runs[i].args, out);
        free(out);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* `ptxjit bench matmul shapes=` with a strided batch (B x M x N x K) beside a single product:
 * ours checked against float64, and where cuBLAS is there its peer is the strided batched
 * call or cuBLASLt's batched algorithms. */
START_TEST(cli_bench_matmul_shapes_takes_a_strided_batch)
{
    ptxjit_context *context = test_gpu_context("cli_bench_matmul_shapes_takes_a_strided_batch");
    if (!context)
        return;
    ptxjit_close(context);
    char *dir = test_mkdtemp(), *out = NULL;
    ck_assert_int_eq(test_run_cli(&out, dir, "", "bench matmul shapes=4x256x192x64,100x72x40 "
                                  "rounds=3 runs=3", NULL), 0);
    ck_assert_msg(strstr(out, "matmul 4 x 256 x 192 x 64 (B x M x N x K") &&
                      strstr(out, "matmul 100 x 72 x 40 (M x N x K)") && !strstr(out, "WRONG") &&
                      strstr(out, "emptied before every timed run"),
                  "%s", out);
    if (!strstr(out, "cuBLAS not measured"))
        ck_assert_msg(strstr(out, "peer: cublasGemmStridedBatchedEx") ||
                          strstr(out, "peer: cuBLASLt"),
                      "%s", out);
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(matmul_refuses_shapes_it_cannot_take)
{
    ptxjit_context *context = test_gpu_context("matmul_refuses_shapes_it_cannot_take");
    if (!context)
        return;
    ptxjit_devptr buffer;
    ck_assert_int_eq(ptxjit_alloc(&buffer, context, 1 << 20), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_matmul(context, "variant=tensor_core load=cp_async", buffer + 4, buffer + 4096,
                                   buffer + 8192, 16, 16, 16, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_free(context, buffer);
    ptxjit_close(context);
}
END_TEST

/* Requests that leave the tile to the defaults get the smaller tile the shape needs (fit.c):
 * the op takes the tile pj_matmul_fit_choose names for this GPU (for fp8, as pj_matmul_fit_fp8
 * maps it), and the product is right for each tile, type and output, on ragged shapes. */
START_TEST(matmul_wgmma_tile_fits_the_shape)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_tile_fits_the_shape");
    if (!context)
        return;
    static const shape shapes[] = {{320, 8192, 80}, {700, 8192, 64},  {200, 8192, 80},
                                   {192, 8192, 64}, {120, 8192, 144}, {64, 1000, 272},
                                   {1, 8, 16}}; /* k: fp8's multiple of 16 */
    static const char *const requests[] = {"variant=wgmma", "variant=wgmma dtype=f16 out=f32",
                                           "variant=wgmma_tf32", "variant=wgmma_fp8 out=f32",
                                           "variant=wgmma bias=column act=relu",
                                           "variant=wgmma b_layout=nk"};
    for (size_t r = 0; r < PJ_ARRAY_SIZE(requests); r++)
        for (size_t i = 0; i < PJ_ARRAY_SIZE(shapes); i++) {
            ptxjit_kernel *kernel;
            matmul_config config;
            const pj_matmul_fit_tile *chosen;
            ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "matmul", requests[r], NULL),
                             PTXJIT_OK);
            ck_assert_int_eq(pj_matmul_config_of(&config, kernel), PTXJIT_OK);
            const pj_matmul_fit_tile *want = pj_matmul_fit_choose(
                shapes[i].m, shapes[i].n, config.bm, config.tile_n, context->sm_count);
            /* none of these shapes splits K; a decoding's product as dot products (K-major
             * B) or with its operands swapped */
            const pj_matmul_fit_tile *gemv =
                pj_matmul_fit_gemv(shapes[i].m, shapes[i].n,
                                   shapes[i].k * (uint64_t)pj_matmul_type_bytes(config.dtype),
                                   pj_matmul_type_bytes(config.dtype), config.b_nk);
            const pj_matmul_fit_tile *swapped =
                gemv ? NULL
                     : pj_matmul_fit_swap(shapes[i].m, shapes[i].n, context->sm_count,
                                          config.variant == MATMUL_WGMMA_FP8);
            if (gemv)
                want = gemv;
            else if (swapped)
                want = swapped;
            else if (config.variant == MATMUL_WGMMA_FP8)
                want = pj_matmul_fit_fp8(want, shapes[i].m, shapes[i].n, config.bm,
                                         config.tile_n, pj_dtype_bytes(config.out),
                                         context->sm_count);
            const int bm = want ? want->bm : config.bm, bn = want ? want->bn : config.tile_n;
            ck_assert_int_eq(pj_matmul_fit(&kernel, &config, &chosen, context, requests[r],
                                           shapes[i].m, shapes[i].n, shapes[i].k),
                             PTXJIT_OK);
            /* The tile chosen, with split-K's parts where its tiles are few. */
            ck_assert(gemv ? config.gemv : config.bm == bm && config.tile_n == bn);
            ck_assert(!chosen == !(want || config.splits > 1));
            const epilogue_case biased = {1.0f, 0.0f, 1.0f, 1.0f, 1};
            check_epilogue(context, requests[r], shapes[i],
                           strstr(requests[r], "tf32") ? 2e-3 : 1e-2,
                           strstr(requests[r], "bias") ? biased : plain);
        }
    ptxjit_close(context);
}
END_TEST

/* ---- leading dimensions and strided batches (ptxjit_matmul_strided) ---- */

/* Elements a batch's operand spans: `count` matrices of rows x cols, rows ld apart and
 * matrices stride apart (one matrix where stride is 0). */
static size_t span(size_t batch, size_t stride, size_t rows, size_t ld, size_t cols)
{
    return (stride ? batch - 1 : 0) * stride + (rows - 1) * ld + cols;
}

/* Product p's rows x cols matrix of a batch copied dense. */
static void *dense_copy(const void *src, pj_dtype type, size_t p, size_t stride, size_t rows,
                        size_t ld, size_t cols)
{
    const size_t e = (size_t)pj_matmul_type_bytes(type);
    unsigned char *out = malloc(rows * cols * e);
    ck_assert_ptr_nonnull(out);
    for (size_t r = 0; r < rows; r++)
        memcpy(out + r * cols * e, (const unsigned char *)src + (p * stride + r * ld) * e,
               cols * e);
    return out;
}

/* A batch of products on random operands (and random bytes in their gaps) into a C poisoned
 * everywhere (NaN): every product's C within tolerance of float64, and every element of C's
 * buffer outside the products (gaps between rows and matrices) left as it was. */
static void check_layout(ptxjit_context *context, const char *params, shape s,
                         const ptxjit_matmul_layout *layout, double tolerance, epilogue_case ec)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_int_eq(pj_matmul_config_of(&config, kernel), PTXJIT_OK);
    const pj_dtype in = config.dtype, out = config.out;
    const size_t e = (size_t)pj_matmul_type_bytes(in), eo = (size_t)pj_dtype_bytes(out);
    /* batch 0 (ptxjit_matmul_layout_init's) is one product, as the op reads it */
    const size_t batch = layout->batch ? layout->batch : 1, b_rows = config.b_nk ? s.n : s.k,
                 b_cols = config.b_nk ? s.k : s.n;
    const size_t na = span(batch, layout->stride_a, s.m, layout->lda, s.k),
                 nb = span(batch, layout->stride_b, b_rows, layout->ldb, b_cols),
                 nc = span(batch, layout->stride_c, s.m, layout->ldc, s.n);
    unsigned char *a = malloc(na * e), *b = malloc(nb * e), *c = malloc(nc * eo),
                  *c_old = malloc(nc * eo);
    float *bias = malloc(s.n * sizeof *bias);
    double *want = malloc(s.n * sizeof *want), *old_row = malloc(s.n * sizeof *old_row);
    ck_assert(a && b && c && c_old && bias && want && old_row);
    state ^= (uint64_t)time(NULL) ^ ((uint64_t)clock() << 17);
    for (size_t i = 0; i < na; i++)
        pj_matmul_set_element(a, in, i, next_uniform());
    for (size_t i = 0; i < nb; i++)
        pj_matmul_set_element(b, in, i, next_uniform());
    for (size_t i = 0; i < s.n; i++)
        bias[i] = next_uniform();
    memset(c_old, 0xff, nc * eo); /* NaN in every type, gaps included */
    if (config.beta) /* values the epilogue reads, in the products' elements */
        for (size_t p = 0; p < batch; p++)
            for (size_t r = 0; r < s.m; r++)
                for (size_t j = 0; j < s.n; j++)
                    pj_matmul_set_element(c_old, out, p * layout->stride_c + r * layout->ldc + j,
                                          next_uniform());
    ptxjit_devptr da, db, dc, dbias = 0;
    ck_assert_int_eq(ptxjit_alloc(&da, context, na * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&db, context, nb * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dc, context, nc * eo), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, da, a, na * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, db, b, nb * e), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, dc, c_old, nc * eo), PTXJIT_OK);
    if (ec.bias) {
        ck_assert_int_eq(ptxjit_alloc(&dbias, context, s.n * sizeof *bias), PTXJIT_OK);
        ck_assert_int_eq(ptxjit_copy_to_device(context, dbias, bias, s.n * sizeof *bias),
                         PTXJIT_OK);
    }
    ptxjit_matmul_epilogue epilogue = {ec.alpha, ec.beta, dbias, ec.a_scale, ec.b_scale};
    ptxjit_status status = ptxjit_matmul_strided(context, params, da, db, dc, s.m, s.n, s.k,
                                                 layout, &epilogue, NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s %zu x %zux%zux%zu: %s", params, batch, s.m, s.n, s.k,
                  ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(context, c, dc, nc * eo), PTXJIT_OK);
    /* Outside the products: untouched bytes. Inside: written (finite) and right. */
    unsigned char *inside = calloc(nc, 1);
    ck_assert_ptr_nonnull(inside);
    for (size_t p = 0; p < batch; p++)
        for (size_t r = 0; r < s.m; r++)
            memset(inside + p * layout->stride_c + r * layout->ldc, 1, s.n);
    size_t clobbered = 0;
    while (clobbered < nc && (inside[clobbered] ||
                              memcmp(c + clobbered * eo, c_old + clobbered * eo, eo) == 0))
        clobbered++;
    ck_assert_msg(clobbered == nc, "%s: element %zu of C's buffer, outside every product, was "
                  "written", params, clobbered);
    double diff = 0, norm = 0;
    for (size_t p = 0; p < batch; p++) {
        void *ap = dense_copy(a, in, p, layout->stride_a, s.m, layout->lda, s.k);
        void *bp = dense_copy(b, in, p, layout->stride_b, b_rows, layout->ldb, b_cols);
        for (size_t r = 0; r < s.m; r++) {
            const size_t at = p * layout->stride_c + r * layout->ldc;
            pj_matmul_reference_row_layout(want, ap, bp, in, s.n, s.k, r, config.b_nk);
            for (size_t j = 0; j < s.n && config.beta; j++)
                old_row[j] = pj_matmul_element(c_old, out, at + j);
            pj_matmul_reference_epilogue(want, s.n, &config, &epilogue, old_row, bias);
            for (size_t j = 0; j < s.n; j++) {
                const double got = pj_matmul_element(c, out, at + j);
                ck_assert_msg(isfinite(got), "%s: product %zu C[%zu][%zu] not written", params,
                              p, r, j);
                diff += (got - want[j]) * (got - want[j]);
                norm += want[j] * want[j];
            }
        }
        free(ap);
        free(bp);
    }
    const double error = norm > 0 ? sqrt(diff / norm) : sqrt(diff);
    ck_assert_msg(error <= tolerance, "%s %zu x %zux%zux%zu (ld %zu %zu %zu, strides %zu %zu "
                  "%zu): relative error %.3e over %.0e", params, batch, s.m, s.n, s.k,
                  layout->lda, layout->ldb, layout->ldc, layout->stride_a, layout->stride_b,
                  layout->stride_c, error, tolerance);
    ptxjit_free(context, da);
    ptxjit_free(context, db);
    ptxjit_free(context, dc);
    if (dbias)
        ptxjit_free(context, dbias);
    free(a), free(b), free(c), free(c_old), free(bias), free(want), free(old_row), free(inside);
}

/* The layouts of a test: dense batches; padded rows of 16-byte units, a shared B; rows and
 * strides the TMA cannot take (staged); one product inside larger matrices. For B's and
 * C's rows, ld is given past the row's length (b_cols, n). */
static void check_layouts(ptxjit_context *context, const char *params, shape s,
                          double tolerance, epilogue_case ec)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_int_eq(pj_matmul_config_of(&config, kernel), PTXJIT_OK);
    const int b_nk = config.b_nk;
    const size_t b_rows = b_nk ? s.n : s.k, b_cols = b_nk ? s.k : s.n;
    const struct {
        size_t batch, a_pad, b_pad, c_pad, a_gap, b_gap, c_gap;
        int shared_b;
    } cases[] = {
        {3, 0, 0, 0, 0, 0, 0, 0},   /* dense, contiguous */
        {4, 8, 16, 24, 64, 0, 32, 1}, /* 16-byte units (bf16), B shared */
        {2, 1, 3, 5, 7, 9, 11, 0},  /* odd: staged */
        {1, 40, 8, 16, 0, 0, 0, 0}, /* inside larger matrices */
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        ptxjit_matmul_layout l;
        ptxjit_matmul_layout_init(&l);
        l.lda = s.k + cases[i].a_pad, l.ldb = b_cols + cases[i].b_pad, l.ldc = s.n + cases[i].c_pad;
        l.batch = cases[i].batch;
        l.stride_a = s.m * l.lda + cases[i].a_gap;
        l.stride_b = cases[i].shared_b ? 0 : b_rows * l.ldb + cases[i].b_gap;
        l.stride_c = s.m * l.ldc + cases[i].c_gap;
        check_layout(context, params, s, &l, tolerance, ec);
    }
}

START_TEST(matmul_strided_batches_and_leading_dimensions)
{
    ptxjit_context *context = test_gpu_context("matmul_strided_batches_and_leading_dimensions");
    if (!context)
        return;
    static const shape shapes[] = {{130, 200, 72}, {1, 8, 16}, {64, 256, 128}};
    static const char *const requests[] = {
        "", "store=direct", "variant=wgmma b_layout=nk", "variant=wgmma_tf32",
        "variant=wgmma_fp8 out=f32", "alpha=scaled beta=scaled bias=column act=relu",
        "variant=block_tiled_vectorized", "variant=tensor_core load=tma",
        "variant=wgmma_fp8 sched=pingpong mma=m64n176k16 stages=4"};
    const epilogue_case full = {1.5f, 0.5f, 1.0f, 1.0f, 1};
    for (size_t r = 0; r < PJ_ARRAY_SIZE(requests); r++) {
        const double tolerance = strstr(requests[r], "tf32") || strstr(requests[r], "tensor_core")
                                     ? 2e-3 : strstr(requests[r], "block") ? 1e-5 : 1e-2;
        for (size_t i = 0; i < PJ_ARRAY_SIZE(shapes); i++) {
            /* tensor_core needs k and n multiples of 4 */
            if (strstr(requests[r], "tensor_core") && (shapes[i].n % 4 || shapes[i].k % 4))
                continue;
            check_layouts(context, requests[r], shapes[i], tolerance,
                          strstr(requests[r], "bias") ? full : plain);
        }
    }
    ptxjit_close(context);
}
END_TEST

/* One product of shape s in rows lda, ldb and ldc elements apart, the full epilogue. */
static void check_in_rows(ptxjit_context *context, const char *params, shape s, size_t lda,
                          size_t ldb, size_t ldc)
{
    const epilogue_case full = {1.5f, 0.5f, 1.0f, 1.0f, 1};
    ptxjit_matmul_layout l;
    ptxjit_matmul_layout_init(&l);
    l.lda = lda, l.ldb = ldb, l.ldc = ldc;
    check_layout(context, params, s, &l, 1e-2, full);
}

/* A product on random operands, its epilogue's values full (alpha, beta, bias) or plain. */
typedef struct {
    const char *params;
    shape s;
    double tolerance;
    int full_epilogue;
} epilogue_row;

/* Each row run twice: split-K's arrival counts are left at zero for the next launch. */
static void check_rows_twice(ptxjit_context *context, const epilogue_row *rows, size_t count)
{
    const epilogue_case full = {1.5f, 0.5f, 1.0f, 1.0f, 1};
    for (size_t i = 0; i < count; i++)
        for (int run = 0; run < 2; run++)
            check_epilogue(context, rows[i].params, rows[i].s, rows[i].tolerance,
                           rows[i].full_epilogue ? full : plain);
}

/* Split-K: a tile's K loop in parts whose fp32 sums the last part adds. Decoding's rows and
 * fp8's 64 x 32 tiles (the fit's choices), parts of unequal length (16 k tiles in 5 parts run
 * as 4 x 4), a ragged K, every wgmma type, the full epilogue applied once on the added sums,
 * both stores, a strided batch, and each product run twice (the arrival counts left at zero
 * for the next launch). */
START_TEST(matmul_wgmma_split_k_parts_add_up)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_split_k_parts_add_up");
    if (!context)
        return;
    static const epilogue_row cases[] = {
        {"", {1, 4096, 4096}, 1e-2, 0},
        {"", {16, 4096, 4096}, 1e-2, 0},
        {"splits=5", {3, 1000, 1000}, 1e-2, 0},
        {"splits=3 store=direct", {130, 200, 1000}, 1e-2, 0},
        {"bm=64 consumers=1 mma=m64n128k16 splits=16", {64, 256, 4095}, 1e-2, 0},
        {"alpha=scaled beta=scaled bias=column act=gelu splits=4", {20, 264, 1008}, 1e-2, 1},
        {"alpha=scaled beta=scaled bias=column act=relu splits=6 store=direct out=f32",
         {70, 136, 2000}, 1e-2, 1},
        {"variant=wgmma_tf32 splits=4", {5, 300, 512}, 2e-3, 0},
        {"variant=wgmma_fp8 out=f32 splits=4", {7, 264, 1024}, 1e-2, 0},
        /* fp8's fit: 64 x 32 in 2 parts (ragged M, N and K); 64 x 32 in 3, f32 C */
        {"variant=wgmma_fp8", {100, 1000, 2000}, 1e-2, 0},
        {"variant=wgmma_fp8 bm=64 consumers=1 mma=m64n32k16 stages=16 splits=3 store=direct "
         "out=f32 alpha=scaled beta=scaled bias=column",
         {96, 200, 1552}, 1e-2, 1},
        {"sched=grid splits=2", {33, 520, 300}, 1e-2, 0},
    };
    check_rows_twice(context, cases, PJ_ARRAY_SIZE(cases));
    check_layouts(context, "splits=3", (shape){16, 200, 520}, 1e-2, plain);
    /* An odd N in 16-byte rows of C (store=direct: its last column is added and stored alone;
     * store=tma: C staged in padded rows), every epilogue term included. */
    static const struct {
        const char *params;
        size_t ldc;
    } odd[] = {
        {"splits=4 store=tma alpha=scaled beta=scaled bias=column act=gelu", 208},
        /* 128 x 128: a 128 x 256 tile of f32 C beside three stages is past shared memory */
        {"splits=3 store=tma mma=m64n128k16 alpha=scaled beta=scaled bias=column out=f32", 204},
        {"splits=2 dtype=f16 out=f16 alpha=scaled beta=scaled bias=column", 208},
        {"splits=5 store=direct alpha=scaled beta=scaled bias=column", 201},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(odd); i++)
        check_in_rows(context, odd[i].params, (shape){3, 201, 1000}, 1000, 201, odd[i].ldc);
    ptxjit_close(context);
}
END_TEST

/* An odd N in rows of C that are whole 16-byte units: store=tma's TMA wrote the element past
 * such a row on the H200, so the op computes C in padded rows and copies back N columns;
 * nothing past N written, every epilogue term landed. */
START_TEST(matmul_wgmma_odd_n_in_aligned_rows)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_odd_n_in_aligned_rows");
    if (!context)
        return;
    static const struct {
        const char *params;
        size_t ldc;
    } cases[] = {
        {"store=tma alpha=scaled beta=scaled bias=column act=gelu", 208},
        {"store=tma mma=m64n128k16 alpha=scaled beta=scaled bias=column out=f32", 204},
        {"store=tma dtype=f16 out=f16 alpha=scaled beta=scaled bias=column", 208},
        {"variant=wgmma_fp8 store=tma alpha=scaled beta=scaled bias=column", 208},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++)
        check_in_rows(context, cases[i].params, (shape){70, 201, 1000}, 1024,
                      strstr(cases[i].params, "fp8") ? 1024 : 208, cases[i].ldc);
    ptxjit_close(context);
}
END_TEST

/* swap=1: the kernel computes C's transpose, A's rows on wgmma's N side: one row and odd row
 * counts (a last column of the transposed tile stored alone), split-K's parts, every epilogue
 * term (the bias runs along the kernel's rows), each wgmma type, and the layouts (C's rows at
 * any pitch: its stores are single elements, nothing staged for them). */
START_TEST(matmul_wgmma_swapped_operands)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_swapped_operands");
    if (!context)
        return;
    const epilogue_case full = {1.5f, 0.5f, 1.0f, 1.0f, 1};
    static const epilogue_row cases[] = {
        {"variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n8k16 stages=16", {1, 4096, 4096},
         1e-2, 0},
        {"variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n16k16 stages=16 splits=2",
         {16, 4096, 4096}, 1e-2, 0},
        {"variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n8k16 splits=3 alpha=scaled "
         "beta=scaled bias=column act=relu", {5, 1000, 1000}, 1e-2, 1},
        {"variant=wgmma_fp8 swap=1 mma=m64n32k16 out=f32 alpha=scaled beta=scaled bias=column "
         "act=gelu", {33, 264, 1024}, 1e-2, 1},
        {"variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n8k16 sched=grid splits=2",
         {9, 520, 300}, 1e-2, 0},
        {"variant=wgmma b_layout=nk swap=1 mma=m64n24k16 alpha=scaled beta=scaled bias=column",
         {21, 200, 520}, 1e-2, 1},
        {"variant=wgmma b_layout=nk swap=1 dtype=f16 out=f16 bm=64 consumers=1 mma=m64n64k16",
         {100, 130, 264}, 1e-2, 0},
        {"variant=wgmma_tf32 swap=1 bm=64 consumers=1 mma=m64n16k16 splits=2", {7, 300, 512},
         2e-3, 0},
        /* B given K x N: read M-major through wgmma's transposed A */
        {"variant=wgmma swap=1 bm=64 consumers=1 mma=m64n16k16 stages=16", {16, 4096, 4096},
         1e-2, 0},
        {"variant=wgmma swap=1 bm=64 consumers=1 mma=m64n8k16 dtype=f16 out=f32 splits=3 "
         "alpha=scaled beta=scaled bias=column act=gelu", {5, 1000, 1000}, 1e-2, 1},
        {"variant=wgmma swap=1 mma=m64n32k16 stages=8", {33, 264, 520}, 1e-2, 0},
        {"variant=wgmma swap=1 bm=64 consumers=1 mma=m64n32k16 sched=grid", {100, 130, 264},
         1e-2, 0},
    };
    check_rows_twice(context, cases, PJ_ARRAY_SIZE(cases));
    check_layouts(context, "variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n16k16 out=f32",
                  (shape){16, 200, 520}, 1e-2, plain);
    check_layouts(context, "variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n8k16 splits=2 "
                  "alpha=scaled beta=scaled bias=column", (shape){3, 136, 1000}, 1e-2, full);
    check_layouts(context, "variant=wgmma swap=1 bm=64 consumers=1 mma=m64n16k16 splits=2",
                  (shape){16, 200, 520}, 1e-2, plain);
    check_in_rows(context, "variant=wgmma_fp8 swap=1 bm=64 consumers=1 mma=m64n8k16 "
                  "alpha=scaled beta=scaled bias=column",
                  (shape){3, 201, 1000}, 1000, 1000, 203);
    ptxjit_close(context);
}
END_TEST

/* sched=gemv, mma.sync on 16 columns of C a block: one row, two, 5 and 9, 12 and 16 (a group
 * of 8 and of 16), 17 and 33 (B read again past 16), K ending inside a 128-byte step, inside a
 * lane's 32 bytes and inside a 16-byte piece, K long enough for the two-step loads of the four
 * warps, N odd (C written in place), under 16 and not a multiple of 16, every input type and
 * the epilogue's terms; strided batches with B shared or not, odd leading dimensions (A and B
 * staged), rows inside larger ones with random values past K. */
START_TEST(matmul_wgmma_gemv_columns)
{
    ptxjit_context *context = test_gpu_context("matmul_wgmma_gemv_columns");
    if (!context)
        return;
    const epilogue_case full = {1.5f, 0.5f, 1.0f, 1.0f, 1};
    static const epilogue_row cases[] = {
        {"variant=wgmma_fp8 sched=gemv", {1, 4096, 4096}, 1e-2, 0},
        {"variant=wgmma_fp8 sched=gemv", {2, 1000, 4095}, 1e-2, 0},
        {"variant=wgmma_fp8 sched=gemv fp8=e5m2 out=f32", {3, 257, 1000}, 1e-2, 0},
        {"variant=wgmma_fp8 sched=gemv alpha=scaled beta=scaled bias=column act=relu",
         {5, 1001, 520}, 1e-2, 1},
        {"variant=wgmma_fp8 sched=gemv out=f16 alpha=scaled beta=scaled bias=column act=gelu",
         {9, 300, 17}, 1e-2, 1},
        {"variant=wgmma sched=gemv", {1, 4096, 4096}, 1e-2, 0},
        {"variant=wgmma sched=gemv dtype=f16 out=f32 alpha=scaled beta=scaled bias=column",
         {4, 333, 1027}, 1e-2, 1},
        {"variant=wgmma_tf32 sched=gemv", {2, 130, 999}, 2e-3, 0},
        {"variant=wgmma_tf32 sched=gemv out=bf16 alpha=scaled beta=scaled bias=column act=gelu",
         {7, 64, 3}, 1e-2, 1},
        {"variant=wgmma_fp8 sched=gemv", {17, 100, 200}, 1e-2, 0},
        {"variant=wgmma_fp8 sched=gemv", {16, 40, 300}, 1e-2, 0},
        {"variant=wgmma sched=gemv", {12, 7, 130}, 1e-2, 0},
        {"variant=wgmma_fp8 sched=gemv fp8=e5m2", {1, 5, 64}, 1e-2, 0},
        {"variant=wgmma_fp8 sched=gemv", {3, 4096, 8192}, 1e-2, 0},
        /* K of whole two-step batches of the four warps and one step past them (128-byte
         * steps), and a step past them with two bytes of a third */
        {"variant=wgmma_fp8 sched=gemv", {2, 70, 1024}, 1e-2, 0},
        {"variant=wgmma_fp8 sched=gemv", {2, 70, 1152}, 1e-2, 0},
        {"variant=wgmma sched=gemv", {8, 33, 577}, 1e-2, 0},
        {"variant=wgmma sched=gemv alpha=scaled beta=scaled bias=column", {33, 48, 2000}, 1e-2,
         1},
    };
    check_rows_twice(context, cases, PJ_ARRAY_SIZE(cases));
    check_layouts(context, "variant=wgmma_fp8 sched=gemv out=f32", (shape){3, 200, 520}, 1e-2,
                  plain);
    check_layouts(context, "variant=wgmma sched=gemv alpha=scaled beta=scaled bias=column",
                  (shape){6, 136, 1000}, 1e-2, full);
    check_in_rows(context, "variant=wgmma_fp8 sched=gemv alpha=scaled beta=scaled bias=column",
                  (shape){3, 201, 1000}, 1008, 1024, 203);
    ptxjit_close(context);
}
END_TEST

/* The llvm backend's wgmma kernel, launched once per product, on the same layouts. */
START_TEST(matmul_strided_batches_through_the_llvm_backend)
{
    if (!test_llvm_or_skip("matmul_strided_batches_through_the_llvm_backend"))
        return;
    ptxjit_context *context =
        test_gpu_context("matmul_strided_batches_through_the_llvm_backend");
    if (!context)
        return;
    check_layouts(context, "variant=wgmma backend=llvm", (shape){130, 200, 72}, 1e-2, plain);
    ptxjit_close(context);
}
END_TEST

/* The op's staging copy (matmul_stage_rows, in every matmul module) on its own: every pair of
 * source and destination offsets within 16 bytes, widths below, at and past 16-byte units and
 * past one block's 128 pieces, two matrices a stride apart (one block row for both, or one
 * each); each destination byte outside the rows keeps its poison, a value no source byte has. */
static void check_stage_rows(ptxjit_context *context, const char *params, uint64_t seed)
{
    enum { BYTES = 1 << 16, POISON = 0xa5 };
    static const size_t widths[] = {1, 3, 15, 16, 17, 31, 48, 95, 200, 1021, 2047, 5000};
    ptxjit_kernel *kernel = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "matmul", params, NULL), PTXJIT_OK);
    unsigned char *src = malloc(BYTES), *want = malloc(BYTES), *got = malloc(BYTES);
    ck_assert(src && want && got);
    ptxjit_devptr d_src = 0, d_dst = 0;
    ck_assert_int_eq(ptxjit_alloc(&d_src, context, BYTES), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&d_dst, context, BYTES), PTXJIT_OK);
    for (size_t i = 0; i < BYTES; i++) {
        src[i] = (unsigned char)(next_uniform() * 127 + 128);
        src[i] = src[i] == POISON ? POISON ^ 0xff : src[i];
    }
    ck_assert_int_eq(ptxjit_copy_to_device(context, d_src, src, BYTES), PTXJIT_OK);
    int cases = 0;
    for (unsigned long long to = 0; to < 16; to++)
        for (unsigned long long from = 0; from < 16; from++, cases++) {
            const unsigned long long width = widths[(to * 16 + from) % PJ_ARRAY_SIZE(widths)];
            const unsigned long long rows = 3 + from % 2, count = 2;
            const unsigned long long dst_pitch = width + (to * 7 + from) % 19;
            const unsigned long long src_pitch = width + (from * 5 + to) % 23;
            const unsigned long long dst_stride = rows * dst_pitch + to;
            const unsigned long long src_stride = rows * src_pitch + 3 * from;
            memset(want, POISON, BYTES);
            for (size_t m = 0; m < count; m++)
                for (size_t r = 0; r < rows; r++)
                    memcpy(want + to + m * dst_stride + r * dst_pitch,
                           src + from + m * src_stride + r * src_pitch, width);
            memset(got, POISON, BYTES);
            ck_assert_int_eq(ptxjit_copy_to_device(context, d_dst, got, BYTES), PTXJIT_OK);
            unsigned long long values[9] = {d_dst + to, d_src + from, width, rows, count,
                                            dst_pitch, dst_stride, src_pitch, src_stride};
            void *args[9];
            for (int i = 0; i < 9; i++)
                args[i] = &values[i];
            const ptxjit_dim3 grid = {(unsigned)((width / 16 + 2 + 127) / 128), 2,
                                      (unsigned)(1 + to % 2)};
            ck_assert_int_eq(ptxjit_launch(kernel, "matmul_stage_rows", grid,
                                           (ptxjit_dim3){128, 1, 1}, 0, NULL, args),
                             PTXJIT_OK);
            ck_assert_int_eq(ptxjit_copy_to_host(context, got, d_dst, BYTES), PTXJIT_OK);
            for (size_t i = 0; i < BYTES; i++)
                ck_assert_msg(got[i] == want[i], "%s: stage_rows offsets %llu <- %llu, width "
                              "%llu (seed %llu): byte %zu is %u, not %u", params, to, from,
                              width, (unsigned long long)seed, i, got[i], want[i]);
        }
    printf("%s: matmul_stage_rows right in %d cases of offsets and widths\n", params, cases);
    ck_assert_int_eq(ptxjit_free(context, d_src), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_free(context, d_dst), PTXJIT_OK);
    free(src);
    free(want);
    free(got);
}

START_TEST(matmul_stage_rows_copies_any_alignment)
{
    ptxjit_context *context = test_gpu_context("matmul_stage_rows_copies_any_alignment");
    if (!context)
        return;
    state ^= (uint64_t)time(NULL);
    const uint64_t seed = state;
    check_stage_rows(context, "variant=naive", seed);
    check_stage_rows(context, "variant=wgmma_fp8", seed);
    if (test_llvm_or_skip("matmul_stage_rows_copies_any_alignment (llvm)"))
        check_stage_rows(context, "variant=naive backend=llvm", seed);
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
    tcase_add_test(tc, matmul_wgmma_any_shape_and_alignment);
    tcase_add_test(tc, cli_run_matmul_takes_a_bias_and_any_shape);
    tcase_add_test(tc, cli_run_matmul_takes_a_layout_and_a_bias);
    tcase_add_test(tc, cli_bench_matmul_shapes_takes_a_strided_batch);
    tcase_add_test(tc, matmul_refuses_shapes_it_cannot_take);
    tcase_add_test(tc, matmul_stage_rows_copies_any_alignment);
    suite_add_tcase(suite, tc);
    /* The wgmma variants beyond the write-up's kernel (CK_RUN_CASE=wgmma runs them alone). */
    TCase *wgmma = tcase_create("wgmma");
    tcase_set_timeout(wgmma, 300);
    tcase_add_test(wgmma, matmul_wgmma_persistent_and_tma_stores);
    tcase_add_test(wgmma, matmul_wgmma_pingpong_consumers);
    tcase_add_test(wgmma, matmul_wgmma_fp8_fit_for_two_waves);
    tcase_add_test(wgmma, matmul_wgmma_tf32_shapes_and_tiles);
    tcase_add_test(wgmma, matmul_wgmma_fp8_types_scales_and_tiles);
    tcase_add_test(wgmma, matmul_wgmma_epilogue_terms);
    tcase_add_test(wgmma, matmul_ex_refuses_values_the_params_do_not_use);
    tcase_add_test(wgmma, matmul_wgmma_tile_fits_the_shape);
    tcase_add_test(wgmma, matmul_strided_batches_and_leading_dimensions);
    tcase_add_test(wgmma, matmul_strided_batches_through_the_llvm_backend);
    tcase_add_test(wgmma, matmul_wgmma_split_k_parts_add_up);
    tcase_add_test(wgmma, matmul_wgmma_odd_n_in_aligned_rows);
    tcase_add_test(wgmma, matmul_wgmma_swapped_operands);
    suite_add_tcase(suite, wgmma);
    TCase *gemv = tcase_create("gemv");
    tcase_set_timeout(gemv, 300);
    tcase_add_test(gemv, matmul_wgmma_gemv_columns);
    suite_add_tcase(suite, gemv);
    return suite;
}

/* test_llvm_gpu.c — LLVM-generated matmul kernels against the NVRTC-compiled template on the
 * GPU, both launched by the same host op on the same fresh random inputs: every variant the
 * generator builds on tiny, ragged and square shapes, into NaN-poisoned outputs. Each result
 * must be within the family's tolerance of a float64 product (‖C − ref‖ / ‖ref‖: fp32 1e-5,
 * tf32 1e-3, bf16/f16 1e-2); and each kernel must get the template kernel's shared memory and
 * thread limit, and local memory only where the template's has some. Skips where no GPU is
 * usable. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "families/matmul/op.h"
#include "test_util.h"

/* One product's inputs on both sides and its float64 reference. The device buffers have 16
 * spare bytes, so that the matrices can start `shift` bytes in (misaligned for vectors). */
typedef struct {
    ptxjit_context *context;
    size_t m, n, k, shift;
    pj_dtype dtype;
    void *a, *b, *c; /* host: the inputs and a result (room for f32) */
    double *reference;
    ptxjit_devptr da, db, dc;
} product;

static uint64_t random_state;

static float next_uniform(void) /* [-1, 1) */
{
    random_state ^= random_state << 13, random_state ^= random_state >> 7,
        random_state ^= random_state << 17;
    return (float)((double)(random_state >> 11) * 0x1.0p-52 - 1.0);
}

static void product_upload(product *p)
{
    size_t e = (size_t)pj_dtype_bytes(p->dtype);
    ck_assert_int_eq(ptxjit_copy_to_device(p->context, p->da + p->shift, p->a, p->m * p->k * e),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(p->context, p->db + p->shift, p->b, p->k * p->n * e),
                     PTXJIT_OK);
}

static void product_make(product *p, ptxjit_context *context, size_t m, size_t n, size_t k,
                         pj_dtype dtype)
{
    *p = (product){context, m, n, k, 0, dtype, NULL, NULL, NULL, NULL, 0, 0, 0};
    size_t e = (size_t)pj_dtype_bytes(dtype);
    p->a = malloc(m * k * e);
    p->b = malloc(k * n * e);
    p->c = malloc(m * n * 4);
    p->reference = malloc(m * n * sizeof *p->reference);
    ck_assert(p->a && p->b && p->c && p->reference);
    random_state ^= (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20) ^ 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < m * k; i++)
        pj_matmul_set_element(p->a, dtype, i, next_uniform());
    for (size_t i = 0; i < k * n; i++)
        pj_matmul_set_element(p->b, dtype, i, next_uniform());
    for (size_t row = 0; row < m; row++)
        pj_matmul_reference_row(p->reference + row * n, p->a, p->b, dtype, n, k, row);
    ck_assert_int_eq(ptxjit_alloc(&p->da, context, m * k * e + 16), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&p->db, context, k * n * e + 16), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&p->dc, context, m * n * 4 + 16), PTXJIT_OK);
    product_upload(p);
}

/* The matrices `shift` bytes into their buffers from now on. */
static void product_shift(product *p, size_t shift)
{
    p->shift = shift;
    product_upload(p);
}

static void product_free(product *p)
{
    ptxjit_free(p->context, p->da);
    ptxjit_free(p->context, p->db);
    ptxjit_free(p->context, p->dc);
    free(p->a);
    free(p->b);
    free(p->c);
    free(p->reference);
}

static double tolerance_of(const matmul_config *config)
{
    return config->dtype != PJ_DTYPE_f32                 ? 1e-2
           : config->variant == MATMUL_TENSOR_CORE ? 1e-3
                                                   : 1e-5;
}

/* Runs params into a NaN-poisoned C and leaves the result in p->c; every element must be
 * written. Returns the relative error against the reference. */
static double run(product *p, const char *params, matmul_config *config)
{
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, p->context, "matmul", params, NULL) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_int_eq(pj_matmul_config_of(config, kernel), PTXJIT_OK);
    const size_t count = p->m * p->n, bytes = count * (size_t)pj_dtype_bytes(config->out);
    ck_assert_int_eq(p->context->driver->cuMemsetD8Async(p->dc + p->shift, 0xff, bytes, NULL),
                     CUDA_SUCCESS); /* NaN in every type */
    ptxjit_status status = ptxjit_matmul(p->context, params, p->da + p->shift, p->db + p->shift,
                                         p->dc + p->shift, p->m, p->n, p->k, NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s %zux%zux%zu: %s", params, p->m, p->n, p->k,
                  ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(p->context, p->c, p->dc + p->shift, bytes), PTXJIT_OK);
    /* One assertion, not one per element: in Check's forking mode each passing assertion
     * writes to a pipe. */
    size_t i = 0;
    double diff = 0, norm = 0;
    for (; i < count; i++) {
        double got = pj_matmul_element(p->c, config->out, i), delta = got - p->reference[i];
        if (!isfinite(got))
            break;
        diff += delta * delta;
        norm += p->reference[i] * p->reference[i];
    }
    ck_assert_msg(i == count, "%s %zux%zux%zu: C[%zu][%zu] not written", params, p->m, p->n,
                  p->k, i / p->n, i % p->n);
    return sqrt(diff / (norm > 0 ? norm : 1));
}

/* Both routes on the product's inputs: each within tolerance of the float64 reference. Counts
 * the configurations whose two results are bit for bit the same. */
static void compare(product *p, const char *config_params, int *identical)
{
    char llvm[256];
    snprintf(llvm, sizeof llvm, "%s backend=llvm", config_params);
    matmul_config config;
    const size_t bytes = p->m * p->n * 4;
    double llvm_error = run(p, llvm, &config);
    unsigned char *llvm_result = malloc(bytes);
    ck_assert_ptr_nonnull(llvm_result);
    memcpy(llvm_result, p->c, bytes);
    double nvrtc_error = run(p, config_params, &config), tolerance = tolerance_of(&config);
    ck_assert_msg(llvm_error <= tolerance && nvrtc_error <= tolerance,
                  "%s %zux%zux%zu (shift %zu): relative error llvm %.3e, nvrtc %.3e, over %.0e",
                  config_params, p->m, p->n, p->k, p->shift, llvm_error, nvrtc_error, tolerance);
    *identical += memcmp(llvm_result, p->c, p->m * p->n * (size_t)pj_dtype_bytes(config.out)) == 0;
    free(llvm_result);
}

typedef struct {
    size_t m, n, k;
} shape;

/* Every config on every shape, each shape's inputs made once and shared by the configs. */
static void compare_all(const char *test, const char *const *configs, size_t config_count,
                        const shape *shapes, size_t shape_count, pj_dtype dtype)
{
    ptxjit_context *context = test_gpu_context(test);
    if (!context)
        return;
    int runs = 0, identical = 0;
    for (size_t s = 0; s < shape_count; s++) {
        product p;
        product_make(&p, context, shapes[s].m, shapes[s].n, shapes[s].k, dtype);
        for (size_t c = 0; c < config_count; c++, runs++)
            compare(&p, configs[c], &identical);
        product_free(&p);
    }
    printf("%s: %d of %d llvm results bit-identical to nvrtc's\n", test, identical, runs);
    ptxjit_close(context);
}

static const char *const simt_configs[] = {
    "variant=naive", "variant=coalescing", "variant=tiled", "variant=tiled_register",
    "variant=block_tiled", "variant=block_tiled_vectorized",
    /* other tiles: BK larger than K, one warp column, wider thread tiles, raster groups */
    "variant=naive bm=16 bn=64 group=4", "variant=coalescing bm=64 bn=16 group=2",
    "variant=tiled bk=8 bm=16 bn=16", "variant=tiled_register bm=32 bn=32 bk=16 tm=4",
    "variant=block_tiled bm=64 bn=64 tm=4 tn=4 bk=16 group=8",
    "variant=block_tiled_vectorized bk=16 tm=4 tn=8 bm=64 bn=128",
    "variant=block_tiled_vectorized bk=8 tm=8 tn=4 bm=64 bn=64 group=16",
};

START_TEST(llvm_simt_matmuls_match_nvrtc_and_float64)
{
    static const shape shapes[] = {{1, 1, 1}, {127, 129, 65}, {33, 7, 300}, {512, 512, 512}};
    compare_all("llvm matmul simt", simt_configs, PJ_ARRAY_SIZE(simt_configs), shapes,
                PJ_ARRAY_SIZE(shapes), PJ_DTYPE_f32);
}
END_TEST

/* block_tiled_vectorized takes 16-byte paths only where k and n are multiples of 4 and every
 * matrix is 16-byte aligned: 512³ matrices 4 bytes into their buffers take the element paths. */
START_TEST(llvm_vectorized_matmul_takes_misaligned_matrices)
{
    ptxjit_context *context = test_gpu_context("llvm matmul misaligned");
    if (!context)
        return;
    static const char *const configs[] = {"variant=block_tiled_vectorized",
                                          "variant=block_tiled_vectorized bk=8 tm=8 tn=4 bm=64 bn=64"};
    product p;
    int identical = 0;
    product_make(&p, context, 512, 512, 512, PJ_DTYPE_f32);
    product_shift(&p, 4);
    for (size_t c = 0; c < PJ_ARRAY_SIZE(configs); c++)
        compare(&p, configs[c], &identical);
    product_free(&p);
    ptxjit_close(context);
}
END_TEST

START_TEST(llvm_tensor_core_matmuls_match_nvrtc_and_float64)
{
    static const char *const configs[] = {
        "variant=tensor_core load=cp_async", "variant=tensor_core load=cp_async stages=2", "variant=tensor_core load=cp_async stages=4 bk=16",
        "variant=tensor_core load=cp_async bm=64 bn=64 wm=32 wn=32",
        "variant=tensor_core load=cp_async wm=32 wn=64 bk=64 stages=2", "variant=tensor_core load=cp_async wm=64 wn=64 bn=256",
        "variant=tensor_core load=cp_async wm=64 wn=16", "variant=tensor_core load=cp_async wm=16 wn=8 bm=32 bn=32",
        "variant=tensor_core load=cp_async prefetch=0 group=1", "variant=tensor_core load=cp_async stages=8 bk=8 bm=64 bn=64"};
    /* k and n multiples of 4 (16-byte cp.async rows); m and the tile edges ragged. */
    static const shape shapes[] = {{1, 4, 4}, {127, 132, 68}, {512, 512, 512}};
    compare_all("llvm matmul tensor_core", configs, PJ_ARRAY_SIZE(configs), shapes,
                PJ_ARRAY_SIZE(shapes), PJ_DTYPE_f32);
}
END_TEST

/* load=tma: A rows of 32, 64 and 128 bytes (bk = 8, 16, 32), B fragments 1, 2 and 4 words a
 * load (wn = 8, 16, 32 and more), several warps, deep and shallow pipelines, fewer tiles of K
 * than stages, prefetch; k and n multiples of 4 (TMA rows of 16 bytes), m and the tile edges
 * ragged (257 x 36 x 4: two row tiles of 256, part of one B box, one short k tile). */
START_TEST(llvm_tensor_core_tma_matmuls_match_nvrtc_and_float64)
{
    static const char *const configs[] = {
        "variant=tensor_core load=tma", "variant=tensor_core load=tma bk=16 stages=4",
        "variant=tensor_core load=tma bk=8 stages=6", "variant=tensor_core load=tma stages=2",
        "variant=tensor_core load=tma prefetch=1",
        "variant=tensor_core load=tma bm=256 wm=64 wn=32",
        "variant=tensor_core load=tma wm=64 wn=64 bn=256 bk=16",
        "variant=tensor_core load=tma wm=32 wn=16 bm=64 bn=64",
        "variant=tensor_core load=tma wm=16 wn=8 bm=32 bn=32 bk=8 stages=8",
        "variant=tensor_core load=tma wm=32 wn=128 bm=64 bn=128 group=1"};
    static const shape shapes[] = {{1, 4, 4},       {127, 132, 68},  {257, 36, 4},
                                   {300, 264, 200}, {640, 520, 1000}, {512, 512, 512}};
    compare_all("llvm matmul tensor_core load=tma", configs, PJ_ARRAY_SIZE(configs), shapes,
                PJ_ARRAY_SIZE(shapes), PJ_DTYPE_f32);
}
END_TEST

/* k and n multiples of 8 (TMA rows of 16 bytes), any m; bf16 and f16, both outputs. */
static const shape wgmma_shapes[] = {{1, 8, 8}, {127, 136, 72}, {512, 512, 512},
                                     {300, 264, 1000}};

START_TEST(llvm_wgmma_bf16_matmuls_match_nvrtc_and_float64)
{
    static const char *const configs[] = {
        "variant=wgmma", "variant=wgmma out=f32", "variant=wgmma mma=m64n128k16",
        "variant=wgmma mma=m64n64k16 consumers=1 bm=64", "variant=wgmma mma=m64n200k16 stages=3",
        "variant=wgmma mma=m64n8k16 consumers=1 bm=128", "variant=wgmma mma=m64n128k16 bm=256",
        "variant=wgmma stages=2 group=1", "variant=wgmma mma=m64n96k16 consumers=1 bm=64 stages=8",
        /* store=tma with C's boxes of 32 and 64 bytes */
        "variant=wgmma mma=m64n112k16 store=tma",
        "variant=wgmma mma=m64n48k16 consumers=1 bm=64 out=f32 store=tma",
        "variant=wgmma mma=m64n40k16 consumers=1 bm=64 out=f32 store=tma"};
    compare_all("llvm matmul wgmma bf16", configs, PJ_ARRAY_SIZE(configs), wgmma_shapes,
                PJ_ARRAY_SIZE(wgmma_shapes), PJ_DTYPE_bf16);
}
END_TEST

/* Clusters of 2 row tiles sharing B by multicast: whole clusters and a half-empty last one (m
 * of 1, 3 or 5 row tiles), B boxes split evenly (4, 2) and unevenly (1, 3 of 64 columns), one
 * consumer, both outputs, both input types. */
static const shape cluster_shapes[] = {{1, 8, 8},       {127, 136, 72},  {300, 264, 200},
                                       {640, 520, 1000}, {1024, 1024, 1024}};

START_TEST(llvm_wgmma_cluster_matmuls_match_nvrtc_and_float64)
{
    static const char *const configs[] = {
        "variant=wgmma cluster=2", "variant=wgmma cluster=2 out=f32",
        "variant=wgmma cluster=2 mma=m64n64k16 consumers=1 bm=64",
        "variant=wgmma cluster=2 mma=m64n120k16 stages=4",
        "variant=wgmma cluster=2 mma=m64n128k16 bm=256 group=1",
        "variant=wgmma cluster=2 mma=m64n192k16 stages=2"};
    compare_all("llvm matmul wgmma cluster=2 bf16", configs, PJ_ARRAY_SIZE(configs),
                cluster_shapes, PJ_ARRAY_SIZE(cluster_shapes), PJ_DTYPE_bf16);
}
END_TEST

START_TEST(llvm_wgmma_cluster_f16_matmuls_match_nvrtc_and_float64)
{
    static const char *const configs[] = {"variant=wgmma cluster=2 dtype=f16 out=f32",
                                          "variant=wgmma cluster=2 dtype=f16"};
    compare_all("llvm matmul wgmma cluster=2 f16", configs, PJ_ARRAY_SIZE(configs),
                cluster_shapes, PJ_ARRAY_SIZE(cluster_shapes), PJ_DTYPE_f16);
}
END_TEST

START_TEST(llvm_wgmma_f16_matmuls_match_nvrtc_and_float64)
{
    static const char *const configs[] = {"variant=wgmma dtype=f16",
                                          "variant=wgmma dtype=f16 out=f32",
                                          "variant=wgmma dtype=f16 mma=m64n120k16 stages=4"};
    compare_all("llvm matmul wgmma f16", configs, PJ_ARRAY_SIZE(configs), wgmma_shapes,
                PJ_ARRAY_SIZE(wgmma_shapes), PJ_DTYPE_f16);
}
END_TEST

/* What the driver reports of both kernels once loaded. */
START_TEST(llvm_matmul_kernels_get_the_resources_of_nvrtc_kernels)
{
    ptxjit_context *context = test_gpu_context("llvm matmul resources");
    if (!context)
        return;
    static const char *const configs[] = {
        "variant=naive", "variant=coalescing", "variant=tiled", "variant=tiled_register",
        "variant=block_tiled", "variant=block_tiled_vectorized", "variant=tensor_core load=cp_async",
        "variant=tensor_core load=cp_async wm=64 wn=64 bn=256", "variant=tensor_core load=tma",
        "variant=tensor_core load=tma bk=8 stages=6", "variant=wgmma", "variant=wgmma out=f32",
        "variant=wgmma mma=m64n128k16 bm=256", "variant=wgmma cluster=2",
        "variant=wgmma cluster=2 mma=m64n64k16 consumers=1 bm=64"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(configs); i++) {
        char llvm_params[256];
        snprintf(llvm_params, sizeof llvm_params, "%s backend=llvm", configs[i]);
        ptxjit_kernel *llvm, *nvrtc;
        ck_assert_int_eq(ptxjit_get_kernel(&llvm, context, "matmul", llvm_params, NULL), PTXJIT_OK);
        ck_assert_int_eq(ptxjit_get_kernel(&nvrtc, context, "matmul", configs[i], NULL), PTXJIT_OK);
        ptxjit_kernel_resources ours, theirs;
        ck_assert_int_eq(ptxjit_kernel_resources_get(&ours, llvm, NULL), PTXJIT_OK);
        ck_assert_int_eq(ptxjit_kernel_resources_get(&theirs, nvrtc, NULL), PTXJIT_OK);
        printf("%-40s registers llvm %3d nvrtc %3d, local bytes llvm %3d nvrtc %3d\n", configs[i],
               ours.registers, theirs.registers, ours.local_bytes, theirs.local_bytes);
        ck_assert_msg(ours.static_smem == theirs.static_smem && ours.max_threads == theirs.max_threads,
                      "%s: static shared %d and max threads %d, the template's %d and %d",
                      configs[i], ours.static_smem, ours.max_threads, theirs.static_smem,
                      theirs.max_threads);
        ck_assert_msg(theirs.local_bytes > 0 || ours.local_bytes == 0,
                      "%s: %d bytes of local memory where the template's kernel has none",
                      configs[i], ours.local_bytes);
    }
    ptxjit_close(context);
}
END_TEST

Suite *suite_llvm_matmul_gpu(void)
{
    Suite *s = suite_create("llvm_matmul_gpu");
    TCase *tc = tcase_create("llvm_vs_nvrtc");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, llvm_simt_matmuls_match_nvrtc_and_float64);
    tcase_add_test(tc, llvm_vectorized_matmul_takes_misaligned_matrices);
    tcase_add_test(tc, llvm_tensor_core_matmuls_match_nvrtc_and_float64);
    tcase_add_test(tc, llvm_tensor_core_tma_matmuls_match_nvrtc_and_float64);
    tcase_add_test(tc, llvm_wgmma_bf16_matmuls_match_nvrtc_and_float64);
    tcase_add_test(tc, llvm_wgmma_f16_matmuls_match_nvrtc_and_float64);
    tcase_add_test(tc, llvm_wgmma_cluster_matmuls_match_nvrtc_and_float64);
    tcase_add_test(tc, llvm_wgmma_cluster_f16_matmuls_match_nvrtc_and_float64);
    tcase_add_test(tc, llvm_matmul_kernels_get_the_resources_of_nvrtc_kernels);
    suite_add_tcase(s, tc);
    return s;
}

/* test_transpose_gpu.c — every transpose variant, swizzle, batch and dtype on the GPU,
 * bit-exact against the CPU transpose on fresh random data with poisoned outputs, on shapes
 * that are not multiples of the tile. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "families/transpose/op.h"
#include "test_util.h"

typedef struct {
    size_t rows, cols;
} shape;

/* Elements the matrices start into their buffers (a matrix inside a larger one). */
static size_t misalign;

/* Runs params on a fresh rows x cols matrix of e-byte elements and compares every element. */
static void check(ptxjit_context *context, const char *params, size_t rows, size_t cols, int e)
{
    size_t bytes = rows * cols * (size_t)e, skip = misalign * (size_t)e;
    unsigned char *in = malloc(bytes), *out = malloc(bytes), *want = malloc(bytes);
    ck_assert(in && out && want);
    uint64_t state = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20) ^ (rows * 31 + cols);
    for (size_t i = 0; i < bytes; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        in[i] = (unsigned char)(state >> 56);
    }
    ptxjit_devptr in_base, out_base;
    ck_assert_int_eq(ptxjit_alloc(&in_base, context, bytes + skip), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&out_base, context, bytes + skip), PTXJIT_OK);
    const ptxjit_devptr d_in = in_base + skip, d_out = out_base + skip;
    ck_assert_int_eq(ptxjit_copy_to_device(context, d_in, in, bytes), PTXJIT_OK);
    memset(out, 0xff, bytes);
    ck_assert_int_eq(ptxjit_copy_to_device(context, d_out, out, bytes), PTXJIT_OK);
    ptxjit_status status = ptxjit_transpose(context, params, d_in, d_out, rows, cols, NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s %zux%zu: %s", params, rows, cols, ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(context, out, d_out, bytes), PTXJIT_OK);
    pj_transpose_reference(want, in, rows, cols, e);
    size_t first_bad = 0;
    while (first_bad < bytes && out[first_bad] == want[first_bad])
        first_bad++;
    ck_assert_msg(first_bad == bytes, "%s %zux%zu: output element %zu differs", params, rows,
                  cols, first_bad / (size_t)e);
    ptxjit_free(context, in_base);
    ptxjit_free(context, out_base);
    free(in);
    free(out);
    free(want);
}

static const struct {
    const char *name;
    int bytes;
} dtypes[] = {{"f32", 4}, {"f16", 2}, {"bf16", 2}, {"f64", 8}};

START_TEST(transpose_smem_every_dtype_batch_and_shape)
{
    ptxjit_context *context = test_gpu_context("transpose_smem_every_dtype_batch_and_shape");
    if (!context)
        return;
    static const shape shapes[] = {{1, 1}, {1, 4097}, {4097, 1}, {33, 65}, {4096, 12288}};
    static const int batches[] = {1, 4, 8, 32};
    for (size_t d = 0; d < 4; d++)
        for (size_t b = 0; b < 4; b++)
            for (size_t s = 0; s < 5; s++) {
                if (s == 4 && batches[b] != 8)
                    continue; /* the large shape once per dtype */
                char params[96];
                snprintf(params, sizeof params, "variant=smem dtype=%s batch=%d block=%d",
                         dtypes[d].name, batches[b], 32);
                check(context, params, shapes[s].rows, shapes[s].cols, dtypes[d].bytes);
            }
    ptxjit_close(context);
}
END_TEST

/* TMA shapes: rows a multiple of 16 bytes in both matrices, ragged against every tile. */
static void check_tma_shapes(ptxjit_context *context, const char *params, int e, int large)
{
    size_t unit = (size_t)(16 / e); /* elements per 16 bytes */
    const shape shapes[] = {{unit, unit}, {unit * 5, unit * 9}, {4096, 12288}, {16384, 16384}};
    for (int s = 0; s < 2 + large; s++)
        check(context, params, shapes[s].rows, shapes[s].cols, e);
}

START_TEST(transpose_tma_every_dtype)
{
    ptxjit_context *context = test_gpu_context("transpose_tma_every_dtype");
    if (!context)
        return;
    for (size_t d = 0; d < 4; d++) {
        char params[96];
        snprintf(params, sizeof params, "variant=tma dtype=%s block=%d", dtypes[d].name,
                 dtypes[d].bytes == 8 ? 16 : 32);
        check_tma_shapes(context, params, dtypes[d].bytes, d == 0);
    }
    ptxjit_close(context);
}
END_TEST

START_TEST(transpose_tma_swizzle_every_mode_and_dtype)
{
    ptxjit_context *context = test_gpu_context("transpose_tma_swizzle_every_mode_and_dtype");
    if (!context)
        return;
    static const struct {
        const char *name;
        int span;
    } modes[] = {{"none", 128}, {"32B", 32}, {"64B", 64}, {"128B", 128}};
    int ran = 0;
    for (size_t m = 0; m < 4; m++)
        for (size_t d = 0; d < 4; d++) {
            /* A swizzled row is exactly the span; tma_swizzle has one thread per element, so
             * the widest tiles go through tma_batched. */
            int block = modes[m].span / dtypes[d].bytes;
            if (block < 8)
                continue; /* 32B cannot hold a row of 8 f64: the schema refuses it */
            char params[128];
            snprintf(params, sizeof params, "variant=%s swizzle=%s dtype=%s block=%d batch=4",
                     block > 32 ? "tma_batched" : "tma_swizzle", modes[m].name, dtypes[d].name,
                     block);
            if (block <= 32)
                *strstr(params, " batch=4") = '\0';
            check_tma_shapes(context, params, dtypes[d].bytes, m == 3 && d == 0);
            ran++;
        }
    ck_assert_int_eq(ran, 15);
    ptxjit_close(context);
}
END_TEST

START_TEST(transpose_tma_batched_every_batch)
{
    ptxjit_context *context = test_gpu_context("transpose_tma_batched_every_batch");
    if (!context)
        return;
    for (int batch = 1; batch <= 32; batch *= 2) {
        char params[128];
        /* The write-up's step 4, and the same tile transposed along diagonals in place. */
        snprintf(params, sizeof params, "variant=tma_batched block=32 swizzle=128B xpose=scalar "
                 "inplace=0 batch=%d", batch);
        check_tma_shapes(context, params, 4, batch == 8);
        snprintf(params, sizeof params, "variant=tma_batched block=32 swizzle=128B batch=%d",
                 batch);
        check_tma_shapes(context, params, 4, 0);
        snprintf(params, sizeof params, "variant=tma_batched swizzle=128B dtype=f16 block=64 "
                 "batch=%d", batch < 4 ? 4 : batch);
        check_tma_shapes(context, params, 2, 0);
        snprintf(params, sizeof params, "variant=tma_batched swizzle=none block=64 batch=%d",
                 batch < 4 ? 4 : batch);
        check_tma_shapes(context, params, 4, 0);
        /* Tiles wider than the swizzle span: several boxes per tile. */
        snprintf(params, sizeof params, "variant=tma_batched swizzle=128B block=64 batch=%d",
                 batch < 4 ? 4 : batch);
        check_tma_shapes(context, params, 4, batch == 8);
        snprintf(params, sizeof params, "variant=tma_batched swizzle=32B block=32 batch=%d",
                 batch);
        check_tma_shapes(context, params, 4, 0);
        snprintf(params, sizeof params, "variant=tma_batched swizzle=64B dtype=f64 block=32 "
                 "batch=%d", batch < 2 ? 2 : batch);
        check_tma_shapes(context, params, 8, 0);
    }
    ptxjit_close(context);
}
END_TEST

/* 16-byte micro-tiles: every dtype, one and several micro-tiles per thread, tiles of one and
 * two swizzle boxes. */
START_TEST(transpose_vector_micro_tiles_every_dtype)
{
    ptxjit_context *context = test_gpu_context("transpose_vector_micro_tiles_every_dtype");
    if (!context)
        return;
    static const char *const requests[] = {
        "dtype=f32 block=32 batch=16", "dtype=f32 block=32 batch=32",
        "dtype=f32 block=64 batch=16", "dtype=f32 block=64 batch=64",
        "dtype=f16 block=64 batch=64", "dtype=bf16 block=64 batch=64",
        "dtype=f64 block=16 batch=4",  "dtype=f64 block=32 batch=8",
        "dtype=f64 block=32 batch=32"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(requests); i++) {
        char params[128];
        snprintf(params, sizeof params, "variant=tma_batched swizzle=128B xpose=vector %s",
                 requests[i]);
        int e = strstr(params, "f64") ? 8 : strstr(params, "f32") ? 4 : 2;
        check_tma_shapes(context, params, e, i == 0);
    }
    ptxjit_close(context);
}
END_TEST

/* The tma_batched layouts beyond the write-up: unswizzled wide tiles, diagonal and in-place
 * transpositions, dynamic shared memory above 48 KiB, rectangular tiles, persistent blocks. */
START_TEST(transpose_tma_batched_layouts_every_dtype)
{
    ptxjit_context *context = test_gpu_context("transpose_tma_batched_layouts_every_dtype");
    if (!context)
        return;
    static const char *const layouts[] = {
        "swizzle=none block=64 batch=8", "swizzle=none block=64 batch=16 xpose=diagonal",
        "swizzle=none block=64 batch=32 xpose=diagonal inplace=1",
        "swizzle=none block=128 batch=32 xpose=diagonal inplace=1",
        "swizzle=none block=128 batch=64", "swizzle=none block=64 batch=8 inplace=1",
        "swizzle=128B block=64 batch=16 xpose=diagonal inplace=1",
        "swizzle=128B block=64 batch=64 xpose=vector inplace=1",
        "swizzle=none block=64 batch=16 xpose=scalar",
        "swizzle=32B block=32 batch=8 inplace=1 xpose=scalar",
        "swizzle=64B block=32 batch=4 xpose=diagonal inplace=0",
        "swizzle=none block=64 batch=16 xpose=diagonal inplace=1 stages=1",
        "swizzle=none block=64 batch=16 xpose=diagonal inplace=1 stages=2",
        "swizzle=128B block=32 batch=8 stages=3 group=4",
        "swizzle=none block=32 batch=4 stages=4 inplace=1",
        "swizzle=none block=32 rows=128 batch=8 xpose=diagonal inplace=1",
        "swizzle=none block=128 rows=32 batch=8 xpose=diagonal",
        "swizzle=none block=16 rows=64 batch=4", "swizzle=none block=64 rows=16 batch=2 inplace=1",
        "swizzle=none block=64 rows=128 batch=16 xpose=diagonal inplace=1 stages=2",
        "swizzle=128B block=128 rows=64 batch=16", "swizzle=64B block=64 rows=32 batch=8",
        "swizzle=none block=256 rows=32 batch=8", ""};
    int ran = 0;
    for (size_t l = 0; l < PJ_ARRAY_SIZE(layouts); l++)
        for (size_t d = 0; d < 4; d++) {
            char params[160];
            snprintf(params, sizeof params, "variant=tma_batched dtype=%s %s", dtypes[d].name,
                     layouts[l]);
            char *canonical = NULL;
            if (ptxjit_canonical_params(&canonical, context, "transpose", params) != PTXJIT_OK)
                continue; /* e.g. a 128-wide f64 tile: over the shared memory or box limits */
            free(canonical);
            check_tma_shapes(context, params, dtypes[d].bytes, d == 0 && l == 3);
            ran++;
        }
    ck_assert_int_ge(ran, 60);
    ptxjit_close(context);
}
END_TEST

/* Grouped raster orders, with a last group shorter than the others. */
START_TEST(transpose_grouped_raster_covers_every_tile)
{
    ptxjit_context *context = test_gpu_context("transpose_grouped_raster_covers_every_tile");
    if (!context)
        return;
    static const char *const requests[] = {
        "variant=smem group=4", "variant=smem group=64", "variant=tma group=2",
        "variant=tma_batched group=16",
        "variant=tma_batched block=64 group=8 swizzle=128B xpose=vector batch=32",
        "variant=tma_batched swizzle=none block=32 rows=64 group=4096",
        "variant=tma_batched swizzle=none block=64 rows=32 group=2 stages=1"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(requests); i++) {
        check(context, requests[i], 16 * 37 + 4, 16 * 11, 4); /* 19 x 6 tiles of 32 */
        check(context, requests[i], 4, 16 * 70, 4);           /* one tile row */
        check(context, requests[i], 4096, 12288, 4);
    }
    ptxjit_close(context);
}
END_TEST

START_TEST(transpose_tma_refuses_shapes_it_cannot_describe)
{
    ptxjit_context *context = test_gpu_context("transpose_tma_refuses_shapes_it_cannot_describe");
    if (!context)
        return;
    ptxjit_devptr buffer;
    ck_assert_int_eq(ptxjit_alloc(&buffer, context, 1 << 20), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_transpose(context, "variant=tma", buffer, buffer + 65536, 1, 4097,
                                      NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "variant=smem"));
    ck_assert_int_eq(ptxjit_transpose(context, "", buffer, buffer + 65536, 0, 4, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    /* Past the kernels' 32-bit counts, refused before any launch (the buffers are not that
     * large: nothing may touch them), whichever variant, the poison left in place. */
    ck_assert_int_eq(ptxjit_memset_d32_async(context, buffer, 0x7fc00001u, (1 << 20) / 4, NULL),
                     PTXJIT_OK);
    static const char *const variants[] = {"variant=smem dtype=f16", "variant=smem",
                                           "variant=tma_batched stages=1"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(variants); i++) {
        ck_assert_int_eq(ptxjit_transpose(context, variants[i], buffer, buffer + 65536, 1,
                                          (1ull << 32) + 64, NULL),
                         PTXJIT_ERR_INVALID_ARGUMENT);
        ck_assert_msg(strstr(ptxjit_last_error(), "at most 4294967295"), "%s: %s", variants[i],
                      ptxjit_last_error());
        ck_assert_int_eq(ptxjit_transpose(context, variants[i], buffer, buffer + 65536,
                                          (1ull << 32) + 64, 1, NULL),
                         PTXJIT_ERR_INVALID_ARGUMENT);
    }
    uint32_t probe[4];
    ck_assert_int_eq(ptxjit_synchronize(context), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host(context, probe, buffer + 65536, sizeof probe), PTXJIT_OK);
    for (int i = 0; i < 4; i++)
        ck_assert_uint_eq(probe[i], 0x7fc00001u);
    ptxjit_free(context, buffer);
    ptxjit_close(context);
}
END_TEST

/* The defaults (tma_batched) need rows of 16n bytes in both matrices; a request that leaves
 * the variant to them takes any shape (request/plan.h), random ones among them. */
START_TEST(transpose_defaults_take_any_shape)
{
    ptxjit_context *context = test_gpu_context("transpose_defaults_take_any_shape");
    if (!context)
        return;
    static const shape fixed[] = {{1, 1}, {3, 5}, {33, 65}, {1, 4097}, {999, 1001}, {3343, 4860},
                                  {3344, 4859}};
    srand((unsigned)time(NULL));
    for (size_t d = 0; d < 4; d++) {
        char params[64];
        snprintf(params, sizeof params, "dtype=%s", dtypes[d].name);
        for (size_t s = 0; s < PJ_ARRAY_SIZE(fixed); s++)
            check(context, params, fixed[s].rows, fixed[s].cols, dtypes[d].bytes);
        for (int r = 0; r < 3; r++) /* fresh random shapes each run */
            check(context, params, 1 + (size_t)rand() % 3000, 1 + (size_t)rand() % 3000,
                  dtypes[d].bytes);
        /* Aligned rows in buffers that are not 16-byte aligned: no TMA base either. */
        misalign = 1;
        check(context, params, 64, 256, dtypes[d].bytes);
        misalign = 0;
    }
    /* A named variant is taken as written: refused, with its reason. */
    ptxjit_devptr buffer;
    ck_assert_int_eq(ptxjit_alloc(&buffer, context, 1 << 20), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_transpose(context, "variant=tma_batched", buffer, buffer + 65536, 3,
                                      5, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "not a multiple of 16"));
    ptxjit_free(context, buffer);
    ptxjit_close(context);
}
END_TEST

/* `ptxjit run transpose` names the kernel the op ran: smem for rows the TMA cannot take (it
 * printed the unplanned defaults' tma_batched before, over smem's figures). */
START_TEST(cli_run_transpose_names_the_kernel_it_ran)
{
    ptxjit_context *context = test_gpu_context("cli_run_transpose_names_the_kernel_it_ran");
    if (!context)
        return;
    ptxjit_close(context);
    static const struct {
        const char *args, *variant;
    } runs[] = {{"run transpose h=1000 w=1021 runs=1", "variant=smem"},
                {"run transpose h=1000 w=1024 runs=1", "variant=tma_batched"}};
    char *dir = test_mkdtemp();
    for (size_t i = 0; i < PJ_ARRAY_SIZE(runs); i++) {
        char *out = NULL;
        ck_assert_msg(test_run_cli(&out, dir, "", runs[i].args, NULL) == 0, "%s: %s",
                      runs[i].args, out ? out : "");
        ck_assert_msg(strstr(out, runs[i].variant) && strstr(out, "bit-exact"), "%s: %s",
                      runs[i].args, out);
        free(out);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_transpose_gpu(void)
{
    Suite *suite = suite_create("transpose_gpu");
    TCase *tc = tcase_create("variants");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, transpose_smem_every_dtype_batch_and_shape);
    tcase_add_test(tc, transpose_defaults_take_any_shape);
    tcase_add_test(tc, cli_run_transpose_names_the_kernel_it_ran);
    tcase_add_test(tc, transpose_tma_every_dtype);
    tcase_add_test(tc, transpose_tma_swizzle_every_mode_and_dtype);
    tcase_add_test(tc, transpose_tma_batched_every_batch);
    tcase_add_test(tc, transpose_vector_micro_tiles_every_dtype);
    tcase_add_test(tc, transpose_tma_batched_layouts_every_dtype);
    tcase_add_test(tc, transpose_grouped_raster_covers_every_tile);
    tcase_add_test(tc, transpose_tma_refuses_shapes_it_cannot_describe);
    suite_add_tcase(suite, tc);
    return suite;
}

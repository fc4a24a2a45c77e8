/* test_reduce_gpu.c — every reduce variant and dtype against the CPU reference on fresh
 * random data, for sizes that are not multiples of any tile, on aligned and unaligned inputs.
 * Skips, saying why, where no GPU is usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "families/reduce/op.h"
#include "test_util.h"

static const char *const variants[] = {"two_pass", "warp_shuffle", "one_pass", "batched",
                                       "vectorized"};
static const size_t sizes[] = {1, 31, 1000003, (1u << 28) + 37};

static uint64_t state;
static uint64_t next_random(void)
{
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill(void *data, size_t n, int is_float)
{
    state = (uint64_t)time(NULL) ^ (uint64_t)clock() << 32 ^ (uint64_t)(uintptr_t)data;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = next_random();
        if (is_float)
            ((float *)data)[i] = (float)((double)(r >> 11) * 0x1.0p-52 - 1.0);
        else
            ((int32_t *)data)[i] = (int32_t)(uint32_t)r;
    }
}

/* Reduces n elements starting offset elements into buffer; the result slot is poisoned. */
static void check_one(ptxjit_context *context, const char *params, const void *host,
                      ptxjit_devptr device, size_t offset, size_t n, int is_float)
{
    ptxjit_devptr result;
    ck_assert_int_eq(ptxjit_alloc(&result, context, 4), PTXJIT_OK);
    uint32_t poison = 0x7fc00bad, bits = 0;
    ck_assert_int_eq(ptxjit_copy_to_device(context, result, &poison, 4), PTXJIT_OK);
    ptxjit_status status = ptxjit_reduce_async(context, params, device + offset * 4, n, result,
                                               NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s: %s", params, ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(context, &bits, result, 4), PTXJIT_OK);
    ptxjit_free(context, result);
    const char *start = (const char *)host + offset * 4;
    if (is_float) {
        float got;
        memcpy(&got, &bits, 4);
        double magnitude, want = pj_reduce_reference_f32((const float *)start, n, &magnitude);
        ck_assert_msg(pj_reduce_f32_close(got, want, magnitude),
                      "%s n=%zu offset=%zu: got %.9g, want %.9g (bound %.3g)", params, n, offset,
                      got, want, 1e-5 * magnitude);
    } else {
        uint32_t want = pj_reduce_reference_i32((const int32_t *)start, n);
        ck_assert_msg(bits == want, "%s n=%zu offset=%zu: got %u, want %u", params, n, offset,
                      bits, want);
    }
}

static void check_variant(const char *variant, const char *dtype, const char *test)
{
    ptxjit_context *context = test_gpu_context(test);
    if (!context)
        return;
    int is_float = strcmp(dtype, "f32") == 0;
    size_t most = sizes[PJ_ARRAY_SIZE(sizes) - 1] + 3;
    void *host = malloc(most * 4);
    ck_assert_ptr_nonnull(host);
    fill(host, most, is_float);
    ptxjit_devptr device;
    ck_assert_int_eq(ptxjit_alloc(&device, context, most * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, device, host, most * 4), PTXJIT_OK);
    char params[128];
    snprintf(params, sizeof params, "variant=%s dtype=%s", variant, dtype);
    for (size_t s = 0; s < PJ_ARRAY_SIZE(sizes); s++)
        for (size_t offset = 0; offset < 4; offset += 3) /* 16-byte aligned and not */
            check_one(context, params, host, device, offset, sizes[s], is_float);
    ptxjit_free(context, device);
    free(host);
    ptxjit_close(context);
}

#define VARIANT_TEST(variant, dtype)                                   \
    START_TEST(reduce_##variant##_##dtype##_matches_cpu)               \
    {                                                                  \
        check_variant(#variant, #dtype, "reduce_" #variant "_" #dtype); \
    }                                                                  \
    END_TEST

VARIANT_TEST(two_pass, i32)
VARIANT_TEST(two_pass, f32)
VARIANT_TEST(warp_shuffle, i32)
VARIANT_TEST(warp_shuffle, f32)
VARIANT_TEST(one_pass, i32)
VARIANT_TEST(one_pass, f32)
VARIANT_TEST(batched, i32)
VARIANT_TEST(batched, f32)
VARIANT_TEST(vectorized, i32)
VARIANT_TEST(vectorized, f32)

/* Every block size and batch with odd sizes, so each tail path runs for each shape. */
START_TEST(reduce_every_tpb_and_batch_matches_cpu)
{
    ptxjit_context *context = test_gpu_context("reduce_every_tpb_and_batch_matches_cpu");
    if (!context)
        return;
    enum { N = 777777 };
    int32_t *host = malloc((N + 3) * 4);
    fill(host, N + 3, 0);
    ptxjit_devptr device;
    ck_assert_int_eq(ptxjit_alloc(&device, context, (N + 3) * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, device, host, (N + 3) * 4), PTXJIT_OK);
    static const int batches[] = {1, 3, 8, 16};
    for (int tpb = 32; tpb <= 1024; tpb *= 2) {
        for (int v = 0; v < 5; v++) {
            for (size_t b = 0; b < (v >= 3 ? PJ_ARRAY_SIZE(batches) : 1); b++) {
                char params[128];
                int n = snprintf(params, sizeof params, "variant=%s tpb=%d", variants[v], tpb);
                if (v >= 3)
                    snprintf(params + n, sizeof params - (size_t)n, " batch=%d", batches[b]);
                check_one(context, params, host, device, (size_t)(tpb % 3), N - tpb, 0);
            }
        }
    }
    ptxjit_free(context, device);
    free(host);
    ptxjit_close(context);
}
END_TEST

/* The generic launch path with the kernel's own arguments, and its resource report. */
START_TEST(launch_and_resources_through_the_public_api)
{
    ptxjit_context *context = test_gpu_context("launch_and_resources_through_the_public_api");
    if (!context)
        return;
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "variant=one_pass tpb=64",
                                       NULL),
                     PTXJIT_OK);
    int32_t host[100];
    fill(host, 100, 0);
    ptxjit_devptr in, out;
    ck_assert_int_eq(ptxjit_alloc(&in, context, sizeof host), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&out, context, 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, in, host, sizeof host), PTXJIT_OK);
    uint32_t zero = 0, got = 0;
    ck_assert_int_eq(ptxjit_copy_to_device(context, out, &zero, 4), PTXJIT_OK);
    unsigned long long n = 100;
    void *args[] = {&in, &out, &n};
    ptxjit_dim3 grid = {2, 1, 1}, block = {64, 1, 1};
    ck_assert_int_eq(ptxjit_launch(kernel, "reduce_kernel", grid, block, 0, NULL, args),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_synchronize(context), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host(context, &got, out, 4), PTXJIT_OK);
    ck_assert_uint_eq(got, pj_reduce_reference_i32(host, 100));
    ck_assert_int_eq(ptxjit_launch(kernel, "no_such_entry", grid, block, 0, NULL, args),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_kernel_resources r;
    ck_assert_int_eq(ptxjit_kernel_resources_get(&r, kernel, NULL), PTXJIT_OK);
    ck_assert_int_gt(r.registers, 0);
    ck_assert_int_eq(r.local_bytes, 0);
    ck_assert_int_ge(r.max_threads, 64);
    ck_assert_int_eq(ptxjit_reduce_async(context, "", in, 0, out, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_reduce_async(context, "", in + 2, 10, out, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_free(context, in);
    ptxjit_free(context, out);
    ptxjit_close(context);
}
END_TEST

Suite *suite_reduce_gpu(void)
{
    Suite *suite = suite_create("reduce_gpu");
    TCase *tc = tcase_create("variants");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, reduce_two_pass_i32_matches_cpu);
    tcase_add_test(tc, reduce_two_pass_f32_matches_cpu);
    tcase_add_test(tc, reduce_warp_shuffle_i32_matches_cpu);
    tcase_add_test(tc, reduce_warp_shuffle_f32_matches_cpu);
    tcase_add_test(tc, reduce_one_pass_i32_matches_cpu);
    tcase_add_test(tc, reduce_one_pass_f32_matches_cpu);
    tcase_add_test(tc, reduce_batched_i32_matches_cpu);
    tcase_add_test(tc, reduce_batched_f32_matches_cpu);
    tcase_add_test(tc, reduce_vectorized_i32_matches_cpu);
    tcase_add_test(tc, reduce_vectorized_f32_matches_cpu);
    tcase_add_test(tc, reduce_every_tpb_and_batch_matches_cpu);
    tcase_add_test(tc, launch_and_resources_through_the_public_api);
    suite_add_tcase(suite, tc);
    return suite;
}

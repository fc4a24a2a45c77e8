/* test_llvm_gpu.c — LLVM-generated reduce kernels against the NVRTC-compiled template on the
 * GPU, launched by the same host op: on fresh random data with a poisoned result slot, for
 * sizes that are no multiple of any tile and inputs that start off the 16-byte boundary. int32
 * sums must be identical (and equal to the CPU's); f32 sums within rounding of the CPU sum.
 * Skips, saying why, where no GPU is usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "families/reduce/op.h"
#include "test_util.h"

static const size_t sizes[] = {1, 33, 1000003, (1u << 26) + 37};
static const size_t offsets[] = {0, 1, 3};

/* xorshift64*, seeded from the clock: different data on every run. */
static void random_fill(void *data, size_t n, int is_float)
{
    uint64_t x = (uint64_t)time(NULL) * 0x2545f4914f6cdd1dull ^ (uint64_t)clock() ^ 0x9e37u;
    for (size_t i = 0; i < n; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        uint64_t r = x * 0x2545f4914f6cdd1dull;
        if (is_float)
            ((float *)data)[i] = (float)((double)(r >> 40) / (double)(1u << 23) - 1.0);
        else
            ((uint32_t *)data)[i] = (uint32_t)(r >> 32);
    }
}

/* One reduction through the family op into a poisoned slot; returns the result's bits. */
static uint32_t reduce_bits(ptxjit_context *context, const char *params, ptxjit_devptr input,
                            size_t n, ptxjit_devptr slot)
{
    const uint32_t poison = 0x7fc0dead;
    uint32_t bits = 0;
    ck_assert_int_eq(ptxjit_copy_to_device(context, slot, &poison, 4), PTXJIT_OK);
    ptxjit_status status = ptxjit_reduce_async(context, params, input, n, slot, NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s: %s", params, ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(context, &bits, slot, 4), PTXJIT_OK);
    return bits;
}

static void compare(ptxjit_context *context, const char *params, const void *host,
                    ptxjit_devptr device, ptxjit_devptr slot, int is_float)
{
    char llvm[160];
    snprintf(llvm, sizeof llvm, "%s backend=llvm", params);
    for (size_t s = 0; s < PJ_ARRAY_SIZE(sizes); s++)
        for (size_t o = 0; o < PJ_ARRAY_SIZE(offsets); o++) {
            size_t n = sizes[s], offset = offsets[o];
            const char *start = (const char *)host + offset * 4;
            uint32_t ours = reduce_bits(context, llvm, device + offset * 4, n, slot);
            uint32_t theirs = reduce_bits(context, params, device + offset * 4, n, slot);
            if (!is_float) {
                uint32_t want = pj_reduce_reference_i32((const int32_t *)start, n);
                ck_assert_msg(ours == theirs && ours == want,
                              "%s n=%zu offset=%zu: llvm %u, nvrtc %u, cpu %u", params, n,
                              offset, ours, theirs, want);
                continue;
            }
            float a, b;
            memcpy(&a, &ours, 4);
            memcpy(&b, &theirs, 4);
            double magnitude, want = pj_reduce_reference_f32((const float *)start, n, &magnitude);
            ck_assert_msg(pj_reduce_f32_close(a, want, magnitude) &&
                              pj_reduce_f32_close(b, want, magnitude),
                          "%s n=%zu offset=%zu: llvm %.9g, nvrtc %.9g, cpu %.9g (bound %.3g)",
                          params, n, offset, a, b, want, 1e-5 * magnitude);
        }
}

static void compare_variant(const char *variant, const char *test)
{
    ptxjit_context *context = test_gpu_context(test);
    if (!context)
        return;
    static const int tpbs[] = {32, 256, 1024};
    static const int batches[] = {1, 3, 16, 64};
    size_t most = sizes[PJ_ARRAY_SIZE(sizes) - 1] + offsets[PJ_ARRAY_SIZE(offsets) - 1];
    void *host = malloc(most * 4);
    ck_assert_ptr_nonnull(host);
    ptxjit_devptr device, slot;
    ck_assert_int_eq(ptxjit_alloc(&device, context, most * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&slot, context, 4), PTXJIT_OK);
    int tiled = strcmp(variant, "batched") == 0 || strcmp(variant, "vectorized") == 0;
    for (int is_float = 0; is_float < 2; is_float++) {
        random_fill(host, most, is_float);
        ck_assert_int_eq(ptxjit_copy_to_device(context, device, host, most * 4), PTXJIT_OK);
        for (size_t t = 0; t < PJ_ARRAY_SIZE(tpbs); t++)
            for (size_t b = 0; b < (tiled ? PJ_ARRAY_SIZE(batches) : 1); b++) {
                if (strcmp(variant, "vectorized") == 0 && batches[b] > 16)
                    continue;
                char params[128];
                int length = snprintf(params, sizeof params, "variant=%s tpb=%d dtype=%s",
                                      variant, tpbs[t], is_float ? "f32" : "i32");
                if (tiled)
                    snprintf(params + length, sizeof params - (size_t)length, " batch=%d",
                             batches[b]);
                compare(context, params, host, device, slot, is_float);
            }
    }
    ptxjit_free(context, device);
    ptxjit_free(context, slot);
    free(host);
    ptxjit_close(context);
}

START_TEST(llvm_two_pass_matches_nvrtc) { compare_variant("two_pass", "llvm two_pass"); }
END_TEST
START_TEST(llvm_warp_shuffle_matches_nvrtc) { compare_variant("warp_shuffle", "llvm warp_shuffle"); }
END_TEST
START_TEST(llvm_one_pass_matches_nvrtc) { compare_variant("one_pass", "llvm one_pass"); }
END_TEST
START_TEST(llvm_batched_matches_nvrtc) { compare_variant("batched", "llvm batched"); }
END_TEST
START_TEST(llvm_vectorized_matches_nvrtc) { compare_variant("vectorized", "llvm vectorized"); }
END_TEST

Suite *suite_llvm_reduce_gpu(void)
{
    Suite *s = suite_create("llvm_reduce_gpu");
    TCase *tc = tcase_create("llvm_vs_nvrtc");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, llvm_two_pass_matches_nvrtc);
    tcase_add_test(tc, llvm_warp_shuffle_matches_nvrtc);
    tcase_add_test(tc, llvm_one_pass_matches_nvrtc);
    tcase_add_test(tc, llvm_batched_matches_nvrtc);
    tcase_add_test(tc, llvm_vectorized_matches_nvrtc);
    suite_add_tcase(s, tc);
    return s;
}

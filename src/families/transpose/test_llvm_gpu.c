/* test_llvm_gpu.c — LLVM-generated transpose kernels against the NVRTC-compiled template and
 * the CPU on the GPU, launched by the same host op: fresh random bits, a poisoned output,
 * shapes that are no multiple of the tile; every result must be bit-identical. Skips, saying
 * why, where no GPU is usable. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "families/transpose/op.h"
#include "llvm_util.h"

typedef struct {
    ptxjit_context *context;
    size_t rows, cols, bytes;
    unsigned char *host, *want, *got;
    ptxjit_devptr in, out;
} transpose_case;

static void random_bytes(unsigned char *data, size_t n)
{
    uint64_t x = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 20) ^ 0x5deece66dull;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        data[i] = (unsigned char)(x >> 24);
    }
}

static void setup(transpose_case *c, ptxjit_context *context, size_t rows, size_t cols,
                  size_t bytes)
{
    *c = (transpose_case){context, rows, cols, bytes, NULL, NULL, NULL, 0, 0};
    size_t total = rows * cols * bytes;
    c->host = malloc(total);
    c->want = malloc(total);
    c->got = malloc(total);
    ck_assert(c->host && c->want && c->got);
    random_bytes(c->host, total);
    pj_transpose_reference(c->want, c->host, rows, cols, (int)bytes);
    ck_assert_int_eq(ptxjit_alloc(&c->in, context, total), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&c->out, context, total), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, c->in, c->host, total), PTXJIT_OK);
}

static void teardown(transpose_case *c)
{
    ptxjit_free(c->context, c->in);
    ptxjit_free(c->context, c->out);
    free(c->host);
    free(c->want);
    free(c->got);
}

/* Runs params into a poisoned output and compares every byte with the CPU's transpose. */
static void run_and_check(transpose_case *c, const char *params)
{
    size_t total = c->rows * c->cols * c->bytes;
    ck_assert_int_eq(c->context->driver->cuMemsetD8Async(c->out, 0xa5, total, NULL), CUDA_SUCCESS);
    ptxjit_status status = ptxjit_transpose(c->context, params, c->in, c->out, c->rows, c->cols,
                                            NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s: %s", params, ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(c->context, c->got, c->out, total), PTXJIT_OK);
    /* One assertion, not one per byte: in Check's forking mode each passing assertion
     * writes to a pipe. */
    size_t i = 0;
    while (i < total && c->got[i] == c->want[i])
        i++;
    ck_assert_msg(i == total, "%s %zu x %zu: byte %zu (output row %zu) is %02x, not %02x",
                  params, c->rows, c->cols, i, i / c->bytes / c->rows, i < total ? c->got[i] : 0,
                  i < total ? c->want[i] : 0);
}

static size_t dtype_size(const char *params)
{
    return strstr(params, "f64") ? 8 : strstr(params, "f16") ? 2 : 4;
}

/* Both routes on the same input: each must equal the CPU's transpose, hence each other. The
 * knobs a config leaves out are set to their plain values where the template has them. */
static void compare(ptxjit_context *context, const char *config, size_t rows, size_t cols)
{
    static const char *const plain[] = {"inplace=0", "stages=0", "rows=0"};
    char params[256], longer[320];
    snprintf(params, sizeof params, "%s", config);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(plain); i++) {
        snprintf(longer, sizeof longer, "%s %s", params, plain[i]);
        if (test_valid(context, "transpose", longer))
            snprintf(params, sizeof params, "%.255s", longer);
    }
    if (!test_valid(context, "transpose", params))
        return; /* a knob this template does not have */
    transpose_case c;
    setup(&c, context, rows, cols, dtype_size(params));
    char llvm[320];
    snprintf(llvm, sizeof llvm, "%s backend=llvm", params);
    run_and_check(&c, llvm);
    run_and_check(&c, params);
    teardown(&c);
}

static const char *const smem_configs[] = {
    "variant=smem block=32 batch=8", "variant=smem block=16 batch=1 dtype=f64",
    "variant=smem block=64 batch=8 dtype=f16", "variant=smem block=32 batch=4 group=4",
    /* the template's defaults, whatever they are */
    "variant=smem",
};
static const char *const tma_configs[] = {
    "variant=tma block=32", "variant=tma block=16 dtype=f64", "variant=tma block=32 dtype=f16 group=8",
    "variant=tma_swizzle block=32 swizzle=128B", "variant=tma_swizzle block=32 swizzle=32B dtype=f16",
    "variant=tma_swizzle swizzle=64B block=16 dtype=f64", "variant=tma_swizzle block=32 swizzle=none",
    "variant=tma", "variant=tma_swizzle",
};
static const char *const batched_configs[] = {
    "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar",
    "variant=tma_batched block=32 batch=4 swizzle=64B xpose=scalar",
    "variant=tma_batched dtype=f16 block=64 batch=16 swizzle=128B xpose=scalar",
    "variant=tma_batched dtype=f64 block=32 batch=2 swizzle=none xpose=scalar",
    "variant=tma_batched block=32 swizzle=128B xpose=vector batch=16",
    "variant=tma_batched xpose=vector swizzle=128B dtype=f16 block=64 batch=64",
    "variant=tma_batched xpose=vector swizzle=128B dtype=f64 block=64 batch=64",
    "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar group=16",
    "variant=tma_batched block=64 batch=16 xpose=diagonal swizzle=none",
    "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar inplace=1",
    "variant=tma_batched block=32 swizzle=128B xpose=vector batch=16 inplace=1",
    "variant=tma_batched block=64 batch=16 xpose=diagonal swizzle=none inplace=1",
    "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar stages=1",
    "variant=tma_batched block=64 batch=16 swizzle=none xpose=diagonal stages=2 group=4",
    "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar stages=3",
    "variant=tma_batched block=128 batch=16 rows=64 swizzle=none xpose=diagonal",
    "variant=tma_batched block=64 rows=8 swizzle=none batch=4 xpose=scalar",
    "variant=tma_batched",
};

static void compare_all(const char *const *configs, size_t count, int any_shape, const char *test)
{
    ptxjit_context *context = test_gpu_context(test);
    if (!context)
        return;
    for (size_t i = 0; i < count; i++) {
        /* Not a multiple of any tile; the TMA variants need 16-byte rows both ways. */
        if (any_shape)
            compare(context, configs[i], 333, 517);
        compare(context, configs[i], 1000, 776);
        compare(context, configs[i], 2048, 4096);
    }
    ptxjit_close(context);
}

START_TEST(llvm_smem_transpose_matches_nvrtc_and_cpu)
{
    compare_all(smem_configs, PJ_ARRAY_SIZE(smem_configs), 1, "llvm transpose smem");
}
END_TEST

START_TEST(llvm_tma_transposes_match_nvrtc_and_cpu)
{
    compare_all(tma_configs, PJ_ARRAY_SIZE(tma_configs), 0, "llvm transpose tma");
}
END_TEST

START_TEST(llvm_tma_batched_transposes_match_nvrtc_and_cpu)
{
    compare_all(batched_configs, PJ_ARRAY_SIZE(batched_configs), 0, "llvm transpose tma_batched");
}
END_TEST

Suite *suite_llvm_transpose_gpu(void)
{
    Suite *s = suite_create("llvm_transpose_gpu");
    TCase *tc = tcase_create("llvm_vs_nvrtc");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, llvm_smem_transpose_matches_nvrtc_and_cpu);
    tcase_add_test(tc, llvm_tma_transposes_match_nvrtc_and_cpu);
    tcase_add_test(tc, llvm_tma_batched_transposes_match_nvrtc_and_cpu);
    suite_add_tcase(s, tc);
    return s;
}

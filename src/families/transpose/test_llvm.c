/* test_llvm.c — the transpose generator without a GPU: every request the schema allows (its
 * core parameters in full, the others rotated through their values) becomes PTX that
 * nvJitLink turns into an sm_90a cubin; each variant's kernel has the template's signature,
 * launch bound and TMA traffic (checked against the NVRTC kernel's PTX), and the instructions
 * the variant is about. */
#include <stdio.h>
#include <string.h>

#include "request/context.h"
#include "llvm_util.h"

static ptxjit_kernel *compile(ptxjit_context *context, const char *params)
{
    return test_compile(context, "transpose", params);
}

static int valid(ptxjit_context *context, const char *params)
{
    return test_valid(context, "transpose", params);
}

static int has_param(ptxjit_context *context, const char *name)
{
    const pj_schema *schema;
    ck_assert_int_eq(pj_context_schema(&schema, context, "transpose"), PTXJIT_OK);
    return pj_schema_param_index(schema, name) >= 0;
}

/* Appends each of words ("inplace=0 stages=0") that keeps params valid: the knobs a template
 * version has, set where they apply. */
static void append_valid(ptxjit_context *context, char *params, size_t size, const char *words)
{
    char word[64];
    for (const char *s = words; *s;) {
        size_t length = strcspn(s, " ");
        snprintf(word, sizeof word, "%.*s", (int)length, s);
        char longer[600];
        snprintf(longer, sizeof longer, "%s %s", params, word);
        if (valid(context, longer))
            snprintf(params, size, "%.*s", (int)size - 1, longer);
        s += length + (s[length] == ' ');
    }
}

/* The template's extra knobs, where it has them, rotated by index i through their values. */
static void add_extras(ptxjit_context *context, char *params, size_t size, int i)
{
    static const char *const extras[][6] = {
        {"group", "1", "2", "8", "64", NULL},
        {"inplace", "0", "1", NULL},          {"stages", "0", "1", "2", "3", "4"},
        {"rows", "0", "8", "64", "256", NULL},
    };
    for (size_t e = 0; e < PJ_ARRAY_SIZE(extras); e++) {
        if (!has_param(context, extras[e][0]))
            continue;
        int values = 0;
        while (values < 5 && extras[e][values + 1])
            values++;
        char longer[600];
        snprintf(longer, sizeof longer, "%s %s=%s", params, extras[e][0],
                 extras[e][1 + (i + (int)e) % values]);
        if (valid(context, longer))
            snprintf(params, size, "%.*s", (int)size - 1, longer);
    }
}

START_TEST(every_transpose_request_becomes_an_sm_90a_cubin)
{
    static const char *const variants[] = {"smem", "tma", "tma_swizzle", "tma_batched"};
    static const char *const swizzles[] = {"none", "32B", "64B", "128B"};
    static const char *const dtypes[] = {"f32", "f16", "bf16", "f64"};
    static const char *const xposes[] = {"scalar", "diagonal", "vector"};
    ptxjit_context *context = test_open_sm_90a(NULL);
    int kernels = 0, index = 0, requests = 0;
    for (int v = 0; v < 4; v++)
        for (int block = 8; block <= 256; block *= 2)
            for (int batch = 1; batch <= 64; batch *= 2)
                for (int s = 0; s < 4; s++)
                    for (int d = 0; d < 4; d++)
                        for (int x = 0; x < 3; x++) {
                            char params[512];
                            int length = snprintf(params, sizeof params,
                                                  "backend=llvm variant=%s block=%d dtype=%s",
                                                  variants[v], block, dtypes[d]);
                            if (v == 0 || v == 3)
                                length += snprintf(params + length, sizeof params - (size_t)length,
                                                   " batch=%d", batch);
                            if (v >= 2)
                                length += snprintf(params + length, sizeof params - (size_t)length,
                                                   " swizzle=%s", swizzles[s]);
                            if (v == 3)
                                snprintf(params + length, sizeof params - (size_t)length,
                                         " xpose=%s", xposes[x]);
                            /* Parameters a variant lacks are not varied: one request each. */
                            if ((v != 0 && v != 3 && batch > 1) || (v < 2 && s) || (v != 3 && x) ||
                                !valid(context, params))
                                continue;
                            add_extras(context, params, sizeof params, index++);
                            if (!test_sweep_takes((size_t)requests++))
                                continue;
                            ptxjit_kernel *kernel = compile(context, params);
                            size_t size = 0;
                            const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &size);
                            ck_assert_msg(cubin && size > 4 && memcmp(cubin, "\177ELF", 4) == 0,
                                          "%s: no cubin", params);
                            ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel),
                                                         ".entry transpose_kernel("));
                            kernels++;
                        }
    ck_assert_int_gt(requests, 200);
    ck_assert_int_eq(kernels, test_sweep_taken((size_t)requests));
    printf("llvm transpose sweep: %d kernels of %d requests\n", kernels, requests);
    ptxjit_close(context);
}
END_TEST

/* The LLVM kernel and the template's agree on what the host op relies on and on the TMA
 * traffic: parameters, launch bound, boxes loaded and stored, barrier waits. */
static void same_shape_as_nvrtc(ptxjit_context *context, const char *request)
{
    char params[512], llvm_params[600];
    snprintf(params, sizeof params, "%s", request);
    append_valid(context, params, sizeof params, "inplace=0 stages=0 rows=0");
    snprintf(llvm_params, sizeof llvm_params, "%s backend=llvm", params);
    const char *ours = ptxjit_kernel_ptx(compile(context, llvm_params));
    const char *theirs = ptxjit_kernel_ptx(compile(context, params));
    long our_bound = test_number_after(ours, ".maxntid ");
    long their_bound = test_number_after(theirs, ".maxntid ");
    ck_assert_msg(our_bound == their_bound, "%s: .maxntid %ld against %ld", params, our_bound,
                  their_bound);
    static const char *const same[] = {
        ".param .align 64 .b8 transpose_kernel_param_4[128]",
        ".param .align 64 .b8 transpose_kernel_param_5[128]",
        "cp.async.bulk.tensor.2d.shared::cluster.global",
        "cp.async.bulk.tensor.2d.global.shared::cta",
        "mbarrier.try_wait.parity",
        "mbarrier.init",
        "fence.proxy.async.shared::cta",
        "cp.async.bulk.wait_group.read",
        ".extern .shared",
    };
    /* Persistent blocks issue their first loads in a loop that one compiler may unroll and
     * the other not: there only presence must agree. */
    int exact = !strstr(params, "stages=") || strstr(params, "stages=0");
    for (size_t i = 0; i < PJ_ARRAY_SIZE(same); i++) {
        int a = test_count(ours, same[i]), b = test_count(theirs, same[i]);
        ck_assert_msg(exact ? a == b : (a > 0) == (b > 0),
                      "%s: '%s' %d times, the template's kernel %d", params, same[i], a, b);
    }
    /* The maps are read in place (__grid_constant__), never copied to local memory. */
    ck_assert_msg(!strstr(ours, ".local"), "%s: local memory", params);
}

START_TEST(each_variant_has_the_template_kernels_signature_bound_and_tma_traffic)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    static const char *const configs[] = {
        "variant=smem block=32 batch=8", "variant=smem block=64 batch=4 dtype=f16",
        "variant=tma block=32", "variant=tma block=16 dtype=f64",
        "variant=tma_swizzle block=32 swizzle=32B",
        "variant=tma_swizzle swizzle=64B block=32 dtype=bf16",
        "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar",
        "variant=tma_batched block=32 swizzle=none batch=4 xpose=scalar",
        "variant=tma_batched block=32 xpose=vector swizzle=128B batch=16",
        "variant=tma_batched xpose=vector swizzle=128B dtype=f16 batch=64 block=64",
        "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar group=8",
        "variant=tma_swizzle block=32 swizzle=128B group=4",
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(configs); i++)
        same_shape_as_nvrtc(context, configs[i]);
    /* The template's later knobs, where it has them. */
    static const char *const later[][2] = {
        {"stages", "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar stages=2"},
        {"stages", "variant=tma_batched block=64 batch=16 swizzle=none stages=3 group=4"},
        {"inplace", "variant=tma_batched block=32 batch=8 swizzle=128B xpose=scalar inplace=1"},
        {"inplace", "variant=tma_batched block=32 batch=16 swizzle=128B xpose=vector inplace=1"},
        {"rows", "variant=tma_batched block=128 batch=16 rows=64 swizzle=none"},
        {"rows", "variant=tma_batched block=64 batch=4 rows=16 swizzle=none xpose=scalar"},
        {"xpose", "variant=tma_batched block=64 batch=16 xpose=diagonal swizzle=none"},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(later); i++) {
        char params[512];
        snprintf(params, sizeof params, "%s", later[i][1]);
        /* Each knob on its own: the others at their neutral values. */
        append_valid(context, params, sizeof params, "inplace=0 stages=0 rows=0");
        if (has_param(context, later[i][0]) && valid(context, params))
            same_shape_as_nvrtc(context, params);
    }
    ptxjit_close(context);
}
END_TEST

START_TEST(variants_hold_the_instructions_they_are_about)
{
    ptxjit_context *context = test_open_sm_90a(NULL);
    const char *smem = ptxjit_kernel_ptx(compile(context, "backend=llvm variant=smem block=32"));
    ck_assert_ptr_nonnull(strstr(smem, "ld.global.nc.u32"));
    ck_assert_int_eq(test_count(smem, "bar.sync"), 1);
    ck_assert_ptr_null(strstr(smem, "cp.async.bulk"));
    ptxjit_kernel *tma = compile(context, "backend=llvm variant=tma block=32");
    const char *ir = ptxjit_kernel_source(tma);
    ck_assert_ptr_nonnull(strstr(ir, "byval([128 x i8]) align 64 %in_map"));
    ck_assert_ptr_nonnull(strstr(ir, "!\"grid_constant\""));
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(tma), "cvta.param.u64"));
    ck_assert_int_eq(test_count(ptxjit_kernel_ptx(tma), "cp.async.bulk.tensor.2d"), 2);
    /* 32-byte swizzle, rows of 32 f16 (64 bytes): two 32-byte boxes each way. */
    const char *swizzled = ptxjit_kernel_ptx(
        compile(context, "backend=llvm variant=tma_swizzle block=32 swizzle=32B dtype=f16"));
    ck_assert_int_eq(test_count(swizzled, "cp.async.bulk.tensor.2d"), 4);
    char params[512] = "backend=llvm variant=tma_batched block=32 swizzle=128B xpose=vector batch=16";
    append_valid(context, params, sizeof params, "inplace=0 stages=0 rows=0");
    const char *vector = ptxjit_kernel_ptx(compile(context, params));
    ck_assert_int_eq(test_count(vector, "ld.shared.v4.u32"), 4);
    ck_assert_int_eq(test_count(vector, "st.shared.v4.u32"), 4);
    ptxjit_close(context);
}
END_TEST

Suite *suite_llvm_transpose(void)
{
    Suite *s = suite_create("llvm_transpose");
    /* Both routes for each variant: valgrind-llvm leaves it out by its tag, as for matmul. */
    TCase *against = tcase_create("against_template");
    tcase_set_tags(against, "ptx_content");
    tcase_set_timeout(against, 120);
    tcase_add_test(against, each_variant_has_the_template_kernels_signature_bound_and_tma_traffic);
    suite_add_tcase(s, against);
    TCase *tc = tcase_create("generator");
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    TCase *sweep = tcase_create("sweep");
    tcase_set_tags(sweep, "sweep"); /* CI's plain run leaves the whole sweep out (mk/hardening.mk) */
    tcase_set_timeout(sweep, 600);
    tcase_add_test(sweep, every_transpose_request_becomes_an_sm_90a_cubin);
    suite_add_tcase(s, sweep);
    TCase *many = test_many_compiles_case(s, 120);
    tcase_add_test(many, variants_hold_the_instructions_they_are_about);
    return s;
}

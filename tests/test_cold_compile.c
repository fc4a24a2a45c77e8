/* test_cold_compile.c — what makes cold compiles cheaper without changing code: each half
 * header included once, the `nvrtc half_storage` storage types (conversions compiled to the
 * same cubin as the toolkit headers', the pre-sm_80 bf16 rounding checked on the host over
 * every bf16 and the special floats), `nvrtc minimal` reaching NVRTC, and the bench's extra
 * option changing the key. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compilers/nvrtc.h"
#include "request/half_storage.h"
#include "request/context.h"
#include "test_util.h"

static int count_of(const char *text, const char *needle)
{
    int count = 0;
    size_t length = strlen(needle);
    for (size_t i = 0; text[i]; i++)
        count += strncmp(text + i, needle, length) == 0;
    return count;
}

static char *specialized(ptxjit_context *context, const char *family, const char *params)
{
    char *source = NULL;
    ck_assert_msg(ptxjit_specialize(&source, context, family, params) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    return source;
}

/* Two dtype parameters set to the same half type include its header once. */
START_TEST(prelude_includes_each_half_header_once)
{
    ptxjit_context *context = test_open_offline(NULL);
    ck_assert_int_eq(ptxjit_add_template(context, "two.cu",
                                         "//@ptxjit family two\n//@ptxjit entry k\n"
                                         "//@ptxjit param a dtype(f32,bf16,f16) default=bf16\n"
                                         "//@ptxjit param b dtype(f32,bf16,f16) default=bf16\n"
                                         "extern \"C\" __global__ void k(A *x, B *y) {}\n"),
                     PTXJIT_OK);
    char *source = specialized(context, "two", "");
    ck_assert_int_eq(count_of(source, "#include <cuda_bf16.h>"), 1);
    ck_assert_int_eq(count_of(source, "#include <cuda_fp16.h>"), 0);
    free(source);
    source = specialized(context, "two", "a=f16 b=bf16");
    ck_assert_int_eq(count_of(source, "#include <cuda_bf16.h>"), 1);
    ck_assert_int_eq(count_of(source, "#include <cuda_fp16.h>"), 1);
    free(source);
    ptxjit_close(context);
}
END_TEST

/* The built-in templates that declare half_storage get the storage types, no header. */
START_TEST(half_storage_templates_parse_no_half_header)
{
    ptxjit_context *context = test_open_offline(NULL);
    static const char *const requests[][2] = {
        {"matmul", "variant=wgmma dtype=bf16"}, {"matmul", "variant=wgmma dtype=f16"},
        {"transpose", "dtype=bf16"},            {"softmax", "dtype=f16"}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(requests); i++) {
        char *source = specialized(context, requests[i][0], requests[i][1]);
        ck_assert_msg(!strstr(source, "#include <cuda_"), "%s %s includes a half header",
                      requests[i][0], requests[i][1]);
        ck_assert_msg(strstr(source, "struct alignas(2) __nv_bfloat16") ||
                          strstr(source, "struct alignas(2) __half"),
                      "%s %s: no storage type", requests[i][0], requests[i][1]);
        free(source);
    }
    ptxjit_close(context);
}
END_TEST

/* Conversions both ways, at every dtype, as a template would write them (calls with a
 * dependent argument, so that the branch not taken names nothing undeclared). */
#define CONVERT_BODY                                                                         \
    "//@ptxjit entry convert\n"                                                              \
    "//@ptxjit param dtype dtype(f16,bf16) default=f16\n"                                    \
    "template <typename F> __device__ DTYPE from_float(F f) {\n"                            \
    "    if constexpr (DTYPE_ID == DTYPE_F16) return __float2half(f);\n"                     \
    "    else return __float2bfloat16(f); }\n"                                               \
    "template <typename T> __device__ float to_float(T h) {\n"                               \
    "    if constexpr (DTYPE_ID == DTYPE_F16) return __half2float(h);\n"                     \
    "    else return __bfloat162float(h); }\n"                                               \
    "template <typename F> __device__ DTYPE rounded(F f) {\n"                               \
    "    if constexpr (DTYPE_ID == DTYPE_F16) return __float2half_rn(f);\n"                  \
    "    else return __float2bfloat16_rn(f); }\n"                                            \
    "extern \"C\" __global__ void convert(const float *in, DTYPE *out, DTYPE *out_rn,\n"     \
    "                                     const DTYPE *h, float *back, int n) {\n"           \
    "    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"                                   \
    "    if (i < n) { out[i] = from_float(in[i]); out_rn[i] = rounded(in[i]);  \n" \
    "                 back[i] = to_float<DTYPE>(h[i]); }\n"                                  \
    "}\n"

static const void *cubin_of(ptxjit_context *context, const char *family, const char *params,
                            size_t *size)
{
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK,
                  "%s %s: %s", family, params, ptxjit_last_error());
    return ptxjit_kernel_cubin(kernel, size);
}

/* The storage types' conversions are the headers' instructions: the same kernel compiled
 * with the headers and with the storage types gives the same cubin, byte for byte, at each
 * architecture where the headers take a different path (sm_75: bf16 rounding in integer
 * code; sm_80: cvt.rn.bf16.f32 and bf16 -> f32 by mov; sm_90a: cvt.f32.bf16 as well). So the
 * numerics on the GPU are the headers' exactly. */
START_TEST(half_storage_conversions_compile_to_the_headers_cubin)
{
    static const char *const arches[] = {"sm_75", "sm_80", "sm_90a"};
    for (size_t a = 0; a < PJ_ARRAY_SIZE(arches); a++) {
        ptxjit_context *context = test_open_offline(arches[a]);
        ck_assert_int_eq(ptxjit_add_template(context, "headers.cu",
                                             "//@ptxjit family headers\n" CONVERT_BODY),
                         PTXJIT_OK);
        ck_assert_int_eq(ptxjit_add_template(context, "storage.cu",
                                             "//@ptxjit family storage\n"
                                             "//@ptxjit nvrtc half_storage\n" CONVERT_BODY),
                         PTXJIT_OK);
        static const char *const dtypes[] = {"dtype=f16", "dtype=bf16"};
        for (size_t d = 0; d < PJ_ARRAY_SIZE(dtypes); d++) {
            size_t header_size = 0, storage_size = 0;
            const void *header = cubin_of(context, "headers", dtypes[d], &header_size);
            const void *storage = cubin_of(context, "storage", dtypes[d], &storage_size);
            ck_assert_msg(header_size == storage_size && memcmp(header, storage, header_size) == 0,
                          "%s %s: the storage types' cubin (%zu bytes) differs from the "
                          "headers' (%zu bytes)",
                          arches[a], dtypes[d], storage_size, header_size);
        }
        ptxjit_close(context);
    }
}
END_TEST

static uint32_t float_bits(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

static double bf16_value(uint32_t bits16)
{
    if ((bits16 & 0x7fffu) == 0x7f80u) /* infinity, as a number beyond the largest bf16 */
        return (bits16 & 0x8000u ? -1 : 1) * ldexp(1.0, 128);
    uint32_t x = bits16 << 16;
    float f;
    memcpy(&f, &x, sizeof f);
    return f;
}

/* An independent round-to-nearest-even: the two bf16 neighbours of f compared in double. */
static uint32_t bf16_reference(float f)
{
    uint32_t x = float_bits(f);
    if (isnan(f))
        return 0x7fffu;
    uint32_t low = x >> 16, high = low + 1; /* same sign, next magnitude */
    if ((x & 0xffffu) == 0)
        return low;
    double below = fabs((double)f - bf16_value(low)), above = fabs(bf16_value(high) - (double)f);
    if (below != above)
        return below < above ? low : high;
    return low & 1u ? high : low;
}

static uint32_t round_bits(uint32_t x)
{
    unsigned short r;
    PJ_BF16_ROUND(x, r);
    return r;
}

/* The pre-sm_80 rounding that the storage prelude compiles, run on the host: every bf16
 * comes back as itself (NaNs as 0x7fff), special floats and ties round as the reference, and
 * floats across the whole range (every 65521st bit pattern) too. */
START_TEST(bf16_rounding_bits_match_round_to_nearest_even)
{
    for (uint32_t b = 0; b <= 0xffffu; b++) {
        uint32_t x = b << 16;
        uint32_t expected = ((b & 0x7f80u) == 0x7f80u && (b & 0x7fu)) ? 0x7fffu : b;
        ck_assert_uint_eq(round_bits(x), expected);
    }
    static const uint32_t specials[] = {
        0x00000000u, 0x80000000u, 0x00000001u, 0x00008000u, 0x00018000u, 0x0000ffffu,
        0x007fffffu, 0x80008000u, 0x3f808000u, 0x3f818000u, 0x3f808001u, 0x3f807fffu,
        0x7f7f7fffu, 0x7f7f8000u, 0x7f7fffffu, 0xff7f8000u, 0x7f800000u, 0xff800000u,
        0x7f800001u, 0x7fc00000u, 0xffc00000u, 0x7fffffffu, 0xff800001u, 0x3effffffu};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(specials); i++) {
        float f;
        memcpy(&f, &specials[i], sizeof f);
        uint32_t x = specials[i];
        ck_assert_msg(round_bits(x) == bf16_reference(f), "0x%08x: 0x%04x, expected 0x%04x",
                      specials[i], (unsigned)round_bits(x), (unsigned)bf16_reference(f));
    }
    for (uint64_t x64 = 0; x64 <= 0xffffffffu; x64 += 65521u) {
        uint32_t x = (uint32_t)x64;
        float f;
        memcpy(&f, &x, sizeof f);
        ck_assert_msg(round_bits(x) == bf16_reference(f), "0x%08x", x);
    }
}
END_TEST

START_TEST(nvrtc_directive_takes_only_its_words)
{
    ptxjit_context *context = test_open_offline(NULL);
    ck_assert_int_eq(ptxjit_add_template(context, "bad.cu",
                                         "//@ptxjit family bad\n//@ptxjit entry k\n"
                                         "//@ptxjit nvrtc fast\n"
                                         "extern \"C\" __global__ void k() {}\n"),
                     PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "half_storage, minimal"));
    ck_assert_int_eq(ptxjit_add_template(context, "empty.cu",
                                         "//@ptxjit family empty\n//@ptxjit entry k\n"
                                         "//@ptxjit nvrtc\n"
                                         "extern \"C\" __global__ void k() {}\n"),
                     PTXJIT_ERR_TEMPLATE);
    ptxjit_close(context);
}
END_TEST

/* -minimal reaches NVRTC: it leaves out the runtime's types, so a template that names one
 * compiles without the directive and fails with it (NVRTC 12.4+, which this toolkit is). */
START_TEST(nvrtc_minimal_reaches_the_compiler)
{
    ptxjit_context *context = test_open_offline(NULL);
#define USES_RUNTIME_TYPE                                                                    \
    "//@ptxjit entry k\nextern \"C\" __global__ void k(int *out) { cudaError_t e = "         \
    "cudaSuccess; *out = (int)e; }\n"
    ck_assert_int_eq(ptxjit_add_template(context, "full.cu",
                                         "//@ptxjit family full\n" USES_RUNTIME_TYPE),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_add_template(context, "minimal.cu",
                                         "//@ptxjit family minimal\n//@ptxjit nvrtc minimal\n"
                                         USES_RUNTIME_TYPE),
                     PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "full", "", NULL) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "minimal", "", NULL),
                     PTXJIT_ERR_COMPILE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "cudaError_t"));
    ptxjit_close(context);
}
END_TEST

/* The bench's extra NVRTC option (ofc=mid) is one of the compile's arguments: another key. */
START_TEST(extra_nvrtc_option_changes_the_key)
{
    ptxjit_context *plain = test_open_offline(NULL), *fast = test_open_offline(NULL);
    ptxjit_kernel *a, *b;
    ck_assert_int_eq(ptxjit_get_kernel(&a, plain, "reduce", "", NULL), PTXJIT_OK);
    pj_nvrtc_set_extra_option("-Ofc=mid");
    ptxjit_status status = ptxjit_get_kernel(&b, fast, "reduce", "", NULL);
    pj_nvrtc_set_extra_option(NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s", ptxjit_last_error());
    ck_assert_str_ne(ptxjit_kernel_key(a), ptxjit_kernel_key(b));
    ptxjit_close(plain);
    ptxjit_close(fast);
}
END_TEST

/* `nvrtc fast_compile=LEVEL` takes min, mid or max, once; a template that says it compiles
 * with -Ofc=LEVEL: another key and another cubin than the same text without the word. */
START_TEST(nvrtc_fast_compile_reaches_the_compiler)
{
    ptxjit_context *context = test_open_offline(NULL);
#define FAST_KERNEL                                                                          \
    "//@ptxjit entry k\nextern \"C\" __global__ void k(float *out, const float *in, int n) " \
    "{ float s = 0; for (int i = 0; i < n; i++) s += in[i] * in[(i * 7) % n]; *out = s; }\n"
    const char *refused[] = {"//@ptxjit nvrtc fast_compile=fast\n",
                             "//@ptxjit nvrtc fast_compile=mid fast_compile=max\n",
                             "//@ptxjit nvrtc fast_compile\n"};
    for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
        char text[1024];
        snprintf(text, sizeof text, "//@ptxjit family bad\n%s%s", refused[i], FAST_KERNEL);
        ck_assert_int_eq(ptxjit_add_template(context, "bad.cu", text), PTXJIT_ERR_TEMPLATE);
        ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "fast_compile=min|mid|max"));
    }
    ck_assert_int_eq(ptxjit_add_template(context, "slow.cu", "//@ptxjit family slow\n" FAST_KERNEL),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_add_template(context, "fast.cu",
                                         "//@ptxjit family fast\n"
                                         "//@ptxjit nvrtc minimal fast_compile=max\n" FAST_KERNEL),
                     PTXJIT_OK);
    const pj_schema *schema = NULL;
    ck_assert_int_eq(pj_context_schema(&schema, context, "fast"), PTXJIT_OK);
    ck_assert_int_eq(schema->nvrtc_fast_compile, 3);
    ck_assert_int_eq(schema->nvrtc_minimal, 1);
    ptxjit_kernel *slow, *fast;
    ck_assert_msg(ptxjit_get_kernel(&slow, context, "slow", "", NULL) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    ck_assert_msg(ptxjit_get_kernel(&fast, context, "fast", "", NULL) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    size_t slow_size = 0, fast_size = 0;
    const void *slow_cubin = ptxjit_kernel_cubin(slow, &slow_size);
    const void *fast_cubin = ptxjit_kernel_cubin(fast, &fast_size);
    ck_assert(slow_size != fast_size || memcmp(slow_cubin, fast_cubin, slow_size) != 0);
    ptxjit_close(context);
}
END_TEST

Suite *suite_cold_compile(void)
{
    Suite *suite = suite_create("cold_compile");
    TCase *tc = tcase_create("prelude");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, prelude_includes_each_half_header_once);
    tcase_add_test(tc, half_storage_templates_parse_no_half_header);
    tcase_add_test(tc, bf16_rounding_bits_match_round_to_nearest_even);
    tcase_add_test(tc, nvrtc_directive_takes_only_its_words);
    suite_add_tcase(suite, tc);
    tc = tcase_create("compiles");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, nvrtc_minimal_reaches_the_compiler);
    suite_add_tcase(suite, tc);
    TCase *many = test_many_compiles_case(suite, 240);
    tcase_add_test(many, half_storage_conversions_compile_to_the_headers_cubin);
    tcase_add_test(many, extra_nvrtc_option_changes_the_key);
    tcase_add_test(many, nvrtc_fast_compile_reaches_the_compiler);
    return suite;
}

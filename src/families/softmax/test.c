/* test.c — the softmax family without a GPU: the schema against the shape header (variants,
 * defaults, every constraint's message), the op's checks of shapes and buffers, the launch
 * geometry, the float64 reference and the element conversions on known values, a CPU model of
 * the kernels' work split and merges in fp32, and the PTX of each variant and dtype through
 * NVRTC and LLVM with the instructions it is about. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "request/context.h"
#include "families/softmax/op.h"
#include "test_util.h"

static void expect_refused(const char *params, const char *needle, const char *arch)
{
    test_expect_refused("softmax", params, needle, arch);
}

static void expect_canonical(ptxjit_context *context, const char *params, const char *want)
{
    char *canonical = NULL;
    ck_assert_msg(ptxjit_canonical_params(&canonical, context, "softmax", params) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    ck_assert_str_eq(canonical, want);
    free(canonical);
}

static softmax_config config_of(const char *params)
{
    ptxjit_context *context = test_open_offline(NULL);
    pj_request request;
    const pj_schema *schema;
    ck_assert_int_eq(pj_context_schema(&schema, context, "softmax"), PTXJIT_OK);
    ck_assert_msg(pj_request_parse(&request, schema, params, 90) == PTXJIT_OK, "%s: %s", params,
                  ptxjit_last_error());
    softmax_config config;
    ck_assert_int_eq(pj_softmax_config_from(&config, &request), PTXJIT_OK);
    pj_request_free(&request);
    ptxjit_close(context);
    return config;
}

START_TEST(softmax_schema_is_the_shape_headers)
{
    ptxjit_context *context = test_open_offline(NULL);
    const pj_schema *schema;
    ck_assert_int_eq(pj_context_schema(&schema, context, "softmax"), PTXJIT_OK);
    int index = pj_schema_param_index(schema, "variant");
    ck_assert_int_ge(index, 0);
    char variants[128] = "";
    for (int v = 0; v < schema->params[index].value_count; v++)
        snprintf(variants + strlen(variants), sizeof variants - strlen(variants), "%s%s",
                 v ? "," : "", schema->params[index].values[v]);
    ck_assert_str_eq(variants, PJ_VARIANT_LIST_TEXT(PJ_SOFTMAX_VARIANTS));
    ck_assert_str_eq(pj_family_softmax.variants, variants);
    ck_assert_str_eq(pj_family_softmax.llvm_variants, variants);
    ck_assert_int_eq(pj_family_softmax.llvm_version, PJ_SOFTMAX_LLVM_VERSION);
    ck_assert_int_eq(schema->entry_count, 1);
    ck_assert_str_eq(schema->entries[0], "softmax_kernel");
    ptxjit_close(context);
}
END_TEST

/* The defaults (the best measured at 1024 to 4096 on the H100) hold rows of 4096 elements in
 * 16-byte vectors: f32 a row per 128-thread block, f16/bf16 four rows of 64 threads per block;
 * block walks rows with 1024 threads. A tpb alone brings tpr down with it. */
START_TEST(softmax_defaults)
{
    ptxjit_context *context = test_open_offline(NULL);
    expect_canonical(context, "", "dtype=f32 items=8 tpb=128 tpr=128 variant=online vec=4");
    expect_canonical(context, "dtype=bf16", "dtype=bf16 items=8 tpb=256 tpr=64 variant=online "
                                            "vec=8");
    expect_canonical(context, "dtype=f16 variant=block",
                     "dtype=f16 items=2 tpb=1024 tpr=1024 variant=block vec=8");
    expect_canonical(context, "variant=block", "dtype=f32 items=4 tpb=1024 tpr=1024 "
                                               "variant=block vec=4");
    expect_canonical(context, "dtype=f16 vec=2", "dtype=f16 items=8 tpb=256 tpr=64 "
                                                 "variant=online vec=2");
    expect_canonical(context, "tpb=64", "dtype=f32 items=8 tpb=64 tpr=64 variant=online vec=4");
    expect_canonical(context, "tpb=32 dtype=bf16", "dtype=bf16 items=8 tpb=32 tpr=32 "
                                                   "variant=online vec=8");
    expect_canonical(context, "variant=block tpb=256", "dtype=f32 items=4 tpb=256 tpr=256 "
                                                       "variant=block vec=4");
    ptxjit_close(context);
    softmax_config config = config_of("");
    ck_assert_int_eq(config.shape.variant, SOFTMAX_ONLINE);
    ck_assert_int_eq(config.dtype, PJ_DTYPE_f32);
    ck_assert_uint_eq(pj_softmax_max_cols(&config.shape), 4096);
    config = config_of("dtype=bf16");
    ck_assert_uint_eq(pj_softmax_max_cols(&config.shape), 4096);
    ck_assert_int_eq(config.shape.element_bytes, 2);
    ck_assert_int_eq(pj_softmax_held_registers(&config.shape), 32); /* 64 bf16, two a register */
}
END_TEST

START_TEST(softmax_constraints_fail_early_with_the_fix)
{
    expect_refused("tpb=128 tpr=256", "must not exceed tpb", NULL);
    expect_refused("dtype=f32 vec=8", "vec <= 4 for f32", NULL);
    expect_refused("dtype=bf16 items=9", "at most 128 bytes of them", NULL);
    expect_refused("items=9", "use variant=block", NULL);
    expect_refused("dtype=bf16", "need sm_80 or newer; use dtype=f32", "sm_75");
    expect_refused("dtype=f16", "cvt.rn.f16x2.f32", "sm_75");
    expect_refused("tpb=48", "power of two", NULL);
    expect_refused("tpr=0", "tpr", NULL);
    expect_refused("items=0", "items", NULL);
    expect_refused("vec=3", "power of two", NULL);
    expect_refused("dtype=f64", "f32, f16, bf16", NULL);
    expect_refused("variant=warp", "block, online", NULL);
    /* f32 on an older GPU is fine. */
    ptxjit_context *context = test_open_offline("sm_75");
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "softmax", "variant=block"),
                     PTXJIT_OK);
    free(canonical);
    ptxjit_close(context);
}
END_TEST

static void expect_invalid(const softmax_config *config, uint64_t in, uint64_t out, size_t rows,
                           size_t cols, const char *needle)
{
    ck_assert_int_eq(pj_softmax_check(config, in, out, rows, cols), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "'%s' lacks '%s'", ptxjit_last_error(),
                  needle);
}

START_TEST(softmax_op_checks_name_the_fix)
{
    softmax_config config = config_of("");
    const uint64_t a = 0x100000, b = 0x900000;
    ck_assert_int_eq(pj_softmax_check(&config, a, b, 1, 4096), PTXJIT_OK);
    ck_assert_int_eq(pj_softmax_check(&config, a, a, 100, 1), PTXJIT_OK); /* in place */
    ck_assert_int_eq(pj_softmax_check(&config, a + 4, b + 12, 3, 7), PTXJIT_OK);
    expect_invalid(&config, a, b, 0, 5, "at least 1 (got 0 x 5)");
    expect_invalid(&config, a, b, 5, 0, "at least 1");
    expect_invalid(&config, 0, b, 5, 5, "non-null");
    expect_invalid(&config, a + 2, b, 5, 5, "aligned to the 4-byte f32 element");
    expect_invalid(&config, a, b, 1, 4097,
                   "at most tpr * vec * items = 128 * 4 * 8 = 4096 elements, not 4097");
    expect_invalid(&config, a, b, 1, 4097, "use variant=block");
    expect_invalid(&config, a, b, 1, 4097, "tpb=256 tpr=256 items=5");
    expect_invalid(&config, a, b, 1, 16384, "tpb=512 tpr=512 items=8");
    expect_invalid(&config, a, b, 1, 32768, "tpb=1024 tpr=1024 items=8");
    expect_invalid(&config, a, b, 1, 32769, "use variant=block (any length)");
    ck_assert_ptr_null(strstr(ptxjit_last_error(), "tpr=")); /* no register row holds it */
    expect_invalid(&config, a, a + 4, 2, 3, "overlap");
    expect_invalid(&config, a + 8, a, 2, 3, "overlap");
    softmax_config block = config_of("variant=block");
    ck_assert_int_eq(pj_softmax_check(&block, a, a + (1ull << 40), 2, 1 << 24), PTXJIT_OK);
    expect_invalid(&block, a, b, 1, (size_t)1 << 31, "2^31 - 1");
    expect_invalid(&block, a, b, (size_t)1 << 40, 1, "over the grid's limit");
    softmax_config bf16 = config_of("dtype=bf16 tpr=32");
    expect_invalid(&bf16, a + 1, b, 1, 1, "2-byte bf16 element");
    expect_invalid(&bf16, a, b, 1, 2049, "32 * 8 * 8 = 2048 elements, not 2049");
    expect_invalid(&bf16, a, b, 1, 2049, "tpb=256 tpr=64 items=5");
}
END_TEST

START_TEST(softmax_geometry)
{
    softmax_config config = config_of("tpb=256 tpr=32 items=8");
    ck_assert_int_eq(pj_softmax_threads(&config.shape), 256);
    ck_assert_int_eq(pj_softmax_rows_per_block(&config.shape), 8);
    ck_assert_uint_eq(pj_softmax_grid(&config.shape, 129), 17);
    ck_assert_uint_eq(pj_softmax_grid(&config.shape, 1), 1);
    ck_assert_uint_eq(pj_softmax_grid(&config.shape, 8), 1);
    ck_assert_uint_eq(pj_softmax_max_cols(&config.shape), 1024);
    ck_assert_uint_eq(pj_softmax_static_shared_bytes(&config.shape), 0); /* shuffles only */
    ck_assert_uint_eq(pj_softmax_shared_bytes(&config.shape), 0);
    config = config_of("tpb=1024 tpr=512 items=8");
    ck_assert_int_eq(pj_softmax_rows_per_block(&config.shape), 2);
    ck_assert_uint_eq(pj_softmax_static_shared_bytes(&config.shape), 2 * 4 * 32);
    ck_assert_uint_eq(pj_softmax_max_cols(&config.shape), 16384);
    config = config_of("variant=block tpr=64 tpb=64");
    ck_assert_uint_eq(pj_softmax_max_cols(&config.shape), PJ_SOFTMAX_MAX_COLS);
    ck_assert_uint_eq(pj_softmax_grid(&config.shape, 1000003), 1000003);
    /* The vector path: rows a multiple of vec and both buffers aligned to a vector. */
    config = config_of("");
    ck_assert(pj_softmax_vector_path(&config.shape, 0x1000, 0x2000, 4096));
    ck_assert(!pj_softmax_vector_path(&config.shape, 0x1000, 0x2000, 4095));
    ck_assert(!pj_softmax_vector_path(&config.shape, 0x1004, 0x2004, 4096));
    ck_assert(!pj_softmax_vector_path(&config.shape, 0x1000, 0x2008, 4096));
    config = config_of("dtype=bf16 vec=2");
    ck_assert(pj_softmax_vector_path(&config.shape, 0x1004, 0x2000, 6));
    ck_assert(!pj_softmax_vector_path(&config.shape, 0x1002, 0x2000, 6));
    config = config_of("vec=1");
    ck_assert(!pj_softmax_vector_path(&config.shape, 0x1000, 0x2000, 4));
    /* The family's hook: the block of the request's main entry. */
    ptxjit_context *context = test_open_offline(NULL);
    const pj_schema *schema;
    ck_assert_int_eq(pj_context_schema(&schema, context, "softmax"), PTXJIT_OK);
    pj_request request;
    ck_assert_int_eq(pj_request_parse(&request, schema, "tpb=512 tpr=64", 90), PTXJIT_OK);
    pj_geometry geometry;
    ck_assert_int_eq(pj_family_softmax.geometry(&geometry, &request), PTXJIT_OK);
    ck_assert_uint_eq(geometry.threads, 512);
    ck_assert_uint_eq(geometry.shared_bytes, 0);
    pj_request_free(&request);
    ptxjit_close(context);
}
END_TEST

START_TEST(softmax_elements_round_to_nearest_even)
{
    uint16_t h[1];
    float f[1];
    struct {
        float value;
        uint16_t bf16, f16;
    } cases[] = {
        {1.0f, 0x3f80, 0x3c00},
        {-2.0f, 0xc000, 0xc000},
        {1.0f + 0x1p-8f, 0x3f80, 0x3c04},           /* bf16 tie: to the even 1.0 */
        {1.0f + 3 * 0x1p-8f, 0x3f82, 0x3c0c},       /* bf16 tie: up to even; f16 exact */
        {1.0f + 0x1p-11f, 0x3f80, 0x3c00},          /* f16 tie: to the even 1.0 */
        {1.0f + 3 * 0x1p-11f, 0x3f80, 0x3c02},      /* f16 tie: up to even */
        {65504.0f, 0x4780, 0x7bff},                 /* the largest f16 (bf16 rounds up) */
        {0x1p-24f, 0x3380, 0x0001},                 /* the smallest f16 subnormal */
        {0x1p-14f - 0x1p-25f, 0x3880, 0x0400},      /* rounds up into the normals */
        {0.0f, 0x0000, 0x0000},
        {-0.0f, 0x8000, 0x8000},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        pj_softmax_set_element(h, PJ_DTYPE_bf16, 0, cases[i].value);
        ck_assert_msg(h[0] == cases[i].bf16, "bf16(%a) = %04x, not %04x", cases[i].value, h[0],
                      cases[i].bf16);
        pj_softmax_set_element(h, PJ_DTYPE_f16, 0, cases[i].value);
        ck_assert_msg(h[0] == cases[i].f16, "f16(%a) = %04x, not %04x", cases[i].value, h[0],
                      cases[i].f16);
        /* And back: exactly the rounded value. */
        double back = pj_softmax_element(h, PJ_DTYPE_f16, 0);
        pj_softmax_set_element(h, PJ_DTYPE_f16, 0, (float)back);
        ck_assert_uint_eq(h[0], cases[i].f16);
    }
    pj_softmax_set_element(f, PJ_DTYPE_f32, 0, 0.1f);
    ck_assert(pj_softmax_element(f, PJ_DTYPE_f32, 0) == (double)0.1f);
    h[0] = 0x7c00;
    ck_assert(isinf(pj_softmax_element(h, PJ_DTYPE_f16, 0)));
    h[0] = 0x3555; /* 0.333251953125 */
    ck_assert(pj_softmax_element(h, PJ_DTYPE_f16, 0) == 0.333251953125);
}
END_TEST

START_TEST(softmax_reference_on_known_values)
{
    const float in[3] = {0.0f, (float)M_LN2, (float)log(3.0)};
    double out[3];
    pj_softmax_reference(out, in, PJ_DTYPE_f32, 3);
    ck_assert_double_eq_tol(out[0], 1.0 / 6, 1e-7);
    ck_assert_double_eq_tol(out[1], 2.0 / 6, 1e-7);
    ck_assert_double_eq_tol(out[2], 3.0 / 6, 1e-7);
    /* The max is subtracted: far from 0 the result is the same, and nothing overflows. */
    const float shifted[3] = {1000.0f, 1000.0f + (float)M_LN2, 1000.0f + (float)log(3.0)};
    double again[3];
    pj_softmax_reference(again, shifted, PJ_DTYPE_f32, 3);
    for (int i = 0; i < 3; i++)
        ck_assert_double_eq_tol(again[i], out[i], 1e-4);
    const float one[1] = {-87.5f};
    pj_softmax_reference(out, one, PJ_DTYPE_f32, 1);
    ck_assert(out[0] == 1.0);
    /* bf16: 2.0 and 0.0 as bits. */
    const uint16_t pair[2] = {0x4000, 0x0000};
    pj_softmax_reference(out, pair, PJ_DTYPE_bf16, 2);
    ck_assert_double_eq_tol(out[0], exp(2.0) / (exp(2.0) + 1), 1e-15);
    softmax_tolerance t = pj_softmax_tolerance(PJ_DTYPE_bf16);
    ck_assert(t.rel > 0x1p-9 && t.rel < 0x1p-7);
    t = pj_softmax_tolerance(PJ_DTYPE_f32);
    ck_assert(t.rel <= 1e-5);
}
END_TEST

/* ---- a CPU model of the kernels: the template's rounds, chunks and merges in fp32 (exp2f for
 * ex2.approx), so that the work split and the merge order are tested without a GPU ---- */

typedef struct {
    int online, tpr, vec, items;
} model;

/* ex2.approx.ftz: 2^x with results under 2^-126 flushed to zero. */
static float model_ex2(float x)
{
    float y = exp2f(x);
    return y < 0x1p-126f ? 0.0f : y;
}

static float model_exponent(float x, float m)
{
    return (x - m) * 1.44269504088896341f;
}

static void model_merge(float *m, float *s, float m2, float s2)
{
    const int mine = *m >= m2;
    const float hi = mine ? *m : m2, lo = mine ? m2 : *m;
    const float s_hi = mine ? *s : s2, s_lo = mine ? s2 : *s;
    *s = fmaf(s_lo, model_ex2(model_exponent(lo, hi)), s_hi);
    *m = hi;
}

/* The row's (max, sum) as every thread ends with it: xor shuffles within segments of up to 32
 * lanes, then over the warps' pairs (lane l of each group takes warp l's pair). */
static void model_merge_row(const model *k, float *m, float *s)
{
    const int segment = k->tpr < 32 ? k->tpr : 32, warps = k->tpr / segment;
    float m2[1024], s2[1024];
    for (int offset = segment / 2; offset > 0; offset /= 2) {
        memcpy(m2, m, sizeof(float) * (size_t)k->tpr);
        memcpy(s2, s, sizeof(float) * (size_t)k->tpr);
        for (int t = 0; t < k->tpr; t++)
            model_merge(&m[t], &s[t], m2[t ^ offset], s2[t ^ offset]);
    }
    if (warps == 1)
        return;
    float pm[32], ps[32];
    for (int w = 0; w < warps; w++)
        pm[w] = m[w * 32], ps[w] = s[w * 32];
    float lm[32], ls[32];
    for (int lane = 0; lane < 32; lane++)
        lm[lane] = pm[lane % warps], ls[lane] = ps[lane % warps];
    for (int offset = warps / 2; offset > 0; offset /= 2) {
        float om[32], os[32];
        memcpy(om, lm, sizeof om);
        memcpy(os, ls, sizeof os);
        for (int lane = 0; lane < 32; lane++)
            model_merge(&lm[lane], &ls[lane], om[lane ^ offset], os[lane ^ offset]);
    }
    for (int lane = 1; lane < 32; lane++)
        ck_assert(lm[lane] == lm[0] && ls[lane] == ls[0]); /* every lane agrees bit for bit */
    for (int t = 0; t < k->tpr; t++)
        m[t] = lm[0], s[t] = ls[0];
}

/* The rounds of a chunk that are thread t's (rounds_in_row). */
static int model_rounds(const model *k, int w, unsigned units, unsigned first, unsigned t,
                        int whole)
{
    const int rounds = k->items * k->vec / w;
    if (whole)
        return rounds;
    const unsigned left = units - first;
    const unsigned mine = t < left ? (left - t + (unsigned)k->tpr - 1) / (unsigned)k->tpr : 0;
    return mine < (unsigned)rounds ? (int)mine : rounds;
}

/* Element index of slot (r, j) of thread t in the chunk at unit first. */
static unsigned model_element(const model *k, int w, unsigned first, unsigned t, int r, int j)
{
    return (first + (unsigned)r * (unsigned)k->tpr + t) * (unsigned)w + (unsigned)j;
}

/* One row through the model: writes out[] and counts the writes of each element. */
static void model_row(const model *k, int w, const float *x, unsigned cols, float *out,
                      int *writes)
{
    const unsigned units = cols / (unsigned)w;
    const int rounds = k->items * k->vec / w;
    const unsigned chunk = (unsigned)k->tpr * (unsigned)rounds;
    float m[1024], s[1024], top[1024];
    float (*held)[32] = calloc((size_t)k->tpr, sizeof *held);
    ck_assert_ptr_nonnull(held);
    if (k->online) {
        ck_assert_uint_le(units, chunk);
        const int whole = w == k->vec && units >= chunk;
        for (unsigned t = 0; t < (unsigned)k->tpr; t++) {
            int mine = model_rounds(k, w, units, 0, t, whole);
            top[t] = -3.40282346638528859812e+38f;
            for (int i = 0; i < mine * w; i++)
                top[t] = fmaxf(top[t], x[model_element(k, w, 0, t, i / w, i % w)]);
            s[t] = 0;
            for (int i = 0; i < mine * w; i++) {
                held[t][i] = model_ex2(model_exponent(x[model_element(k, w, 0, t, i / w, i % w)],
                                                      top[t]));
                s[t] += held[t][i];
            }
            m[t] = top[t];
        }
        model_merge_row(k, m, s);
        for (unsigned t = 0; t < (unsigned)k->tpr; t++) {
            int mine = model_rounds(k, w, units, 0, t, whole);
            float scale = model_ex2(model_exponent(top[t], m[t])) / s[t];
            for (int i = 0; i < mine * w; i++) {
                unsigned e = model_element(k, w, 0, t, i / w, i % w);
                out[e] = held[t][i] * scale;
                writes[e]++;
            }
        }
    } else {
        const unsigned whole_units = w == k->vec ? units / chunk * chunk : 0;
        for (unsigned t = 0; t < (unsigned)k->tpr; t++) {
            float lost = 0;
            m[t] = -3.40282346638528859812e+38f;
            s[t] = 0;
            for (unsigned first = 0; first < units; first += chunk) {
                int mine = model_rounds(k, w, units, first, t, first < whole_units);
                float grown = m[t];
                for (int i = 0; i < mine * w; i++)
                    grown = fmaxf(grown, x[model_element(k, w, first, t, i / w, i % w)]);
                const float scale = model_ex2(model_exponent(m[t], grown));
                float part = 0;
                for (int i = 0; i < mine * w; i++)
                    part += model_ex2(model_exponent(x[model_element(k, w, first, t, i / w, i % w)],
                                                     grown));
                /* Kahan's compensated sum of the chunks. */
                s[t] *= scale;
                lost *= scale;
                const float y = part - lost, total = s[t] + y;
                lost = (total - s[t]) - y;
                s[t] = total;
                m[t] = grown;
            }
            s[t] -= lost;
        }
        model_merge_row(k, m, s);
        for (unsigned t = 0; t < (unsigned)k->tpr; t++) {
            const float inverse = 1.0f / s[t];
            for (unsigned first = 0; first < units; first += chunk) {
                int mine = model_rounds(k, w, units, first, t, first < whole_units);
                for (int i = 0; i < mine * w; i++) {
                    unsigned e = model_element(k, w, first, t, i / w, i % w);
                    out[e] = model_ex2(model_exponent(x[e], m[t])) * inverse;
                    writes[e]++;
                }
            }
        }
    }
    free(held);
}

static uint64_t model_state = 0x9e3779b97f4a7c15ull;

static float model_random(float scale)
{
    model_state ^= model_state << 13, model_state ^= model_state >> 7,
        model_state ^= model_state << 17;
    return scale * (float)((double)(model_state >> 11) * 0x1p-52 - 1.0);
}

START_TEST(softmax_model_covers_each_element_once_within_tolerance)
{
    static const model models[] = {
        {1, 256, 4, 4}, {1, 32, 4, 8}, {1, 8, 2, 3},  {1, 1, 1, 5},   {1, 1024, 4, 8},
        {1, 64, 8, 4},  {0, 256, 4, 4}, {0, 32, 4, 2}, {0, 4, 1, 3},  {0, 1024, 8, 4},
        {0, 128, 2, 5},
    };
    static const unsigned lengths[] = {1, 2, 7, 31, 32, 33, 100, 1000, 1024, 1025, 4095, 4096,
                                       4097, 16384};
    float *x = malloc(sizeof(float) * 32768), *out = malloc(sizeof(float) * 32768);
    double *want = malloc(sizeof(double) * 32768);
    int *writes = malloc(sizeof(int) * 32768);
    ck_assert(x && out && want && writes);
    const softmax_tolerance tolerance = pj_softmax_tolerance(PJ_DTYPE_f32);
    double worst = 0;
    int rows = 0;
    for (size_t k = 0; k < PJ_ARRAY_SIZE(models); k++) {
        const model *mk = &models[k];
        const unsigned capacity = (unsigned)(mk->tpr * mk->vec * mk->items);
        for (size_t l = 0; l <= PJ_ARRAY_SIZE(lengths); l++) {
            unsigned cols = l < PJ_ARRAY_SIZE(lengths) ? lengths[l] : capacity;
            if (mk->online && cols > capacity)
                continue;
            for (int path = 0; path < 2; path++) {
                /* path 1: vectors, where the row allows them; path 0: element by element. */
                int w = path ? mk->vec : 1;
                if (path && (mk->vec == 1 || cols % (unsigned)mk->vec))
                    continue;
                for (int scale = 0; scale < 2; scale++) {
                    for (unsigned c = 0; c < cols; c++)
                        x[c] = model_random(scale ? 80.0f : 3.0f);
                    memset(writes, 0, sizeof(int) * cols);
                    model_row(mk, w, x, cols, out, writes);
                    pj_softmax_reference(want, x, PJ_DTYPE_f32, cols);
                    for (unsigned c = 0; c < cols; c++) {
                        ck_assert_msg(writes[c] == 1, "model %zu cols %u: element %u written %d "
                                      "times", k, cols, c, writes[c]);
                        double diff = fabs(out[c] - want[c]);
                        ck_assert_msg(diff <= tolerance.rel * want[c] + tolerance.abs,
                                      "model %zu cols %u path %d: element %u is %.9g, not %.9g",
                                      k, cols, path, c, out[c], want[c]);
                        worst = diff > worst ? diff : worst;
                    }
                    rows++;
                }
            }
        }
    }
    printf("softmax model: %d rows, max abs error %.3g\n", rows, worst);
    free(x);
    free(out);
    free(want);
    free(writes);
}
END_TEST

/* ---- PTX through both backends ---- */

static int count(const char *text, const char *needle)
{
    int n = 0;
    for (const char *s = strstr(text, needle); s; s = strstr(s + 1, needle))
        n++;
    return n;
}

static long number_after(const char *text, const char *needle)
{
    const char *at = strstr(text, needle);
    return at ? strtol(at + strlen(needle), NULL, 10) : -1;
}

/* Bytes of .shared declarations ("... .b8 name[N];"). */
static long shared_bytes(const char *ptx)
{
    long total = 0;
    for (const char *s = strstr(ptx, ".shared .align"); s; s = strstr(s + 1, ".shared .align")) {
        const char *end = strchr(s, ';'), *open = strchr(s, '[');
        if (open && end && open < end)
            total += strtol(open + 1, NULL, 10);
    }
    return total;
}

static const char *ptx_of(ptxjit_context *context, const char *params)
{
    ptxjit_kernel *kernel = NULL;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "softmax", params, NULL) == PTXJIT_OK,
                  "%s: %s", params, ptxjit_last_error());
    size_t size = 0;
    const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &size);
    ck_assert_msg(cubin && size > 4 && memcmp(cubin, "\177ELF", 4) == 0, "%s: no cubin", params);
    return ptxjit_kernel_ptx(kernel);
}

/* What every softmax kernel has, through either backend. */
static void expect_kernel(const char *ptx, const char *params, const softmax_config *config,
                          const char *dtype)
{
    const int tpb = config->shape.tpb, tpr = config->shape.tpr, vec = config->shape.vec;
    ck_assert_msg(strstr(ptx, ".entry softmax_kernel("), "%s: no entry", params);
    ck_assert_msg(strstr(ptx, "softmax_kernel_param_3") && !strstr(ptx, "softmax_kernel_param_4"),
                  "%s: not four parameters", params);
    ck_assert_int_eq(number_after(ptx, ".maxntid "), tpb);
    ck_assert_msg(number_after(ptx, ".minnctapersm ") == pj_softmax_min_blocks(&config->shape),
                  "%s: .minnctapersm %ld, not %d", params, number_after(ptx, ".minnctapersm "),
                  pj_softmax_min_blocks(&config->shape));
    ck_assert_msg(count(ptx, "ex2.approx.ftz.f32") > 0, "%s: no ex2.approx", params);
    ck_assert_msg(count(ptx, "shfl.sync.bfly") > 0 || tpr == 1, "%s: no shuffles", params);
    ck_assert_msg((count(ptx, "bar.sync") > 0) == (tpr > 32), "%s: barriers %d with tpr=%d",
                  params, count(ptx, "bar.sync"), tpr);
    ck_assert_msg(!strstr(ptx, ".local"), "%s: local memory", params);
    ck_assert_msg(count(ptx, "ld.global.nc") > 0, "%s: loads not read-only", params);
    int bytes = strcmp(dtype, "f32") == 0 ? 4 : 2;
    if (vec * bytes == 16) {
        ck_assert_msg(count(ptx, "ld.global.nc.v4.") > 0, "%s: no 16-byte loads", params);
        ck_assert_msg(count(ptx, "st.global.v4.") > 0, "%s: no 16-byte stores", params);
    }
    if (strcmp(dtype, "bf16") == 0) {
        ck_assert_msg(strstr(ptx, "cvt.rn.bf16x2.f32"), "%s: no bf16 rounding", params);
        ck_assert_msg(strstr(ptx, "max.bf16x2"), "%s: no packed max", params);
        ck_assert_msg(strstr(ptx, "prmt.b32"), "%s: no byte permutes", params);
    }
    if (strcmp(dtype, "f16") == 0) {
        ck_assert_msg(strstr(ptx, "cvt.rn.f16x2.f32"), "%s: no f16 rounding", params);
        ck_assert_msg(strstr(ptx, "cvt.f32.f16"), "%s: no f16 widening", params);
        ck_assert_msg(strstr(ptx, "max.f16x2"), "%s: no packed max", params);
    }
    ck_assert_int_eq(shared_bytes(ptx), tpr > 32 ? 2 * 4 * (tpb / 32) : 0);
}

static const char *const ptx_configs[] = {
    "tpb=256 tpr=256 items=4", "tpb=256 tpr=32 items=8", "tpb=128 tpr=8 vec=2 items=3",
    "tpb=64 tpr=1 vec=1 items=5", "tpb=1024 tpr=1024 items=4", "tpb=512 tpr=64 items=2",
};

static void every_variant_and_dtype(const char *backend)
{
    static const char *const variants[] = {"online", "block"};
    static const char *const dtypes[] = {"f32", "f16", "bf16"};
    ptxjit_context *context = test_open_offline("sm_90a");
    int kernels = 0, requests = 0;
    for (size_t v = 0; v < 2; v++)
        for (size_t d = 0; d < 3; d++)
            for (size_t c = 0; c < PJ_ARRAY_SIZE(ptx_configs); c++) {
                char params[256], routed[300], *canonical = NULL;
                snprintf(params, sizeof params, "variant=%s dtype=%s %s", variants[v],
                         dtypes[d], ptx_configs[c]);
                if (ptxjit_canonical_params(&canonical, context, "softmax", params) != PTXJIT_OK)
                    continue; /* 8 vectors of 8 16-bit elements: over 32 a thread */
                free(canonical);
                if (!test_sweep_takes((size_t)requests++))
                    continue;
                snprintf(routed, sizeof routed, "%s backend=%s", params, backend);
                softmax_config config = config_of(params);
                expect_kernel(ptx_of(context, routed), routed, &config, dtypes[d]);
                kernels++;
            }
    ck_assert_int_ge(requests, 30);
    ck_assert_int_eq(kernels, test_sweep_taken((size_t)requests));
    ptxjit_close(context);
}

START_TEST(softmax_nvrtc_kernels_hold_their_instructions)
{
    every_variant_and_dtype("nvrtc");
}
END_TEST

START_TEST(softmax_llvm_kernels_hold_their_instructions)
{
    if (!test_llvm_or_skip("softmax_llvm_kernels_hold_their_instructions"))
        return;
    every_variant_and_dtype("llvm");
}
END_TEST

/* The generator's kernel and the template's agree on what the host op relies on and on the
 * traffic: bound, parameters, shared memory, barriers, vector accesses, roundings. */
START_TEST(softmax_llvm_kernels_match_the_templates)
{
    if (!test_llvm_or_skip("softmax_llvm_kernels_match_the_templates"))
        return;
    static const char *const configs[] = {
        "", "dtype=bf16", "dtype=f16 variant=block", "tpb=256 tpr=32 items=8",
        "tpb=1024 tpr=1024 items=8 variant=block", "dtype=bf16 tpb=64 tpr=4 vec=2 items=5",
        "dtype=f16 tpb=32 tpr=2 vec=1 items=7 variant=block",
    };
    static const char *const same[] = {
        "bar.sync", "ld.global.nc.v4.", "st.global.v4.", "ld.global.nc.v2.", "st.global.v2.",
        "cvt.rn.bf16x2.f32", "cvt.rn.f16x2.f32", "max.bf16x2", "max.f16x2", "div.rn.f32",
    };
    ptxjit_context *context = test_open_offline("sm_90a");
    for (size_t i = 0; i < PJ_ARRAY_SIZE(configs); i++) {
        char llvm[256];
        snprintf(llvm, sizeof llvm, "%s backend=llvm", configs[i]);
        const char *ours = ptx_of(context, llvm), *theirs = ptx_of(context, configs[i]);
        ck_assert_int_eq(number_after(ours, ".maxntid "), number_after(theirs, ".maxntid "));
        ck_assert_int_eq(number_after(ours, ".minnctapersm "),
                         number_after(theirs, ".minnctapersm "));
        ck_assert_int_eq(shared_bytes(ours), shared_bytes(theirs));
        for (size_t s = 0; s < PJ_ARRAY_SIZE(same); s++)
            ck_assert_msg(count(ours, same[s]) == count(theirs, same[s]),
                          "'%s': '%s' %d times, the template's kernel %d", configs[i], same[s],
                          count(ours, same[s]), count(theirs, same[s]));
        ck_assert_msg(count(ours, "shfl.sync.bfly") == count(theirs, "shfl.sync.bfly"),
                      "'%s': shuffles differ", configs[i]);
        ck_assert_msg(count(ours, "ex2.approx.ftz.f32") == count(theirs, "ex2.approx.ftz.f32"),
                      "'%s': %d ex2, the template's %d", configs[i],
                      count(ours, "ex2.approx.ftz.f32"), count(theirs, "ex2.approx.ftz.f32"));
    }
    ptxjit_close(context);
}
END_TEST

Suite *suite_softmax(void)
{
    Suite *suite = suite_create("softmax");
    TCase *tc = tcase_create("schema");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, softmax_schema_is_the_shape_headers);
    tcase_add_test(tc, softmax_defaults);
    tcase_add_test(tc, softmax_constraints_fail_early_with_the_fix);
    tcase_add_test(tc, softmax_op_checks_name_the_fix);
    tcase_add_test(tc, softmax_geometry);
    tcase_add_test(tc, softmax_elements_round_to_nearest_even);
    tcase_add_test(tc, softmax_reference_on_known_values);
    suite_add_tcase(suite, tc);
    /* Pure arithmetic over 374 rows: a minute and a half under memcheck, which finds nothing
     * in it that the sanitizers' runs do not; valgrind-llvm leaves it out by its tag. */
    TCase *model = tcase_create("model");
    tcase_set_tags(model, "cpu_model");
    tcase_set_timeout(model, 120);
    tcase_add_test(model, softmax_model_covers_each_element_once_within_tolerance);
    suite_add_tcase(suite, model);
    TCase *kernels = tcase_create("kernels");
    tcase_set_timeout(kernels, 600);
    tcase_add_test(kernels, softmax_nvrtc_kernels_hold_their_instructions);
    tcase_add_test(kernels, softmax_llvm_kernels_hold_their_instructions);
    suite_add_tcase(suite, kernels);
    /* Both routes for each configuration: valgrind-llvm leaves it out by its tag. */
    TCase *against = tcase_create("against_template");
    tcase_set_tags(against, "ptx_content");
    tcase_set_timeout(against, 600);
    tcase_add_test(against, softmax_llvm_kernels_match_the_templates);
    suite_add_tcase(suite, against);
    return suite;
}

/* test_gpu.c — the softmax family on the GPU through its op, both backends: every variant and
 * dtype on rows of 1 to 16384 elements (and the longest each configuration holds), row counts
 * that are no multiple of the rows a block takes, fresh random inputs (spread ±3, and ±80 to
 * test the max subtraction), NaN-poisoned outputs between guard bands; every element within
 * the dtype's tolerance of the float64 softmax, every row summing to 1 within it, nothing
 * written outside the output. Also unaligned buffers and rows (the element-wide path), in-place
 * runs, a large matrix, and the refusals. Skips, saying why, where no GPU is usable. */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "request/route_llvm.h"
#include "families/softmax/op.h"
#include "test_util.h"

enum { GUARD = 64 }; /* bytes of poison before and after each output */

/* Fresh data for one shape: the input as stored, its float64 softmax, and device buffers. */
typedef struct {
    ptxjit_context *context;
    pj_dtype dtype;
    size_t rows, cols, offset; /* offset: elements past the buffers' 256-byte aligned starts */
    void *host, *got;
    double *want;
    ptxjit_devptr in, out; /* the buffers; the matrices start offset elements (+ GUARD) in */
} softmax_case;

static uint64_t random_state;

static double random_unit(void) /* [0, 1) */
{
    random_state ^= random_state << 13;
    random_state ^= random_state >> 7;
    random_state ^= random_state << 17;
    return (double)(random_state >> 11) * 0x1p-53;
}

static size_t case_bytes(const softmax_case *c)
{
    return c->rows * c->cols * (size_t)pj_dtype_bytes(c->dtype);
}

static size_t offset_bytes(const softmax_case *c)
{
    return c->offset * (size_t)pj_dtype_bytes(c->dtype);
}

/* Values spread like a normal of deviation `spread` (a sum of four uniforms), or uniform in
 * ±spread when spread >= 50 (large magnitudes: exp without the max subtraction overflows). */
static void case_open(softmax_case *c, ptxjit_context *context, pj_dtype dtype, size_t rows,
                      size_t cols, double spread, size_t offset)
{
    *c = (softmax_case){context, dtype, rows, cols, offset, NULL, NULL, NULL, 0, 0};
    if (!random_state)
        random_state = (uint64_t)time(NULL) ^ ((uint64_t)clock() << 24) ^ 0x2545f4914f6cdd1dull;
    const size_t n = rows * cols, bytes = case_bytes(c);
    c->host = malloc(bytes);
    c->got = malloc(bytes + 2 * GUARD + offset_bytes(c));
    c->want = malloc(n * sizeof *c->want);
    ck_assert(c->host && c->got && c->want);
    for (size_t i = 0; i < n; i++) {
        double x = spread >= 50 ? spread * (2 * random_unit() - 1)
                                : spread * (random_unit() + random_unit() + random_unit() +
                                            random_unit() - 2) * 1.7320508;
        pj_softmax_set_element(c->host, dtype, i, (float)x);
    }
    const size_t e = (size_t)pj_dtype_bytes(dtype);
    for (size_t r = 0; r < rows; r++)
        pj_softmax_reference(c->want + r * cols, (const char *)c->host + r * cols * e, dtype,
                             cols);
    const size_t span = bytes + 2 * GUARD + offset_bytes(c);
    ck_assert_int_eq(ptxjit_alloc(&c->in, context, span), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&c->out, context, span), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, c->in + GUARD + offset_bytes(c), c->host,
                                           bytes),
                     PTXJIT_OK);
}

static void case_close(softmax_case *c)
{
    ptxjit_free(c->context, c->in);
    ptxjit_free(c->context, c->out);
    free(c->host);
    free(c->got);
    free(c->want);
}

/* Runs params into the poisoned output (or in place over a fresh copy of the input) and
 * checks every element, every row's sum and the guard bands. */
static void case_run(softmax_case *c, const char *params, int in_place)
{
    const size_t bytes = case_bytes(c), start = GUARD + offset_bytes(c);
    const size_t span = bytes + 2 * GUARD + offset_bytes(c);
    ptxjit_devptr target = in_place ? c->in : c->out;
    memset(c->got, 0xff, span); /* NaN in every dtype */
    ck_assert_int_eq(ptxjit_copy_to_device(c->context, target, c->got, span), PTXJIT_OK);
    /* The input again: an earlier run in place wrote over it. */
    ck_assert_int_eq(ptxjit_copy_to_device(c->context, c->in + start, c->host, bytes),
                     PTXJIT_OK);
    ptxjit_status status = ptxjit_softmax(c->context, params, c->in + start, target + start,
                                          c->rows, c->cols, NULL);
    ck_assert_msg(status == PTXJIT_OK, "%s %zu x %zu: %s", params, c->rows, c->cols,
                  ptxjit_last_error());
    ck_assert_int_eq(ptxjit_copy_to_host(c->context, c->got, target, span), PTXJIT_OK);
    const unsigned char *bands = c->got;
    for (size_t i = 0; i < span; i = i + 1 == start ? start + bytes : i + 1)
        if (bands[i] != 0xff)
            ck_abort_msg("%s %zu x %zu: byte %lld from the output's start written", params,
                         c->rows, c->cols, (long long)i - (long long)start);
    const softmax_tolerance tolerance = pj_softmax_tolerance(c->dtype);
    const char *got = (const char *)c->got + start;
    for (size_t r = 0; r < c->rows; r++) {
        double sum = 0;
        for (size_t col = 0; col < c->cols; col++) {
            size_t i = r * c->cols + col;
            double value = pj_softmax_element(got, c->dtype, i), want = c->want[i];
            /* One assertion per bad element only: each passing one costs a pipe write. */
            if (!(fabs(value - want) <= tolerance.rel * want + tolerance.abs))
                ck_abort_msg("%s %s %zu x %zu%s, offset %zu: element (%zu, %zu) is %.9g, not "
                             "%.9g", params, pj_dtype_name(c->dtype), c->rows, c->cols,
                             in_place ? " in place" : "", c->offset, r, col, value, want);
            sum += value;
        }
        /* The elements' tolerances added up. */
        if (!(fabs(sum - 1) <= tolerance.rel + (double)c->cols * tolerance.abs + 1e-12))
            ck_abort_msg("%s %zu x %zu: row %zu sums to %.9g", params, c->rows, c->cols, r, sum);
    }
}

static const pj_dtype dtypes[] = {PJ_DTYPE_f32, PJ_DTYPE_f16, PJ_DTYPE_bf16};
static const size_t lengths[] = {1, 2, 7, 31, 32, 33, 100, 1000, 1024, 1025, 4095, 4096, 4097,
                                 16384};
static const size_t row_counts[] = {1, 3, 129};

/* The configurations of a variant, as "variant=... dtype=..." requests valid for the dtype. */
static int requests_for(char out[][160], const char *const *configs, size_t count,
                        ptxjit_context *context, const char *variant, pj_dtype dtype)
{
    int n = 0;
    for (size_t i = 0; i < count; i++) {
        char *canonical = NULL;
        snprintf(out[n], 160, "variant=%s dtype=%s %s", variant, pj_dtype_name(dtype),
                 configs[i]);
        if (ptxjit_canonical_params(&canonical, context, "softmax", out[n]) == PTXJIT_OK)
            n++;
        free(canonical);
    }
    return n;
}

static uint64_t longest_row(ptxjit_context *context, const char *params)
{
    ptxjit_kernel *kernel;
    softmax_config config;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "softmax", params, NULL), PTXJIT_OK);
    ck_assert_int_eq(pj_softmax_config_of(&config, kernel), PTXJIT_OK);
    return pj_softmax_max_cols(&config.shape);
}

/* Every configuration of the variant, every dtype, both backends, on every row length the
 * configuration holds (and its longest), every row count, both spreads. */
static void check_variant(const char *test, const char *variant, const char *const *configs,
                          size_t config_count)
{
    ptxjit_context *context = test_gpu_context(test);
    if (!context)
        return;
    static const char *const backends[] = {"nvrtc", "llvm"};
    const int routes = pj_llvm_built() ? 2 : 1;
    int runs = 0;
    for (size_t d = 0; d < PJ_ARRAY_SIZE(dtypes); d++) {
        char requests[16][160];
        int count = requests_for(requests, configs, config_count, context, variant, dtypes[d]);
        uint64_t longest[16];
        for (int i = 0; i < count; i++)
            longest[i] = longest_row(context, requests[i]);
        for (size_t l = 0; l < PJ_ARRAY_SIZE(lengths) + (size_t)count; l++) {
            /* The listed lengths, then each configuration's longest row (online). */
            size_t cols = l < PJ_ARRAY_SIZE(lengths) ? lengths[l]
                          : l - PJ_ARRAY_SIZE(lengths) < (size_t)count
                              ? (size_t)longest[l - PJ_ARRAY_SIZE(lengths)]
                              : 0;
            if (cols == 0 || cols > 32768)
                continue;
            for (size_t m = 0; m < PJ_ARRAY_SIZE(row_counts); m++)
                for (int spread = 0; spread < 2; spread++) {
                    softmax_case c;
                    case_open(&c, context, dtypes[d], row_counts[m], cols, spread ? 80.0 : 3.0,
                              0);
                    for (int i = 0; i < count; i++) {
                        if (cols > longest[i])
                            continue;
                        /* A configuration's longest row is tested with it alone. */
                        if (l >= PJ_ARRAY_SIZE(lengths) &&
                            (size_t)i != l - PJ_ARRAY_SIZE(lengths))
                            continue;
                        for (int b = 0; b < routes; b++) {
                            char params[200];
                            snprintf(params, sizeof params, "%s backend=%s", requests[i],
                                     backends[b]);
                            case_run(&c, params, 0);
                            runs++;
                        }
                    }
                    case_close(&c);
                }
        }
    }
    printf("%s: %d runs checked\n", test, runs);
    ck_assert_int_gt(runs, 100);
    ptxjit_close(context);
}

static const char *const online_configs[] = {
    "",                          /* the defaults: rows up to 4096 */
    "tpb=256 tpr=32 items=8",    /* a warp a row, 8 rows a block (f32) */
    "tpb=256 tpr=32 items=4",    /* the same for 16-bit types */
    "tpb=128 tpr=8 vec=2 items=3", /* segments of 8 lanes, 16 rows a block */
    "tpb=64 tpr=1 vec=1 items=5",  /* a thread a row */
    "tpb=1024 tpr=1024 items=8",   /* the longest f32 row: 32768 */
    "tpb=1024 tpr=1024 items=4",   /* the longest 16-bit row: 32768 */
    "tpb=512 tpr=64 items=4",      /* two warps a row, 8 rows a block */
    "tpb=512 tpr=512 items=8",     /* the bench's f32 16384 */
    "tpb=64 tpr=4 vec=1 items=40", /* 16-bit pairs packed one by one, odd counts too */
};

static const char *const block_configs[] = {
    "",                           /* chunks of 16384, a row per 1024-thread block */
    "tpb=128 tpr=32 items=2",     /* small chunks: many whole ones, then a partial one */
    "tpb=64 tpr=4 vec=1 items=3", /* element by element */
    "tpb=1024 tpr=1024 items=4",
    "tpb=256 tpr=128 vec=2 items=5",
    "tpb=64 tpr=8 vec=1 items=9",
};

START_TEST(softmax_online_every_dtype_and_length)
{
    check_variant("softmax_online_every_dtype_and_length", "online", online_configs,
                  PJ_ARRAY_SIZE(online_configs));
}
END_TEST

START_TEST(softmax_block_every_dtype_and_length)
{
    check_variant("softmax_block_every_dtype_and_length", "block", block_configs,
                  PJ_ARRAY_SIZE(block_configs));
}
END_TEST

/* Buffers one element off the vector alignment and rows of no multiple of vec: the element-
 * wide path; buffers 16 bytes in: still the vector path; and each in place. */
START_TEST(softmax_unaligned_and_in_place)
{
    ptxjit_context *context = test_gpu_context("softmax_unaligned_and_in_place");
    if (!context)
        return;
    static const char *const requests[] = {
        "", "variant=block", "tpb=256 tpr=32 items=8", "tpb=128 tpr=8 vec=2 items=3",
        "variant=block tpb=128 tpr=32 items=2",
    };
    static const size_t shapes[][2] = {{3, 1000}, {129, 1024}, {5, 4095}, {2, 16}, {7, 1}};
    static const size_t offsets[] = {0, 1, 3, 8};
    const int routes = pj_llvm_built() ? 2 : 1;
    for (size_t d = 0; d < PJ_ARRAY_SIZE(dtypes); d++)
        for (size_t s = 0; s < PJ_ARRAY_SIZE(shapes); s++)
            for (size_t o = 0; o < PJ_ARRAY_SIZE(offsets); o++) {
                softmax_case c;
                case_open(&c, context, dtypes[d], shapes[s][0], shapes[s][1], 5.0, offsets[o]);
                for (size_t r = 0; r < PJ_ARRAY_SIZE(requests); r++)
                    for (int b = 0; b < routes; b++) {
                        char params[200], *canonical = NULL;
                        snprintf(params, sizeof params, "%s dtype=%s", requests[r],
                                 pj_dtype_name(dtypes[d]));
                        if (ptxjit_canonical_params(&canonical, context, "softmax", params) !=
                                PTXJIT_OK ||
                            shapes[s][1] > longest_row(context, params)) {
                            free(canonical);
                            continue;
                        }
                        free(canonical);
                        strcat(params, b ? " backend=llvm" : " backend=nvrtc");
                        case_run(&c, params, 0);
                        case_run(&c, params, 1);
                    }
                case_close(&c);
            }
    ptxjit_close(context);
}
END_TEST

/* Many blocks: 65537 rows of 1024 (256 MiB of f32), and 4099 rows of 12289 through block's
 * whole and partial chunks; every element checked. */
START_TEST(softmax_large_matrices)
{
    ptxjit_context *context = test_gpu_context("softmax_large_matrices");
    if (!context)
        return;
    const int routes = pj_llvm_built() ? 2 : 1;
    softmax_case c;
    case_open(&c, context, PJ_DTYPE_f32, 65537, 1024, 4.0, 0);
    for (int b = 0; b < routes; b++) {
        case_run(&c, b ? "tpb=256 tpr=32 items=8 backend=llvm" : "tpb=256 tpr=32 items=8", 0);
        case_run(&c, b ? "backend=llvm" : "", 0);
    }
    case_close(&c);
    case_open(&c, context, PJ_DTYPE_bf16, 4099, 12289, 80.0, 0);
    for (int b = 0; b < routes; b++)
        case_run(&c, b ? "variant=block dtype=bf16 backend=llvm" : "variant=block dtype=bf16", 0);
    case_close(&c);
    ptxjit_close(context);
}
END_TEST

/* variant=online (the default) holds 4096 elements a row; a request that leaves the variant
 * to the defaults takes rows of any length (request/plan.h), on both backends. */
START_TEST(softmax_defaults_take_any_row_length)
{
    ptxjit_context *context = test_gpu_context("softmax_defaults_take_any_row_length");
    if (!context)
        return;
    static const size_t long_rows[] = {4097, 10007, 65537};
    static const char *const backends[] = {"", "backend=llvm "};
    for (size_t b = 0; b < PJ_ARRAY_SIZE(backends); b++)
        for (size_t d = 0; d < PJ_ARRAY_SIZE(dtypes); d++)
            for (size_t l = 0; l < PJ_ARRAY_SIZE(long_rows); l++) {
                char params[64];
                snprintf(params, sizeof params, "%sdtype=%s", backends[b],
                         pj_dtype_name(dtypes[d]));
                softmax_case c;
                case_open(&c, context, dtypes[d], 3, long_rows[l], 3.0, l);
                case_run(&c, params, 0);
                case_close(&c);
            }
    ptxjit_close(context);
}
END_TEST

/* `ptxjit run softmax` takes what the op takes: rows longer than the defaults' 4096 elements
 * (the held-out sweep's bf16 7661 was refused by the CLI's check of the unfitted defaults). */
START_TEST(cli_run_softmax_takes_any_row_length)
{
    ptxjit_context *context = test_gpu_context("cli_run_softmax_takes_any_row_length");
    if (!context)
        return;
    ptxjit_close(context);
    static const char *const runs[] = {"run softmax dtype=bf16 rows=157 cols=7661 runs=1",
                                       "run softmax rows=9 cols=40000 runs=1",
                                       "run softmax dtype=f16 rows=3 cols=4097 runs=1"};
    char *dir = test_mkdtemp();
    for (size_t i = 0; i < PJ_ARRAY_SIZE(runs); i++) {
        char *out = NULL;
        ck_assert_msg(test_run_cli(&out, dir, "", runs[i], NULL) == 0, "%s: %s", runs[i],
                      out ? out : "");
        ck_assert_msg(strstr(out, ": ok ("), "%s: %s", runs[i], out);
        free(out);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(softmax_refuses_what_it_cannot_do)
{
    ptxjit_context *context = test_gpu_context("softmax_refuses_what_it_cannot_do");
    if (!context)
        return;
    ptxjit_devptr buffer;
    ck_assert_int_eq(ptxjit_alloc(&buffer, context, 1 << 20), PTXJIT_OK);
    /* Rows longer than any thread count holds in registers (f32: 1024 threads x 32), and
     * longer than the named tpr holds. */
    ck_assert_int_eq(ptxjit_softmax(context, "variant=online", buffer, buffer + 524288, 2,
                                    40000, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "variant=block"));
    ck_assert_int_eq(ptxjit_softmax(context, "backend=llvm variant=online", buffer,
                                    buffer + 524288, 2, 40000, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_softmax(context, "variant=online tpr=128", buffer, buffer + 65536,
                                    2, 4097, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_softmax(context, "", buffer, buffer + 4, 2, 3, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "overlap"));
    ck_assert_int_eq(ptxjit_softmax(context, "", buffer + 2, buffer + 65536, 2, 3, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_softmax(context, "", buffer, buffer + 65536, 0, 3, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_softmax(context, "dtype=f64", buffer, buffer + 65536, 1, 3, NULL),
                     PTXJIT_ERR_PARAM);
    ptxjit_free(context, buffer);
    ptxjit_close(context);
}
END_TEST

Suite *suite_softmax_gpu(void)
{
    Suite *suite = suite_create("softmax_gpu");
    TCase *tc = tcase_create("both backends");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, softmax_online_every_dtype_and_length);
    tcase_add_test(tc, softmax_block_every_dtype_and_length);
    tcase_add_test(tc, softmax_unaligned_and_in_place);
    tcase_add_test(tc, softmax_large_matrices);
    tcase_add_test(tc, softmax_defaults_take_any_row_length);
    tcase_add_test(tc, cli_run_softmax_takes_any_row_length);
    tcase_add_test(tc, softmax_refuses_what_it_cannot_do);
    suite_add_tcase(suite, tc);
    return suite;
}

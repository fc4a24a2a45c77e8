/* test_tune_gpu.c — autotuning on the GPU: each family tuned at a small shape and its winner's
 * result (reached through PARAM=auto in the family op) checked against the CPU reference; a
 * family tuned through the caller's run and check callbacks; the record reused by a second
 * context without timing anything. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "families/matmul/op.h"
#include "families/reduce/op.h"
#include "families/softmax/op.h"
#include "families/transpose/op.h"
#include "test_util.h"

static char *cache_root;

static ptxjit_context *open_gpu(const char *test)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = cache_root;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    if (ptxjit_gpu_status(context) == PTXJIT_OK)
        return context;
    printf("SKIP %s: no GPU (%s)\n", test, ptxjit_last_error());
    ptxjit_close(context);
    return NULL;
}

static void setup(void)
{
    cache_root = test_mkdtemp();
}

static void teardown(void)
{
    test_rmtree(cache_root);
    free(cache_root);
}

/* Tunes and returns the winner (caller frees). */
static char *tune(ptxjit_context *context, const char *family, const char *problem,
                  const char *fixed, const char *space, int *from_record)
{
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = problem;
    options.fixed = fixed;
    options.space = space;
    options.runs = 5;
    ptxjit_tune_result *result = NULL;
    ptxjit_status status = ptxjit_tune(&result, context, family, &options);
    ck_assert_msg(status == PTXJIT_OK, "%s %s: %s", family, problem, ptxjit_last_error());
    ptxjit_tune_info info;
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_ptr_nonnull(info.winner);
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c;
        ck_assert_int_eq(ptxjit_tune_result_candidate(&c, result, i), PTXJIT_OK);
        ck_assert_msg(c.status == PTXJIT_OK, "%s: %s", c.params, c.message);
    }
    if (from_record)
        *from_record = info.from_record;
    char *winner = pj_strdup(info.winner);
    ptxjit_tune_result_free(result);
    return winner;
}

START_TEST(reduce_tuned_winner_sums_right)
{
    ptxjit_context *context = open_gpu("reduce_tuned_winner_sums_right");
    if (!context)
        return;
    const size_t n = (size_t)1 << 20;
    char *winner = tune(context, "reduce", "n=2^20", NULL, "tpb=256,512 batch=4,8", NULL);
    int32_t *host = malloc(n * 4);
    for (size_t i = 0; i < n; i++)
        host[i] = (int32_t)(i * 2654435761u);
    ptxjit_devptr input;
    ck_assert_int_eq(ptxjit_alloc(&input, context, n * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, input, host, n * 4), PTXJIT_OK);
    int32_t sum = 0;
    ck_assert_int_eq(ptxjit_reduce(context, "tpb=auto batch=auto", input, n, &sum), PTXJIT_OK);
    ck_assert_int_eq((uint32_t)sum, pj_reduce_reference_i32(host, n));
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel_tuned(&kernel, context, "reduce", "tpb=auto batch=auto",
                                             "n=1048576", NULL), PTXJIT_OK);
    ck_assert_str_eq(ptxjit_kernel_params(kernel), winner);
    ptxjit_free(context, input);
    free(host);
    free(winner);
    ptxjit_close(context);
}
END_TEST

START_TEST(transpose_tuned_winner_is_bit_exact)
{
    ptxjit_context *context = open_gpu("transpose_tuned_winner_is_bit_exact");
    if (!context)
        return;
    const size_t rows = 512, cols = 384;
    char *winner = tune(context, "transpose", "rows=512 cols=384", NULL,
                        "block=64,128 rows=32,64 batch=16", NULL);
    float *in = malloc(rows * cols * 4), *out = malloc(rows * cols * 4),
          *want = malloc(rows * cols * 4);
    for (size_t i = 0; i < rows * cols; i++)
        in[i] = (float)i * 0.5f;
    pj_transpose_reference(want, in, rows, cols, 4);
    ptxjit_devptr din, dout;
    ck_assert_int_eq(ptxjit_alloc(&din, context, rows * cols * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dout, context, rows * cols * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, din, in, rows * cols * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_transpose(context, "block=auto rows=auto batch=auto", din, dout, rows,
                                      cols, NULL), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host(context, out, dout, rows * cols * 4), PTXJIT_OK);
    ck_assert_msg(memcmp(out, want, rows * cols * 4) == 0, "winner %s is not exact", winner);
    ptxjit_free(context, din);
    ptxjit_free(context, dout);
    free(in);
    free(out);
    free(want);
    free(winner);
    ptxjit_close(context);
}
END_TEST

START_TEST(softmax_tuned_winner_matches_float64)
{
    ptxjit_context *context = open_gpu("softmax_tuned_winner_matches_float64");
    if (!context)
        return;
    const size_t rows = 256, cols = 1024;
    char *winner = tune(context, "softmax", "rows=256 cols=1024", "dtype=f32",
                        "tpb=128,256 tpr=128,256 items=2,8", NULL);
    float *in = malloc(rows * cols * 4), *out = malloc(rows * cols * 4);
    double *want = malloc(cols * sizeof *want);
    for (size_t i = 0; i < rows * cols; i++)
        in[i] = (float)sin((double)i) * 4;
    ptxjit_devptr din, dout;
    ck_assert_int_eq(ptxjit_alloc(&din, context, rows * cols * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dout, context, rows * cols * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, din, in, rows * cols * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_softmax(context, "dtype=f32 tpb=auto tpr=auto items=auto", din, dout,
                                    rows, cols, NULL), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host(context, out, dout, rows * cols * 4), PTXJIT_OK);
    softmax_tolerance tol = pj_softmax_tolerance(PJ_DTYPE_f32);
    size_t bad = 0;
    for (size_t r = 0; r < rows; r++) {
        pj_softmax_reference(want, in + r * cols, PJ_DTYPE_f32, cols);
        for (size_t c = 0; c < cols; c++)
            bad += !(fabs(out[r * cols + c] - want[c]) <= tol.rel * want[c] + tol.abs);
    }
    ck_assert_msg(bad == 0, "winner %s: %zu elements off", winner, bad);
    ptxjit_free(context, din);
    ptxjit_free(context, dout);
    free(in);
    free(out);
    free(want);
    free(winner);
    ptxjit_close(context);
}
END_TEST

START_TEST(matmul_tuned_winner_matches_float64)
{
    ptxjit_context *context = open_gpu("matmul_tuned_winner_matches_float64");
    if (!context)
        return;
    const size_t m = 256, n = 256, k = 256;
    /* Every other tuned parameter pinned to its default, so that the auto request below
     * resolves to the winner itself. */
    char *winner = tune(context, "matmul", "m=256 n=256 k=256",
                        "variant=wgmma dtype=bf16 store=direct",
                        "mma=m64n256k16 bm=128 consumers=2 cluster=1 stages=3,4 group=8,16",
                        NULL);
    uint16_t *a = malloc(m * k * 2), *b = malloc(k * n * 2), *c = malloc(m * n * 2);
    double *want = malloc(n * sizeof *want);
    for (size_t i = 0; i < m * k; i++)
        pj_matmul_set_element(a, PJ_DTYPE_bf16, i, (float)((i * 37 % 101) / 101.0 - 0.5));
    for (size_t i = 0; i < k * n; i++)
        pj_matmul_set_element(b, PJ_DTYPE_bf16, i, (float)((i * 53 % 97) / 97.0 - 0.5));
    ptxjit_devptr da, db, dc;
    ck_assert_int_eq(ptxjit_alloc(&da, context, m * k * 2), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&db, context, k * n * 2), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dc, context, m * n * 2), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, da, a, m * k * 2), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, db, b, k * n * 2), PTXJIT_OK);
    ptxjit_kernel *resolved;
    ck_assert_int_eq(ptxjit_get_kernel_tuned(&resolved, context, "matmul",
                                             "variant=wgmma dtype=bf16 store=direct stages=auto "
                                             "group=auto",
                                             "m=256 n=256 k=256", NULL),
                     PTXJIT_OK);
    ck_assert_str_eq(ptxjit_kernel_params(resolved), winner);
    ck_assert_int_eq(ptxjit_matmul(context, "variant=wgmma dtype=bf16 store=direct stages=auto "
                                   "group=auto", da, db, dc, m, n, k, NULL), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host(context, c, dc, m * n * 2), PTXJIT_OK);
    double diff = 0, norm = 0;
    for (size_t r = 0; r < m; r += 37) {
        pj_matmul_reference_row(want, a, b, PJ_DTYPE_bf16, n, k, r);
        for (size_t j = 0; j < n; j++) {
            double d = pj_matmul_element(c, PJ_DTYPE_bf16, r * n + j) - want[j];
            diff += d * d;
            norm += want[j] * want[j];
        }
    }
    ck_assert_msg(sqrt(diff / norm) < 1e-2, "winner %s: relative error %g", winner,
                  sqrt(diff / norm));
    ptxjit_free(context, da);
    ptxjit_free(context, db);
    ptxjit_free(context, dc);
    free(a);
    free(b);
    free(c);
    free(want);
    free(winner);
    ptxjit_close(context);
}
END_TEST

/* ---- a family tuned through the caller's callbacks ---- */

typedef struct {
    ptxjit_context *context;
    ptxjit_devptr input, result;
    size_t n;
    uint32_t want;
    int runs, checks;
} user_job;

static ptxjit_status user_run(void *user, ptxjit_kernel *kernel, void *stream)
{
    user_job *job = user;
    job->runs++;
    return ptxjit_reduce_async(job->context, ptxjit_kernel_params(kernel), job->input, job->n,
                               job->result, stream);
}

static ptxjit_status user_check(void *user, ptxjit_kernel *kernel, void *stream)
{
    (void)kernel, (void)stream;
    user_job *job = user;
    uint32_t got = 0;
    job->checks++;
    ptxjit_status status = ptxjit_copy_to_host(job->context, &got, job->result, 4);
    if (status == PTXJIT_OK && got != job->want)
        status = PTXJIT_ERR_CUDA;
    return status;
}

START_TEST(user_callbacks_tune_and_the_record_is_reused)
{
    ptxjit_context *context = open_gpu("user_callbacks_tune_and_the_record_is_reused");
    if (!context)
        return;
    user_job job = {context, 0, 0, (size_t)1 << 18, 0, 0, 0};
    ck_assert_int_eq(ptxjit_alloc(&job.input, context, job.n * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&job.result, context, 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_synchronize(context), PTXJIT_OK);
    int32_t *ones = malloc(job.n * 4);
    for (size_t i = 0; i < job.n; i++)
        ones[i] = 1;
    ck_assert_int_eq(ptxjit_copy_to_device(context, job.input, ones, job.n * 4), PTXJIT_OK);
    free(ones);
    job.want = (uint32_t)job.n;
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = "my problem: 2^18 ones";
    options.space = "variant=one_pass,vectorized tpb=256,512 batch=4";
    options.run = user_run;
    options.check = user_check;
    options.user = &job;
    options.runs = 4;
    ptxjit_tune_result *result;
    ck_assert_msg(ptxjit_tune(&result, context, "reduce", &options) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    ptxjit_tune_info info;
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_int_eq(info.from_record, 0);
    ck_assert_int_eq(info.candidate_count, 4);
    ck_assert_int_eq(job.checks, 5); /* the reference configuration first, then each */
    ck_assert(job.runs > 4);
    char *winner = pj_strdup(info.winner);
    ptxjit_tune_result_free(result);
    ptxjit_close(context);
    /* A second context: the record, nothing run. */
    context = open_gpu("user_callbacks_tune_and_the_record_is_reused");
    job.context = context;
    job.runs = job.checks = 0;
    ck_assert_int_eq(ptxjit_tune(&result, context, "reduce", &options), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_tune_result_info(&info, result), PTXJIT_OK);
    ck_assert_int_eq(info.from_record, 1);
    ck_assert_str_eq(info.winner, winner);
    ck_assert_int_eq(job.runs + job.checks, 0);
    ptxjit_tune_result_free(result);
    free(winner);
    ptxjit_close(context);
}
END_TEST

/* ---- a candidate that leaves the context unusable ---- */

static ptxjit_status wild_run(void *user, ptxjit_kernel *kernel, void *stream)
{
    user_job *job = user;
    /* tpb=512 reads from an address nothing is mapped at: an illegal address, sticky. */
    ptxjit_devptr input = strstr(ptxjit_kernel_params(kernel), "tpb=512") ? (ptxjit_devptr)1 << 44
                                                                          : job->input;
    return ptxjit_reduce_async(job->context, ptxjit_kernel_params(kernel), input, job->n,
                               job->result, stream);
}

START_TEST(a_candidate_that_loses_the_context_ends_the_tuning_and_says_so)
{
    ptxjit_context *context = open_gpu("a_candidate_that_loses_the_context");
    if (!context)
        return;
    user_job job = {context, 0, 0, (size_t)1 << 16, 0, 0, 0};
    ck_assert_int_eq(ptxjit_alloc(&job.input, context, job.n * 4), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&job.result, context, 4), PTXJIT_OK);
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = "wild";
    options.space = "variant=vectorized tpb=256,512 batch=4";
    options.run = wild_run;
    options.user = &job;
    options.runs = 3;
    ptxjit_tune_result *result = NULL;
    ck_assert_int_eq(ptxjit_tune(&result, context, "reduce", &options), PTXJIT_ERR_CUDA);
    ck_assert_ptr_null(result);
    const char *message = ptxjit_last_error();
    ck_assert_msg(strstr(message, "tpb=512") && strstr(message, "unusable") &&
                      strstr(message, "close the ptxjit context"), "%s", message);
    ptxjit_close(context);
}
END_TEST

Suite *suite_tune_gpu(void)
{
    Suite *s = suite_create("tune_gpu");
    TCase *tc = tcase_create("tune_gpu");
    tcase_set_timeout(tc, 120);
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, reduce_tuned_winner_sums_right);
    tcase_add_test(tc, transpose_tuned_winner_is_bit_exact);
    tcase_add_test(tc, softmax_tuned_winner_matches_float64);
    tcase_add_test(tc, matmul_tuned_winner_matches_float64);
    tcase_add_test(tc, user_callbacks_tune_and_the_record_is_reused);
    tcase_add_test(tc, a_candidate_that_loses_the_context_ends_the_tuning_and_says_so);
    suite_add_tcase(s, tc);
    return s;
}

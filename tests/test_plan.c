/* test_plan.c — what a family op launches for a problem (request/plan.h, ptxjit_plan, `run
 * --plan`), with no GPU: a request that leaves its variant to the defaults is planned around
 * a shape they cannot run; one that names its variant is refused with that variant's reason;
 * matmul's tile is fitted to the shape, and `run matmul` plans a layout's batch. The launches
 * themselves are checked against CPU references in the families' GPU suites. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "families/softmax/fit.h"
#include "request/plan.h"
#include "test_util.h"

/* ptxjit_plan's request and why; the request must hold want_word, why why_part (NULL: no why). */
static void expect_plan(ptxjit_context *context, const char *family, const char *params,
                        const char *problem, const char *want_word, const char *why_part)
{
    char *request = NULL, *why = NULL;
    ptxjit_status status = ptxjit_plan(&request, &why, context, family, params, problem);
    ck_assert_msg(status == PTXJIT_OK, "%s '%s' on %s: %s", family, params, problem,
                  ptxjit_last_error());
    ck_assert_msg(strstr(request, want_word), "%s '%s' on %s planned '%s', without '%s'",
                  family, params, problem, request, want_word);
    if (why_part)
        ck_assert_msg(why && strstr(why, why_part), "%s on %s: why '%s' lacks '%s'", family,
                      problem, why ? why : "(none)", why_part);
    else
        ck_assert_msg(!why, "%s on %s: as asked, yet why '%s'", family, problem, why);
    free(request);
    free(why);
}

static void expect_refused(ptxjit_context *context, const char *family, const char *params,
                           const char *problem, ptxjit_status want, const char *needle)
{
    char *request = (char *)"poison", *why = (char *)"poison";
    ck_assert_int_eq(ptxjit_plan(&request, &why, context, family, params, problem), want);
    ck_assert_ptr_null(request);
    ck_assert_ptr_null(why);
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "'%s' lacks '%s'", ptxjit_last_error(),
                  needle);
}

START_TEST(a_shape_the_default_variant_cannot_run_takes_a_fallback)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    /* 4859 f32 = 19436 bytes a row: no TMA stride. So is a column count whose transposed
     * rows are ragged (3343 rows), and f64's 7 columns. */
    expect_plan(context, "transpose", "", "rows=3344 cols=4859", "variant=smem",
                "19436 bytes, not a multiple of 16");
    expect_plan(context, "transpose", "", "rows=3343 cols=4860", "variant=smem",
                "not a multiple of 16");
    expect_plan(context, "transpose", "dtype=f64 block=32", "rows=9 cols=7",
                "variant=smem", "takes variant=smem");
    /* The request's other words stay. */
    expect_plan(context, "transpose", "dtype=f64 block=32", "rows=9 cols=7", "block=32",
                "takes variant=smem");
    expect_plan(context, "transpose", "", "rows=3344 cols=4860", "variant=tma_batched", NULL);
    /* Rows longer than variant=online holds in registers. */
    expect_plan(context, "softmax", "dtype=bf16", "rows=3 cols=100003", "variant=block",
                "holds rows of at most");
    expect_plan(context, "softmax", "tpr=128", "rows=3 cols=4096", "variant=online", NULL);
    expect_plan(context, "reduce", "", "n=1000003", "variant=vectorized", NULL);
    ptxjit_close(context);
}
END_TEST

START_TEST(a_named_variant_is_taken_as_written)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    expect_refused(context, "transpose", "variant=tma_batched", "rows=3344 cols=4859",
                   PTXJIT_ERR_INVALID_ARGUMENT, "19436 bytes, not a multiple of 16");
    expect_refused(context, "softmax", "variant=online", "rows=3 cols=100003",
                   PTXJIT_ERR_INVALID_ARGUMENT, "use variant=block");
    expect_plan(context, "transpose", "variant=smem", "rows=3344 cols=4860", "variant=smem",
                NULL);
    ptxjit_close(context);
}
END_TEST

/* variant=online's threads follow the row: one to four 16-byte vectors a thread. A request
 * naming tpb, tpr or items, or variant=block, is taken as written. */
START_TEST(softmax_threads_are_fitted_to_the_row)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    expect_plan(context, "softmax", "dtype=bf16", "rows=65536 cols=1024",
                "items=2 tpb=128 tpr=64", "fitted to the problem's shape");
    expect_plan(context, "softmax", "dtype=bf16", "rows=9 cols=4096", "items=2 tpb=256 tpr=256",
                "fitted");
    expect_plan(context, "softmax", "dtype=bf16", "rows=9 cols=16384",
                "items=4 tpb=512 tpr=512", "fitted");
    expect_plan(context, "softmax", "", "rows=9 cols=1024", "items=2 tpb=128 tpr=128", "fitted");
    expect_plan(context, "softmax", "", "rows=9 cols=7", "items=1 tpb=128 tpr=32", "fitted");
    expect_plan(context, "softmax", "dtype=f16", "rows=9 cols=3000", "items=2 tpb=256 tpr=256",
                "fitted"); /* 375 vectors */
    expect_plan(context, "softmax", "dtype=bf16 items=8", "rows=9 cols=1024", "items=8", NULL);
    expect_plan(context, "softmax", "dtype=bf16 variant=block", "rows=9 cols=1024",
                "variant=block", NULL);
    /* Past 4096 vectors a row: the defaults (here the fallback), not a fit. */
    expect_plan(context, "softmax", "", "rows=9 cols=32768", "variant=block", "holds rows");
    ck_assert_ptr_null(pj_softmax_fit_choose(16385 * 4, 4));
    ck_assert_str_eq(pj_softmax_fit_choose(1, 8), "tpb=128 tpr=32 items=1");
    ck_assert_str_eq(pj_softmax_fit_choose(129 * 8, 8), "tpb=128 tpr=128 items=2");
    ck_assert_str_eq(pj_softmax_fit_choose(64 * 8, 8), "tpb=128 tpr=64 items=1");
    ck_assert_str_eq(pj_softmax_fit_choose(65 * 8, 8), "tpb=128 tpr=64 items=2");
    ck_assert_str_eq(pj_softmax_fit_choose(4096 * 8, 8), "tpb=1024 tpr=1024 items=4");
    ptxjit_close(context);
}
END_TEST

START_TEST(matmul_tile_is_fitted_to_the_shape)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    /* 128 x 8192: 32 default tiles for 132 SMs; a smaller one fills them. */
    expect_plan(context, "matmul", "", "m=128 n=8192 k=8192", "bm=64",
                "132 SMs, assumed: no GPU here");
    /* Many tiles: ping-pong consumers, each taking whole 128 x 128 tiles in turn. */
    expect_plan(context, "matmul", "", "m=8192 n=8192 k=8192", "sched=pingpong",
                "mma=m64n128k16 stages=6 sched=pingpong");
    expect_plan(context, "matmul", "variant=wgmma_fp8", "m=4096 n=14336 k=4096",
                "mma=m64n176k16", "mma=m64n176k16 stages=4 sched=pingpong");
    /* ... 128 x 128 with a bias, whose loads would spill 128 x 176's registers. */
    expect_plan(context, "matmul", "variant=wgmma_fp8 bias=column", "m=4096 n=14336 k=4096",
                "mma=m64n128k16", "mma=m64n128k16 stages=6 sched=pingpong");
    /* ... fp8's cooperative 128 x 224 where its tiles make two waves and ping-pong's four; not
     * with a bias. */
    expect_plan(context, "matmul", "variant=wgmma_fp8", "m=512 n=14336 k=4096", "mma=m64n224k16",
                "mma=m64n224k16 stages=3");
    expect_plan(context, "matmul", "variant=wgmma_fp8 bias=column", "m=512 n=14336 k=4096",
                "mma=m64n128k16", "mma=m64n128k16 stages=6 sched=pingpong");
    /* ... not for an f32 C, nor the llvm backend: the default tile. */
    expect_plan(context, "matmul", "out=f32", "m=8192 n=8192 k=8192", "sched=persistent", NULL);
    expect_plan(context, "matmul", "backend=llvm", "m=8192 n=8192 k=8192", "sched=persistent",
                NULL);
    expect_plan(context, "matmul", "", "m=128 n=32000 k=4096", "bm=128", NULL);
    /* A request that names its tile is taken as written. */
    expect_plan(context, "matmul", "stages=3", "m=128 n=8192 k=8192", "bm=128", NULL);
    /* Rows the TMA cannot read are staged, and the plan says so. */
    expect_plan(context, "matmul", "", "m=55 n=213 k=15", "variant=wgmma",
                "A's rows (k = 15 bf16: 30 bytes) are copied into rows of 32 bytes");
    expect_plan(context, "matmul", "stages=3", "m=4093 n=4097 k=4095", "stages=3",
                "C (n = 4097 bf16: rows of 8194 bytes) is computed in rows of 8208 bytes");
    /* tensor_core is taken as written: refused with its reason. */
    expect_refused(context, "matmul", "variant=tensor_core", "m=5 n=6 k=7",
                   PTXJIT_ERR_INVALID_ARGUMENT, "block_tiled_vectorized");
    ptxjit_close(context);
}
END_TEST

START_TEST(auto_without_a_record_plans_the_defaults)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    expect_plan(context, "transpose", "block=auto", "rows=3344 cols=4859", "variant=smem",
                "takes variant=smem");
    expect_plan(context, "transpose", "block=auto", "rows=3344 cols=4859", "variant=smem",
                "auto parameters are left to the defaults");
    /* Auto words without a winner leave their parameters to the defaults, which the op fits
     * to the shape like any left out: a decoding's product gets the swapped tile. */
    expect_plan(context, "matmul", "mma=auto stages=auto", "m=1 n=4096 k=4096", "swap=1",
                "left to the defaults. The kernel is fitted to the problem's shape");
    expect_plan(context, "matmul", "bm=auto", "m=128 n=8192 k=8192", "bm=64", "fitted");
    ptxjit_close(context);
}
END_TEST

START_TEST(plan_refuses_bad_calls_by_name)
{
    ptxjit_context *context = test_open_offline("sm_90a");
    expect_refused(context, "nosuch", "", "n=1", PTXJIT_ERR_PARAM, "has no op");
    expect_refused(context, "transpose", "", "rows=3", PTXJIT_ERR_PARAM, "rows=N cols=N");
    expect_refused(context, "transpose", "colour=red", "rows=3 cols=4", PTXJIT_ERR_PARAM,
                   "colour");
    char *request, *why;
    ck_assert_int_eq(ptxjit_plan(NULL, &why, context, "reduce", "", "n=1"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_plan(&request, &why, NULL, "reduce", "", "n=1"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_plan(&request, &why, context, NULL, "", "n=1"),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

/* `run --plan`: the request on stdout, the same bytes each time, with no GPU. */
START_TEST(cli_run_plan_prints_the_request_and_why)
{
    char *dir = test_mkdtemp(), *first = NULL, *second = NULL;
    const char *args = "--no-gpu --arch sm_90a run transpose h=3344 w=4859 --plan";
    ck_assert_int_eq(test_run_cli(&first, dir, "", args, "/dev/null"), 0);
    ck_assert_int_eq(test_run_cli(&second, dir, "", args, "/dev/null"), 0);
    ck_assert_str_eq(first, second);
    ck_assert_msg(strncmp(first, "transpose ", 10) == 0 && strstr(first, "variant=smem\n") &&
                      strstr(first, "rows=3344 cols=4859 The defaults cannot run"),
                  "got '%s'", first);
    free(first);
    ck_assert_int_eq(test_run_cli(&first, dir, "", "--no-gpu --arch sm_90a run transpose "
                                  "h=3344 w=4859 variant=tma --plan", "/dev/null"), 2);
    free(first);
    free(second);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* `run matmul` with a layout's words: the family's plan of the batch, with no GPU; without
 * them the plan of the sizes, as before; bad words refused before any GPU is looked for. */
START_TEST(cli_run_plan_of_a_matmul_layout)
{
    char *dir = test_mkdtemp(), *out = NULL;
    ck_assert_int_eq(test_run_cli(&out, dir, "", "--no-gpu --arch sm_90a run matmul m=130 n=200 "
                                  "k=72 batch=4 lda=75 stride_b=0 --plan", "/dev/null"), 0);
    ck_assert_msg(strncmp(out, "matmul ", 7) == 0 && strstr(out, "variant=wgmma\n") &&
                      strstr(out, "\n  m=130 n=200 k=72 batch=4 lda=75 ldb=200 ldc=200 "
                                  "stride_a=9750 stride_b=0 stride_c=26000 The ") &&
                      strstr(out, "fitted to the problem's shape") &&
                      strstr(out, "The 4 products run in one launch") &&
                      strstr(out, "A's rows (k = 72 bf16: 144 bytes, 75 elements apart"),
                  "got '%s'", out);
    free(out);
    ck_assert_int_eq(test_run_cli(&out, dir, "", "--no-gpu --arch sm_90a run matmul m=130 n=200 "
                                  "k=72 --plan", "/dev/null"), 0);
    ck_assert_msg(strstr(out, "\n  m=130 n=200 k=72 The ") && !strstr(out, "batch="),
                  "got '%s'", out);
    free(out);
    static const struct {
        const char *args, *says;
    } refused[] = {
        {"run matmul batch=0 --plan", "batch=0 is not a count from 1 to 2147483647"},
        {"run matmul batch=0", "batch=0 is not a count from 1"}, /* before the GPU */
        {"run matmul stride_a=-1 --plan", "stride_a=-1 is not a count from 0 to 2^48"},
        {"run matmul k=64 lda=3 --plan", "lda = 3 is shorter than a row of A (k)"},
        {"run matmul batch=3 stride_c=5 --plan", "stride_c = 5 makes products' C overlap"},
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        char args[256];
        snprintf(args, sizeof args, "--no-gpu --arch sm_90a %s", refused[i].args);
        ck_assert_int_eq(test_run_cli(&out, dir, "", args, NULL), 2);
        ck_assert_msg(strstr(out, refused[i].says), "%s: got '%s'", args, out);
        free(out);
    }
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_plan(void)
{
    Suite *s = suite_create("plan");
    TCase *t = tcase_create("plan");
    tcase_set_timeout(t, 60);
    tcase_add_test(t, a_shape_the_default_variant_cannot_run_takes_a_fallback);
    tcase_add_test(t, a_named_variant_is_taken_as_written);
    tcase_add_test(t, softmax_threads_are_fitted_to_the_row);
    tcase_add_test(t, matmul_tile_is_fitted_to_the_shape);
    tcase_add_test(t, auto_without_a_record_plans_the_defaults);
    tcase_add_test(t, plan_refuses_bad_calls_by_name);
    tcase_add_test(t, cli_run_plan_prints_the_request_and_why);
    tcase_add_test(t, cli_run_plan_of_a_matmul_layout);
    suite_add_tcase(s, t);
    return s;
}

/* cli_layout.c — `ptxjit run matmul m=M n=N k=K [batch=B] [lda=..] [ldb=..] [ldc=..]
 * [stride_a=..] [stride_b=..] [stride_c=..] [--plan]`: a strided batch, or one product inside
 * larger matrices, as ptxjit_matmul_strided takes it. A word not given is dense: rows of k, of
 * B's row length and of n elements, each product's matrices right after the last's (batch=B
 * alone is B dense products one after another). The run fills A's and B's buffers with random
 * values, the gaps between rows and products too, poisons every element of C's (NaN), runs,
 * and checks each product's sampled rows against float64 and every element of C outside the
 * products as it was; --plan says, with no GPU, which kernel the op launches, how the products
 * run and what it stages for the layout (layout_plan.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "families/matmul/cli_layout.h"
#include "families/matmul/cli_product.h"
#include "families/matmul/layout_plan.h"

enum { WORD_BATCH, WORD_LDA, WORD_LDB, WORD_LDC, WORD_STRIDE_A, WORD_STRIDE_B, WORD_STRIDE_C };

const cli_run_word cli_matmul_layout_words[] = {
    /* The kernels count products in 32 bits (the library says so too, after planning). */
    [WORD_BATCH] = {"batch", 1, 0x7fffffff,
                    "the products of a strided batch; leave it out for one"},
    [WORD_LDA] = {"lda", 0, 0, "elements from a row of A to the next; 0 or left out: k"},
    [WORD_LDB] = {"ldb", 0, 0,
                  "elements from a row of B to the next; 0 or left out: B's row length, n "
                  "(k with b_layout=nk)"},
    [WORD_LDC] = {"ldc", 0, 0, "elements from a row of C to the next; 0 or left out: n"},
    [WORD_STRIDE_A] = {"stride_a", 0, 0,
                       "elements from a product's A to the next's; 0: one A for every product"},
    [WORD_STRIDE_B] = {"stride_b", 0, 0,
                       "elements from a product's B to the next's; 0: one B for every product"},
    [WORD_STRIDE_C] = {"stride_c", 0, 0, "elements from a product's C to the next's"},
    {NULL, 0, 0, NULL},
};

static size_t word_or(const cli_run_values *w, int word, size_t fallback)
{
    return w->given[word] ? w->value[word] : fallback;
}

/* a·b, or SIZE_MAX where it does not fit: a stride the library refuses, naming it. */
static size_t times(size_t a, size_t b)
{
    size_t product;
    return __builtin_mul_overflow(a, b, &product) ? SIZE_MAX : product;
}

/* The layout the words give for B's layout b_nk: leading dimensions as given (0, the library's
 * dense rows, where not), strides as given or each product's matrices right after the last's,
 * row tails included. */
static ptxjit_matmul_layout layout_of(const cli_run_values *w, size_t m, size_t n, size_t k,
                                      int b_nk)
{
    ptxjit_matmul_layout l;
    ptxjit_matmul_layout_init(&l);
    const size_t b_rows = b_nk ? n : k, b_cols = b_nk ? k : n;
    l.lda = w->value[WORD_LDA], l.ldb = w->value[WORD_LDB], l.ldc = w->value[WORD_LDC];
    l.batch = word_or(w, WORD_BATCH, 1);
    l.stride_a = word_or(w, WORD_STRIDE_A, times(m, l.lda ? l.lda : k));
    l.stride_b = word_or(w, WORD_STRIDE_B, times(b_rows, l.ldb ? l.ldb : b_cols));
    l.stride_c = word_or(w, WORD_STRIDE_C, times(m, l.ldc ? l.ldc : n));
    return l;
}

/* "lda=72 ldb=200 ldc=200 stride_a=9360 stride_b=0 stride_c=26000": the layout as the op runs
 * it (strides of a batch only), in the words that give it. */
static void layout_text(char *out, size_t size, const pj_matmul_layout *l)
{
    int used = snprintf(out, size, "lda=%zu ldb=%zu ldc=%zu", l->lda, l->ldb, l->ldc);
    if (l->batch > 1 && used > 0 && (size_t)used < size)
        snprintf(out + used, size - used, " stride_a=%zu stride_b=%zu stride_c=%zu",
                 l->stride_a, l->stride_b, l->stride_c);
}

/* The kernel the op takes for params on `batch` products of m x n x k (the tile fitted to them
 * all, as the op fits it), and the words' layout for it, checked as the op checks it. */
static ptxjit_status layout_kernel(ptxjit_kernel **kernel, matmul_config *config,
                                   ptxjit_matmul_layout *layout, pj_matmul_layout *resolved,
                                   ptxjit_context *context, const char *params,
                                   const size_t *sizes, const cli_run_values *words)
{
    const size_t m = sizes[0], n = sizes[1], k = sizes[2];
    ptxjit_matmul_layout products;
    ptxjit_matmul_layout_init(&products);
    products.batch = word_or(words, WORD_BATCH, 1);
    ptxjit_status status = pj_matmul_fit(kernel, config, NULL, context, params,
                                         (size_t)pj_matmul_plan_rows(m, &products), n, k);
    if (status != PTXJIT_OK)
        return status;
    *layout = layout_of(words, m, n, k, config->b_nk);
    return pj_matmul_layout_resolve(resolved, config, layout, m, n, k);
}

/* ", C's gaps untouched", or where they were written which element, into out ("" where C has
 * none). */
static void gap_text(char *out, size_t size, int gaps, size_t written)
{
    if (!gaps)
        out[0] = '\0';
    else if (written == SIZE_MAX)
        snprintf(out, size, ", C's gaps untouched");
    else
        snprintf(out, size, ", C WRITTEN outside the products (element %zu of its buffer)",
                 written);
}

int cli_matmul_run_layout(ptxjit_context *context, const char *params, const size_t *sizes,
                          const cli_run_values *words, int runs)
{
    ptxjit_kernel *kernel;
    matmul_config config;
    ptxjit_matmul_layout layout;
    pj_matmul_layout l;
    ptxjit_status status =
        layout_kernel(&kernel, &config, &layout, &l, context, params, sizes, words);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    matmul_data data;
    matmul_job job = {.data = &data, .params = params, .b_nk = config.b_nk, .config = &config};
    measurement result = {0};
    size_t written = SIZE_MAX;
    const double tolerance = cli_matmul_tolerance(&config);
    status = cli_matmul_data_make_layout(&data, context, l.m, l.n, l.k, config.dtype, &layout,
                                         config.b_nk);
    if (status == PTXJIT_OK)
        status = cli_matmul_measure(&result, &job, config.out, tolerance, runs);
    if (status == PTXJIT_OK) /* the last run's: every run wrote the same elements */
        status = cli_matmul_gap_written(&written, &data);
    const int gaps = cli_matmul_has_gaps(&data);
    cli_matmul_data_free(&data);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    const int ok = result.correct && written == SIZE_MAX;
    char text[256], gap[128];
    layout_text(text, sizeof text, &l);
    gap_text(gap, sizeof gap, gaps, written);
    printf("matmul %s, %zu x %zu x %zu x %zu (batch x m x n x k; %s): relative error %.2e "
           "(tolerance %.0e)%s: %s; median of %d: %.4f ms, %.1f GFLOP/s\n",
           ptxjit_kernel_params(kernel), l.batch, l.m, l.n, l.k, text, result.error, tolerance,
           gap, ok ? "ok" : "WRONG", runs, result.ms, result.tflops * 1e3);
    return ok ? CLI_OK : CLI_FAIL;
}

int cli_matmul_plan_layout(ptxjit_context *context, const char *params, const size_t *sizes,
                           const cli_run_values *words)
{
    const size_t m = sizes[0], n = sizes[1], k = sizes[2];
    pj_matmul_layout_plan plan;
    pj_matmul_layout l;
    char *why = NULL, *request = NULL;
    ptxjit_status status = pj_matmul_layout_plan_make(&plan, context, params, m, n, k,
                                                      word_or(words, WORD_BATCH, 1));
    const ptxjit_matmul_layout layout = layout_of(words, m, n, k, plan.config.b_nk);
    if (status == PTXJIT_OK)
        status = pj_matmul_layout_plan_why(&why, &plan, &layout, m, n, k);
    if (status == PTXJIT_OK) /* checked above: the values the plan line shows */
        status = pj_matmul_layout_resolve(&l, &plan.config, &layout, m, n, k);
    if (status == PTXJIT_OK)
        status = ptxjit_canonical_params(&request, context, "matmul", plan.plan.params);
    if (status == PTXJIT_OK) {
        char text[256];
        layout_text(text, sizeof text, &l);
        printf("matmul %s\n", request);
        printf("  m=%zu n=%zu k=%zu batch=%zu %s %s\n", m, n, k, l.batch, text,
               why ? why : "as asked: the request runs this problem");
    }
    free(why);
    free(request);
    pj_matmul_layout_plan_free(&plan);
    return status == PTXJIT_OK ? CLI_OK : cli_fail(status);
}

/* bench_reduce.c — `ptxjit bench reduce`: the write-up's progression and a parameter sweep,
 * each as GB/s and % of the device-to-device copy measured in the same run; and
 * `ptxjit bench jit`: what the JIT itself costs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/run_family.h"
#include "cli/timing.h"
#include "ops/reduce.h"

typedef struct {
    ptxjit_context *context;
    const char *params;
    ptxjit_devptr input, result;
    size_t n;
} bench_job;

static ptxjit_status bench_once(void *arg)
{
    bench_job *job = arg;
    return ptxjit_reduce_async(job->context, job->params, job->input, job->n, job->result, NULL);
}

/* Times params on the shared input and checks the timed result against want. */
static ptxjit_status bench_one(double *gbps, int *correct, bench_job *job, int runs,
                               uint32_t want)
{
    double ms = 0;
    uint32_t poison = 0xdeadbeefu, got = 0;
    ptxjit_status status = ptxjit_copy_to_device(job->context, job->result, &poison, 4);
    if (status == PTXJIT_OK)
        status = time_median_ms(&ms, job->context, bench_once, job, 3, runs);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_host(job->context, &got, job->result, 4);
    *correct = status == PTXJIT_OK && got == want;
    *gbps = job->n * 4.0 / (ms * 1e6);
    return status;
}

static const struct {
    const char *params;
    double writeup_gbps; /* the Mojo write-up's H100 figure for the same step */
} progression[] = {
    {"variant=two_pass tpb=512", 623},      {"variant=warp_shuffle tpb=512", 719},
    {"variant=one_pass tpb=512", 985},      {"variant=batched tpb=512 batch=8", 1882},
    {"variant=vectorized tpb=512 batch=8", 3134},
    {"variant=vectorized", 0}, /* the defaults */
};

static void print_row(const char *params, double gbps, double copy, int correct,
                      double writeup)
{
    printf("%-40s %8.1f %7.1f%%", params, gbps, 100.0 * gbps / copy);
    if (writeup > 0)
        printf(" %9.0f", writeup);
    else
        printf(" %9s", "");
    printf("  %s\n", correct ? "ok" : "WRONG");
}

static ptxjit_status sweep(bench_job *job, int runs, uint32_t want, double copy, int *all_ok)
{
    static const int tpbs[] = {128, 256, 512, 1024}, batches[] = {2, 4, 8, 16};
    double best = 0;
    char best_params[96] = "", params[96];
    printf("\nsweep of vectorized (tpb x batch):\n");
    for (size_t t = 0; t < PJ_ARRAY_SIZE(tpbs); t++)
        for (size_t b = 0; b < PJ_ARRAY_SIZE(batches); b++) {
            snprintf(params, sizeof params, "variant=vectorized tpb=%d batch=%d", tpbs[t],
                     batches[b]);
            job->params = params;
            double gbps;
            int correct;
            ptxjit_status status = bench_one(&gbps, &correct, job, runs, want);
            if (status != PTXJIT_OK)
                return status;
            print_row(params, gbps, copy, correct, 0);
            *all_ok &= correct;
            if (gbps > best) {
                best = gbps;
                snprintf(best_params, sizeof best_params, "%s", params);
            }
        }
    printf("\nbest found: %s: %.1f GB/s, %.1f%% of the copy\n", best_params, best,
           100.0 * best / copy);
    return PTXJIT_OK;
}

int reduce_bench(ptxjit_context *context, size_t n, int runs)
{
    char name[256] = "?";
    context->driver->cuDeviceGetName(name, sizeof name, context->device);
    int32_t *host = malloc(n * 4);
    if (!host) {
        fprintf(stderr, "ptxjit: cannot allocate %zu bytes of host memory\n", n * 4);
        return CLI_FAIL;
    }
    random_i32(host, n);
    uint32_t want = pj_reduce_reference_i32(host, n);
    bench_job job = {context, NULL, 0, 0, n};
    double copy = 0;
    int all_ok = 1;
    ptxjit_status status = copy_bandwidth(&copy, context, runs);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.input, context, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, job.input, host, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.result, context, 4);
    free(host);
    if (status == PTXJIT_OK) {
        printf("reduce, int32, n = %zu (%.2f GB read), %s, %s, median of %d\n", n, n * 4e-9,
               name, ptxjit_arch(context), runs);
        printf("device-to-device copy, 2 GiB, read + write: %.1f GB/s\n\n", copy);
        printf("%-40s %8s %8s %9s\n", "params", "GB/s", "% copy", "write-up");
    }
    for (size_t i = 0; i < PJ_ARRAY_SIZE(progression) && status == PTXJIT_OK; i++) {
        double gbps;
        int correct;
        job.params = progression[i].params;
        status = bench_one(&gbps, &correct, &job, runs, want);
        if (status == PTXJIT_OK)
            print_row(job.params, gbps, copy, correct, progression[i].writeup_gbps);
        all_ok &= correct;
    }
    if (status == PTXJIT_OK)
        status = sweep(&job, runs, want, copy, &all_ok);
    ptxjit_free(context, job.input);
    ptxjit_free(context, job.result);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    return all_ok ? CLI_OK : CLI_FAIL;
}

/* run_reduce.c — `ptxjit run reduce` and `ptxjit bench reduce`: fresh random data, the CPU
 * reference, CUDA-event medians, and the device-to-device copy measured in the same run. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_family.h"
#include "cli/timing.h"
#include "ops/reduce.h"

typedef struct {
    ptxjit_context *context;
    const char *params;
    ptxjit_devptr input, result;
    size_t n;
} reduce_job;

static ptxjit_status reduce_once(void *arg)
{
    reduce_job *job = arg;
    return ptxjit_reduce_async(job->context, job->params, job->input, job->n, job->result, NULL);
}

/* Host data of n elements of dtype, on the device too. */
typedef struct {
    void *host;
    ptxjit_devptr device;
    size_t n;
    pj_dtype dtype;
} reduce_data;

static ptxjit_status data_make(reduce_data *data, ptxjit_context *context, size_t n,
                               pj_dtype dtype)
{
    data->n = n;
    data->dtype = dtype;
    data->host = malloc(n * 4);
    if (!data->host)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "cannot allocate %zu bytes of host memory",
                        n * 4);
    if (dtype == PJ_DTYPE_f32)
        random_f32(data->host, n);
    else
        random_i32(data->host, n);
    ptxjit_status status = ptxjit_alloc(&data->device, context, n * 4);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, data->device, data->host, n * 4);
    return status;
}

static void data_free(reduce_data *data, ptxjit_context *context)
{
    free(data->host);
    if (data->device)
        ptxjit_free(context, data->device);
}

/* Compares the sum at job->result with the CPU reference; prints a line when verbose. */
static int check_result(ptxjit_context *context, const reduce_data *data, ptxjit_devptr result,
                        int verbose)
{
    uint32_t bits = 0;
    if (ptxjit_copy_to_host(context, &bits, result, 4) != PTXJIT_OK)
        return 0;
    if (data->dtype == PJ_DTYPE_i32) {
        uint32_t want = pj_reduce_reference_i32(data->host, data->n);
        if (verbose || bits != want)
            printf("  sum %" PRId32 ", CPU reference %" PRId32 ": %s\n", (int32_t)bits,
                   (int32_t)want, bits == want ? "exact" : "WRONG");
        return bits == want;
    }
    float got;
    memcpy(&got, &bits, 4);
    double magnitude, want = pj_reduce_reference_f32(data->host, data->n, &magnitude);
    int close = pj_reduce_f32_close(got, want, magnitude);
    if (verbose || !close)
        printf("  sum %.6g, CPU reference %.6g (|error| %.3g, bound %.3g): %s\n", got, want,
               got - want, 1e-5 * magnitude, close ? "ok" : "WRONG");
    return close;
}

/* Runs params on fresh data: check, time, check the timed result again. */
static ptxjit_status measure(double *ms, int *correct, ptxjit_context *context,
                             const char *params, reduce_data *data, size_t offset, int runs,
                             int verbose)
{
    reduce_job job = {context, params, data->device + offset * 4, 0, data->n - offset};
    ptxjit_status status = ptxjit_alloc(&job.result, context, 4);
    if (status != PTXJIT_OK)
        return status;
    reduce_data view = *data;
    view.host = (char *)data->host + offset * 4;
    view.n = data->n - offset;
    uint32_t poison = 0xdeadbeefu;
    status = ptxjit_copy_to_device(context, job.result, &poison, 4);
    if (status == PTXJIT_OK)
        status = reduce_once(&job);
    *correct = status == PTXJIT_OK && check_result(context, &view, job.result, verbose);
    if (status == PTXJIT_OK && runs > 0)
        status = time_median_ms(ms, context, reduce_once, &job, 3, runs);
    if (status == PTXJIT_OK && runs > 0)
        *correct = *correct && check_result(context, &view, job.result, 0);
    ptxjit_free(context, job.result);
    return status;
}

int reduce_run(ptxjit_context *context, const char *params, size_t n, int runs)
{
    ptxjit_kernel *kernel;
    reduce_config config;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, "reduce", params, NULL);
    if (status == PTXJIT_OK)
        status = pj_reduce_config_of(&config, kernel);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    reduce_data data = {0};
    double ms = 0;
    int correct = 0;
    status = data_make(&data, context, n, config.dtype);
    printf("reduce %s, n = %zu, grid %" PRIu64 " x %d threads\n", ptxjit_kernel_params(kernel),
           n, pj_reduce_grid(&config, data.device, n), config.tpb);
    if (status == PTXJIT_OK)
        status = measure(&ms, &correct, context, params, &data, 0, runs, 1);
    data_free(&data, context);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    printf("  median of %d: %.4f ms, %.1f GB/s\n", runs, ms, n * 4.0 / (ms * 1e6));
    return correct ? CLI_OK : CLI_FAIL;
}

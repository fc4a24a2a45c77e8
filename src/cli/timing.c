/* timing.c — medians of CUDA-event timings, and random inputs for the checks. */
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli/timing.h"

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

ptxjit_status time_median_ms(double *out, ptxjit_context *context, timed_fn fn, void *arg,
                             int warmup, int runs)
{
    const pj_driver *d = context->driver;
    CUevent start = NULL, stop = NULL;
    double *samples = calloc((size_t)runs, sizeof *samples);
    ptxjit_status status = samples ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "no memory");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuEventCreate(&start, CU_EVENT_DEFAULT), "cuEventCreate");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuEventCreate(&stop, CU_EVENT_DEFAULT), "cuEventCreate");
    for (int i = 0; i < warmup && status == PTXJIT_OK; i++)
        status = fn(arg);
    for (int i = 0; i < runs && status == PTXJIT_OK; i++) {
        float ms = 0;
        status = PJ_CU(d->cuEventRecord(start, NULL), "cuEventRecord");
        if (status == PTXJIT_OK)
            status = fn(arg);
        if (status == PTXJIT_OK)
            status = PJ_CU(d->cuEventRecord(stop, NULL), "cuEventRecord");
        if (status == PTXJIT_OK)
            status = PJ_CU(d->cuEventSynchronize(stop), "cuEventSynchronize");
        if (status == PTXJIT_OK)
            status = PJ_CU(d->cuEventElapsedTime(&ms, start, stop), "cuEventElapsedTime");
        samples[i] = ms;
    }
    if (status == PTXJIT_OK)
        *out = median_of(samples, runs);
    if (start)
        d->cuEventDestroy(start);
    if (stop)
        d->cuEventDestroy(stop);
    free(samples);
    return status;
}

typedef struct {
    const pj_driver *driver;
    ptxjit_devptr src, dst;
    size_t bytes;
} copy_job;

static ptxjit_status copy_once(void *arg)
{
    copy_job *job = arg;
    return PJ_CU(job->driver->cuMemcpyDtoDAsync(job->dst, job->src, job->bytes, NULL),
                 "cuMemcpyDtoDAsync");
}

/* The ceiling: a 2 GiB device-to-device copy, counting bytes read and written. */
ptxjit_status copy_bandwidth(double *gbps, ptxjit_context *context, int runs)
{
    copy_job job = {context->driver, 0, 0, (size_t)1 << 31};
    ptxjit_status status = ptxjit_alloc(&job.src, context, job.bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.dst, context, job.bytes);
    if (status == PTXJIT_OK)
        status = PJ_CU(context->driver->cuMemsetD32Async(job.src, 0x5a5a5a5au, job.bytes / 4,
                                                         NULL), "cuMemsetD32Async");
    double ms = 0;
    if (status == PTXJIT_OK)
        status = time_median_ms(&ms, context, copy_once, &job, 3, runs);
    ptxjit_free(context, job.src);
    ptxjit_free(context, job.dst);
    *gbps = 2.0 * (double)job.bytes / (ms * 1e6);
    return status;
}

double wall_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t seed(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (uint64_t)t.tv_nsec ^ ((uint64_t)t.tv_sec << 20) ^ ((uint64_t)getpid() << 40) ^ 1;
}

/* splitmix64: fast, and good enough to make every run's data different. */
static uint64_t next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void random_i32(int32_t *data, size_t n)
{
    uint64_t state = seed();
    size_t i = 0;
    for (; i + 1 < n; i += 2) {
        uint64_t r = next(&state);
        data[i] = (int32_t)(uint32_t)r;
        data[i + 1] = (int32_t)(uint32_t)(r >> 32);
    }
    if (i < n)
        data[i] = (int32_t)(uint32_t)next(&state);
}

void random_f32(float *data, size_t n)
{
    uint64_t state = seed();
    for (size_t i = 0; i < n; i++)
        data[i] = (float)((double)(next(&state) >> 11) * 0x1.0p-52 - 1.0); /* [-1, 1) */
}

/* timing.c — medians of CUDA-event timings (ptxjit.h's events; the gate through libcuda.c),
 * and random inputs for the checks. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "cli/libcuda.h"
#include "cli/timing.h"
#include "cli_internal.h"

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

/* A gate that holds the stream until the host has enqueued a whole sample (start event,
 * the timed work, stop event): the events then bracket the GPU work alone, not the host's
 * time to submit it (a few microseconds: over 1% of a 0.7 ms kernel). The stream waits for
 * a counter in mapped host memory to reach the sample's number. */
typedef struct {
    volatile uint32_t *host;
    ptxjit_devptr device;
} stream_gate;

static ptxjit_status gate_open(stream_gate *gate, ptxjit_context *context)
{
    void *host = NULL;
    ptxjit_status status = cli_cuda_host_mapped(&host, &gate->device, 4, context);
    gate->host = host;
    if (host)
        *gate->host = 0;
    return status;
}

static void gate_close(stream_gate *gate, ptxjit_context *context)
{
    if (gate->host)
        cli_cuda_host_free(context, (void *)gate->host);
}

const char *cli_flush_name(cli_flush_mode mode)
{
    return mode == CLI_FLUSH_READ ? "read" : mode == CLI_FLUSH_WRITE ? "write" : "none";
}

/* L2 emptied before a sample (timing.h): the read is a sum of the buffer's words, left past
 * its end. */
static ptxjit_status empty_l2(ptxjit_context *context, const cli_l2_flush *flush, uint32_t sample)
{
    if (!flush || flush->mode == CLI_FLUSH_NONE || !flush->buffer)
        return PTXJIT_OK;
    if (flush->mode == CLI_FLUSH_WRITE)
        return ptxjit_memset_d8_async(context, flush->buffer, (unsigned char)sample, flush->bytes,
                                      NULL);
    return ptxjit_reduce_async(context, "dtype=i32", flush->buffer, flush->bytes / 4,
                               flush->buffer + flush->bytes, NULL);
}

static ptxjit_status time_one(float *ms, ptxjit_context *context, stream_gate *gate,
                              uint32_t sample, void *start, void *stop, timed_fn fn, void *arg,
                              const cli_l2_flush *flush)
{
    ptxjit_status status = cli_cuda_wait_at_least(context, NULL, gate->device, sample);
    if (status == PTXJIT_OK)
        status = empty_l2(context, flush, sample);
    if (status == PTXJIT_OK)
        status = ptxjit_event_record(context, start, NULL);
    if (status == PTXJIT_OK)
        status = fn(arg);
    if (status == PTXJIT_OK)
        status = ptxjit_event_record(context, stop, NULL);
    __atomic_store_n(gate->host, sample, __ATOMIC_RELEASE); /* open even after a failure */
    if (status == PTXJIT_OK)
        status = ptxjit_event_synchronize(context, stop);
    if (status == PTXJIT_OK)
        status = ptxjit_event_elapsed_ms(ms, context, start, stop);
    return status;
}

/* Frees what time_median_ms made. A failing call here reports its own failure, which would
 * replace the message of the one that stopped the timing (a launch's sticky error fails them
 * all): that message is kept and put back. */
static ptxjit_status release(ptxjit_status status, ptxjit_context *context, stream_gate *gate,
                             void *start, void *stop)
{
    static _Thread_local char kept[16384];
    snprintf(kept, sizeof kept, "%s", status != PTXJIT_OK ? ptxjit_last_error() : "");
    if (start || stop)
        ptxjit_synchronize(context); /* nothing may still wait on the gate when it is freed */
    gate_close(gate, context);
    if (start)
        ptxjit_event_destroy(context, start);
    if (stop)
        ptxjit_event_destroy(context, stop);
    return status == PTXJIT_OK ? status : pj_error(status, "%s", kept);
}

static ptxjit_status timed_samples(double *out, ptxjit_context *context, timed_fn fn,
                                   void *arg, int warmup, int runs, const cli_l2_flush *flush)
{
    void *start = NULL, *stop = NULL;
    stream_gate gate = {NULL, 0};
    double *samples = calloc((size_t)runs, sizeof *samples);
    ptxjit_status status = samples ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "no memory");
    if (status == PTXJIT_OK)
        status = ptxjit_event_create(&start, context);
    if (status == PTXJIT_OK)
        status = ptxjit_event_create(&stop, context);
    if (status == PTXJIT_OK)
        status = gate_open(&gate, context);
    for (int i = 0; i < warmup && status == PTXJIT_OK; i++)
        status = fn(arg);
    for (int i = 0; i < runs && status == PTXJIT_OK; i++) {
        float ms = 0;
        status = time_one(&ms, context, &gate, (uint32_t)i + 1, start, stop, fn, arg, flush);
        samples[i] = ms;
    }
    if (status == PTXJIT_OK)
        *out = median_of(samples, runs);
    free(samples);
    return release(status, context, &gate, start, stop);
}

ptxjit_status time_median_ms(double *out, ptxjit_context *context, timed_fn fn, void *arg,
                             int warmup, int runs)
{
    return timed_samples(out, context, fn, arg, warmup, runs, NULL);
}

ptxjit_status time_median_ms_flushed(double *out, ptxjit_context *context, timed_fn fn,
                                     void *arg, int warmup, int runs, const cli_l2_flush *flush)
{
    return timed_samples(out, context, fn, arg, warmup, runs, flush);
}

typedef struct {
    ptxjit_context *context;
    ptxjit_devptr src, dst;
    size_t bytes;
} copy_job;

static ptxjit_status copy_once(void *arg)
{
    copy_job *job = arg;
    return cli_cuda_copy_async(job->context, job->dst, job->src, job->bytes, NULL);
}

/* The ceiling: a 2 GiB device-to-device copy, counting bytes read and written. */
ptxjit_status copy_bandwidth(double *gbps, ptxjit_context *context, int runs)
{
    copy_job job = {context, 0, 0, (size_t)1 << 31};
    ptxjit_status status = ptxjit_alloc(&job.src, context, job.bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&job.dst, context, job.bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d32_async(context, job.src, 0x5a5a5a5au, job.bytes / 4, NULL);
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

/* runner.c — candidates on the GPU, on one stream (the default one): a checked run (outputs
 * poisoned first, timed between events around the run alone, waited for, a failure told
 * apart from a lost context), and timed runs between CUDA events, with L2 flushed before each
 * for memory-bound work (a memset of twice the L2: what a run leaves in L2 must not serve the
 * next). The runs of one call are enqueued back to back and waited for once, so the GPU never
 * idles between them while the host submits the next. */
#include <stdlib.h>
#include <string.h>

#include "tune/scaffold.h"
#include "tune/tune.h"

typedef struct {
    ptxjit_context *context;
    const ptxjit_tune_options *options;
    pj_tune_scaffold *scaffold; /* a built-in family's problem; NULL with user callbacks */
    CUdeviceptr flush;
    size_t flush_bytes;
    int lost;
    CUcontext saved; /* the caller's CUDA context, current again on release */
    CUevent around[2]; /* the checked run's start and end */
} gpu_bench;

static ptxjit_status run_once(gpu_bench *g, ptxjit_kernel *kernel)
{
    return g->scaffold ? pj_tune_scaffold_run(g->scaffold, kernel, NULL)
                       : g->options->run(g->options->user, kernel, NULL);
}

/* A sticky error (an illegal address, a trap) comes back from every later call in the
 * context: a synchronize that fails says the context is lost. */
static int context_lost(gpu_bench *g)
{
    if (!g->lost && g->context->driver->cuCtxSynchronize() != CUDA_SUCCESS)
        g->lost = 1;
    return g->lost;
}

/* L2 emptied of what came before (memory-bound work only): byte fills the flush buffer. */
static ptxjit_status flush_l2(gpu_bench *g, unsigned char byte)
{
    return g->flush ? PJ_CU(g->context->driver->cuMemsetD8Async(g->flush, byte, g->flush_bytes,
                                                                NULL),
                            "cuMemsetD8Async (L2 flush)")
                    : PTXJIT_OK;
}

/* The checked run, between the events around[] when its time is asked for: poisoned outputs
 * and the flush come before the first event, so the time is the run's alone. */
static ptxjit_status checked_run(gpu_bench *g, ptxjit_kernel *kernel, double *ms)
{
    const pj_driver *d = g->context->driver;
    ptxjit_status status = g->scaffold ? pj_tune_scaffold_poison(g->scaffold) : PTXJIT_OK;
    if (status == PTXJIT_OK && ms)
        status = flush_l2(g, 0x5a);
    if (status == PTXJIT_OK && ms)
        status = PJ_CU(d->cuEventRecord(g->around[0], NULL), "cuEventRecord");
    if (status == PTXJIT_OK)
        status = run_once(g, kernel);
    if (status == PTXJIT_OK && ms)
        status = PJ_CU(d->cuEventRecord(g->around[1], NULL), "cuEventRecord");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuCtxSynchronize(), "the candidate's run");
    float elapsed = 0;
    if (status == PTXJIT_OK && ms) {
        status = PJ_CU(d->cuEventElapsedTime(&elapsed, g->around[0], g->around[1]),
                       "cuEventElapsedTime");
        *ms = elapsed;
    }
    return status;
}

static ptxjit_status gpu_check(pj_tune_bench *bench, ptxjit_kernel *kernel, int reference,
                               double *ms)
{
    gpu_bench *g = bench->state;
    ptxjit_status status = checked_run(g, kernel, ms);
    if (status == PTXJIT_OK && g->scaffold)
        status = pj_tune_scaffold_check(g->scaffold, kernel, reference);
    else if (status == PTXJIT_OK && g->options->check)
        status = g->options->check(g->options->user, kernel, NULL);
    return status;
}

static ptxjit_status gpu_measure(pj_tune_bench *bench, ptxjit_kernel *kernel, double *samples,
                                 int count, int warm)
{
    gpu_bench *g = bench->state;
    const pj_driver *d = g->context->driver;
    CUevent *events = calloc((size_t)count * 2, sizeof *events);
    ptxjit_status status = events ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    int made = 0;
    for (; status == PTXJIT_OK && made < 2 * count; made++)
        status = PJ_CU(d->cuEventCreate(&events[made], CU_EVENT_DEFAULT), "cuEventCreate");
    /* One untimed run first: the stream is busy when the first start event is reached. */
    if (status == PTXJIT_OK && warm)
        status = run_once(g, kernel);
    for (int i = 0; i < count && status == PTXJIT_OK; i++) {
        status = flush_l2(g, (unsigned char)i);
        if (status == PTXJIT_OK)
            status = PJ_CU(d->cuEventRecord(events[2 * i], NULL), "cuEventRecord");
        if (status == PTXJIT_OK)
            status = run_once(g, kernel);
        if (status == PTXJIT_OK)
            status = PJ_CU(d->cuEventRecord(events[2 * i + 1], NULL), "cuEventRecord");
    }
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuEventSynchronize(events[2 * count - 1]), "cuEventSynchronize");
    for (int i = 0; i < count && status == PTXJIT_OK; i++) {
        float ms = 0;
        status = PJ_CU(d->cuEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]),
                       "cuEventElapsedTime");
        samples[i] = ms;
    }
    for (int i = 0; i < made; i++)
        if (events[i])
            d->cuEventDestroy(events[i]);
    free(events);
    return status;
}

static int gpu_lost(pj_tune_bench *bench)
{
    return context_lost(bench->state);
}

static void gpu_release(pj_tune_bench *bench)
{
    gpu_bench *g = bench->state;
    if (!g)
        return;
    /* In a lost context the frees fail (harmlessly): the host side is freed all the same. */
    pj_tune_scaffold_close(g->scaffold);
    if (g->flush)
        g->context->driver->cuMemFree(g->flush);
    for (int i = 0; i < 2; i++)
        if (g->around[i])
            g->context->driver->cuEventDestroy(g->around[i]);
    pj_gpu_leave(g->context, g->saved);
    free(g);
    bench->state = NULL;
}

/* Twice the L2, so that nothing a run left there survives the flush. */
static ptxjit_status make_flush(gpu_bench *g)
{
    int l2 = 0;
    g->context->driver->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE,
                                             g->context->device);
    g->flush_bytes = (size_t)(l2 > 0 ? l2 : 50 << 20) * 2;
    return PJ_CU(g->context->driver->cuMemAlloc(&g->flush, g->flush_bytes),
                 "cuMemAlloc (the L2 flush buffer)");
}

ptxjit_status pj_tune_bench_gpu(pj_tune_bench *out, const pj_tune_bench_spec *spec)
{
    memset(out, 0, sizeof *out);
    /* The whole tuning runs in the context's CUDA context; release puts the caller's back. */
    CUcontext saved;
    ptxjit_status status = pj_gpu_enter(spec->context, &saved);
    if (status != PTXJIT_OK)
        return status;
    gpu_bench *g = calloc(1, sizeof *g);
    if (!g) {
        pj_gpu_leave(spec->context, saved);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    *g = (gpu_bench){spec->context, spec->options, NULL, 0, 0, 0, saved, {NULL, NULL}};
    *out = (pj_tune_bench){g, gpu_check, gpu_measure, gpu_lost, gpu_release, {0}};
    pj_tune_limits_read(&out->limits, spec->context);
    for (int i = 0; i < 2 && status == PTXJIT_OK; i++)
        status = PJ_CU(spec->context->driver->cuEventCreate(&g->around[i], CU_EVENT_DEFAULT),
                       "cuEventCreate");
    /* User kernels may be memory-bound too: their L2 is flushed as well. */
    if (status == PTXJIT_OK && (!spec->builtin || spec->builtin->tune->memory_bound))
        status = make_flush(g);
    if (status == PTXJIT_OK && spec->builtin)
        status = pj_tune_scaffold_open(&g->scaffold, spec->context, spec->builtin, spec->sizes,
                                       spec->reference);
    if (status != PTXJIT_OK) {
        gpu_release(out);
        memset(out, 0, sizeof *out);
    }
    return status;
}

/* runner.c — candidates on the GPU, on one stream (the default one): a checked run (outputs
 * poisoned first, timed between events around the run alone, waited for, a failure told
 * apart from a lost context), and timed runs between CUDA events, with L2 emptied before each
 * for memory-bound work (a read of twice the L2: what a run leaves in L2 must not serve the
 * next, and a fill would leave dirty lines whose write-back lands in the next run). The runs of
 * one call are enqueued back to back and waited for once, so the GPU never idles between them
 * while the host submits the next. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tune/scaffold.h"
#include "tune/tune.h"

typedef struct {
    ptxjit_context *context;
    const ptxjit_tune_options *options;
    pj_tune_scaffold *scaffold; /* a built-in family's problem; NULL with user callbacks */
    CUdeviceptr flush; /* flush_bytes to read, then the read's 16-byte sink */
    size_t flush_bytes;
    int empty;         /* L2 emptied before each timed run (else only the preheat reads) */
    /* The module of the tuner's kernels whose read empties L2: the scaffold's checker, or
     * own_checker, opened for user kernels. */
    pj_tune_checker *checker, *own_checker;
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

/* L2 emptied of what came before (memory-bound work only) by a read of the flush buffer, which
 * leaves it full of clean lines. Before 2026-11-29 a memset filled it: a run of a candidate
 * then wrote back up to an L2 of dirty lines, or not, as the eviction fell, and a first round's
 * single runs of softmax 65536 x 4096 came out 14-50% slow often enough to drop the fastest
 * candidates: five tunings picked four winners (H200, docs/PERFORMANCE.md, 2026-11-29 04:40;
 * the preheat below did the rest). sample only varies the key that keeps the read from being
 * left out. */
static ptxjit_status flush_l2(gpu_bench *g, unsigned sample)
{
    if (!g->flush)
        return PTXJIT_OK;
    return pj_tune_read(g->checker, g->flush, g->flush_bytes / 16, 0x9e3779b9u ^ sample,
                        g->flush + g->flush_bytes);
}

/* Before a timed run, where the tuning empties L2. */
static ptxjit_status empty_l2(gpu_bench *g, unsigned sample)
{
    return g->empty ? flush_l2(g, sample) : PTXJIT_OK;
}

/* The checked run, between the events around[] when its time is asked for: poisoned outputs
 * and a flush come before the first event, so the time is the run's alone — the flush also
 * where the timed runs are not flushed, since the poison leaves up to an L2 of dirty lines
 * whose write-back would fall inside the run. */
static ptxjit_status checked_run(gpu_bench *g, ptxjit_kernel *kernel, double *ms)
{
    const pj_driver *d = g->context->driver;
    ptxjit_status status = g->scaffold ? pj_tune_scaffold_poison(g->scaffold) : PTXJIT_OK;
    if (status == PTXJIT_OK && ms)
        status = flush_l2(g, 0);
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
        status = empty_l2(g, (unsigned)i + 1);
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
    pj_tune_checker_close(g->own_checker);
    for (int i = 0; i < 2; i++)
        if (g->around[i])
            g->context->driver->cuEventDestroy(g->around[i]);
    pj_gpu_leave(g->context, g->saved);
    free(g);
    bench->state = NULL;
}

/* The GPU kept reading for PREHEAT_MS before the first candidate runs: in a fresh process a
 * first round of warm-cache candidates ran while the clocks were still rising, and single
 * runs came out 14-20% slow often enough to drop the fastest candidates (softmax 65536 x 4096,
 * four winners in five tunings, each a fresh `ptxjit tune --retune`; H200, docs/PERFORMANCE.md,
 * 2026-11-29 04:40). */
#define PREHEAT_MS 20.0
#define PREHEAT_BATCH 32

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static ptxjit_status preheat(gpu_bench *g)
{
    const double start = now_ms();
    ptxjit_status status = PTXJIT_OK;
    while (status == PTXJIT_OK && now_ms() - start < PREHEAT_MS) {
        for (int i = 0; i < PREHEAT_BATCH && status == PTXJIT_OK; i++)
            status = flush_l2(g, (unsigned)i);
        if (status == PTXJIT_OK)
            status = PJ_CU(g->context->driver->cuCtxSynchronize(), "the tuner's preheat");
    }
    return status;
}

/* Twice the L2 (16-byte words), so that nothing a run left there survives the flush, and the
 * module whose kernel reads it: the scaffold's checker, whose module a built-in family's tuning
 * has loaded already (one load of the tuner's kernels per tuning, not two), or one of its own
 * for user kernels. The buffer is set once, so that the reads are of defined bytes. */
static ptxjit_status make_flush(gpu_bench *g)
{
    const pj_driver *d = g->context->driver;
    int l2 = 0;
    d->cuDeviceGetAttribute(&l2, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, g->context->device);
    g->flush_bytes = (size_t)(l2 > 0 ? l2 : 50 << 20) * 2 / 16 * 16;
    ptxjit_status status = PJ_CU(d->cuMemAlloc(&g->flush, g->flush_bytes + 16),
                                 "cuMemAlloc (the L2 flush buffer)");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuMemsetD8Async(g->flush, 0x5a, g->flush_bytes + 16, NULL),
                       "cuMemsetD8Async");
    if (status == PTXJIT_OK && !g->scaffold)
        status = pj_tune_checker_open(&g->own_checker, g->context);
    g->checker = g->scaffold ? pj_tune_scaffold_checker(g->scaffold) : g->own_checker;
    return status;
}

/* Whether the tuning empties L2 before each timed run: user kernels (which may be memory-
 * bound) always; a built-in family as its tuning ops say, PJ_TUNE_EMPTY_IF_FITS where the
 * problem's buffers fit in the flush (twice the L2). Past that a run leaves in L2 only the
 * last of what it touched, which the next reads last or not at all, and the flush only
 * spaces the runs: five tunings of bf16 8192^3 (384 MiB) picked two and three winners with
 * it, one and two without (H200, docs/PERFORMANCE.md, 2026-11-29 16:04-16:08). */
static int empties_l2(const gpu_bench *g, const pj_family *builtin)
{
    if (!builtin)
        return 1;
    if (builtin->tune->empty_l2 == PJ_TUNE_EMPTY_IF_FITS)
        return g->scaffold && pj_tune_scaffold_bytes(g->scaffold) <= g->flush_bytes;
    return builtin->tune->empty_l2 == PJ_TUNE_EMPTY_ALWAYS;
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
    *g = (gpu_bench){.context = spec->context, .options = spec->options, .saved = saved};
    *out = (pj_tune_bench){g, gpu_check, gpu_measure, gpu_lost, gpu_release, {0}};
    pj_tune_limits_read(&out->limits, spec->context);
    for (int i = 0; i < 2 && status == PTXJIT_OK; i++)
        status = PJ_CU(spec->context->driver->cuEventCreate(&g->around[i], CU_EVENT_DEFAULT),
                       "cuEventCreate");
    if (status == PTXJIT_OK && spec->builtin)
        status = pj_tune_scaffold_open(&g->scaffold, spec->context, spec->builtin, spec->sizes,
                                       spec->reference);
    /* The flush buffer serves the preheat too, so every tuning makes it. */
    if (status == PTXJIT_OK)
        status = make_flush(g);
    if (status == PTXJIT_OK)
        g->empty = empties_l2(g, spec->builtin);
    if (status == PTXJIT_OK)
        status = preheat(g);
    if (status != PTXJIT_OK) {
        gpu_release(out);
        memset(out, 0, sizeof *out);
    }
    return status;
}

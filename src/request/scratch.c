/* scratch.c — the context's device workspace, borrowed in stream order (scratch.h). Kept for
 * the context's life: an allocation and a memset per call would cost a decoding's matmul
 * (~10 µs) a fifth of its time. */
#include <stdlib.h>

#include "request/scratch.h"

struct pj_scratch {
    pthread_mutex_t lock; /* held from a borrow to its return */
    CUdeviceptr base;     /* zeroed part, then loose part; 0: none yet */
    size_t zeroed, loose; /* their sizes */
    CUevent done;         /* recorded at each return; NULL until the first */
};

/* The context's workspace, made on first use. */
static ptxjit_status scratch_of(struct pj_scratch **out, ptxjit_context *context)
{
    pthread_mutex_lock(&context->lock);
    if (!context->scratch) {
        struct pj_scratch *s = calloc(1, sizeof *s);
        if (s && pthread_mutex_init(&s->lock, NULL) != 0) {
            free(s);
            s = NULL;
        }
        context->scratch = s;
    }
    *out = context->scratch;
    pthread_mutex_unlock(&context->lock);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* Sizes rounded up to 256 bytes (the zeroed part's end is the loose part's alignment). */
static size_t rounded(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

/* A larger workspace in place of the old one, freed once the borrow before is done with it
 * (the caller's stream already waits for that borrow). */
static ptxjit_status grow(struct pj_scratch *s, const pj_driver *d, size_t zeroed, size_t loose,
                          CUstream stream)
{
    zeroed = rounded(zeroed > s->zeroed ? zeroed : s->zeroed);
    loose = rounded(loose > s->loose ? loose : s->loose);
    if (s->base) {
        ptxjit_status status = PJ_CU(d->cuMemFreeAsync(s->base, stream), "cuMemFreeAsync");
        s->base = 0;
        s->zeroed = s->loose = 0;
        if (status != PTXJIT_OK)
            return status;
    }
    CUdeviceptr base;
    ptxjit_status status =
        PJ_CU(d->cuMemAllocAsync(&base, zeroed + loose, stream), "cuMemAllocAsync");
    if (status == PTXJIT_OK && zeroed)
        status = PJ_CU(d->cuMemsetD32Async(base, 0, zeroed / 4, stream), "cuMemsetD32Async");
    if (status != PTXJIT_OK)
        return status;
    s->base = base;
    s->zeroed = zeroed;
    s->loose = loose;
    return PTXJIT_OK;
}

ptxjit_status pj_scratch_borrow(pj_scratch_lease *out, ptxjit_context *context,
                                size_t zeroed_bytes, size_t loose_bytes, CUstream stream)
{
    struct pj_scratch *s;
    ptxjit_status status = scratch_of(&s, context);
    if (status != PTXJIT_OK)
        return status;
    const pj_driver *d = context->driver;
    pthread_mutex_lock(&s->lock);
    if (s->done)
        status = PJ_CU(d->cuStreamWaitEvent(stream, s->done, 0), "cuStreamWaitEvent");
    if (status == PTXJIT_OK && (zeroed_bytes > s->zeroed || loose_bytes > s->loose || !s->base))
        status = grow(s, d, zeroed_bytes, loose_bytes, stream);
    if (status != PTXJIT_OK) {
        pthread_mutex_unlock(&s->lock);
        return status;
    }
    out->zeroed = s->base;
    out->loose = s->base + s->zeroed;
    return PTXJIT_OK;
}

ptxjit_status pj_scratch_return(ptxjit_context *context, CUstream stream, ptxjit_status status)
{
    struct pj_scratch *s = context->scratch;
    const pj_driver *d = context->driver;
    ptxjit_status recorded = PTXJIT_OK;
    if (!s->done)
        recorded = PJ_CU(d->cuEventCreate(&s->done, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    if (recorded == PTXJIT_OK)
        recorded = PJ_CU(d->cuEventRecord(s->done, stream), "cuEventRecord");
    pthread_mutex_unlock(&s->lock);
    return status != PTXJIT_OK ? status : recorded;
}

void pj_scratch_free(ptxjit_context *context)
{
    struct pj_scratch *s = context->scratch;
    if (!s)
        return;
    if (context->driver) {
        if (s->done)
            context->driver->cuEventSynchronize(s->done);
        if (s->base)
            context->driver->cuMemFree(s->base);
        if (s->done)
            context->driver->cuEventDestroy(s->done);
    }
    pthread_mutex_destroy(&s->lock);
    free(s);
    context->scratch = NULL;
}

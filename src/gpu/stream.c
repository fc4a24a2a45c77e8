/* stream.c — streams, events and asynchronous copies and fills, for programs with no CUDA
 * runtime of their own, and the CUDA context's handle. Streams and events are the driver's
 * CUstream and CUevent, made in the device's primary context, so they mix with the CUDA
 * runtime's of the same device. Each call makes that context current only for itself
 * (pj_gpu_enter / pj_gpu_leave, RETURN_IN_CONTEXT). */
#include "request/context.h"

/* Returns the driver call fn(...) made with the context's CUDA context current (between
 * pj_gpu_enter and pj_gpu_leave), or why the GPU cannot be used, before the driver is
 * touched. A macro, so that each wrapper below stays one line. */
#define RETURN_IN_CONTEXT(context, fn, ...)                                                \
    do {                                                                                   \
        CUcontext saved_;                                                                  \
        ptxjit_status entered_ = pj_gpu_enter((context), &saved_);                         \
        if (entered_ != PTXJIT_OK)                                                         \
            return entered_;                                                               \
        return pj_gpu_return((context), saved_, (context)->driver->fn(__VA_ARGS__), #fn);  \
    } while (0)

static ptxjit_status refuse(const char *what, const char *why)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "%s: %s", what, why);
}

ptxjit_status ptxjit_stream_create(void **out, ptxjit_context *context, int flags)
{
    if (!out || !context)
        return refuse("ptxjit_stream_create", "out and context must not be NULL");
    *out = NULL;
    if (flags != 0 && flags != PTXJIT_STREAM_NON_BLOCKING)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_stream_create: flags %d unknown; pass 0 (the stream waits for "
                        "the default stream) or PTXJIT_STREAM_NON_BLOCKING",
                        flags);
    unsigned cu_flags = flags ? CU_STREAM_NON_BLOCKING : CU_STREAM_DEFAULT;
    RETURN_IN_CONTEXT(context, cuStreamCreate, (CUstream *)out, cu_flags);
}

ptxjit_status ptxjit_stream_destroy(ptxjit_context *context, void *stream)
{
    if (!context || !stream)
        return refuse("ptxjit_stream_destroy",
                      "context and stream must not be NULL (the default stream is never "
                      "destroyed)");
    RETURN_IN_CONTEXT(context, cuStreamDestroy, (CUstream)stream);
}

ptxjit_status ptxjit_stream_synchronize(ptxjit_context *context, void *stream)
{
    if (!context)
        return refuse("ptxjit_stream_synchronize", "context is NULL");
    RETURN_IN_CONTEXT(context, cuStreamSynchronize, (CUstream)stream);
}

ptxjit_status ptxjit_event_create(void **out, ptxjit_context *context)
{
    if (!out || !context)
        return refuse("ptxjit_event_create", "out and context must not be NULL");
    *out = NULL;
    RETURN_IN_CONTEXT(context, cuEventCreate, (CUevent *)out, CU_EVENT_DEFAULT);
}

ptxjit_status ptxjit_event_record(ptxjit_context *context, void *event, void *stream)
{
    if (!context || !event)
        return refuse("ptxjit_event_record", "context and event must not be NULL");
    RETURN_IN_CONTEXT(context, cuEventRecord, (CUevent)event, (CUstream)stream);
}

ptxjit_status ptxjit_event_synchronize(ptxjit_context *context, void *event)
{
    if (!context || !event)
        return refuse("ptxjit_event_synchronize", "context and event must not be NULL");
    RETURN_IN_CONTEXT(context, cuEventSynchronize, (CUevent)event);
}

ptxjit_status ptxjit_event_elapsed_ms(float *out, ptxjit_context *context, void *start,
                                      void *end)
{
    if (!out || !context || !start || !end)
        return refuse("ptxjit_event_elapsed_ms", "out, context, start and end must not be NULL");
    RETURN_IN_CONTEXT(context, cuEventElapsedTime, out, (CUevent)start, (CUevent)end);
}

ptxjit_status ptxjit_event_destroy(ptxjit_context *context, void *event)
{
    if (!context || !event)
        return refuse("ptxjit_event_destroy", "context and event must not be NULL");
    RETURN_IN_CONTEXT(context, cuEventDestroy, (CUevent)event);
}

ptxjit_status ptxjit_copy_to_device_async(ptxjit_context *context, ptxjit_devptr dst,
                                          const void *src, size_t bytes, void *stream)
{
    if (!context || !dst || !src)
        return refuse("ptxjit_copy_to_device_async", "context, dst and src must not be NULL");
    RETURN_IN_CONTEXT(context, cuMemcpyHtoDAsync, dst, src, bytes, (CUstream)stream);
}

ptxjit_status ptxjit_copy_to_host_async(ptxjit_context *context, void *dst, ptxjit_devptr src,
                                        size_t bytes, void *stream)
{
    if (!context || !dst || !src)
        return refuse("ptxjit_copy_to_host_async", "context, dst and src must not be NULL");
    RETURN_IN_CONTEXT(context, cuMemcpyDtoHAsync, dst, src, bytes, (CUstream)stream);
}

ptxjit_status ptxjit_memset_d8_async(ptxjit_context *context, ptxjit_devptr dst,
                                     unsigned char value, size_t count, void *stream)
{
    if (!context || !dst)
        return refuse("ptxjit_memset_d8_async", "context and dst must not be NULL");
    RETURN_IN_CONTEXT(context, cuMemsetD8Async, dst, value, count, (CUstream)stream);
}

ptxjit_status ptxjit_memset_d32_async(ptxjit_context *context, ptxjit_devptr dst, uint32_t value,
                                      size_t count, void *stream)
{
    if (!context || !dst)
        return refuse("ptxjit_memset_d32_async", "context and dst must not be NULL");
    if (dst % 4)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_memset_d32_async: dst 0x%llx is not 4-byte aligned; fill "
                        "32-bit values at an aligned address, or bytes with "
                        "ptxjit_memset_d8_async",
                        (unsigned long long)dst);
    RETURN_IN_CONTEXT(context, cuMemsetD32Async, dst, value, count, (CUstream)stream);
}

ptxjit_status ptxjit_cuda_context(void **out, ptxjit_context *context)
{
    if (!out || !context)
        return refuse("ptxjit_cuda_context", "out and context must not be NULL");
    *out = NULL;
    if (context->gpu_status != PTXJIT_OK)
        return pj_error(context->gpu_status, "%s", context->gpu_error);
    *out = context->cu_context;
    return PTXJIT_OK;
}

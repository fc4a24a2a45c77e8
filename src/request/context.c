/* context.c — what the rest of the library asks of an open context: whether its GPU is
 * usable, its CUDA context made current around each call that touches the GPU, and its target
 * architecture. Opening and closing one: open.c. */
#include <stdlib.h>

#include "context.h"

ptxjit_status ptxjit_gpu_status(ptxjit_context *context)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "context is NULL");
    if (context->gpu_status != PTXJIT_OK)
        return pj_error(context->gpu_status, "%s", context->gpu_error);
    return PTXJIT_OK;
}

/* The CUDA context this thread had current when its last ptxjit call that touched the GPU
 * returned (NULL: none yet). A hint only: the caller may have switched since, which is why a
 * launch that trusts it falls back to pj_gpu_enter when the driver refuses (launch.c). */
static _Thread_local CUcontext left_current;

int pj_gpu_left_current(const ptxjit_context *context)
{
    return context->gpu_status == PTXJIT_OK && left_current == context->cu_context;
}

/* One cuCtxGetCurrent when ours is already current (the launch path's usual case). Where none
 * is current, ours stays current afterwards, as the CUDA runtime leaves its own: only a
 * context of the caller's is put back. */
ptxjit_status pj_gpu_enter(ptxjit_context *context, CUcontext *saved)
{
    *saved = NULL;
    if (context->gpu_status != PTXJIT_OK)
        return pj_error(context->gpu_status, "%s", context->gpu_error);
    CUcontext current = NULL;
    ptxjit_status status = PJ_CU(context->driver->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (status != PTXJIT_OK || current == context->cu_context)
        return status;
    status = PJ_CU(context->driver->cuCtxSetCurrent(context->cu_context), "cuCtxSetCurrent");
    if (status == PTXJIT_OK)
        *saved = current;
    return status;
}

void pj_gpu_leave(ptxjit_context *context, CUcontext saved)
{
    if (saved)
        context->driver->cuCtxSetCurrent(saved);
    left_current = saved ? saved : context->cu_context;
}

ptxjit_status pj_gpu_return(ptxjit_context *context, CUcontext saved, CUresult result,
                            const char *call)
{
    pj_gpu_leave(context, saved);
    return pj_driver_check(result, call);
}

int pj_context_sm(const ptxjit_context *context)
{
    return atoi(context->arch + 3); /* "sm_90a" -> 90; choose_arch checked the form */
}

const char *ptxjit_arch(const ptxjit_context *context)
{
    return context ? context->arch : NULL;
}

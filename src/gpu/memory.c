/* memory.c — device memory and copies for programs with no CUDA runtime of their own. */
#include "request/context.h"

static ptxjit_status enter(ptxjit_context *context, CUcontext *saved)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "context is NULL");
    return pj_gpu_enter(context, saved);
}

ptxjit_status ptxjit_alloc(ptxjit_devptr *out, ptxjit_context *context, size_t bytes)
{
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_alloc: out is NULL");
    CUcontext saved;
    ptxjit_status status = enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    CUdeviceptr pointer = 0;
    CUresult result = context->driver->cuMemAlloc(&pointer, bytes ? bytes : 1);
    status = pj_gpu_return(context, saved, result, "cuMemAlloc");
    if (status == PTXJIT_ERR_OUT_OF_MEMORY)
        return pj_error_wrap(status, "allocating %zu bytes on the GPU", bytes);
    *out = pointer;
    return status;
}

ptxjit_status ptxjit_free(ptxjit_context *context, ptxjit_devptr pointer)
{
    CUcontext saved;
    ptxjit_status status = enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    if (!pointer) {
        pj_gpu_leave(context, saved);
        return PTXJIT_OK;
    }
    CUresult result = context->driver->cuMemFree(pointer);
    return pj_gpu_return(context, saved, result, "cuMemFree");
}

ptxjit_status ptxjit_copy_to_device(ptxjit_context *context, ptxjit_devptr dst, const void *src,
                                    size_t bytes)
{
    CUcontext saved;
    ptxjit_status status = enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    CUresult result = context->driver->cuMemcpyHtoD(dst, src, bytes);
    return pj_gpu_return(context, saved, result, "cuMemcpyHtoD");
}

ptxjit_status ptxjit_copy_to_host(ptxjit_context *context, void *dst, ptxjit_devptr src,
                                  size_t bytes)
{
    CUcontext saved;
    ptxjit_status status = enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    CUresult result = context->driver->cuMemcpyDtoH(dst, src, bytes);
    return pj_gpu_return(context, saved, result, "cuMemcpyDtoH");
}

ptxjit_status ptxjit_synchronize(ptxjit_context *context)
{
    CUcontext saved;
    ptxjit_status status = enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    CUresult result = context->driver->cuCtxSynchronize();
    return pj_gpu_return(context, saved, result, "cuCtxSynchronize");
}

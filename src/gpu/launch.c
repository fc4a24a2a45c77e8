/* launch.c — a kernel on the GPU: its module loaded once per context, its functions, the
 * dynamic shared memory limit raised past 48 KiB when asked, launches (plain and in clusters)
 * with the geometry checked first and failures that name the launch, the resources of an
 * entry, and the CUDA handles of a kernel. Every public call here runs between pj_gpu_enter
 * and pj_gpu_leave, so that the caller's CUDA context is current again when it returns. */
#include <stdio.h>
#include <string.h>

#include "request/context.h"

static ptxjit_status load_module(ptxjit_kernel *kernel)
{
    ptxjit_context *context = kernel->context;
    const pj_driver *d = context->driver;
    ptxjit_status status = PJ_CU(d->cuModuleLoadData(&kernel->module, kernel->artifact.cubin),
                                 "cuModuleLoadData");
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "%s (%s) compiled for %s", kernel->schema->family,
                             kernel->canonical, context->arch);
    kernel->functions = calloc((size_t)kernel->artifact.entry_count, sizeof(CUfunction));
    kernel->shared_limits = calloc((size_t)kernel->artifact.entry_count, sizeof(int));
    if (!kernel->functions || !kernel->shared_limits)
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; status == PTXJIT_OK && i < kernel->artifact.entry_count; i++)
        status = PJ_CU(d->cuModuleGetFunction(&kernel->functions[i], kernel->module,
                                              kernel->artifact.entries[i]),
                       "cuModuleGetFunction");
    if (status != PTXJIT_OK) {
        d->cuModuleUnload(kernel->module);
        free(kernel->functions);
        free(kernel->shared_limits);
        kernel->functions = NULL;
        kernel->shared_limits = NULL;
        return status;
    }
    __atomic_store_n(&kernel->loaded, 1, __ATOMIC_RELEASE);
    return PTXJIT_OK;
}

ptxjit_status pj_kernel_load(ptxjit_kernel *kernel, const char *entry, int *index)
{
    if (!kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "kernel is NULL");
    ptxjit_context *context = kernel->context;
    if (context->gpu_status != PTXJIT_OK)
        return pj_error(context->gpu_status, "%s", context->gpu_error);
    ptxjit_status status = pj_kernel_entry_index(index, kernel, entry);
    if (status != PTXJIT_OK)
        return status;
    if (__atomic_load_n(&kernel->loaded, __ATOMIC_ACQUIRE))
        return PTXJIT_OK;
    pthread_mutex_lock(&context->lock);
    if (!kernel->loaded)
        status = load_module(kernel);
    pthread_mutex_unlock(&context->lock);
    return status;
}

/* A block gets more than 48 KiB of dynamic shared memory only once the function's limit is
 * raised; raised once per entry, to the largest size asked for so far. */
static ptxjit_status allow_shared_bytes(ptxjit_kernel *kernel, int index, unsigned bytes)
{
    ptxjit_context *context = kernel->context;
    ptxjit_status status = PTXJIT_OK;
    pthread_mutex_lock(&context->lock);
    if ((unsigned)kernel->shared_limits[index] < bytes) {
        status = PJ_CU(context->driver->cuFuncSetAttribute(
                           kernel->functions[index],
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes),
                       "cuFuncSetAttribute");
        if (status == PTXJIT_OK)
            kernel->shared_limits[index] = (int)bytes;
    }
    pthread_mutex_unlock(&context->lock);
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "%s (%s) entry %s asks for %u bytes of dynamic shared "
                             "memory per block, more than the device allows; choose smaller "
                             "tiles",
                             kernel->schema->family, kernel->canonical,
                             kernel->artifact.entries[index], bytes);
    return status;
}

ptxjit_status pj_kernel_function(CUfunction *out, ptxjit_kernel *kernel, const char *entry,
                              unsigned shared_bytes)
{
    int index;
    ptxjit_status status = pj_kernel_load(kernel, entry, &index);
    if (status != PTXJIT_OK)
        return status;
    if (shared_bytes > 48 * 1024 &&
        (unsigned)__atomic_load_n(&kernel->shared_limits[index], __ATOMIC_ACQUIRE) < shared_bytes) {
        status = allow_shared_bytes(kernel, index, shared_bytes);
        if (status != PTXJIT_OK)
            return status;
    }
    *out = kernel->functions[index];
    return PTXJIT_OK;
}

/* What the driver would refuse with a bare CUDA_ERROR_INVALID_VALUE, said before anything
 * touches the GPU. */
static ptxjit_status check_geometry(const ptxjit_kernel *kernel, const char *entry,
                                    ptxjit_dim3 grid, ptxjit_dim3 block)
{
    if (!kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "launch: kernel is NULL");
    /* No dimension above 1024 first: the product of three 32-bit ones can wrap 64 bits. */
    unsigned long long threads =
        block.x > 1024 || block.y > 1024 || block.z > 1024
            ? 1025
            : (unsigned long long)block.x * block.y * block.z;
    if (grid.x && grid.y && grid.z && threads && threads <= 1024)
        return PTXJIT_OK; /* every launch comes here: the entry's name only for the message */
    const char *name = pj_kernel_entry_name(kernel, entry);
    if (!grid.x || !grid.y || !grid.z || !threads)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "launch of %s entry %s: grid %u x %u x %u and block %u x %u x %u must "
                        "have no zero dimension (1 where unused); a launch of no threads has "
                        "nothing to run: skip it",
                        kernel->schema->family, name, grid.x, grid.y, grid.z, block.x, block.y,
                        block.z);
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                    "launch of %s entry %s: a block of %u x %u x %u is %.0f threads, more "
                    "than the 1024 a block may have; launch more blocks of fewer threads",
                    kernel->schema->family, name, block.x, block.y, block.z,
                    (double)block.x * block.y * block.z);
}

/* The likeliest fix for a launch the driver refused. */
static const char *launch_hint(CUresult result)
{
    switch (result) {
    case CUDA_ERROR_INVALID_VALUE:
        return "the grid's y and z may be at most 65535, the block at most the entry's "
               "max_threads (ptxjit_kernel_resources_get), the shared memory at most what the "
               "device allows";
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        return "the block needs more registers than a multiprocessor has: launch fewer "
               "threads per block";
    case CUDA_ERROR_INVALID_HANDLE:
    case CUDA_ERROR_INVALID_CONTEXT:
        return "the stream must belong to the device's primary context: one from "
               "ptxjit_stream_create, or the CUDA runtime's on the same device";
    case CUDA_ERROR_INVALID_CLUSTER_SIZE:
        return "the cluster is larger than the device runs at once for this entry (8 blocks "
               "are portable): use a smaller cluster";
    default:
        return "the arguments must match the entry's parameters (ptxjit_launch_checked "
               "checks them)";
    }
}

/* PTXJIT_ERR_CUDA (or OUT_OF_MEMORY) naming the launch, the driver's error and a fix. */
static ptxjit_status launch_failed(const ptxjit_kernel *kernel, const char *entry,
                                   ptxjit_dim3 grid, ptxjit_dim3 block,
                                   const ptxjit_dim3 *cluster, unsigned shared_bytes,
                                   CUresult result, const char *call)
{
    ptxjit_status status = pj_driver_check(result, call);
    char driver_error[1024], clusters[96] = "";
    snprintf(driver_error, sizeof driver_error, "%s", ptxjit_last_error());
    if (cluster)
        snprintf(clusters, sizeof clusters, " in clusters of %u x %u x %u", cluster->x,
                 cluster->y, cluster->z);
    return pj_error(status,
                    "launching %s (%s) entry %s with grid %u x %u x %u, block %u x %u x %u, "
                    "%u bytes of dynamic shared memory%s: %s; %s",
                    kernel->schema->family, kernel->canonical,
                    pj_kernel_entry_name(kernel, entry), grid.x, grid.y, grid.z, block.x,
                    block.y, block.z, shared_bytes, clusters, driver_error, launch_hint(result));
}

/* cuLaunchKernel, or cuLaunchKernelEx with the cluster's dimension. */
static CUresult launch_function(const pj_driver *d, CUfunction function, ptxjit_dim3 grid,
                                ptxjit_dim3 block, const ptxjit_dim3 *cluster,
                                unsigned shared_bytes, void *stream, void **args)
{
    if (!cluster)
        return d->cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                 shared_bytes, (CUstream)stream, args, NULL);
    CUlaunchAttribute attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = cluster->x;
    attribute.value.clusterDim.y = cluster->y;
    attribute.value.clusterDim.z = cluster->z;
    CUlaunchConfig config = {grid.x,  grid.y,       grid.z,           block.x,    block.y,
                             block.z, shared_bytes, (CUstream)stream, &attribute, 1};
    return d->cuLaunchKernelEx(&config, function, args, NULL);
}

/* The launch itself, with the kernel's context current. */
static ptxjit_status launch_entered(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                                    ptxjit_dim3 block, const ptxjit_dim3 *cluster,
                                    unsigned shared_bytes, void *stream, void **args)
{
    CUfunction function;
    ptxjit_status status = pj_kernel_function(&function, kernel, entry, shared_bytes);
    if (status != PTXJIT_OK)
        return status;
    CUresult result = launch_function(kernel->context->driver, function, grid, block, cluster,
                                      shared_bytes, stream, args);
    if (result == CUDA_SUCCESS)
        return PTXJIT_OK;
    return launch_failed(kernel, entry, grid, block, cluster, shared_bytes, result,
                         cluster ? "cuLaunchKernelEx" : "cuLaunchKernel");
}

/* The function of entry when using it needs nothing done first (the module loaded, the
 * entry known, its shared memory limit already raised as far); else NULL. */
static CUfunction ready_function(ptxjit_kernel *kernel, const char *entry, unsigned shared_bytes)
{
    int index = 0;
    if (!__atomic_load_n(&kernel->loaded, __ATOMIC_ACQUIRE))
        return NULL;
    if (entry) {
        for (index = 0; index < kernel->artifact.entry_count; index++)
            if (strcmp(kernel->artifact.entries[index], entry) == 0)
                break;
        if (index == kernel->artifact.entry_count)
            return NULL;
    }
    if (shared_bytes > 48 * 1024 &&
        (unsigned)__atomic_load_n(&kernel->shared_limits[index], __ATOMIC_ACQUIRE) < shared_bytes)
        return NULL;
    return kernel->functions[index];
}

/* cluster NULL: a plain launch. Where this thread's last ptxjit call left the kernel's
 * context current and the kernel is ready, the launch goes straight to the driver: no
 * cuCtxGetCurrent, nothing but the launch. If the caller made another context current since
 * (or none), the driver does not run the function outside the context its module was loaded
 * in: the launch fails and is done again the checked way (one cuCtxGetCurrent, and a switch
 * when another context is current), which also reports any failure. */
static ptxjit_status launch(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                            ptxjit_dim3 block, const ptxjit_dim3 *cluster, unsigned shared_bytes,
                            void *stream, void **args)
{
    if (pj_gpu_left_current(kernel->context)) {
        CUfunction function = ready_function(kernel, entry, shared_bytes);
        if (function && launch_function(kernel->context->driver, function, grid, block, cluster,
                                        shared_bytes, stream, args) == CUDA_SUCCESS)
            return PTXJIT_OK;
    }
    CUcontext saved;
    ptxjit_status status = pj_gpu_enter(kernel->context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = launch_entered(kernel, entry, grid, block, cluster, shared_bytes, stream, args);
    pj_gpu_leave(kernel->context, saved);
    return status;
}

ptxjit_status ptxjit_launch(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                            ptxjit_dim3 block, unsigned shared_bytes, void *stream, void **args)
{
    ptxjit_status status = check_geometry(kernel, entry, grid, block);
    if (status != PTXJIT_OK)
        return status;
    return launch(kernel, entry, grid, block, NULL, shared_bytes, stream, args);
}

ptxjit_status ptxjit_launch_cluster(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                                    ptxjit_dim3 block, ptxjit_dim3 cluster, unsigned shared_bytes,
                                    void *stream, void **args)
{
    if (cluster.x == 1 && cluster.y == 1 && cluster.z == 1)
        return ptxjit_launch(kernel, entry, grid, block, shared_bytes, stream, args);
    ptxjit_status status = check_geometry(kernel, entry, grid, block);
    if (status != PTXJIT_OK)
        return status;
    if (!cluster.x || !cluster.y || !cluster.z || grid.x % cluster.x || grid.y % cluster.y ||
        grid.z % cluster.z)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "launch: a cluster of %u x %u x %u blocks must divide the grid of "
                        "%u x %u x %u; round the grid up to a multiple of it",
                        cluster.x, cluster.y, cluster.z, grid.x, grid.y, grid.z);
    return launch(kernel, entry, grid, block, &cluster, shared_bytes, stream, args);
}

/* The module loaded and the index of entry, for the accessors below. */
static ptxjit_status load(ptxjit_kernel *kernel, const char *entry, int *index)
{
    if (!kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "kernel is NULL");
    CUcontext saved;
    ptxjit_status status = pj_gpu_enter(kernel->context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = pj_kernel_load(kernel, entry, index);
    pj_gpu_leave(kernel->context, saved);
    return status;
}

/* What the cubin says first (param_bytes and the spills exist only there; an unknown entry
 * is refused naming the entries), then the driver's word for the rest. */
ptxjit_status ptxjit_kernel_resources_get(ptxjit_kernel_resources *out, ptxjit_kernel *kernel,
                                          const char *entry)
{
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_kernel_resources_get: out is NULL");
    int index;
    if (!kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_kernel_resources_get: kernel is NULL");
    ptxjit_status status = pj_kernel_entry_index(&index, kernel, entry);
    if (status != PTXJIT_OK)
        return status;
    if (ptxjit_kernel_resources_static(out, kernel, entry) != PTXJIT_OK)
        out->param_bytes = out->spill_stores = out->spill_loads = -1;
    CUcontext saved; /* the driver's reads too run in the kernel's context */
    status = pj_gpu_enter(kernel->context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = pj_kernel_load(kernel, entry, &index);
    const pj_driver *d = kernel->context->driver;
    struct {
        int *slot;
        CUfunction_attribute which;
    } reads[] = {{&out->registers, CU_FUNC_ATTRIBUTE_NUM_REGS},
                 {&out->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
                 {&out->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
                 {&out->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(reads) && status == PTXJIT_OK; i++)
        status = PJ_CU(d->cuFuncGetAttribute(reads[i].slot, reads[i].which,
                                             kernel->functions[index]),
                       "cuFuncGetAttribute");
    pj_gpu_leave(kernel->context, saved);
    return status;
}

ptxjit_status ptxjit_kernel_function(void **out, ptxjit_kernel *kernel, const char *entry)
{
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_kernel_function: out is NULL");
    *out = NULL;
    int index;
    ptxjit_status status = load(kernel, entry, &index);
    if (status == PTXJIT_OK)
        *out = kernel->functions[index];
    return status;
}

ptxjit_status ptxjit_kernel_module(void **out, ptxjit_kernel *kernel)
{
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_kernel_module: out is NULL");
    *out = NULL;
    int index;
    ptxjit_status status = load(kernel, NULL, &index);
    if (status == PTXJIT_OK)
        *out = kernel->module;
    return status;
}

/* launch.c — a kernel on the GPU: its module loaded once per context, its functions, the
 * dynamic shared memory limit raised past 48 KiB when asked, launches (plain and in clusters)
 * and the resources of an entry. */
#include <string.h>

#include "context.h"

static int entry_index(const ptxjit_kernel *kernel, const char *entry)
{
    if (!entry)
        return 0;
    for (int i = 0; i < kernel->artifact.entry_count; i++)
        if (strcmp(kernel->artifact.entries[i], entry) == 0)
            return i;
    return -1;
}

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
    ptxjit_status status = pj_context_make_current(context);
    if (status != PTXJIT_OK)
        return status;
    *index = entry_index(kernel, entry);
    if (*index < 0)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "%s has no entry '%s'",
                        kernel->schema->family, entry);
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
        return pj_error_wrap(status, "%s (%s) asks for %u bytes of dynamic shared memory per "
                             "block, more than the device allows; choose smaller tiles",
                             kernel->schema->family, kernel->canonical, bytes);
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

ptxjit_status ptxjit_launch(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                            ptxjit_dim3 block, unsigned shared_bytes, void *stream, void **args)
{
    CUfunction function;
    ptxjit_status status = pj_kernel_function(&function, kernel, entry, shared_bytes);
    if (status != PTXJIT_OK)
        return status;
    const pj_driver *d = kernel->context->driver;
    return PJ_CU(d->cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                   shared_bytes, (CUstream)stream, args, NULL),
                 "cuLaunchKernel");
}

ptxjit_status ptxjit_launch_cluster(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                                    ptxjit_dim3 block, ptxjit_dim3 cluster, unsigned shared_bytes,
                                    void *stream, void **args)
{
    if (cluster.x == 1 && cluster.y == 1 && cluster.z == 1)
        return ptxjit_launch(kernel, entry, grid, block, shared_bytes, stream, args);
    if (!cluster.x || !cluster.y || !cluster.z || grid.x % cluster.x || grid.y % cluster.y ||
        grid.z % cluster.z)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "launch: a cluster of %u x %u x %u blocks must divide the grid of "
                        "%u x %u x %u; round the grid up to a multiple of it",
                        cluster.x, cluster.y, cluster.z, grid.x, grid.y, grid.z);
    CUfunction function;
    ptxjit_status status = pj_kernel_function(&function, kernel, entry, shared_bytes);
    if (status != PTXJIT_OK)
        return status;
    CUlaunchAttribute attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = cluster.x;
    attribute.value.clusterDim.y = cluster.y;
    attribute.value.clusterDim.z = cluster.z;
    CUlaunchConfig config = {grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes,
                             (CUstream)stream, &attribute, 1};
    const pj_driver *d = kernel->context->driver;
    return PJ_CU(d->cuLaunchKernelEx(&config, function, args, NULL), "cuLaunchKernelEx");
}

/* What the cubin says first (param_bytes and the spills exist only there; an unknown entry
 * is refused naming the entries), then the driver's word for the rest. */
ptxjit_status ptxjit_kernel_resources_get(ptxjit_kernel_resources *out, ptxjit_kernel *kernel,
                                          const char *entry)
{
    int index;
    if (!out || !kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_kernel_resources_get: %s is NULL", out ? "kernel" : "out");
    ptxjit_status status = pj_kernel_entry_index(&index, kernel, entry);
    if (status != PTXJIT_OK)
        return status;
    if (ptxjit_kernel_resources_static(out, kernel, entry) != PTXJIT_OK)
        out->param_bytes = out->spill_stores = out->spill_loads = -1;
    status = pj_kernel_load(kernel, entry, &index);
    if (status != PTXJIT_OK)
        return status;
    const pj_driver *d = kernel->context->driver;
    CUfunction f = kernel->functions[index];
    struct {
        int *slot;
        CUfunction_attribute which;
    } reads[] = {{&out->registers, CU_FUNC_ATTRIBUTE_NUM_REGS},
                 {&out->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
                 {&out->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
                 {&out->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(reads) && status == PTXJIT_OK; i++)
        status = PJ_CU(d->cuFuncGetAttribute(reads[i].slot, reads[i].which, f),
                       "cuFuncGetAttribute");
    return status;
}

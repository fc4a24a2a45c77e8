/* libcuda.c — the CUDA driver calls of libcuda.h. libcuda is opened as the library opens it
 * (dynlib.h: $PTXJIT_CUDA_LIBRARY, else libcuda.so.1), which hands back the file already
 * loaded, and each entry point is resolved with cuGetProcAddress at the CUDA 12.0 ABI, as the
 * library resolves its own: a bare cuLaunchKernel here is the very function ptxjit_launch
 * calls. The library has made cuInit by the time any of these runs (each needs a context with
 * a GPU). An entry point the driver lacks fails the calls that need it, not the others. */
#include <cuda.h>
#include <pthread.h>
#include <stdio.h>

#include "cli/cli.h"
#include "cli/libcuda.h"
#include "cli_internal.h"

typedef CUresult(CUDAAPI *get_proc_fn)(const char *, void **, int, cuuint64_t,
                                       CUdriverProcAddressQueryResult *);

static struct {
    CUresult(CUDAAPI *cuGetErrorName)(CUresult, const char **);
    CUresult(CUDAAPI *cuGetErrorString)(CUresult, const char **);
    CUresult(CUDAAPI *cuCtxGetCurrent)(CUcontext *);
    CUresult(CUDAAPI *cuCtxSetCurrent)(CUcontext);
    CUresult(CUDAAPI *cuCtxGetDevice)(CUdevice *);
    CUresult(CUDAAPI *cuDeviceGetName)(char *, int, CUdevice);
    CUresult(CUDAAPI *cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
    CUresult(CUDAAPI *cuMemHostAlloc)(void **, size_t, unsigned int);
    CUresult(CUDAAPI *cuMemFreeHost)(void *);
    CUresult(CUDAAPI *cuMemHostGetDevicePointer)(CUdeviceptr *, void *, unsigned int);
    CUresult(CUDAAPI *cuStreamWaitValue32)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
    CUresult(CUDAAPI *cuMemcpyDtoDAsync)(CUdeviceptr, CUdeviceptr, size_t, CUstream);
    CUresult(CUDAAPI *cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, CUstream, void **, void **);
    ptxjit_status status;
    char error[PJ_DYNLIB_ERROR_MAX];
} cu;

static pthread_once_t cu_once = PTHREAD_ONCE_INIT;

/* cuGetProcAddress_v2 of the library's driver; NULL with the failure recorded. */
static get_proc_fn open_driver(void)
{
    static const char *const sonames[] = {"libcuda.so.1", NULL};
    static pj_dynlib library;
    const pj_dynlib_spec spec = {.what = "the CUDA driver",
                                 .override = "PTXJIT_CUDA_LIBRARY",
                                 .sonames = sonames,
                                 .places = PJ_DYNLIB_OVERRIDE_ALONE,
                                 .fix = "install the NVIDIA driver"};
    get_proc_fn get_proc = NULL;
    const pj_dynlib_symbol symbol = {"cuGetProcAddress_v2", (void **)&get_proc};
    if (!pj_dynlib_open(&library, &spec))
        snprintf(cu.error, sizeof cu.error, "%s", library.error);
    else if (pj_dynlib_resolve(library.handle, &symbol, 1))
        snprintf(cu.error, sizeof cu.error, "the CUDA driver %s has no cuGetProcAddress_v2",
                 library.path);
    return get_proc;
}

static void load_once(void)
{
    get_proc_fn get_proc = open_driver();
    cu.status = get_proc ? PTXJIT_OK : PTXJIT_ERR_NO_DRIVER;
    const struct {
        const char *name;
        void **slot;
    } symbols[] = {
#define CLI_CUDA_SYMBOL(name) {#name, (void **)&cu.name}
        CLI_CUDA_SYMBOL(cuGetErrorName),    CLI_CUDA_SYMBOL(cuGetErrorString),
        CLI_CUDA_SYMBOL(cuCtxGetCurrent),   CLI_CUDA_SYMBOL(cuCtxSetCurrent),
        CLI_CUDA_SYMBOL(cuCtxGetDevice),    CLI_CUDA_SYMBOL(cuDeviceGetName),
        CLI_CUDA_SYMBOL(cuDeviceGetAttribute),
        CLI_CUDA_SYMBOL(cuMemHostAlloc),    CLI_CUDA_SYMBOL(cuMemFreeHost),
        CLI_CUDA_SYMBOL(cuMemHostGetDevicePointer), CLI_CUDA_SYMBOL(cuStreamWaitValue32),
        CLI_CUDA_SYMBOL(cuMemcpyDtoDAsync), CLI_CUDA_SYMBOL(cuLaunchKernel),
#undef CLI_CUDA_SYMBOL
    };
    for (size_t i = 0; get_proc && i < CLI_LENGTH(symbols); i++) {
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (get_proc(symbols[i].name, symbols[i].slot, 12000, CU_GET_PROC_ADDRESS_DEFAULT,
                     &found) != CUDA_SUCCESS)
            *symbols[i].slot = NULL;
    }
}

/* PTXJIT_OK when the driver has the entry point (present); else the error naming it. */
static ptxjit_status have(int present, const char *name)
{
    return present ? PTXJIT_OK
                   : pj_error(PTXJIT_ERR_NO_DRIVER, "the CUDA driver lacks %s; update the NVIDIA "
                              "driver", name);
}

/* A failed call as the library words it: "cuX failed: NAME (text; CUDA error N)". */
static ptxjit_status check(CUresult result, const char *call)
{
    if (result == CUDA_SUCCESS)
        return PTXJIT_OK;
    const char *name = NULL, *text = NULL; /* an unknown code leaves them NULL */
    if (cu.cuGetErrorName && cu.cuGetErrorString) {
        cu.cuGetErrorName(result, &name);
        cu.cuGetErrorString(result, &text);
    }
    return pj_error(result == CUDA_ERROR_OUT_OF_MEMORY ? PTXJIT_ERR_OUT_OF_MEMORY
                                                       : PTXJIT_ERR_CUDA,
                    "%s failed: %s (%s; CUDA error %d)", call,
                    name ? name : "an unknown CUDA error", text ? text : "no description",
                    (int)result);
}

ptxjit_status cli_cuda_enter(ptxjit_context *context, void **saved)
{
    *saved = NULL;
    void *ours;
    ptxjit_status status = ptxjit_cuda_context(&ours, context);
    if (status != PTXJIT_OK)
        return status;
    pthread_once(&cu_once, load_once);
    if (cu.status != PTXJIT_OK)
        return pj_error(cu.status, "%s", cu.error);
    CUcontext current = NULL;
    status = have(cu.cuCtxGetCurrent && cu.cuCtxSetCurrent, "cuCtxGetCurrent");
    if (status == PTXJIT_OK)
        status = check(cu.cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (status != PTXJIT_OK || current == (CUcontext)ours)
        return status;
    status = check(cu.cuCtxSetCurrent((CUcontext)ours), "cuCtxSetCurrent");
    if (status == PTXJIT_OK)
        *saved = current;
    return status;
}

void cli_cuda_leave(void *saved)
{
    if (saved)
        cu.cuCtxSetCurrent((CUcontext)saved);
}

void cli_cuda_device_name(char *out, size_t size, ptxjit_context *context)
{
    void *saved;
    CUdevice device;
    if (cli_cuda_enter(context, &saved) != PTXJIT_OK)
        return;
    if (cu.cuCtxGetDevice && cu.cuDeviceGetName && cu.cuCtxGetDevice(&device) == CUDA_SUCCESS)
        cu.cuDeviceGetName(out, (int)size, device);
    cli_cuda_leave(saved);
}

size_t cli_cuda_l2_bytes(ptxjit_context *context)
{
    void *saved;
    CUdevice device;
    int bytes = 0;
    if (cli_cuda_enter(context, &saved) != PTXJIT_OK)
        return 0;
    if (cu.cuCtxGetDevice && cu.cuDeviceGetAttribute && cu.cuCtxGetDevice(&device) == CUDA_SUCCESS &&
        cu.cuDeviceGetAttribute(&bytes, CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, device) != CUDA_SUCCESS)
        bytes = 0;
    cli_cuda_leave(saved);
    return bytes > 0 ? (size_t)bytes : 0;
}

ptxjit_status cli_cuda_host_mapped(void **host, ptxjit_devptr *device, size_t bytes,
                                   ptxjit_context *context)
{
    *host = NULL;
    *device = 0;
    void *saved;
    ptxjit_status status = cli_cuda_enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = have(cu.cuMemHostAlloc && cu.cuMemHostGetDevicePointer, "cuMemHostAlloc");
    if (status == PTXJIT_OK)
        status = check(cu.cuMemHostAlloc(host, bytes, CU_MEMHOSTALLOC_DEVICEMAP),
                       "cuMemHostAlloc");
    CUdeviceptr address = 0;
    if (status == PTXJIT_OK)
        status = check(cu.cuMemHostGetDevicePointer(&address, *host, 0),
                       "cuMemHostGetDevicePointer");
    *device = address;
    cli_cuda_leave(saved);
    return status;
}

void cli_cuda_host_free(ptxjit_context *context, void *host)
{
    void *saved;
    if (!cu.cuMemFreeHost || cli_cuda_enter(context, &saved) != PTXJIT_OK)
        return;
    cu.cuMemFreeHost(host);
    cli_cuda_leave(saved);
}

ptxjit_status cli_cuda_wait_at_least(ptxjit_context *context, void *stream, ptxjit_devptr address,
                                     uint32_t value)
{
    void *saved;
    ptxjit_status status = cli_cuda_enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = have(cu.cuStreamWaitValue32 != NULL, "cuStreamWaitValue32");
    if (status == PTXJIT_OK)
        status = check(cu.cuStreamWaitValue32((CUstream)stream, address, value,
                                              CU_STREAM_WAIT_VALUE_GEQ),
                       "cuStreamWaitValue32");
    cli_cuda_leave(saved);
    return status;
}

ptxjit_status cli_cuda_copy_async(ptxjit_context *context, ptxjit_devptr dst, ptxjit_devptr src,
                                  size_t bytes, void *stream)
{
    void *saved;
    ptxjit_status status = cli_cuda_enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = have(cu.cuMemcpyDtoDAsync != NULL, "cuMemcpyDtoDAsync");
    if (status == PTXJIT_OK)
        status = check(cu.cuMemcpyDtoDAsync(dst, src, bytes, (CUstream)stream),
                       "cuMemcpyDtoDAsync");
    cli_cuda_leave(saved);
    return status;
}

ptxjit_status cli_cuda_launch(void *function, ptxjit_dim3 grid, ptxjit_dim3 block, void **args)
{
    if (!cu.cuLaunchKernel)
        return have(0, "cuLaunchKernel");
    return check(cu.cuLaunchKernel((CUfunction)function, grid.x, grid.y, grid.z, block.x,
                                   block.y, block.z, 0, NULL, args, NULL),
                 "cuLaunchKernel");
}

/* driver.h — the CUDA driver API, loaded with dlopen (never linked): entry points resolved
 * through cuGetProcAddress, each checked. One table per process; contexts are per device. */
#ifndef PTXJIT_DRIVER_H
#define PTXJIT_DRIVER_H

#include <cuda.h>

#include "internal.h"

/* Entry points, declared once: X(name, return, arguments). Resolved for CUDA 12.0's ABI. */
#define PJ_DRIVER_LIST(X)                                                                    \
    X(cuInit, (unsigned int))                                                                \
    X(cuDriverGetVersion, (int *))                                                           \
    X(cuGetErrorName, (CUresult, const char **))                                             \
    X(cuGetErrorString, (CUresult, const char **))                                           \
    X(cuDeviceGetCount, (int *))                                                             \
    X(cuDeviceGet, (CUdevice *, int))                                                        \
    X(cuDeviceGetName, (char *, int, CUdevice))                                              \
    X(cuDeviceGetAttribute, (int *, CUdevice_attribute, CUdevice))                           \
    X(cuDevicePrimaryCtxRetain, (CUcontext *, CUdevice))                                     \
    X(cuDevicePrimaryCtxRelease, (CUdevice))                                                 \
    X(cuCtxGetCurrent, (CUcontext *))                                                        \
    X(cuCtxSetCurrent, (CUcontext))                                                          \
    X(cuCtxSynchronize, (void))                                                              \
    X(cuModuleLoadData, (CUmodule *, const void *))                                          \
    X(cuModuleUnload, (CUmodule))                                                            \
    X(cuModuleGetFunction, (CUfunction *, CUmodule, const char *))                           \
    X(cuFuncGetAttribute, (int *, CUfunction_attribute, CUfunction))                         \
    X(cuFuncSetAttribute, (CUfunction, CUfunction_attribute, int))                           \
    X(cuTensorMapEncodeTiled, (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *,       \
                               const cuuint64_t *, const cuuint64_t *, const cuuint32_t *,   \
                               const cuuint32_t *, CUtensorMapInterleave,                    \
                               CUtensorMapSwizzle, CUtensorMapL2promotion,                   \
                               CUtensorMapFloatOOBfill))                                     \
    X(cuLaunchKernel, (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,         \
                       unsigned, unsigned, CUstream, void **, void **))                      \
    X(cuLaunchKernelEx, (const CUlaunchConfig *, CUfunction, void **, void **))             \
    X(cuMemAlloc, (CUdeviceptr *, size_t))                                                   \
    X(cuMemFree, (CUdeviceptr))                                                              \
    X(cuMemAllocAsync, (CUdeviceptr *, size_t, CUstream))                                    \
    X(cuMemFreeAsync, (CUdeviceptr, CUstream))                                               \
    X(cuMemcpyHtoD, (CUdeviceptr, const void *, size_t))                                     \
    X(cuMemcpyDtoH, (void *, CUdeviceptr, size_t))                                           \
    X(cuMemcpyDtoDAsync, (CUdeviceptr, CUdeviceptr, size_t, CUstream))                       \
    X(cuMemsetD8Async, (CUdeviceptr, unsigned char, size_t, CUstream))                       \
    X(cuMemsetD32Async, (CUdeviceptr, unsigned int, size_t, CUstream))                       \
    X(cuMemHostAlloc, (void **, size_t, unsigned int))                                       \
    X(cuMemFreeHost, (void *))                                                               \
    X(cuMemHostGetDevicePointer, (CUdeviceptr *, void *, unsigned int))                      \
    X(cuStreamWaitValue32, (CUstream, CUdeviceptr, cuuint32_t, unsigned int))                \
    X(cuOccupancyMaxActiveBlocksPerMultiprocessor, (int *, CUfunction, int, size_t))         \
    X(cuStreamSynchronize, (CUstream))                                                       \
    X(cuStreamCreate, (CUstream *, unsigned int))                                            \
    X(cuStreamDestroy, (CUstream))                                                           \
    X(cuMemcpyHtoDAsync, (CUdeviceptr, const void *, size_t, CUstream))                      \
    X(cuMemcpyDtoHAsync, (void *, CUdeviceptr, size_t, CUstream))                            \
    X(cuEventCreate, (CUevent *, unsigned int))                                              \
    X(cuEventRecord, (CUevent, CUstream))                                                    \
    X(cuStreamWaitEvent, (CUstream, CUevent, unsigned int))                                  \
    X(cuEventSynchronize, (CUevent))                                                         \
    X(cuEventElapsedTime, (float *, CUevent, CUevent))                                       \
    X(cuEventDestroy, (CUevent))

/* Entry points ptxjit can do without: X(name, CUDA version of the ABI asked for, arguments);
 * NULL where the driver lacks them. cuOccupancyMaxActiveClusters sizes matmul's persistent
 * grids of clusters (SMs / cluster without it); cuMemcpy2DAsync stages the operands of a
 * product whose rows the TMA cannot read (families/matmul/stage.h). cuFuncGetParamInfo (12.4) lets the tests check the
 * parameter layouts ptxjit reads; ptxjit never creates a context, the tests make one of their
 * own with cuCtxCreate, asked for at 11.0 so as to get cuCtxCreate_v2's arguments (at 12.0 the
 * driver hands out _v3, which takes exec-affinity parameters), whatever cuda.h maps it to. */
#define PJ_DRIVER_OPTIONAL_LIST(X)                                                           \
    X(cuFuncGetParamInfo, 12040, (CUfunction, size_t, size_t *, size_t *))                  \
    X(cuCtxCreate, 11000, (CUcontext *, unsigned int, CUdevice))                             \
    X(cuCtxDestroy, 12000, (CUcontext))                                                       \
    X(cuOccupancyMaxActiveClusters, 12000, (int *, CUfunction, const CUlaunchConfig *))      \
    X(cuMemcpy2DAsync, 12000, (const CUDA_MEMCPY2D *, CUstream))

typedef struct {
#define PJ_DRIVER_FIELD(name, args) CUresult(CUDAAPI *name) args;
    PJ_DRIVER_LIST(PJ_DRIVER_FIELD)
#undef PJ_DRIVER_FIELD
#define PJ_DRIVER_OPTIONAL_FIELD(name, version, args) CUresult(CUDAAPI *name) args;
    PJ_DRIVER_OPTIONAL_LIST(PJ_DRIVER_OPTIONAL_FIELD)
#undef PJ_DRIVER_OPTIONAL_FIELD
    int version; /* e.g. 13000 */
} pj_driver;

/* The loaded driver, cuInit done; PTXJIT_ERR_NO_DRIVER with the reason and a fix if the
 * library is missing, too old, or cuInit fails (no GPU, stub library). */
ptxjit_status pj_driver_get(const pj_driver **out);

/* Turns a failed driver call into PTXJIT_ERR_CUDA (or OUT_OF_MEMORY) naming the call and the
 * error: "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (invalid argument; CUDA error 1)". */
ptxjit_status pj_driver_check(CUresult result, const char *call);
#define PJ_CU(call_expr, name) pj_driver_check((call_expr), name)

#endif

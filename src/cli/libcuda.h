/* libcuda.h — the CUDA driver calls the command line makes that ptxjit.h does not wrap (a
 * device's name, mapped host memory and a stream waiting on it, a device-to-device copy, a
 * bare cuLaunchKernel): libcuda through the library's loader, the same file the library
 * opened. Each call needs a context with a GPU and runs in its CUDA context. */
#ifndef PTXJIT_CLI_LIBCUDA_H
#define PTXJIT_CLI_LIBCUDA_H

#include <stddef.h>
#include <stdint.h>

#include "ptxjit.h"

/* The device's name into out; out is left as it was when the driver cannot say. */
void cli_cuda_device_name(char *out, size_t size, ptxjit_context *context);
/* The device's L2 in bytes; 0 when the driver cannot say. */
size_t cli_cuda_l2_bytes(ptxjit_context *context);
/* bytes of page-locked host memory that the device reads at *device (cuMemHostAlloc with
 * CU_MEMHOSTALLOC_DEVICEMAP); *host is set, to free, even when the device address failed. */
ptxjit_status cli_cuda_host_mapped(void **host, ptxjit_devptr *device, size_t bytes,
                                   ptxjit_context *context);
void cli_cuda_host_free(ptxjit_context *context, void *host);
/* stream (NULL: the default) waits until the 32-bit word at address is at least value. */
ptxjit_status cli_cuda_wait_at_least(ptxjit_context *context, void *stream, ptxjit_devptr address,
                                     uint32_t value);
ptxjit_status cli_cuda_copy_async(ptxjit_context *context, ptxjit_devptr dst, ptxjit_devptr src,
                                  size_t bytes, void *stream);

/* The context's CUDA context made current on this thread (*saved: the one to put back, NULL
 * when none), as the library makes it for its own calls; for `bench jit`'s bare launches,
 * which are to time the driver's call alone. cli_cuda_leave puts the saved one back; where
 * none was current, the context stays current, as the library leaves it. */
ptxjit_status cli_cuda_enter(ptxjit_context *context, void **saved);
void cli_cuda_leave(void *saved);
/* cuLaunchKernel of function (ptxjit_kernel_function's) on the default stream, no dynamic
 * shared memory, in the current context (after cli_cuda_enter). */
ptxjit_status cli_cuda_launch(void *function, ptxjit_dim3 grid, ptxjit_dim3 block, void **args);

#endif

/* jit_bare.c — `jit-time --bare CUBIN ENTRY`: the first use of bench jit's request in a fresh
 * process as a program that calls the CUDA driver itself pays for it, beside `jit-time
 * --launch` (ptxjit's): libcuda opened with dlopen and its entry points resolved with
 * cuGetProcAddress at the CUDA 12.0 ABI (as the library does), cuInit, the device's primary
 * context retained and made current (as ptxjit_open and its first GPU call do), the buffer
 * allocated and the input copied up, the cubin loaded (cuModuleLoadData of the bytes that
 * ptxjit's cache holds, which `bench jit` writes to CUBIN) and its function found, what the
 * family's op enqueues (cuMemsetD32Async, cuLaunchKernel with the op's arguments) and
 * cuCtxSynchronize. A mode of this binary rather than a program of its own, so that both sides
 * start the same executable: the whole-process times compare too. The cubin is read before
 * the timer, as a program that carries its kernel has it in memory; the result is checked
 * after it. Nothing of the library runs here but the family table. */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/family_cli.h"
#include "cli/jit_bare.h"
#include "cli/timing.h"

typedef CUresult(CUDAAPI *get_proc_fn)(const char *, void **, int, cuuint64_t,
                                       CUdriverProcAddressQueryResult *);

static struct {
    CUresult(CUDAAPI *cuGetErrorName)(CUresult, const char **);
    CUresult(CUDAAPI *cuInit)(unsigned);
    CUresult(CUDAAPI *cuDeviceGet)(CUdevice *, int);
    CUresult(CUDAAPI *cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
    CUresult(CUDAAPI *cuDevicePrimaryCtxRelease)(CUdevice);
    CUresult(CUDAAPI *cuCtxSetCurrent)(CUcontext);
    CUresult(CUDAAPI *cuMemAlloc)(CUdeviceptr *, size_t);
    CUresult(CUDAAPI *cuMemFree)(CUdeviceptr);
    CUresult(CUDAAPI *cuMemcpyHtoD)(CUdeviceptr, const void *, size_t);
    CUresult(CUDAAPI *cuMemcpyDtoH)(void *, CUdeviceptr, size_t);
    CUresult(CUDAAPI *cuModuleLoadData)(CUmodule *, const void *);
    CUresult(CUDAAPI *cuModuleUnload)(CUmodule);
    CUresult(CUDAAPI *cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult(CUDAAPI *cuMemsetD32Async)(CUdeviceptr, unsigned, size_t, CUstream);
    CUresult(CUDAAPI *cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned,
                                      unsigned, unsigned, unsigned, CUstream, void **, void **);
    CUresult(CUDAAPI *cuCtxSynchronize)(void);
} cu;

#define NEEDS_GPU "ptxjit: jit-time --bare needs a usable GPU: "

/* dlopen of $PTXJIT_CUDA_LIBRARY, else libcuda.so.1 (the file the library would open), and
 * every entry point; 0 after saying what failed. */
static int load_driver(void)
{
    const char *override = getenv("PTXJIT_CUDA_LIBRARY");
    const char *path = override && *override ? override : "libcuda.so.1";
    void *library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        fprintf(stderr, NEEDS_GPU "cannot open the CUDA driver %s: %s\n", path, dlerror());
        return 0;
    }
    get_proc_fn get_proc = (get_proc_fn)(uintptr_t)dlsym(library, "cuGetProcAddress_v2");
    if (!get_proc) {
        fprintf(stderr, NEEDS_GPU "the CUDA driver %s has no cuGetProcAddress_v2\n", path);
        return 0;
    }
    const struct {
        const char *name;
        void **slot;
    } symbols[] = {
#define BARE_SYMBOL(name) {#name, (void **)&cu.name}
        BARE_SYMBOL(cuGetErrorName),      BARE_SYMBOL(cuInit),
        BARE_SYMBOL(cuDeviceGet),         BARE_SYMBOL(cuDevicePrimaryCtxRetain),
        BARE_SYMBOL(cuDevicePrimaryCtxRelease), BARE_SYMBOL(cuCtxSetCurrent),
        BARE_SYMBOL(cuMemAlloc),          BARE_SYMBOL(cuMemFree),
        BARE_SYMBOL(cuMemcpyHtoD),        BARE_SYMBOL(cuMemcpyDtoH),
        BARE_SYMBOL(cuModuleLoadData),    BARE_SYMBOL(cuModuleUnload),
        BARE_SYMBOL(cuModuleGetFunction), BARE_SYMBOL(cuMemsetD32Async),
        BARE_SYMBOL(cuLaunchKernel),      BARE_SYMBOL(cuCtxSynchronize),
#undef BARE_SYMBOL
    };
    for (size_t i = 0; i < CLI_LENGTH(symbols); i++) {
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (get_proc(symbols[i].name, symbols[i].slot, 12000, CU_GET_PROC_ADDRESS_DEFAULT,
                     &found) != CUDA_SUCCESS ||
            found != CU_GET_PROC_ADDRESS_SUCCESS || !*symbols[i].slot) {
            fprintf(stderr, NEEDS_GPU "the CUDA driver %s has no %s\n", path, symbols[i].name);
            return 0;
        }
    }
    return 1;
}

/* 1 when result is success; else 0 after naming the call, as the library words it. */
static int ok(CUresult result, const char *call)
{
    if (result == CUDA_SUCCESS)
        return 1;
    const char *name = NULL;
    cu.cuGetErrorName(result, &name);
    fprintf(stderr, "ptxjit: jit-time --bare: %s failed: %s (CUDA error %d)\n", call,
            name ? name : "an unknown CUDA error", (int)result);
    return 0;
}

/* The whole of path; NULL after saying why (a usage problem: exit 1, the file named). */
static unsigned char *read_cubin(size_t *size, const char *path)
{
    FILE *file = fopen(path, "rb");
    unsigned char *data = NULL;
    long length = -1;
    if (file && fseek(file, 0, SEEK_END) == 0)
        length = ftell(file);
    if (file && length >= 0 && fseek(file, 0, SEEK_SET) == 0 &&
        (data = malloc((size_t)length + 1)) != NULL &&
        fread(data, 1, (size_t)length, file) == (size_t)length) {
        fclose(file);
        *size = (size_t)length;
        return data;
    }
    int error = errno;
    fprintf(stderr, "ptxjit: jit-time --bare: cannot read the cubin %s: %s\n", path,
            file && length >= 0 ? "a read failed" : strerror(error));
    free(data);
    if (file)
        fclose(file);
    return NULL;
}

/* The cubin: an ELF file that names entry (a NUL-terminated string in it); 0 after saying
 * which it is not. */
static int check_cubin(const unsigned char *image, size_t size, const char *path,
                       const char *entry)
{
    if (size < 64 || memcmp(image, "\177ELF", 4) != 0) {
        fprintf(stderr, "ptxjit: jit-time --bare: %s is not a cubin (no ELF header)\n", path);
        return 0;
    }
    size_t length = strlen(entry) + 1;
    for (size_t i = 0; length > 1 && i + length <= size; i++)
        if (memcmp(image + i, entry, length) == 0)
            return 1;
    fprintf(stderr, "ptxjit: jit-time --bare: the cubin %s has no entry '%s'\n", path, entry);
    return 0;
}

/* The timed part: t[0..7] (load, init, context, alloc, module, launch, sync); the buffer,
 * module and context made are released after it, the result read back first. */
static int first_use(double t[8], unsigned char *result, const cli_jit_first *first,
                     const unsigned char *image, const char *entry, const void *input,
                     int ordinal)
{
    CUdevice device = 0;
    CUcontext context = NULL;
    CUmodule module = NULL;
    CUfunction function = NULL;
    CUdeviceptr buffer = 0;
    cli_launch launch;
    memset(&launch, 0, sizeof launch);
    t[0] = wall_ms();
    if (!load_driver())
        return 0;
    t[1] = wall_ms();
    CUresult init = cu.cuInit(0);
    if (init != CUDA_SUCCESS) {
        const char *name = NULL;
        cu.cuGetErrorName(init, &name);
        fprintf(stderr, NEEDS_GPU "cuInit failed: %s (CUDA error %d)\n",
                name ? name : "an unknown CUDA error", (int)init);
        return 0;
    }
    t[2] = wall_ms();
    int good = ok(cu.cuDeviceGet(&device, ordinal), "cuDeviceGet") &&
               ok(cu.cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain") &&
               ok(cu.cuCtxSetCurrent(context), "cuCtxSetCurrent");
    t[3] = wall_ms();
    good = good && ok(cu.cuMemAlloc(&buffer, first->bytes), "cuMemAlloc") &&
           ok(cu.cuMemcpyHtoD(buffer, input, first->input_bytes), "cuMemcpyHtoD");
    t[4] = wall_ms();
    good = good && ok(cu.cuModuleLoadData(&module, image), "cuModuleLoadData") &&
           ok(cu.cuModuleGetFunction(&function, module, entry), "cuModuleGetFunction");
    t[5] = wall_ms();
    if (good)
        first->launch(&launch, buffer);
    good = good && (!first->zero_words ||
                    ok(cu.cuMemsetD32Async(buffer + first->zero_at, 0, first->zero_words, NULL),
                       "cuMemsetD32Async")) &&
           ok(cu.cuLaunchKernel(function, launch.grid.x, launch.grid.y, launch.grid.z,
                                launch.block.x, launch.block.y, launch.block.z, 0, NULL,
                                launch.args, NULL),
              "cuLaunchKernel");
    t[6] = wall_ms();
    good = good && ok(cu.cuCtxSynchronize(), "cuCtxSynchronize");
    t[7] = wall_ms();
    good = good && ok(cu.cuMemcpyDtoH(result, buffer + first->result_at, first->result_bytes),
                      "cuMemcpyDtoH");
    if (buffer)
        cu.cuMemFree(buffer);
    if (module)
        cu.cuModuleUnload(module);
    if (context)
        cu.cuDevicePrimaryCtxRelease(device);
    return good;
}

int cli_jit_time_bare(cli_args *args)
{
    if (args->argc != 2) {
        fprintf(stderr, "usage: ptxjit jit-time --bare CUBIN ENTRY (the cubin of bench jit's "
                        "request and its entry, as bench jit writes them)\n");
        return CLI_USAGE;
    }
    if (!args->options.use_gpu) {
        fprintf(stderr, NEEDS_GPU "--no-gpu was given\n");
        return CLI_FAIL;
    }
    const char *path = args->argv[0], *entry = args->argv[1];
    const cli_jit_first *first = cli_family_jit()->jit->first;
    if (!first) {
        fprintf(stderr, "ptxjit: jit-time --bare: bench jit's family, %s, gives no first use\n",
                cli_family_jit()->name);
        return CLI_FAIL;
    }
    size_t size = 0;
    unsigned char *image = read_cubin(&size, path);
    if (!image)
        return CLI_FAIL;
    void *input = NULL;
    int code = CLI_FAIL;
    double t[8];
    unsigned char result[64] = {0};
    if (check_cubin(image, size, path, entry) && (input = malloc(first->input_bytes))) {
        first->input(input);
        if (first_use(t, result, first, image, entry, input, args->options.device)) {
            if (first->check(result)) {
                printf("load_ms %.3f init_ms %.3f context_ms %.3f alloc_ms %.3f module_ms %.3f "
                       "launch_ms %.3f sync_ms %.3f\n",
                       t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4],
                       t[6] - t[5], t[7] - t[6]);
                code = CLI_OK;
            } else
                fprintf(stderr, "ptxjit: jit-time --bare: the result of %s is wrong\n",
                        first->what);
        }
    }
    free(input);
    free(image);
    return code;
}

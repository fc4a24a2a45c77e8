/* libcuda.c — a stand-in libcuda.so.1 for the tests.
 *
 * By default it records its loading and each cuInit in the file named by
 * $PTXJIT_TEST_CUDA_LOG and reports no device (cuGetProcAddress finds nothing, cuInit fails),
 * so test_cli can tell whether anything in the process (ptxjit, NVRTC, nvJitLink) tried to
 * start the CUDA driver.
 *
 * With $PJ_FAKE_DEVICES=N it is a driver of N devices for the CPU tests of several GPUs
 * (tests/test_multigpu.c): compute capabilities from $PJ_FAKE_DEVICE_ARCHS ("90,90,80"; 90
 * for each device it leaves out), one primary context per device, the current context per
 * thread. It runs no kernel; it checks what a real driver would refuse where ptxjit could get
 * devices mixed up: a call that needs a context with none current, a module whose cubin is for
 * another SM than the current context's device (CUDA_ERROR_NO_BINARY_FOR_GPU), an entry the
 * cubin does not name, a launch of a function (or on a stream) of another context than the
 * current one (CUDA_ERROR_INVALID_CONTEXT). Memory is host memory, so copies and fills work.
 * fake_cuda_count(device, what) gives the tests what reached each device: loads, launches,
 * allocations, refusals. PTX text loads too (the tuner's own kernels), for any device. Time is
 * simulated for the tuner's timings: each launch advances a clock by an amount its module's
 * bytes decide (0.5 to 1.5 ms, the same for the same cubin every time), and an event records
 * the clock, so that candidates time differently and always the same. The device reports an
 * H100's limits (registers, shared memory, threads, clock). */
#include <cuda.h>
#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_DEVICES 16

static void record(const char *what)
{
    const char *path = getenv("PTXJIT_TEST_CUDA_LOG");
    FILE *log = path ? fopen(path, "a") : NULL;
    if (log) {
        fprintf(log, "%s\n", what);
        fclose(log);
    }
}

__attribute__((constructor)) static void loaded(void)
{
    record("loaded");
}

/* ---- the devices ---- */

struct CUctx_st {
    int ordinal;
};
struct CUmod_st {
    struct CUctx_st *context;
};
struct CUfunc_st {
    struct CUmod_st *module;
    struct CUfunc_st *next; /* the module's functions, freed with it */
};
struct CUstream_st {
    struct CUctx_st *context;
};
struct CUevent_st {
    int recorded;
    double at; /* the simulated clock when recorded, ms */
};

enum { COUNT_LOADS, COUNT_LAUNCHES, COUNT_ALLOCS, COUNT_REFUSED, COUNT_KINDS };

static struct CUctx_st primary[MAX_DEVICES];
static int device_sm[MAX_DEVICES];
static int device_count;
static int counts[MAX_DEVICES][COUNT_KINDS];
static __thread struct CUctx_st *current;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

static void setup(void)
{
    const char *n = getenv("PJ_FAKE_DEVICES"), *archs = getenv("PJ_FAKE_DEVICE_ARCHS");
    device_count = n ? atoi(n) : 0;
    device_count = device_count < 0 ? 0 : device_count > MAX_DEVICES ? MAX_DEVICES : device_count;
    for (int i = 0; i < MAX_DEVICES; i++) {
        primary[i].ordinal = i;
        device_sm[i] = 90;
    }
    for (int i = 0; archs && *archs && i < MAX_DEVICES; i++) {
        device_sm[i] = atoi(archs);
        archs = strchr(archs, ',');
        archs = archs ? archs + 1 : NULL;
    }
}

static int enabled(void)
{
    pthread_once(&setup_once, setup);
    return device_count > 0;
}

/* What reached each device (COUNT_*), for the tests; -1 for a device out of range. */
int fake_cuda_count(int device, int what)
{
    if (!enabled() || device < 0 || device >= device_count || what < 0 || what >= COUNT_KINDS)
        return -1;
    return __atomic_load_n(&counts[device][what], __ATOMIC_RELAXED);
}

static void add(struct CUctx_st *context, int what)
{
    __atomic_add_fetch(&counts[context->ordinal][what], 1, __ATOMIC_RELAXED);
}

/* The refusal of a call made in the wrong context, counted against the current one. */
static CUresult refuse(CUresult result)
{
    if (current)
        add(current, COUNT_REFUSED);
    return result;
}

#define NEED_CONTEXT()                                                                     \
    do {                                                                                   \
        if (!current)                                                                      \
            return CUDA_ERROR_INVALID_CONTEXT;                                             \
    } while (0)

static CUresult stream_ok(CUstream stream)
{
    return !stream || stream->context == current ? CUDA_SUCCESS
                                                 : refuse(CUDA_ERROR_INVALID_CONTEXT);
}

/* ---- the entry points ---- */

CUresult cuInit(unsigned flags)
{
    (void)flags;
    record("cuInit");
    return enabled() ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
    (void)id;
    *table = NULL;
    return CUDA_ERROR_NOT_FOUND;
}

CUresult cuDriverGetVersion(int *version)
{
    *version = enabled() ? 13000 : 0;
    return enabled() ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

static CUresult get_error_name(CUresult error, const char **name)
{
    switch (error) {
    case CUDA_SUCCESS: *name = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *name = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *name = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *name = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_NO_BINARY_FOR_GPU: *name = "CUDA_ERROR_NO_BINARY_FOR_GPU"; break;
    case CUDA_ERROR_INVALID_IMAGE: *name = "CUDA_ERROR_INVALID_IMAGE"; break;
    case CUDA_ERROR_NOT_FOUND: *name = "CUDA_ERROR_NOT_FOUND"; break;
    case CUDA_ERROR_INVALID_DEVICE: *name = "CUDA_ERROR_INVALID_DEVICE"; break;
    default: *name = NULL; return CUDA_ERROR_INVALID_VALUE;
    }
    return CUDA_SUCCESS;
}

static CUresult get_error_string(CUresult error, const char **text)
{
    const char *name = NULL;
    CUresult result = get_error_name(error, &name);
    *text = name ? "fake driver error" : NULL;
    return result;
}

static CUresult device_get_count(int *count)
{
    *count = device_count;
    return CUDA_SUCCESS;
}

static CUresult device_get(CUdevice *device, int ordinal)
{
    if (ordinal < 0 || ordinal >= device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

static CUresult device_get_name(char *name, int size, CUdevice device)
{
    snprintf(name, (size_t)size, "fake GPU %d (sm_%d)", device, device_sm[device]);
    return CUDA_SUCCESS;
}

static CUresult device_get_attribute(int *value, CUdevice_attribute which, CUdevice device)
{
    if (device < 0 || device >= device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (which) {
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *value = device_sm[device] / 10; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *value = device_sm[device] % 10; break;
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *value = 132; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *value = 50 << 20; break;
    case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: *value = 1024; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: *value = 65536; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: *value = 232448; break;
    case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: *value = 233472; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: *value = 2048; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *value = 1980000; break;
    default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

static CUresult primary_retain(CUcontext *context, CUdevice device)
{
    if (device < 0 || device >= device_count)
        return CUDA_ERROR_INVALID_DEVICE;
    *context = &primary[device];
    return CUDA_SUCCESS;
}

static CUresult primary_release(CUdevice device)
{
    return device < 0 || device >= device_count ? CUDA_ERROR_INVALID_DEVICE : CUDA_SUCCESS;
}

static CUresult ctx_get_current(CUcontext *context)
{
    *context = current;
    return CUDA_SUCCESS;
}

static CUresult ctx_set_current(CUcontext context)
{
    current = context;
    return CUDA_SUCCESS;
}

static CUresult ctx_synchronize(void)
{
    NEED_CONTEXT();
    return CUDA_SUCCESS;
}

/* The SM a cubin is for: bits 8-15 of e_flags from ELF ABI version 8 on, else bits 0-7. */
static int cubin_sm(const void *image)
{
    const Elf64_Ehdr *header = image;
    if (memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 || header->e_ident[EI_CLASS] != ELFCLASS64)
        return -1;
    unsigned flags = header->e_flags;
    return header->e_ident[EI_ABIVERSION] >= 8 ? (int)((flags >> 8) & 0xff) : (int)(flags & 0xff);
}

typedef struct {
    struct CUmod_st module;
    const unsigned char *image; /* the caller's: valid while loaded, as good as a copy here */
    size_t size;
    int ptx;                    /* text: a name ends where an identifier does */
    struct CUfunc_st *functions;
    pthread_mutex_t lock;       /* functions may be asked for by several threads */
} loaded_module;

/* PTX text (a real driver compiles it for any device): a comment or a directive first. */
static int is_ptx(const void *image)
{
    const char *text = image;
    return text[0] == '/' || text[0] == '.' || text[0] == '\n';
}

static CUresult module_load_data(CUmodule *module, const void *image)
{
    NEED_CONTEXT();
    int sm = cubin_sm(image), ptx = sm < 0 && is_ptx(image);
    if (sm < 0 && !ptx)
        return refuse(CUDA_ERROR_INVALID_IMAGE);
    if (!ptx && sm != device_sm[current->ordinal])
        return refuse(CUDA_ERROR_NO_BINARY_FOR_GPU);
    const Elf64_Ehdr *header = image;
    loaded_module *m = calloc(1, sizeof *m);
    if (!m)
        return CUDA_ERROR_OUT_OF_MEMORY;
    m->module.context = current;
    pthread_mutex_init(&m->lock, NULL);
    m->image = image;
    m->size = ptx ? strlen(image) : header->e_shoff + (size_t)header->e_shnum * header->e_shentsize;
    m->ptx = ptx;
    add(current, COUNT_LOADS);
    *module = &m->module;
    return CUDA_SUCCESS;
}

static CUresult module_unload(CUmodule module)
{
    loaded_module *m = (loaded_module *)module;
    for (struct CUfunc_st *f = m->functions, *next; f; f = next) {
        next = f->next;
        free(f);
    }
    pthread_mutex_destroy(&m->lock);
    free(m);
    return CUDA_SUCCESS;
}

static int image_names(const loaded_module *m, const char *name)
{
    size_t length = strlen(name);
    for (size_t i = 0; i + length < m->size; i++) {
        if (m->ptx && memcmp(m->image + i, name, length) == 0 && m->image[i + length] == '(')
            return 1;
        if (!m->ptx && memcmp(m->image + i, name, length + 1) == 0)
            return 1;
    }
    return 0;
}

static CUresult module_get_function(CUfunction *function, CUmodule module, const char *name)
{
    NEED_CONTEXT();
    if (module->context != current)
        return refuse(CUDA_ERROR_INVALID_CONTEXT);
    loaded_module *m = (loaded_module *)module;
    if (!image_names(m, name))
        return CUDA_ERROR_NOT_FOUND;
    struct CUfunc_st *f = calloc(1, sizeof *f);
    if (!f)
        return CUDA_ERROR_OUT_OF_MEMORY;
    f->module = module;
    pthread_mutex_lock(&m->lock);
    f->next = m->functions;
    m->functions = f;
    pthread_mutex_unlock(&m->lock);
    *function = f;
    return CUDA_SUCCESS;
}

/* Registers: 16 + the device's ordinal, so a test sees which device's function answered. */
static CUresult func_get_attribute(int *value, CUfunction_attribute which, CUfunction function)
{
    NEED_CONTEXT();
    if (function->module->context != current)
        return refuse(CUDA_ERROR_INVALID_CONTEXT);
    switch (which) {
    case CU_FUNC_ATTRIBUTE_NUM_REGS: *value = 16 + current->ordinal; break;
    case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *value = 1024; break;
    default: *value = 0; break;
    }
    return CUDA_SUCCESS;
}

static CUresult func_set_attribute(CUfunction function, CUfunction_attribute which, int value)
{
    (void)which, (void)value;
    NEED_CONTEXT();
    return function->module->context == current ? CUDA_SUCCESS
                                                : refuse(CUDA_ERROR_INVALID_CONTEXT);
}

static CUresult tensor_map_encode_tiled(CUtensorMap *map, CUtensorMapDataType type,
                                        cuuint32_t rank, void *address, const cuuint64_t *dims,
                                        const cuuint64_t *strides, const cuuint32_t *box,
                                        const cuuint32_t *element_strides,
                                        CUtensorMapInterleave interleave,
                                        CUtensorMapSwizzle swizzle,
                                        CUtensorMapL2promotion promotion,
                                        CUtensorMapFloatOOBfill fill)
{
    (void)type, (void)rank, (void)address, (void)dims, (void)strides, (void)box;
    (void)element_strides, (void)interleave, (void)swizzle, (void)promotion, (void)fill;
    memset(map, 0, sizeof *map);
    return CUDA_SUCCESS;
}

/* The simulated clock (ms) that launches advance and events read. */
static double clock_ms;
static pthread_mutex_t clock_lock = PTHREAD_MUTEX_INITIALIZER;

/* A launch's simulated duration: 0.5 to 1.5 ms by a hash of its module's bytes. */
static double duration_ms(const loaded_module *m)
{
    unsigned long long hash = 1469598103934665603ull;
    for (size_t i = 0; i < m->size; i++)
        hash = (hash ^ m->image[i]) * 1099511628211ull;
    return 0.5 + (double)(hash % 1000) / 1000.0;
}

static CUresult launch_in(CUfunction function, CUstream stream)
{
    NEED_CONTEXT();
    if (function->module->context != current)
        return refuse(CUDA_ERROR_INVALID_CONTEXT);
    CUresult result = stream_ok(stream);
    if (result == CUDA_SUCCESS) {
        add(current, COUNT_LAUNCHES);
        double ms = duration_ms((const loaded_module *)function->module);
        pthread_mutex_lock(&clock_lock);
        clock_ms += ms;
        pthread_mutex_unlock(&clock_lock);
    }
    return result;
}

static CUresult launch_kernel(CUfunction function, unsigned gx, unsigned gy, unsigned gz,
                              unsigned bx, unsigned by, unsigned bz, unsigned shared,
                              CUstream stream, void **args, void **extra)
{
    (void)gx, (void)gy, (void)gz, (void)bx, (void)by, (void)bz, (void)shared, (void)args;
    (void)extra;
    return launch_in(function, stream);
}

static CUresult launch_kernel_ex(const CUlaunchConfig *config, CUfunction function, void **args,
                                 void **extra)
{
    (void)args, (void)extra;
    return launch_in(function, config->hStream);
}

static CUresult mem_alloc(CUdeviceptr *pointer, size_t bytes)
{
    NEED_CONTEXT();
    void *memory = malloc(bytes);
    if (!memory)
        return CUDA_ERROR_OUT_OF_MEMORY;
    add(current, COUNT_ALLOCS);
    *pointer = (CUdeviceptr)(uintptr_t)memory;
    return CUDA_SUCCESS;
}

static CUresult mem_free(CUdeviceptr pointer)
{
    NEED_CONTEXT();
    free((void *)(uintptr_t)pointer);
    return CUDA_SUCCESS;
}

static CUresult mem_alloc_async(CUdeviceptr *pointer, size_t bytes, CUstream stream)
{
    CUresult result = mem_alloc(pointer, bytes);
    return result == CUDA_SUCCESS ? stream_ok(stream) : result;
}

static CUresult mem_free_async(CUdeviceptr pointer, CUstream stream)
{
    CUresult result = stream_ok(stream);
    return result == CUDA_SUCCESS ? mem_free(pointer) : result;
}

static CUresult copy(void *dst, const void *src, size_t bytes, CUstream stream)
{
    NEED_CONTEXT();
    CUresult result = stream_ok(stream);
    if (result == CUDA_SUCCESS)
        memcpy(dst, src, bytes);
    return result;
}

static CUresult memcpy_htod(CUdeviceptr dst, const void *src, size_t bytes)
{
    return copy((void *)(uintptr_t)dst, src, bytes, NULL);
}

static CUresult memcpy_dtoh(void *dst, CUdeviceptr src, size_t bytes)
{
    return copy(dst, (const void *)(uintptr_t)src, bytes, NULL);
}

static CUresult memcpy_dtod_async(CUdeviceptr dst, CUdeviceptr src, size_t bytes, CUstream s)
{
    return copy((void *)(uintptr_t)dst, (const void *)(uintptr_t)src, bytes, s);
}

static CUresult memcpy_htod_async(CUdeviceptr dst, const void *src, size_t bytes, CUstream s)
{
    return copy((void *)(uintptr_t)dst, src, bytes, s);
}

static CUresult memcpy_dtoh_async(void *dst, CUdeviceptr src, size_t bytes, CUstream s)
{
    return copy(dst, (const void *)(uintptr_t)src, bytes, s);
}

static CUresult memset_d8_async(CUdeviceptr dst, unsigned char value, size_t count, CUstream s)
{
    NEED_CONTEXT();
    CUresult result = stream_ok(s);
    if (result == CUDA_SUCCESS)
        memset((void *)(uintptr_t)dst, value, count);
    return result;
}

static CUresult memset_d32_async(CUdeviceptr dst, unsigned value, size_t count, CUstream s)
{
    NEED_CONTEXT();
    CUresult result = stream_ok(s);
    for (size_t i = 0; result == CUDA_SUCCESS && i < count; i++)
        ((unsigned *)(uintptr_t)dst)[i] = value;
    return result;
}

static CUresult mem_host_alloc(void **pointer, size_t bytes, unsigned flags)
{
    (void)flags;
    NEED_CONTEXT();
    *pointer = calloc(1, bytes);
    return *pointer ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

static CUresult mem_free_host(void *pointer)
{
    free(pointer);
    return CUDA_SUCCESS;
}

static CUresult mem_host_get_device_pointer(CUdeviceptr *device, void *host, unsigned flags)
{
    (void)flags;
    *device = (CUdeviceptr)(uintptr_t)host;
    return CUDA_SUCCESS;
}

static CUresult stream_wait_value32(CUstream stream, CUdeviceptr address, cuuint32_t value,
                                    unsigned flags)
{
    (void)address, (void)value, (void)flags;
    NEED_CONTEXT();
    return stream_ok(stream);
}

static CUresult occupancy(int *blocks, CUfunction function, int threads, size_t shared)
{
    (void)threads, (void)shared;
    NEED_CONTEXT();
    if (function->module->context != current)
        return refuse(CUDA_ERROR_INVALID_CONTEXT);
    *blocks = 2;
    return CUDA_SUCCESS;
}

static CUresult stream_synchronize(CUstream stream)
{
    NEED_CONTEXT();
    return stream_ok(stream);
}

static CUresult stream_create(CUstream *stream, unsigned flags)
{
    (void)flags;
    NEED_CONTEXT();
    struct CUstream_st *s = calloc(1, sizeof *s);
    if (!s)
        return CUDA_ERROR_OUT_OF_MEMORY;
    s->context = current;
    *stream = s;
    return CUDA_SUCCESS;
}

static CUresult stream_destroy(CUstream stream)
{
    NEED_CONTEXT();
    CUresult result = stream_ok(stream);
    if (result == CUDA_SUCCESS)
        free(stream);
    return result;
}

static CUresult event_create(CUevent *event, unsigned flags)
{
    (void)flags;
    NEED_CONTEXT();
    *event = calloc(1, sizeof **event);
    return *event ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

/* Streams run in order here: waiting is checking the handles. */
static CUresult stream_wait_event(CUstream stream, CUevent event, unsigned flags)
{
    NEED_CONTEXT();
    (void)flags;
    return event ? stream_ok(stream) : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult event_record(CUevent event, CUstream stream)
{
    NEED_CONTEXT();
    event->recorded = 1;
    pthread_mutex_lock(&clock_lock);
    event->at = clock_ms;
    pthread_mutex_unlock(&clock_lock);
    return stream_ok(stream);
}

static CUresult event_synchronize(CUevent event)
{
    (void)event;
    return CUDA_SUCCESS;
}

static CUresult event_elapsed_time(float *ms, CUevent start, CUevent end)
{
    *ms = end->at > start->at ? (float)(end->at - start->at) : 0.001f;
    return start->recorded && end->recorded ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

static CUresult event_destroy(CUevent event)
{
    free(event);
    return CUDA_SUCCESS;
}

static const struct {
    const char *name;
    void *function;
} entry_points[] = {
    {"cuInit", (void *)cuInit},
    {"cuDriverGetVersion", (void *)cuDriverGetVersion},
    {"cuGetErrorName", (void *)get_error_name},
    {"cuGetErrorString", (void *)get_error_string},
    {"cuDeviceGetCount", (void *)device_get_count},
    {"cuDeviceGet", (void *)device_get},
    {"cuDeviceGetName", (void *)device_get_name},
    {"cuDeviceGetAttribute", (void *)device_get_attribute},
    {"cuDevicePrimaryCtxRetain", (void *)primary_retain},
    {"cuDevicePrimaryCtxRelease", (void *)primary_release},
    {"cuCtxGetCurrent", (void *)ctx_get_current},
    {"cuCtxSetCurrent", (void *)ctx_set_current},
    {"cuCtxSynchronize", (void *)ctx_synchronize},
    {"cuModuleLoadData", (void *)module_load_data},
    {"cuModuleUnload", (void *)module_unload},
    {"cuModuleGetFunction", (void *)module_get_function},
    {"cuFuncGetAttribute", (void *)func_get_attribute},
    {"cuFuncSetAttribute", (void *)func_set_attribute},
    {"cuTensorMapEncodeTiled", (void *)tensor_map_encode_tiled},
    {"cuLaunchKernel", (void *)launch_kernel},
    {"cuLaunchKernelEx", (void *)launch_kernel_ex},
    {"cuMemAlloc", (void *)mem_alloc},
    {"cuMemFree", (void *)mem_free},
    {"cuMemAllocAsync", (void *)mem_alloc_async},
    {"cuMemFreeAsync", (void *)mem_free_async},
    {"cuMemcpyHtoD", (void *)memcpy_htod},
    {"cuMemcpyDtoH", (void *)memcpy_dtoh},
    {"cuMemcpyDtoDAsync", (void *)memcpy_dtod_async},
    {"cuMemsetD8Async", (void *)memset_d8_async},
    {"cuMemsetD32Async", (void *)memset_d32_async},
    {"cuMemHostAlloc", (void *)mem_host_alloc},
    {"cuMemFreeHost", (void *)mem_free_host},
    {"cuMemHostGetDevicePointer", (void *)mem_host_get_device_pointer},
    {"cuStreamWaitValue32", (void *)stream_wait_value32},
    {"cuOccupancyMaxActiveBlocksPerMultiprocessor", (void *)occupancy},
    {"cuStreamSynchronize", (void *)stream_synchronize},
    {"cuStreamCreate", (void *)stream_create},
    {"cuStreamDestroy", (void *)stream_destroy},
    {"cuMemcpyHtoDAsync", (void *)memcpy_htod_async},
    {"cuMemcpyDtoHAsync", (void *)memcpy_dtoh_async},
    {"cuEventCreate", (void *)event_create},
    {"cuEventRecord", (void *)event_record},
    {"cuStreamWaitEvent", (void *)stream_wait_event},
    {"cuEventSynchronize", (void *)event_synchronize},
    {"cuEventElapsedTime", (void *)event_elapsed_time},
    {"cuEventDestroy", (void *)event_destroy},
};

/* Without PJ_FAKE_DEVICES nothing is found, so ptxjit stops before cuInit, as it did with the
 * driver-less stand-in this file was first. The optional entry points (cuCtxCreate, ...) are
 * never found. */
CUresult cuGetProcAddress_v2(const char *symbol, void **function, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    (void)version, (void)flags;
    *function = NULL;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!enabled())
        return CUDA_ERROR_NOT_FOUND;
    for (size_t i = 0; i < sizeof entry_points / sizeof entry_points[0]; i++)
        if (strcmp(entry_points[i].name, symbol) == 0) {
            *function = entry_points[i].function;
            if (status)
                *status = CU_GET_PROC_ADDRESS_SUCCESS;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

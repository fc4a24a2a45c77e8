/* nvjitlink.c — nvJitLink through dlopen. Its entry points are versioned symbols
 * (__nvJitLinkCreate_13_0); the header's inline wrappers hide that, so each is looked up under
 * the newest suffix the library has. */
#include <dlfcn.h>
#include <link.h>
#include <nvJitLink.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/nvjitlink.h"

static struct {
    void *handle;
    char version[32];
    char library[4096];
    ptxjit_status status;
    char error[1024];
    nvJitLinkResult (*Version)(unsigned *, unsigned *);
    nvJitLinkResult (*Create)(nvJitLinkHandle *, uint32_t, const char **);
    nvJitLinkResult (*Destroy)(nvJitLinkHandle *);
    nvJitLinkResult (*AddData)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t,
                               const char *);
    nvJitLinkResult (*Complete)(nvJitLinkHandle);
    nvJitLinkResult (*GetLinkedCubinSize)(nvJitLinkHandle, size_t *);
    nvJitLinkResult (*GetLinkedCubin)(nvJitLinkHandle, void *);
    nvJitLinkResult (*GetErrorLogSize)(nvJitLinkHandle, size_t *);
    nvJitLinkResult (*GetErrorLog)(nvJitLinkHandle, char *);
    nvJitLinkResult (*GetInfoLogSize)(nvJitLinkHandle, size_t *);
    nvJitLinkResult (*GetInfoLog)(nvJitLinkHandle, char *);
} jit;

static pthread_once_t jit_once = PTHREAD_ONCE_INIT;

/* nvJitLink looks every PTX up in the CUDA driver's compute cache (~/.nv/ComputeCache), and
 * for that loads libcuda and calls cuInit, wherever a driver is installed. ptxjit has its own
 * cache, a context opened with use_gpu=0 must not touch the driver, and a cold compile must
 * run ptxas: so -no-cache, unless the bench asks for the cache. A library that does not know
 * the option (older than its header here) is asked again without it, once per process. */
static atomic_int driver_cache_allowed;
static atomic_int no_cache_unknown;

void pj_nvjitlink_allow_driver_cache(int allowed)
{
    atomic_store(&driver_cache_allowed, allowed != 0);
}

static void *open_library(pj_strbuf *tried)
{
    const char *override = getenv("PTXJIT_NVJITLINK_LIBRARY");
    const char *cuda = getenv("CUDA_HOME");
    char paths[8][512];
    int count = 0;
    if (override && *override)
        snprintf(paths[count++], sizeof paths[0], "%s", override);
    snprintf(paths[count++], sizeof paths[0], "libnvJitLink.so.13");
    snprintf(paths[count++], sizeof paths[0], "libnvJitLink.so.12");
    if (cuda && *cuda) {
        snprintf(paths[count++], sizeof paths[0], "%s/lib64/libnvJitLink.so", cuda);
        snprintf(paths[count++], sizeof paths[0], "%s/lib/libnvJitLink.so", cuda);
    }
    snprintf(paths[count++], sizeof paths[0], "/usr/local/cuda/lib64/libnvJitLink.so");
    snprintf(paths[count++], sizeof paths[0], "/usr/local/cuda/lib/libnvJitLink.so");
    for (int i = 0; i < count; i++) {
        void *handle = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (handle)
            return handle;
        pj_sb_appendf(tried, "%s%s", i ? ", " : "", paths[i]);
    }
    return NULL;
}

/* The symbol under the newest version suffix present: 13.0, then 12.9 down to 12.0. */
static void *versioned_symbol(const char *name)
{
    static const char *const suffixes[] = {"13_0", "12_9", "12_8", "12_7", "12_6",
                                           "12_5", "12_4", "12_3", "12_2", "12_1", "12_0"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(suffixes); i++) {
        char symbol[128];
        snprintf(symbol, sizeof symbol, "__%s_%s", name, suffixes[i]);
        void *address = dlsym(jit.handle, symbol);
        if (address)
            return address;
    }
    return NULL;
}

static void jit_load_once(void)
{
    pj_strbuf tried;
    pj_sb_init(&tried);
    jit.handle = open_library(&tried);
    jit.status = PTXJIT_ERR_NO_COMPILER;
    if (!jit.handle) {
        snprintf(jit.error, sizeof jit.error,
                 "cannot load nvJitLink (tried %s); install the CUDA toolkit's nvJitLink or "
                 "set PTXJIT_NVJITLINK_LIBRARY to libnvJitLink.so's path",
                 tried.data ? tried.data : "");
        pj_sb_free(&tried);
        return;
    }
    pj_sb_free(&tried);
    struct {
        const char *name;
        void **slot;
    } symbols[] = {
#define PJ_JIT_SYMBOL(name) {"nvJitLink" #name, (void **)&jit.name}
        PJ_JIT_SYMBOL(Create),          PJ_JIT_SYMBOL(Destroy),
        PJ_JIT_SYMBOL(AddData),         PJ_JIT_SYMBOL(Complete),
        PJ_JIT_SYMBOL(GetLinkedCubinSize), PJ_JIT_SYMBOL(GetLinkedCubin),
        PJ_JIT_SYMBOL(GetErrorLogSize), PJ_JIT_SYMBOL(GetErrorLog),
        PJ_JIT_SYMBOL(GetInfoLogSize),  PJ_JIT_SYMBOL(GetInfoLog),
#undef PJ_JIT_SYMBOL
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(symbols); i++) {
        *symbols[i].slot = versioned_symbol(symbols[i].name);
        if (!*symbols[i].slot) {
            snprintf(jit.error, sizeof jit.error,
                     "the nvJitLink library lacks %s (ptxjit needs CUDA 12.0 or newer)",
                     symbols[i].name);
            return;
        }
    }
    jit.Version = (nvJitLinkResult(*)(unsigned *, unsigned *))dlsym(jit.handle,
                                                                     "nvJitLinkVersion");
    unsigned major = 0, minor = 0;
    if (!jit.Version || jit.Version(&major, &minor) != NVJITLINK_SUCCESS) {
        snprintf(jit.error, sizeof jit.error, "nvJitLinkVersion is missing or failed");
        return;
    }
    snprintf(jit.version, sizeof jit.version, "nvjitlink %u.%u", major, minor);
    struct link_map *map = NULL;
    if (dlinfo(jit.handle, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
        snprintf(jit.library, sizeof jit.library, "%s", map->l_name);
    jit.status = PTXJIT_OK;
}

ptxjit_status pj_nvjitlink_load(void)
{
    pthread_once(&jit_once, jit_load_once);
    if (jit.status != PTXJIT_OK)
        return pj_error(jit.status, "%s", jit.error);
    return PTXJIT_OK;
}

const char *pj_nvjitlink_version_string(void)
{
    return jit.version;
}

const char *pj_nvjitlink_library_path(void)
{
    return jit.library[0] ? jit.library : NULL;
}

static char *take_log(nvJitLinkHandle handle, int error_log)
{
    size_t size = 0;
    nvJitLinkResult result = error_log ? jit.GetErrorLogSize(handle, &size)
                                       : jit.GetInfoLogSize(handle, &size);
    char *log = calloc(1, size + 1);
    if (!log || result != NVJITLINK_SUCCESS || size == 0)
        return log;
    if ((error_log ? jit.GetErrorLog(handle, log) : jit.GetInfoLog(handle, log)) !=
        NVJITLINK_SUCCESS)
        log[0] = '\0';
    return log;
}

static ptxjit_status take_cubin(pj_artifact *out, nvJitLinkHandle handle)
{
    size_t size = 0;
    if (jit.GetLinkedCubinSize(handle, &size) != NVJITLINK_SUCCESS || size == 0)
        return pj_error(PTXJIT_ERR_COMPILE, "nvJitLink produced no cubin");
    out->cubin = malloc(size);
    if (!out->cubin)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory for the cubin");
    if (jit.GetLinkedCubin(handle, out->cubin) != NVJITLINK_SUCCESS)
        return pj_error(PTXJIT_ERR_COMPILE, "nvJitLinkGetLinkedCubin failed");
    out->cubin_size = size;
    return PTXJIT_OK;
}

/* nvJitLinkCreate with -arch, -O3 and, unless allowed or unknown, -no-cache. */
static nvJitLinkResult create_handle(nvJitLinkHandle *handle, const char *arch_option)
{
    const char *options[] = {arch_option, "-O3", "-no-cache"};
    int no_cache = !atomic_load(&driver_cache_allowed) && !atomic_load(&no_cache_unknown);
    nvJitLinkResult result = jit.Create(handle, no_cache ? 3 : 2, options);
    if (result == NVJITLINK_ERROR_UNRECOGNIZED_OPTION && no_cache) {
        atomic_store(&no_cache_unknown, 1);
        result = jit.Create(handle, 2, options);
    }
    return result;
}

ptxjit_status pj_nvjitlink_compile(pj_artifact *out, const char *ptx, const char *arch)
{
    ptxjit_status status = pj_nvjitlink_load();
    if (status != PTXJIT_OK)
        return status;
    char arch_option[64];
    snprintf(arch_option, sizeof arch_option, "-arch=%s", arch);
    nvJitLinkHandle handle = NULL;
    nvJitLinkResult result = create_handle(&handle, arch_option);
    if (result != NVJITLINK_SUCCESS)
        return pj_error(PTXJIT_ERR_COMPILE, "nvJitLinkCreate(%s) failed with code %d",
                        arch_option, (int)result);
    result = jit.AddData(handle, NVJITLINK_INPUT_PTX, ptx, strlen(ptx), "kernel.ptx");
    if (result == NVJITLINK_SUCCESS)
        result = jit.Complete(handle);
    if (result != NVJITLINK_SUCCESS) {
        char *log = take_log(handle, 1);
        pj_compile_failure(log, ptx);
        status = pj_error(PTXJIT_ERR_COMPILE, "nvJitLink rejected the PTX for %s (code %d):\n%s",
                          arch, (int)result, log ? log : "(no log)");
        free(log);
    } else {
        status = take_cubin(out, handle);
        if (status == PTXJIT_OK)
            out->log = take_log(handle, 0);
        if (status == PTXJIT_OK && !out->log)
            status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory for the log");
    }
    jit.Destroy(&handle);
    return status;
}

/* nvjitlink.c — nvJitLink through dlopen (dynlib.h). Its entry points are versioned symbols
 * (__nvJitLinkCreate_13_0); the header's inline wrappers hide that, so each is looked up under
 * the newest suffix the library has. */
#include <nvJitLink.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compilers/nvjitlink.h"
#include "compilers/ptxas_log.h"
#include "util/dynlib.h"

static struct {
    pj_dynlib lib;
    char version[32];
    ptxjit_status status;
    char error[PJ_DYNLIB_ERROR_MAX];
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

/* Each entry point under the newest version suffix present: 13.0, then 12.9 down to 12.0. */
static const char *resolve_entry_points(void)
{
    static const char *const suffixes[] = {"13_0", "12_9", "12_8", "12_7", "12_6", "12_5",
                                           "12_4", "12_3", "12_2", "12_1", "12_0", NULL};
    const pj_dynlib_symbol symbols[] = {
#define PJ_JIT_SYMBOL(name) {"nvJitLink" #name, (void **)&jit.name}
        PJ_JIT_SYMBOL(Create),          PJ_JIT_SYMBOL(Destroy),
        PJ_JIT_SYMBOL(AddData),         PJ_JIT_SYMBOL(Complete),
        PJ_JIT_SYMBOL(GetLinkedCubinSize), PJ_JIT_SYMBOL(GetLinkedCubin),
        PJ_JIT_SYMBOL(GetErrorLogSize), PJ_JIT_SYMBOL(GetErrorLog),
        PJ_JIT_SYMBOL(GetInfoLogSize),  PJ_JIT_SYMBOL(GetInfoLog),
#undef PJ_JIT_SYMBOL
    };
    return pj_dynlib_resolve_versioned(jit.lib.handle, symbols, PJ_ARRAY_SIZE(symbols),
                                       suffixes);
}

static void jit_load_once(void)
{
    static const char *const sonames[] = {"libnvJitLink.so.13", "libnvJitLink.so.12", NULL};
    const pj_dynlib_spec spec = {
        .what = "nvJitLink",
        .override = "PTXJIT_NVJITLINK_LIBRARY",
        .sonames = sonames,
        .file = "libnvJitLink.so",
        .places = PJ_DYNLIB_TOOLKIT,
        .fix = "install the CUDA toolkit's nvJitLink or set PTXJIT_NVJITLINK_LIBRARY to "
               "libnvJitLink.so's path"};
    jit.status = PTXJIT_ERR_NO_COMPILER;
    if (!pj_dynlib_open(&jit.lib, &spec)) {
        snprintf(jit.error, sizeof jit.error, "%s", jit.lib.error);
        return;
    }
    const char *missing = resolve_entry_points();
    if (missing) {
        snprintf(jit.error, sizeof jit.error,
                 "the nvJitLink library %s lacks %s (ptxjit needs CUDA 12.0 or newer)",
                 jit.lib.path, missing);
        return;
    }
    /* nvJitLinkVersion is the one entry point without a version suffix. */
    const pj_dynlib_symbol version = {"nvJitLinkVersion", (void **)&jit.Version};
    unsigned major = 0, minor = 0;
    if (pj_dynlib_resolve(jit.lib.handle, &version, 1) ||
        jit.Version(&major, &minor) != NVJITLINK_SUCCESS) {
        snprintf(jit.error, sizeof jit.error, "nvJitLinkVersion is missing or failed in %s",
                 jit.lib.path);
        return;
    }
    snprintf(jit.version, sizeof jit.version, "nvjitlink %u.%u", major, minor);
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
    /* Only once every entry point was found: the compiler memo records this file. */
    return jit.status == PTXJIT_OK && jit.lib.path[0] ? jit.lib.path : NULL;
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

/* nvJitLinkCreate with -arch, -O3, ptxas -v and, unless allowed or unknown, -no-cache.
 * -Xptxas=-v puts ptxas's "Function properties" lines (the spills: the cubin records none) in
 * the info log that becomes the entry's log; it changes no code, so it is in no key. */
static nvJitLinkResult create_handle(nvJitLinkHandle *handle, const char *arch_option)
{
    const char *options[] = {arch_option, "-O3", "-Xptxas=-v", "-no-cache"};
    int no_cache = !atomic_load(&driver_cache_allowed) && !atomic_load(&no_cache_unknown);
    nvJitLinkResult result = jit.Create(handle, no_cache ? 4 : 3, options);
    if (result == NVJITLINK_ERROR_UNRECOGNIZED_OPTION && no_cache) {
        atomic_store(&no_cache_unknown, 1);
        result = jit.Create(handle, 3, options);
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
        pj_ptxas_log_settle(out->log);
        if (status == PTXJIT_OK && !out->log)
            status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory for the log");
    }
    jit.Destroy(&handle);
    return status;
}

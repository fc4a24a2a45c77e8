/* nvrtc.c — NVRTC through dlopen: found by soname, $PTXJIT_NVRTC_LIBRARY or the toolkit's lib
 * folders (dynlib.h); every entry point checked once at load. */
#include <nvrtc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "compilers/nvrtc.h"
#include "compilers/ptxas_log.h"
#include "util/dynlib.h"

static struct {
    pj_dynlib lib;
    char version[32];
    int has_cache; /* 12.9+: NVRTC caches in the driver's compute cache */
    ptxjit_status status;
    char error[PJ_DYNLIB_ERROR_MAX];
    nvrtcResult (*Version)(int *, int *);
    nvrtcResult (*CreateProgram)(nvrtcProgram *, const char *, const char *, int,
                                 const char *const *, const char *const *);
    nvrtcResult (*CompileProgram)(nvrtcProgram, int, const char *const *);
    nvrtcResult (*GetPTXSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetPTX)(nvrtcProgram, char *);
    nvrtcResult (*GetCUBINSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetCUBIN)(nvrtcProgram, char *);
    nvrtcResult (*GetProgramLogSize)(nvrtcProgram, size_t *);
    nvrtcResult (*GetProgramLog)(nvrtcProgram, char *);
    nvrtcResult (*DestroyProgram)(nvrtcProgram *);
    const char *(*GetErrorString)(nvrtcResult);
} nvrtc;

static pthread_once_t nvrtc_once = PTHREAD_ONCE_INIT;

/* NVRTC 12.9+ keeps both its PTX and its cubin in the CUDA driver's compute cache
 * (~/.nv/ComputeCache), loading libcuda and calling cuInit for it wherever a driver is
 * installed. ptxjit has its own cache, a context opened with use_gpu=0 must not touch the
 * driver, and a cold compile must compile: so --no-cache (not part of the key: the code is the
 * same), unless the bench asks for the cache. */
static atomic_int driver_cache_allowed;

void pj_nvrtc_allow_driver_cache(int allowed)
{
    atomic_store(&driver_cache_allowed, allowed != 0);
}

static _Atomic(const char *) extra_option;

void pj_nvrtc_set_extra_option(const char *option)
{
    atomic_store(&extra_option, option);
}

const char *pj_nvrtc_extra_option(void)
{
    return atomic_load(&extra_option);
}

static void nvrtc_load_once(void)
{
    static const char *const sonames[] = {"libnvrtc.so.13", "libnvrtc.so.12", NULL};
    const pj_dynlib_spec spec = {
        .what = "NVRTC",
        .override = "PTXJIT_NVRTC_LIBRARY",
        .sonames = sonames,
        .file = "libnvrtc.so",
        .places = PJ_DYNLIB_TOOLKIT,
        .fix = "install the CUDA toolkit's NVRTC or set PTXJIT_NVRTC_LIBRARY to libnvrtc.so's "
               "path"};
    nvrtc.status = PTXJIT_ERR_NO_COMPILER;
    if (!pj_dynlib_open(&nvrtc.lib, &spec)) {
        snprintf(nvrtc.error, sizeof nvrtc.error, "%s", nvrtc.lib.error);
        return;
    }
    const pj_dynlib_symbol symbols[] = {
#define PJ_NVRTC_SYMBOL(name) {"nvrtc" #name, (void **)&nvrtc.name}
        PJ_NVRTC_SYMBOL(Version),        PJ_NVRTC_SYMBOL(CreateProgram),
        PJ_NVRTC_SYMBOL(CompileProgram), PJ_NVRTC_SYMBOL(GetPTXSize),
        PJ_NVRTC_SYMBOL(GetPTX),         PJ_NVRTC_SYMBOL(GetCUBINSize),
        PJ_NVRTC_SYMBOL(GetCUBIN),       PJ_NVRTC_SYMBOL(GetProgramLogSize),
        PJ_NVRTC_SYMBOL(GetProgramLog),  PJ_NVRTC_SYMBOL(DestroyProgram),
        PJ_NVRTC_SYMBOL(GetErrorString),
#undef PJ_NVRTC_SYMBOL
    };
    const char *missing = pj_dynlib_resolve(nvrtc.lib.handle, symbols, PJ_ARRAY_SIZE(symbols));
    if (missing) {
        snprintf(nvrtc.error, sizeof nvrtc.error,
                 "the NVRTC library %s lacks %s (too old? ptxjit needs CUDA 12.0 or newer)",
                 nvrtc.lib.path, missing);
        return;
    }
    int major = 0, minor = 0;
    nvrtc.Version(&major, &minor);
    snprintf(nvrtc.version, sizeof nvrtc.version, "nvrtc %d.%d", major, minor);
    nvrtc.has_cache = major > 12 || (major == 12 && minor >= 9);
    nvrtc.status = PTXJIT_OK;
}

ptxjit_status pj_nvrtc_load(void)
{
    pthread_once(&nvrtc_once, nvrtc_load_once);
    if (nvrtc.status != PTXJIT_OK)
        return pj_error(nvrtc.status, "%s", nvrtc.error);
    return PTXJIT_OK;
}

const char *pj_nvrtc_version_string(void)
{
    return nvrtc.version;
}

const char *pj_nvrtc_library_path(void)
{
    /* Only once every entry point was found: the compiler memo records this file. */
    return nvrtc.status == PTXJIT_OK && nvrtc.lib.path[0] ? nvrtc.lib.path : NULL;
}

static char *program_log(nvrtcProgram program)
{
    size_t size = 0;
    if (nvrtc.GetProgramLogSize(program, &size) != NVRTC_SUCCESS || size == 0)
        return pj_strdup("");
    char *log = calloc(1, size + 1);
    if (log && nvrtc.GetProgramLog(program, log) != NVRTC_SUCCESS)
        log[0] = '\0';
    return log;
}

static ptxjit_status take_outputs(pj_artifact *out, nvrtcProgram program)
{
    size_t ptx_size = 0, cubin_size = 0;
    if (nvrtc.GetPTXSize(program, &ptx_size) != NVRTC_SUCCESS || ptx_size == 0)
        return pj_error(PTXJIT_ERR_COMPILE, "NVRTC produced no PTX");
    out->ptx = calloc(1, ptx_size + 1);
    if (!out->ptx)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory for PTX");
    nvrtc.GetPTX(program, out->ptx);
    /* A virtual architecture (compute_XX) yields PTX only; the cubin comes later. */
    if (nvrtc.GetCUBINSize(program, &cubin_size) == NVRTC_SUCCESS && cubin_size > 0) {
        out->cubin = malloc(cubin_size);
        if (!out->cubin)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory for cubin");
        nvrtc.GetCUBIN(program, (char *)out->cubin);
        out->cubin_size = cubin_size;
    }
    return PTXJIT_OK;
}

ptxjit_status pj_nvrtc_compile(pj_artifact *out, const char *source, const char *name,
                            const char *const *options, int option_count, char **log_out)
{
    ptxjit_status status = pj_nvrtc_load();
    if (status != PTXJIT_OK)
        return status;
    if (option_count > PJ_NVRTC_MAX_OPTIONS)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "%d NVRTC options, at most %d", option_count,
                        PJ_NVRTC_MAX_OPTIONS);
    nvrtcProgram program = NULL;
    nvrtcResult result = nvrtc.CreateProgram(&program, source, name, 0, NULL, NULL);
    if (result != NVRTC_SUCCESS)
        return pj_error(PTXJIT_ERR_COMPILE, "nvrtcCreateProgram: %s",
                        nvrtc.GetErrorString(result));
    const char *all[PJ_NVRTC_MAX_OPTIONS + 2];
    int count = 0;
    for (int i = 0; i < option_count; i++)
        all[count++] = options[i];
    if (nvrtc.has_cache && !atomic_load(&driver_cache_allowed))
        all[count++] = "--no-cache";
    /* ptxas -v: its "Function properties" lines in the log are where the spills are (the
     * cubin records none; resources.c reads them). It changes no code — the cubin's text and
     * attributes are the same, only its tool note lists the option — so, as --no-cache, it is
     * not part of the key. */
    all[count++] = "--ptxas-options=-v";
    result = nvrtc.CompileProgram(program, count, all);
    char *log = program_log(program);
    if (result != NVRTC_SUCCESS) {
        status = pj_error(PTXJIT_ERR_COMPILE, "%s", nvrtc.GetErrorString(result));
        if (log_out)
            *log_out = log;
        else
            free(log);
        nvrtc.DestroyProgram(&program);
        return status;
    }
    pj_ptxas_log_settle(log);
    out->log = log ? log : pj_strdup("");
    status = take_outputs(out, program);
    nvrtc.DestroyProgram(&program);
    return status;
}

/* warm_compilers.c — for `make valgrind`: valgrind translates a library's code the first time
 * it runs in a process (measured here: NVRTC ~25 s, the LLVM plugin ~15 s, nvJitLink 5-10 s),
 * and Check forks one process per test; a child inherits what its parent translated. So the
 * runner runs the compilers named in $PTXJIT_TEST_WARM_COMPILERS ("nvrtc,llvm,nvjitlink";
 * nvJitLink links the plugin's PTX, so it needs llvm too) once before the tests: directly,
 * through dlopen, not through ptxjit, whose tests check when ptxjit loads its compilers and
 * plugin. A warmed parent also makes every child slower to fork and exit (0.13 s a test with
 * NVRTC warmed, 0.26 s with all three), so the Makefile warms for each part of the suite only
 * what it compiles with. */
#include <dlfcn.h>
#include <libgen.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compilers/llvm_plugin.h"
#include "test_util.h"

static void *open_first(const char *const *names, size_t count)
{
    void *handle = NULL;
    for (size_t i = 0; i < count && !handle; i++)
        handle = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    return handle;
}

static int warm_nvrtc(void)
{
    static const char *const names[] = {"libnvrtc.so.13", "libnvrtc.so.12",
                                        "/usr/local/cuda/lib64/libnvrtc.so",
                                        "/usr/local/cuda/lib/libnvrtc.so"};
    void *nvrtc = open_first(names, PJ_ARRAY_SIZE(names));
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *) = nvrtc ? dlsym(nvrtc, "nvrtcCreateProgram") : NULL;
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *) =
        nvrtc ? dlsym(nvrtc, "nvrtcCompileProgram") : NULL;
    nvrtcResult (*destroy)(nvrtcProgram *) = nvrtc ? dlsym(nvrtc, "nvrtcDestroyProgram") : NULL;
    const char *source = "extern \"C\" __global__ void warm(int *x, int n) {\n"
                         "  int v = x[threadIdx.x];\n"
                         "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(~0u, v, o);\n"
                         "  if (threadIdx.x == 0) atomicAdd(x + n, v);\n}\n";
    /* --no-cache as ptxjit passes it: NVRTC 12.9+ would otherwise start the CUDA driver for
     * its compute cache, here in the runner, before it forks (an older NVRTC refuses the
     * option, and is warmed less). */
    const char *options[] = {"-arch=sm_90a", "-std=c++17", "--no-cache"};
    nvrtcProgram program;
    if (!create || !compile || !destroy || create(&program, source, "warm.cu", 0, NULL, NULL))
        return 0;
    compile(program, 3, options);
    destroy(&program);
    return 1;
}

/* PTX of a reduce kernel from the plugin next to the runner; caller frees. NULL if none. */
static char *warm_llvm_plugin(void)
{
    char self[4096], path[4200];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    self[n > 0 ? n : 0] = '\0';
    /* The Makefile builds the plugin next to the runner. */
    snprintf(path, sizeof path, "%s/libptxjit_llvm.so", dirname(self));
    void *plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    pj_llvm_plugin_get_fn get = plugin ? (pj_llvm_plugin_get_fn)dlsym(plugin,
                                                                      PJ_LLVM_PLUGIN_SYMBOL)
                                       : NULL;
    const pj_llvm_plugin *api = get ? get() : NULL;
    if (!api || api->abi != PJ_LLVM_PLUGIN_ABI)
        return NULL;
    const pj_llvm_param params[] = {{"variant", 4, "vectorized"}, {"tpb", 256, "256"},
                                    {"batch", 4, "4"}, {"dtype", 0, "i32"}};
    pj_llvm_request request = {"reduce", "warm", "sm_90a", params, 4};
    pj_llvm_result result = {0};
    char *ptx = NULL;
    if (api->compile(&result, &request) == PJ_LLVM_OK && result.ptx)
        ptx = pj_strdup(result.ptx);
    api->release(&result);
    return ptx;
}

/* nvJitLink's entry points carry their version in the symbol: __nvJitLinkCreate_13_0. */
static void *jit_symbol(void *jit, const char *name)
{
    static const char *const suffixes[] = {"13_0", "12_9", "12_8", "12_6", "12_4", "12_0"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(suffixes); i++) {
        char symbol[128];
        snprintf(symbol, sizeof symbol, "__nvJitLink%s_%s", name, suffixes[i]);
        void *address = dlsym(jit, symbol);
        if (address)
            return address;
    }
    return NULL;
}

static int warm_nvjitlink(const char *ptx)
{
    static const char *const names[] = {"libnvJitLink.so.13", "libnvJitLink.so.12",
                                        "/usr/local/cuda/lib64/libnvJitLink.so",
                                        "/usr/local/cuda/lib/libnvJitLink.so"};
    void *jit = ptx ? open_first(names, PJ_ARRAY_SIZE(names)) : NULL;
    nvJitLinkResult (*create)(nvJitLinkHandle *, uint32_t, const char **) =
        jit ? jit_symbol(jit, "Create") : NULL;
    nvJitLinkResult (*add)(nvJitLinkHandle, nvJitLinkInputType, const void *, size_t,
                           const char *) = jit ? jit_symbol(jit, "AddData") : NULL;
    nvJitLinkResult (*complete)(nvJitLinkHandle) = jit ? jit_symbol(jit, "Complete") : NULL;
    nvJitLinkResult (*destroy)(nvJitLinkHandle *) = jit ? jit_symbol(jit, "Destroy") : NULL;
    const char *options[] = {"-arch=sm_90a", "-O3", "-no-cache"}; /* as ptxjit, as NVRTC's */
    nvJitLinkHandle handle = NULL;
    if (!create || !add || !complete || !destroy || create(&handle, 3, options))
        return 0;
    add(handle, NVJITLINK_INPUT_PTX, ptx, strlen(ptx), "warm.ptx");
    complete(handle);
    destroy(&handle);
    return 1;
}

void test_warm_compilers(void)
{
    const char *which = getenv("PTXJIT_TEST_WARM_COMPILERS");
    int nvrtc = strstr(which, "nvrtc") ? warm_nvrtc() : 0;
    char *ptx = strstr(which, "llvm") ? warm_llvm_plugin() : NULL;
    int jit = strstr(which, "nvjitlink") ? warm_nvjitlink(ptx) : 0;
    printf("warmed for the forked tests: NVRTC %s, LLVM plugin %s, nvJitLink %s\n",
           nvrtc ? "yes" : "no", ptx ? "yes" : "no", jit ? "yes" : "no");
    fflush(stdout); /* or every forked child prints it again */
    free(ptx);
}

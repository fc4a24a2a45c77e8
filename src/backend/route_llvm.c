/* route_llvm.c — the LLVM route: the family's IR generator (in the plugin) builds the kernel,
 * LLVM optimizes it and emits PTX, nvJitLink makes the cubin. Its code comes from the
 * generator, not the template text, so its key names the generator and its version, the
 * builder's version, LLVM and nvJitLink, and what the NVPTX target and nvJitLink are asked. */
#include <stdio.h>
#include <stdlib.h>

#include "backend/compiler_id.h"
#include "backend/llvm.h"
#include "backend/llvm_plugin.h"
#include "backend/nvjitlink.h"
#include "backend/route.h"
#include "cache/key.h"

/* The route's compiler in keys: the LLVM built into the plugin, and nvJitLink. */
static void route_version(char out[64], const char *nvjitlink)
{
    /* Both names are short ("llvm 19.1.7", "nvjitlink 13.0"); a cut would only split keys. */
    int length = snprintf(out, 64, "%s, ", pj_llvm_version_string());
    if (length > 0 && length < 64)
        snprintf(out + length, (size_t)(64 - length), "%.40s", nvjitlink);
}

static ptxjit_status llvm_version(char out[64], const char *memo_path)
{
    char found[64];
    ptxjit_status status = pj_compiler_version_of(&pj_compiler_nvjitlink, found, 64, memo_path);
    if (status == PTXJIT_OK)
        route_version(out, found);
    return status;
}

static void llvm_compiled_version(char out[64])
{
    route_version(out, pj_nvjitlink_version_string());
}

static ptxjit_status llvm_key(pj_hash128 *out, const ptxjit_kernel *kernel)
{
    const ptxjit_context *context = kernel->context;
    char generator[128];
    snprintf(generator, sizeof generator, "llvm IR generator %s v%d", kernel->schema->family,
             pj_llvm_generator_version(kernel->schema->family));
    char codegen[32];
    snprintf(codegen, sizeof codegen, "codegen-level=%d", PJ_LLVM_CODEGEN_LEVEL);
    const char *options[] = {"features=" PJ_LLVM_PTX_FEATURES, "passes=" PJ_LLVM_PASSES, codegen,
                             "nvjitlink=-O3"};
    pj_key_inputs inputs = {kernel->schema->family, kernel->canonical, generator, "llvm",
                            kernel->compiler_version, context->arch, options,
                            (int)PJ_ARRAY_SIZE(options), PJ_LLVM_BUILDER_VERSION};
    return pj_cache_key(out, &inputs);
}

static ptxjit_status llvm_route_compile(ptxjit_kernel *kernel)
{
    return pj_llvm_compile(&kernel->artifact, &kernel->stages, &kernel->request,
                           kernel->canonical, kernel->context->arch);
}

/* The IR is printed only when asked for (printing is 3% of a compile, and 600 KB of text for
 * a wgmma kernel): the generator runs again. */
static char *llvm_source(const ptxjit_kernel *kernel)
{
    return pj_llvm_generate_ir(&kernel->request, kernel->canonical, kernel->context->arch);
}

const pj_route pj_route_llvm = {
    "llvm", "nvJitLink", "compiler-nvjitlink", pj_llvm_check_request, llvm_version,
    llvm_compiled_version, llvm_key, llvm_route_compile, llvm_source,
};

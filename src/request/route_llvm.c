/* route_llvm.c — the LLVM route on libptxjit's side: the plugin (libptxjit_llvm.so, built from
 * src/plugin/) found and checked once, requests checked against the generators it has, its
 * PTX handed to nvJitLink for the cubin; and the route's table. Its code comes from the
 * family's generator, not the template text, so its key names the generator and its version,
 * the builder's version, LLVM and nvJitLink, and what the NVPTX target and nvJitLink are asked. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compilers/compiler_id.h"
#include "compilers/llvm_plugin.h"
#include "compilers/nvjitlink.h"
#include "request/route.h"
#include "request/route_llvm.h"
#include "request/key.h"
#include "util/dynlib.h"
#include "catalog/family.h"
#include "catalog/variants.h"

/* The LLVM version this build's plugin holds (llvm-config --version), or "" in a build made
 * without LLVM: the llvm route then says it is not available and how to get it. */
#ifndef PJ_LLVM_VERSION
#define PJ_LLVM_VERSION ""
#endif
#define PJ_LLVM_PLUGIN_FILE "libptxjit_llvm.so"

static struct {
    const pj_llvm_plugin *plugin;
    pj_dynlib lib; /* the file it was loaded from, or why none could be */
    ptxjit_status status;
} loaded;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

const char *pj_llvm_version_string(void)
{
    return "llvm " PJ_LLVM_VERSION;
}

int pj_llvm_built(void)
{
    return PJ_LLVM_VERSION[0] != '\0';
}

int pj_llvm_generator_version(const char *family)
{
    const pj_family *f = pj_family_find(family);
    return f ? f->llvm_version : 0;
}

const char *pj_llvm_generator_variants(const char *family)
{
    const pj_family *f = pj_family_find(family);
    return f && f->llvm_version ? f->llvm_variants : NULL;
}

/* What a plugin built with these families must report (plugin.c writes the same). */
static char generator_text[1024];
static pthread_once_t text_once = PTHREAD_ONCE_INIT;

static void describe_generators(void)
{
    for (int i = 0; pj_families[i]; i++)
        if (pj_families[i]->llvm_version)
            pj_llvm_generator_text(generator_text, sizeof generator_text, pj_families[i]->name,
                                   pj_families[i]->llvm_version, pj_families[i]->llvm_variants);
}

static ptxjit_status unsupported_family(const char *family)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; pj_families[i]; i++)
        if (pj_families[i]->llvm_version)
            pj_sb_appendf(&sb, "%s%s", sb.length ? ", " : "", pj_families[i]->name);
    ptxjit_status status = pj_error(
        PTXJIT_ERR_UNSUPPORTED,
        "%s is not supported by the llvm backend: it has no IR generator for this family "
        "(the llvm backend generates: %s); use backend=nvrtc",
        family, sb.data ? sb.data : "");
    pj_sb_free(&sb);
    return status;
}

/* The fix for a build without LLVM, in every message that meets it. */
static ptxjit_status not_built(void)
{
    return pj_error(PTXJIT_ERR_NO_COMPILER,
                    "the llvm backend is not part of this build of ptxjit (llvm-config-19 was not "
                    "found when it was built); install llvm-19-dev (make deps) and rebuild, or "
                    "use backend=nvrtc");
}

ptxjit_status pj_llvm_check_request(const pj_request *request)
{
    const pj_schema *schema = request->schema;
    if (!pj_llvm_built())
        return not_built();
    const char *variants = pj_llvm_generator_variants(schema->family);
    if (!variants)
        return unsupported_family(schema->family);
    /* A generator reproduces the built-in template; a user template of the same name may
     * mean another kernel. */
    if (!pj_origin_is_builtin(schema->origin))
        return pj_error(PTXJIT_ERR_UNSUPPORTED,
                        "%s from %s is not supported by the llvm backend: its generator builds "
                        "the built-in template's kernels only; use backend=nvrtc",
                        schema->family, schema->origin);
    char buf[32];
    if (pj_schema_param_index(schema, "variant") >= 0) {
        const char *variant = pj_request_value_name(request, "variant", buf);
        if (pj_variant_index(variants, variant) < 0)
            return pj_error(PTXJIT_ERR_UNSUPPORTED,
                            "%s variant=%s is not supported by the llvm backend (it builds "
                            "variants %s); use backend=nvrtc",
                            schema->family, variant, variants);
    }
    return PTXJIT_OK;
}

static const char *check_plugin(const pj_llvm_plugin *plugin)
{
    if (!plugin || plugin->abi != PJ_LLVM_PLUGIN_ABI)
        return "it speaks another plugin ABI";
    if (strcmp(plugin->llvm_version, PJ_LLVM_VERSION) != 0)
        return "it holds another LLVM version than this build of libptxjit";
    if (plugin->builder_version != PJ_LLVM_BUILDER_VERSION ||
        (pthread_once(&text_once, describe_generators),
         strcmp(plugin->generators, generator_text) != 0))
        return "its IR generators are of another build";
    return NULL;
}

/* A candidate that loads must also be this build's plugin. */
static const char *accept_plugin(void *handle, void *user)
{
    pj_llvm_plugin_get_fn get = (pj_llvm_plugin_get_fn)dlsym(handle, PJ_LLVM_PLUGIN_SYMBOL);
    *(pj_llvm_plugin_get_fn *)user = get;
    return get ? check_plugin(get()) : "it lacks " PJ_LLVM_PLUGIN_SYMBOL;
}

/* $PTXJIT_LLVM_LIBRARY, then next to the code of libptxjit (the CLI, a program linked with
 * libptxjit.a, or libptxjit.so) and its ../lib, next to the running program, and last by
 * name through the loader's search path. */
static void load_plugin(void)
{
    static const char *const by_name[] = {PJ_LLVM_PLUGIN_FILE, NULL};
    pj_llvm_plugin_get_fn get = NULL;
    const pj_dynlib_spec spec = {
        .what = "the LLVM backend's plugin " PJ_LLVM_PLUGIN_FILE,
        .override = "PTXJIT_LLVM_LIBRARY",
        .sonames = by_name,
        .file = PJ_LLVM_PLUGIN_FILE,
        .places = PJ_DYNLIB_NEXT_TO_SELF | PJ_DYNLIB_NEXT_TO_EXE,
        .self = (const void *)pj_llvm_load,
        .check = accept_plugin,
        .check_user = &get,
        .fix = "build it with make (it is installed next to libptxjit) or set "
               "PTXJIT_LLVM_LIBRARY to its path"};
    if (pj_dynlib_open(&loaded.lib, &spec) && get) {
        loaded.plugin = get();
        loaded.status = PTXJIT_OK;
    } else {
        loaded.status = PTXJIT_ERR_NO_COMPILER;
    }
}

ptxjit_status pj_llvm_load(void)
{
    if (!pj_llvm_built())
        return not_built();
    pthread_once(&load_once, load_plugin);
    if (loaded.status != PTXJIT_OK)
        return pj_error(loaded.status, "%s", loaded.lib.error);
    return PTXJIT_OK;
}

const char *pj_llvm_plugin_path(void)
{
    return loaded.status == PTXJIT_OK && loaded.lib.path[0] ? loaded.lib.path : NULL;
}

/* The request as the plugin takes it: every parameter's name, value and value name. */
static ptxjit_status plugin_params(pj_llvm_param **out, char (**names)[32],
                                   const pj_request *request)
{
    const pj_schema *schema = request->schema;
    size_t count = (size_t)schema->param_count;
    *out = calloc(count + 1, sizeof **out);
    *names = calloc(count + 1, sizeof **names);
    if (!*out || !*names)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < count; i++) {
        const char *name = schema->params[i].name;
        const char *text = pj_request_value_name(request, name, (*names)[i]);
        (*out)[i] = (pj_llvm_param){name, (long long)request->values[i], text};
    }
    return PTXJIT_OK;
}

typedef int (*plugin_call)(pj_llvm_result *, const pj_llvm_request *);

/* Runs one of the plugin's calls on request; *result is the plugin's (release it). */
static ptxjit_status call_plugin(pj_llvm_result *result, plugin_call call,
                                 const pj_request *request, const char *canonical,
                                 const char *arch)
{
    pj_llvm_param *params = NULL;
    char(*names)[32] = NULL;
    ptxjit_status status = plugin_params(&params, &names, request);
    if (status == PTXJIT_OK) {
        pj_llvm_request r = {request->schema->family, canonical, arch, params,
                             request->schema->param_count};
        int code = call(result, &r);
        if (code != PJ_LLVM_OK)
            status = pj_error(code == PJ_LLVM_UNSUPPORTED ? PTXJIT_ERR_UNSUPPORTED
                                                          : PTXJIT_ERR_COMPILE,
                              "%s (%s): the llvm backend failed for %s: %s",
                              request->schema->family, canonical, arch,
                              result->error ? result->error : "no reason given");
    }
    free(params);
    free(names);
    return status;
}

static ptxjit_status generate_ptx(pj_artifact *out, pj_stages *stages, const pj_request *request,
                                  const char *canonical, const char *arch)
{
    pj_llvm_result result = {0};
    ptxjit_status status = call_plugin(&result, loaded.plugin->compile, request, canonical, arch);
    if (status == PTXJIT_OK && !(out->ptx = pj_strdup(result.ptx)))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    stages->generate_ms = result.build_ms;
    stages->optimize_ms = result.optimize_ms;
    stages->emit_ms = result.emit_ms;
    loaded.plugin->release(&result);
    return status;
}

ptxjit_status pj_llvm_generate_ir(char **out, const pj_request *request, const char *canonical,
                                  const char *arch)
{
    *out = NULL;
    ptxjit_status status = pj_llvm_check_request(request);
    if (status == PTXJIT_OK)
        status = pj_llvm_load();
    if (status != PTXJIT_OK)
        return status;
    pj_llvm_result result = {0};
    status = call_plugin(&result, loaded.plugin->generate_ir, request, canonical, arch);
    if (status == PTXJIT_OK && !(*out = pj_strdup(result.ir)))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    loaded.plugin->release(&result);
    return status;
}

ptxjit_status pj_llvm_compile(pj_artifact *out, pj_stages *stages, const pj_request *request,
                           const char *canonical, const char *arch)
{
    pj_stages ignored;
    stages = stages ? stages : &ignored;
    memset(stages, 0, sizeof *stages);
    ptxjit_status status = pj_llvm_check_request(request);
    if (status == PTXJIT_OK)
        status = pj_llvm_load();
    if (status == PTXJIT_OK)
        status = pj_nvjitlink_load();
    if (status == PTXJIT_OK)
        status = generate_ptx(out, stages, request, canonical, arch);
    if (status != PTXJIT_OK)
        return status;
    double start = pj_route_clock_ms();
    status = pj_nvjitlink_compile(out, out->ptx, arch);
    stages->compile_ms = pj_route_clock_ms() - start;
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "%s (%s), PTX from LLVM", request->schema->family,
                             canonical);
    return PTXJIT_OK;
}

/* ---- the route ---- */

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

static ptxjit_status llvm_key(pj_hash128 *out, ptxjit_kernel *kernel)
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
                            (int)PJ_ARRAY_SIZE(options), PJ_LLVM_BUILDER_VERSION, NULL, NULL,
                            &kernel->components};
    return pj_cache_key(out, &inputs);
}

static ptxjit_status llvm_route_compile(ptxjit_kernel *kernel)
{
    return pj_llvm_compile(&kernel->artifact, &kernel->stages, &kernel->request,
                           kernel->canonical, kernel->context->arch);
}

/* The IR is printed only when asked for (printing is 3% of a compile, and 600 KB of text for
 * a wgmma kernel): the generator runs again. */
static ptxjit_status llvm_source(char **out, const ptxjit_kernel *kernel)
{
    return pj_llvm_generate_ir(out, &kernel->request, kernel->canonical, kernel->context->arch);
}

const pj_route pj_route_llvm = {
    "llvm", "nvJitLink", "compiler-nvjitlink", pj_llvm_check_request, llvm_version,
    llvm_compiled_version, llvm_key, llvm_route_compile, llvm_source,
    0, /* the generators take no compiler flags */
};

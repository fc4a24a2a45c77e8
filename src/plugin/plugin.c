/* plugin.c — libptxjit_llvm.so's one exported symbol: the generators dispatched by family,
 * the IR verified, optimized and printed as PTX, with each stage timed; or the IR printed. */
#include <llvm-c/Core.h>
#include <llvm/Config/llvm-config.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gen.h"

long long gen_int(const pj_llvm_request *request, const char *name)
{
    for (int i = 0; i < request->param_count; i++)
        if (strcmp(request->params[i].name, name) == 0)
            return request->params[i].value;
    return 0;
}

const char *gen_text(const pj_llvm_request *request, const char *name)
{
    for (int i = 0; i < request->param_count; i++)
        if (strcmp(request->params[i].name, name) == 0)
            return request->params[i].text;
    return "";
}

int gen_is(const pj_llvm_request *request, const char *name, const char *value)
{
    return strcmp(gen_text(request, name), value) == 0;
}

static int reader_get(const void *from, const char *name, long long *value, const char **text)
{
    const pj_llvm_request *request = from;
    for (int i = 0; i < request->param_count; i++)
        if (strcmp(request->params[i].name, name) == 0) {
            *value = request->params[i].value;
            *text = request->params[i].text;
            return 1;
        }
    return 0;
}

pj_param_reader gen_reader(const pj_llvm_request *request)
{
    return (pj_param_reader){request, reader_get};
}

#define PJ_GEN_ENTRY(name) &gen_family_##name,
static const gen_family *const generators[] = {PJ_FAMILY_LIST(PJ_GEN_ENTRY)};
#undef PJ_GEN_ENTRY

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static char *copy_text(const char *text)
{
    size_t size = strlen(text) + 1;
    char *copy = malloc(size);
    if (copy)
        memcpy(copy, text, size);
    return copy;
}

static gen_fn find_generator(const char *family)
{
    for (size_t i = 0; i < sizeof generators / sizeof generators[0]; i++)
        if (strcmp(generators[i]->family, family) == 0)
            return generators[i]->generate;
    return NULL;
}

/* Builds and verifies. Verifying costs about 0.4% of a compile and turns a generator bug into a
 * message instead of a crash inside a release build of LLVM, so it stays. */
static int build(ir_builder *ir, pj_llvm_result *out, const pj_llvm_request *request)
{
    char error[1024] = "";
    gen_fn generate = find_generator(request->family);
    if (!generate) {
        out->error = copy_text("no IR generator for this family");
        return PJ_LLVM_UNSUPPORTED;
    }
    if (!ir_arch_supported(request->arch)) {
        snprintf(error, sizeof error, "architecture %s is not supported by the llvm backend "
                 "(LLVM 19 targets sm_50 to sm_90a); use backend=nvrtc", request->arch);
        out->error = copy_text(error);
        return PJ_LLVM_UNSUPPORTED;
    }
    int code = generate(ir, request, error, sizeof error);
    if (code != PJ_LLVM_OK) {
        out->error = copy_text(error[0] ? error : "the generator failed");
        return code;
    }
    char *invalid = ir_verify(ir);
    if (invalid) {
        snprintf(error, sizeof error, "the generator built invalid IR (a ptxjit bug): %s",
                 invalid);
        LLVMDisposeMessage(invalid);
        out->error = copy_text(error);
        return PJ_LLVM_FAILED;
    }
    return PJ_LLVM_OK;
}

static int compile(pj_llvm_result *out, const pj_llvm_request *request)
{
    memset(out, 0, sizeof *out);
    ir_builder ir;
    double start = now_ms();
    ir_open(&ir, request->canonical);
    int code = build(&ir, out, request);
    out->build_ms = now_ms() - start;
    if (code == PJ_LLVM_OK) {
        out->error = ir_emit_ptx(&ir, request->arch, &out->ptx, &out->optimize_ms,
                                 &out->emit_ms);
        code = out->error ? PJ_LLVM_FAILED : PJ_LLVM_OK;
    }
    ir_close(&ir);
    if (code == PJ_LLVM_OK && !out->ptx) {
        out->error = copy_text("out of memory");
        code = PJ_LLVM_FAILED;
    }
    return code;
}

static int generate_ir(pj_llvm_result *out, const pj_llvm_request *request)
{
    memset(out, 0, sizeof *out);
    ir_builder ir;
    double start = now_ms();
    ir_open(&ir, request->canonical);
    int code = build(&ir, out, request);
    if (code == PJ_LLVM_OK) {
        char *text = ir_text(&ir);
        out->ir = text ? copy_text(text) : NULL;
        LLVMDisposeMessage(text);
        if (!out->ir) {
            out->error = copy_text("out of memory");
            code = PJ_LLVM_FAILED;
        }
    }
    out->build_ms = now_ms() - start;
    ir_close(&ir);
    return code;
}

static void release(pj_llvm_result *result)
{
    free(result->ir);
    free(result->ptx);
    free(result->error);
    memset(result, 0, sizeof *result);
}

static char generator_text[1024];
static pj_llvm_plugin plugin = {PJ_LLVM_PLUGIN_ABI, LLVM_VERSION_STRING, PJ_LLVM_BUILDER_VERSION,
                                generator_text, compile, generate_ir, release};

static void describe_generators(void)
{
    for (size_t i = 0; i < sizeof generators / sizeof generators[0]; i++)
        pj_llvm_generator_text(generator_text, sizeof generator_text, generators[i]->family,
                               generators[i]->version, generators[i]->variants);
}

__attribute__((visibility("default"))) const pj_llvm_plugin *pj_llvm_plugin_get(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, describe_generators);
    return &plugin;
}

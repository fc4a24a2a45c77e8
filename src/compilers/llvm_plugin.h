/* llvm_plugin.h — the interface between libptxjit and its LLVM plugin, libptxjit_llvm.so.
 * The plugin holds LLVM (linked statically, ~30 MB) and the IR generators; libptxjit loads it
 * with dlopen on the first backend=llvm compile, so programs that never ask for LLVM never pay
 * for it and a disk hit never loads it. Plain C types only: the two sides share no allocator
 * state and no error state; strings the plugin returns are released by the plugin. */
#ifndef PTXJIT_BACKEND_LLVM_PLUGIN_H
#define PTXJIT_BACKEND_LLVM_PLUGIN_H

#include <string.h>

/* Bumped whenever these structs or their meaning change. */
#define PJ_LLVM_PLUGIN_ABI 3
/* Bumped whenever the builder layer (src/plugin/ir_*.c), the passes or the PTX target
 * options change the code of every kernel; part of every llvm cache key. */
#define PJ_LLVM_BUILDER_VERSION 2
/* What the NVPTX target is asked for: a PTX ISA that every supported architecture accepts
 * (sm_90a needs 8.0) and the optimization pipeline. Both are part of the key. */
#define PJ_LLVM_PTX_FEATURES "+ptx80"
#define PJ_LLVM_PASSES "default<O3>"
/* NVPTX code generation's own optimization level (LLVMCodeGenOptLevel): 2. Levels 2 and 3
 * emit the same PTX for every kernel here, level 2 0.7 ms sooner. Level 0 is 5 ms faster still
 * but skips NVPTX's address passes (constant offsets folded into ld/st, straight-line strength
 * reduction), and ptxas then spends about that much longer on the plainer PTX. */
#define PJ_LLVM_CODEGEN_LEVEL 2

/* Which generators a plugin holds is checked at load against the family descriptors
 * (src/families/NAME/shape.h gives both sides the version and variants): each side writes
 * "family version variants;" per family, in list order, and the texts must be equal. */
#include <stdio.h>
static inline void pj_llvm_generator_text(char *out, size_t size, const char *family,
                                          int version, const char *variants)
{
    size_t used = strlen(out);
    if (used < size)
        snprintf(out + used, size - used, "%s %d %s;", family, version, variants);
}

/* One parameter of a validated request: its name, its value (an integer, or an enum's or
 * dtype's index) and the value's name ("vectorized", "f32", "256"). */
typedef struct {
    const char *name;
    long long value;
    const char *text;
} pj_llvm_param;

typedef struct {
    const char *family;
    const char *canonical; /* for messages and the module's name */
    const char *arch;      /* "sm_90a" */
    const pj_llvm_param *params;
    int param_count;
} pj_llvm_request;

enum { PJ_LLVM_OK = 0, PJ_LLVM_UNSUPPORTED = 1, PJ_LLVM_FAILED = 2 };

typedef struct {
    char *ir;    /* generate_ir: the generated module as text, before optimization */
    char *ptx;   /* compile: after optimization and NVPTX code generation */
    char *error; /* set when compile or generate_ir returns non-zero */
    double build_ms, optimize_ms, emit_ms;
} pj_llvm_result;

typedef struct {
    int abi;                /* PJ_LLVM_PLUGIN_ABI */
    const char *llvm_version; /* "19.1.7": the LLVM linked into the plugin */
    int builder_version;    /* PJ_LLVM_BUILDER_VERSION */
    const char *generators; /* pj_llvm_generator_text of each, to catch a stale plugin */
    /* Builds, optimizes and emits one kernel; thread-safe (one LLVM context per call, target
     * machines lent to one call at a time). */
    int (*compile)(pj_llvm_result *out, const pj_llvm_request *request);
    /* Builds the kernel and prints it, unoptimized (what `ptxjit ir` shows): a separate call,
     * so that compiles do not print IR nobody reads (600 KB for a wgmma kernel). */
    int (*generate_ir)(pj_llvm_result *out, const pj_llvm_request *request);
    void (*release)(pj_llvm_result *result);
} pj_llvm_plugin;

/* The one symbol the plugin exports. */
#define PJ_LLVM_PLUGIN_SYMBOL "pj_llvm_plugin_get"
typedef const pj_llvm_plugin *(*pj_llvm_plugin_get_fn)(void);


#endif

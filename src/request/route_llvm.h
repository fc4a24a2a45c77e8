/* route_llvm.h — the LLVM route as libptxjit sees it: which requests it can take, the versions in
 * their keys, and the compile (plugin: IR → optimized IR → PTX; then nvJitLink: PTX → cubin). */
#ifndef PTXJIT_BACKEND_LLVM_H
#define PTXJIT_BACKEND_LLVM_H

#include "params/schema.h"

/* PTXJIT_OK when the plugin generates request's kernel; else PTXJIT_ERR_UNSUPPORTED saying
 * what this backend supports ("not supported by the llvm backend"), or PTXJIT_ERR_NO_COMPILER
 * in a build without LLVM. Needs no plugin. */
ptxjit_status pj_llvm_check_request(const pj_request *request);
/* The generator's version for family, or 0 when it has none. */
int pj_llvm_generator_version(const char *family);
/* The variants the generator of family builds ("a,b,c"), or NULL when there is none. */
const char *pj_llvm_generator_variants(const char *family);
/* 1 when this build has the llvm route (LLVM was found when it was built). */
int pj_llvm_built(void);
/* "llvm 19.1.7": the LLVM this build links into the plugin. */
const char *pj_llvm_version_string(void);

/* PTXJIT_OK when the plugin could be loaded and matches this build; else
 * PTXJIT_ERR_NO_COMPILER saying where it looked. */
ptxjit_status pj_llvm_load(void);
/* The path the plugin was loaded from (after a successful pj_llvm_load), else NULL. */
const char *pj_llvm_plugin_path(void);

/* Compiles request for arch: out->ptx and out->cubin (nvJitLink's info log in out->log);
 * stages may be NULL. The IR is not printed here: see pj_llvm_generate_ir. */
ptxjit_status pj_llvm_compile(pj_artifact *out, pj_stages *stages, const pj_request *request,
                           const char *canonical, const char *arch);
/* The generated IR of request for arch as text into *out, unoptimized (caller frees). Builds
 * the kernel again: only `ptxjit ir` and the like ask for it. */
ptxjit_status pj_llvm_generate_ir(char **out, const pj_request *request, const char *canonical,
                                  const char *arch);

#endif

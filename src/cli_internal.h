/* cli_internal.h — what the ptxjit command takes from the library beyond ptxjit.h, and nothing
 * else: the CLI includes ptxjit.h and this header only (a family's cli.c its own op.h too).
 * Each name here is the library's own, from the header that defines it: the leaf headers are
 * included whole; the functions of headers that would bring the library's state along are
 * declared again, word for word (tests/test_cli.c includes both, so a declaration that drifts
 * from its definition stops the build). */
#ifndef PTXJIT_CLI_INTERNAL_H
#define PTXJIT_CLI_INTERNAL_H

#include <stddef.h>

#include "catalog/list.h" /* PJ_FAMILY_LIST: the CLI's family table (cli/families.c) */
#include "ptxjit.h"
#include "util/count.h"   /* pj_count_parse, PJ_COUNT_MAX: the strict count words */
#include "util/dynlib.h"  /* the loader: cuBLAS (the benches' peer) and libcuda (cli/libcuda.c) */
#include "util/latency.h" /* the latency probe: jit-time and bench jit */

/* util/error.c (internal.h): the calling thread's last error, which cli_fail prints. */
ptxjit_status pj_error(ptxjit_status status, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

/* compilers/nvrtc.c, compilers/nvjitlink.c, request/route_llvm.c: `bench compile` names the
 * compilers it timed, turns the driver's compute cache on for its second table, and gives
 * NVRTC an -Ofc level. */
const char *pj_nvrtc_version_string(void);
const char *pj_nvrtc_library_path(void);
void pj_nvrtc_allow_driver_cache(int allowed);
void pj_nvrtc_set_extra_option(const char *option);
const char *pj_nvrtc_extra_option(void);
const char *pj_nvjitlink_version_string(void);
const char *pj_nvjitlink_library_path(void);
void pj_nvjitlink_allow_driver_cache(int allowed);
const char *pj_llvm_version_string(void);
const char *pj_llvm_plugin_path(void);

/* request/kernel_info.c: where a kernel's compile's time went (generate, optimize, emit,
 * compile, ms), for `bench compile`'s stage columns. */
void pj_kernel_stage_ms(double out[4], const ptxjit_kernel *kernel);

/* binary/cubin.c: what a cubin holds, for `bench compile`; 1 when it is SASS. */
int pj_cubin_describe(char *out, size_t size, const void *data, size_t bytes);

/* request/aot.c: what `ptxjit aot` writes of a kernel beside ptxjit.h's accessors (its
 * template's hash, the compiler version in its key, its backend). */
ptxjit_status pj_aot_kernel_identity(char template_hash[33], char compiler[64],
                                     const char **backend, const ptxjit_kernel *kernel);

#endif

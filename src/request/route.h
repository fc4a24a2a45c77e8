/* route.h — a backend as a route from a validated request to a cubin: one table of functions
 * per route (route_nvrtc.c, route_llvm.c), so that the request pipeline (kernel.c) never asks
 * which route it is on. Another route — a whole-program PTX compiler, say — is one more file
 * and one more row in pj_route_of. */
#ifndef PTXJIT_REQUEST_ROUTE_H
#define PTXJIT_REQUEST_ROUTE_H

#include <time.h>

#include "request/backend.h"
#include "request/context.h"

typedef struct pj_route {
    const char *name;     /* the backend= word: "nvrtc", "llvm" */
    const char *compiler; /* the library whose version is in the key, for messages */
    const char *memo;     /* that version's memo in the cache directory */
    /* PTXJIT_OK when the route builds request's kernel; else why not (UNSUPPORTED, or
     * NO_COMPILER for a route this build lacks). Loads no compiler: bad requests fail early. */
    ptxjit_status (*check)(const pj_request *request);
    /* The compiler's version for keys; memo_path (NULL: none) spares loading it on a disk hit. */
    ptxjit_status (*version)(char out[64], const char *memo_path);
    /* The version of the compiler that really ran, to compare with the key's. */
    void (*compiled_version)(char out[64]);
    /* The cache key of kernel (request, canonical form, compiler version, target, options,
     * and whatever else goes into the compile: the headers a template includes, which the
     * route may record in kernel to check them again after compiling). */
    ptxjit_status (*key)(pj_hash128 *out, ptxjit_kernel *kernel);
    /* Fills kernel->artifact's PTX, cubin and log, and kernel->stages. A compile error is
     * PTXJIT_ERR_COMPILE with a summary; its whole log and input go to pj_compile_failure. */
    ptxjit_status (*compile)(ptxjit_kernel *kernel);
    /* What the route compiles, made anew into *out (caller frees): the specialized CUDA
     * source, or the generated LLVM IR. Needs kernel's request, canonical form and context
     * only (ptxjit_specialize calls it on a request that has no key). */
    ptxjit_status (*source)(char **out, const ptxjit_kernel *kernel);
    /* 1 when the route compiles with the request's compile options (ptxjit_get_kernel_ex);
     * a request with options on another route is refused before any compiler loads. */
    int takes_compile_options;
} pj_route;

extern const pj_route pj_route_nvrtc, pj_route_llvm;
const pj_route *pj_route_of(pj_backend backend);

/* Milliseconds on the monotonic clock, for the stages of a compile. */
static inline double pj_route_clock_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

#endif

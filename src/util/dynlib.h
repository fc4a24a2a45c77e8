/* dynlib.h — the one loader for the libraries ptxjit opens with dlopen instead of linking
 * (NVRTC, nvJitLink, the CUDA driver, cuBLAS, the LLVM plugin, nettle): each is optional, and
 * linking one would tie ptxjit to one toolkit or make it fail to start where the library is
 * missing.
 *
 * pj_dynlib_open tries candidates in this order, each with dlopen(RTLD_NOW | RTLD_LOCAL),
 * and keeps the first that loads and that spec->check (if any) accepts:
 *   1. the path in $spec->override, when set and not empty (with PJ_DYNLIB_OVERRIDE_ALONE,
 *      nothing else is tried then: a test that names a missing file must not load the real
 *      one); the word "none" there tries nothing at all: the library is turned off (a
 *      program that serves AOT tables and must never load a compiler, docs/AOT.md);
 *   2. PJ_DYNLIB_NEXT_TO_SELF: spec->file in the folder of the file holding spec->self
 *      (dladdr: libptxjit.so, or the program that linked libptxjit.a), then in its ../lib;
 *   3. PJ_DYNLIB_NEXT_TO_EXE: the same beside /proc/self/exe, unless that is the same folder;
 *   4. spec->sonames, by the loader's search path (LD_LIBRARY_PATH, ld.so.cache, ...);
 *   5. PJ_DYNLIB_CUDA_HOME: spec->file in $CUDA_HOME/lib64, then $CUDA_HOME/lib;
 *   6. PJ_DYNLIB_CUDA_DEFAULT: the same in /usr/local/cuda (skipped when $CUDA_HOME is it):
 *      a toolkit's own folder is often not in the loader's cache.
 * Loading is not serialized here: callers load once per process with pthread_once.
 *
 * spec->check refuses a library that loads but is the wrong one: the LLVM plugin's loader
 * (src/request/route_llvm.c) refuses a plugin of another build (another ABI, LLVM version or
 * set of generators), which the error lists as "path (refused: REASON)". */
#ifndef PTXJIT_DYNLIB_H
#define PTXJIT_DYNLIB_H

#include <stddef.h>

#define PJ_DYNLIB_PATH_MAX 4096
#define PJ_DYNLIB_ERROR_MAX (2 * PJ_DYNLIB_PATH_MAX)

/* spec->places: where to look for spec->file (the order is fixed, see above). */
enum {
    PJ_DYNLIB_NEXT_TO_SELF = 1 << 0,
    PJ_DYNLIB_NEXT_TO_EXE = 1 << 1,
    PJ_DYNLIB_CUDA_HOME = 1 << 2,
    PJ_DYNLIB_CUDA_DEFAULT = 1 << 3,
    PJ_DYNLIB_TOOLKIT = PJ_DYNLIB_CUDA_HOME | PJ_DYNLIB_CUDA_DEFAULT,
    PJ_DYNLIB_OVERRIDE_ALONE = 1 << 4
};

/* Looks at a candidate that dlopen accepted: NULL keeps it; else the reason it is the wrong
 * library (the error lists it as "path (refused: reason)"; the handle is closed). */
typedef const char *pj_dynlib_check_fn(void *handle, void *user);

typedef struct {
    const char *what;           /* for the error, "cannot load WHAT": "NVRTC", "the CUDA driver" */
    const char *override;       /* environment variable naming the file to try first, or NULL */
    const char *const *sonames; /* NULL-terminated, or NULL */
    const char *file;           /* the file name looked for in places ("libnvrtc.so") */
    unsigned places;            /* PJ_DYNLIB_* */
    const void *self;           /* for PJ_DYNLIB_NEXT_TO_SELF: an address in the caller's code */
    pj_dynlib_check_fn *check;  /* NULL: the first candidate that loads is kept */
    void *check_user;
    const char *fix;            /* ends the error: what the user can do about it */
} pj_dynlib_spec;

typedef struct {
    void *handle;                  /* NULL unless loaded */
    char path[PJ_DYNLIB_PATH_MAX]; /* the file loaded, as the dynamic linker names it */
    /* When nothing could be loaded: "cannot load WHAT (tried A, B (reason), ...); FIX". A
     * candidate listed bare was not found; one that was found but failed to load carries
     * dlerror's reason. */
    char error[PJ_DYNLIB_ERROR_MAX];
} pj_dynlib;

/* 1 when a candidate was loaded (lib->handle, lib->path); 0 with lib->error set. Allocates
 * nothing (ptxjit's own allocations may be failed on purpose by the tests; loading must not
 * depend on them). */
int pj_dynlib_open(pj_dynlib *lib, const pj_dynlib_spec *spec);
/* dlclose, if loaded; lib can be opened again. */
void pj_dynlib_close(pj_dynlib *lib);

/* A table of entry points to fill: *slot = dlsym(handle, name). */
typedef struct {
    const char *name;
    void **slot;
} pj_dynlib_symbol;

/* Fills every slot in order; NULL when all were found, else the first name missing (its
 * slot is NULL, the later ones are left as they were). */
const char *pj_dynlib_resolve(void *handle, const pj_dynlib_symbol *symbols, size_t count);

/* nvJitLink's entry points are versioned symbols (__nvJitLinkCreate_13_0) that its header's
 * inline wrappers hide: __NAME_SUFFIX under the first of the NULL-terminated suffixes
 * present (list them newest first), or NULL. */
void *pj_dynlib_versioned_symbol(void *handle, const char *name, const char *const *suffixes);
/* pj_dynlib_resolve through pj_dynlib_versioned_symbol. */
const char *pj_dynlib_resolve_versioned(void *handle, const pj_dynlib_symbol *symbols,
                                        size_t count, const char *const *suffixes);

#endif

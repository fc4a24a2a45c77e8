/* compiler_id.h — the compiler's version for cache keys, without loading the compiler when
 * the disk cache already knows it: a disk hit should cost a file read, not a 100 MB dlopen. */
#ifndef PTXJIT_BACKEND_COMPILER_ID_H
#define PTXJIT_BACKEND_COMPILER_ID_H

#include "internal.h"

/* How to load a compiler library and ask it its version. */
typedef struct {
    const char *override_variable; /* the environment variable naming its path */
    ptxjit_status (*load)(void);
    const char *(*version)(void);
    const char *(*library)(void);
} pj_compiler_probe;
extern const pj_compiler_probe pj_compiler_nvrtc, pj_compiler_nvjitlink;
/* Writes the compiler's version ("nvrtc 13.0") into out. With memo_path (a file in the disk
 * cache), a memo whose library file and environment still match is trusted; otherwise the
 * library is loaded, asked, and the memo rewritten. */
ptxjit_status pj_compiler_version_of(const pj_compiler_probe *probe, char *out, size_t size,
                                  const char *memo_path);

#endif

/* select.h — which backend compiles a request: the context's default, or the reserved
 * `backend=` word of the request's parameters, which is taken out before the family's schema
 * sees them and put back into the canonical form so that the two routes never share a key. */
#ifndef PTXJIT_REQUEST_SELECT_H
#define PTXJIT_REQUEST_SELECT_H

#include "internal.h"
#include "request/backend.h"

/* "nvrtc" or "llvm". */
const char *pj_backend_name(pj_backend backend);
/* PTXJIT_ERR_UNSUPPORTED naming the backends this build has when name is none of them. */
ptxjit_status pj_backend_from_name(pj_backend *out, const char *name);

/* Splits params into the backend it names (else fallback) and the rest (caller frees).
 * PTXJIT_ERR_PARAM when backend= is given twice or names no backend. */
ptxjit_status pj_backend_take(pj_backend *out, char **rest, const char *params,
                           pj_backend fallback);

/* The canonical form of a request on backend: nvrtc's is the family's canonical form
 * unchanged (keys from before the LLVM route stay valid); llvm's has "backend=llvm" in its
 * sorted place. Takes ownership of canonical; NULL when out of memory. */
char *pj_backend_canonical(char *canonical, pj_backend backend);

#endif

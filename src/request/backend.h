/* backend.h — the backends a request can be compiled by, as the context and the kernel hold
 * them (select.h reads the backend= word; each backend is a route, route.h). */
#ifndef PTXJIT_REQUEST_BACKEND_H
#define PTXJIT_REQUEST_BACKEND_H

typedef enum { PJ_BACKEND_NVRTC, PJ_BACKEND_LLVM, PJ_BACKEND_COUNT } pj_backend;

#endif

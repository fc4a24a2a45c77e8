/* front.h — each thread's few last exact requests and their kernels: the memory hit that
 * reads no shared state but the context's epoch, and touches a handful of cache lines (a
 * launch between two hits leaves few of the alias path's lines in the caches). */
#ifndef PTXJIT_FRONT_H
#define PTXJIT_FRONT_H

#include <stdint.h>

#include "ptxjit.h"

/* A value never given to another context or reload in this process: a context takes one
 * at open and each time its exact-request aliases are forgotten (kernel.c), after which no
 * thread's front answers with what it noted before. */
uint64_t pj_front_new_epoch(void);

/* The kernel this thread noted for exactly (family, params, options) in context at epoch,
 * or NULL. */
ptxjit_kernel *pj_front_find(const ptxjit_context *context, uint64_t epoch, const char *family,
                             const char *params, const char *options);

/* Notes kernel as this thread's answer to the request in context at epoch (the epoch read
 * before the answer was found). A request too long for a slot is not noted. */
void pj_front_note(const ptxjit_context *context, uint64_t epoch, const char *family,
                   const char *params, const char *options, ptxjit_kernel *kernel);

#endif

/* open_contexts.h — the process's open contexts, so that ptxjit_close can tell a context it
 * opened from one it already closed (open_contexts.c). */
#ifndef PTXJIT_REQUEST_OPEN_CONTEXTS_H
#define PTXJIT_REQUEST_OPEN_CONTEXTS_H

#include "internal.h"

/* Adds an opened context; 0 when out of memory (the open fails: an unlisted context could
 * never be closed). */
int pj_open_contexts_add(const void *context);
/* Takes context off the list: 1 if it was on it, 0 if not (closed already, or never opened). */
int pj_open_contexts_remove(const void *context);
/* Whether context is on the list (open), leaving it there. */
int pj_open_contexts_has(const void *context);

#endif

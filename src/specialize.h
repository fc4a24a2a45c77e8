/* specialize.h — a validated request turned into the CUDA source that the backend compiles:
 * a generated prelude of constexpr parameters followed by the template text. */
#ifndef PTXJIT_SPECIALIZE_H
#define PTXJIT_SPECIALIZE_H

#include "params/schema.h"

/* Bumped whenever the prelude's shape changes, so cache keys change with it. */
#define PJ_SPECIALIZER_VERSION 2 /* 2: dtype parameters also get NAME_<TYPE> and NAME_ID */

/* The specialized source (caller frees), or NULL when out of memory. */
char *pj_specialize_source(const pj_request *request, const char *canonical);
/* Lines first..last of source, numbered, for error messages (caller frees). */
char *pj_specialize_excerpt(const char *source, int first, int last);

#endif

/* specialize.h — a validated request turned into the CUDA source that the backend compiles:
 * a generated prelude of constexpr parameters followed by the template text, each under a
 * #line directive so that compile errors cite the template's own file and lines. */
#ifndef PTXJIT_SPECIALIZE_H
#define PTXJIT_SPECIALIZE_H

#include "params/schema.h"

/* Bumped whenever the prelude's shape changes, so cache keys change with it. */
#define PJ_SPECIALIZER_VERSION 4 /* 2: dtype parameters also get NAME_<TYPE> and NAME_ID;
                                    3: #line directives (the prelude, then the template's
                                    origin and its own line numbers);
                                    4: each half header included once; storage types for
                                    `nvrtc half_storage` templates; the origin escaped in
                                    the first comment as in #line */

/* The file name under which the compiler's messages cite the prelude's lines. */
#define PJ_PRELUDE_NAME "ptxjit prelude"

/* The specialized source (caller frees), or NULL when out of memory. */
char *pj_specialize_source(const pj_request *request, const char *canonical);
/* Lines first..last of source, numbered, for error messages (caller frees). */
char *pj_specialize_excerpt(const char *source, int first, int last);

#endif

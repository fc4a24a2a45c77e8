/* compile_options.h — a request's compile options (ptxjit_get_kernel_ex, the context's
 * compile_options, $PTXJIT_COMPILE_OPTIONS): a closed list of NVRTC flags, each word checked,
 * so that what reaches the compiler is always one of them and never a word of a caller's
 * choosing. */
#ifndef PTXJIT_COMPILE_OPTIONS_H
#define PTXJIT_COMPILE_OPTIONS_H

#include "internal.h"

/* Defines and include dirs together, at most; each is an NVRTC argument. */
#define PJ_COMPILE_OPTIONS_MAX 48

typedef struct {
    char **words;          /* for NVRTC, in order: -DNAME[=V]..., -I<realpath>..., flags */
    int word_count;
    char **include_dirs;   /* the -I directories, resolved (realpath), in the given order */
    int include_dir_count;
    char *canonical;       /* as given: defines in order, -IDIR, flags in a fixed order; "" */
    char *resolved;        /* the same with each DIR resolved: what keys and entries hold */
} pj_compile_options;

/* Parses defaults (the context's words, NULL: none), then request's own words (NULL: none),
 * into one set: duplicates dropped, a define given two values refused. Every word that is
 * not an allowed option is PTXJIT_ERR_INVALID_ARGUMENT naming it and listing what is
 * allowed. On failure *out is empty (free it anyway). */
ptxjit_status pj_compile_options_parse(pj_compile_options *out, const char *defaults,
                                       const char *request);
void pj_compile_options_free(pj_compile_options *options);
/* Whether the set holds no option at all. */
int pj_compile_options_empty(const pj_compile_options *options);

#endif

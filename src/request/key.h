/* key.h — the cache key: a hash of everything that can change a kernel's code. */
#ifndef PTXJIT_CACHE_KEY_H
#define PTXJIT_CACHE_KEY_H

#include "request/includes.h"
#include "internal.h"

/* Bumped when the key's inputs or their encoding change. 2: the headers a template includes
 * (path and content) and the request's compile options (in options). 3: the template as its
 * XXH3-128, which a schema holds from its parse (the built-ins' from the build), so that a
 * request hashes 16 bytes instead of the template's whole text. */
#define PJ_KEY_SCHEMA_VERSION 3

typedef struct {
    const char *family;
    const char *canonical_params;
    const char *template_source; /* the full text, not its name (hashed here unless
                                    template_hash is given) */
    const char *backend;
    const char *compiler_version;
    const char *arch;
    const char *const *options; /* every compiler option, in order: the compile options and
                                   the include path too */
    int option_count;
    int specializer_version;
    const pj_include_set *includes; /* the headers the template can include; NULL: none */
    const pj_hash128 *template_hash; /* XXH3-128 of template_source, already known (the
                                        schema's source_hash); NULL: computed here */
    char **components; /* NULL, or where to put the key's inputs as text (caller frees): one
                          "name value" line each, what `ptxjit explain` compares */
} pj_key_inputs;

/* PTXJIT_ERR_OUT_OF_MEMORY when the hasher cannot be made: never a key of nothing, which
 * two different requests would share. */
ptxjit_status pj_cache_key(pj_hash128 *out, const pj_key_inputs *inputs);

#endif

/* key.h — the cache key: a hash of everything that can change a kernel's code. */
#ifndef PTXJIT_CACHE_KEY_H
#define PTXJIT_CACHE_KEY_H

#include "internal.h"

/* Bumped when the key's inputs or their encoding change. */
#define PJ_KEY_SCHEMA_VERSION 1

typedef struct {
    const char *family;
    const char *canonical_params;
    const char *template_source; /* the full text, not its name */
    const char *backend;
    const char *compiler_version;
    const char *arch;
    const char *const *options;
    int option_count;
    int specializer_version;
} pj_key_inputs;

/* PTXJIT_ERR_OUT_OF_MEMORY when the hasher cannot be made: never a key of nothing, which
 * two different requests would share. */
ptxjit_status pj_cache_key(pj_hash128 *out, const pj_key_inputs *inputs);

#endif

/* key.c — the cache key: each input hashed as a named, length-prefixed field. */
#include <stdio.h>

#include "cache/key.h"

ptxjit_status cache_key(pj_hash128 *out, const pj_key_inputs *in)
{
    pj_hasher *hasher = hasher_new();
    if (!hasher)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    char number[32];
    snprintf(number, sizeof number, "%d", PJ_KEY_SCHEMA_VERSION);
    hasher_field_str(hasher, "key-schema", number);
    hasher_field_str(hasher, "family", in->family);
    hasher_field_str(hasher, "params", in->canonical_params);
    hasher_field_str(hasher, "template", in->template_source);
    hasher_field_str(hasher, "backend", in->backend);
    hasher_field_str(hasher, "compiler", in->compiler_version);
    hasher_field_str(hasher, "arch", in->arch);
    snprintf(number, sizeof number, "%d", in->specializer_version);
    hasher_field_str(hasher, "specializer", number);
    for (int i = 0; i < in->option_count; i++)
        hasher_field_str(hasher, "option", in->options[i]);
    *out = hasher_digest(hasher);
    hasher_free(hasher);
    return PTXJIT_OK;
}

/* key.c — the cache key: each input hashed as a named, length-prefixed field. */
#include <stdio.h>
#include <string.h>

#include "request/key.h"

ptxjit_status pj_cache_key(pj_hash128 *out, const pj_key_inputs *in)
{
    pj_hasher *hasher = pj_hasher_new();
    if (!hasher)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    char number[24];
    pj_hasher_field_str(hasher, "key-schema", pj_format_int(number, PJ_KEY_SCHEMA_VERSION));
    pj_hasher_field_str(hasher, "family", in->family);
    pj_hasher_field_str(hasher, "params", in->canonical_params);
    pj_hash128 text = in->template_hash ? *in->template_hash
                                        : pj_hash(in->template_source, strlen(in->template_source));
    uint64_t template_digest[2] = {text.low, text.high};
    pj_hasher_field(hasher, "template", template_digest, sizeof template_digest);
    pj_hasher_field_str(hasher, "backend", in->backend);
    pj_hasher_field_str(hasher, "compiler", in->compiler_version);
    pj_hasher_field_str(hasher, "arch", in->arch);
    pj_hasher_field_str(hasher, "specializer", pj_format_int(number, in->specializer_version));
    for (int i = 0; i < in->option_count; i++)
        pj_hasher_field_str(hasher, "option", in->options[i]);
    for (int i = 0; in->includes && i < in->includes->count; i++) {
        const pj_include_file *file = &in->includes->files[i];
        uint64_t content[2] = {file->content.low, file->content.high};
        pj_hasher_field_str(hasher, "include", file->path);
        pj_hasher_field(hasher, "include-content", content, sizeof content);
    }
    *out = pj_hasher_digest(hasher);
    pj_hasher_free(hasher);
    return PTXJIT_OK;
}

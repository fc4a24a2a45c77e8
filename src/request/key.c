/* key.c — the cache key: each input hashed as a named, length-prefixed field. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "request/key.h"

static void line(pj_strbuf *sb, const char *name, const char *value, const char *more)
{
    pj_sb_append(sb, name);
    pj_sb_append(sb, " ");
    pj_sb_append(sb, value);
    if (more) {
        pj_sb_append(sb, " ");
        pj_sb_append(sb, more);
    }
    pj_sb_append(sb, "\n");
}

/* The inputs as lines, in the key's order (no printf: this runs on every disk hit). */
static char *components(const pj_key_inputs *in, const pj_hash128 *template_hash)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    char number[24], hex[33];
    line(&sb, "family", in->family, NULL);
    line(&sb, "params", in->canonical_params, NULL);
    pj_hash_hex(template_hash, hex);
    line(&sb, "template", hex, NULL);
    line(&sb, "backend", in->backend, NULL);
    line(&sb, "compiler", in->compiler_version, NULL);
    line(&sb, "arch", in->arch, NULL);
    line(&sb, "specializer", pj_format_int(number, in->specializer_version), NULL);
    for (int i = 0; i < in->option_count; i++)
        line(&sb, "option", in->options[i], NULL);
    for (int i = 0; in->includes && i < in->includes->count; i++) {
        pj_hash_hex(&in->includes->files[i].content, hex);
        line(&sb, "header", in->includes->files[i].path, hex);
    }
    return pj_sb_take(&sb);
}

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
    if (in->components) {
        free(*in->components);
        *in->components = components(in, &text);
        if (!*in->components)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return PTXJIT_OK;
}

/* specialize.c — writes the prelude that turns a template's parameters into compile-time
 * constants: ints and enums as enumerators, dtypes as type aliases. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "half_storage.h"
#include "specialize.h"

static void append_upper(pj_strbuf *sb, const char *name)
{
    for (; *name; name++) {
        char c = (char)toupper((unsigned char)*name);
        pj_sb_append_n(sb, &c, 1);
    }
}

/* Enumerators, not constexpr variables: NVRTC would emit each variable as a PTX global. */
static void define_param(pj_strbuf *sb, const pj_param *param, int64_t value)
{
    switch (param->kind) {
    case PJ_PARAM_INT:
        pj_sb_append(sb, "enum : long long { ");
        append_upper(sb, param->name);
        pj_sb_appendf(sb, " = %lld };\n", (long long)value);
        break;
    case PJ_PARAM_ENUM:
        pj_sb_append(sb, "enum : int { ");
        for (int v = 0; v < param->value_count; v++) {
            append_upper(sb, param->name);
            pj_sb_append(sb, "_");
            append_upper(sb, param->values[v]);
            pj_sb_appendf(sb, " = %d, ", v);
        }
        append_upper(sb, param->name);
        pj_sb_append(sb, " = ");
        append_upper(sb, param->name);
        pj_sb_append(sb, "_");
        append_upper(sb, param->values[value]);
        pj_sb_append(sb, " };\n");
        break;
    case PJ_PARAM_DTYPE:
        /* The type, and which of the listed types it is (NAME_F32 = 0, ..., NAME_ID = the
         * choice), for `if constexpr`; outside a C++ template the branch not taken is still
         * compiled, so it may name only what is declared (docs/TEMPLATES.md). */
        pj_sb_append(sb, "using ");
        append_upper(sb, param->name);
        pj_sb_appendf(sb, " = %s;\n", pj_dtype_ctype((pj_dtype)param->dtypes[value]));
        pj_sb_append(sb, "enum : int { ");
        for (int v = 0; v < param->value_count; v++) {
            append_upper(sb, param->name);
            pj_sb_append(sb, "_");
            append_upper(sb, param->values[v]);
            pj_sb_appendf(sb, " = %d, ", v);
        }
        append_upper(sb, param->name);
        pj_sb_appendf(sb, "_ID = %lld };\n", (long long)value);
        break;
    }
}

/* Half types need their headers; NVRTC has no built-in copies (toolkit include path). Only
 * the chosen types', each once (matmul's dtype and out are often the same type): parsing
 * cuda_bf16.h would add about half again to a small f32 compile. A template that declares
 * `nvrtc half_storage` gets 2-byte storage types with the headers' conversions instead
 * (half_storage.h), and NVRTC parses neither header. */
static void include_headers(pj_strbuf *sb, const pj_request *request)
{
    const pj_schema *schema = request->schema;
    int f16 = 0, bf16 = 0;
    for (int i = 0; i < schema->param_count; i++) {
        const pj_param *param = &schema->params[i];
        if (param->kind != PJ_PARAM_DTYPE)
            continue;
        pj_dtype dtype = (pj_dtype)param->dtypes[request->values[i]];
        f16 |= dtype == PJ_DTYPE_f16;
        bf16 |= dtype == PJ_DTYPE_bf16;
    }
    if (f16)
        pj_sb_append(sb, schema->nvrtc_half_storage ? PJ_F16_STORAGE_PRELUDE
                                                    : "#include <cuda_fp16.h>\n");
    if (bf16)
        pj_sb_append(sb, schema->nvrtc_half_storage ? PJ_BF16_STORAGE_PRELUDE
                                                    : "#include <cuda_bf16.h>\n");
}

/* text as the inside of a C string literal, and so safe in a // comment too: a control
 * character (a file name may hold a newline or a carriage return, which would end the
 * comment and make the rest of the name code) is an octal escape, a backslash doubled (one
 * at the end would splice the next line into the comment). */
static void append_escaped(pj_strbuf *sb, const char *text)
{
    for (; *text; text++) {
        unsigned char c = (unsigned char)*text;
        if (c < 0x20 || c == 0x7f)
            pj_sb_appendf(sb, "\\%03o", c);
        else if (c == '"' || c == '\\')
            pj_sb_appendf(sb, "\\%c", c);
        else
            pj_sb_append_n(sb, text, 1);
    }
}

char *pj_specialize_source(const pj_request *request, const char *canonical)
{
    const pj_schema *schema = request->schema;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "// ptxjit: %s specialized for \"%s\" from ", schema->family, canonical);
    append_escaped(&sb, schema->origin);
    pj_sb_append(&sb, "\n");
    /* The compiler's messages cite the prelude by this name and its lines as they are in
     * the generated source (this line is line 2)... */
    pj_sb_appendf(&sb, "#line 3 \"%s\"\n", PJ_PRELUDE_NAME);
    include_headers(&sb, request);
    /* Parameters that do not apply keep their defaults, so the template always compiles;
     * they are left out of the canonical form and cannot change the code. */
    for (int i = 0; i < schema->param_count; i++)
        define_param(&sb, &schema->params[i], request->values[i]);
    pj_sb_append(&sb, "// ---- template ----\n");
    /* ... and the template by its origin and its own lines. */
    pj_sb_append(&sb, "#line 1 \"");
    append_escaped(&sb, schema->origin);
    pj_sb_append(&sb, "\"\n");
    pj_sb_append(&sb, schema->source);
    return pj_sb_take(&sb);
}

char *pj_specialize_excerpt(const char *source, int first, int last)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    int line = 1;
    for (const char *s = source; *s && line <= last; line++) {
        const char *end = strchr(s, '\n');
        size_t length = end ? (size_t)(end - s) : strlen(s);
        if (line >= first) {
            pj_sb_appendf(&sb, "%5d | ", line);
            pj_sb_append_n(&sb, s, length);
            pj_sb_append(&sb, "\n");
        }
        s = end ? end + 1 : s + length;
    }
    return pj_sb_take(&sb);
}

/* ptx_params.c — reads an entry's parameter list out of PTX: `.param [.align N] .type
 * [.ptr [.space] [.align N]] name[dims]`, separated by commas. An `.align` before the type is
 * the parameter's own alignment; one after `.ptr` is the alignment of the memory pointed to
 * (PTX ISA, "Kernel Function Parameter Attributes") and changes nothing here. Without an
 * `.align` a parameter is aligned to its type's size. The offsets follow from the alignments,
 * in order, from wherever the buffer starts (pj_ptx_entry_layout). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ptx_params.h"

/* Larger than any parameter buffer a driver accepts (32,764 bytes since CUDA 12.1): a size
 * past it is a misreading, and keeping sizes small keeps the arithmetic from overflowing. */
#define PJ_PTX_PARAM_MAX_BYTES ((size_t)1 << 20)

typedef struct {
    const char *text;
    size_t length; /* 0: the end of the PTX */
} token;

static int word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_' || c == '$' || c == '.' || c == '%';
}

/* Blanks, comments and quoted strings are not tokens: a `.file` path may hold a comment's
 * opening characters. */
static const char *skip_blanks(const char *p)
{
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == '\f' || *p == '\v')
            p++;
        if (p[0] == '/' && p[1] == '/') {
            p += strcspn(p, "\n");
        } else if (p[0] == '/' && p[1] == '*') {
            const char *end = strstr(p + 2, "*/");
            p = end ? end + 2 : p + strlen(p);
        } else if (p[0] == '"') {
            const char *end = strchr(p + 1, '"');
            p = end ? end + 1 : p + strlen(p);
        } else {
            return p;
        }
    }
}

static token next_token(const char **at)
{
    const char *p = skip_blanks(*at);
    token t = {p, 0};
    if (*p)
        for (t.length = 1; word_char(*p) && word_char(p[t.length]);)
            t.length++;
    *at = p + t.length;
    return t;
}

static int is(token t, const char *word)
{
    return t.length == strlen(word) && memcmp(t.text, word, t.length) == 0;
}

/* A decimal number that is the whole token, at most PJ_PTX_PARAM_MAX_BYTES. */
static int number(token t, size_t *out)
{
    size_t value = 0;
    if (t.length == 0)
        return 0;
    for (size_t i = 0; i < t.length; i++) {
        if (t.text[i] < '0' || t.text[i] > '9')
            return 0;
        value = value * 10 + (size_t)(t.text[i] - '0');
        if (value > PJ_PTX_PARAM_MAX_BYTES)
            return 0;
    }
    *out = value;
    return 1;
}

/* Bytes of a scalar type; 0 if t is none. Texture, sampler and surface references are 64-bit
 * handles. */
static size_t type_bytes(token t)
{
    static const struct {
        const char *name;
        size_t bytes;
    } types[] = {{".b8", 1},     {".s8", 1},       {".u8", 1},         {".b16", 2},
                 {".s16", 2},    {".u16", 2},      {".f16", 2},        {".bf16", 2},
                 {".b32", 4},    {".s32", 4},      {".u32", 4},        {".f32", 4},
                 {".f16x2", 4},  {".bf16x2", 4},   {".b64", 8},        {".s64", 8},
                 {".u64", 8},    {".f64", 8},      {".b128", 16},      {".texref", 8},
                 {".samplerref", 8}, {".surfref", 8}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(types); i++)
        if (is(t, types[i].name))
            return types[i].bytes;
    return 0;
}

static int power_of_two(size_t n)
{
    return n && !(n & (n - 1));
}

/* What one declaration says, before its place in the buffer is known. */
typedef struct {
    size_t element, count, align; /* align 0: the type's own */
    int vector, has_type, pointer;
    char type[32]; /* room for ".align N " before it in pj_ptx_param's */
} declaration;

static void note_type(declaration *d, token t)
{
    size_t used = strlen(d->type);
    snprintf(d->type + used, sizeof d->type - used, "%s%.*s", used ? " " : "", (int)t.length,
             t.text);
}

/* One token of a declaration before its name; 0 when the token has no place there. */
static int qualifier(declaration *d, const char **at, token t)
{
    size_t n;
    if (is(t, ".align")) {
        if (!number(next_token(at), &n) || !power_of_two(n))
            return 0;
        if (!d->pointer) /* after .ptr it is the pointee's alignment */
            d->align = n;
        return 1;
    }
    if (is(t, ".ptr"))
        return d->has_type && !d->pointer ? (d->pointer = 1) : 0;
    if (is(t, ".global") || is(t, ".const") || is(t, ".local") || is(t, ".shared"))
        return d->pointer;
    if (!d->has_type && (is(t, ".v2") || is(t, ".v4") || is(t, ".v8"))) {
        d->vector = t.text[2] - '0';
        note_type(d, t);
        return 1;
    }
    if (!d->has_type && (d->element = type_bytes(t)) != 0) {
        d->has_type = 1;
        note_type(d, t);
        return 1;
    }
    return 0;
}

/* [N][M]...: the element count; 0 when malformed or too large. */
static size_t dimensions(const char **at, token *t, char *type, size_t type_size)
{
    size_t count = 1, n;
    while (is(*t, "[")) {
        token size = next_token(at);
        if (!number(size, &n) || n == 0 || !is(next_token(at), "]") ||
            n > PJ_PTX_PARAM_MAX_BYTES / count)
            return 0;
        count *= n;
        size_t used = strlen(type);
        snprintf(type + used, type_size - used, "[%zu]", n);
        *t = next_token(at);
    }
    return count;
}

/* The declaration after `.param`, up to and including its `,` or `)` (in *last). */
static int read_declaration(declaration *d, const char **at, token *last)
{
    memset(d, 0, sizeof *d);
    token t = next_token(at);
    while (t.length && t.text[0] == '.') {
        if (!qualifier(d, at, t))
            return 0;
        t = next_token(at);
    }
    if (!d->has_type || !t.length || !word_char(t.text[0]) || t.text[0] == '.')
        return 0;
    t = next_token(at); /* past the name */
    d->count = dimensions(at, &t, d->type, sizeof d->type);
    *last = t;
    return d->count && (is(t, ",") || is(t, ")"));
}

/* Places d after *offset; 0 when it would not fit the bound. */
static int place(pj_ptx_param *out, const declaration *d, size_t *offset)
{
    size_t element = d->element * (size_t)(d->vector ? d->vector : 1);
    size_t align = d->align ? d->align : element;
    if (element > PJ_PTX_PARAM_MAX_BYTES / d->count)
        return 0;
    size_t size = element * d->count, start = (*offset + align - 1) / align * align;
    if (start + size > PJ_PTX_PARAM_MAX_BYTES)
        return 0;
    out->offset = start;
    out->size = size;
    out->align = align;
    if (d->align)
        snprintf(out->type, sizeof out->type, ".align %zu %s", d->align, d->type);
    else
        snprintf(out->type, sizeof out->type, "%s", d->type);
    *offset = start + size;
    return 1;
}

/* The message quotes the declaration up to its end (or the line's). */
static ptxjit_status unreadable(pj_ptx_entry *out, const char *name, int index,
                                const char *start)
{
    pj_ptx_entry_free(out);
    size_t end = strcspn(start, ",)\n");
    int length = (int)(end < 120 ? end : 120);
    return pj_error(PTXJIT_ERR_UNSUPPORTED,
                    "entry %s: parameter %d is declared as '%.*s', which ptxjit does not read; "
                    "launch it with ptxjit_launch, which does not check arguments",
                    name, index, length, start);
}

static ptxjit_status add_param(pj_ptx_entry *out, const pj_ptx_param *param)
{
    pj_ptx_param *grown = realloc(out->params, (size_t)(out->count + 1) * sizeof *grown);
    if (!grown) {
        pj_ptx_entry_free(out);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    out->params = grown;
    out->params[out->count++] = *param;
    return PTXJIT_OK;
}

/* The list after `.entry NAME`: `( .param ..., .param ... )`, `()`, or none at all. */
static ptxjit_status parse_list(pj_ptx_entry *out, const char *at, const char *name)
{
    if (!is(next_token(&at), "("))
        return PTXJIT_OK; /* `.entry NAME {` or a performance directive: no parameters */
    size_t offset = 0;
    token t = next_token(&at);
    if (is(t, ")"))
        return PTXJIT_OK;
    for (;;) {
        const char *start = t.text;
        declaration d;
        pj_ptx_param param;
        memset(&param, 0, sizeof param);
        if (!is(t, ".param") || !read_declaration(&d, &at, &t) || !place(&param, &d, &offset))
            return unreadable(out, name, out->count, start);
        ptxjit_status status = add_param(out, &param);
        if (status != PTXJIT_OK)
            return status;
        if (is(t, ")"))
            return PTXJIT_OK;
        t = next_token(&at);
    }
}

ptxjit_status pj_ptx_entry_params(pj_ptx_entry *out, const char *ptx, const char *name)
{
    memset(out, 0, sizeof *out);
    if (!ptx || !name)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "PTX and entry name must be given");
    const char *at = ptx;
    pj_strbuf seen;
    pj_sb_init(&seen);
    for (token t = next_token(&at); t.length; t = next_token(&at)) {
        if (!is(t, ".entry"))
            continue;
        const char *after = at;
        token entry = next_token(&after);
        if (is(entry, name)) {
            pj_sb_free(&seen);
            return parse_list(out, after, name);
        }
        pj_sb_appendf(&seen, "%s%.*s", seen.length ? ", " : "", (int)entry.length, entry.text);
    }
    ptxjit_status status = pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                                    "the PTX has no entry '%s'; it has: %s; name one of those",
                                    name, seen.data && seen.length ? seen.data : "none");
    pj_sb_free(&seen);
    return status;
}

void pj_ptx_entry_layout(pj_ptx_entry *entry, size_t base)
{
    size_t end = base;
    for (int i = 0; i < entry->count; i++) {
        pj_ptx_param *param = &entry->params[i];
        size_t start = (end + param->align - 1) / param->align * param->align;
        param->offset = start - base;
        end = start + param->size;
    }
}

void pj_ptx_entry_free(pj_ptx_entry *entry)
{
    if (!entry)
        return;
    free(entry->params);
    entry->params = NULL;
    entry->count = 0;
}

void pj_ptx_entries_free(pj_ptx_entry *entries, int count)
{
    for (int i = 0; entries && i < count; i++)
        pj_ptx_entry_free(&entries[i]);
    free(entries);
}

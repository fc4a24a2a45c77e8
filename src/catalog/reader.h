/* reader.h — how a family's decoder (src/families/NAME/shape.h) reads a request: parameter by
 * parameter, through a reader that each side makes of its own request (the library of a
 * pj_request: catalog/family.h, pj_request_reader; the LLVM plugin of a pj_llvm_request:
 * plugin/gen.h, gen_reader), so that one decoder serves the host op and the generator alike.
 * Header-only and free of library state: the plugin links none of the library. */
#ifndef PTXJIT_CATALOG_READER_H
#define PTXJIT_CATALOG_READER_H

#include <string.h>

#include "params/schema.h"

typedef struct {
    const void *request;
    /* 1 with the value (an integer, or an enum's or dtype's index) and its name (at least for
     * an enum or a dtype: "tma", "f32"; NULL allowed for an integer); 0 when the template has
     * no parameter of that name. */
    int (*get)(const void *request, const char *name, long long *value, const char **text);
} pj_param_reader;

/* One parameter as a decoder read it. */
typedef struct {
    const char *name;
    int present;      /* 0: the template lacks it (value 0, text "") */
    long long value;
    const char *text; /* an enum's or dtype's value name; "" otherwise */
} pj_param_value;

static inline pj_param_value pj_read(const pj_param_reader *reader, const char *name)
{
    pj_param_value v = {name, 0, 0, NULL};
    v.present = reader->get(reader->request, name, &v.value, &v.text);
    if (!v.present)
        v.value = 0;
    if (!v.present || !v.text)
        v.text = "";
    return v;
}

/* Whether the template has the parameter and its value is named text. */
static inline int pj_read_is(const pj_param_value *v, const char *text)
{
    return v->present && strcmp(v->text, text) == 0;
}

/* The name of the first of count values that the template lacks, or NULL. */
static inline const char *pj_read_lacking(const pj_param_value *const *values, int count)
{
    for (int i = 0; i < count; i++)
        if (!values[i]->present)
            return values[i]->name;
    return NULL;
}

/* The dtype a parameter's value names, or -1 (params/dtype.h's list). */
static inline int pj_read_dtype(const pj_param_value *v) { return pj_dtype_from_name(v->text); }

/* What a decoder made of a request: PJ_DECODED, or why not with the name it is about. */
typedef enum {
    PJ_DECODED,
    PJ_DECODE_LACKS,   /* the template has no parameter name (a user template of the family's
                          name that the op cannot drive) */
    PJ_DECODE_VARIANT, /* name: a variant the family does not know */
    PJ_DECODE_DTYPE    /* name: a dtype the family does not take */
} pj_decode_code;

typedef struct {
    pj_decode_code code;
    const char *name;
} pj_decode_result;

static inline pj_decode_result pj_decoded(pj_decode_code code, const char *name)
{
    pj_decode_result result = {code, name};
    return result;
}

#define PJ_DECODE_OK pj_decoded(PJ_DECODED, NULL)

#endif

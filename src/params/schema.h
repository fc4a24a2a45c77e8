/* schema.h — kernel families as declared by their templates: the parser of a template's
 * "//@ptxjit" directives into its schema, and requests validated against a schema
 * (params.c). It includes the element types, the schema's types and the expression
 * language, so that a user of schemas needs no other header of params/. */
#ifndef PTXJIT_PARAMS_SCHEMA_H
#define PTXJIT_PARAMS_SCHEMA_H

#include <string.h>

#include "params/dtype.h"
#include "params/expr.h"
#include "params/param.h"

/* A template's origin says where it came from by its prefix: built into the library
 * ("built-in:NAME.cu"), added from memory ("memory:NAME"); any other origin is a file's path. */
#define PJ_ORIGIN_BUILTIN "built-in:"
#define PJ_ORIGIN_MEMORY "memory:"

static inline int pj_origin_is_builtin(const char *origin)
{
    return strncmp(origin, PJ_ORIGIN_BUILTIN, sizeof PJ_ORIGIN_BUILTIN - 1) == 0;
}

static inline int pj_origin_is_memory(const char *origin)
{
    return strncmp(origin, PJ_ORIGIN_MEMORY, sizeof PJ_ORIGIN_MEMORY - 1) == 0;
}

/* The levels of `nvrtc fast_compile=`: X(name), in NVRTC's -Ofc order; a value is its
 * position + 1 (0: the word not given). */
#define PJ_FAST_COMPILE_LEVELS(X) X(min) X(mid) X(max)

/* The directive's words on one line of a template [line, end): past "//@ptxjit" and the
 * blanks (spaces or tabs) after it, the indentation before it allowed; NULL when the line is
 * no directive. *malformed: the line starts with //@ptxjit but is not spelled as one (no
 * blank after the mark, or nothing after it). */
const char *pj_directive_words(const char *line, const char *end, int *malformed);

/* Parses the "//@ptxjit ..." directives of a template. origin names it in messages.
 * PTXJIT_ERR_TEMPLATE with file:line and the problem on failure. */
ptxjit_status pj_schema_parse(pj_schema **out, const char *source, const char *origin);
void pj_schema_free(pj_schema *schema);
/* A readable description: parameters with types, defaults, docs; constraints; entries. */
char *pj_schema_describe(const pj_schema *schema);

/* ---- params.c: requests ---- */
typedef struct {
    const pj_schema *schema;
    int64_t *values;   /* one per schema parameter, defaults filled; then the target's sm */
    int *applies;      /* 1 where the parameter's `when` holds */
} pj_request;

/* Parses "key=value key=value" (spaces or commas between) against schema for a target of
 * compute capability sm (90 for sm_90a; `sm` in expressions): unknown keys,
 * duplicates, bad values, parameters that do not apply, and violated constraints fail with
 * PTXJIT_ERR_PARAM and a message naming the family, the parameter and what is allowed. */
ptxjit_status pj_request_parse(pj_request *out, const pj_schema *schema, const char *text, int sm);
/* The same for a point of a tuning space: a parameter the text names where it does not apply
 * (its `when` fails for the point) is left out, as if not named, instead of refused. */
ptxjit_status pj_request_parse_point(pj_request *out, const pj_schema *schema, const char *text,
                                     int sm);
void pj_request_free(pj_request *request);
/* The canonical form: applicable parameters only, sorted by name, "a=1 b=x". Caller frees. */
char *pj_request_canonical(const pj_request *request);
/* A parameter's value by name (an enum's index); 0 if the schema has no such parameter. */
int64_t pj_request_value(const pj_request *request, const char *name);
/* The value's name for enum and dtype parameters, the number as text otherwise. */
const char *pj_request_value_name(const pj_request *request, const char *name, char buf[32]);

#endif

/* schema.h — kernel families as declared by their templates: typed parameters, constraints
 * between them, entry points; and requests validated against them. */
#ifndef PTXJIT_PARAMS_SCHEMA_H
#define PTXJIT_PARAMS_SCHEMA_H

#include <string.h>

#include "internal.h"

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

/* Element types a template may take, declared once: X(name, C++ type, bytes). */
#define PJ_DTYPE_LIST(X)                  \
    X(i32, "int", 4)                      \
    X(u32, "unsigned int", 4)             \
    X(i64, "long long", 8)                \
    X(f16, "__half", 2)                   \
    X(bf16, "__nv_bfloat16", 2)           \
    X(f32, "float", 4)                    \
    X(f64, "double", 8)

typedef enum {
#define PJ_DTYPE_ENUM(name, ctype, bytes) PJ_DTYPE_##name,
    PJ_DTYPE_LIST(PJ_DTYPE_ENUM)
#undef PJ_DTYPE_ENUM
    PJ_DTYPE_COUNT
} pj_dtype;

int pj_dtype_from_name(const char *name); /* -1 if unknown */
/* 1, 2, 4, ...; never zero or negative (and no overflow on INT64_MIN). */
static inline int pj_is_power_of_two(int64_t value)
{
    return value > 0 && (value & (value - 1)) == 0;
}
const char *pj_dtype_name(pj_dtype dtype);
const char *pj_dtype_ctype(pj_dtype dtype);
int pj_dtype_bytes(pj_dtype dtype);

typedef struct pj_expr pj_expr;
struct pj_schema;

typedef enum { PJ_PARAM_INT, PJ_PARAM_ENUM, PJ_PARAM_DTYPE } pj_param_kind;

typedef struct {
    char *name;
    pj_param_kind kind;
    int64_t min, max;  /* PJ_PARAM_INT */
    int pow2;          /* PJ_PARAM_INT: must be a power of two */
    char **values;     /* PJ_PARAM_ENUM and PJ_PARAM_DTYPE: allowed names */
    int *dtypes;       /* PJ_PARAM_DTYPE: the pj_dtype of each value */
    int value_count;
    int64_t default_value; /* the integer, or the index into values */
    char *default_text;    /* default_value as a request writes it: "512", "vectorized" */
    /* default_if="EXPR => VALUE" cases, tried in order before default_value; EXPR may name
     * only parameters declared before this one (their values are final by then). */
    int case_count;
    char **case_text;
    pj_expr **case_when;
    int64_t *case_value;
    char **case_value_text; /* each case's value as text, like default_text */
    char *doc;
    char *when_text;   /* applies only when this holds; NULL: always */
    pj_expr *when;
} pj_param;

typedef struct {
    char *text;
    pj_expr *expr;
    char *message;
} pj_constraint;

/* `//@ptxjit tune PARAM VALUES`: the values a tuning tries for one parameter (tune/space.h
 * reads VALUES: "128,256,512", "vectorized,batched", or an int range "64..1024"). */
typedef struct {
    char *param_name;
    int param;     /* index into params, once all are declared */
    char *values;  /* as written */
    int line;      /* in the template, for messages */
} pj_tune_line;

typedef struct pj_schema {
    char *family;
    char *doc;
    char *origin;      /* where the template came from: a path or "built-in:NAME.cu" */
    char *source;      /* the template's full text */
    pj_hash128 source_hash; /* XXH3-128 of source: what the cache key holds of it */
    pj_param *params;
    int param_count;
    pj_constraint *constraints;
    int constraint_count;
    char **entries;
    int entry_count;
    pj_tune_line *tunes; /* the template's tuning space, one line per tuned parameter */
    int tune_count;
    /* `//@ptxjit nvrtc ...`: what the template promises NVRTC may leave out (the prelude's
     * half types as storage types instead of the toolkit's headers; NVRTC's -minimal). */
    int nvrtc_half_storage;
    int nvrtc_minimal;
    /* `nvrtc fast_compile=LEVEL`: NVRTC's -Ofc=LEVEL (0: none; else the level's position in
     * PJ_FAST_COMPILE_LEVELS + 1), for a template whose kernels were measured to run as fast
     * compiled so (docs/TEMPLATES.md). */
    int nvrtc_fast_compile;
} pj_schema;

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
int pj_schema_param_index(const pj_schema *schema, const char *name); /* -1 if none */
/* A readable description: parameters with types, defaults, docs; constraints; entries. */
char *pj_schema_describe(const pj_schema *schema);
/* The allowed values of one parameter, as error messages name them. */
void pj_schema_describe_allowed(pj_strbuf *sb, const pj_param *param);

/* ---- expr.c: the constraint language ----
 * Integers, parameter names (their value; an enum's or dtype's index), enum value names,
 * `sm` (the target's compute capability), bytes(dtype), ( ) ! * / % + - < <= > >= == != &&
 * ||, with C precedence. */
ptxjit_status pj_expr_parse(pj_expr **out, const char *text, const pj_schema *schema);
/* 1 when expr reads a parameter with index in [first, last). */
int pj_expr_reads_params(const pj_expr *expr, int first, int last);
/* values: one per schema parameter. Arithmetic wraps modulo 2^64; division by zero
 * evaluates to 0. */
int64_t pj_expr_eval(const pj_expr *expr, const int64_t *values, const pj_schema *schema);
void pj_expr_free(pj_expr *expr);

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

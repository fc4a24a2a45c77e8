/* param.h — what a template declares, as data: its parameters (typed, with defaults and
 * `when` clauses), constraints, tune lines and entries in one schema; and the few questions
 * every reader of a parameter asks: which one a name is, what values it allows. Below the
 * expression language, the tune values and the schema parser, which all read these types. */
#ifndef PTXJIT_PARAMS_PARAM_H
#define PTXJIT_PARAMS_PARAM_H

#include "internal.h"

typedef struct pj_expr pj_expr; /* a parsed expression (expr.h) */

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
    int line;          /* of its declaration in the template, for messages */
} pj_param;

typedef struct {
    char *text;
    pj_expr *expr;
    char *message;
    int line; /* in the template, for messages */
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

/* 1, 2, 4, ...; never zero or negative (and no overflow on INT64_MIN). */
static inline int pj_is_power_of_two(int64_t value)
{
    return value > 0 && (value & (value - 1)) == 0;
}

int pj_schema_param_index(const pj_schema *schema, const char *name); /* -1 if none */
/* The index of text among an enum or dtype parameter's allowed names; -1 if none. */
int pj_param_value_index(const pj_param *param, const char *text);
/* The allowed values of one parameter, as error messages name them. */
void pj_schema_describe_allowed(pj_strbuf *sb, const pj_param *param);

#endif

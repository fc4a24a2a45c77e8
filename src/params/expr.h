/* expr.h — the constraint language of templates (constraints, `when` and default_if
 * clauses): integers, parameter names (their value; an enum's or dtype's index), enum value
 * names, `sm` (the target's compute capability), bytes(dtype), ( ) ! * / % + - < <= > >= ==
 * != && ||, with C precedence. Parsed once per schema into a tree, evaluated per request. */
#ifndef PTXJIT_PARAMS_EXPR_H
#define PTXJIT_PARAMS_EXPR_H

#include "params/param.h"

/* Names resolve against schema's parameters and their values. */
ptxjit_status pj_expr_parse(pj_expr **out, const char *text, const pj_schema *schema);
/* 1 when expr reads a parameter with index in [first, last). */
int pj_expr_reads_params(const pj_expr *expr, int first, int last);
/* values: one per schema parameter. Arithmetic wraps modulo 2^64; division by zero
 * evaluates to 0. */
int64_t pj_expr_eval(const pj_expr *expr, const int64_t *values, const pj_schema *schema);
void pj_expr_free(pj_expr *expr);

#endif

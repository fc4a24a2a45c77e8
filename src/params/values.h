/* values.h — the values of one `//@ptxjit tune PARAM VALUES` line, as a request stores them. */
#ifndef PTXJIT_PARAMS_VALUES_H
#define PTXJIT_PARAMS_VALUES_H

#include "params/param.h"

/* One parameter takes at most this many values. */
#define PJ_TUNE_MAX_VALUES 64

/* VALUES for param: "a,b,c" (each allowed by the parameter's type), or for an int "LO..HI"
 * (with pow2: the powers of two in the range; else every integer, at most
 * PJ_TUNE_MAX_VALUES). *out holds the values as a request stores them (an int, or an enum's or
 * dtype's index), caller frees. PTXJIT_ERR_PARAM naming the parameter, the value and what is
 * allowed. */
ptxjit_status pj_tune_values_parse(int64_t **out, int *count, const pj_param *param,
                                   const char *text);

#endif

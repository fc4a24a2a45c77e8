/* problem.h — a tuning problem of a built-in family: its words ("rows=16384 cols=2^14", each a
 * size the family names) read into sizes, and the canonical text of sizes, which a record's
 * key holds and PARAM=auto looks records up by. */
#ifndef PTXJIT_RECORDS_PROBLEM_H
#define PTXJIT_RECORDS_PROBLEM_H

#include "internal.h"

/* The most words a problem has. */
#define PJ_TUNE_MAX_SIZES 8

/* The problem's words: each of names exactly once, a count from 1 to PJ_COUNT_MAX (count.h;
 * 2^K and 2^K+C accepted), nothing else; values in the order of names. PTXJIT_ERR_PARAM
 * naming what the family takes. */
ptxjit_status pj_tune_problem_words(uint64_t *values, const char *text, const char *family,
                                    const char *const *names);
/* "rows=16384 cols=1024": names with their values, in order. Caller frees; NULL when out of
 * memory. */
char *pj_tune_problem_text(const char *const *names, const uint64_t *values);
/* text's words made canonical (pj_tune_problem_words, then pj_tune_problem_text), and its
 * sizes. Caller frees *out. */
ptxjit_status pj_tune_problem_canonical(char **out, uint64_t *values, const char *text,
                                        const char *family, const char *const *names);

#endif

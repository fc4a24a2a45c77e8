/* memo.h — a context's copies of tuning records and of its auto resolutions: its own lock,
 * so that it needs nothing of the context that keeps it (request/auto.c: pj_tune_memo_of). */
#ifndef PTXJIT_RECORDS_MEMO_H
#define PTXJIT_RECORDS_MEMO_H

#include "records/record.h"

typedef struct pj_tune_memo pj_tune_memo;
/* NULL when out of memory: every call below takes a NULL memo as an empty one that keeps
 * nothing (the memo is only a shortcut). */
pj_tune_memo *pj_tune_memo_new(void);
void pj_tune_memo_free(pj_tune_memo *memo);
/* A copy of key's record; 1 when found (out filled). */
int pj_tune_memo_find(pj_tune_memo *memo, const char *key, pj_tune_record *out);
/* A copy of record under key, in place of one there; every resolution is forgotten. */
void pj_tune_memo_put(pj_tune_memo *memo, const char *key, const pj_tune_record *record);
void pj_tune_memo_clear(pj_tune_memo *memo);
/* (family, params, problem) → the params auto resolved to; NULL when not known. Caller frees. */
char *pj_tune_memo_resolved(pj_tune_memo *memo, const char *family, const char *params,
                            const char *problem);
void pj_tune_memo_resolve(pj_tune_memo *memo, const char *family, const char *params,
                          const char *problem, const char *resolved);

#endif

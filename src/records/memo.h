/* memo.h — the context's copies of tuning records and auto resolutions. */
#ifndef PTXJIT_RECORDS_MEMO_H
#define PTXJIT_RECORDS_MEMO_H

#include "records/record.h"
#include "request/context.h"

typedef struct pj_tune_memo pj_tune_memo;
void pj_tune_memo_free(pj_tune_memo *memo);
/* A copy of key's record kept by the context; 1 when found (out filled). Under context->lock. */
int pj_tune_memo_find(ptxjit_context *context, const char *key, pj_tune_record *out);
void pj_tune_memo_put(ptxjit_context *context, const char *key, const pj_tune_record *record);
void pj_tune_memo_clear(ptxjit_context *context);
/* (family, params, problem) → the params auto resolved to; NULL when not known. Caller frees. */
char *pj_tune_memo_resolved(ptxjit_context *context, const char *family, const char *params,
                            const char *problem);
void pj_tune_memo_resolve(ptxjit_context *context, const char *family, const char *params,
                          const char *problem, const char *resolved);

#endif

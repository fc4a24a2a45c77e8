/* memo.c — what a context remembers of tuning: records by key (so that a second ptxjit_tune
 * or an auto request reads no file), and each auto request's resolution (so that a family op
 * called with PARAM=auto in a loop costs one lookup, not a record key per call). Small lists:
 * a context tunes few problems. Guarded by context->lock. */
#include <stdlib.h>
#include <string.h>

#include "records/memo.h"

typedef struct memo_record {
    char key[33];
    pj_tune_record record;
    struct memo_record *next;
} memo_record;

typedef struct memo_resolution {
    char *family, *params, *problem, *resolved;
    struct memo_resolution *next;
} memo_resolution;

struct pj_tune_memo {
    memo_record *records;
    memo_resolution *resolutions;
};

static void free_resolutions(memo_resolution *r)
{
    for (memo_resolution *next; r; r = next) {
        next = r->next;
        free(r->family);
        free(r->params);
        free(r->problem);
        free(r->resolved);
        free(r);
    }
}

void pj_tune_memo_free(pj_tune_memo *memo)
{
    if (!memo)
        return;
    for (memo_record *r = memo->records, *next; r; r = next) {
        next = r->next;
        pj_tune_record_free(&r->record);
        free(r);
    }
    free_resolutions(memo->resolutions);
    free(memo);
}

/* Caller holds the lock. NULL when out of memory (the memo is only a shortcut). */
static pj_tune_memo *memo_of(ptxjit_context *context)
{
    if (!context->tune_memo)
        context->tune_memo = calloc(1, sizeof *context->tune_memo);
    return context->tune_memo;
}

int pj_tune_memo_find(ptxjit_context *context, const char *key, pj_tune_record *out)
{
    int found = 0;
    pthread_mutex_lock(&context->lock);
    pj_tune_memo *memo = memo_of(context);
    for (memo_record *r = memo ? memo->records : NULL; r && !found; r = r->next)
        if (strcmp(r->key, key) == 0)
            found = pj_tune_record_copy(out, &r->record) == PTXJIT_OK;
    pthread_mutex_unlock(&context->lock);
    return found;
}

void pj_tune_memo_put(ptxjit_context *context, const char *key, const pj_tune_record *record)
{
    memo_record *fresh = calloc(1, sizeof *fresh);
    if (!fresh || pj_tune_record_copy(&fresh->record, record) != PTXJIT_OK) {
        free(fresh);
        return;
    }
    memcpy(fresh->key, key, 33);
    pthread_mutex_lock(&context->lock);
    pj_tune_memo *memo = memo_of(context);
    if (memo) {
        /* A record replaced (retune) makes every resolution possibly stale. */
        for (memo_record **slot = &memo->records; *slot; slot = &(*slot)->next)
            if (strcmp((*slot)->key, key) == 0) {
                memo_record *old = *slot;
                *slot = old->next;
                pj_tune_record_free(&old->record);
                free(old);
                break;
            }
        fresh->next = memo->records;
        memo->records = fresh;
        free_resolutions(memo->resolutions);
        memo->resolutions = NULL;
        fresh = NULL;
    }
    pthread_mutex_unlock(&context->lock);
    if (fresh) {
        pj_tune_record_free(&fresh->record);
        free(fresh);
    }
}

void pj_tune_memo_clear(ptxjit_context *context)
{
    pthread_mutex_lock(&context->lock);
    pj_tune_memo_free(context->tune_memo);
    context->tune_memo = NULL;
    pthread_mutex_unlock(&context->lock);
}

char *pj_tune_memo_resolved(ptxjit_context *context, const char *family, const char *params,
                            const char *problem)
{
    char *resolved = NULL;
    pthread_mutex_lock(&context->lock);
    pj_tune_memo *memo = context->tune_memo;
    for (memo_resolution *r = memo ? memo->resolutions : NULL; r; r = r->next)
        if (!strcmp(r->family, family) && !strcmp(r->params, params) &&
            !strcmp(r->problem, problem)) {
            resolved = pj_strdup(r->resolved);
            break;
        }
    pthread_mutex_unlock(&context->lock);
    return resolved;
}

void pj_tune_memo_resolve(ptxjit_context *context, const char *family, const char *params,
                          const char *problem, const char *resolved)
{
    memo_resolution *r = calloc(1, sizeof *r);
    if (!r)
        return;
    r->family = pj_strdup(family);
    r->params = pj_strdup(params);
    r->problem = pj_strdup(problem);
    r->resolved = pj_strdup(resolved);
    pthread_mutex_lock(&context->lock);
    pj_tune_memo *memo = memo_of(context);
    if (memo && r->family && r->params && r->problem && r->resolved) {
        r->next = memo->resolutions;
        memo->resolutions = r;
        r = NULL;
    }
    pthread_mutex_unlock(&context->lock);
    if (r)
        free_resolutions(r);
}

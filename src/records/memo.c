/* memo.c — what a context remembers of tuning: records by key (so that a second ptxjit_tune
 * or an auto request reads no file), and each auto request's resolution (so that a family op
 * called with PARAM=auto in a loop costs one lookup, not a record key per call). Small lists:
 * a context tunes few problems. Guarded by the memo's own lock. */
#include <pthread.h>
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
    pthread_mutex_t lock;
    memo_record *records;
    memo_resolution *resolutions;
};

pj_tune_memo *pj_tune_memo_new(void)
{
    pj_tune_memo *memo = calloc(1, sizeof *memo);
    if (memo)
        pthread_mutex_init(&memo->lock, NULL);
    return memo;
}

static void free_records(memo_record *r)
{
    for (memo_record *next; r; r = next) {
        next = r->next;
        pj_tune_record_free(&r->record);
        free(r);
    }
}

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
    free_records(memo->records);
    free_resolutions(memo->resolutions);
    pthread_mutex_destroy(&memo->lock);
    free(memo);
}

int pj_tune_memo_find(pj_tune_memo *memo, const char *key, pj_tune_record *out)
{
    int found = 0;
    if (!memo)
        return 0;
    pthread_mutex_lock(&memo->lock);
    for (memo_record *r = memo->records; r && !found; r = r->next)
        if (strcmp(r->key, key) == 0)
            found = pj_tune_record_copy(out, &r->record) == PTXJIT_OK;
    pthread_mutex_unlock(&memo->lock);
    return found;
}

/* Caller holds the lock. The record under key, taken off the list, or NULL. */
static memo_record *take_record(pj_tune_memo *memo, const char *key)
{
    for (memo_record **slot = &memo->records; *slot; slot = &(*slot)->next)
        if (strcmp((*slot)->key, key) == 0) {
            memo_record *old = *slot;
            *slot = old->next;
            old->next = NULL;
            return old;
        }
    return NULL;
}

void pj_tune_memo_put(pj_tune_memo *memo, const char *key, const pj_tune_record *record)
{
    memo_record *fresh = memo ? calloc(1, sizeof *fresh) : NULL;
    if (!fresh || pj_tune_record_copy(&fresh->record, record) != PTXJIT_OK) {
        free(fresh);
        return;
    }
    memcpy(fresh->key, key, 33);
    pthread_mutex_lock(&memo->lock);
    memo_record *old = take_record(memo, key);
    fresh->next = memo->records;
    memo->records = fresh;
    /* A record replaced (retune) makes every resolution possibly stale. */
    memo_resolution *stale = memo->resolutions;
    memo->resolutions = NULL;
    pthread_mutex_unlock(&memo->lock);
    free_records(old);
    free_resolutions(stale);
}

void pj_tune_memo_clear(pj_tune_memo *memo)
{
    if (!memo)
        return;
    pthread_mutex_lock(&memo->lock);
    memo_record *records = memo->records;
    memo_resolution *resolutions = memo->resolutions;
    memo->records = NULL;
    memo->resolutions = NULL;
    pthread_mutex_unlock(&memo->lock);
    free_records(records);
    free_resolutions(resolutions);
}

char *pj_tune_memo_resolved(pj_tune_memo *memo, const char *family, const char *params,
                            const char *problem)
{
    char *resolved = NULL;
    if (!memo)
        return NULL;
    pthread_mutex_lock(&memo->lock);
    for (memo_resolution *r = memo->resolutions; r; r = r->next)
        if (!strcmp(r->family, family) && !strcmp(r->params, params) &&
            !strcmp(r->problem, problem)) {
            resolved = pj_strdup(r->resolved);
            break;
        }
    pthread_mutex_unlock(&memo->lock);
    return resolved;
}

void pj_tune_memo_resolve(pj_tune_memo *memo, const char *family, const char *params,
                          const char *problem, const char *resolved)
{
    memo_resolution *r = memo ? calloc(1, sizeof *r) : NULL;
    if (!r)
        return;
    r->family = pj_strdup(family);
    r->params = pj_strdup(params);
    r->problem = pj_strdup(problem);
    r->resolved = pj_strdup(resolved);
    if (r->family && r->params && r->problem && r->resolved) {
        pthread_mutex_lock(&memo->lock);
        r->next = memo->resolutions;
        memo->resolutions = r;
        pthread_mutex_unlock(&memo->lock);
        r = NULL;
    }
    free_resolutions(r);
}

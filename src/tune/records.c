/* records.c — the tuning records a context can see: listed from the disk cache
 * (ptxjit_tune_list), and cleared from it and from the context's memo (ptxjit_tune_clear). */
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

typedef struct {
    ptxjit_context *context;
    ptxjit_tune_result **list;
    int count;
    ptxjit_status status;
} listing;

static void add_listed(void *user, const char *key)
{
    listing *l = user;
    pj_tune_record record;
    int found = 0;
    if (l->status != PTXJIT_OK ||
        pj_tune_record_load(l->context->disk, NULL, key, NULL, &record, &found) != PTXJIT_OK ||
        !found)
        return;
    ptxjit_tune_result *result = calloc(1, sizeof *result);
    ptxjit_tune_result **grown = realloc(l->list, (size_t)(l->count + 1) * sizeof *grown);
    if (grown)
        l->list = grown;
    if (record.latest || !result || !grown) { /* latest: a copy of a space's own record */
        l->status = record.latest || (result && grown) ? l->status : PTXJIT_ERR_OUT_OF_MEMORY;
        free(result);
        pj_tune_record_free(&record);
        return;
    }
    result->record = record;
    result->from_record = 1;
    result->record_path = pj_disk_cache_record_path(l->context->disk, key);
    l->list[l->count++] = result;
}

static int by_family_then_problem(const void *a, const void *b)
{
    const pj_tune_record *x = &(*(ptxjit_tune_result *const *)a)->record;
    const pj_tune_record *y = &(*(ptxjit_tune_result *const *)b)->record;
    int c = strcmp(x->family, y->family);
    if (!c)
        c = strcmp(x->problem, y->problem);
    if (!c)
        c = strcmp(x->fixed, y->fixed);
    return c ? c : strcmp(x->space, y->space);
}

ptxjit_status ptxjit_tune_list(ptxjit_tune_result ***out, int *count, ptxjit_context *context)
{
    if (!out || !count || !context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_tune_list: out, count and context must be given");
    listing l = {context, NULL, 0, PTXJIT_OK};
    if (context->disk)
        pj_disk_cache_each_record(context->disk, add_listed, &l);
    if (l.status != PTXJIT_OK) {
        ptxjit_tune_list_free(l.list, l.count);
        return pj_error(l.status, "out of memory listing the tuning records");
    }
    if (l.count)
        qsort(l.list, (size_t)l.count, sizeof *l.list, by_family_then_problem);
    *out = l.list;
    *count = l.count;
    return PTXJIT_OK;
}

void ptxjit_tune_list_free(ptxjit_tune_result **list, int count)
{
    for (int i = 0; list && i < count; i++)
        ptxjit_tune_result_free(list[i]);
    free(list);
}

ptxjit_status ptxjit_tune_clear(ptxjit_context *context, uint64_t *removed)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_tune_clear: context is NULL");
    uint64_t count = 0;
    pj_tune_memo_clear(pj_tune_memo_of(context));
    ptxjit_status status =
        context->disk ? pj_disk_cache_clear_records(context->disk, &count) : PTXJIT_OK;
    if (removed)
        *removed = count;
    return status;
}

/* warmup.c — ptxjit_warm: a list of requests compiled into the caches on the compile pool. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pool/pool.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* A word PARAM=auto: the value depends on a problem that a warm-up request does not name. */
static int names_auto(const char *params)
{
    for (const char *p = strstr(params, "=auto"); p; p = strstr(p + 1, "=auto"))
        if (p[5] == '\0' || p[5] == ' ' || p[5] == '\t')
            return 1;
    return 0;
}

/* "FAMILY key=value ..." into its family (a copy in *family) and params (in the copy); a
 * request that cannot be one is refused here: *why. */
static char *split_request(const char *request, const char **params, const char **why)
{
    const char *start = request + strspn(request, " \t");
    size_t length = strcspn(start, " \t");
    if (!length) {
        *why = "the request names no family (FAMILY key=value ...)";
        return NULL;
    }
    char *family = pj_strdup(start);
    if (!family) {
        *why = "out of memory";
        return NULL;
    }
    family[length] = '\0';
    const char *rest = start + length;
    *params = family + length + strspn(rest, " \t"); /* past the separator, now a '\0' */
    if (names_auto(*params)) {
        *why = "PARAM=auto needs a problem to look its tuning record up; warm the tuned "
               "winners instead (their params, or every record's winner at once)";
        free(family);
        return NULL;
    }
    return family;
}

static ptxjit_status item_refused(ptxjit_warm_item *item, ptxjit_status status,
                                  const char *message)
{
    item->status = status;
    item->message = pj_strdup(*message ? message : "refused");
    return item->message ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* The items of the requests that can be compiled go into the pool's list (index[i]: its item). */
static ptxjit_status plan(ptxjit_warm_result *result, char **families, pj_compile_request *list,
                          int *index, int *listed, const char *const *requests)
{
    *listed = 0;
    for (int i = 0; i < result->count; i++) {
        ptxjit_warm_item *item = &result->items[i];
        item->request = requests[i] ? requests[i] : "";
        item->message = "";
        const char *params = NULL, *why = NULL;
        families[i] = split_request(item->request, &params, &why);
        if (!families[i]) {
            ptxjit_status status = item_refused(item, PTXJIT_ERR_PARAM, why);
            if (status != PTXJIT_OK)
                return status;
            continue;
        }
        list[*listed] = (pj_compile_request){families[i], params};
        index[(*listed)++] = i;
    }
    return PTXJIT_OK;
}

static ptxjit_status compile_listed(ptxjit_warm_result *result, ptxjit_context *context,
                                    const pj_compile_request *list, const int *index, int listed,
                                    const ptxjit_warm_options *options)
{
    pj_compile_pool *pool = NULL;
    ptxjit_status status = listed ? pj_compile_pool_start(&pool, context, list, listed,
                                                          options ? options->threads : 0)
                                  : PTXJIT_OK;
    for (int n = 0; n < listed && status == PTXJIT_OK; n++) {
        ptxjit_warm_item *item = &result->items[index[n]];
        ptxjit_kernel *kernel;
        const char *message;
        item->status = pj_compile_pool_wait(pool, n, &kernel, &item->origin, &message);
        if (item->status != PTXJIT_OK)
            status = item_refused(item, item->status, message);
        if (options && options->progress)
            options->progress(options->progress_user, n + 1, listed, item->request);
    }
    if (pool) {
        result->compile_processes = pj_compile_pool_processes(pool);
        pj_compile_pool_free(pool);
    }
    return status;
}

static void count_items(ptxjit_warm_result *result)
{
    for (int i = 0; i < result->count; i++) {
        const ptxjit_warm_item *item = &result->items[i];
        if (item->status != PTXJIT_OK)
            result->refused++;
        else if (item->origin == PTXJIT_ORIGIN_COMPILED)
            result->compiled++;
        else
            result->cached++;
    }
}

ptxjit_status ptxjit_warm(ptxjit_warm_result **out, ptxjit_context *context,
                          const char *const *requests, int count,
                          const ptxjit_warm_options *options)
{
    if (out)
        *out = NULL;
    if (!out || !context || (count > 0 && !requests) || count < 0)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_warm: out, context and count requests must be given");
    double started = now_ms();
    ptxjit_warm_result *result = calloc(1, sizeof *result);
    char **families = calloc((size_t)count + 1, sizeof *families);
    pj_compile_request *list = calloc((size_t)count + 1, sizeof *list);
    int *index = calloc((size_t)count + 1, sizeof *index);
    ptxjit_status status = PTXJIT_ERR_OUT_OF_MEMORY;
    if (result)
        result->items = calloc((size_t)count + 1, sizeof *result->items);
    if (result && result->items && families && list && index) {
        result->count = count;
        int listed = 0;
        status = plan(result, families, list, index, &listed, requests);
        if (status == PTXJIT_OK)
            status = compile_listed(result, context, list, index, listed, options);
    } else {
        pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    for (int i = 0; families && i < count; i++)
        free(families[i]);
    free(families);
    free(list);
    free(index);
    if (status != PTXJIT_OK) {
        ptxjit_warm_result_free(result);
        return status;
    }
    count_items(result);
    result->wall_ms = now_ms() - started;
    *out = result;
    return PTXJIT_OK;
}

void ptxjit_warm_result_free(ptxjit_warm_result *result)
{
    if (!result)
        return;
    for (int i = 0; result->items && i < result->count; i++)
        if (result->items[i].message && *result->items[i].message)
            free((char *)result->items[i].message);
    free(result->items);
    free(result);
}

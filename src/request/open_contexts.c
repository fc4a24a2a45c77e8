/* open_contexts.c — the list of the process's open contexts. ptxjit_close of a context that
 * is not open (a second close, a pointer never opened) is undefined, as free() twice is; this
 * list makes the common mistake, closing twice, a warning instead of a use after free. Best
 * effort: once a later ptxjit_open reuses the freed address, a stale pointer is open again.
 * A process opens a few contexts (one per GPU), so a short array searched end to end is
 * enough; open and close are rare, the mutex is never held by a request. */
#include <pthread.h>
#include <stdlib.h>

#include "request/open_contexts.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static const void **open_list;
static size_t open_count, open_capacity;

int pj_open_contexts_add(const void *context)
{
    pthread_mutex_lock(&lock);
    int added = 1;
    if (open_count == open_capacity) {
        size_t capacity = open_capacity ? 2 * open_capacity : 8;
        const void **grown = realloc(open_list, capacity * sizeof *grown);
        if (grown) {
            open_list = grown;
            open_capacity = capacity;
        } else {
            added = 0;
        }
    }
    if (added)
        open_list[open_count++] = context;
    pthread_mutex_unlock(&lock);
    return added;
}

int pj_open_contexts_has(const void *context)
{
    pthread_mutex_lock(&lock);
    int found = 0;
    for (size_t i = 0; i < open_count && !found; i++)
        found = open_list[i] == context;
    pthread_mutex_unlock(&lock);
    return found;
}

int pj_open_contexts_remove(const void *context)
{
    pthread_mutex_lock(&lock);
    int found = 0;
    for (size_t i = 0; i < open_count && !found; i++) {
        if (open_list[i] == context) {
            open_list[i] = open_list[--open_count];
            found = 1;
        }
    }
    if (open_count == 0) { /* every context closed: a leak checker sees nothing of ours */
        free(open_list);
        open_list = NULL;
        open_capacity = 0;
    }
    pthread_mutex_unlock(&lock);
    return found;
}

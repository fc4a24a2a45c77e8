/* alias.c — see alias.h: adding an exact request, and forgetting them all when the template
 * registry changes. */
#include <stdlib.h>

#include "alias.h"
#include "front.h"

static void alias_free(pj_alias *a)
{
    free(a->family);
    free(a->params);
    free(a->options);
    free(a);
}

void pj_alias_add(ptxjit_context *context, uint64_t hash, const pj_request_text *r,
                  ptxjit_kernel *kernel)
{
    if (pj_alias_find(context, hash, r))
        return;
    pj_alias *a = calloc(1, sizeof *a);
    if (!a)
        return;
    a->hash = hash;
    a->family = pj_strdup(r->family);
    a->params = pj_strdup(r->params);
    a->options = pj_strdup(r->options);
    a->kernel = kernel;
    if (!a->family || !a->params || !a->options) {
        alias_free(a);
        return;
    }
    a->next = context->aliases[hash % PJ_BUCKETS];
    __atomic_store_n(&context->aliases[hash % PJ_BUCKETS], a, __ATOMIC_RELEASE);
}

/* Each bucket's chain is unlinked at once and kept on the retired list (readers may be on
 * it): a reload's cost is the aliases' memory until close, as it is its templates'. Buckets
 * become non-empty only under context->lock, which the caller holds: an empty one is skipped
 * with a plain load (the open's first snapshot finds them all empty). */
void pj_aliases_forget(ptxjit_context *context)
{
    for (int b = 0; b < PJ_BUCKETS; b++) {
        if (!__atomic_load_n(&context->aliases[b], __ATOMIC_RELAXED))
            continue;
        pj_alias *chain = __atomic_exchange_n(&context->aliases[b], NULL, __ATOMIC_ACQ_REL);
        for (pj_alias *a = chain; a; a = a->next) {
            a->retired = context->retired_aliases;
            context->retired_aliases = a;
        }
    }
    /* After the buckets: a thread that reads the new epoch finds them emptied. */
    __atomic_store_n(&context->front_epoch, pj_front_new_epoch(), __ATOMIC_RELEASE);
}

void pj_aliases_free(ptxjit_context *context)
{
    pj_aliases_forget(context);
    for (pj_alias *a = context->retired_aliases, *next; a; a = next) {
        next = a->retired;
        alias_free(a);
    }
    context->retired_aliases = NULL;
}

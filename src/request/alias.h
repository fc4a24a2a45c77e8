/* alias.h — a context's exact requests: each (family, params text, compile options text) it
 * answered, with its kernel, found again without the lock and without parsing, hashing a
 * key or scanning headers (within a context, the same request text gets the same kernel).
 * Forgotten whenever the template registry changes, so that no kernel of a replaced template
 * is handed out again; each thread's front (front.h) is forgotten with them. */
#ifndef PTXJIT_ALIAS_H
#define PTXJIT_ALIAS_H

#include <string.h>

#include "context.h"

/* The words of one request, as the caller wrote them. */
typedef struct {
    const char *family, *params, *options;
} pj_request_text;

struct pj_alias {
    uint64_t hash;
    char *family, *params, *options;
    ptxjit_kernel *kernel;
    pj_alias *next;    /* never changed once published: readers follow it without the lock */
    pj_alias *retired; /* the retired list (pj_aliases_forget) */
};

/* The hash and the lookup are inline: every memory hit that misses its thread's front runs
 * them, and they are most of its time. */

/* One-shot hashes, no allocation; the options, nearly always none, only when there are some
 * (pj_alias_find compares them either way). */
static inline uint64_t pj_alias_hash(const pj_request_text *r)
{
    uint64_t hash = pj_hash64(r->family, strlen(r->family), 0);
    hash = pj_hash64(r->params, strlen(r->params), hash);
    return *r->options ? pj_hash64(r->options, strlen(r->options), hash) : hash;
}

/* The kernel of exactly r, or NULL. Runs without the lock, so that memory hits from many
 * threads share nothing they write: an alias is immutable once its bucket's head publishes it
 * (release, read with acquire), and a forgotten one is only unlinked (retired), never freed
 * before ptxjit_close. */
static inline ptxjit_kernel *pj_alias_find(ptxjit_context *context, uint64_t hash,
                                           const pj_request_text *r)
{
    for (pj_alias *a = __atomic_load_n(&context->aliases[hash % PJ_BUCKETS], __ATOMIC_ACQUIRE); a;
         a = a->next)
        if (a->hash == hash && strcmp(a->family, r->family) == 0 &&
            strcmp(a->params, r->params) == 0 && strcmp(a->options, r->options) == 0)
            return a->kernel;
    return NULL;
}

/* Notes kernel as the answer to r, unless r has one. Caller holds context->lock, and knows
 * that kernel's template is still the registry's. A failed allocation only loses the fast
 * path. */
void pj_alias_add(ptxjit_context *context, uint64_t hash, const pj_request_text *r,
                  ptxjit_kernel *kernel);
/* Forgets every alias, and every thread's front of this context: the registry changed, and
 * they may answer with kernels of templates replaced since. Caller holds context->lock. */
void pj_aliases_forget(ptxjit_context *context);
/* Frees the aliases, forgotten ones included, at close: no reader is left. */
void pj_aliases_free(ptxjit_context *context);

#endif

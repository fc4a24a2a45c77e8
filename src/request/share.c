/* share.c — the process's in-memory cache of compiled kernels, shared by its contexts.
 *
 * A process that drives several GPUs opens one context per device; devices of one
 * architecture ask for the same keys (the key holds the architecture, so devices of another
 * one never share a cubin). Without this table each context would read the disk or compile
 * every key again. An entry lives while a kernel holds its artifact or a thread waits on it:
 * the sharing is among the contexts open together, and closing them all frees it. A table
 * entry is keyed like the disk cache, by the kernel's key, which covers every input of the
 * code; kernels whose key may not describe their code (keep_off_disk) are not shared, as they
 * are not stored. */
#include <stdlib.h>
#include <string.h>

#include "share.h"

#define SHARE_BUCKETS 64

typedef enum { SHARE_BUSY, SHARE_READY, SHARE_FAILED, SHARE_WITHDRAWN } share_state;

struct pj_share_entry {
    pj_hash128 key;
    share_state state;
    int refs;             /* kernels holding the artifact, threads waiting on the entry */
    int listed;           /* in the table, where new requests find it */
    pj_artifact artifact; /* READY: the kernels' artifact, owned here */
    /* FAILED: what the producer's caller was told, for each waiter (NULL: out of memory) */
    ptxjit_status status;
    char *message, *log, *source;
    pthread_cond_t done;  /* broadcast when the state leaves BUSY */
    struct pj_share_entry *next;
};
typedef struct pj_share_entry share_entry;

/* One lock for the table and the entries' states, held for lookups and state changes only:
 * never while producing, so that requests for different keys never wait on each other. */
static pthread_mutex_t share_lock = PTHREAD_MUTEX_INITIALIZER;
static share_entry *table[SHARE_BUCKETS];
static pj_share_counters counters;

void (*pj_share_hold)(const pj_hash128 *key);

static share_entry **slot_of(const pj_hash128 *key)
{
    share_entry **slot = &table[key->low % SHARE_BUCKETS];
    while (*slot && ((*slot)->key.low != key->low || (*slot)->key.high != key->high))
        slot = &(*slot)->next;
    return slot;
}

/* Caller holds share_lock. */
static void unlist(share_entry *e)
{
    if (!e->listed)
        return;
    share_entry **slot = slot_of(&e->key);
    *slot = e->next;
    e->listed = 0;
}

/* Caller holds share_lock; 1 when the caller must free e (after unlocking). */
static int unref(share_entry *e)
{
    if (--e->refs > 0)
        return 0;
    unlist(e);
    return 1;
}

static void entry_free(share_entry *e)
{
    pj_artifact_free(&e->artifact);
    free(e->message);
    free(e->log);
    free(e->source);
    pthread_cond_destroy(&e->done);
    free(e);
}

/* Caller holds share_lock. */
static void count(ptxjit_status status, ptxjit_origin origin)
{
    if (status != PTXJIT_OK)
        return;
    counters.compiled += origin == PTXJIT_ORIGIN_COMPILED;
    counters.disk += origin == PTXJIT_ORIGIN_DISK;
    counters.remote += origin == PTXJIT_ORIGIN_REMOTE;
}

/* The artifact stays the entry's: the kernel reads it, pj_share_release gives it back. */
static void adopt(ptxjit_kernel *kernel, share_entry *e)
{
    kernel->artifact = e->artifact;
    kernel->shared = e;
}

/* A waiter's copy of the producer's failure: the same status, message and compile failure. */
static ptxjit_status report_failure(const share_entry *e, const ptxjit_kernel *kernel)
{
    if (e->log)
        pj_compile_failure(e->log, e->source);
    if (e->message)
        return pj_error(e->status, "%s", e->message);
    return pj_error(e->status, "%s (%s): another thread's request for this kernel failed with "
                    "%s; ask again",
                    kernel->schema->family, kernel->canonical, ptxjit_status_name(e->status));
}

/* Hands the producer's result to the entry and wakes the waiters. */
static void finish(share_entry *e, ptxjit_kernel *kernel, ptxjit_status status,
                   ptxjit_origin origin)
{
    char *message = NULL, *log = NULL, *source = NULL;
    if (status != PTXJIT_OK) {
        message = pj_strdup(ptxjit_last_error());
        if (status == PTXJIT_ERR_COMPILE) {
            log = pj_strdup(ptxjit_last_compile_log());
            source = pj_strdup(ptxjit_last_compile_source());
        }
    }
    int gone = 0;
    pthread_mutex_lock(&share_lock);
    count(status, origin);
    if (status == PTXJIT_OK && !kernel->keep_off_disk) {
        e->artifact = kernel->artifact; /* the producer's reference is its kernel's now */
        adopt(kernel, e);
        e->state = SHARE_READY;
    } else {
        /* Later requests look again; the waiters read the failure off the entry. */
        unlist(e);
        e->state = status == PTXJIT_OK ? SHARE_WITHDRAWN : SHARE_FAILED;
        e->status = status;
        e->message = message;
        e->log = log;
        e->source = source;
        message = log = source = NULL;
        gone = unref(e);
    }
    pthread_cond_broadcast(&e->done);
    pthread_mutex_unlock(&share_lock);
    free(message);
    free(log);
    free(source);
    if (gone)
        entry_free(e);
}

/* A new BUSY entry for key, listed; NULL when out of memory (the caller then produces
 * without sharing). Caller holds share_lock. */
static share_entry *claim(const pj_hash128 *key)
{
    share_entry *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->key = *key;
    e->state = SHARE_BUSY;
    e->refs = 1;
    e->listed = 1;
    pthread_cond_init(&e->done, NULL);
    *slot_of(key) = e;
    return e;
}

ptxjit_status pj_share_produce(ptxjit_kernel *kernel, ptxjit_origin *origin,
                               pj_share_producer produce)
{
    ptxjit_status status;
    if (!kernel->context->process_cache) {
        status = produce(kernel, origin);
        pthread_mutex_lock(&share_lock);
        count(status, *origin);
        pthread_mutex_unlock(&share_lock);
        return status;
    }
    pthread_mutex_lock(&share_lock);
    share_entry *e;
    while ((e = *slot_of(&kernel->key)) != NULL) {
        e->refs++;
        if (e->state == SHARE_BUSY)
            counters.waited++;
        while (e->state == SHARE_BUSY)
            pthread_cond_wait(&e->done, &share_lock);
        if (e->state == SHARE_READY) {
            adopt(kernel, e);
            counters.shared++;
            pthread_mutex_unlock(&share_lock);
            *origin = PTXJIT_ORIGIN_SHARED;
            return PTXJIT_OK;
        }
        /* Failed: the producer's failure is ours. Withdrawn (not shareable): unlisted
         * already, so the loop finds a newer entry or none, and this thread produces. */
        status = e->state == SHARE_FAILED ? report_failure(e, kernel) : PTXJIT_OK;
        share_entry *gone = unref(e) ? e : NULL;
        if (status != PTXJIT_OK || gone) {
            pthread_mutex_unlock(&share_lock);
            if (gone)
                entry_free(gone);
            if (status != PTXJIT_OK)
                return status;
            pthread_mutex_lock(&share_lock);
        }
    }
    e = claim(&kernel->key);
    pthread_mutex_unlock(&share_lock);
    if (e && pj_share_hold)
        pj_share_hold(&kernel->key);
    status = produce(kernel, origin);
    if (e)
        finish(e, kernel, status, *origin);
    else {
        pthread_mutex_lock(&share_lock);
        count(status, *origin);
        pthread_mutex_unlock(&share_lock);
    }
    return status;
}

void pj_share_release(ptxjit_kernel *kernel)
{
    share_entry *e = kernel->shared;
    if (!e)
        return;
    pthread_mutex_lock(&share_lock);
    int gone = unref(e);
    pthread_mutex_unlock(&share_lock);
    if (gone)
        entry_free(e);
    memset(&kernel->artifact, 0, sizeof kernel->artifact);
    kernel->shared = NULL;
}

void pj_share_counters_get(pj_share_counters *out)
{
    pthread_mutex_lock(&share_lock);
    *out = counters;
    pthread_mutex_unlock(&share_lock);
}

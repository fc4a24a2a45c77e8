/* compile_pool.c — many requests compiled at once, handed out in order so that a caller that
 * uses them in that order (the tuner times them as they come) waits as little as it can.
 *
 * Each thread of the pool asks the context for its kernel. Where the context has a disk
 * cache and a compile worker program, each thread first has a worker process of its own
 * compile the request into the disk cache (worker_process.c says why processes), and the
 * thread's own request is then a disk hit; a worker that cannot start, dies or refuses leaves
 * the thread to compile in this process, so workers change only the speed. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pool/pool.h"
#include "request/alias.h"
#include "request/select.h"
#include "request/templates.h"

typedef struct {
    ptxjit_kernel *kernel;
    ptxjit_status status;
    ptxjit_origin origin;
    char *message;
    int done;
    int taken; /* handed to the caller (pj_compile_pool_wait, _wait_next) */
} slot;

struct pj_compile_pool {
    ptxjit_context *context;
    const pj_compile_request *requests;
    int count;
    slot *slots;
    int next;     /* the next compile to hand out */
    int stopping; /* no more are handed out */
    pthread_mutex_t lock;
    pthread_cond_t finished;
    pthread_t *threads;
    int thread_count;
    pj_worker_setup *setup; /* NULL: no workers */
    int processes;          /* workers that answered */
    int started;            /* workers started (a thread whose every request was held starts
                               none) */
    int mismatches;         /* worker keys that were not the request's: logged once */
    pj_strbuf setup_text;   /* the setup's strings */
    pj_compile_ready_fn *ready; /* NULL: none */
    void *ready_user;
};

/* A worker sees the families of the template directories and the built-in ones; one added
 * from memory (ptxjit_add_template) exists in this process only. */
static int worker_can_compile(pj_compile_pool *pool, const char *family)
{
    const pj_schema *schema = pj_context_find_schema(pool->context, family);
    return schema && !pj_origin_is_memory(schema->origin);
}

/* The kernel of exactly this request that the context already holds (a second tuning of the
 * space in this process), or NULL: such a request needs no worker. */
static ptxjit_kernel *held(pj_compile_pool *pool, const pj_compile_request *r)
{
    pj_request_text text = {r->family, r->params, ""};
    return pj_alias_find(pool->context, pj_alias_hash(&text), &text);
}

/* The thread's worker, started at its first request that the context does not hold: a pool
 * whose every request is held starts no process. NULL: none (no setup, or it did not start). */
static pj_worker *worker_of(pj_compile_pool *pool, pj_worker **worker, int *tried)
{
    if (*worker || *tried || !pool->setup)
        return *worker;
    *tried = 1;
    ptxjit_status status = pj_worker_start(worker, pool->setup);
    pthread_mutex_lock(&pool->lock);
    pool->started++;
    pool->processes += status == PTXJIT_OK;
    pthread_mutex_unlock(&pool->lock);
    if (status != PTXJIT_OK) {
        pj_log(&pool->context->logger, PTXJIT_LOG_INFO, "compiling in this process: %s",
               ptxjit_last_error());
    }
    return *worker;
}

/* A worker's disk entry became our kernel, or we compiled it after all. */
static ptxjit_status get_kernel(pj_compile_pool *pool, int index, pj_worker **worker,
                                int *tried, ptxjit_kernel **kernel, ptxjit_origin *origin)
{
    const pj_compile_request *r = &pool->requests[index];
    if ((*kernel = held(pool, r))) {
        *origin = PTXJIT_ORIGIN_MEMORY;
        return PTXJIT_OK;
    }
    char key[33] = "";
    int fresh = 0; /* the worker compiled it (not found in the cache) */
    int asked = worker_can_compile(pool, r->family) && worker_of(pool, worker, tried)
                    ? pj_worker_compile(*worker, r->family, r->params, key, &fresh)
                    : -1;
    if (asked == PJ_WORKER_DEAD) {
        pj_worker_stop(*worker);
        *worker = NULL;
    }
    ptxjit_status status = ptxjit_get_kernel(kernel, pool->context, r->family, r->params, origin);
    if (status == PTXJIT_OK && asked == PJ_WORKER_COMPILED) {
        if (fresh && *origin == PTXJIT_ORIGIN_DISK)
            *origin = PTXJIT_ORIGIN_COMPILED; /* compiled for this call, by the worker */
        if (strcmp(key, ptxjit_kernel_key(*kernel)) != 0) {
            pthread_mutex_lock(&pool->lock);
            int first = pool->mismatches++ == 0;
            pthread_mutex_unlock(&pool->lock);
            if (first)
                pj_log(&pool->context->logger, PTXJIT_LOG_INFO,
                       "a compile worker stored %s %s under another key than this process "
                       "computes (a template or header changed, or another compiler): "
                       "compiled here instead",
                       r->family, r->params);
        }
    }
    return status;
}

/* Compiles requests[index] into its slot; no lock held while compiling. */
static void compile_one(pj_compile_pool *pool, int index, pj_worker **worker, int *tried)
{
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin = PTXJIT_ORIGIN_COMPILED;
    ptxjit_status status = get_kernel(pool, index, worker, tried, &kernel, &origin);
    char *message = pj_strdup(status == PTXJIT_OK ? "" : ptxjit_last_error());
    if (status == PTXJIT_OK && pool->ready)
        pool->ready(pool->ready_user, kernel);
    pthread_mutex_lock(&pool->lock);
    pool->slots[index] = (slot){kernel, status, origin, message, 1, pool->slots[index].taken};
    pthread_cond_broadcast(&pool->finished);
    pthread_mutex_unlock(&pool->lock);
}

static int take(pj_compile_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    int index = pool->stopping || pool->next >= pool->count ? -1 : pool->next++;
    pthread_mutex_unlock(&pool->lock);
    return index;
}

static void *thread_main(void *arg)
{
    pj_compile_pool *pool = arg;
    pj_worker *worker = NULL;
    int tried = 0;
    for (int index; (index = take(pool)) >= 0;)
        compile_one(pool, index, &worker, &tried);
    pj_worker_stop(worker);
    return NULL;
}

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

/* The strings of setup live in one buffer: offsets first, pointers once it stops moving. */
static void add_word(pj_compile_pool *pool, size_t *offsets, int *n, const char *word)
{
    offsets[(*n)++] = pool->setup_text.length;
    pj_sb_append_n(&pool->setup_text, word, strlen(word) + 1);
}

/* The worker's command line: this context's target, cache, templates and backend, and its
 * compile options, cache settings, include confinement and template cap in the environment,
 * so that its keys are ours and it refuses what we refuse (a context may have been confined
 * or capped by its options alone, which no worker inherits). */
static void prepare_workers(pj_compile_pool *pool, int threads)
{
    ptxjit_context *context = pool->context;
    if (!context->disk || threads < 2 || pool->count < 2)
        return;
    const char *why = NULL;
    char program[PATH_MAX];
    if (!pj_worker_program(program, context->compile_worker, &why)) {
        pj_log(&context->logger, PTXJIT_LOG_INFO, "compiling in this process: %s", why);
        return;
    }
    char root[4096];
    snprintf(root, sizeof root, "%s", pj_disk_cache_dir(context->disk));
    char *slash = strrchr(root, '/'); /* <root>/v<N>: the worker adds v<N> itself */
    if (slash)
        *slash = '\0';
    size_t argv_at[16], env_at[PJ_WORKER_ENV_MAX];
    int argc = 0, envc = 0;
    pj_sb_init(&pool->setup_text);
    add_word(pool, argv_at, &argc, program);
    add_word(pool, argv_at, &argc, "compile-worker");
    add_word(pool, argv_at, &argc, "--no-gpu");
    add_word(pool, argv_at, &argc, "--arch");
    add_word(pool, argv_at, &argc, context->arch);
    add_word(pool, argv_at, &argc, "--cache-dir");
    add_word(pool, argv_at, &argc, root);
    add_word(pool, argv_at, &argc, "--backend");
    add_word(pool, argv_at, &argc, pj_backend_name(context->default_backend));
    if (context->template_path && *context->template_path) {
        add_word(pool, argv_at, &argc, "--templates");
        add_word(pool, argv_at, &argc, context->template_path);
    }
    char text[4200];
    snprintf(text, sizeof text, "PTXJIT_COMPILE_OPTIONS=%s", context->compile_options);
    add_word(pool, env_at, &envc, text);
    snprintf(text, sizeof text, "PTXJIT_CACHE_SHARED=%d", pj_disk_cache_shared(context->disk));
    add_word(pool, env_at, &envc, text);
    snprintf(text, sizeof text, "PTXJIT_CACHE_MAX_BYTES=%" PRIu64,
             pj_disk_cache_max_bytes(context->disk));
    add_word(pool, env_at, &envc, text);
    snprintf(text, sizeof text, "PTXJIT_CONFINE_INCLUDES=%d", context->confine_includes);
    add_word(pool, env_at, &envc, text);
        /* The cap, which the options field may have set: a worker reads the same files. */
    snprintf(text, sizeof text, "PTXJIT_TEMPLATE_MAX_BYTES=%zu", pj_templates_max_bytes(context));
    add_word(pool, env_at, &envc, text);
    pool->setup = calloc(1, sizeof *pool->setup);
    if (pool->setup_text.failed || !pool->setup) {
        free(pool->setup);
        pool->setup = NULL;
        return; /* out of memory: compile here */
    }
    for (int i = 0; i < argc; i++)
        pool->setup->argv[i] = pool->setup_text.data + argv_at[i];
    for (int i = 0; i < envc; i++)
        pool->setup->env[i] = pool->setup_text.data + env_at[i];
    pool->setup->env_count = envc;
    pool->setup->arch = context->arch;
}

ptxjit_status pj_compile_pool_start(pj_compile_pool **out, ptxjit_context *context,
                                    const pj_compile_request *requests, int count, int threads)
{
    return pj_compile_pool_start_ready(out, context, requests, count, threads, NULL, NULL);
}

ptxjit_status pj_compile_pool_start_ready(pj_compile_pool **out, ptxjit_context *context,
                                          const pj_compile_request *requests, int count,
                                          int threads, pj_compile_ready_fn *ready, void *user)
{
    pj_compile_pool *pool = calloc(1, sizeof *pool);
    int wanted = threads > 0 ? threads : cores();
    wanted = wanted < count ? wanted : count;
    if (pool) {
        pool->slots = calloc((size_t)count + 1, sizeof *pool->slots);
        pool->threads = calloc((size_t)wanted + 1, sizeof *pool->threads);
    }
    if (!pool || !pool->slots || !pool->threads) {
        if (pool) {
            free(pool->slots);
            free(pool->threads);
        }
        free(pool);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    pool->context = context;
    pool->requests = requests;
    pool->count = count;
    pool->ready = ready;
    pool->ready_user = user;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->finished, NULL);
    prepare_workers(pool, wanted);
    /* Fewer threads than asked (the system refused more) only compile slower; with none, the
     * waiting caller compiles each request itself. */
    while (pool->thread_count < wanted &&
           pthread_create(&pool->threads[pool->thread_count], NULL, thread_main, pool) == 0)
        pool->thread_count++;
    *out = pool;
    return PTXJIT_OK;
}

int pj_compile_pool_processes(pj_compile_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    int processes = pool->processes;
    pthread_mutex_unlock(&pool->lock);
    return processes;
}

ptxjit_status pj_compile_pool_wait(pj_compile_pool *pool, int index, ptxjit_kernel **kernel,
                                   ptxjit_origin *origin, const char **message)
{
    if (pool->thread_count == 0) {
        pj_worker *none = NULL;
        int mine = take(pool), tried = 1;
        while (mine >= 0 && mine <= index) {
            compile_one(pool, mine, &none, &tried);
            mine = mine < index ? take(pool) : -1;
        }
    }
    pthread_mutex_lock(&pool->lock);
    while (!pool->slots[index].done)
        pthread_cond_wait(&pool->finished, &pool->lock);
    slot *s = &pool->slots[index];
    s->taken = 1;
    pthread_mutex_unlock(&pool->lock);
    *kernel = s->kernel;
    if (origin)
        *origin = s->origin;
    *message = s->message ? s->message : "out of memory";
    return s->status;
}

/* The lowest finished request not taken yet, or -1 when none; caller holds the lock. */
static int finished_untaken(pj_compile_pool *pool)
{
    for (int i = 0; i < pool->count; i++)
        if (pool->slots[i].done && !pool->slots[i].taken)
            return i;
    return -1;
}

ptxjit_status pj_compile_pool_wait_next(pj_compile_pool *pool, int *index,
                                        ptxjit_kernel **kernel, ptxjit_origin *origin,
                                        const char **message)
{
    pthread_mutex_lock(&pool->lock);
    int found = finished_untaken(pool), untaken = 0;
    for (int i = 0; i < pool->count; i++)
        untaken += !pool->slots[i].taken;
    pthread_mutex_unlock(&pool->lock);
    if (!untaken) {
        *index = -1;
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "every request was taken");
    }
    if (found < 0 && pool->thread_count == 0) { /* no threads: compile the next one here */
        pj_worker *none = NULL;
        int tried = 1, mine = take(pool);
        if (mine >= 0)
            compile_one(pool, mine, &none, &tried);
    }
    pthread_mutex_lock(&pool->lock);
    while ((found = finished_untaken(pool)) < 0)
        pthread_cond_wait(&pool->finished, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
    *index = found;
    return pj_compile_pool_wait(pool, found, kernel, origin, message);
}

void pj_compile_pool_free(pj_compile_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = 1;
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->thread_count; i++)
        pthread_join(pool->threads[i], NULL);
    /* Which program was found matters as much as how many answered: the lookup guesses
     * (worker_program.c), and a wrong guess only shows as compiles in this process. */
    if (pool->setup && pool->started)
        pj_log(&pool->context->logger, PTXJIT_LOG_INFO,
               "%d of %d compile worker process%s answered (%s)", pool->processes,
               pool->started, pool->started == 1 ? "" : "es", pool->setup->argv[0]);
    for (int i = 0; i < pool->count; i++)
        free(pool->slots[i].message);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->finished);
    pj_sb_free(&pool->setup_text);
    free(pool->setup);
    free(pool->slots);
    free(pool->threads);
    free(pool);
}

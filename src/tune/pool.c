/* pool.c — the candidates' compiles on a pool of threads, handed out in the space's order so
 * that the caller, which times them in that order, waits as little as it can. The context
 * already compiles each key once however many threads ask, and NVRTC and the llvm plugin
 * compile from several threads at once (tests/test_threads.c), so a worker only asks the
 * context for its kernel. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tune/tune.h"

typedef struct {
    ptxjit_kernel *kernel;
    ptxjit_status status;
    char *message;
    int done;
} slot;

struct pj_tune_pool {
    ptxjit_context *context;
    const char *family;
    char *const *params;
    int count;
    slot *slots;
    int next;     /* the next compile to hand out */
    int stopping; /* no more are handed out */
    pthread_mutex_t lock;
    pthread_cond_t finished;
    pthread_t *threads;
    int thread_count;
};

/* Compiles params[index] into its slot; no lock held while compiling. */
static void compile_one(pj_tune_pool *pool, int index)
{
    ptxjit_kernel *kernel = NULL;
    ptxjit_status status =
        ptxjit_get_kernel(&kernel, pool->context, pool->family, pool->params[index], NULL);
    char *message = pj_strdup(status == PTXJIT_OK ? "" : ptxjit_last_error());
    pthread_mutex_lock(&pool->lock);
    pool->slots[index] = (slot){kernel, status, message, 1};
    pthread_cond_broadcast(&pool->finished);
    pthread_mutex_unlock(&pool->lock);
}

static int take(pj_tune_pool *pool)
{
    pthread_mutex_lock(&pool->lock);
    int index = pool->stopping || pool->next >= pool->count ? -1 : pool->next++;
    pthread_mutex_unlock(&pool->lock);
    return index;
}

static void *worker(void *arg)
{
    pj_tune_pool *pool = arg;
    for (int index; (index = take(pool)) >= 0;)
        compile_one(pool, index);
    return NULL;
}

static int cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

ptxjit_status pj_tune_pool_start(pj_tune_pool **out, ptxjit_context *context, const char *family,
                                 char *const *params, int count, int threads)
{
    pj_tune_pool *pool = calloc(1, sizeof *pool);
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
    pool->family = family;
    pool->params = params;
    pool->count = count;
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->finished, NULL);
    /* Fewer threads than asked (the system refused more) only compile slower; with none, the
     * waiting caller compiles each candidate itself. */
    while (pool->thread_count < wanted &&
           pthread_create(&pool->threads[pool->thread_count], NULL, worker, pool) == 0)
        pool->thread_count++;
    *out = pool;
    return PTXJIT_OK;
}

int pj_tune_pool_threads(const pj_tune_pool *pool)
{
    return pool->thread_count;
}

ptxjit_status pj_tune_pool_wait(pj_tune_pool *pool, int index, ptxjit_kernel **kernel,
                                const char **message)
{
    if (pool->thread_count == 0) {
        int mine = take(pool);
        while (mine >= 0 && mine <= index) {
            compile_one(pool, mine);
            mine = mine < index ? take(pool) : -1;
        }
    }
    pthread_mutex_lock(&pool->lock);
    while (!pool->slots[index].done)
        pthread_cond_wait(&pool->finished, &pool->lock);
    slot *s = &pool->slots[index];
    pthread_mutex_unlock(&pool->lock);
    *kernel = s->kernel;
    *message = s->message ? s->message : "out of memory";
    return s->status;
}

void pj_tune_pool_free(pj_tune_pool *pool)
{
    if (!pool)
        return;
    pthread_mutex_lock(&pool->lock);
    pool->stopping = 1;
    pthread_mutex_unlock(&pool->lock);
    for (int i = 0; i < pool->thread_count; i++)
        pthread_join(pool->threads[i], NULL);
    for (int i = 0; i < pool->count; i++)
        free(pool->slots[i].message);
    pthread_mutex_destroy(&pool->lock);
    pthread_cond_destroy(&pool->finished);
    free(pool->slots);
    free(pool->threads);
    free(pool);
}

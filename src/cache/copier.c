/* copier.c — a queue of copies and the one thread that writes them. The thread blocks every
 * signal: the caller's handlers run on the caller's threads only. It starts with the copier,
 * not with the first copy: a thread created during a request runs before the thread that
 * created it, and on a busy machine (more runnable threads than processors) the request then
 * waits a scheduling round for the processor back — measured with bench/fleet.sh (2 cores,
 * 8 processes per node), a remote hit's median went from 2.4–4.1 ms to 0.5–1.4 ms with the
 * thread made in ptxjit_open. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cache/copier.h"

typedef struct copy {
    char key[33];
    const pj_artifact *artifact;
    struct copy *next;
} copy;

struct pj_copier {
    pj_disk_cache *disk;
    pj_logger logger;
    pthread_mutex_t lock;
    pthread_cond_t work, idle;
    copy *head, *tail; /* queued, under lock */
    int busy;          /* the thread is writing one (taken off the queue) */
    int started, stop;
    pthread_t thread;
    pid_t owner; /* the process the thread runs in: a fork()ed child has no thread */
};

static void write_copy(pj_disk_cache *disk, const pj_logger *logger, const char *key,
                       const pj_artifact *artifact)
{
    if (pj_disk_cache_store_copy(disk, key, artifact) != PTXJIT_OK)
        pj_log(logger, PTXJIT_LOG_WARNING, "kernel not saved to the disk cache: %s",
               ptxjit_last_error());
}

static void *copier_main(void *arg)
{
    pj_copier *copier = arg;
    pthread_mutex_lock(&copier->lock);
    for (;;) {
        while (!copier->head && !copier->stop)
            pthread_cond_wait(&copier->work, &copier->lock);
        copy *next = copier->head;
        if (!next)
            break; /* stopping, nothing left */
        copier->head = next->next;
        if (!copier->head)
            copier->tail = NULL;
        copier->busy = 1;
        pthread_mutex_unlock(&copier->lock);
        write_copy(copier->disk, &copier->logger, next->key, next->artifact);
        free(next);
        pthread_mutex_lock(&copier->lock);
        copier->busy = 0;
        if (!copier->head)
            pthread_cond_broadcast(&copier->idle);
    }
    pthread_mutex_unlock(&copier->lock);
    return NULL;
}

/* The thread, with every signal blocked; without one (the system refused) each copy is
 * written by the request that made it. */
static void start_thread(pj_copier *copier)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    copier->started = pthread_create(&copier->thread, NULL, copier_main, copier) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    copier->owner = getpid();
}

/* Whether copies may be queued: the thread runs, in this process. In a child that fork()
 * made after ptxjit_open, the copier's memory is there but not its thread (nor, perhaps, a
 * consistent lock), so the child writes its copies itself and never waits for the queue. */
static int queue_usable(const pj_copier *copier)
{
    return copier->started && copier->owner == getpid();
}

pj_copier *pj_copier_new(pj_disk_cache *disk, const pj_logger *logger)
{
    pj_copier *copier = calloc(1, sizeof *copier);
    if (!copier)
        return NULL;
    copier->disk = disk;
    if (logger)
        copier->logger = *logger;
    pthread_mutex_init(&copier->lock, NULL);
    pthread_cond_init(&copier->work, NULL);
    pthread_cond_init(&copier->idle, NULL);
    start_thread(copier);
    return copier;
}

void pj_copier_add(pj_copier *copier, const char *key, const pj_artifact *artifact)
{
    copy *item = queue_usable(copier) ? calloc(1, sizeof *item) : NULL;
    if (!item) {
        write_copy(copier->disk, &copier->logger, key, artifact);
        return;
    }
    snprintf(item->key, sizeof item->key, "%s", key);
    item->artifact = artifact;
    pthread_mutex_lock(&copier->lock);
    if (copier->tail)
        copier->tail->next = item;
    else
        copier->head = item;
    copier->tail = item;
    pthread_cond_signal(&copier->work);
    pthread_mutex_unlock(&copier->lock);
}

int pj_copier_is_own_thread(const pj_copier *copier)
{
    return copier && copier->started && copier->owner == getpid() &&
           pthread_equal(pthread_self(), copier->thread);
}

void pj_copier_flush(pj_copier *copier)
{
    if (!copier || !queue_usable(copier) || pj_copier_is_own_thread(copier))
        return;
    pthread_mutex_lock(&copier->lock);
    while (copier->head || copier->busy)
        pthread_cond_wait(&copier->idle, &copier->lock);
    pthread_mutex_unlock(&copier->lock);
}

void pj_copier_free(pj_copier *copier)
{
    if (!copier)
        return;
    if (copier->started && copier->owner != getpid()) {
        free(copier); /* a fork()ed child's: the parent's thread and queue are not its own */
        return;
    }
    pthread_mutex_lock(&copier->lock);
    copier->stop = 1;
    pthread_cond_signal(&copier->work);
    int started = copier->started;
    pthread_mutex_unlock(&copier->lock);
    if (started)
        pthread_join(copier->thread, NULL); /* it writes what is queued first */
    pthread_cond_destroy(&copier->work);
    pthread_cond_destroy(&copier->idle);
    pthread_mutex_destroy(&copier->lock);
    free(copier);
}

/* copier.c — a queue of copies and the one thread that writes them. The thread blocks every
 * signal: the caller's handlers run on the caller's threads only. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    int started, failed, stop;
    pthread_t thread;
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
    return copier;
}

/* Under lock: the thread, started once. 0 when there is none (and will be none). */
static int have_thread(pj_copier *copier)
{
    if (!copier->started && !copier->failed) {
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        copier->started = pthread_create(&copier->thread, NULL, copier_main, copier) == 0;
        copier->failed = !copier->started;
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    return copier->started;
}

void pj_copier_add(pj_copier *copier, const char *key, const pj_artifact *artifact)
{
    copy *item = calloc(1, sizeof *item);
    int queued = 0;
    if (item) {
        snprintf(item->key, sizeof item->key, "%s", key);
        item->artifact = artifact;
        pthread_mutex_lock(&copier->lock);
        if ((queued = have_thread(copier))) {
            if (copier->tail)
                copier->tail->next = item;
            else
                copier->head = item;
            copier->tail = item;
            pthread_cond_signal(&copier->work);
        }
        pthread_mutex_unlock(&copier->lock);
    }
    if (!queued) {
        free(item);
        write_copy(copier->disk, &copier->logger, key, artifact);
    }
}

void pj_copier_flush(pj_copier *copier)
{
    if (!copier)
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

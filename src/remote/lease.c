/* lease.c — the fleet's compile lease: taken with the entry's GET in one round trip, renewed
 * by a thread while its holder compiles (the compile runs in NVRTC or LLVM and cannot stop to
 * do it), given up (marked so for a TTL) only when nothing was published. */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remote/lease.h"

struct pj_lease {
    pj_remote_link *link;
    char *name;
    char holder[320]; /* the value the lease holds while it is ours */
    int ttl_ms;
    int lost;        /* a renewal found another holder's: not renewed or deleted again */
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;        /* under lock */
    int renewing;    /* the thread was started */
    pthread_t thread;
};

/* "<host>:<pid>:<n>": whom the lease names, for a person looking at the server; no secret. */
static void holder_id(char out[320])
{
    static unsigned counter;
    char host[256] = "";
    if (gethostname(host, sizeof host - 1) != 0)
        snprintf(host, sizeof host, "?");
    snprintf(out, 320, "%s:%ld:%u", host, (long)getpid(),
             __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED));
}

/* Renews every third of the TTL until told to stop: a missed renewal or two (a busy machine)
 * does not lose the lease. */
static void *renew_main(void *arg)
{
    pj_lease *lease = arg;
    pthread_mutex_lock(&lease->lock);
    while (!lease->stop) {
        struct timespec at;
        clock_gettime(CLOCK_MONOTONIC, &at);
        long step_ns = (long)(lease->ttl_ms / 3 > 0 ? lease->ttl_ms / 3 : 1) * 1000000;
        at.tv_sec += step_ns / 1000000000;
        at.tv_nsec += step_ns % 1000000000;
        if (at.tv_nsec >= 1000000000) {
            at.tv_sec++;
            at.tv_nsec -= 1000000000;
        }
        if (pthread_cond_timedwait(&lease->wake, &lease->lock, &at) == ETIMEDOUT &&
            !lease->stop) {
            pthread_mutex_unlock(&lease->lock);
            int held = 1;
            pj_link_result result =
                pj_link_expire_held(lease->link, lease->name, lease->holder, lease->ttl_ms, &held);
            pthread_mutex_lock(&lease->lock);
            if (result == PJ_LINK_OK && !held) {
                lease->lost = 1; /* expired, and another node's now: it compiles too */
                break;
            }
        }
    }
    pthread_mutex_unlock(&lease->lock);
    return NULL;
}

/* The renewing thread, with every signal blocked: the caller's handlers run on its own
 * threads only. Without a thread (the system refused one) the lease is not renewed, and a
 * long compile may be duplicated by a node that takes it over: slower, never wrong. */
static void start_renewing(pj_lease *lease)
{
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&lease->wake, &attributes);
    pthread_condattr_destroy(&attributes);
    pthread_mutex_init(&lease->lock, NULL);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    lease->renewing = pthread_create(&lease->thread, NULL, renew_main, lease) == 0;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static pj_lease *lease_new(pj_remote_link *link, const char *name, const char *holder,
                           int ttl_ms)
{
    pj_lease *lease = calloc(1, sizeof *lease);
    if (lease && !(lease->name = pj_strdup(name))) {
        free(lease);
        return NULL;
    }
    if (lease) {
        lease->link = link;
        snprintf(lease->holder, sizeof lease->holder, "%s", holder);
        lease->ttl_ms = ttl_ms;
        start_renewing(lease);
    }
    return lease;
}

pj_claim_result pj_lease_claim(pj_lease **lease, char **value, size_t *size,
                               pj_remote_link *link, const char *lease_name, const char *name,
                               int ttl_ms)
{
    char holder[320];
    int won = 0;
    *lease = NULL;
    *value = NULL;
    *size = 0;
    holder_id(holder);
    int given_up = 0;
    pj_link_result result = pj_link_claim(link, lease_name, holder, ttl_ms, name, &won,
                                          &given_up, value, size);
    if (result == PJ_LINK_OK)
        return PJ_CLAIM_ENTRY;
    if (result != PJ_LINK_NIL)
        return result == PJ_LINK_DOWN ? PJ_CLAIM_DOWN : PJ_CLAIM_FAILED;
    if (!won)
        return given_up ? PJ_CLAIM_GIVEN_UP : PJ_CLAIM_TAKEN;
    /* Out of memory here leaves the lease unrenewed, to expire: as a holder that died. */
    *lease = lease_new(link, lease_name, holder, ttl_ms);
    return PJ_CLAIM_WON;
}

void pj_lease_end(pj_lease *lease, int drop)
{
    if (!lease)
        return;
    if (lease->renewing) {
        pthread_mutex_lock(&lease->lock);
        lease->stop = 1;
        pthread_cond_signal(&lease->wake);
        pthread_mutex_unlock(&lease->lock);
        pthread_join(lease->thread, NULL);
    }
    pthread_cond_destroy(&lease->wake);
    pthread_mutex_destroy(&lease->lock);
    int held;
    if (drop && !lease->lost) /* the thread has ended: lost is settled */
        (void)pj_link_give_up_held(lease->link, lease->name, lease->holder, lease->ttl_ms,
                                   &held);
    free(lease->name);
    free(lease);
}

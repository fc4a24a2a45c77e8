/* lease.c — the fleet's compile lease: taken with the entry's GET in one round trip, renewed
 * by a thread while its holder compiles (the compile runs in NVRTC or LLVM and cannot stop to
 * do it), given up (marked so for a TTL) only when nothing was published; a stale one (its
 * value unchanged for a TTL) removed by the waiter that saw it so. */
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
    char holder[320]; /* whose the lease is: its value is "<holder>/<renewal>" while ours */
    unsigned renewals;
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
 * does not lose the lease. Each renewal writes the next number: the waiters see the holder
 * is alive. */
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
            char next[340];
            snprintf(next, sizeof next, "%s" PJ_LEASE_RENEWAL "%u", lease->holder,
                     ++lease->renewals);
            pj_link_result result = pj_link_renew_held(lease->link, lease->name, lease->holder,
                                                       next, lease->ttl_ms, &held);
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

/* ---- waiting: stale leases ---- */

/* Leases this process found stale, as hashes of their name and value: one planted again with
 * the same value (a writer's loop) is removed at once, not watched for another TTL. */
#define STALE_KEPT 64
static uint64_t stale_seen[STALE_KEPT];
static unsigned stale_next;
static pthread_mutex_t stale_lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t stale_hash(const char *lease_name, const char *held, size_t size)
{
    return pj_hash64(held, size, pj_hash64(lease_name, strlen(lease_name), 0));
}

static int known_stale(uint64_t hash)
{
    int known = 0;
    pthread_mutex_lock(&stale_lock);
    for (int i = 0; i < STALE_KEPT && !known; i++)
        known = stale_seen[i] == hash;
    pthread_mutex_unlock(&stale_lock);
    return known;
}

static void remember_stale(uint64_t hash)
{
    pthread_mutex_lock(&stale_lock);
    stale_seen[stale_next++ % STALE_KEPT] = hash;
    pthread_mutex_unlock(&stale_lock);
}

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

void pj_lease_watch_free(pj_lease_watch *watch)
{
    free(watch->held);
    memset(watch, 0, sizeof *watch);
}

/* Whether the lease's value held is stale: watched unchanged for longer than ttl_ms, or found
 * stale before. A live holder writes a new value every third of a TTL; the value it wrote
 * last expires a TTL after it was written at most, so a node that sees it unchanged for a
 * TTL of its own sees a holder that stopped renewing, or a lease no node of the fleet set. */
static int stale(pj_lease_watch *watch, const char *lease_name, const char *held, size_t size,
                 int ttl_ms)
{
    if (known_stale(stale_hash(lease_name, held, size)))
        return 1;
    int64_t now = now_ms();
    if (watch->held && watch->held_size == size && memcmp(watch->held, held, size) == 0)
        return now - watch->since_ms > ttl_ms;
    free(watch->held); /* a new value: the holder is alive, or a new one took it */
    watch->held = malloc(size ? size : 1);
    watch->held_size = size;
    watch->since_ms = now;
    if (watch->held)
        memcpy(watch->held, held, size);
    return 0;
}

/* One claim round trip, as a claim result. */
static pj_claim_result claim_once(pj_link_claimed *claimed, pj_remote_link *link,
                                  const char *lease_name, const char *value, int ttl_ms,
                                  const char *name)
{
    pj_link_result result = pj_link_claim(link, lease_name, value, ttl_ms, name, claimed);
    if (result == PJ_LINK_OK)
        return PJ_CLAIM_ENTRY;
    if (result == PJ_LINK_TOO_BIG)
        return PJ_CLAIM_TOO_BIG;
    if (result != PJ_LINK_NIL)
        return result == PJ_LINK_DOWN ? PJ_CLAIM_DOWN : PJ_CLAIM_FAILED;
    if (!claimed->won)
        return claimed->given_up ? PJ_CLAIM_GIVEN_UP : PJ_CLAIM_TAKEN;
    return PJ_CLAIM_WON;
}

/* A stale lease: remembered, removed while it still holds that value, then claimed again.
 * Without scripts it cannot be removed safely: STALE, and the caller compiles alone. */
static pj_claim_result take_over(pj_link_claimed *claimed, pj_remote_link *link,
                                 const char *lease_name, const char *value, int ttl_ms,
                                 const char *name)
{
    remember_stale(stale_hash(lease_name, claimed->held, claimed->held_size));
    int removed = 0;
    pj_link_result result =
        pj_link_remove_stale(link, lease_name, claimed->held, claimed->held_size, &removed);
    if (result != PJ_LINK_OK)
        return result == PJ_LINK_DOWN ? PJ_CLAIM_DOWN : PJ_CLAIM_FAILED;
    if (removed < 0)
        return PJ_CLAIM_STALE;
    if (removed == 0) /* renewed or replaced meanwhile: watched as a new value next round */
        return PJ_CLAIM_TAKEN;
    free(claimed->held);
    return claim_once(claimed, link, lease_name, value, ttl_ms, name);
}

pj_claim_result pj_lease_claim(pj_lease **lease, char **value, size_t *size,
                               pj_remote_link *link, const char *lease_name, const char *name,
                               int ttl_ms, pj_lease_watch *watch)
{
    char holder[320], first[340];
    pj_link_claimed claimed;
    *lease = NULL;
    *value = NULL;
    *size = 0;
    holder_id(holder);
    snprintf(first, sizeof first, "%s" PJ_LEASE_RENEWAL "0", holder);
    pj_claim_result result = claim_once(&claimed, link, lease_name, first, ttl_ms, name);
    if (result == PJ_CLAIM_TAKEN && watch && claimed.held &&
        stale(watch, lease_name, claimed.held, claimed.held_size, ttl_ms))
        result = take_over(&claimed, link, lease_name, first, ttl_ms, name);
    free(claimed.held);
    if (result == PJ_CLAIM_ENTRY) {
        *value = claimed.value;
        *size = claimed.size;
    }
    /* Out of memory here leaves the lease unrenewed, to expire: as a holder that died. */
    if (result == PJ_CLAIM_WON)
        *lease = lease_new(link, lease_name, holder, ttl_ms);
    return result;
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

/* test_remote_lease.c — a compile lease that nobody renews delays a waiting node one lease TTL,
 * not the whole compile wait: one planted in Redis without an expiry, or with a huge one, is
 * found stale (its value unchanged for a TTL), removed and taken; planted again with the same
 * value it is not waited for again; a server that refuses EVAL leaves it in place and the
 * waiter compiles alone. A holder that renews is waited for, however long it compiles. Against
 * a real redis-server, at pj_remote_claim: the request path's wait. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cache/entry.h"
#include "redis_server.h"
#include "remote/connection.h"
#include "remote/lease.h"
#include "remote/remote.h"
#include "test_util.h"

#define TTL_MS 300
#define WAIT_MS 30000 /* the compile wait's default: what a planted lease used to cost */
#define SLACK_MS 700

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static const char *const keys[] = {"0123456789abcdef0123456789abcde0",
                                   "0123456789abcdef0123456789abcde1",
                                   "0123456789abcdef0123456789abcde2"};

/* The Redis name of key's kernel lease (remote.c names it so). */
static void lease_of(char out[128], const char *key)
{
    snprintf(out, 128, "ptxjit:v%d:lease:%s", PJ_ENTRY_FORMAT_VERSION, key);
}

/* pj_remote_claim of key with the compile wait's default; how long it took. *kept: the lease
 * won, still held (renewed by its thread) for the caller to look at and end; NULL: ended at
 * once, as if published, and left to expire. */
static int64_t claim_keeping(pj_remote *remote, const char *key, pj_remote_claim_result expected,
                             struct pj_lease **kept)
{
    struct pj_lease *lease = NULL;
    pj_artifact artifact;
    int64_t started = now_ms();
    pj_remote_claim_result result =
        pj_remote_claim(&lease, &artifact, remote, PJ_REMOTE_KERNEL, key, WAIT_MS, NULL, NULL);
    int64_t took = now_ms() - started;
    ck_assert_msg(result == expected, "claim of %s: %d, not %d, after %lld ms", key, result,
                  expected, (long long)took);
    if (kept)
        *kept = lease;
    else
        pj_remote_lease_end(lease, 1); /* as if published: the lease is left to expire */
    return took;
}

static int64_t claim(pj_remote *remote, const char *key, pj_remote_claim_result expected)
{
    return claim_keeping(remote, key, expected, NULL);
}

static pj_remote *open_tier(void)
{
    pj_remote *remote = NULL;
    ck_assert_int_eq(pj_remote_open(&remote, NULL, TTL_MS, NULL, NULL), PTXJIT_OK);
    ck_assert_ptr_nonnull(remote);
    return remote;
}

START_TEST(a_lease_nobody_renews_delays_a_waiter_one_ttl)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "a_lease_nobody_renews_delays_a_waiter_one_ttl"))
        return;
    pj_remote *remote = open_tier();
    char lease[128], command[256];

    /* No expiry: no ptxjit node sets one so; stale after one TTL of watching. */
    lease_of(lease, keys[0]);
    test_redis_set(&r, lease, "planted", 7);
    struct pj_lease *kept = NULL;
    int64_t took = claim_keeping(remote, keys[0], PJ_REMOTE_LEASED, &kept);
    ck_assert_msg(took >= TTL_MS - 50 && took < TTL_MS + SLACK_MS, "%lld ms", (long long)took);
    /* Looked at while held (its renewals keep it however slow this run is: valgrind). */
    size_t size = 0;
    char *held = test_redis_get(&r, lease, &size);
    ck_assert_ptr_nonnull(held);
    ck_assert_str_ne(held, "planted"); /* removed, and taken by this node */
    free(held);
    snprintf(command, sizeof command, "PTTL %s", lease);
    ck_assert_int_gt(test_redis_integer(&r, command), 0);
    pj_remote_lease_end(kept, 1);

    /* Planted again, the same: known stale, not waited for again. */
    test_redis_set(&r, lease, "planted", 7);
    took = claim(remote, keys[0], PJ_REMOTE_LEASED);
    ck_assert_msg(took < TTL_MS - 50, "waited %lld ms for a lease known stale", (long long)took);

    /* A huge expiry is no better. */
    lease_of(lease, keys[1]);
    snprintf(command, sizeof command, "SET %s planted-too PX 86400000", lease);
    test_redis_integer(&r, command);
    took = claim(remote, keys[1], PJ_REMOTE_LEASED);
    ck_assert_msg(took >= TTL_MS - 50 && took < TTL_MS + SLACK_MS, "%lld ms", (long long)took);

    ptxjit_cache_stats stats = {0};
    pj_remote_stats_fill(remote, &stats);
    ck_assert_uint_eq(stats.lease_waits, 2);    /* the first sight of each stale lease */
    ck_assert_uint_eq(stats.lease_timeouts, 2); /* taken over, not handed an entry */
    ck_assert_uint_eq(stats.lease_wins, 1);     /* the one known stale: taken at once */
    pj_remote_close(remote);
    test_redis_stop(&r);
}
END_TEST

/* Without EVAL a stale lease cannot be removed only while it holds the value seen (a plain
 * DEL could remove a live holder's): the waiter leaves it and compiles alone, after one TTL,
 * and at once for the same value after that. */
START_TEST(a_stale_lease_without_eval_is_compiled_around)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "a_stale_lease_without_eval_is_compiled_around"))
        return;
    test_redis_integer(&r, "ACL SETUSER default -eval -evalsha");
    pj_remote *remote = open_tier();
    char lease[128];
    lease_of(lease, keys[2]);
    test_redis_set(&r, lease, "planted", 7);
    int64_t took = claim(remote, keys[2], PJ_REMOTE_ALONE);
    ck_assert_msg(took >= TTL_MS - 50 && took < TTL_MS + SLACK_MS, "%lld ms", (long long)took);
    took = claim(remote, keys[2], PJ_REMOTE_ALONE);
    ck_assert_msg(took < TTL_MS - 50, "waited %lld ms for a lease known stale", (long long)took);
    size_t size = 0;
    char *held = test_redis_get(&r, lease, &size);
    ck_assert_str_eq(held, "planted");
    free(held);
    pj_remote_close(remote);
    test_redis_stop(&r);
}
END_TEST

/* A holder that renews (a compile longer than the TTL) keeps its lease: a waiter waits for it
 * to the end of the compile wait, well past one TTL, and the lease is still the holder's. */
START_TEST(a_renewing_holder_is_waited_for_past_its_ttl)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "a_renewing_holder_is_waited_for_past_its_ttl"))
        return;
    pj_remote *remote = open_tier();
    pj_remote_config config;
    int configured = 0;
    ck_assert_int_eq(pj_remote_config_read(&config, &configured, r.url), PTXJIT_OK);
    pj_remote_link *link = NULL;
    ck_assert_int_eq(pj_link_open(&link, &config, NULL), PTXJIT_OK);
    char lease_name[128], name[128];
    lease_of(lease_name, keys[0]);
    snprintf(name, sizeof name, "ptxjit:v%d:kernel:%s", PJ_ENTRY_FORMAT_VERSION, keys[0]);
    pj_lease *held = NULL;
    char *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(pj_lease_claim(&held, &value, &size, link, lease_name, name, TTL_MS, NULL),
                     PJ_CLAIM_WON);
    const int wait_ms = 5 * TTL_MS;
    struct pj_lease *lease = NULL;
    pj_artifact artifact;
    int64_t started = now_ms();
    ck_assert_int_eq(pj_remote_claim(&lease, &artifact, remote, PJ_REMOTE_KERNEL, keys[0],
                                     wait_ms, NULL, NULL),
                     PJ_REMOTE_ALONE);
    int64_t took = now_ms() - started;
    ck_assert_msg(took >= wait_ms - 50, "gave up on a live holder after %lld ms",
                  (long long)took);
    char *holder = test_redis_get(&r, lease_name, &size);
    ck_assert_ptr_nonnull(holder);
    ck_assert_msg(strstr(holder, PJ_LEASE_RENEWAL) && strcmp(strstr(holder, "/"), "/0") != 0,
                  "the lease was not renewed: %s", holder);
    free(holder);
    pj_lease_end(held, 0);
    pj_link_close(link);
    pj_remote_config_free(&config);
    pj_remote_close(remote);
    test_redis_stop(&r);
}
END_TEST

Suite *suite_remote_lease(void)
{
    Suite *s = suite_create("remote_lease");
    TCase *tc = tcase_create("remote_lease");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_lease_nobody_renews_delays_a_waiter_one_ttl);
    tcase_add_test(tc, a_stale_lease_without_eval_is_compiled_around);
    tcase_add_test(tc, a_renewing_holder_is_waited_for_past_its_ttl);
    suite_add_tcase(s, tc);
    return s;
}

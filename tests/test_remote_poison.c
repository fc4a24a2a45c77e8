/* test_remote_poison.c — nobody who can write to the Redis server can make a node load their
 * code: values with a forged signature, signed with another key, with a flipped bit, cut
 * short, unsigned, or a valid value of another key moved under this one, are each rejected,
 * counted, and the kernel compiled locally (its bytes are the local compile's); the honest
 * result then replaces the poison on the server. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/entry.h"
#include "redis_server.h"
#include "remote/envelope.h"
#include "remote/remote.h"
#include "test_util.h"

#define PARAMS "variant=one_pass tpb=256"
#define OTHER "variant=two_pass tpb=256"

typedef struct {
    test_redis redis;
    char *name;         /* the Redis key of PARAMS's kernel */
    char *honest;       /* the value node A published */
    size_t honest_size;
    char *other;        /* the value published for OTHER (validly signed, another key) */
    size_t other_size;
    char *cubin;        /* the local compile's cubin */
    size_t cubin_size;
    int nodes;
} poison;

static ptxjit_context *open_node(poison *p)
{
    char dir[4300];
    snprintf(dir, sizeof dir, "%s/node%d", p->redis.dir, p->nodes++);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = dir;
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static int setup(poison *p, const char *test)
{
    memset(p, 0, sizeof *p);
    if (!test_redis_start(&p->redis, test))
        return 0;
    ptxjit_context *a = open_node(p);
    ptxjit_kernel *kernel, *other;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, a, "reduce", PARAMS, NULL), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_get_kernel(&other, a, "reduce", OTHER, NULL), PTXJIT_OK);
    p->name = pj_remote_name(PJ_REMOTE_KERNEL, ptxjit_kernel_key(kernel));
    char *other_name = pj_remote_name(PJ_REMOTE_KERNEL, ptxjit_kernel_key(other));
    p->honest = test_redis_get(&p->redis, p->name, &p->honest_size);
    p->other = test_redis_get(&p->redis, other_name, &p->other_size);
    ck_assert_ptr_nonnull(p->honest);
    ck_assert_ptr_nonnull(p->other);
    const void *cubin = ptxjit_kernel_cubin(kernel, &p->cubin_size);
    p->cubin = malloc(p->cubin_size);
    memcpy(p->cubin, cubin, p->cubin_size);
    free(other_name);
    ptxjit_close(a);
    return 1;
}

static void teardown(poison *p)
{
    free(p->name);
    free(p->honest);
    free(p->other);
    free(p->cubin);
    test_redis_stop(&p->redis);
}

/* The honest entry with its cubin changed (the attacker's code) and its checksum made right
 * again: only the signature can tell. Caller frees. */
static char *evil_entry(const poison *p, size_t *size)
{
    const char *entry = p->honest + PJ_ENVELOPE_HEADER_SIZE;
    pj_artifact a;
    const char *why;
    const char *key = strrchr(p->name, ':') + 1;
    ck_assert_int_eq(pj_entry_decode(&a, &why, entry, p->honest_size - PJ_ENVELOPE_HEADER_SIZE,
                                     key),
                     PTXJIT_OK);
    a.cubin[a.cubin_size / 2] ^= 0xff;
    char *evil = pj_entry_encode(size, key, &a);
    pj_artifact_free(&a);
    return evil;
}

/* Puts value under the kernel's name; a fresh node must compile (never load it), get the
 * local compile's bytes, count one rejection, and replace the value with the honest one. */
static void expect_rejected(poison *p, const char *value, size_t size)
{
    test_redis_set(&p->redis, p->name, value, size);
    ptxjit_context *node = open_node(p);
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, node, "reduce", PARAMS, &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    size_t cubin_size;
    const void *cubin = ptxjit_kernel_cubin(kernel, &cubin_size);
    ck_assert_uint_eq(cubin_size, p->cubin_size);
    ck_assert_int_eq(memcmp(cubin, p->cubin, cubin_size), 0);
    ptxjit_cache_stats s;
    ck_assert_int_eq(ptxjit_cache_stats_get(&s, node), PTXJIT_OK);
    ck_assert_uint_eq(s.remote_rejected, 1);
    ck_assert_uint_eq(s.remote_hits, 0);
    ptxjit_close(node);
    size_t now_size;
    char *now = test_redis_get(&p->redis, p->name, &now_size);
    ck_assert_uint_eq(now_size, p->honest_size);
    ck_assert_int_eq(memcmp(now, p->honest, now_size), 0);
    free(now);
}

START_TEST(forged_signature_is_rejected)
{
    poison p;
    if (!setup(&p, "forged_signature_is_rejected"))
        return;
    size_t evil_size, size;
    char *evil = evil_entry(&p, &evil_size);
    unsigned char guess[32] = {1, 2, 3};
    char *value = pj_envelope_seal(&size, guess, sizeof guess, p.name, evil, evil_size);
    memcpy(value + 16, p.honest + 16, 8); /* the fleet key's id, which is no secret */
    expect_rejected(&p, value, size);
    free(value);
    free(evil);
    teardown(&p);
}
END_TEST

START_TEST(entry_signed_with_another_key_is_rejected)
{
    poison p;
    if (!setup(&p, "entry_signed_with_another_key_is_rejected"))
        return;
    size_t evil_size, size;
    char *evil = evil_entry(&p, &evil_size);
    unsigned char other_key[32] = {42};
    char *value = pj_envelope_seal(&size, other_key, sizeof other_key, p.name, evil, evil_size);
    expect_rejected(&p, value, size);
    free(value);
    free(evil);
    teardown(&p);
}
END_TEST

START_TEST(unsigned_entry_is_rejected)
{
    poison p;
    if (!setup(&p, "unsigned_entry_is_rejected"))
        return;
    size_t evil_size, size;
    char *evil = evil_entry(&p, &evil_size);
    char *value = pj_envelope_seal(&size, NULL, 0, p.name, evil, evil_size);
    expect_rejected(&p, value, size);
    free(value);
    free(evil);
    teardown(&p);
}
END_TEST

START_TEST(flipped_bit_is_rejected)
{
    poison p;
    if (!setup(&p, "flipped_bit_is_rejected"))
        return;
    size_t offsets[] = {0, 20, 40, PJ_ENVELOPE_HEADER_SIZE + 100, p.honest_size / 2,
                        p.honest_size - 1};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(offsets); i++) {
        char *value = malloc(p.honest_size);
        memcpy(value, p.honest, p.honest_size);
        value[offsets[i]] ^= 0x04;
        expect_rejected(&p, value, p.honest_size);
        free(value);
    }
    teardown(&p);
}
END_TEST

START_TEST(truncated_value_is_rejected)
{
    poison p;
    if (!setup(&p, "truncated_value_is_rejected"))
        return;
    size_t sizes[] = {0, 7, PJ_ENVELOPE_HEADER_SIZE, p.honest_size / 2, p.honest_size - 1};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(sizes); i++)
        expect_rejected(&p, p.honest, sizes[i]);
    teardown(&p);
}
END_TEST

START_TEST(valid_entry_of_another_key_is_rejected)
{
    poison p;
    if (!setup(&p, "valid_entry_of_another_key_is_rejected"))
        return;
    expect_rejected(&p, p.other, p.other_size);
    teardown(&p);
}
END_TEST

/* A node with another fleet key rejects the honest entries too: keys do not mix. */
START_TEST(node_with_another_key_rejects_honest_entries)
{
    poison p;
    if (!setup(&p, "node_with_another_key_rejects_honest_entries"))
        return;
    char *key = test_redis_secret_file(&p.redis, "another.key", 32);
    setenv("PTXJIT_REMOTE_CACHE_KEY_FILE", key, 1);
    ptxjit_context *node = open_node(&p);
    ptxjit_origin origin;
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, node, "reduce", PARAMS, &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    ptxjit_cache_stats s;
    ck_assert_int_eq(ptxjit_cache_stats_get(&s, node), PTXJIT_OK);
    ck_assert_uint_eq(s.remote_rejected, 1);
    ptxjit_close(node);
    free(key);
    teardown(&p);
}
END_TEST

Suite *suite_remote_poison(void)
{
    Suite *s = suite_create("remote_poison");
    TCase *tc = tcase_create("remote_poison");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, forged_signature_is_rejected);
    tcase_add_test(tc, entry_signed_with_another_key_is_rejected);
    tcase_add_test(tc, unsigned_entry_is_rejected);
    tcase_add_test(tc, flipped_bit_is_rejected);
    tcase_add_test(tc, truncated_value_is_rejected);
    tcase_add_test(tc, valid_entry_of_another_key_is_rejected);
    tcase_add_test(tc, node_with_another_key_rejects_honest_entries);
    suite_add_tcase(s, tc);
    return s;
}

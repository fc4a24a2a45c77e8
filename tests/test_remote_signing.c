/* test_remote_signing.c — the remote tier's signing, through nettle loaded with dlopen: the
 * entry points bound are the right ones (known answers: RFC 4231, FIPS 180-2, and the
 * envelope's own bytes from an independent implementation), and nettle is loaded for the
 * signed mode only: a signed node that cannot load it fails the open naming the package and
 * the variable; an unsigned one never needs it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "redis_server.h"
#include "remote/envelope.h"
#include "remote/nettle.h"
#include "test_util.h"

#define MISSING_NETTLE "/nonexistent/libnettle.so.8"

/* bytes as lowercase hex, for messages that show what differs. */
static void hex(char *out, const void *bytes, size_t size)
{
    for (size_t i = 0; i < size; i++)
        sprintf(out + 2 * i, "%02x", ((const unsigned char *)bytes)[i]);
    out[2 * size] = '\0';
}

static const char rfc_key[] = "Jefe";
static const char rfc_data[] = "what do ya want for nothing?";

/* A binding to the wrong symbol (sha224 for sha256, update for digest) cannot pass these. */
START_TEST(the_loaded_nettle_gives_the_known_answers)
{
    const pj_nettle *nettle;
    ck_assert_msg(pj_nettle_load(&nettle) == PTXJIT_OK, "%s", ptxjit_last_error());
    uint8_t digest[SHA256_DIGEST_SIZE];
    char text[2 * SHA256_DIGEST_SIZE + 1];

    struct hmac_sha256_ctx mac; /* RFC 4231, test case 2 */
    nettle->mac_set_key(&mac, strlen(rfc_key), (const uint8_t *)rfc_key);
    nettle->mac_update(&mac, strlen(rfc_data), (const uint8_t *)rfc_data);
    nettle->mac_digest(&mac, sizeof digest, digest);
    hex(text, digest, sizeof digest);
    ck_assert_str_eq(text, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");

    struct sha256_ctx hash; /* FIPS 180-2, "abc" */
    nettle->hash_init(&hash);
    nettle->hash_update(&hash, 3, (const uint8_t *)"abc");
    nettle->hash_digest(&hash, sizeof digest, digest);
    hex(text, digest, sizeof digest);
    ck_assert_str_eq(text, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");

    ck_assert_int_eq(nettle->equal("abcd", "abcd", 4), 1);
    ck_assert_int_eq(nettle->equal("abcd", "abce", 4), 0);
}
END_TEST

/* The envelope's key id and HMAC, as Python's hashlib and hmac compute them:
 *   sha256(b"ptxjit remote cache key id\0" + key)[:8]
 *   hmac(key, struct.pack("<Q", len(name)) + name + entry, sha256) */
START_TEST(the_envelope_signs_as_an_independent_hmac_does)
{
    static const char name[] = "ptxjit:v1:kernel:test";
    size_t size;
    char *value = pj_envelope_seal(&size, (const unsigned char *)rfc_key, strlen(rfc_key), name,
                                   rfc_data, strlen(rfc_data));
    ck_assert_msg(value != NULL, "%s", ptxjit_last_error());
    ck_assert_uint_eq(size, PJ_ENVELOPE_HEADER_SIZE + strlen(rfc_data));
    char text[2 * SHA256_DIGEST_SIZE + 1];
    hex(text, value + 16, 8);
    ck_assert_str_eq(text, "2fea4fe70f7d0595");
    hex(text, value + 24, SHA256_DIGEST_SIZE);
    ck_assert_str_eq(text, "d09965c7bd82f476af3b77e82a4d141921c773b34297732fa68a314f61429996");
    const char *entry;
    size_t entry_size;
    ck_assert_ptr_null(pj_envelope_open(&entry, &entry_size, (const unsigned char *)rfc_key,
                                        strlen(rfc_key), name, value, size));
    value[size - 1] ^= 1;
    ck_assert_ptr_nonnull(pj_envelope_open(&entry, &entry_size, (const unsigned char *)rfc_key,
                                           strlen(rfc_key), name, value, size));
    free(value);
}
END_TEST

static ptxjit_status open_node(ptxjit_context **context, const char *cache_dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = cache_dir;
    options.process_cache = 0; /* a node is a machine of its own: nothing shared in memory */
    *context = NULL;
    return ptxjit_open(context, &options);
}

static void expect_in_error(const char *needle)
{
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "'%s' lacks '%s'", ptxjit_last_error(),
                  needle);
}

/* Two unsigned nodes on a private server share a kernel, nettle missing all along. */
static void unsigned_nodes_share_a_kernel(void)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "nettle_is_loaded_for_the_signed_mode_only (its Redis half)"))
        return;
    unsetenv("PTXJIT_REMOTE_CACHE_KEY_FILE");
    setenv("PTXJIT_REMOTE_CACHE_UNSIGNED", "1", 1);
    char a_dir[4300], b_dir[4300];
    snprintf(a_dir, sizeof a_dir, "%s/a", r.dir);
    snprintf(b_dir, sizeof b_dir, "%s/b", r.dir);
    ptxjit_context *a, *b;
    ck_assert_msg(open_node(&a, a_dir) == PTXJIT_OK, "%s", ptxjit_last_error());
    ck_assert_msg(open_node(&b, b_dir) == PTXJIT_OK, "%s", ptxjit_last_error());
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, a, "reduce", "variant=one_pass", &origin),
                     PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, b, "reduce", "variant=one_pass", &origin),
                     PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_REMOTE);
    ptxjit_close(a);
    ptxjit_close(b);
    test_redis_stop(&r);
}

/* Each Check test runs in its own process: nettle has not been loaded yet. */
START_TEST(nettle_is_loaded_for_the_signed_mode_only)
{
    setenv("PTXJIT_NETTLE_LIBRARY", MISSING_NETTLE, 1);
    char *dir = test_mkdtemp();
    char key[4300];
    snprintf(key, sizeof key, "%s/key", dir);
    FILE *f = fopen(key, "w");
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    chmod(key, 0600);
    /* Signed: the open fails (the server is not contacted, nobody needs to listen). */
    setenv("PTXJIT_REMOTE_CACHE", "unix:///nonexistent/redis.sock", 1);
    setenv("PTXJIT_REMOTE_CACHE_KEY_FILE", key, 1);
    unsetenv("PTXJIT_REMOTE_CACHE_UNSIGNED");
    ptxjit_context *context;
    ck_assert_int_eq(open_node(&context, dir), PTXJIT_ERR_CACHE);
    ck_assert_ptr_null(context);
    expect_in_error("remote cache unix:///nonexistent/redis.sock");
    expect_in_error("cannot load nettle (tried " MISSING_NETTLE ")");
    expect_in_error("HMAC-SHA-256");
    expect_in_error("apt-get install libnettle8");
    expect_in_error("PTXJIT_NETTLE_LIBRARY");
    /* Unsigned: opens, and shares kernels through a real server. */
    unsetenv("PTXJIT_REMOTE_CACHE_KEY_FILE");
    setenv("PTXJIT_REMOTE_CACHE_UNSIGNED", "1", 1);
    ck_assert_msg(open_node(&context, dir) == PTXJIT_OK, "%s", ptxjit_last_error());
    ptxjit_close(context);
    unsigned_nodes_share_a_kernel();
    unsetenv("PTXJIT_REMOTE_CACHE_UNSIGNED");
    unsetenv("PTXJIT_NETTLE_LIBRARY");
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_remote_signing(void)
{
    Suite *s = suite_create("remote_signing");
    TCase *tc = tcase_create("remote_signing");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, the_loaded_nettle_gives_the_known_answers);
    tcase_add_test(tc, the_envelope_signs_as_an_independent_hmac_does);
    tcase_add_test(tc, nettle_is_loaded_for_the_signed_mode_only);
    suite_add_tcase(s, tc);
    return s;
}

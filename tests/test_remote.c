/* test_remote.c — the remote cache tier against a real redis-server: configuration refused
 * loudly, two nodes sharing kernels and tuning records, AUTH, the size limit, and faults (no
 * server, a server killed and restarted mid-run) that never fail a request. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/disk.h"
#include "redis_server.h"
#include "remote/config.h"
#include "remote/connection.h"
#include "remote/lease.h"
#include "remote/remote.h"
#include "test_util.h"
#include "records/record.h"

static ptxjit_context *open_node(const char *cache_dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = cache_dir;
    options.process_cache = 0; /* a node is a machine of its own: nothing shared in memory */
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static char *node_dir(const char *base, const char *name)
{
    char *path = malloc(4300);
    snprintf(path, 4300, "%s/%s", base, name);
    return path;
}

static ptxjit_kernel *get(ptxjit_context *context, const char *params, ptxjit_origin expected)
{
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "reduce", params, &origin) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    ck_assert_int_eq(origin, expected);
    return kernel;
}

static ptxjit_cache_stats stats_of(ptxjit_context *context)
{
    ptxjit_cache_stats s;
    ck_assert_int_eq(ptxjit_cache_stats_get(&s, context), PTXJIT_OK);
    return s;
}

START_TEST(url_forms_parse_and_bad_ones_name_the_fix)
{
    pj_remote_config c = {0};
    ck_assert_int_eq(pj_remote_url_parse(&c, "redis://cache.local:6380/2"), PTXJIT_OK);
    ck_assert_str_eq(c.host, "cache.local");
    ck_assert_int_eq(c.port, 6380);
    ck_assert_int_eq(c.db, 2);
    pj_remote_config_free(&c);
    ck_assert_int_eq(pj_remote_url_parse(&c, "unix:///run/redis.sock?db=3"), PTXJIT_OK);
    ck_assert_str_eq(c.socket_path, "/run/redis.sock");
    ck_assert_int_eq(c.db, 3);
    pj_remote_config_free(&c);
    const char *bad[] = {"http://x:1", "redis://host", "redis://:80", "redis://h:0",
                         "redis://h:99999", "redis://h:80/x", "unix://relative",
                         "unix:///s?database=1"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(bad); i++) {
        ck_assert_int_eq(pj_remote_url_parse(&c, bad[i]), PTXJIT_ERR_CACHE);
        ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "redis://HOST:PORT"));
        pj_remote_config_free(&c);
    }
}
END_TEST

/* A remote that cannot be trusted fails the open; the message names the fix. */
static void expect_open_refused(const char *needle)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_CACHE);
    ck_assert_ptr_null(context);
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "'%s' lacks '%s'", ptxjit_last_error(),
                  needle);
}

START_TEST(untrusted_configuration_fails_the_open)
{
    char *dir = test_mkdtemp();
    char key[4300];
    snprintf(key, sizeof key, "%s/key", dir);
    setenv("PTXJIT_REMOTE_CACHE", "unix:///nonexistent/redis.sock", 1);
    unsetenv("PTXJIT_REMOTE_CACHE_KEY_FILE");
    unsetenv("PTXJIT_REMOTE_CACHE_UNSIGNED");
    expect_open_refused("PTXJIT_REMOTE_CACHE_UNSIGNED=1");
    setenv("PTXJIT_REMOTE_CACHE_KEY_FILE", key, 1);
    expect_open_refused("No such file");
    FILE *f = fopen(key, "w");
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    chmod(key, 0640);
    expect_open_refused("0600");
    chmod(key, 0600);
    setenv("PTXJIT_REMOTE_CACHE_TIMEOUT_MS", "soon", 1);
    expect_open_refused("PTXJIT_REMOTE_CACHE_TIMEOUT_MS");
    unsetenv("PTXJIT_REMOTE_CACHE_TIMEOUT_MS");
    setenv("PTXJIT_REMOTE_CACHE", "redis//typo", 1);
    expect_open_refused("unknown scheme");
    /* A trusted configuration opens although nobody listens: the server is not contacted. */
    setenv("PTXJIT_REMOTE_CACHE", "unix:///nonexistent/redis.sock", 1);
    ptxjit_context *context = open_node(dir);
    ck_assert_int_eq(stats_of(context).remote_configured, 1);
    ptxjit_close(context);
    /* The options field overrides the environment; "" turns the tier off. */
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = dir;
    options.remote_cache = "";
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(stats_of(context).remote_configured, 0);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(second_node_gets_the_first_nodes_kernel_from_redis)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "second_node_gets_the_first_nodes_kernel_from_redis"))
        return;
    char *a_dir = node_dir(r.dir, "a"), *b_dir = node_dir(r.dir, "b");
    ptxjit_context *a = open_node(a_dir), *b = open_node(b_dir);
    ptxjit_kernel *ka = get(a, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    ptxjit_kernel *kb = get(b, "variant=one_pass", PTXJIT_ORIGIN_REMOTE);
    size_t sa, sb;
    const void *ca = ptxjit_kernel_cubin(ka, &sa), *cb = ptxjit_kernel_cubin(kb, &sb);
    ck_assert_uint_eq(sa, sb);
    ck_assert_int_eq(memcmp(ca, cb, sa), 0);
    ck_assert_str_eq(ptxjit_kernel_ptx(ka), ptxjit_kernel_ptx(kb));
    ck_assert_uint_eq(stats_of(a).remote_publishes, 1);
    ck_assert_uint_eq(stats_of(a).remote_misses, 1);
    ck_assert_uint_eq(stats_of(b).remote_hits, 1);
    /* The hit was stored on B's disk: B's next process finds it there. */
    ptxjit_context *b2 = open_node(b_dir);
    get(b2, "variant=one_pass", PTXJIT_ORIGIN_DISK);
    ptxjit_close(b2);
    ptxjit_close(a);
    ptxjit_close(b);
    free(a_dir);
    free(b_dir);
    test_redis_stop(&r);
}
END_TEST

/* Two nodes on a private server, each with its own cache directory; node a has compiled and
 * published reduce variant=one_pass and variant=two_pass. 0 when the test is skipped. */
typedef struct {
    test_redis r;
    char *a_dir, *b_dir;
    ptxjit_context *a, *b;
} two_nodes;

static int two_nodes_open(two_nodes *n, const char *test)
{
    memset(n, 0, sizeof *n);
    if (!test_redis_start(&n->r, test))
        return 0;
    n->a_dir = node_dir(n->r.dir, "a");
    n->b_dir = node_dir(n->r.dir, "b");
    n->a = open_node(n->a_dir);
    n->b = open_node(n->b_dir);
    get(n->a, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    get(n->a, "variant=two_pass", PTXJIT_ORIGIN_COMPILED);
    return 1;
}

/* Closes both nodes and frees their paths; stops the server unless in a forked child (the
 * parent's server, and both contexts the fork's copies: freed for valgrind's leak check). */
static void two_nodes_close(two_nodes *n, int in_child)
{
    ptxjit_close(n->b);
    ptxjit_close(n->a);
    free(n->a_dir);
    free(n->b_dir);
    if (!in_child)
        test_redis_stop(&n->r);
}

/* The context's copier thread starts with the context; a child that fork() makes afterwards has
 * the copier's memory but not its thread: it writes its remote hits itself, and its close does
 * not wait for a queue nobody serves. */
START_TEST(a_forked_child_stores_its_remote_hits_itself)
{
    two_nodes n;
    if (!two_nodes_open(&n, "a_forked_child_stores_its_remote_hits_itself"))
        return;
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        int ok = ptxjit_get_kernel(&kernel, n.b, "reduce", "variant=one_pass", &origin) ==
                     PTXJIT_OK &&
                 origin == PTXJIT_ORIGIN_REMOTE;
        two_nodes_close(&n, 1);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the child's remote hit failed (status %d)", status);
    get(n.b, "variant=two_pass", PTXJIT_ORIGIN_REMOTE); /* the parent's thread still serves it */
    ptxjit_close(n.b);
    n.b = open_node(n.b_dir);
    get(n.b, "variant=one_pass", PTXJIT_ORIGIN_DISK); /* the child's copy */
    get(n.b, "variant=two_pass", PTXJIT_ORIGIN_DISK); /* the parent's */
    two_nodes_close(&n, 0);
}
END_TEST

/* A child that fork() makes after the context used Redis has the parent's idle connections
 * as well: were it to send on one, the two processes' commands would interleave on one socket
 * and either could read the other's reply. The child connects anew (the server then lists a
 * client newer than any before the fork) and the parent's connection still serves the
 * parent. */
START_TEST(a_forked_child_connects_on_its_own)
{
    two_nodes n;
    if (!two_nodes_open(&n, "a_forked_child_connects_on_its_own"))
        return;
    get(n.a, "variant=batched", PTXJIT_ORIGIN_COMPILED);
    get(n.b, "variant=one_pass", PTXJIT_ORIGIN_REMOTE); /* b now keeps a connection */
    stats_of(n.b); /* which waits for b's copier thread: idle when the fork copies it */
    long long last = test_redis_last_client_id(&n.r);
    ck_assert_int_gt(last, 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        alarm(100); /* a hang fails the test, with its own status */
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        int code = ptxjit_get_kernel(&kernel, n.b, "reduce", "variant=two_pass", &origin) !=
                               PTXJIT_OK ||
                           origin != PTXJIT_ORIGIN_REMOTE
                       ? 1
                   : !test_redis_has_client_after(&n.r, last) ? 2
                                                              : 0;
        two_nodes_close(&n, 1);
        _exit(code);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) != 1,
                  "the child's remote hit failed (status %d)", status);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the child sent its request on a connection of the parent's");
    get(n.b, "variant=batched", PTXJIT_ORIGIN_REMOTE); /* on the parent's kept connection */
    ptxjit_cache_stats s = stats_of(n.b);
    ck_assert_int_eq(s.remote_errors, 0);
    two_nodes_close(&n, 0);
}
END_TEST

START_TEST(tuning_records_travel_through_redis)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "tuning_records_travel_through_redis"))
        return;
    const char *key = "0123456789abcdef0123456789abcdef";
    char *a_dir = node_dir(r.dir, "a"), *b_dir = node_dir(r.dir, "b");
    pj_disk_options oa = {a_dir, 0, 0}, ob = {b_dir, 0, 0};
    pj_disk_cache *a, *b;
    ck_assert_int_eq(pj_disk_cache_open(&a, &oa, NULL), PTXJIT_OK);
    ck_assert_int_eq(pj_disk_cache_open(&b, &ob, NULL), PTXJIT_OK);
    pj_remote *remote;
    ck_assert_int_eq(pj_remote_open(&remote, NULL, 0, NULL, NULL), PTXJIT_OK);
    ck_assert_ptr_nonnull(remote);
    pj_tune_record record = {.family = "reduce", .problem = "n=1024", .fixed = "", .space = "s",
                             .device = "d", .backend = "nvrtc", .winner = "tpb=256",
                             .reference = "tpb=128", .considered = 2};
    ck_assert_int_eq(pj_tune_record_store(a, remote, key, &record, NULL), PTXJIT_OK);
    pj_tune_record back;
    int found = 0;
    ck_assert_int_eq(pj_tune_record_load(b, NULL, key, "reduce", &back, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 0); /* not on B's disk */
    ck_assert_int_eq(pj_tune_record_load(b, remote, key, "reduce", &back, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1);
    ck_assert_str_eq(back.winner, "tpb=256");
    pj_tune_record_free(&back);
    ck_assert_int_eq(pj_tune_record_load(b, NULL, key, "reduce", &back, &found), PTXJIT_OK);
    ck_assert_int_eq(found, 1); /* now kept on B's disk */
    pj_tune_record_free(&back);
    pj_remote_close(remote);
    pj_disk_cache_close(a);
    pj_disk_cache_close(b);
    free(a_dir);
    free(b_dir);
    test_redis_stop(&r);
}
END_TEST

START_TEST(auth_with_a_password_file)
{
    test_redis r = {.extra = "--requirepass", .extra_value = "s3cret-pw"};
    if (!test_redis_start(&r, "auth_with_a_password_file"))
        return;
    char password[4300];
    snprintf(password, sizeof password, "%s/password", r.dir);
    FILE *f = fopen(password, "w");
    fputs("wrong\n", f);
    fclose(f);
    chmod(password, 0600);
    setenv("PTXJIT_REMOTE_CACHE_PASSWORD_FILE", password, 1);
    char *dir = node_dir(r.dir, "a");
    ptxjit_context *context = open_node(dir);
    get(context, "variant=one_pass", PTXJIT_ORIGIN_COMPILED); /* refused: goes on locally */
    ck_assert_uint_ge(stats_of(context).remote_errors, 1);
    ck_assert_uint_eq(stats_of(context).remote_publishes, 0);
    ptxjit_close(context);
    f = fopen(password, "w");
    fputs("s3cret-pw\n", f); /* the line end is not part of it */
    fclose(f);
    context = open_node(dir);
    get(context, "variant=two_pass", PTXJIT_ORIGIN_COMPILED);
    ck_assert_uint_eq(stats_of(context).remote_publishes, 1);
    ptxjit_close(context);
    unsetenv("PTXJIT_REMOTE_CACHE_PASSWORD_FILE");
    free(dir);
    test_redis_stop(&r);
}
END_TEST

START_TEST(values_over_the_size_limit_are_not_sent)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "values_over_the_size_limit_are_not_sent"))
        return;
    setenv("PTXJIT_REMOTE_CACHE_MAX_BYTES", "100", 1);
    char *dir = node_dir(r.dir, "a");
    ptxjit_context *context = open_node(dir);
    ptxjit_kernel *kernel = get(context, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    ck_assert_uint_eq(stats_of(context).remote_publishes, 0);
    char *name = pj_remote_name(PJ_REMOTE_KERNEL, ptxjit_kernel_key(kernel));
    size_t size;
    ck_assert_ptr_null(test_redis_get(&r, name, &size));
    free(name);
    ptxjit_close(context);
    unsetenv("PTXJIT_REMOTE_CACHE_MAX_BYTES");
    free(dir);
    test_redis_stop(&r);
}
END_TEST

/* A claim is idempotent for its holder: exchange retries a pipeline on a fresh connection
 * when a reply is lost, and the first SET NX may have landed; the retry must find the lease
 * its own, not another's to wait on until its TTL. Another holder is still refused. */
START_TEST(a_claim_retried_by_its_holder_still_wins)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "a_claim_retried_by_its_holder_still_wins"))
        return;
    pj_remote_config config;
    int configured = 0;
    ck_assert_int_eq(pj_remote_config_read(&config, &configured, r.url), PTXJIT_OK);
    ck_assert_int_eq(configured, 1);
    pj_remote_link *link = NULL;
    pj_logger logger = {.fn = NULL, .user = NULL};
    ck_assert_int_eq(pj_link_open(&link, &config, &logger), PTXJIT_OK);
    static const char *const holders[] = {"node-a:1:0", "node-a:1:0", "node-b:2:0"};
    static const int want[] = {1, 1, 0};
    for (int i = 0; i < 3; i++) {
        pj_link_claimed claimed;
        ck_assert_int_eq(pj_link_claim(link, "lease-x", holders[i], 3000, "entry-x", &claimed),
                         PJ_LINK_NIL);
        ck_assert_msg(claimed.won == want[i], "claim %d by %s: won %d", i, holders[i],
                      claimed.won);
        ck_assert_int_eq(claimed.given_up, 0);
        ck_assert_str_eq(claimed.held, holders[0]); /* what the lease holds, for a waiter */
        free(claimed.held);
        free(claimed.value);
    }
    pj_link_close(link);
    pj_remote_config_free(&config);
    test_redis_stop(&r);
}
END_TEST

/* No server: every request compiles; after 3 failures the tier backs off and stops trying
 * (errors stop growing). */
/* A lease held by a node whose renewals stopped reaching the server may expire and be taken
 * by another node; when the first one's renewals resume, and when it gives its lease up, the
 * other's must stay as it is: not given a TTL, not replaced. Its own lease it renews and, with
 * nothing published, gives up: the lease then says so, for one TTL, and a claim in that time
 * is told to compile alone (not to wait, nor to take the lease in turn). */
static void lease_rounds(test_redis *r, pj_remote_link *link, int expect_checked)
{
    pj_lease *lease = NULL, *other = NULL;
    char *value = NULL;
    size_t size = 0;
    ck_assert_int_eq(pj_lease_claim(&lease, &value, &size, link, "lease-y", "entry-y", 300, NULL),
                     PJ_CLAIM_WON);
    ck_assert_int_eq(pj_lease_claim(&other, &value, &size, link, "lease-y", "entry-y", 300, NULL),
                     PJ_CLAIM_TAKEN);
    usleep(250 * 1000); /* two renewals: the lease outlives its first TTL */
    ck_assert_int_gt(test_redis_integer(r, "PTTL lease-y"), 0);
    pj_lease_end(lease, 1);
    size_t got = 0;
    char *marker = test_redis_get(r, "lease-y", &got);
    ck_assert_ptr_nonnull(marker);
    ck_assert_msg(strncmp(marker, PJ_LEASE_GIVEN_UP, strlen(PJ_LEASE_GIVEN_UP)) == 0, "%s",
                  marker);
    free(marker);
    long long ttl = test_redis_integer(r, "PTTL lease-y");
    ck_assert(ttl > 0 && ttl <= 300);
    ck_assert_int_eq(pj_lease_claim(&other, &value, &size, link, "lease-y", "entry-y", 300, NULL),
                     PJ_CLAIM_GIVEN_UP);
    ck_assert_ptr_null(other);
    usleep(350 * 1000); /* the mark expires: the next claim takes the lease */
    ck_assert_int_eq(pj_lease_claim(&lease, &value, &size, link, "lease-y", "entry-y", 300, NULL),
                     PJ_CLAIM_WON);
    test_redis_set(r, "lease-y", "node-b:2:0", 10); /* taken over, with no TTL */
    usleep(250 * 1000);
    pj_lease_end(lease, 1);
    char *holder = test_redis_get(r, "lease-y", &got);
    ck_assert_ptr_nonnull(holder);
    if (expect_checked) {
        ck_assert_str_eq(holder, "node-b:2:0");
        ck_assert_int_eq(test_redis_integer(r, "PTTL lease-y"), -1);
    } else { /* no EVAL: replaced unchecked, as the warning says */
        ck_assert_msg(strncmp(holder, PJ_LEASE_GIVEN_UP, strlen(PJ_LEASE_GIVEN_UP)) == 0, "%s",
                      holder);
    }
    free(holder);
}

static void capture_warning(void *user, ptxjit_log_level level, const char *message)
{
    if (level == PTXJIT_LOG_WARNING && strstr(message, "refuses EVAL"))
        (*(int *)user)++;
}

START_TEST(a_lease_is_renewed_and_given_up_only_by_its_holder)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "a_lease_is_renewed_and_given_up_only_by_its_holder"))
        return;
    pj_remote_config config;
    int configured = 0, warnings = 0;
    ck_assert_int_eq(pj_remote_config_read(&config, &configured, r.url), PTXJIT_OK);
    pj_remote_link *link = NULL;
    pj_logger logger = {.fn = capture_warning, .user = &warnings};
    ck_assert_int_eq(pj_link_open(&link, &config, &logger), PTXJIT_OK);
    lease_rounds(&r, link, 1);
    ck_assert_int_eq(warnings, 0);
    pj_link_close(link);

    /* A server whose ACL refuses scripts: the plain commands, one warning. */
    test_redis_integer(&r, "ACL SETUSER default -eval -evalsha");
    test_redis_integer(&r, "DEL lease-y");
    ck_assert_int_eq(pj_link_open(&link, &config, &logger), PTXJIT_OK);
    lease_rounds(&r, link, 0);
    ck_assert_int_eq(warnings, 1);
    pj_link_close(link);
    pj_remote_config_free(&config);
    test_redis_stop(&r);
}
END_TEST

START_TEST(absent_server_backs_off_and_requests_compile)
{
    char *dir = test_mkdtemp();
    char *key = malloc(4300);
    snprintf(key, 4300, "%s/key", dir);
    FILE *f = fopen(key, "w");
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    chmod(key, 0600);
    setenv("PTXJIT_REMOTE_CACHE_KEY_FILE", key, 1);
    const char *urls[] = {"unix:///nonexistent/redis.sock", "redis://127.0.0.1:1"};
    for (size_t u = 0; u < PJ_ARRAY_SIZE(urls); u++) {
        setenv("PTXJIT_REMOTE_CACHE", urls[u], 1);
        char *cache = node_dir(dir, u ? "tcp" : "unix"); /* cold: every request asks */
        ptxjit_context *context = open_node(cache);
        free(cache);
        ptxjit_cache_stats before = stats_of(context);
        const char *params[] = {"variant=one_pass tpb=128", "variant=one_pass tpb=256",
                                "variant=two_pass tpb=128", "variant=two_pass tpb=256"};
        for (size_t i = 0; i < PJ_ARRAY_SIZE(params); i++) {
            ptxjit_kernel *kernel;
            ptxjit_origin origin;
            ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", params[i], &origin),
                             PTXJIT_OK);
            ck_assert_int_ne(origin, PTXJIT_ORIGIN_REMOTE);
        }
        /* lookups and publishes of the first requests failed; then nothing was tried */
        ck_assert_uint_eq(stats_of(context).remote_errors - before.remote_errors, 3);
        ptxjit_close(context);
    }
    free(key);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* SIGKILL mid-run, then a fresh (empty) server: nothing fails, and publishing resumes. */
START_TEST(killed_and_restarted_server_loses_nothing)
{
    test_redis r = {0};
    if (!test_redis_start(&r, "killed_and_restarted_server_loses_nothing"))
        return;
    setenv("PTXJIT_REMOTE_CACHE_BACKOFF_MS", "0", 1);
    char *a_dir = node_dir(r.dir, "a"), *b_dir = node_dir(r.dir, "b");
    ptxjit_context *a = open_node(a_dir);
    get(a, "variant=one_pass tpb=128", PTXJIT_ORIGIN_COMPILED);
    test_redis_kill(&r);
    get(a, "variant=one_pass tpb=256", PTXJIT_ORIGIN_COMPILED); /* answered, locally */
    ck_assert_uint_ge(stats_of(a).remote_errors, 1);
    test_redis_restart(&r);
    ptxjit_kernel *k = get(a, "variant=two_pass tpb=256", PTXJIT_ORIGIN_COMPILED);
    ptxjit_context *b = open_node(b_dir);
    ptxjit_kernel *kb = get(b, "variant=two_pass tpb=256", PTXJIT_ORIGIN_REMOTE);
    size_t sa, sb;
    const void *ca = ptxjit_kernel_cubin(k, &sa), *cb = ptxjit_kernel_cubin(kb, &sb);
    ck_assert_uint_eq(sa, sb);
    ck_assert_int_eq(memcmp(ca, cb, sa), 0);
    /* what the dead server held is gone: B compiles it, bit-identical to A's */
    get(b, "variant=one_pass tpb=128", PTXJIT_ORIGIN_COMPILED);
    ptxjit_close(a);
    ptxjit_close(b);
    unsetenv("PTXJIT_REMOTE_CACHE_BACKOFF_MS");
    free(a_dir);
    free(b_dir);
    test_redis_stop(&r);
}
END_TEST

Suite *suite_remote(void)
{
    Suite *s = suite_create("remote");
    TCase *tc = tcase_create("remote");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, url_forms_parse_and_bad_ones_name_the_fix);
    tcase_add_test(tc, untrusted_configuration_fails_the_open);
    tcase_add_test(tc, second_node_gets_the_first_nodes_kernel_from_redis);
    tcase_add_test(tc, a_forked_child_stores_its_remote_hits_itself);
    tcase_add_test(tc, a_forked_child_connects_on_its_own);
    tcase_add_test(tc, tuning_records_travel_through_redis);
    tcase_add_test(tc, auth_with_a_password_file);
    tcase_add_test(tc, values_over_the_size_limit_are_not_sent);
    tcase_add_test(tc, a_claim_retried_by_its_holder_still_wins);
    tcase_add_test(tc, a_lease_is_renewed_and_given_up_only_by_its_holder);
    tcase_add_test(tc, absent_server_backs_off_and_requests_compile);
    tcase_add_test(tc, killed_and_restarted_server_loses_nothing);
    suite_add_tcase(s, tc);
    return s;
}

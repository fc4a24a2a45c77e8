/* test_events_fleet.c — issue 33, the events beyond one request's own: a remote hit (the tier
 * REMOTE, after a node on the same private redis-server compiled and published), the remote
 * tier's failures (an absent server: an error per exchange, then a back-off; an entry that
 * fails its check: an error naming the key), the disk cache's evictions under a small cap,
 * a tuning search (start, its compiles and progress in order, end), and `explain` across the
 * remote tier (the entry held there, or the nearest of its family's notes). The callback records
 * under a lock: the copier and a lease's renewal thread may tell events too. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cache/entry.h"
#include "redis_server.h"
#include "remote/remote.h"
#include "test_util.h"

#define TINY_TEMPLATE                                                                         \
    "//@ptxjit family tiny\n//@ptxjit entry tiny_kernel\n"                                    \
    "//@ptxjit param factor int(1..100) default=3\n"                                          \
    "//@ptxjit tune factor 2,4,6\n"                                                           \
    "extern \"C\" __global__ void tiny_kernel(int *x) { x[0] = FACTOR; }\n"

#define MAX_EVENTS 64

typedef struct {
    ptxjit_event_kind kind;
    ptxjit_tier tier;
    ptxjit_status status;
    char params[128], key[33], detail[600];
    uint64_t count, bytes;
    int done, total;
    double ms;
} seen_event;

typedef struct {
    pthread_mutex_t lock;
    int count;
    seen_event events[MAX_EVENTS];
} recording;

static void record(void *user, const ptxjit_event *event)
{
    recording *r = user;
    ck_assert_ptr_nonnull(event->detail); /* never NULL, whatever the kind */
    ck_assert_ptr_nonnull(event->family);
    pthread_mutex_lock(&r->lock);
    if (r->count < MAX_EVENTS) {
        seen_event *e = &r->events[r->count];
        e->kind = event->kind;
        e->tier = event->tier;
        e->status = event->status;
        snprintf(e->params, sizeof e->params, "%s", event->params);
        snprintf(e->key, sizeof e->key, "%s", event->key);
        snprintf(e->detail, sizeof e->detail, "%s", event->detail);
        e->count = event->count;
        e->bytes = event->bytes;
        e->done = event->done;
        e->total = event->total;
        e->ms = event->ms;
    }
    r->count++;
    pthread_mutex_unlock(&r->lock);
}

static void recording_reset(recording *r)
{
    pthread_mutex_lock(&r->lock);
    r->count = 0;
    pthread_mutex_unlock(&r->lock);
}

/* The kinds seen, in order, as digits ("1347"): one assertion shows the whole sequence. */
static void kinds_of(recording *r, char *out, size_t size)
{
    pthread_mutex_lock(&r->lock);
    size_t n = 0;
    for (int i = 0; i < r->count && i < MAX_EVENTS && n + 4 < size; i++)
        n += (size_t)snprintf(out + n, size - n, "%s%d", i ? "," : "", r->events[i].kind);
    out[n] = '\0';
    pthread_mutex_unlock(&r->lock);
}

static int count_kind(recording *r, ptxjit_event_kind kind)
{
    int n = 0;
    pthread_mutex_lock(&r->lock);
    for (int i = 0; i < r->count && i < MAX_EVENTS; i++)
        n += r->events[i].kind == kind;
    pthread_mutex_unlock(&r->lock);
    return n;
}

static const seen_event *first_of(recording *r, ptxjit_event_kind kind)
{
    for (int i = 0; i < r->count && i < MAX_EVENTS; i++)
        if (r->events[i].kind == kind)
            return &r->events[i];
    return NULL;
}

static void write_tiny(const char *dir)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/tiny.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_msg(file != NULL, "cannot write %s", path);
    fputs(TINY_TEMPLATE, file);
    ck_assert_int_eq(fclose(file), 0);
}

static ptxjit_context *open_node(const char *cache, const char *templates, recording *r,
                                 uint64_t cap)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = cache;
    options.template_path = templates;
    options.process_cache = 0; /* a node of its own: nothing shared in memory */
    options.compile_wait_ms = -1;
    options.cache_max_bytes = cap;
    options.on_event = record;
    options.event_user = r;
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static char *sub_dir(const char *base, const char *name)
{
    char *path = malloc(4300);
    snprintf(path, 4300, "%s/%s", base, name);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    return path;
}

START_TEST(a_remote_hit_then_a_rejected_entry)
{
    test_redis server = {0};
    if (!test_redis_start(&server, "a_remote_hit_then_a_rejected_entry"))
        return;
    char *templates = sub_dir(server.dir, "t"), *a_dir = sub_dir(server.dir, "a"),
         *b_dir = sub_dir(server.dir, "b"), *c_dir = sub_dir(server.dir, "c");
    write_tiny(templates);
    recording r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ptxjit_context *a = open_node(a_dir, templates, &r, 0);
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    char kinds[256];
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, a, "tiny", "factor=9", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    kinds_of(&r, kinds, sizeof kinds);
    ck_assert_str_eq(kinds, "1,3,4,2"); /* start, compile start and end, end */
    ck_assert_int_eq(r.events[3].tier, PTXJIT_TIER_COMPILE);
    char key[33];
    snprintf(key, sizeof key, "%s", r.events[3].key);

    /* Another node (its own empty disk) gets it from the server: start, end (REMOTE). */
    recording_reset(&r);
    ptxjit_context *b = open_node(b_dir, templates, &r, 0);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, b, "tiny", "factor=9", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_REMOTE);
    kinds_of(&r, kinds, sizeof kinds);
    ck_assert_str_eq(kinds, "1,2");
    ck_assert_int_eq(r.events[1].tier, PTXJIT_TIER_REMOTE);
    ck_assert_str_eq(r.events[1].key, key);

    /* The entry replaced by junk: a third node is told the server's entry was rejected (with
     * its key), then compiles; its result replaces the junk. */
    char *name = pj_remote_name(PJ_REMOTE_KERNEL, key);
    test_redis_set(&server, name, "not an entry", 12);
    recording_reset(&r);
    ptxjit_context *c = open_node(c_dir, templates, &r, 0);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, c, "tiny", "factor=9", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    kinds_of(&r, kinds, sizeof kinds);
    ck_assert_str_eq(kinds, "1,5,3,4,2");
    const seen_event *error = first_of(&r, PTXJIT_EVENT_REMOTE_ERROR);
    ck_assert_str_eq(error->key, key);
    ck_assert_int_eq(error->status, PTXJIT_ERR_CACHE);
    ck_assert_msg(strstr(error->detail, "rejected") && strstr(error->detail, name), "%s",
                  error->detail);
    ptxjit_close(c);
    ptxjit_close(b);
    ptxjit_close(a);
    free(name);
    free(templates);
    free(a_dir);
    free(b_dir);
    free(c_dir);
    test_redis_stop(&server);
}
END_TEST

/* No server at the address: each exchange fails (an event each), the third in a row starts
 * the back-off (an event with its length), and during it nothing is tried or told. */
START_TEST(an_absent_server_tells_its_errors_then_the_back_off)
{
    char *dir = test_mkdtemp();
    char key_file[4300], url[4400];
    snprintf(key_file, sizeof key_file, "%s/key", dir);
    FILE *f = fopen(key_file, "w");
    fputs("0123456789abcdef0123456789abcdef", f);
    fclose(f);
    chmod(key_file, 0600);
    snprintf(url, sizeof url, "unix://%s/absent.sock", dir);
    setenv("PTXJIT_REMOTE_CACHE_KEY_FILE", key_file, 1);
    setenv("PTXJIT_REMOTE_CACHE", url, 1);
    setenv("PTXJIT_REMOTE_CACHE_BACKOFF_MS", "60000", 1);
    char *templates = sub_dir(dir, "t"), *cache = sub_dir(dir, "c");
    write_tiny(templates);
    recording r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ptxjit_context *context = open_node(cache, templates, &r, 0);
    const char *params[] = {"factor=11", "factor=12", "factor=13"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(params); i++) {
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", params[i], &origin),
                         PTXJIT_OK);
        ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    }
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_int_eq(count_kind(&r, PTXJIT_EVENT_REMOTE_ERROR), (int)stats.remote_errors);
    ck_assert_int_eq(count_kind(&r, PTXJIT_EVENT_REMOTE_ERROR), 3);
    ck_assert_int_eq(count_kind(&r, PTXJIT_EVENT_REMOTE_BACKOFF), 1);
    const seen_event *error = first_of(&r, PTXJIT_EVENT_REMOTE_ERROR);
    ck_assert_msg(strstr(error->detail, url) != NULL, "%s", error->detail);
    const seen_event *backoff = first_of(&r, PTXJIT_EVENT_REMOTE_BACKOFF);
    ck_assert(backoff->ms == 60000);
    ck_assert(backoff > error); /* after the failures that started it */
    ptxjit_close(context);
    unsetenv("PTXJIT_REMOTE_CACHE");
    unsetenv("PTXJIT_REMOTE_CACHE_KEY_FILE");
    unsetenv("PTXJIT_REMOTE_CACHE_BACKOFF_MS");
    test_rmtree(dir);
    free(dir);
    free(templates);
    free(cache);
}
END_TEST

/* A cap smaller than one entry: every store evicts, and says how much. */
START_TEST(evictions_are_told_with_their_count_and_bytes)
{
    char *dir = test_mkdtemp();
    char *templates = sub_dir(dir, "t"), *cache = sub_dir(dir, "c");
    write_tiny(templates);
    recording r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ptxjit_context *context = open_node(cache, templates, &r, 1000);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=21", NULL), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=22", NULL), PTXJIT_OK);
    ck_assert_int_ge(count_kind(&r, PTXJIT_EVENT_EVICTION), 1);
    const seen_event *eviction = first_of(&r, PTXJIT_EVENT_EVICTION);
    ck_assert_uint_ge(eviction->count, 1);
    ck_assert_uint_gt(eviction->bytes, 1000 * 9 / 10);
    ck_assert_msg(strstr(eviction->detail, cache) == eviction->detail, "%s", eviction->detail);
    ck_assert_int_eq(eviction->status, PTXJIT_OK);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_ge(stats.evicted, eviction->count);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
    free(templates);
    free(cache);
}
END_TEST

/* A compile-only search of the template's space (factor=2,4,6): TUNE_START with the problem,
 * the three points' progress counted up to the total, TUNE_END with the count and no winner
 * (nothing was timed); the candidates' compiles come between. */
START_TEST(a_tuning_search_tells_its_start_progress_and_end)
{
    char *dir = test_mkdtemp();
    char *templates = sub_dir(dir, "t"), *cache = sub_dir(dir, "c");
    write_tiny(templates);
    recording r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ptxjit_context *context = open_node(cache, templates, &r, 0);
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = "one int";
    options.compile_only = 1;
    options.threads = 2;
    ptxjit_tune_result *result = NULL;
    ck_assert_msg(ptxjit_tune(&result, context, "tiny", &options) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    ck_assert_int_eq(r.events[0].kind, PTXJIT_EVENT_TUNE_START);
    ck_assert_str_eq(r.events[0].detail, "one int");
    int progress = 0, last = r.count - 1;
    for (int i = 1; i < last; i++)
        if (r.events[i].kind == PTXJIT_EVENT_TUNE_PROGRESS) {
            ck_assert_int_eq(r.events[i].done, ++progress);
            ck_assert_int_eq(r.events[i].total, 3);
            ck_assert_msg(strstr(r.events[i].params, "factor="), "%s", r.events[i].params);
        }
    ck_assert_int_eq(progress, 3);
    ck_assert_int_eq(r.events[last].kind, PTXJIT_EVENT_TUNE_END);
    ck_assert_int_eq(r.events[last].status, PTXJIT_OK);
    ck_assert_int_eq(r.events[last].total, 3);
    ck_assert_str_eq(r.events[last].params, "");
    ck_assert(r.events[last].ms > 0);
    ptxjit_tune_result_free(result);

    /* A refused search ends too, with its status. */
    recording_reset(&r);
    options.space = "factor=500";
    ck_assert_int_ne(ptxjit_tune(&result, context, "tiny", &options), PTXJIT_OK);
    char kinds[64];
    kinds_of(&r, kinds, sizeof kinds);
    ck_assert_str_eq(kinds, "8,10");
    ck_assert_int_ne(r.events[1].status, PTXJIT_OK);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
    free(templates);
    free(cache);
}
END_TEST

static void expect_in(const char *report, const char *needle)
{
    ck_assert_msg(strstr(report, needle) != NULL, "'%s' not in:\n%s", needle, report);
}

static char *explain(ptxjit_context *context, const char *params, const char *options)
{
    char *report = NULL;
    ck_assert_msg(ptxjit_explain(&report, context, "tiny", params, options) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    return report;
}

static void count_note(void *user, const char *key, const char *text)
{
    ck_assert_int_eq(strlen(key), 32);
    ck_assert_ptr_nonnull(strstr(text, "family tiny\n"));
    ++*(int *)user;
}

/* A node that never compiled the request asks why it would miss: the server holds the entry
 * (remote: hit), or it does not and the notes the first node published name what differs. */
START_TEST(explain_reads_the_remote_tiers_notes)
{
    test_redis server = {0};
    if (!test_redis_start(&server, "explain_reads_the_remote_tiers_notes"))
        return;
    char *templates = sub_dir(server.dir, "t"), *a_dir = sub_dir(server.dir, "a"),
         *b_dir = sub_dir(server.dir, "b");
    write_tiny(templates);
    recording r = {.lock = PTHREAD_MUTEX_INITIALIZER};
    ptxjit_context *a = open_node(a_dir, templates, &r, 0);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, a, "tiny", "factor=9", NULL), PTXJIT_OK);
    char nine[33];
    snprintf(nine, sizeof nine, "%s", ptxjit_kernel_key(kernel));
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, a, "tiny", "factor=8", NULL), PTXJIT_OK);
    ptxjit_context *b = open_node(b_dir, templates, &r, 0);
    char *report = explain(b, "factor=9", NULL);
    expect_in(report, "disk: miss");
    expect_in(report, "nearest: no entry of tiny with known components\n");
    expect_in(report, "\nremote: hit (unix://");
    ck_assert_ptr_null(strstr(report, "remote nearest"));
    free(report);
    report = explain(b, "factor=9", "-lineinfo");
    expect_in(report, "remote: miss");
    expect_in(report, ": 1 differing\n    option -lineinfo added\n");
    expect_in(report, ": 2 differing\n    params: factor=8 -> factor=9\n    option -lineinfo "
                      "added\n");
    free(report);
    report = explain(b, "factor=10", NULL);
    expect_in(report, "remote nearest ");
    expect_in(report, "    params: factor=8 -> factor=10\n");
    expect_in(report, "    params: factor=9 -> factor=10\n");
    free(report);

    /* The entry replaced by junk: there, but a fetch would reject it; said so. */
    char *name = pj_remote_name(PJ_REMOTE_KERNEL, nine), *saved = NULL;
    size_t saved_size = 0;
    saved = test_redis_get(&server, name, &saved_size);
    test_redis_set(&server, name, "junk", 4);
    report = explain(b, "factor=9", NULL);
    expect_in(report, "remote: miss (unix://");
    expect_in(report, "): its entry there is rejected (");
    free(report);
    test_redis_set(&server, name, saved, saved_size);
    free(saved);
    free(name);

    /* A note copied into another family's list fails its check there: not shown. */
    char list[128], other[128];
    snprintf(list, sizeof list, "ptxjit:v%d:notes:tiny", PJ_ENTRY_FORMAT_VERSION);
    snprintf(other, sizeof other, "ptxjit:v%d:notes:tiny2", PJ_ENTRY_FORMAT_VERSION);
    char command[512];
    snprintf(command, sizeof command, "COPY %s %s", list, other);
    test_redis_integer(&server, command);
    snprintf(command, sizeof command, "LLEN %s", other);
    ck_assert_int_eq(test_redis_integer(&server, command), 2);
    pj_remote *remote = NULL;
    ck_assert_int_eq(pj_remote_open(&remote, NULL, 0, NULL, NULL), PTXJIT_OK);
    int notes = 0;
    ck_assert_int_eq(pj_remote_each_note(remote, "tiny", count_note, &notes), 2);
    ck_assert_int_eq(notes, 2);
    ck_assert_int_eq(pj_remote_each_note(remote, "tiny2", count_note, &notes), 0);
    ck_assert_int_eq(notes, 2);
    ck_assert_int_eq(pj_remote_each_note(remote, "no-such:family*", count_note, &notes), 0);
    ck_assert_int_eq(pj_remote_each_note(NULL, "tiny", count_note, &notes), -1);
    pj_remote_close(remote);

    /* The server gone: said, not fatal. */
    test_redis_kill(&server);
    report = explain(b, "factor=9", NULL);
    expect_in(report, "remote: not reachable (unix://");
    free(report);
    ptxjit_close(b);
    ptxjit_close(a);
    free(templates);
    free(a_dir);
    free(b_dir);
    test_redis_stop(&server);
}
END_TEST

Suite *suite_events_fleet(void)
{
    Suite *suite = suite_create("events_fleet");
    TCase *tc = tcase_create("events_fleet");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_remote_hit_then_a_rejected_entry);
    tcase_add_test(tc, an_absent_server_tells_its_errors_then_the_back_off);
    tcase_add_test(tc, evictions_are_told_with_their_count_and_bytes);
    tcase_add_test(tc, a_tuning_search_tells_its_start_progress_and_end);
    tcase_add_test(tc, explain_reads_the_remote_tiers_notes);
    suite_add_tcase(suite, tc);
    return suite;
}

/* test_events.c — issue 33. What a request tells ptxjit_options.on_event: a cold request's
 * events in order (start, compile start and end, end with the tier that answered), memory
 * and memo hits, a disk hit from a fresh context on the same cache directory, a refused
 * request, and no call at all without a callback. `cache stats --prometheus` read by a small
 * parser of the text format, and --json. `ptxjit explain` naming the key component that
 * differs from the nearest disk entry: a header, an option, the compiler build. One small
 * user template keeps the compiles few: two in the runner's process, one in a CLI's. */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "test_util.h"

#define TINY_TEMPLATE                                                                         \
    "//@ptxjit family tiny\n//@ptxjit entry tiny_kernel\n"                                    \
    "//@ptxjit param factor int(1..100) default=3\n"                                          \
    "extern \"C\" __global__ void tiny_kernel(int *x) { x[0] = FACTOR; }\n"

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "w");
    ck_assert_msg(file != NULL, "cannot write %s", path);
    fputs(text, file);
    ck_assert_int_eq(fclose(file), 0);
}

/* What the callback saw, one record per event. */
typedef struct {
    int count;
    struct {
        ptxjit_event_kind kind;
        ptxjit_tier tier;
        ptxjit_status status;
        char family[32], params[128], key[33];
        double ms, stage_ms[4];
    } events[16];
} recording;

static void record(void *user, const ptxjit_event *event)
{
    recording *r = user;
    ck_assert_int_lt(r->count, 16);
    ck_assert_ptr_nonnull(event->family);
    ck_assert_ptr_nonnull(event->params);
    ck_assert_ptr_nonnull(event->options);
    ck_assert_ptr_nonnull(event->key);
    ck_assert_ptr_nonnull(event->detail);
    __typeof__(r->events[0]) *e = &r->events[r->count++];
    e->kind = event->kind;
    e->tier = event->tier;
    e->status = event->status;
    snprintf(e->family, sizeof e->family, "%s", event->family);
    snprintf(e->params, sizeof e->params, "%s", event->params);
    snprintf(e->key, sizeof e->key, "%s", event->key);
    e->ms = event->ms;
    memcpy(e->stage_ms, event->stage_ms, sizeof e->stage_ms);
}

static ptxjit_context *open_recorded(const char *cache, const char *templates, recording *r)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = cache;
    options.template_path = templates;
    options.process_cache = 0; /* each context produces its own: the tiers are this test's */
    options.compile_wait_ms = -1;
    if (r) {
        options.on_event = record;
        options.event_user = r;
    }
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    return context;
}

static void expect(const recording *r, int i, ptxjit_event_kind kind, ptxjit_tier tier)
{
    ck_assert_msg(i < r->count, "event %d missing (%d told)", i, r->count);
    ck_assert_msg(r->events[i].kind == kind && r->events[i].tier == tier,
                  "event %d: kind %d tier %s, expected kind %d tier %s", i, r->events[i].kind,
                  ptxjit_tier_name(r->events[i].tier), kind, ptxjit_tier_name(tier));
}

START_TEST(cold_request_then_memo_then_disk_hit_then_no_callback)
{
    char *cache = test_mkdtemp(), *templates = test_mkdtemp();
    write_file(templates, "tiny.cu", TINY_TEMPLATE);
    recording r = {0};
    ptxjit_context *context = open_recorded(cache, templates, &r);
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=7", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(r.count, 4);
    expect(&r, 0, PTXJIT_EVENT_REQUEST_START, PTXJIT_TIER_NONE);
    ck_assert_str_eq(r.events[0].params, "factor=7"); /* as given */
    ck_assert_str_eq(r.events[0].key, "");
    expect(&r, 1, PTXJIT_EVENT_COMPILE_START, PTXJIT_TIER_NONE);
    expect(&r, 2, PTXJIT_EVENT_COMPILE_END, PTXJIT_TIER_NONE);
    ck_assert_int_eq(r.events[2].status, PTXJIT_OK);
    ck_assert(r.events[2].stage_ms[3] > 0); /* NVRTC's time */
    ck_assert(r.events[2].ms >= r.events[2].stage_ms[3]);
    expect(&r, 3, PTXJIT_EVENT_REQUEST_END, PTXJIT_TIER_COMPILE);
    ck_assert_int_eq(r.events[3].status, PTXJIT_OK);
    ck_assert_str_eq(r.events[3].family, "tiny");
    ck_assert_str_eq(r.events[3].params, "factor=7");
    ck_assert_int_eq(strlen(r.events[3].key), 32);
    ck_assert_str_eq(r.events[3].key, r.events[1].key);
    ck_assert(r.events[3].ms >= r.events[2].ms);
    ck_assert(r.events[3].stage_ms[3] == r.events[2].stage_ms[3]);
    char key[33];
    snprintf(key, sizeof key, "%s", r.events[3].key);

    /* Again: the context's kernels (memory), which this thread's memo then notes; a third
     * time that memo answers. No compile either time. */
    r.count = 0;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=7", NULL), PTXJIT_OK);
    ck_assert_int_eq(r.count, 2);
    expect(&r, 0, PTXJIT_EVENT_REQUEST_START, PTXJIT_TIER_NONE);
    expect(&r, 1, PTXJIT_EVENT_REQUEST_END, PTXJIT_TIER_MEMORY);
    ck_assert_str_eq(r.events[1].key, key);
    r.count = 0;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=7", NULL), PTXJIT_OK);
    ck_assert_int_eq(r.count, 2);
    expect(&r, 1, PTXJIT_EVENT_REQUEST_END, PTXJIT_TIER_THREAD_MEMO);
    ck_assert_str_eq(r.events[1].key, key);
    /* Another spelling of it: the context's kernels (memory), no compile. */
    r.count = 0;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=7 ", NULL), PTXJIT_OK);
    ck_assert_int_eq(r.count, 2);
    expect(&r, 1, PTXJIT_EVENT_REQUEST_END, PTXJIT_TIER_MEMORY);
    ptxjit_close(context);

    /* A fresh context on the same directory: the disk answers, nothing compiles. */
    r.count = 0;
    context = open_recorded(cache, templates, &r);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=7", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_DISK);
    ck_assert_int_eq(r.count, 2);
    expect(&r, 0, PTXJIT_EVENT_REQUEST_START, PTXJIT_TIER_NONE);
    expect(&r, 1, PTXJIT_EVENT_REQUEST_END, PTXJIT_TIER_DISK);
    ck_assert_str_eq(r.events[1].key, key);
    ck_assert(r.events[1].stage_ms[3] == 0);

    /* A refused request: its end says so, with no tier and no key. */
    r.count = 0;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=500", NULL),
                     PTXJIT_ERR_PARAM);
    ck_assert_int_eq(r.count, 2);
    expect(&r, 1, PTXJIT_EVENT_REQUEST_END, PTXJIT_TIER_NONE);
    ck_assert_int_eq(r.events[1].status, PTXJIT_ERR_PARAM);
    ck_assert_str_eq(r.events[1].params, "factor=500");
    ck_assert_str_eq(r.events[1].key, "");
    ptxjit_close(context);

    /* Without a callback nothing is told: a recording given as event_user alone stays empty
     * (a disk hit, a memory hit, a memo hit and a refusal; compiles without a callback are
     * every other suite's). */
    r.count = 0;
    ptxjit_options options;
    ptxjit_options_init(&options);
    ck_assert_ptr_null(options.on_event);
    options.use_gpu = 0;
    options.cache_dir = cache;
    options.template_path = templates;
    options.event_user = &r;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=7", NULL),
                         PTXJIT_OK);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=0", NULL),
                     PTXJIT_ERR_PARAM);
    ck_assert_int_eq(r.count, 0);
    ptxjit_close(context);
    test_rmtree(cache);
    test_rmtree(templates);
    free(cache);
    free(templates);
}
END_TEST

START_TEST(tier_names)
{
    ck_assert_str_eq(ptxjit_tier_name(PTXJIT_TIER_THREAD_MEMO), "thread_memo");
    ck_assert_str_eq(ptxjit_tier_name(PTXJIT_TIER_COMPILE), "compile");
    ck_assert_str_eq(ptxjit_tier_name(PTXJIT_TIER_AOT), "aot");
    ck_assert_str_eq(ptxjit_tier_name((ptxjit_tier)99), "unknown");
}
END_TEST

/* ---- metrics: `cache stats --prometheus` and --json ---- */

/* A small reader of the text exposition format: HELP and TYPE lines, then samples
 * `name{label="value",...} number`; each sample's metric typed before it (a histogram's
 * _bucket, _sum and _count under its name), no sample twice. Returns the value of the sample
 * want (its full text before the value), or -1 when it is absent. */
static double prometheus_check(const char *text, const char *want)
{
    char typed[64][80], seen[128][160];
    int types = 0, samples = 0;
    double found = -1;
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        ck_assert_msg(end != NULL, "the last line is not ended: %s", line);
        char buffer[512];
        size_t length = (size_t)(end - line);
        ck_assert_uint_lt(length, sizeof buffer);
        memcpy(buffer, line, length);
        buffer[length] = 0;
        line = end + 1;
        char name[80], kind[32];
        if (strncmp(buffer, "# HELP ", 7) == 0) {
            ck_assert_msg(sscanf(buffer, "# HELP %79s %31s", name, kind) == 2, "%s", buffer);
            continue;
        }
        if (strncmp(buffer, "# TYPE ", 7) == 0) {
            ck_assert_int_eq(sscanf(buffer, "# TYPE %79s %31s", name, kind), 2);
            ck_assert_msg(!strcmp(kind, "counter") || !strcmp(kind, "gauge") ||
                              !strcmp(kind, "histogram"),
                          "%s", buffer);
            for (int i = 0; i < types; i++)
                ck_assert_msg(strcmp(typed[i], name) != 0, "typed twice: %s", name);
            ck_assert_int_lt(types, 64);
            snprintf(typed[types++], sizeof typed[0], "%s", name);
            continue;
        }
        ck_assert_msg(buffer[0] != '#', "a comment other than HELP and TYPE: %s", buffer);
        /* name, optional {labels}, a space, a number and nothing after it */
        char *space = strrchr(buffer, ' ');
        ck_assert_msg(space != NULL, "no value: %s", buffer);
        char *number_end;
        double value = strtod(space + 1, &number_end);
        ck_assert_msg(*number_end == 0 && number_end != space + 1, "bad value: %s", buffer);
        *space = 0;
        size_t name_length = strcspn(buffer, "{");
        ck_assert_uint_gt(name_length, 0);
        for (size_t i = 0; i < name_length; i++)
            ck_assert_msg(buffer[i] == '_' || (buffer[i] >= 'a' && buffer[i] <= 'z'),
                          "bad name: %s", buffer);
        if (buffer[name_length] == '{') {
            ck_assert_msg(buffer[strlen(buffer) - 1] == '}', "labels not closed: %s", buffer);
            for (char *label = buffer + name_length + 1; *label != '}';) {
                size_t key = strcspn(label, "=");
                ck_assert_msg(key > 0 && label[key] == '=' && label[key + 1] == '"', "%s",
                              buffer);
                char *c = label + key + 2;
                while (*c && *c != '"')
                    c += *c == '\\' ? 2 : 1;
                ck_assert_msg(*c == '"', "label value not closed: %s", buffer);
                label = c + 1;
                if (*label == ',')
                    label++;
            }
        }
        snprintf(name, sizeof name, "%.*s", (int)name_length, buffer);
        int known = 0;
        for (int i = 0; i < types && !known; i++) {
            size_t n = strlen(typed[i]);
            known = !strcmp(name, typed[i]) ||
                    (!strncmp(name, typed[i], n) &&
                     (!strcmp(name + n, "_bucket") || !strcmp(name + n, "_sum") ||
                      !strcmp(name + n, "_count")));
        }
        ck_assert_msg(known, "a sample without its TYPE: %s", buffer);
        for (int i = 0; i < samples; i++)
            ck_assert_msg(strcmp(seen[i], buffer) != 0, "sample twice: %s", buffer);
        ck_assert_int_lt(samples, 128);
        ck_assert_uint_lt(strlen(buffer), sizeof seen[0]); /* the duplicate check is whole */
        memcpy(seen[samples++], buffer, strlen(buffer) + 1);
        if (strcmp(buffer, want) == 0)
            found = value;
    }
    return found;
}

START_TEST(cache_stats_prometheus_parses_and_counts_the_compile)
{
    char *cache = test_mkdtemp(), *templates = test_mkdtemp(), *out = NULL, args[4400];
    write_file(templates, "tiny.cu", TINY_TEMPLATE);
    snprintf(args, sizeof args, "--templates '%s' ptx tiny factor=4", templates);
    ck_assert_int_eq(test_run_cli(&out, cache, "", args, "/dev/null"), 0);
    free(out);
    ck_assert_int_eq(test_run_cli(&out, cache, "", "cache stats --prometheus", "/dev/null"), 0);
    ck_assert_double_eq(prometheus_check(out, "ptxjit_compile_seconds_count"), 1);
    ck_assert_double_eq(prometheus_check(out, "ptxjit_compile_seconds_bucket{le=\"+Inf\"}"), 1);
    ck_assert_double_eq(prometheus_check(out, "ptxjit_cache_misses_total{tier=\"disk\"}"), 1);
    ck_assert_double_eq(prometheus_check(out, "ptxjit_cache_stores_total"), 1);
    ck_assert_double_eq(prometheus_check(out, "ptxjit_cache_entries"), 1);
    ck_assert(prometheus_check(out, "ptxjit_compile_seconds_sum") > 0);
    /* Byte-stable: a second run says the same (nothing happened in between). */
    char *again = NULL;
    ck_assert_int_eq(test_run_cli(&again, cache, "", "cache stats --prometheus", "/dev/null"), 0);
    ck_assert_str_eq(out, again);
    free(again);
    free(out);
    /* --json: one object with the same counts. */
    ck_assert_int_eq(test_run_cli(&out, cache, "", "cache stats --json", "/dev/null"), 0);
    size_t length = strlen(out);
    ck_assert_msg(out[0] == '{' && length > 2 && !strcmp(out + length - 2, "}\n"), "%s", out);
    ck_assert_ptr_nonnull(strstr(out, "\"compiles\": 1,"));
    ck_assert_ptr_nonnull(strstr(out, "\"compile_buckets_ms\": {"));
    free(out);
    /* --prometheus belongs to `cache stats` alone. */
    ck_assert_int_eq(test_run_cli(&out, cache, "", "cache path --prometheus", NULL), 2);
    free(out);
    test_rmtree(cache);
    test_rmtree(templates);
    free(cache);
    free(templates);
}
END_TEST

/* ---- explain ---- */

static char *explain(ptxjit_context *context, const char *params, const char *options)
{
    char *report = NULL;
    ck_assert_int_eq(ptxjit_explain(&report, context, "tiny", params, options), PTXJIT_OK);
    return report;
}

static void expect_in(const char *report, const char *needle)
{
    ck_assert_msg(strstr(report, needle) != NULL, "no \"%s\" in:\n%s", needle, report);
}

/* Replaces the version line of the cache's NVRTC memo with one of another compiler build:
 * the memo is trusted while the library file is unchanged, so the key takes that version. */
static void fake_compiler_version(const char *cache, const char *version)
{
    char path[4200], text[4096] = "", *at;
    snprintf(path, sizeof path, "%s/v1/compiler", cache);
    FILE *file = fopen(path, "r");
    ck_assert_ptr_nonnull(file);
    size_t n = fread(text, 1, sizeof text - 1, file);
    fclose(file);
    text[n] = 0;
    ck_assert_ptr_nonnull(at = strstr(text, "version "));
    snprintf(at, sizeof text - (size_t)(at - text), "version %s\n", version);
    file = fopen(path, "w");
    fputs(text, file);
    fclose(file);
}

START_TEST(explain_names_the_differing_component)
{
    char *cache = test_mkdtemp(), *templates = test_mkdtemp(), path[4200];
    write_file(templates, "tiny.cu",
               "//@ptxjit family tiny\n//@ptxjit entry tiny_kernel\n"
               "//@ptxjit param factor int(1..100) default=3\n#include \"rowstats.cuh\"\n"
               "extern \"C\" __global__ void tiny_kernel(int *x) { x[0] = FACTOR * ROWS; }\n");
    write_file(templates, "rowstats.cuh", "enum { ROWS = 2 };\n");
    ptxjit_context *context = open_recorded(cache, templates, NULL);
    ptxjit_kernel *kernel = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "tiny", "factor=5", NULL), PTXJIT_OK);
    char *report = explain(context, "factor=5", NULL);
    expect_in(report, "disk: hit");
    expect_in(report, "family tiny\nparams factor=5\ntemplate ");
    expect_in(report, "\ncompiler nvrtc ");
    expect_in(report, "\narch sm_90a\n");
    expect_in(report, "rowstats.cuh ");
    free(report);

    /* Another option: the entry lacks it. */
    report = explain(context, "factor=5", "-lineinfo");
    expect_in(report, "disk: miss");
    expect_in(report, "1 differing\n    option -lineinfo added\n");
    free(report);

    /* A header edited since (a fresh context: a live one keeps its templates' view). */
    ptxjit_close(context);
    write_file(templates, "rowstats.cuh", "enum { ROWS = 3 };\n");
    context = open_recorded(cache, templates, NULL);
    report = explain(context, "factor=5", NULL);
    expect_in(report, "disk: miss");
    snprintf(path, sizeof path, "1 differing\n    header %s/rowstats.cuh changed\n", templates);
    expect_in(report, path);
    free(report);
    ptxjit_close(context);
    write_file(templates, "rowstats.cuh", "enum { ROWS = 2 };\n");

    /* Another compiler build. */
    fake_compiler_version(cache, "nvrtc 0.1-test");
    context = open_recorded(cache, templates, NULL);
    report = explain(context, "factor=5", NULL);
    expect_in(report, "disk: miss");
    expect_in(report, "1 differing\n    compiler: nvrtc ");
    expect_in(report, " -> nvrtc 0.1-test\n");
    free(report);
    ptxjit_close(context);

    /* An entry stored before entries kept their components: unknown, not compared. */
    context = open_recorded(cache, templates, NULL);
    snprintf(path, sizeof path, "rm -f '%s'/v1/*/*.key", cache);
    ck_assert_int_eq(system(path), 0);
    report = explain(context, "factor=5", NULL);
    expect_in(report, "nearest: no entry of tiny with known components\n");
    expect_in(report, "unknown: 1 entries");
    free(report);
    ptxjit_close(context);
    test_rmtree(cache);
    test_rmtree(templates);
    free(cache);
    free(templates);
}
END_TEST

START_TEST(explain_cli_prints_the_report_alone)
{
    char *cache = test_mkdtemp(), *templates = test_mkdtemp(), *out = NULL, args[4400];
    write_file(templates, "tiny.cu", TINY_TEMPLATE);
    snprintf(args, sizeof args, "--templates '%s' explain tiny factor=6", templates);
    ck_assert_int_eq(test_run_cli(&out, cache, "", args, "/dev/null"), 0);
    ck_assert_msg(strncmp(out, "key ", 4) == 0, "%s", out);
    expect_in(out, "\nparams factor=6\n");
    expect_in(out, "disk: miss");
    expect_in(out, "nearest: no entry of tiny with known components\n");
    free(out);
    snprintf(args, sizeof args, "--templates '%s' explain tiny factor=600", templates);
    ck_assert_int_ne(test_run_cli(&out, cache, "", args, "/dev/null"), 0);
    ck_assert_str_eq(out, "");
    free(out);
    test_rmtree(cache);
    test_rmtree(templates);
    free(cache);
    free(templates);
}
END_TEST

Suite *suite_events(void)
{
    Suite *suite = suite_create("events");
    TCase *tc = tcase_create("events");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, cold_request_then_memo_then_disk_hit_then_no_callback);
    tcase_add_test(tc, tier_names);
    tcase_add_test(tc, cache_stats_prometheus_parses_and_counts_the_compile);
    tcase_add_test(tc, explain_names_the_differing_component);
    tcase_add_test(tc, explain_cli_prints_the_report_alone);
    suite_add_tcase(suite, tc);
    return suite;
}

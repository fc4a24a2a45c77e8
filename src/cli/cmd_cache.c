/* cmd_cache.c — `cache path|stats|clear|trim`, and `cache export FILE [FAMILY ...]`, `cache
 * import FILE`: the disk cache's place, counters and upkeep, and its bundles
 * (ptxjit_cache_export/_import); what was removed or bundled on stderr, or under --json (cache
 * stats, export, import) as one document on stdout. No GPU needed. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/json.h"

static void summary_json(const char *what, const char *file, const ptxjit_bundle_stats *s)
{
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_member_string(&json, "command", what);
    cli_json_member_string(&json, "file", file);
    cli_json_member_uint(&json, "entries", s->entries);
    cli_json_member_uint(&json, "records", s->records);
    cli_json_member_uint(&json, "corrupt", s->corrupt);
    cli_json_member_uint(&json, "foreign", s->foreign);
    cli_json_member_uint(&json, "unsafe", s->unsafe);
    cli_json_member_uint(&json, "untrusted", s->untrusted);
    cli_json_member_uint(&json, "duplicates", s->duplicates);
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

static void summary_text(const char *what, const char *file, const ptxjit_bundle_stats *s)
{
    int export = strcmp(what, "export") == 0;
    fprintf(stderr, "ptxjit: %s %s: %llu entries and %llu tuning records %s", what, file,
            (unsigned long long)s->entries, (unsigned long long)s->records,
            export ? "written" : "imported");
    if (s->corrupt || s->foreign || s->unsafe || s->untrusted || s->duplicates)
        fprintf(stderr, "; skipped %llu corrupt, %llu foreign, %llu unsafe",
                (unsigned long long)s->corrupt, (unsigned long long)s->foreign,
                (unsigned long long)s->unsafe);
    if (s->untrusted) /* export only: what a load of this cache would refuse */
        fprintf(stderr, ", %llu untrusted (owned by another user or writable by others)",
                (unsigned long long)s->untrusted);
    if (s->duplicates) /* import only: a key the bundle held before */
        fprintf(stderr, ", %llu duplicate", (unsigned long long)s->duplicates);
    fprintf(stderr, "\n");
}

static int export_or_import(cli_args *args, ptxjit_context *context)
{
    const char *what = args->argv[0], *file = args->argv[1];
    /* A family named for export must be one this context knows: a misspelt one would export
     * nothing and look like success (--templates makes a family of one's own known). */
    for (int i = 2; strcmp(what, "export") == 0 && i < args->argc; i++) {
        const char *description;
        ptxjit_status known = ptxjit_family_describe(&description, context, args->argv[i]);
        if (known != PTXJIT_OK)
            return cli_fail(known);
    }
    ptxjit_bundle_stats stats;
    ptxjit_status status =
        strcmp(what, "export") == 0
            ? ptxjit_cache_export(context, file, (const char *const *)args->argv + 2,
                                  args->argc - 2, &stats)
            : ptxjit_cache_import(context, file, &stats);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    (args->json ? summary_json : summary_text)(what, file, &stats);
    return CLI_OK;
}

static void stats_text(ptxjit_context *context, const ptxjit_cache_stats *s)
{
    printf("path     %s\nentries  %llu\nbytes    %llu (cap %llu)\nhits     %llu\n"
           "misses   %llu\nstores   %llu\ncorrupt  %llu (detected, removed and rebuilt)\n"
           "evicted  %llu (least recently used, to stay under the cap)\n"
           "tune records %llu (ptxjit tune; in bytes, not in entries)\n",
           ptxjit_cache_dir(context), (unsigned long long)s->entries,
           (unsigned long long)s->bytes, (unsigned long long)s->max_bytes,
           (unsigned long long)s->hits, (unsigned long long)s->misses,
           (unsigned long long)s->stores, (unsigned long long)s->corrupt,
           (unsigned long long)s->evicted, (unsigned long long)s->tune_records);
    printf("remote   %s\n  hits %llu, misses %llu, rejected %llu (failed a check, never "
           "used), errors %llu\n  publishes %llu, time %llu ms\n",
           s->remote_configured ? "configured" : "none (PTXJIT_REMOTE_CACHE)",
           (unsigned long long)s->remote_hits, (unsigned long long)s->remote_misses,
           (unsigned long long)s->remote_rejected, (unsigned long long)s->remote_errors,
           (unsigned long long)s->remote_publishes, (unsigned long long)s->remote_ms);
    printf("compile once (a key missed by several processes or nodes at once)\n"
           "  waits %llu for this directory's other processes, %llu of them timed out\n"
           "  leases won %llu, waits %llu for other nodes, %llu of them timed out\n",
           (unsigned long long)s->compile_waits, (unsigned long long)s->compile_wait_timeouts,
           (unsigned long long)s->lease_wins, (unsigned long long)s->lease_waits,
           (unsigned long long)s->lease_timeouts);
}

/* The bounds of ptxjit_cache_stats.compile_buckets: in ms (JSON keys), in seconds (Prometheus). */
static const struct {
    const char *ms, *seconds;
} compile_bounds[PTXJIT_COMPILE_BUCKETS] = {{"100", "0.1"},    {"300", "0.3"},  {"1000", "1"},
                                            {"3000", "3"},     {"10000", "10"}, {"30000", "30"}};

/* Every counter of ptxjit_cache_stats, under its field's name. */
static void stats_json(ptxjit_context *context, const ptxjit_cache_stats *s)
{
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_member_string(&json, "path", ptxjit_cache_dir(context));
    cli_json_member_uint(&json, "entries", s->entries);
    cli_json_member_uint(&json, "bytes", s->bytes);
    cli_json_member_uint(&json, "max_bytes", s->max_bytes);
    cli_json_member_uint(&json, "hits", s->hits);
    cli_json_member_uint(&json, "misses", s->misses);
    cli_json_member_uint(&json, "stores", s->stores);
    cli_json_member_uint(&json, "corrupt", s->corrupt);
    cli_json_member_uint(&json, "evicted", s->evicted);
    cli_json_member_uint(&json, "tune_records", s->tune_records);
    cli_json_key(&json, "remote_configured");
    cli_json_bool(&json, s->remote_configured);
    cli_json_member_uint(&json, "remote_hits", s->remote_hits);
    cli_json_member_uint(&json, "remote_misses", s->remote_misses);
    cli_json_member_uint(&json, "remote_rejected", s->remote_rejected);
    cli_json_member_uint(&json, "remote_errors", s->remote_errors);
    cli_json_member_uint(&json, "remote_publishes", s->remote_publishes);
    cli_json_member_uint(&json, "remote_ms", s->remote_ms);
    cli_json_member_uint(&json, "compile_waits", s->compile_waits);
    cli_json_member_uint(&json, "compile_wait_timeouts", s->compile_wait_timeouts);
    cli_json_member_uint(&json, "lease_wins", s->lease_wins);
    cli_json_member_uint(&json, "lease_waits", s->lease_waits);
    cli_json_member_uint(&json, "lease_timeouts", s->lease_timeouts);
    cli_json_member_uint(&json, "compiles", s->compiles);
    cli_json_member_uint(&json, "compile_ms", s->compile_ms);
    cli_json_key(&json, "compile_buckets_ms");
    cli_json_object_begin(&json);
    for (int i = 0; i < PTXJIT_COMPILE_BUCKETS; i++)
        cli_json_member_uint(&json, compile_bounds[i].ms, s->compile_buckets[i]);
    cli_json_object_end(&json);
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

/* One metric of the text exposition format: its HELP and TYPE lines, then one sample per
 * label value (labels NULL: one sample without labels). */
static void metric(const char *name, const char *type, const char *help, const char *label,
                   const char *const *labels, const uint64_t *values, int count)
{
    printf("# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
    for (int i = 0; i < count; i++) {
        if (labels)
            printf("%s{%s=\"%s\"} %llu\n", name, label, labels[i],
                   (unsigned long long)values[i]);
        else
            printf("%s %llu\n", name, (unsigned long long)values[i]);
    }
}

/* A label value escaped as the format wants: backslash, double quote and newline. */
static void print_label_value(const char *text)
{
    for (const char *c = text; *c; c++) {
        if (*c == '\\' || *c == '"')
            printf("\\%c", *c);
        else if (*c == '\n')
            printf("\\n");
        else
            putchar(*c);
    }
}

/* --prometheus: the counters in Prometheus's text exposition format, always the same metrics in
 * the same order, for a node exporter's textfile collector or a scrape through a wrapper. */
static void stats_prometheus(ptxjit_context *context, const ptxjit_cache_stats *s)
{
    static const char *const tiers[] = {"disk", "remote"};
    printf("# HELP ptxjit_cache_info The disk cache directory these metrics describe.\n"
           "# TYPE ptxjit_cache_info gauge\nptxjit_cache_info{dir=\"");
    print_label_value(ptxjit_cache_dir(context));
    printf("\",remote=\"%s\"} 1\n", s->remote_configured ? "configured" : "none");
    metric("ptxjit_cache_entries", "gauge", "Kernels in the disk cache now.", NULL, NULL,
           &s->entries, 1);
    metric("ptxjit_cache_bytes", "gauge", "Bytes of the disk cache now (kernels and tuning "
           "records).", NULL, NULL, &s->bytes, 1);
    metric("ptxjit_cache_max_bytes", "gauge", "The disk cache's cap.", NULL, NULL,
           &s->max_bytes, 1);
    metric("ptxjit_cache_tune_records", "gauge", "Tuning records in the disk cache now.", NULL,
           NULL, &s->tune_records, 1);
    uint64_t hits[] = {s->hits, s->remote_hits}, misses[] = {s->misses, s->remote_misses};
    metric("ptxjit_cache_hits_total", "counter", "Lookups that found a valid entry, by tier.",
           "tier", tiers, hits, 2);
    metric("ptxjit_cache_misses_total", "counter", "Lookups that found no entry, by tier.",
           "tier", tiers, misses, 2);
    metric("ptxjit_cache_stores_total", "counter", "Kernels and records stored on disk.", NULL,
           NULL, &s->stores, 1);
    metric("ptxjit_cache_corrupt_total", "counter", "Disk entries that failed a check "
           "(removed and rebuilt).", NULL, NULL, &s->corrupt, 1);
    metric("ptxjit_cache_evictions_total", "counter", "Disk entries evicted to stay under "
           "the cap.", NULL, NULL, &s->evicted, 1);
    metric("ptxjit_remote_rejected_total", "counter", "Remote entries that failed a check "
           "(never used).", NULL, NULL, &s->remote_rejected, 1);
    metric("ptxjit_remote_errors_total", "counter", "Remote lookups and publishes that "
           "failed (unreachable, timeout).", NULL, NULL, &s->remote_errors, 1);
    metric("ptxjit_remote_publishes_total", "counter", "Entries sent to the remote cache.",
           NULL, NULL, &s->remote_publishes, 1);
    printf("# HELP ptxjit_remote_wait_seconds_total Time spent waiting on the remote cache.\n"
           "# TYPE ptxjit_remote_wait_seconds_total counter\n"
           "ptxjit_remote_wait_seconds_total %.3f\n", s->remote_ms / 1e3);
    metric("ptxjit_compile_waits_total", "counter", "Misses that waited for another "
           "process's compile of their key.", NULL, NULL, &s->compile_waits, 1);
    metric("ptxjit_compile_wait_timeouts_total", "counter", "Those waits that ended at the "
           "bound.", NULL, NULL, &s->compile_wait_timeouts, 1);
    metric("ptxjit_lease_wins_total", "counter", "Remote misses after which this fleet node "
           "took the key's lease and compiled.", NULL, NULL, &s->lease_wins, 1);
    metric("ptxjit_lease_waits_total", "counter", "Requests that waited for another node's "
           "lease.", NULL, NULL, &s->lease_waits, 1);
    metric("ptxjit_lease_timeouts_total", "counter", "Lease waits that ended without the "
           "entry.", NULL, NULL, &s->lease_timeouts, 1);
    printf("# HELP ptxjit_compile_seconds Kernel compiles by the processes of this cache "
           "directory.\n# TYPE ptxjit_compile_seconds histogram\n");
    uint64_t cumulative = 0;
    for (int i = 0; i < PTXJIT_COMPILE_BUCKETS; i++) {
        cumulative += s->compile_buckets[i];
        printf("ptxjit_compile_seconds_bucket{le=\"%s\"} %llu\n", compile_bounds[i].seconds,
               (unsigned long long)cumulative);
    }
    printf("ptxjit_compile_seconds_bucket{le=\"+Inf\"} %llu\n"
           "ptxjit_compile_seconds_sum %.3f\nptxjit_compile_seconds_count %llu\n",
           (unsigned long long)s->compiles, s->compile_ms / 1e3,
           (unsigned long long)s->compiles);
}

/* export FILE [FAMILY ...] | import FILE */
static int bundle_usage(cli_args *args)
{
    const char *what = args->argc >= 1 ? args->argv[0] : "";
    if (strcmp(what, "export") && strcmp(what, "import"))
        return 0;
    return (!strcmp(what, "export") && args->argc >= 2) || args->argc == 2 ? 1 : -1;
}

enum { CACHE_PROMETHEUS };
const cli_option cli_cache_options[] = {
    [CACHE_PROMETHEUS] = {"--prometheus", NULL, NULL},
    {NULL, NULL, NULL},
};

int cmd_cache(cli_args *args)
{
    int bundle = bundle_usage(args);
    const char *what = args->argc == 1 || bundle > 0 ? args->argv[0] : "";
    if (strcmp(what, "path") && strcmp(what, "stats") && strcmp(what, "clear") &&
        strcmp(what, "trim") && bundle <= 0) {
        fprintf(stderr, "ptxjit: usage: ptxjit cache path|stats|clear|trim, ptxjit cache export "
                        "FILE [FAMILY ...], ptxjit cache import FILE\n");
        return CLI_USAGE;
    }
    if (args->json && strcmp(what, "stats") != 0 && bundle <= 0) {
        char command[256];
        snprintf(command, sizeof command, "cache %s", what);
        return cli_json_refused(command);
    }
    int prometheus = args->own[CACHE_PROMETHEUS] != NULL;
    if (prometheus && (strcmp(what, "stats") != 0 || args->json)) {
        fprintf(stderr, "ptxjit: --prometheus is an option of `ptxjit cache stats` alone, "
                        "without --json\n");
        return CLI_USAGE;
    }
    args->options.use_gpu = 0;
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (bundle > 0) {
        code = export_or_import(args, context);
        ptxjit_close(context);
        return code;
    }
    ptxjit_status status = PTXJIT_OK;
    if (strcmp(what, "path") == 0) {
        const char *dir = ptxjit_cache_dir(context);
        if (dir)
            printf("%s\n", dir);
        else
            status = ptxjit_cache_stats_get(&(ptxjit_cache_stats){0}, context);
    } else if (strcmp(what, "stats") == 0) {
        ptxjit_cache_stats s;
        status = ptxjit_cache_stats_get(&s, context);
        if (status == PTXJIT_OK)
            (prometheus  ? stats_prometheus
             : args->json ? stats_json
                          : stats_text)(context, &s);
    } else if (strcmp(what, "trim") == 0) {
        uint64_t evicted, temp_files;
        status = ptxjit_cache_trim(context, &evicted, &temp_files);
        if (status == PTXJIT_OK)
            fprintf(stderr, "ptxjit: evicted %llu entries and removed %llu stale temporary "
                            "files from %s\n",
                    (unsigned long long)evicted, (unsigned long long)temp_files,
                    ptxjit_cache_dir(context));
    } else {
        uint64_t removed;
        status = ptxjit_cache_clear(context, &removed);
        if (status == PTXJIT_OK)
            fprintf(stderr, "ptxjit: removed %llu entries from %s\n",
                    (unsigned long long)removed, ptxjit_cache_dir(context));
    }
    code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    ptxjit_close(context);
    return code;
}

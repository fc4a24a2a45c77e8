/* cache_bundle.c — `ptxjit cache export FILE [FAMILY ...]` and `ptxjit cache import FILE`:
 * bundles of the disk cache (ptxjit_cache_export/_import); a summary on stderr, or under
 * --json the counts on stdout. */
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
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

static void summary_text(const char *what, const char *file, const ptxjit_bundle_stats *s)
{
    int export = strcmp(what, "export") == 0;
    fprintf(stderr, "ptxjit: %s %s: %llu entries and %llu tuning records %s", what, file,
            (unsigned long long)s->entries, (unsigned long long)s->records,
            export ? "written" : "imported");
    if (s->corrupt || s->foreign || s->unsafe)
        fprintf(stderr, "; skipped %llu corrupt, %llu foreign, %llu unsafe",
                (unsigned long long)s->corrupt, (unsigned long long)s->foreign,
                (unsigned long long)s->unsafe);
    fprintf(stderr, "\n");
}

int cli_cache_bundle(cli_args *args, ptxjit_context *context)
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

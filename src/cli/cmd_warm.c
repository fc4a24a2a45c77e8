/* cmd_warm.c — `ptxjit warm FILE|-` and `ptxjit warm --from-records`: requests compiled into
 * the cache at once (ptxjit_warm), a progress bar on stderr when it is a terminal, the summary
 * and each refused request on stderr (or everything as JSON on stdout with --json). Exit
 * status 1 when a request was refused, so that a build step notices. --from-records is warm's
 * own option (cli_warm_options). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/json.h"

enum { WARM_FROM_RECORDS };
const cli_option cli_warm_options[] = {
    [WARM_FROM_RECORDS] = {"--from-records", NULL, NULL},
    {NULL, NULL, NULL},
};

typedef struct {
    char **lines;
    int count, capacity;
} request_list;

static int add_request(request_list *list, const char *text, size_t length)
{
    if (list->count == list->capacity) {
        int capacity = list->capacity ? 2 * list->capacity : 64;
        char **grown = realloc(list->lines, (size_t)capacity * sizeof *grown);
        if (!grown)
            return 0;
        list->lines = grown;
        list->capacity = capacity;
    }
    return (list->lines[list->count++] = strndup(text, length)) != NULL;
}

static void free_requests(request_list *list)
{
    for (int i = 0; i < list->count; i++)
        free(list->lines[i]);
    free(list->lines);
}

/* One request a line; '#' starts a comment; blank lines skipped. */
static int read_requests(request_list *list, FILE *in, const char *name)
{
    char line[8192];
    int number = 0;
    while (fgets(line, sizeof line, in)) {
        number++;
        size_t length = strlen(line);
        if (length == sizeof line - 1 && line[length - 1] != '\n') {
            fprintf(stderr, "ptxjit: %s:%d: the line is longer than %zu bytes\n", name, number,
                    sizeof line - 2);
            return CLI_FAIL;
        }
        line[strcspn(line, "#\r\n")] = '\0';
        const char *start = line + strspn(line, " \t");
        length = strlen(start);
        while (length && (start[length - 1] == ' ' || start[length - 1] == '\t'))
            length--;
        if (length && !add_request(list, start, length)) {
            fprintf(stderr, "ptxjit: out of memory\n");
            return CLI_FAIL;
        }
    }
    if (ferror(in)) {
        fprintf(stderr, "ptxjit: cannot read %s\n", name);
        return CLI_FAIL;
    }
    return CLI_OK;
}

static int read_request_file(request_list *list, const char *path)
{
    if (!strcmp(path, "-"))
        return read_requests(list, stdin, "stdin");
    FILE *in = fopen(path, "r");
    if (!in) {
        fprintf(stderr, "ptxjit: cannot open %s: %s\n", path, strerror(errno));
        return CLI_FAIL;
    }
    int code = read_requests(list, in, path);
    fclose(in);
    return code;
}

/* Every tuning record's winner, as "FAMILY PARAMS". */
static int read_records(request_list *list, ptxjit_context *context)
{
    ptxjit_tune_result **records;
    int count;
    ptxjit_status status = ptxjit_tune_list(&records, &count, context);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    int code = CLI_OK;
    for (int i = 0; i < count && code == CLI_OK; i++) {
        ptxjit_tune_info info;
        ptxjit_tune_result_info(&info, records[i]);
        if (!info.winner)
            continue;
        char *request;
        int length = asprintf(&request, "%s %s", info.family, info.winner);
        if (length < 0 || !add_request(list, request, (size_t)length))
            code = CLI_FAIL;
        if (length >= 0)
            free(request);
    }
    ptxjit_tune_list_free(records, count);
    if (code != CLI_OK)
        fprintf(stderr, "ptxjit: out of memory\n");
    return code;
}

static const char *origin_name(ptxjit_origin origin)
{
    return origin == PTXJIT_ORIGIN_COMPILED ? "compiled"
           : origin == PTXJIT_ORIGIN_DISK   ? "disk"
           : origin == PTXJIT_ORIGIN_REMOTE ? "remote"
           : origin == PTXJIT_ORIGIN_SHARED ? "shared"
                                            : "memory";
}

static void print_json(const ptxjit_warm_result *result)
{
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_member_int(&json, "requests", result->count);
    cli_json_member_int(&json, "compiled", result->compiled);
    cli_json_member_int(&json, "cached", result->cached);
    cli_json_member_int(&json, "refused", result->refused);
    cli_json_member_int(&json, "compile_processes", result->compile_processes);
    cli_json_key(&json, "items");
    cli_json_array_begin(&json);
    for (int i = 0; i < result->count; i++) {
        const ptxjit_warm_item *item = &result->items[i];
        cli_json_object_begin(&json);
        cli_json_member_string(&json, "request", item->request);
        cli_json_member_string(&json, "status", ptxjit_status_name(item->status));
        cli_json_member_string(&json, "origin",
                               item->status == PTXJIT_OK ? origin_name(item->origin) : NULL);
        cli_json_member_string(&json, "message", item->message);
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

static void print_summary(const ptxjit_warm_result *result, ptxjit_context *context)
{
    for (int i = 0; i < result->count; i++)
        if (result->items[i].status != PTXJIT_OK)
            fprintf(stderr, "refused: %s: %s\n", result->items[i].request,
                    result->items[i].message);
    fprintf(stderr, "%d requests: %d compiled, %d already cached, %d refused; %.1f ms", 
            result->count, result->compiled, result->cached, result->refused, result->wall_ms);
    if (result->compile_processes)
        fprintf(stderr, ", %d compile worker process%s", result->compile_processes,
                result->compile_processes == 1 ? "" : "es");
    fprintf(stderr, "; cache %s\n",
            ptxjit_cache_dir(context) ? ptxjit_cache_dir(context)
                                      : "(none: kept in this process's memory only)");
}

static int usage(void)
{
    fprintf(stderr, "ptxjit: usage: ptxjit warm FILE|- (one request a line: FAMILY "
                    "key=value ...; '#' comments), or ptxjit warm --from-records\n");
    return CLI_USAGE;
}

int cmd_warm(cli_args *args)
{
    int from_records = args->own[WARM_FROM_RECORDS] != NULL;
    if (from_records ? args->argc != 0 : args->argc != 1)
        return usage();
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    request_list list = {0};
    code = from_records ? read_records(&list, context)
                                   : read_request_file(&list, args->argv[0]);
    ptxjit_warm_options options = {0};
    if (isatty(STDERR_FILENO))
        options.progress = cli_progress_bar;
    ptxjit_warm_result *result = NULL;
    if (code == CLI_OK) {
        ptxjit_status status = ptxjit_warm(&result, context, (const char *const *)list.lines,
                                           list.count, &options);
        code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    }
    if (code == CLI_OK) {
        if (args->json)
            print_json(result);
        print_summary(result, context);
        code = result->refused ? CLI_FAIL : CLI_OK;
    }
    ptxjit_warm_result_free(result);
    free_requests(&list);
    ptxjit_close(context);
    return code;
}

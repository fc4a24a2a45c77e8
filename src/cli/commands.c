/* commands.c — the commands that need no GPU: list, info, ptx, sass, source, inspect, cache; as
 * text, or (list, info, inspect, cache stats, cache export / import) as JSON under --json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/json.h"

/* The library's messages point embedders at its API; at the command line the same pointer
 * is a command: `ptxjit_family_describe("reduce")` is printed as `'ptxjit info reduce'`. */
static void print_error(const char *message)
{
    static const char api[] = "ptxjit_family_describe(\"";
    const char *at = strstr(message, api);
    const char *name = at ? at + strlen(api) : NULL;
    const char *end = name ? strstr(name, "\")") : NULL;
    if (!end) {
        fprintf(stderr, "ptxjit: %s\n", message);
        return;
    }
    fprintf(stderr, "ptxjit: %.*s'ptxjit info %.*s'%s\n", (int)(at - message), message,
            (int)(end - name), name, end + 2);
}

int cli_fail(ptxjit_status status)
{
    print_error(ptxjit_last_error());
    /* The message is a summary; a person at a terminal gets the whole log too. */
    const char *log = status == PTXJIT_ERR_COMPILE ? ptxjit_last_compile_log() : "";
    if (*log)
        fprintf(stderr, "--- the whole compiler log ---\n%s%s", log,
                log[strlen(log) - 1] == '\n' ? "" : "\n");
    switch (status) {
    case PTXJIT_ERR_PARAM:
    case PTXJIT_ERR_UNKNOWN_FAMILY:
    case PTXJIT_ERR_INVALID_ARGUMENT:
        return CLI_USAGE;
    default:
        return CLI_FAIL;
    }
}

int cli_json_refused(const char *command)
{
    fprintf(stderr, "ptxjit: --json works with list, info, inspect, cache stats, tune, warm and "
                    "bench jit (and cache export, cache import), not with '%s'; leave it out\n",
            command);
    return CLI_USAGE;
}

int cli_open(ptxjit_context **out, cli_args *args)
{
    ptxjit_status status = ptxjit_open(out, &args->options);
    return status == PTXJIT_OK ? CLI_OK : cli_fail(status);
}

char *cli_join_params(int argc, char **argv, const char *const *own, const char **own_values)
{
    size_t total = 1;
    for (int i = 0; i < argc; i++)
        total += strlen(argv[i]) + 1;
    char *joined = calloc(1, total);
    if (!joined)
        return NULL;
    for (int i = 0; i < argc; i++) {
        int taken = 0;
        for (int k = 0; own && own[k]; k++) {
            size_t n = strlen(own[k]);
            if (strncmp(argv[i], own[k], n) == 0 && argv[i][n] == '=') {
                own_values[k] = argv[i] + n + 1;
                taken = 1;
            }
        }
        if (!taken) {
            strcat(joined, *joined ? " " : "");
            strcat(joined, argv[i]);
        }
    }
    return joined;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static const char *origin_text(ptxjit_origin origin)
{
    return origin == PTXJIT_ORIGIN_DISK     ? "disk cache hit"
           : origin == PTXJIT_ORIGIN_MEMORY ? "memory cache hit"
           : origin == PTXJIT_ORIGIN_REMOTE ? "remote cache hit"
           : origin == PTXJIT_ORIGIN_SHARED ? "another context's"
                                            : "compiled";
}

/* origin as --json names it. */
static const char *origin_name(ptxjit_origin origin)
{
    return origin == PTXJIT_ORIGIN_DISK     ? "disk"
           : origin == PTXJIT_ORIGIN_MEMORY ? "memory"
           : origin == PTXJIT_ORIGIN_REMOTE ? "remote"
           : origin == PTXJIT_ORIGIN_SHARED ? "shared"
                                            : "compiled";
}

/* Opens a context and gets FAMILY's kernel from argv; prints a one-line summary to stderr.
 * origin may be NULL. */
static int get_kernel(ptxjit_context **context, ptxjit_kernel **kernel, ptxjit_origin *origin,
                      cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: name a family (see 'ptxjit list')\n");
        return CLI_USAGE;
    }
    int code = cli_open(context, args);
    if (code != CLI_OK)
        return code;
    char *params = cli_join_params(args->argc - 1, args->argv + 1, NULL, NULL);
    ptxjit_origin got;
    double start = now_ms();
    ptxjit_status status = ptxjit_get_kernel(kernel, *context, args->argv[0], params, &got);
    double elapsed = now_ms() - start;
    if (status != PTXJIT_OK) {
        code = cli_fail(status);
        /* The library points embedders at its calls; a person here gets the command. */
        if (status == PTXJIT_ERR_COMPILE)
            fprintf(stderr, "ptxjit: the specialized source: 'ptxjit source %s%s%s'\n",
                    args->argv[0], params && *params ? " " : "", params ? params : "");
        free(params);
        ptxjit_close(*context);
        return code;
    }
    free(params);
    fprintf(stderr, "// ptxjit: %s %s for %s, key %s: %s in %.1f ms\n", args->argv[0],
            ptxjit_kernel_params(*kernel), ptxjit_arch(*context), ptxjit_kernel_key(*kernel),
            origin_text(got), elapsed);
    if (origin)
        *origin = got;
    return CLI_OK;
}

/* {"families": [{"name": "reduce", "origin": "built-in:reduce.cu"}, ...],
 *  "problems": ["PATH: message", ...]} */
static void list_json(ptxjit_context *context)
{
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_key(&json, "families");
    cli_json_array_begin(&json);
    for (int i = 0; i < ptxjit_family_count(context); i++) {
        cli_json_object_begin(&json);
        cli_json_member_string(&json, "name", ptxjit_family_name(context, i));
        cli_json_member_string(&json, "origin", ptxjit_family_origin(context, i));
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    cli_json_key(&json, "problems");
    cli_json_array_begin(&json);
    for (int i = 0; i < ptxjit_template_problem_count(context); i++)
        cli_json_string(&json, ptxjit_template_problem(context, i));
    cli_json_array_end(&json);
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

/* The templates that could not be used were each logged as a warning when the context
 * opened; the list ends by saying what that means for it. */
static void list_problems(ptxjit_context *context)
{
    int count = ptxjit_template_problem_count(context);
    if (count)
        fprintf(stderr, "ptxjit: %d template problem%s, warned above: the families they name "
                        "are unavailable until the files are fixed\n",
                count, count == 1 ? "" : "s");
}

int cmd_list(cli_args *args)
{
    if (args->argc) {
        fprintf(stderr, "ptxjit: list takes no arguments, not '%s'; usage: ptxjit [--json] "
                        "list\n",
                args->argv[0]);
        return CLI_USAGE;
    }
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (args->json)
        list_json(context);
    else
        for (int i = 0; i < ptxjit_family_count(context); i++)
            printf("%-12s %s\n", ptxjit_family_name(context, i),
                   ptxjit_family_origin(context, i));
    list_problems(context);
    ptxjit_close(context);
    return CLI_OK;
}

static const char *family_origin(ptxjit_context *context, const char *family)
{
    for (int i = 0; i < ptxjit_family_count(context); i++)
        if (strcmp(ptxjit_family_name(context, i), family) == 0)
            return ptxjit_family_origin(context, i);
    return NULL;
}

/* One parameter: its kind's own members (int: min, max, pow2; enum and dtype: values), then
 * the default as a request writes it, the conditional defaults in the order they are tried,
 * doc and when (null when the template gives none). */
static ptxjit_status param_json(cli_json *json, ptxjit_context *context, const char *family,
                                int index)
{
    ptxjit_param_info param;
    ptxjit_status status = ptxjit_family_param(&param, context, family, index);
    if (status != PTXJIT_OK)
        return status;
    cli_json_object_begin(json);
    cli_json_member_string(json, "name", param.name);
    cli_json_member_string(json, "kind", param.kind_name);
    if (param.kind == PTXJIT_PARAM_INT) {
        cli_json_member_int(json, "min", param.min);
        cli_json_member_int(json, "max", param.max);
        cli_json_key(json, "pow2");
        cli_json_bool(json, param.pow2);
    } else {
        cli_json_key(json, "values");
        cli_json_flat_array_begin(json);
        for (int v = 0; v < param.value_count; v++)
            cli_json_string(json, param.values[v]);
        cli_json_array_end(json);
    }
    cli_json_member_string(json, "default", param.default_text);
    cli_json_key(json, "default_if");
    cli_json_array_begin(json);
    for (int c = 0; c < param.default_if_count; c++) {
        ptxjit_default_if_info when;
        status = ptxjit_family_default_if(&when, context, family, index, c);
        if (status != PTXJIT_OK)
            break;
        cli_json_object_begin(json);
        cli_json_member_string(json, "when", when.condition);
        cli_json_member_string(json, "value", when.value_text);
        cli_json_object_end(json);
    }
    cli_json_array_end(json);
    cli_json_member_string(json, "doc", param.doc);
    cli_json_member_string(json, "when", param.when);
    cli_json_object_end(json);
    return status;
}

/* The family's schema as one object. The counts are asked first: an unknown family fails
 * there, before anything is written; past them no call can fail. */
static ptxjit_status info_json(ptxjit_context *context, const char *family)
{
    const char *doc;
    int params, constraints, entries;
    ptxjit_status status = ptxjit_family_doc(&doc, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_param_count(&params, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_constraint_count(&constraints, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_family_entry_count(&entries, context, family);
    if (status != PTXJIT_OK)
        return status;
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_member_string(&json, "family", family);
    cli_json_member_string(&json, "origin", family_origin(context, family));
    cli_json_member_string(&json, "doc", doc);
    cli_json_key(&json, "params");
    cli_json_array_begin(&json);
    for (int i = 0; i < params && status == PTXJIT_OK; i++)
        status = param_json(&json, context, family, i);
    cli_json_array_end(&json);
    cli_json_key(&json, "constraints");
    cli_json_array_begin(&json);
    for (int i = 0; i < constraints && status == PTXJIT_OK; i++) {
        ptxjit_constraint_info constraint;
        if ((status = ptxjit_family_constraint(&constraint, context, family, i)) != PTXJIT_OK)
            break;
        cli_json_object_begin(&json);
        cli_json_member_string(&json, "expression", constraint.expression);
        cli_json_member_string(&json, "message", constraint.message);
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    int tunes = 0;
    if (status == PTXJIT_OK)
        status = ptxjit_family_tune_count(&tunes, context, family);
    cli_json_key(&json, "tune");
    cli_json_array_begin(&json);
    for (int i = 0; i < tunes && status == PTXJIT_OK; i++) {
        ptxjit_tune_line_info line;
        if ((status = ptxjit_family_tune_line(&line, context, family, i)) != PTXJIT_OK)
            break;
        cli_json_object_begin(&json);
        cli_json_member_string(&json, "param", line.param);
        cli_json_member_string(&json, "values", line.values);
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    cli_json_key(&json, "entries");
    cli_json_flat_array_begin(&json);
    for (int i = 0; i < entries && status == PTXJIT_OK; i++) {
        const char *entry;
        if ((status = ptxjit_family_entry(&entry, context, family, i)) == PTXJIT_OK)
            cli_json_string(&json, entry);
    }
    cli_json_array_end(&json);
    cli_json_object_end(&json);
    cli_json_finish(&json);
    return status;
}

int cmd_info(cli_args *args)
{
    if (args->argc != 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit info FAMILY\n");
        return CLI_USAGE;
    }
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    const char *text;
    ptxjit_status status = args->json ? info_json(context, args->argv[0])
                                      : ptxjit_family_describe(&text, context, args->argv[0]);
    if (status == PTXJIT_OK && !args->json)
        fputs(text, stdout);
    if (status != PTXJIT_OK)
        code = cli_fail(status);
    ptxjit_close(context);
    return code;
}

int cmd_ptx(cli_args *args)
{
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    int code = get_kernel(&context, &kernel, NULL, args);
    if (code != CLI_OK)
        return code;
    fputs(ptxjit_kernel_ptx(kernel), stdout);
    ptxjit_close(context);
    return CLI_OK;
}

/* The kernel's SASS, disassembled by nvdisasm: only that on stdout, as ptx prints PTX. No
 * nvdisasm is found out before anything is compiled. */
int cmd_sass(cli_args *args)
{
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    char nvdisasm[4096];
    int code = args->argc < 1 ? CLI_OK : cli_nvdisasm_find(nvdisasm, sizeof nvdisasm);
    if (code == CLI_OK)
        code = get_kernel(&context, &kernel, NULL, args);
    if (code != CLI_OK)
        return code;
    size_t size;
    const void *cubin = ptxjit_kernel_cubin(kernel, &size);
    code = cli_disassemble(nvdisasm, cubin, size);
    ptxjit_close(context);
    return code;
}

/* Specializes FAMILY's request without compiling it and prints what its route would compile:
 * also for a request whose compile fails, which is when the source is wanted most. */
static int print_specialized(cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: name a family (see 'ptxjit list')\n");
        return CLI_USAGE;
    }
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    char *params = cli_join_params(args->argc - 1, args->argv + 1, NULL, NULL);
    char *source = NULL, *canonical = NULL;
    ptxjit_status status = params ? ptxjit_specialize(&source, context, args->argv[0], params)
                                  : PTXJIT_ERR_OUT_OF_MEMORY;
    if (status == PTXJIT_OK)
        status = ptxjit_canonical_params(&canonical, context, args->argv[0], params);
    if (status == PTXJIT_OK) {
        fprintf(stderr, "// ptxjit: %s %s for %s: specialized, not compiled\n", args->argv[0],
                canonical, ptxjit_arch(context));
        fputs(source, stdout);
    } else {
        code = cli_fail(status);
    }
    free(canonical);
    free(source);
    free(params);
    ptxjit_close(context);
    return code;
}

int cmd_source(cli_args *args)
{
    return print_specialized(args);
}

int cmd_ir(cli_args *args)
{
    /* The IR exists only on the llvm route. */
    args->options.backend = "llvm";
    return print_specialized(args);
}

/* One entry's line: the driver's figures with a GPU; without one, the cubin's, saying so. */
static void entry_text(ptxjit_kernel *kernel, const char *entry)
{
    ptxjit_kernel_resources r;
    const char *from = "from the driver";
    char why[1200];
    if (ptxjit_kernel_resources_get(&r, kernel, entry) != PTXJIT_OK) {
        snprintf(why, sizeof why, "from the cubin; no figures from the driver: %s",
                 ptxjit_last_error());
        from = why;
        if (ptxjit_kernel_resources_static(&r, kernel, entry) != PTXJIT_OK) {
            printf("entry       %s (resources unknown: %s)\n", entry, ptxjit_last_error());
            return;
        }
    }
    printf("entry       %s: %d registers, %d B static shared, %d B local%s, at most %d threads "
           "per block, %d B of parameters",
           entry, r.registers, r.static_smem, r.local_bytes,
           r.local_bytes ? " (spills or stack arrays)" : "", r.max_threads, r.param_bytes);
    if (r.spill_stores >= 0)
        printf(", spills %d B stored and %d B loaded", r.spill_stores, r.spill_loads);
    printf(" (%s)\n", from);
}

static void inspect_text(ptxjit_context *context, ptxjit_kernel *kernel)
{
    size_t cubin_size;
    ptxjit_kernel_cubin(kernel, &cubin_size);
    const char *options = ptxjit_kernel_compile_options(kernel);
    printf("family      %s\nparams      %s\noptions     %s\narch        %s\nkey         %s\n",
           ptxjit_kernel_family(kernel), ptxjit_kernel_params(kernel),
           *options ? options : "(none)", ptxjit_arch(context), ptxjit_kernel_key(kernel));
    printf("ptx         %zu bytes\ncubin       %zu bytes\n", strlen(ptxjit_kernel_ptx(kernel)),
           cubin_size);
    const char *cache = ptxjit_cache_dir(context);
    printf("cache       %s\n", cache ? cache : "(off)");
    for (int i = 0; i < ptxjit_kernel_entry_count(kernel); i++)
        entry_text(kernel, ptxjit_kernel_entry_name(kernel, i));
    const char *log = ptxjit_kernel_log(kernel);
    printf("log         %s\n", log && *log ? log : "(empty)");
}

/* "key": {registers, ...} when known, else null; then "key_error": null or why not. */
static void resources_json(cli_json *json, const char *key, const char *error_key, int known,
                           const ptxjit_kernel_resources *r)
{
    cli_json_key(json, key);
    if (known) {
        cli_json_object_begin(json);
        cli_json_member_int(json, "registers", r->registers);
        cli_json_member_int(json, "static_smem", r->static_smem);
        cli_json_member_int(json, "local_bytes", r->local_bytes);
        cli_json_member_int(json, "max_threads", r->max_threads);
        cli_json_member_int(json, "param_bytes", r->param_bytes);
        const char *names[] = {"spill_stores", "spill_loads"};
        const int values[] = {r->spill_stores, r->spill_loads};
        for (int i = 0; i < 2; i++) {
            cli_json_key(json, names[i]);
            if (values[i] >= 0)
                cli_json_int(json, values[i]);
            else
                cli_json_null(json); /* the compile log does not say */
        }
        cli_json_object_end(json);
    } else {
        cli_json_null(json);
    }
    cli_json_member_string(json, error_key, known ? NULL : ptxjit_last_error());
}

/* One entry: {"name", "resources" (the driver's), "resources_error", "cubin_resources" (read
 * from the cubin, no GPU needed), "cubin_resources_error"}; a set that is not known is null,
 * with the reason in its _error member. */
static void entry_json(cli_json *json, ptxjit_kernel *kernel, const char *entry)
{
    ptxjit_kernel_resources r;
    cli_json_object_begin(json);
    cli_json_member_string(json, "name", entry);
    int known = ptxjit_kernel_resources_get(&r, kernel, entry) == PTXJIT_OK;
    resources_json(json, "resources", "resources_error", known, &r);
    known = ptxjit_kernel_resources_static(&r, kernel, entry) == PTXJIT_OK;
    resources_json(json, "cubin_resources", "cubin_resources_error", known, &r);
    cli_json_object_end(json);
}

static void inspect_json(ptxjit_context *context, ptxjit_kernel *kernel, ptxjit_origin origin)
{
    size_t cubin_size;
    ptxjit_kernel_cubin(kernel, &cubin_size);
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_member_string(&json, "family", ptxjit_kernel_family(kernel));
    cli_json_member_string(&json, "params", ptxjit_kernel_params(kernel));
    cli_json_member_string(&json, "compile_options", ptxjit_kernel_compile_options(kernel));
    cli_json_member_string(&json, "arch", ptxjit_arch(context));
    cli_json_member_string(&json, "key", ptxjit_kernel_key(kernel));
    cli_json_member_string(&json, "origin", origin_name(origin));
    cli_json_member_uint(&json, "ptx_bytes", strlen(ptxjit_kernel_ptx(kernel)));
    cli_json_member_uint(&json, "cubin_bytes", cubin_size);
    cli_json_member_string(&json, "cache_dir", ptxjit_cache_dir(context));
    cli_json_key(&json, "entries");
    cli_json_array_begin(&json);
    for (int i = 0; i < ptxjit_kernel_entry_count(kernel); i++)
        entry_json(&json, kernel, ptxjit_kernel_entry_name(kernel, i));
    cli_json_array_end(&json);
    cli_json_member_string(&json, "log", ptxjit_kernel_log(kernel));
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

int cmd_inspect(cli_args *args)
{
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    int code = get_kernel(&context, &kernel, &origin, args);
    if (code != CLI_OK)
        return code;
    if (args->json)
        inspect_json(context, kernel, origin);
    else
        inspect_text(context, kernel);
    ptxjit_close(context);
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
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

/* export FILE [FAMILY ...] | import FILE */
static int bundle_usage(cli_args *args)
{
    const char *what = args->argc >= 1 ? args->argv[0] : "";
    if (strcmp(what, "export") && strcmp(what, "import"))
        return 0;
    return (!strcmp(what, "export") && args->argc >= 2) || args->argc == 2 ? 1 : -1;
}

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
    args->options.use_gpu = 0;
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (bundle > 0) {
        code = cli_cache_bundle(args, context);
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
            (args->json ? stats_json : stats_text)(context, &s);
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

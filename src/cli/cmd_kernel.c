/* cmd_kernel.c — one kernel's artefacts: `ptx`, `sass` (through nvdisasm.c), `source`, `ir` and
 * `inspect`. The artefact alone goes to stdout, the same bytes whether compiled or from a
 * cache; the line saying which goes to stderr. No GPU needed (inspect shows the driver's
 * figures where there is one). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/json.h"
#include "cli/nvdisasm.h"

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

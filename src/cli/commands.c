/* commands.c — the commands that need no GPU: list, info, ptx, source, inspect, cache. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"

int cli_fail(ptxjit_status status)
{
    fprintf(stderr, "ptxjit: %s\n", ptxjit_last_error());
    switch (status) {
    case PTXJIT_ERR_PARAM:
    case PTXJIT_ERR_UNKNOWN_FAMILY:
    case PTXJIT_ERR_INVALID_ARGUMENT:
        return CLI_USAGE;
    default:
        return CLI_FAIL;
    }
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
                                            : "compiled";
}

/* Opens a context and gets FAMILY's kernel from argv; prints a one-line summary to stderr. */
static int get_kernel(ptxjit_context **context, ptxjit_kernel **kernel, cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: name a family (see 'ptxjit list')\n");
        return CLI_USAGE;
    }
    int code = cli_open(context, args);
    if (code != CLI_OK)
        return code;
    char *params = cli_join_params(args->argc - 1, args->argv + 1, NULL, NULL);
    ptxjit_origin origin;
    double start = now_ms();
    ptxjit_status status = ptxjit_get_kernel(kernel, *context, args->argv[0], params, &origin);
    double elapsed = now_ms() - start;
    free(params);
    if (status != PTXJIT_OK) {
        code = cli_fail(status);
        ptxjit_close(*context);
        return code;
    }
    fprintf(stderr, "// ptxjit: %s %s for %s, key %s: %s in %.1f ms\n", args->argv[0],
            ptxjit_kernel_params(*kernel), ptxjit_arch(*context), ptxjit_kernel_key(*kernel),
            origin_text(origin), elapsed);
    return CLI_OK;
}

int cmd_list(cli_args *args)
{
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    for (int i = 0; i < ptxjit_family_count(context); i++)
        printf("%-12s %s\n", ptxjit_family_name(context, i), ptxjit_family_origin(context, i));
    ptxjit_close(context);
    return CLI_OK;
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
    ptxjit_status status = ptxjit_family_describe(&text, context, args->argv[0]);
    if (status == PTXJIT_OK)
        fputs(text, stdout);
    else
        code = cli_fail(status);
    ptxjit_close(context);
    return code;
}

int cmd_ptx(cli_args *args)
{
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    int code = get_kernel(&context, &kernel, args);
    if (code != CLI_OK)
        return code;
    fputs(ptxjit_kernel_ptx(kernel), stdout);
    ptxjit_close(context);
    return CLI_OK;
}

/* Prints the kernel's source or IR and closes the context. The IR is built again on request,
 * which can fail (out of memory): then ptxjit_last_error() says why. */
static int print_source(ptxjit_context *context, ptxjit_kernel *kernel)
{
    const char *source = ptxjit_kernel_source(kernel);
    int code = source ? CLI_OK : cli_fail(PTXJIT_ERR_OUT_OF_MEMORY);
    if (source)
        fputs(source, stdout);
    ptxjit_close(context);
    return code;
}

int cmd_source(cli_args *args)
{
    /* A disk hit carries no source, so specialize without the disk cache. */
    args->options.disk_cache = 0;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    int code = get_kernel(&context, &kernel, args);
    if (code != CLI_OK)
        return code;
    return print_source(context, kernel);
}

int cmd_ir(cli_args *args)
{
    /* The IR exists only where the kernel is generated: no disk hit, always the llvm route. */
    args->options.disk_cache = 0;
    args->options.backend = "llvm";
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    int code = get_kernel(&context, &kernel, args);
    if (code != CLI_OK)
        return code;
    return print_source(context, kernel);
}

int cmd_inspect(cli_args *args)
{
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    int code = get_kernel(&context, &kernel, args);
    if (code != CLI_OK)
        return code;
    size_t cubin_size;
    ptxjit_kernel_cubin(kernel, &cubin_size);
    printf("family      %s\nparams      %s\narch        %s\nkey         %s\n",
           ptxjit_kernel_family(kernel), ptxjit_kernel_params(kernel), ptxjit_arch(context),
           ptxjit_kernel_key(kernel));
    printf("ptx         %zu bytes\ncubin       %zu bytes\n", strlen(ptxjit_kernel_ptx(kernel)),
           cubin_size);
    const char *cache = ptxjit_cache_dir(context);
    printf("cache       %s\n", cache ? cache : "(off)");
    for (int i = 0; i < ptxjit_kernel_entry_count(kernel); i++) {
        const char *entry = ptxjit_kernel_entry_name(kernel, i);
        ptxjit_kernel_resources r;
        if (ptxjit_kernel_resources_get(&r, kernel, entry) == PTXJIT_OK)
            printf("entry       %s: %d registers, %d B static shared, %d B local%s\n", entry,
                   r.registers, r.static_smem, r.local_bytes, r.local_bytes ? " (spills)" : "");
        else
            printf("entry       %s (resources need a GPU: %s)\n", entry, ptxjit_last_error());
    }
    const char *log = ptxjit_kernel_log(kernel);
    printf("log         %s\n", log && *log ? log : "(empty)");
    ptxjit_close(context);
    return CLI_OK;
}

int cmd_cache(cli_args *args)
{
    const char *what = args->argc == 1 ? args->argv[0] : "";
    if (strcmp(what, "path") && strcmp(what, "stats") && strcmp(what, "clear") &&
        strcmp(what, "trim")) {
        fprintf(stderr, "ptxjit: usage: ptxjit cache path|stats|clear|trim\n");
        return CLI_USAGE;
    }
    args->options.use_gpu = 0;
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
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
            printf("path     %s\nentries  %llu\nbytes    %llu (cap %llu)\nhits     %llu\n"
                   "misses   %llu\nstores   %llu\ncorrupt  %llu (detected, removed and rebuilt)\n"
                   "evicted  %llu (least recently used, to stay under the cap)\n",
                   ptxjit_cache_dir(context), (unsigned long long)s.entries,
                   (unsigned long long)s.bytes, (unsigned long long)s.max_bytes,
                   (unsigned long long)s.hits, (unsigned long long)s.misses,
                   (unsigned long long)s.stores, (unsigned long long)s.corrupt,
                   (unsigned long long)s.evicted);
    } else if (strcmp(what, "trim") == 0) {
        uint64_t evicted, temp_files;
        status = ptxjit_cache_trim(context, &evicted, &temp_files);
        if (status == PTXJIT_OK)
            printf("evicted %llu entries and removed %llu stale temporary files from %s\n",
                   (unsigned long long)evicted, (unsigned long long)temp_files,
                   ptxjit_cache_dir(context));
    } else {
        uint64_t removed;
        status = ptxjit_cache_clear(context, &removed);
        if (status == PTXJIT_OK)
            printf("removed %llu entries from %s\n", (unsigned long long)removed,
                   ptxjit_cache_dir(context));
    }
    code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    ptxjit_close(context);
    return code;
}

/* run.c — `run`, `bench` and `jit-time`: the family's runner from the table, its size words
 * and runs= parsed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/count.h"
#include "util/latency.h"
#include "cli/family_cli.h"
#include "cli/timing.h"
#include "catalog/family.h"

int cli_count(size_t *out, const char *text, const char *name, size_t fallback, uint64_t max)
{
    if (!text) {
        *out = fallback;
        return 1;
    }
    uint64_t value;
    if (!pj_count_parse(&value, text, strlen(text), max)) {
        if (max < ((uint64_t)1 << 30)) /* small counts: the power forms would only confuse */
            fprintf(stderr, "ptxjit: %s=%s is not a count from 1 to %llu\n", name, text,
                    (unsigned long long)max);
        else
            fprintf(stderr, "ptxjit: %s=%s is not a count from 1 to %llu (e.g. %s=1000003, "
                            "%s=2^30 or %s=2^28+37)\n",
                    name, text, (unsigned long long)max, name, name, name);
        return 0;
    }
    *out = (size_t)value;
    return 1;
}

static int parse_count(size_t *out, const char *text, const char *name, size_t fallback)
{
    return cli_count(out, text, name, fallback,
                     strcmp(name, "runs") == 0 ? CLI_MAX_RUNS : PJ_COUNT_MAX);
}

static int open_gpu(ptxjit_context **context, cli_args *args)
{
    int code = cli_open(context, args);
    if (code != CLI_OK)
        return code;
    if (ptxjit_gpu_status(*context) != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: this command needs a GPU: %s\n", ptxjit_last_error());
        ptxjit_close(*context);
        return CLI_FAIL;
    }
    return CLI_OK;
}

/* Takes the family's size words out of argv into sizes (defaults where absent); the rest is
 * the parameter string (caller frees). NULL after a usage message. */
static char *split_sizes(size_t *sizes, const cli_family *f, int argc, char **argv)
{
    const char *own[16] = {NULL}, *values[16] = {NULL};
    int count = 0;
    while (f->sizes[count] && count < 14) {
        own[count] = f->sizes[count];
        count++;
    }
    own[count] = "runs";
    char *params = cli_join_params(argc, argv, own, values);
    for (int i = 0; params && i < count; i++)
        if (!parse_count(&sizes[i], values[i], own[i], f->size_defaults[i])) {
            free(params);
            return NULL;
        }
    if (params && !parse_count(&sizes[count], values[count], "runs", 20)) {
        free(params);
        return NULL;
    }
    return params;
}

/* PARAM=auto resolved for the problem of sizes (the library's problem words, by position of
 * the family's size words: transpose's h, w are its rows, cols): the canonical params of the
 * tuned winner, or of the defaults when no record exists (the library says so). Caller frees;
 * NULL after printing the error. */
static char *resolve_auto(ptxjit_context *context, const cli_family *f, const char *params,
                          const size_t *sizes)
{
    const pj_family *lib = pj_family_find(f->name);
    char problem[256] = "";
    size_t used = 0;
    for (int i = 0; lib && lib->tune && lib->tune->problem_names[i] && f->sizes[i]; i++)
        used += (size_t)snprintf(problem + used, sizeof problem - used, "%s%s=%zu", i ? " " : "",
                                 lib->tune->problem_names[i], sizes[i]);
    ptxjit_kernel *kernel;
    ptxjit_status status =
        ptxjit_get_kernel_tuned(&kernel, context, f->name, params, problem, NULL);
    if (status != PTXJIT_OK) {
        cli_fail(status);
        return NULL;
    }
    return strdup(ptxjit_kernel_params(kernel));
}

int cmd_run(cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit run FAMILY [key=value ...] [SIZE=N ...] "
                        "[runs=R]\n");
        return CLI_USAGE;
    }
    const cli_family *f = cli_family_find(args->argv[0]);
    if (!f)
        return CLI_USAGE;
    size_t sizes[16];
    char *params = split_sizes(sizes, f, args->argc - 1, args->argv + 1);
    if (!params)
        return CLI_USAGE;
    int count = 0;
    while (f->sizes[count])
        count++;
    ptxjit_context *context = NULL;
    int code = open_gpu(&context, args);
    if (code != CLI_OK) { /* open_gpu closed it */
        free(params);
        return code;
    }
    if (strstr(params, "=auto")) {
        char *resolved = resolve_auto(context, f, params, sizes);
        free(params);
        params = resolved;
        code = params ? CLI_OK : CLI_USAGE;
    }
    if (code == CLI_OK)
        code = f->run(context, params, sizes, (int)sizes[count]);
    ptxjit_close(context);
    free(params);
    return code;
}

/* `bench FAMILY [n=N] [runs=R] ["PARAMS" ...]`: each further argument is one parameter set,
 * timed instead of the family's built-in rows where its bench takes sets. */
int cmd_bench(cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit bench FAMILY|jit|backends|compile|tune|multigpu "
                        "[n=N] [runs=R] [\"PARAMS\" ...]\n");
        return CLI_USAGE;
    }
    const char *family = args->argv[0];
    if (args->json && strcmp(family, "jit") != 0) { /* bench jit alone prints JSON */
        char what[256];
        snprintf(what, sizeof what, "bench %s", family);
        return cli_json_refused(what);
    }
    if (strcmp(family, "backends") == 0)
        return cmd_bench_backends(args);
    if (strcmp(family, "compile") == 0)
        return cmd_bench_compile(args);
    if (strcmp(family, "tune") == 0)
        return cmd_bench_tune(args);
    if (strcmp(family, "jit") == 0)
        return cmd_bench_jit(args);
    if (strcmp(family, "multigpu") == 0)
        return cmd_bench_multigpu(args);
    const cli_family *f = cli_family_find(family);
    if (!f)
        return CLI_USAGE;
    const char *n_text = NULL, *runs_text = NULL;
    const char **sets = calloc((size_t)args->argc, sizeof *sets);
    int set_count = 0;
    for (int i = 1; sets && i < args->argc; i++) {
        if (strncmp(args->argv[i], "n=", 2) == 0)
            n_text = args->argv[i] + 2;
        else if (strncmp(args->argv[i], "runs=", 5) == 0)
            runs_text = args->argv[i] + 5;
        else
            sets[set_count++] = args->argv[i];
    }
    size_t n = 0, runs;
    ptxjit_context *context = NULL;
    int code = CLI_USAGE;
    if (!sets)
        fprintf(stderr, "ptxjit: out of memory\n");
    else if (set_count && !f->takes_sets)
        fprintf(stderr, "ptxjit: bench %s takes only n= and runs=, not '%s'\n", family, sets[0]);
    else if (parse_count(&n, n_text, "n", f->bench_n ? f->bench_n : 0) &&
             parse_count(&runs, runs_text, "runs", 20) &&
             (code = open_gpu(&context, args)) == CLI_OK) {
        /* PARAM=auto in a set: the winner for the square problem n (every size n). */
        char **owned = calloc((size_t)set_count + 1, sizeof *owned);
        size_t square[16];
        for (int i = 0; i < 16; i++)
            square[i] = n;
        for (int i = 0; owned && i < set_count && code == CLI_OK; i++)
            if (strstr(sets[i], "=auto")) {
                owned[i] = resolve_auto(context, f, sets[i], square);
                code = owned[i] ? CLI_OK : CLI_USAGE;
                sets[i] = owned[i];
            }
        if (code == CLI_OK)
            code = f->bench(context, n, (int)runs, sets, set_count);
        for (int i = 0; owned && i < set_count; i++)
            free(owned[i]);
        free(owned);
        ptxjit_close(context);
    }
    free(sets);
    return code;
}

/* `ptxjit jit-time FAMILY PARAMS`: one context open and one kernel request in this fresh
 * process, timed; `bench jit` runs it to measure a disk hit without anything preloaded. */
int cmd_jit_time(cli_args *args)
{
    double stages[PJ_LATENCY_COUNT] = {0};
    if (args->argc < 1) {
        fprintf(stderr, "usage: ptxjit jit-time FAMILY [key=value ...]\n");
        return CLI_USAGE;
    }
    /* The request's text first, as a program has its own before it asks: the timing is the
     * library's alone, and the process's first malloc (glibc setting up its heap) falls
     * outside it, as it does in any program that embeds the library. */
    char *params = cli_join_params(args->argc - 1, args->argv + 1, NULL, NULL);
    if (!params)
        return cli_fail(pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory"));
    pj_latency_probe = stages;
    double start = wall_ms();
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK) {
        free(params);
        return code;
    }
    double opened = wall_ms();
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ptxjit_status status = args->argc < 1 ? PTXJIT_ERR_INVALID_ARGUMENT
                           : ptxjit_get_kernel(&kernel, context, args->argv[0], params, &origin);
    double got = wall_ms();
    pj_latency_probe = NULL;
    free(params);
    if (status == PTXJIT_OK) {
        printf("open_ms %.3f get_ms %.3f origin %d", opened - start, got - opened, origin);
        for (int i = 0; i < PJ_LATENCY_COUNT; i++)
            printf(" %.1f", stages[i]); /* microseconds, in latency.h's order */
        printf("\n");
    } else
        code = cli_fail(status);
    ptxjit_close(context);
    return code;
}

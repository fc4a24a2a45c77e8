/* run.c — `run`, `bench` and `jit-time`: parse n=, h=, w=, m=, k=, runs=; find the family's
 * runner. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/run_family.h"
#include "cli/timing.h"

static int parse_count(size_t *out, const char *text, const char *name, size_t fallback)
{
    if (!text) {
        *out = fallback;
        return 1;
    }
    char *end;
    unsigned long long value = strtoull(text, &end, 0);
    /* 2^k written as "2^30" is common in the write-ups; accept it, plus an optional +c. */
    if (end[0] == '^' && value == 2) {
        unsigned long long power = strtoull(end + 1, &end, 10);
        value = power < 48 ? 1ull << power : 0;
        if (*end == '+')
            value += strtoull(end + 1, &end, 10);
    }
    if (*end || value == 0) {
        fprintf(stderr, "ptxjit: %s=%s is not a positive count (e.g. %s=1000003 or %s=2^30)\n",
                name, text, name, name);
        return 0;
    }
    *out = (size_t)value;
    return 1;
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

static int known_runner(const char *family)
{
    if (strcmp(family, "reduce") == 0 || strcmp(family, "transpose") == 0 ||
        strcmp(family, "matmul") == 0)
        return 1;
    fprintf(stderr, "ptxjit: no runner for family '%s' (runners: reduce, transpose, matmul); get "
                    "the kernel with ptxjit_get_kernel and launch it with ptxjit_launch\n", family);
    return 0;
}

int cmd_run(cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit run FAMILY [key=value ...] [n=N] [h=H w=W] "
                        "[m=M n=N k=K] [runs=R]\n");
        return CLI_USAGE;
    }
    const char *family = args->argv[0];
    if (!known_runner(family))
        return CLI_USAGE;
    enum { N, RUNS, H, W, M, K, OWN };
    static const char *const own[] = {"n", "runs", "h", "w", "m", "k", NULL};
    const char *values[OWN] = {NULL};
    char *params = cli_join_params(args->argc - 1, args->argv + 1, own, values);
    int matmul = strcmp(family, "matmul") == 0, reduce = strcmp(family, "reduce") == 0;
    size_t n, runs, h, w, m, k;
    ptxjit_context *context = NULL;
    int code = CLI_USAGE;
    if (params && parse_count(&n, values[N], "n", matmul ? 4096 : (size_t)1 << 26) &&
        parse_count(&runs, values[RUNS], "runs", 20) && parse_count(&h, values[H], "h", 16384) &&
        parse_count(&w, values[W], "w", 16384) && parse_count(&m, values[M], "m", 4096) &&
        parse_count(&k, values[K], "k", 4096) && (code = open_gpu(&context, args)) == CLI_OK) {
        code = reduce   ? reduce_run(context, params, n, (int)runs)
               : matmul ? matmul_run(context, params, m, n, k, (int)runs)
                        : transpose_run(context, params, h, w, (int)runs);
        ptxjit_close(context);
    }
    free(params);
    return code;
}

/* `bench FAMILY [n=N] [runs=R] ["PARAMS" ...]`: each further argument is one parameter set
 * (transpose and matmul), timed instead of the built-in sweep or progression. */
int cmd_bench(cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit bench FAMILY|jit [n=N] [runs=R] [\"PARAMS\" ...]\n");
        return CLI_USAGE;
    }
    const char *family = args->argv[0];
    if (strcmp(family, "backends") == 0)
        return cmd_bench_backends(args);
    if (strcmp(family, "compile") == 0)
        return cmd_bench_compile(args);
    int jit = strcmp(family, "jit") == 0, reduce = strcmp(family, "reduce") == 0;
    if (!jit && !known_runner(family))
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
    else if (set_count && (jit || reduce))
        fprintf(stderr, "ptxjit: bench %s takes only n= and runs=, not '%s'\n", family, sets[0]);
    else if ((n_text || reduce ? parse_count(&n, n_text, "n", (size_t)1 << 30) : 1) &&
             parse_count(&runs, runs_text, "runs", 20) &&
             (code = open_gpu(&context, args)) == CLI_OK) {
        code = jit      ? jit_costs(context, "/proc/self/exe")
               : reduce ? reduce_bench(context, n, (int)runs)
               : strcmp(family, "matmul") == 0
                   ? matmul_bench(context, n, (int)runs, sets, set_count)
                   : transpose_bench(context, n, (int)runs, sets, set_count);
        ptxjit_close(context);
    }
    free(sets);
    return code;
}

/* `ptxjit jit-time FAMILY PARAMS`: one context open and one kernel request in this fresh
 * process, timed; `bench jit` runs it to measure a disk hit without anything preloaded. */
int cmd_jit_time(cli_args *args)
{
    double start = wall_ms();
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    double opened = wall_ms();
    char *params = cli_join_params(args->argc - 1, args->argv + 1, NULL, NULL);
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ptxjit_status status = args->argc < 1 ? PTXJIT_ERR_INVALID_ARGUMENT
                           : ptxjit_get_kernel(&kernel, context, args->argv[0], params, &origin);
    double got = wall_ms();
    free(params);
    if (status == PTXJIT_OK)
        printf("open_ms %.3f get_ms %.3f origin %d\n", opened - start, got - opened, origin);
    else
        code = cli_fail(status);
    ptxjit_close(context);
    return code;
}

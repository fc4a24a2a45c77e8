/* bench_backends.c — `ptxjit bench backends FAMILY`: the family's op with backend=nvrtc and
 * backend=llvm in one process (the family's cli.c picks the rows), and the timing and table
 * helpers its rows share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/count.h"
#include "cli/family_cli.h"
#include "cli/timing.h"

static ptxjit_status routes_once(void *arg)
{
    cli_routes *job = arg;
    return job->op(job);
}

ptxjit_status cli_routes_time(double ms[2], cli_routes *job, const char *params, int runs)
{
    static const char *const routes[4] = {"nvrtc", "llvm", "llvm", "nvrtc"};
    double sums[2] = {0, 0};
    for (int i = 0; i < 4; i++) {
        double one = 0;
        snprintf(job->params, sizeof job->params, "%s backend=%s", params, routes[i]);
        ptxjit_status status = time_median_ms(&one, job->context, routes_once, job, job->warmup,
                                              runs);
        if (status != PTXJIT_OK)
            return status;
        sums[i == 1 || i == 2] += one / 2;
    }
    ms[0] = sums[0];
    ms[1] = sums[1];
    return PTXJIT_OK;
}

int cli_routes_row(cli_routes *job, const char *params, double bytes, int runs)
{
    double ms[2];
    ptxjit_status status = cli_routes_time(ms, job, params, runs);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    double nvrtc = bytes / (ms[0] * 1e6), llvm = bytes / (ms[1] * 1e6);
    printf("| %-44s | %9.1f | %9.1f | %6.3f |\n", params, nvrtc, llvm, llvm / nvrtc);
    fflush(stdout);
    return CLI_OK;
}

void cli_routes_head(const char *what)
{
    printf("| %-44s | nvrtc GB/s | llvm GB/s | llvm/nvrtc |\n", what);
    printf("|----------------------------------------------|-----------:|----------:|-----------:|\n");
}

int cmd_bench_backends(cli_args *args)
{
    const cli_family *f = args->argc >= 2 ? cli_family_find(args->argv[1]) : NULL;
    if (!f || !f->bench_backends) {
        fprintf(stderr, "ptxjit: usage: ptxjit bench backends FAMILY [n=N] [runs=R] (FAMILY:");
        for (int i = 0; cli_families[i]; i++)
            if (cli_families[i]->bench_backends)
                fprintf(stderr, " %s", cli_families[i]->name);
        fprintf(stderr, ")\n");
        return CLI_USAGE;
    }
    static const char *const own[] = {"n", "runs", NULL};
    const char *values[2] = {NULL, NULL};
    char *rest = cli_join_params(args->argc - 2, args->argv + 2, own, values);
    size_t n, runs;
    int ok = rest && !*rest && cli_count(&n, values[0], "n", f->backends_n, PJ_COUNT_MAX) &&
             cli_count(&runs, values[1], "runs", 20, CLI_MAX_RUNS);
    if (rest && *rest)
        fprintf(stderr, "ptxjit: bench backends takes only n= and runs=, not '%s'\n", rest);
    free(rest);
    if (!ok)
        return CLI_USAGE;
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (ptxjit_gpu_status(context) != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: this command needs a GPU: %s\n", ptxjit_last_error());
        ptxjit_close(context);
        return CLI_FAIL;
    }
    code = f->bench_backends(context, n, (int)runs);
    ptxjit_close(context);
    return code;
}

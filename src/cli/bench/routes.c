/* routes.c — one family op timed through both routes in one process, backend=nvrtc against
 * backend=llvm: the timing and the table rows that the families' `bench backends` rows share
 * (their cli.c picks the rows; backends.c is the command). */
#include <stdio.h>

#include "cli/chart.h"
#include "cli/cli.h"
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
    cli_chart_row(params, (double[CLI_CHART_SERIES_MAX]){nvrtc, llvm}, 0);
    return CLI_OK;
}

void cli_routes_head(const char *title, const char *what)
{
    static const char *const series[] = {"nvrtc", "llvm", NULL};
    cli_chart_table(title, "GB/s", series);
    printf("| %-44s | nvrtc GB/s | llvm GB/s | llvm/nvrtc |\n", what);
    printf("|----------------------------------------------|-----------:|----------:|-----------:|\n");
}

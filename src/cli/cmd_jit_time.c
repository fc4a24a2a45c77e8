/* cmd_jit_time.c — `jit-time FAMILY [key=value ...]`: one context open and one kernel request
 * in this fresh process, timed, with the stages of both (the latency probe); `bench jit` runs
 * it to measure a disk hit without anything preloaded. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/timing.h"
#include "cli_internal.h"

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
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, args->argv[0], params, &origin);
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

/* cmd_jit_time.c — `jit-time FAMILY [key=value ...]`: one context open and one kernel request
 * in this fresh process, timed, with the stages of both (the latency probe); `bench jit` runs
 * it to measure a disk hit without anything preloaded. With --launch, the first use as a
 * program with a GPU sees it: the open (the driver's start in it), the request, the buffers,
 * the first launch through the family's op and the synchronize; with --bare (jit_bare.c), the
 * same first use as a program that calls the driver itself. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/family_cli.h"
#include "cli/jit_bare.h"
#include "cli/timing.h"
#include "cli_internal.h"

enum { JIT_TIME_LAUNCH, JIT_TIME_BARE };

const cli_option cli_jit_time_options[] = {
    [JIT_TIME_LAUNCH] = {"--launch", NULL, NULL},
    [JIT_TIME_BARE] = {"--bare", NULL, NULL},
    {NULL, NULL, NULL},
};

static int usage(void)
{
    fprintf(stderr, "usage: ptxjit jit-time [--launch] FAMILY [key=value ...]\n"
                    "       ptxjit jit-time --bare CUBIN ENTRY\n");
    return CLI_USAGE;
}

/* --launch: stage by stage, in ms: open, get, alloc (the buffer and the input's copy up),
 * launch (the family's op: the module's load and the launch), sync. The result is checked
 * after the timer. */
static int first_launch(cli_args *args, const cli_family *family, const char *params,
                        const void *input)
{
    const cli_jit_first *first = family->jit->first;
    double t[6];
    t[0] = wall_ms();
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (ptxjit_gpu_status(context) != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: jit-time --launch needs a usable GPU: %s\n",
                ptxjit_last_error());
        ptxjit_close(context);
        return CLI_FAIL;
    }
    t[1] = wall_ms();
    ptxjit_kernel *kernel;
    ptxjit_origin origin = PTXJIT_ORIGIN_COMPILED;
    ptxjit_devptr buffer = 0;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, family->name, params, &origin);
    t[2] = wall_ms();
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&buffer, context, first->bytes);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_device(context, buffer, input, first->input_bytes);
    t[3] = wall_ms();
    if (status == PTXJIT_OK)
        status = first->op(context, params, buffer);
    t[4] = wall_ms();
    if (status == PTXJIT_OK)
        status = ptxjit_synchronize(context);
    t[5] = wall_ms();
    unsigned char result[64] = {0};
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_host(context, result, buffer + first->result_at,
                                     first->result_bytes);
    if (status != PTXJIT_OK) {
        code = cli_fail(status);
    } else if (!first->check(result)) {
        fprintf(stderr, "ptxjit: jit-time --launch: the result of %s (%s) is wrong\n",
                first->what, params);
        code = CLI_FAIL;
    } else {
        printf("open_ms %.3f get_ms %.3f alloc_ms %.3f launch_ms %.3f sync_ms %.3f origin %d\n",
               t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4], origin);
    }
    if (buffer)
        ptxjit_free(context, buffer);
    ptxjit_close(context);
    return code;
}

int cmd_jit_time(cli_args *args)
{
    double stages[PJ_LATENCY_COUNT] = {0};
    int launch = args->own[JIT_TIME_LAUNCH] != NULL;
    if (launch && args->own[JIT_TIME_BARE]) {
        fprintf(stderr, "ptxjit: jit-time takes --launch or --bare, not both\n");
        return usage();
    }
    if (args->own[JIT_TIME_BARE])
        return cli_jit_time_bare(args);
    if (args->argc < 1)
        return usage();
    const cli_family *family = NULL;
    if (launch) {
        family = cli_family_lookup(args->argv[0]);
        if (!family || !family->jit || !family->jit->first) {
            const cli_family *jit = cli_family_jit();
            fprintf(stderr, "ptxjit: jit-time --launch times the first use of bench jit's "
                            "family, %s, not '%s'\n", jit->name, args->argv[0]);
            return CLI_USAGE;
        }
    }
    /* The request's text first, as a program has its own before it asks: the timing is the
     * library's alone, and the process's first malloc (glibc setting up its heap) falls
     * outside it, as it does in any program that embeds the library. */
    char *params = cli_join_params(args->argc - 1, args->argv + 1, NULL, NULL);
    if (!params)
        return cli_fail(pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory"));
    if (launch) { /* the input too, as the program's own data */
        void *input = malloc(family->jit->first->input_bytes);
        int code = input ? CLI_OK : cli_fail(pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory"));
        if (input) {
            family->jit->first->input(input);
            code = first_launch(args, family, params, input);
        }
        free(input);
        free(params);
        return code;
    }
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

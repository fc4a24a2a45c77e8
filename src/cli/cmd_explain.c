/* cmd_explain.c — `explain FAMILY [key=value ...]`: the request's key components and, when the
 * disk cache misses it, the nearest entries of its family with what differs
 * (ptxjit_explain). Nothing is compiled; no GPU needed. Stdout holds the report alone. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

int cmd_explain(cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit explain FAMILY [key=value ...]\n");
        return CLI_USAGE;
    }
    args->options.use_gpu = 0;
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    char *params = cli_join_params(args->argc - 1, args->argv + 1, NULL, NULL);
    char *report = NULL;
    ptxjit_status status = params ? ptxjit_explain(&report, context, args->argv[0], params, NULL)
                                  : PTXJIT_ERR_OUT_OF_MEMORY;
    if (status == PTXJIT_OK)
        fputs(report, stdout);
    else
        code = cli_fail(status);
    free(report);
    free(params);
    ptxjit_close(context);
    return code;
}

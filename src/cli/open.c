/* open.c — the context a command works in, opened with the command line's options. */
#include <stdio.h>

#include "cli/cli.h"

int cli_open(ptxjit_context **out, cli_args *args)
{
    ptxjit_status status = ptxjit_open(out, &args->options);
    return status == PTXJIT_OK ? CLI_OK : cli_fail(status);
}

int cli_open_gpu(ptxjit_context **out, cli_args *args)
{
    int code = cli_open(out, args);
    if (code != CLI_OK)
        return code;
    if (ptxjit_gpu_status(*out) != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: this command needs a GPU: %s\n", ptxjit_last_error());
        ptxjit_close(*out);
        return CLI_FAIL;
    }
    return CLI_OK;
}

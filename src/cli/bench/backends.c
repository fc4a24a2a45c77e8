/* backends.c — `ptxjit bench backends FAMILY [n=N] [runs=R]`: the family's op with
 * backend=nvrtc and backend=llvm in one process, rows of the family's choosing (its
 * bench_backends, through routes.c). Needs a GPU. */
#include <stdio.h>
#include <stdlib.h>

#include "cli/bench/bench.h"
#include "cli/family_cli.h"

int cli_bench_backends(cli_args *args)
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
    int ok = rest && !*rest && cli_size(&n, values[0], "n", f->backends_n) &&
             cli_size(&runs, values[1], "runs", 20);
    if (rest && *rest)
        fprintf(stderr, "ptxjit: bench backends takes only n= and runs=, not '%s'\n", rest);
    free(rest);
    if (!ok)
        return CLI_USAGE;
    ptxjit_context *context;
    int code = cli_open_gpu(&context, args);
    if (code != CLI_OK)
        return code;
    code = f->bench_backends(context, n, (int)runs);
    ptxjit_close(context);
    return code;
}

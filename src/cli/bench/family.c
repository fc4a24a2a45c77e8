/* family.c — `ptxjit bench FAMILY [n=N] [runs=R] ["PARAMS" ...]`: the family's own table, from
 * its runner (cli/families.c); each further argument is one parameter set, timed instead of
 * the family's built-in rows where its bench takes sets. Needs a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench/bench.h"
#include "cli/family_cli.h"

/* PARAM=auto in a set: the winner for the square problem n (every size n). Each resolved set
 * replaces sets[i] and is kept in owned[i] (the caller frees them). */
static int resolve_sets(char **owned, const char **sets, int set_count, ptxjit_context *context,
                        const cli_family *f, size_t n)
{
    size_t square[16];
    for (int i = 0; i < 16; i++)
        square[i] = n;
    for (int i = 0; i < set_count; i++)
        if (strstr(sets[i], "=auto")) {
            owned[i] = cli_resolve_auto(context, f, sets[i], square);
            if (!owned[i])
                return CLI_USAGE;
            sets[i] = owned[i];
        }
    return CLI_OK;
}

/* Opens the GPU context and runs the family's bench on the sets, their =auto resolved. */
static int bench_sets(cli_args *args, const cli_family *f, size_t n, size_t runs,
                      const char **sets, int set_count)
{
    ptxjit_context *context = NULL;
    int code = cli_open_gpu(&context, args);
    if (code != CLI_OK)
        return code;
    char **owned = calloc((size_t)set_count + 1, sizeof *owned);
    if (owned)
        code = resolve_sets(owned, sets, set_count, context, f, n);
    if (code == CLI_OK)
        code = f->bench(context, n, (int)runs, sets, set_count);
    for (int i = 0; owned && i < set_count; i++)
        free(owned[i]);
    free(owned);
    ptxjit_close(context);
    return code;
}

int cli_bench_family(cli_args *args)
{
    const char *family = args->argv[0];
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
    int code = CLI_USAGE;
    if (!sets)
        fprintf(stderr, "ptxjit: out of memory\n");
    else if (set_count && !f->takes_sets)
        fprintf(stderr, "ptxjit: bench %s takes only n= and runs=, not '%s'\n", family, sets[0]);
    else if (cli_size(&n, n_text, "n", f->bench_n ? f->bench_n : 0) &&
             cli_size(&runs, runs_text, "runs", 20))
        code = bench_sets(args, f, n, runs, sets, set_count);
    free(sets);
    return code;
}

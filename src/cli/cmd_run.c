/* cmd_run.c — `run FAMILY [key=value ...] [SIZE=N ...] [runs=R]`: the family's runner from the
 * table, its size words and runs= taken out of the parameters. Needs a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/family_cli.h"

/* Takes the family's size words out of argv into sizes (defaults where absent), runs= after
 * them; the rest is the parameter string (caller frees). NULL after a usage message. */
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
        if (!cli_size(&sizes[i], values[i], own[i], f->size_defaults[i])) {
            free(params);
            return NULL;
        }
    if (params && !cli_size(&sizes[count], values[count], "runs", 20)) {
        free(params);
        return NULL;
    }
    return params;
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
    int code = cli_open_gpu(&context, args);
    if (code != CLI_OK) { /* cli_open_gpu closed it */
        free(params);
        return code;
    }
    if (strstr(params, "=auto")) {
        char *resolved = cli_resolve_auto(context, f, params, sizes);
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

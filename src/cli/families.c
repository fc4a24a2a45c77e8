/* families.c — the CLI's table of family runners, made from catalog/list.h. */
#include <stdio.h>
#include <string.h>

#include "cli/family_cli.h"

#define PJ_CLI_FAMILY_ENTRY(name) &cli_family_##name,
const cli_family *const cli_families[] = {PJ_FAMILY_LIST(PJ_CLI_FAMILY_ENTRY) NULL};
#undef PJ_CLI_FAMILY_ENTRY

const cli_family *cli_family_find(const char *name)
{
    for (int i = 0; cli_families[i]; i++)
        if (strcmp(cli_families[i]->name, name) == 0)
            return cli_families[i];
    fprintf(stderr, "ptxjit: no runner for family '%s' (runners:", name);
    for (int i = 0; cli_families[i]; i++)
        fprintf(stderr, " %s", cli_families[i]->name);
    fprintf(stderr, "); get the kernel with ptxjit_get_kernel and launch it with "
                    "ptxjit_launch\n");
    return NULL;
}

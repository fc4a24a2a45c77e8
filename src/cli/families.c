/* families.c — the CLI's table of family runners, made from catalog/list.h, and what the
 * generic commands ask of it: a family by name, the rows the bench tools take from every
 * family, and the family of each role that one family alone plays. */
#include <stdio.h>
#include <string.h>

#include "cli/family_cli.h"

#define PJ_CLI_FAMILY_ENTRY(name) &cli_family_##name,
const cli_family *const cli_families[] = {PJ_FAMILY_LIST(PJ_CLI_FAMILY_ENTRY) NULL};
#undef PJ_CLI_FAMILY_ENTRY

const cli_family *cli_family_lookup(const char *name)
{
    for (int i = 0; cli_families[i]; i++)
        if (strcmp(cli_families[i]->name, name) == 0)
            return cli_families[i];
    return NULL;
}

const cli_family *cli_family_find(const char *name)
{
    const cli_family *f = cli_family_lookup(name);
    if (f)
        return f;
    fprintf(stderr, "ptxjit: no runner for family '%s' (runners:", name);
    for (int i = 0; cli_families[i]; i++)
        fprintf(stderr, " %s", cli_families[i]->name);
    /* A user family's arguments are its own: the command can compile it, not launch it. */
    fprintf(stderr, "); the command line compiles '%s' ('ptxjit ptx %s [key=value ...]', "
                    "'ptxjit tune %s problem=\"TEXT\" --compile-only') but cannot launch it: "
                    "a program does (ptxjit_get_kernel, then ptxjit_launch)\n",
            name, name, name);
    return NULL;
}

const cli_compile_target *cli_compile_target_at(size_t i, const cli_family **family)
{
    for (int k = 0; cli_families[k]; k++)
        for (const cli_compile_target *t = cli_families[k]->compile_targets; t && t->label; t++)
            if (i-- == 0) {
                *family = cli_families[k];
                return t;
            }
    return NULL;
}

const cli_tune_problem *cli_tune_problem_at(size_t i, const cli_family **family)
{
    for (int k = 0; cli_families[k]; k++)
        for (const cli_tune_problem *p = cli_families[k]->tune_problems; p && p->problem; p++)
            if (i-- == 0) {
                *family = cli_families[k];
                return p;
            }
    return NULL;
}

const cli_family *cli_family_jit(void)
{
    for (int i = 0; cli_families[i]; i++)
        if (cli_families[i]->jit)
            return cli_families[i];
    return NULL;
}

const cli_family *cli_family_tune_pool(void)
{
    for (int i = 0; cli_families[i]; i++)
        if (cli_families[i]->tune_pool)
            return cli_families[i];
    return NULL;
}

const cli_tune_problem *cli_tune_cold(const cli_family **family)
{
    const cli_tune_problem *p;
    for (size_t i = 0; (p = cli_tune_problem_at(i, family)); i++)
        if (p->cold)
            return p;
    return NULL;
}

int cli_families_check(void)
{
    int jit = 0, pool = 0, cold = 0;
    const cli_family *f;
    for (int i = 0; cli_families[i]; i++) {
        jit += cli_families[i]->jit != NULL;
        pool += cli_families[i]->tune_pool != NULL;
    }
    const cli_tune_problem *p;
    for (size_t i = 0; (p = cli_tune_problem_at(i, &f)); i++)
        cold += p->cold;
    if (jit == 1 && pool == 1 && cold == 1)
        return 1;
    fprintf(stderr, "ptxjit: the family table (src/families/*/cli.c) must give exactly one "
                    "request of bench jit (.jit), one space of bench tune's pool (.tune_pool) "
                    "and one cold problem of bench tune (.cold); it gives %d, %d and %d\n",
            jit, pool, cold);
    return 0;
}

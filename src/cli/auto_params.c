/* auto_params.c — PARAM=auto in `run`: the family's size words become the library's problem,
 * and the request the family's op plans for it (the tuned winner, or the defaults fitted to
 * the shape where no record answers) is what runs, so `run` launches what `run --plan` says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/family_cli.h"

char *cli_resolve_auto(ptxjit_context *context, const cli_family *f, const char *params,
                       const size_t *sizes)
{
    const char *const *words = f->problem_words();
    char problem[256] = "";
    size_t used = 0;
    for (int i = 0; words && words[i] && f->sizes[i]; i++)
        used += (size_t)snprintf(problem + used, sizeof problem - used, "%s%s=%zu", i ? " " : "",
                                 words[i], sizes[i]);
    char *request = NULL, *why = NULL;
    ptxjit_status status = ptxjit_plan(&request, &why, context, f->name, params, problem);
    free(why);
    if (status != PTXJIT_OK) {
        cli_fail(status);
        return NULL;
    }
    return request;
}

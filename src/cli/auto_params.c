/* auto_params.c — PARAM=auto in `bench` sets: the family's size words become the library's
 * problem, whose tuning record (or the template defaults) gives the value. (`run` leaves auto
 * to the family's op, which plans it with the run's whole shape.) */
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
    ptxjit_kernel *kernel;
    ptxjit_status status =
        ptxjit_get_kernel_tuned(&kernel, context, f->name, params, problem, NULL);
    if (status != PTXJIT_OK) {
        cli_fail(status);
        return NULL;
    }
    return strdup(ptxjit_kernel_params(kernel));
}

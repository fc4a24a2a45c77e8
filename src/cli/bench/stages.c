/* stages.c — a kernel's compile stages (stages.h). The library keeps them in the kernel's
 * struct and offers no call for them: reading the struct here is the command line's one
 * reach into request/context.h, kept to this file until ptxjit.h (or cli_internal.h) has an
 * accessor. */
#include "cli/bench/stages.h"
#include "request/context.h"

void cli_compile_stages(cli_stages *out, const ptxjit_kernel *kernel)
{
    const pj_stages *s = &kernel->stages;
    *out = (cli_stages){s->generate_ms, s->optimize_ms, s->emit_ms, s->compile_ms};
}

/* jit_bare.h — `ptxjit jit-time --bare CUBIN ENTRY` (jit_bare.c). */
#ifndef PTXJIT_CLI_JIT_BARE_H
#define PTXJIT_CLI_JIT_BARE_H

#include "cli/cli.h"

/* The first use of bench jit's request in this fresh process as a program that calls the
 * CUDA driver itself: an exit status, one line of stage times on stdout. */
int cli_jit_time_bare(cli_args *args);

#endif

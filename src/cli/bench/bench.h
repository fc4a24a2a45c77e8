/* bench.h — the entries of `ptxjit bench`'s tools (tools.h) and of a family's own bench. Each
 * takes the command's arguments with argv[0] the tool's (or family's) name. */
#ifndef PTXJIT_CLI_BENCH_H
#define PTXJIT_CLI_BENCH_H

#include "cli/bench/tools.h"
#include "cli/cli.h"

#define CLI_BENCH_DECLARE(name, json, svg) int cli_bench_##name(cli_args *args);
CLI_BENCH_TOOLS(CLI_BENCH_DECLARE)
#undef CLI_BENCH_DECLARE

/* family.c: `bench FAMILY [n=N] [runs=R] ["PARAMS" ...]`, the family's table (needs a GPU). */
int cli_bench_family(cli_args *args);

#endif

/* tools.h — the tools of `ptxjit bench`, by name, beside the families of catalog/list.h:
 * X(name, json, svg), the tool's entry being cli_bench_NAME, json whether it prints JSON under
 * --json, svg whether it draws its tables under --svg (cli/chart.h). dispatch.c makes its dispatch table of this list, and tests/test_cli.c checks that no
 * family bears a tool's name (the one lookup would hide the family). */
#ifndef PTXJIT_CLI_BENCH_TOOLS_H
#define PTXJIT_CLI_BENCH_TOOLS_H

#define CLI_BENCH_TOOLS(X) \
    X(jit, 1, 0)           \
    X(backends, 0, 1)      \
    X(compile, 0, 0)       \
    X(tune, 0, 0)          \
    X(multigpu, 0, 0)

#endif

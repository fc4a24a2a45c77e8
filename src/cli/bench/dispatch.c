/* dispatch.c — `ptxjit bench NAME ...`: NAME is one of the tools (tools.h), else a family, whose
 * runner cli/families.c finds. No family may bear a tool's name (tests/test_cli.c), so the
 * tools' lookup hides none. */
#include <stdio.h>
#include <string.h>

#include "cli/bench/bench.h"

typedef struct {
    const char *name;
    int (*run)(cli_args *args);
    int json; /* prints JSON under --json */
} bench_tool;

#define CLI_BENCH_ENTRY(name, json) {#name, cli_bench_##name, json},
static const bench_tool tools[] = {CLI_BENCH_TOOLS(CLI_BENCH_ENTRY)};
#undef CLI_BENCH_ENTRY

static const bench_tool *find_tool(const char *name)
{
    for (size_t i = 0; i < CLI_LENGTH(tools); i++)
        if (strcmp(tools[i].name, name) == 0)
            return &tools[i];
    return NULL;
}

static int usage(void)
{
    fprintf(stderr, "ptxjit: usage: ptxjit bench FAMILY");
    for (size_t i = 0; i < CLI_LENGTH(tools); i++)
        fprintf(stderr, "|%s", tools[i].name);
    fprintf(stderr, " [n=N] [runs=R] [\"PARAMS\" ...]\n");
    return CLI_USAGE;
}

int cmd_bench(cli_args *args)
{
    if (args->argc < 1)
        return usage();
    const char *name = args->argv[0];
    const bench_tool *tool = find_tool(name);
    if (args->json && !(tool && tool->json)) {
        char what[256];
        snprintf(what, sizeof what, "bench %s", name);
        return cli_json_refused(what);
    }
    return tool ? tool->run(args) : cli_bench_family(args);
}

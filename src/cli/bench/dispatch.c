/* dispatch.c — `ptxjit bench NAME ... [--svg FILE]`: NAME is one of the tools (tools.h), else a
 * family, whose runner cli/families.c finds. No family may bear a tool's name
 * (tests/test_cli.c), so the tools' lookup hides none. --svg draws the tables the bench prints
 * (cli/chart.h): the families' benches and the tools that say svg. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench/bench.h"
#include "cli/chart.h"

enum { BENCH_SVG };

const cli_option cli_bench_options[] = {
    [BENCH_SVG] = {"--svg", "chart.svg", NULL},
    {NULL, NULL, NULL},
};

typedef struct {
    const char *name;
    int (*run)(cli_args *args);
    int json; /* prints JSON under --json */
    int svg;  /* draws its tables under --svg */
} bench_tool;

#define CLI_BENCH_ENTRY(name, json, svg) {#name, cli_bench_##name, json, svg},
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
    fprintf(stderr, " [n=N] [runs=R] [\"PARAMS\" ...] [--svg FILE]\n");
    return CLI_USAGE;
}

/* "ptxjit bench NAME WORDS...": the chart's heading. */
static char *heading(const cli_args *args)
{
    size_t length = 16;
    for (int i = 0; i < args->argc; i++)
        length += strlen(args->argv[i]) + 1;
    char *text = malloc(length);
    if (!text)
        return NULL;
    strcpy(text, "ptxjit bench");
    for (int i = 0; i < args->argc; i++) {
        strcat(text, " ");
        strcat(text, args->argv[i]);
    }
    return text;
}

static int open_chart(const cli_args *args, const bench_tool *tool)
{
    const char *path = args->own[BENCH_SVG];
    if (!path)
        return CLI_OK;
    if (strcmp(path, "-") == 0 || !*path) {
        fprintf(stderr, "ptxjit: --svg takes a file to write the chart to ('%s' is not one: "
                        "stdout holds the table); e.g. --svg reduce.svg\n",
                path);
        return CLI_USAGE;
    }
    if (tool && !tool->svg) {
        fprintf(stderr, "ptxjit: bench %s prints no table to draw; --svg is for bench FAMILY "
                        "(reduce, transpose, softmax, matmul, matmul shapes=...) and bench "
                        "backends\n",
                tool->name);
        return CLI_USAGE;
    }
    char *text = heading(args);
    int code = text ? cli_chart_open(path, text) : CLI_FAIL;
    free(text);
    return code;
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
    int code = open_chart(args, tool);
    if (code != CLI_OK)
        return code;
    code = tool ? tool->run(args) : cli_bench_family(args);
    /* The rows printed are drawn even when one was wrong (the table says so too); a bench
     * that stopped before its first row (no GPU) has said why, and draws nothing. */
    if (code != CLI_OK && !cli_chart_rows()) {
        cli_chart_abandon();
        return code;
    }
    int drawn = cli_chart_close();
    return code != CLI_OK ? code : drawn;
}

/* family_cli.h — what the command line knows of a family: its `run` and `bench` runners,
 * defined in src/families/NAME/cli.c as cli_family_NAME; the table of them (cli/families.c)
 * is made from src/families/list.h, so run.c never names a family. Also the helpers the
 * families' `bench backends` tables share (bench_backends.c). */
#ifndef PTXJIT_CLI_FAMILY_CLI_H
#define PTXJIT_CLI_FAMILY_CLI_H

#include <stddef.h>

#include "catalog/list.h"
#include "ptxjit.h"

typedef struct {
    const char *name;
    /* The size words `ptxjit run NAME` takes beside the parameters (NULL-terminated), and
     * their defaults in the same order. */
    const char *const *sizes;
    const size_t *size_defaults;
    /* Fresh random data, the CPU reference, time and bandwidth; an exit status. */
    int (*run)(ptxjit_context *context, const char *params, const size_t *sizes, int runs);
    /* `ptxjit bench NAME [n=N] [runs=R] ["PARAMS" ...]`: n is bench_n unless given (0: the
     * family's own sizes); each PARAMS set is timed instead of the built-in rows, where
     * takes_sets says the bench can. */
    int (*bench)(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                 int set_count);
    size_t bench_n;
    int takes_sets;
    /* `ptxjit bench backends NAME [n=N]`: each variant through both routes (NULL: none). */
    int (*bench_backends)(ptxjit_context *context, size_t n, int runs);
    size_t backends_n;
    /* Its lines of `ptxjit --help`: the sizes `run` takes, what `bench` times (lines after the
     * first indented by 13 spaces). */
    const char *help;
} cli_family;

#define PJ_CLI_FAMILY_DECLARE(name) extern const cli_family cli_family_##name;
PJ_FAMILY_LIST(PJ_CLI_FAMILY_DECLARE)
#undef PJ_CLI_FAMILY_DECLARE

/* NULL-terminated, in list order. */
extern const cli_family *const cli_families[];
/* The family's runners, or NULL after saying on stderr which families have them. */
const cli_family *cli_family_find(const char *name);

/* ---- bench_backends.c: one op timed through both routes in one process ---- */
typedef struct cli_routes {
    ptxjit_context *context;
    /* Runs the family's op once with job->params (which carry backend=). */
    ptxjit_status (*op)(struct cli_routes *job);
    char params[192];
    void *data; /* the family's buffers */
    int warmup;
} cli_routes;

/* Median ms of params on nvrtc (ms[0]) and llvm (ms[1]), alternating A B B A so that neither
 * gains from the clock or the cache state the other left. */
ptxjit_status cli_routes_time(double ms[2], cli_routes *job, const char *params, int runs);
/* One row of GB/s (bytes moved per run) of each route and their ratio; an exit status. */
int cli_routes_row(cli_routes *job, const char *params, double bytes, int runs);
void cli_routes_head(const char *what);

#endif

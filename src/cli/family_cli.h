/* family_cli.h — what the command line knows of a family: its `run` and `bench` runners, its
 * rows of `bench backends` and its op for `bench multigpu`, defined in src/families/NAME/cli.c
 * as cli_family_NAME. The table of them (cli/families.c) is made from catalog/list.h, so that
 * the generic commands never name a family. Also the helpers the families' `bench backends`
 * rows share (bench/routes.c). */
#ifndef PTXJIT_CLI_FAMILY_CLI_H
#define PTXJIT_CLI_FAMILY_CLI_H

#include <stddef.h>

#include "cli_internal.h"

/* `ptxjit bench multigpu`: the family's op on every GPU at once, each device on buffers of its
 * own whose inputs are known values, so that a result is checked without a host copy of them
 * (a GPU's worth of input each). */
typedef struct {
    const char *const *sizes;    /* its size words, NULL-terminated ("n"; "rows", "cols") */
    const size_t *size_defaults; /* in the same order */
    int by_default;              /* timed when `bench multigpu` names no family */
    /* One device's buffers for params at sizes: inputs filled and outputs poisoned on stream,
     * which is finished when it returns. *state is the family's until release (which also
     * takes a state that prepare left half made). */
    ptxjit_status (*prepare)(void **state, ptxjit_context *context, const char *params,
                             const size_t *sizes, void *stream);
    /* One run of params, enqueued on stream. */
    ptxjit_status (*run)(void *state, const char *params, void *stream);
    /* The last run's output against what the inputs give; `named` is how the message names
     * the parameters ("(defaults)" for none). */
    ptxjit_status (*check)(void *state, const char *named);
    /* Bytes one run moves, read + written. */
    double (*bytes)(const void *state);
    void (*release)(void *state);
} cli_multigpu;

typedef struct {
    const char *name;
    /* The size words `ptxjit run NAME` takes beside the parameters (NULL-terminated), and
     * their defaults in the same order. */
    const char *const *sizes;
    const size_t *size_defaults;
    /* The library's words for the same sizes, in the same order: the problem of `tune` and of
     * PARAM=auto (transpose's h and w are its rows and cols). */
    const char *const *(*problem_words)(void);
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
    const cli_multigpu *multigpu; /* NULL: none */
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

/* auto_params.c: PARAM=auto in params resolved for the problem of sizes (the family's size
 * words, in order): the canonical params of the tuned winner, or of the defaults when no
 * record exists (the library says so). Caller frees; NULL after printing the error. */
char *cli_resolve_auto(ptxjit_context *context, const cli_family *f, const char *params,
                       const size_t *sizes);

/* ---- bench/routes.c: one op timed through both routes in one process ---- */
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

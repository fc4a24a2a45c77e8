/* family_cli.h — what the command line knows of a family: its `run` and `bench` runners, its
 * rows of `bench backends`, its op for `bench multigpu` and its part in the requests of `bench
 * jit`, `bench compile` and `bench tune`, defined in src/families/NAME/cli.c as
 * cli_family_NAME. The table of them (cli/families.c) is made from catalog/list.h, so that
 * the generic commands never name a family. Also the helpers the families' `bench backends`
 * rows share (bench/routes.c). */
#ifndef PTXJIT_CLI_FAMILY_CLI_H
#define PTXJIT_CLI_FAMILY_CLI_H

#include <stddef.h>
#include <stdint.h>

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

/* A launch of a kernel as cuLaunchKernel takes it: args[i] points at values[i], so the
 * struct is used where it was filled, never copied. */
#define CLI_LAUNCH_ARGS_MAX 8
typedef struct {
    ptxjit_dim3 grid, block;
    void *args[CLI_LAUNCH_ARGS_MAX];
    union {
        ptxjit_devptr pointer;
        uint64_t u64;
        uint32_t u32;
        float f32;
    } values[CLI_LAUNCH_ARGS_MAX];
} cli_launch;

/* The first use of bench jit's request in a fresh process with a GPU: the family's op on a
 * small problem (`jit-time --launch`), and the same work as a bare driver program enqueues it
 * (`jit-time --bare`), each in a device buffer of `bytes` whose first input_bytes are the
 * input, made by input() on the host and copied up before the launch. */
typedef struct {
    const char *what; /* the problem, for the output: "reduce of 4096 int32" */
    size_t bytes, input_bytes;
    void (*input)(void *host);
    /* The family's op on the problem (the request's params), enqueued on the default stream. */
    ptxjit_status (*op)(ptxjit_context *context, const char *params, ptxjit_devptr buffer);
    /* What the op enqueues for bench jit's request, as driver calls: zero_words 32-bit zeros
     * at buffer + zero_at (cuMemsetD32Async; none when 0), then launch()'s cuLaunchKernel. */
    size_t zero_at, zero_words;
    void (*launch)(cli_launch *out, ptxjit_devptr buffer);
    /* The result: result_bytes at buffer + result_at; check() is 1 when they are right. */
    size_t result_at, result_bytes;
    int (*check)(const void *result);
} cli_jit_first;

/* `ptxjit bench jit`: the one request whose costs it measures, from cold compile to launch. */
typedef struct {
    const char *params;
    size_t buffer_bytes; /* the device buffer its launches are given */
    /* A launch of params's kernel that reads and writes buffer only: the same launch goes
     * through ptxjit_launch and through a bare cuLaunchKernel, whose costs are compared. */
    void (*launch)(cli_launch *out, ptxjit_devptr buffer);
    const cli_jit_first *first; /* NULL: none; bench jit says the first use was not measured */
} cli_jit;

/* A row of `ptxjit bench compile`'s table of issue 15's cold-compile targets. */
typedef struct {
    const char *label; /* the row's name */
    const char *params;
    double nvrtc_ms;   /* the target on the H100: request -> cubin through NVRTC */
} cli_compile_target;

/* A problem of `ptxjit bench tune`: ptxjit_tune's problem and fixed parameters. */
typedef struct {
    const char *problem, *fixed;
    /* 1 in one problem of all the families': the one also tuned from a cold cache, found by a
     * fresh process and tuned five times in a row, those lines naming it by the family's name
     * and label ("16384^2 f32"). */
    int cold;
    const char *label;
} cli_tune_problem;

/* `ptxjit bench tune pool`: the cold compiles of one space, one after another, then on the
 * pool's threads and on its compile worker processes. */
typedef struct {
    const char *problem, *space;
} cli_tune_pool;

/* A word `ptxjit run NAME` takes beside its sizes that is no size of the problem (matmul's
 * layout: batch=, lda=, stride_a=, ...): a count from `least` (0 where 0 means something:
 * dense rows, one matrix for every product) to `most` (0: 2^48); `means` says what it is, in
 * the message that refuses a value. */
typedef struct {
    const char *name;
    size_t least, most;
    const char *means;
} cli_run_word;

#define CLI_RUN_WORDS_MAX 8
/* The values of a family's run words on the command line, in its order. */
typedef struct {
    size_t value[CLI_RUN_WORDS_MAX];
    int given[CLI_RUN_WORDS_MAX]; /* 0: not given (its value 0) */
    int any;                      /* one of them was given */
} cli_run_values;

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
    /* Its run words (NULL, or ended by a NULL name; at most CLI_RUN_WORDS_MAX). Where one is
     * given, `run` and `run --plan` go to run_with and plan_with; else to run and the plan of
     * the sizes alone (ptxjit_plan), as for a family without run words. plan_with prints as
     * that plan does: the request on a line, then the problem and why, indented. */
    const cli_run_word *run_words;
    int (*run_with)(ptxjit_context *context, const char *params, const size_t *sizes,
                    const cli_run_values *words, int runs);
    int (*plan_with)(ptxjit_context *context, const char *params, const size_t *sizes,
                     const cli_run_values *words);
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
    /* The request of `bench jit` (NULL: another family's; exactly one family has one). */
    const cli_jit *jit;
    /* `bench compile NAME` without parameters compiles compile_params (NULL: the family's
     * defaults); `bench compile` alone, the families' compile_targets (NULL, or ended by a
     * NULL label), in list order. */
    const char *compile_params;
    const cli_compile_target *compile_targets;
    /* `bench tune`'s rows of the family, tuned then swept (NULL, or ended by a NULL problem),
     * in list order; the pool's space (NULL: another family's; exactly one has one). */
    const cli_tune_problem *tune_problems;
    const cli_tune_pool *tune_pool;
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
/* The same, NULL saying nothing (a family of --templates has no runners). */
const cli_family *cli_family_lookup(const char *name);

/* The i-th of all the families' compile targets (tune problems), in list order, with its
 * family in *family; NULL after the last. */
const cli_compile_target *cli_compile_target_at(size_t i, const cli_family **family);
const cli_tune_problem *cli_tune_problem_at(size_t i, const cli_family **family);

/* The roles that one family alone plays: the family of bench jit's request, that of bench
 * tune's pool space, and bench tune's cold problem with its family. main.c checks the table
 * (cli_families_check) before any command runs, so that none of these is NULL. */
const cli_family *cli_family_jit(void);
const cli_family *cli_family_tune_pool(void);
const cli_tune_problem *cli_tune_cold(const cli_family **family);
/* 1 when each role above has exactly one family; else 0 after saying what is wrong. */
int cli_families_check(void);

/* auto_params.c: PARAM=auto in a bench set resolved for the problem of sizes (the family's
 * size words, in order): the canonical params of the tuned winner, or of the template defaults
 * when no record exists (the library says so). Caller frees; NULL after printing the error. */
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
/* One row of GB/s (bytes moved per run) of each route and their ratio; an exit status. Each
 * row is drawn too under --svg (cli/chart.h). */
int cli_routes_row(cli_routes *job, const char *params, double bytes, int runs);
/* The table's header (what: the first column's); title: the chart panel's (--svg). */
void cli_routes_head(const char *title, const char *what);

#endif

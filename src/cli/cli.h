/* cli.h — what every command of the ptxjit command line shares: exit statuses, the parsed
 * command line, the options a command owns, and the helpers below every command (fail.c,
 * open.c, words.c, help.c, progress.c). The commands' entry points are main.c's table. */
#ifndef PTXJIT_CLI_H
#define PTXJIT_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ptxjit.h"

/* Exit statuses: success, failure, usage error (bad command, option or parameter), a program
 * the command runs is missing (sass: nvdisasm). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_NO_TOOL = 3 };

#define CLI_LENGTH(array) (sizeof(array) / sizeof((array)[0]))

/* An option that one command owns (tune's --space, warm's --from-records), in a table beside
 * the command; main.c takes it anywhere on the line, as a global option, and refuses it to the
 * other commands. */
typedef struct {
    const char *name;
    const char *example; /* a value, for the message when it is missing; NULL: a flag */
    /* NULL: any value; else CLI_OK, or CLI_USAGE after saying what the option takes. */
    int (*check)(const char *value);
} cli_option;

#define CLI_OWN_MAX 8

typedef struct {
    ptxjit_options options;
    int argc;         /* the command's own arguments, global options taken out */
    char **argv;
    int json;         /* --json: the commands cli_json_refused names print JSON instead */
    /* The command's own options, by their index in its table: the value ("" for a flag), or
     * NULL where the option was not given. */
    const char *own[CLI_OWN_MAX];
} cli_args;

/* ---- fail.c ---- */
/* Prints "ptxjit: <last error>" and maps the status to an exit code. */
int cli_fail(ptxjit_status status);
/* Says which commands take --json (the one place that lists them) and returns CLI_USAGE. */
int cli_json_refused(const char *command);

/* ---- open.c ---- */
/* A context from the command line's options, or the exit code after saying why not. */
int cli_open(ptxjit_context **out, cli_args *args);
/* The same, for a command that needs a GPU: without one, CLI_FAIL after saying why (the
 * context closed again). */
int cli_open_gpu(ptxjit_context **out, cli_args *args);

/* ---- words.c ---- */
/* Joins argv's key=value words into one parameter string, taking out the words whose key is
 * in `own` (e.g. "n") into own_values. Caller frees. */
char *cli_join_params(int argc, char **argv, const char *const *own, const char **own_values);
/* A count word's value (1000003, 2^30, 2^28+37) from 1 to max (at most PJ_COUNT_MAX, 2^48);
 * fallback when text is NULL. 0 after a message naming the word. */
#define CLI_MAX_RUNS 1000000
int cli_count(size_t *out, const char *text, const char *name, size_t fallback, uint64_t max);
/* cli_count of a size word (up to 2^48), or of runs= (up to CLI_MAX_RUNS). */
int cli_size(size_t *out, const char *text, const char *name, size_t fallback);

/* ---- help.c ---- */
/* `ptxjit --help`: the commands, the families' lines (from the family table), the options. */
void cli_print_usage(FILE *out);

/* ---- progress.c ---- */
/* A progress bar on stderr (tune, warm, aot, bench matmul shapes=; when stderr is a terminal). */
void cli_progress_bar(void *user, int done, int total, const char *params);

/* ---- the commands (main.c's table) ---- */
int cmd_list(cli_args *args);            /* cmd_catalog.c */
int cmd_info(cli_args *args);
int cmd_ptx(cli_args *args);             /* cmd_kernel.c */
int cmd_sass(cli_args *args);
int cmd_source(cli_args *args);
int cmd_explain(cli_args *args);         /* cmd_explain.c */
int cmd_ir(cli_args *args);
int cmd_inspect(cli_args *args);
int cmd_cache(cli_args *args);           /* cmd_cache.c */
int cmd_run(cli_args *args);             /* cmd_run.c */
extern const cli_option cli_run_options[];
int cmd_jit_time(cli_args *args);        /* cmd_jit_time.c */
extern const cli_option cli_jit_time_options[];
extern const cli_option cli_cache_options[];
int cmd_bench(cli_args *args);           /* bench/dispatch.c */
extern const cli_option cli_bench_options[];
int cmd_tune(cli_args *args);            /* cmd_tune.c */
extern const cli_option cli_tune_options[];
int cmd_warm(cli_args *args);            /* cmd_warm.c */
extern const cli_option cli_warm_options[];
int cmd_aot(cli_args *args);             /* cmd_aot.c */
extern const cli_option cli_aot_options[];
int cmd_compile_worker(cli_args *args);  /* cmd_compile_worker.c */

#endif

/* cli.h — shared pieces of the ptxjit command-line tool. */
#ifndef PTXJIT_CLI_H
#define PTXJIT_CLI_H

#include "ptxjit.h"

/* Exit statuses: success, failure, usage error (bad command, option or parameter), a program
 * the command runs is missing (sass: nvdisasm). */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2, CLI_NO_TOOL = 3 };

typedef struct {
    ptxjit_options options;
    int argc;         /* the command's own arguments, global options taken out */
    char **argv;
    int json;         /* --json: the commands cli_json_refused names print JSON instead */
    /* `tune` only: --space "...", --retune, --compile-only, --list, --clear */
    const char *tune_space;
    int tune_retune, tune_compile_only, tune_list, tune_clear;
    int tune_bucket; /* --bucket pow2: PTXJIT_TUNE_BUCKET_POW2 */
    int tune_bucket_given; /* --bucket given at all (exact is 0) */
    int warm_from_records; /* `warm` only: --from-records */
} cli_args;

/* Prints "ptxjit: <last error>" and maps the status to an exit code. */
int cli_fail(ptxjit_status status);
/* Joins argv's key=value words into one parameter string, taking out the words whose key is
 * in `own` (e.g. "n") into own_values. Caller frees. */
char *cli_join_params(int argc, char **argv, const char *const *own, const char **own_values);
int cli_open(ptxjit_context **out, cli_args *args);
/* Says which commands take --json (the one place that lists them) and returns CLI_USAGE. */
int cli_json_refused(const char *command);
/* A count word's value (1000003, 2^30, 2^28+37) from 1 to max (at most PJ_COUNT_MAX, 2^48);
 * fallback when text is NULL. 0 after a message naming the word. */
#define CLI_MAX_RUNS 1000000
int cli_count(size_t *out, const char *text, const char *name, size_t fallback, uint64_t max);

int cmd_list(cli_args *args);
int cmd_info(cli_args *args);
int cmd_ptx(cli_args *args);
int cmd_source(cli_args *args);
int cmd_ir(cli_args *args);
int cmd_inspect(cli_args *args);
int cmd_cache(cli_args *args);
/* cache_bundle.c: `cache export FILE [FAMILY ...]`, `cache import FILE` on an open context. */
int cli_cache_bundle(cli_args *args, ptxjit_context *context);
int cmd_run(cli_args *args);
int cmd_bench(cli_args *args);
int cmd_jit_time(cli_args *args);
/* worker.c: `compile-worker`, the library's compile worker process (src/pool/worker.c). */
int cmd_compile_worker(cli_args *args);
/* bench_tune.c: `bench tune [sweep|cold|pool|repeat]` (issue 14's figures; needs a GPU). */
int cmd_bench_tune(cli_args *args);
/* tune.c: `tune FAMILY ...`, `tune --list`, `tune --clear`. */
int cmd_tune(cli_args *args);
/* A progress bar on stderr (tune and warm, when stderr is a terminal). */
void cli_progress_bar(void *user, int done, int total, const char *params);
/* warm.c: `warm FILE|-`, `warm --from-records`. */
int cmd_warm(cli_args *args);
/* bench_backends.c: `bench backends FAMILY` (needs a GPU). */
int cmd_bench_backends(cli_args *args);
/* bench_compile.c: `bench compile [FAMILY [PARAMS]] [samples=N]` (a GPU adds to it). */
int cmd_bench_compile(cli_args *args);
/* bench_jit.c: `bench jit`: cold compile, fresh-process disk hits with their stages (this
 * program run again as jit-time), memory hits from 1 to 16 threads, and with a GPU memory
 * hit + launch against a bare cuLaunchKernel; --json too. */
int cmd_bench_jit(cli_args *args);
/* bench_multigpu.c: `bench multigpu [reduce|transpose] [devices=N] [n=N] [rows=R cols=C]
 * [runs=R] ["PARAMS"]`: every GPU at once on its own data against one GPU alone (needs a GPU;
 * issue 17's figure). */
int cmd_bench_multigpu(cli_args *args);
/* `sass FAMILY [params]`: the kernel's SASS (commands.c) through sass.c: nvdisasm's path
 * into program, or CLI_NO_TOOL after saying where it looked and how to get one; then the
 * cubin disassembled to stdout (an exit status). */
int cmd_sass(cli_args *args);
int cli_nvdisasm_find(char *program, size_t size);
int cli_disassemble(const char *program, const void *cubin, size_t bytes);

#endif

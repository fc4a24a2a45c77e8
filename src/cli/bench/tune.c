/* tune.c — `ptxjit bench tune`: what issue 14 asks the tuner to show, in one call. For
 * each family at its problems, a tuning then an exhaustive sweep of the same space timed the
 * same way (no early abandon), and the winner's time in the sweep against the sweep's best; one
 * problem tuned from a cold cache (wall time), and its record read by a fresh process
 * (`ptxjit tune --json`, which times its own ptxjit_tune call); the distinct cold compiles of
 * one space one after another, on the pool's threads and on its compile worker processes; five
 * tunings in a row of the cold problem and their winners. The problems and the space are the
 * families' (tune_problems, tune_pool in family_cli.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench/bench.h"
#include "cli/family_cli.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static ptxjit_status run_tune(ptxjit_tune_result **out, ptxjit_context *context,
                              const cli_family *f, const cli_tune_problem *p, int exhaustive,
                              int retune)
{
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = p->problem;
    options.fixed = p->fixed;
    options.exhaustive = exhaustive;
    options.retune = retune;
    return ptxjit_tune(out, context, f->name, &options);
}

/* The median of params in result, 0 if it was not timed there. */
static double median_of(const ptxjit_tune_result *result, const char *params)
{
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c;
        ptxjit_tune_result_candidate(&c, result, i);
        if (c.status == PTXJIT_OK && strcmp(c.params, params) == 0)
            return c.median_ms;
    }
    return 0;
}

static int winner_against_sweep(ptxjit_context *context)
{
    printf("tuned winner against an exhaustive sweep of the same space (same call):\n");
    printf("%-10s %-24s %5s %-62s %10s %10s %7s\n", "family", "problem", "cands", "winner",
           "tune ms", "sweep best", "ratio");
    const cli_family *f;
    const cli_tune_problem *p;
    for (size_t i = 0; (p = cli_tune_problem_at(i, &f)); i++) {
        ptxjit_tune_result *tuned = NULL, *sweep = NULL;
        double started = now_ms();
        ptxjit_status status = run_tune(&tuned, context, f, p, 0, 1);
        double tune_ms = now_ms() - started;
        if (status == PTXJIT_OK)
            status = run_tune(&sweep, context, f, p, 1, 1);
        if (status != PTXJIT_OK) {
            fprintf(stderr, "ptxjit: %s %s: %s\n", f->name, p->problem, ptxjit_last_error());
            ptxjit_tune_result_free(tuned);
            continue;
        }
        ptxjit_tune_info t, e;
        ptxjit_tune_result_info(&t, tuned);
        ptxjit_tune_result_info(&e, sweep);
        double winner_ms = median_of(sweep, t.winner);
        printf("%-10s %-24s %5d %-62s %10.1f %10.4f %7.4f\n", f->name, p->problem,
               t.candidate_count, t.winner, tune_ms, e.best_ms,
               winner_ms > 0 ? e.best_ms / winner_ms : 0);
        ptxjit_tune_result_free(tuned);
        ptxjit_tune_result_free(sweep);
    }
    return CLI_OK;
}

/* The cold problem's space from a cold cache (kernels and records cleared), then its record in
 * a fresh process. */
static int cold_and_record(ptxjit_context *context, cli_args *args, const char *self)
{
    const cli_family *f;
    const cli_tune_problem *cold = cli_tune_cold(&f);
    uint64_t removed;
    ptxjit_cache_clear(context, &removed);
    ptxjit_context *fresh; /* nothing in memory either: none of its own, none of context's */
    ptxjit_options options = args->options;
    options.process_cache = 0;
    ptxjit_status status = ptxjit_open(&fresh, &options);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    ptxjit_tune_result *result = NULL;
    double started = now_ms();
    status = run_tune(&result, fresh, f, cold, 0, 1);
    double cold_ms = now_ms() - started;
    ptxjit_close(fresh);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    printf("\n%s %s, %d candidates, cold cache (compiles included): %.1f ms wall, winner %s\n",
           f->name, cold->label, info.candidate_count, cold_ms, info.winner);
    ptxjit_tune_result_free(result);
    const char *dir = args->options.cache_dir;
    char command[8800];
    /* problem= hands `tune` the library's words as they are: the family's size words on the
     * command line can be other words, one of them a parameter's name too. */
    snprintf(command, sizeof command, "%s %s%s tune %s problem='%s' %s --json 2>/dev/null", self,
             dir ? "--cache-dir " : "", dir ? dir : "", f->name, cold->problem, cold->fixed);
    for (int round = 0; round < 3; round++) {
        FILE *pipe = popen(command, "r");
        char line[512];
        double call = -1;
        int from_record = 0;
        while (pipe && fgets(line, sizeof line, pipe)) {
            char *at = strstr(line, "\"call_ms\": \"");
            if (at)
                call = atof(at + 12);
            if (strstr(line, "\"from_record\": true"))
                from_record = 1;
        }
        if (pipe)
            pclose(pipe);
        printf("fresh process %d: ptxjit_tune %s in %.4f ms\n", round + 1,
               from_record ? "found the record" : "did NOT find the record", call);
    }
    return CLI_OK;
}

/* Removes a scratch cache directory and everything under it. */
static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    (void)st, (void)type, (void)ftw;
    return remove(path);
}

/* One pass of the pool's space, compile-only, in a fresh context with an empty disk cache of
 * its own: its wall time, the distinct kernels compiled and the compile worker processes. */
typedef struct {
    double ms; /* < 0: the pass failed */
    int kernels, processes;
} pool_pass;

static pool_pass compile_pass(cli_args *args, const cli_family *f, int threads,
                              const char *worker)
{
    pool_pass pass = {-1, 0, 0};
    char dir[] = "/tmp/ptxjit-bench-pool-XXXXXX";
    if (!mkdtemp(dir))
        return pass;
    ptxjit_options options = args->options;
    options.cache_dir = dir;
    options.use_gpu = 0;
    options.compile_worker = worker;
    ptxjit_context *context;
    if (ptxjit_open(&context, &options) == PTXJIT_OK) {
        ptxjit_tune_options tune;
        ptxjit_tune_options_init(&tune);
        tune.problem = f->tune_pool->problem;
        tune.space = f->tune_pool->space;
        tune.compile_only = 1;
        tune.threads = threads;
        ptxjit_tune_result *result = NULL;
        double started = now_ms();
        if (ptxjit_tune(&result, context, f->name, &tune) == PTXJIT_OK) {
            pass.ms = now_ms() - started;
            ptxjit_tune_info info;
            ptxjit_tune_result_info(&info, result);
            pass.kernels = info.candidate_count;
            pass.processes = info.compile_processes;
        }
        ptxjit_tune_result_free(result);
        ptxjit_close(context);
    }
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return pass;
}

static int pool_against_serial(cli_args *args)
{
    const cli_family *f = cli_family_tune_pool();
    pool_pass serial = compile_pass(args, f, 1, "none");
    pool_pass threads = compile_pass(args, f, 0, "none");
    pool_pass workers = compile_pass(args, f, 0, args->options.compile_worker);
    if (serial.ms < 0 || threads.ms < 0 || workers.ms < 0)
        return cli_fail(PTXJIT_ERR_COMPILE);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("\n%d distinct cold compiles (%s, nvrtc, %ld cores): one after another %.1f ms; "
           "pool threads in this process %.1f ms: %.2fx; pool with %d compile worker "
           "processes %.1f ms: %.2fx\n",
           serial.kernels, f->name, cores, serial.ms, threads.ms, serial.ms / threads.ms,
           workers.processes, workers.ms, serial.ms / workers.ms);
    return CLI_OK;
}

static int five_in_a_row(ptxjit_context *context)
{
    const cli_family *f;
    const cli_tune_problem *cold = cli_tune_cold(&f);
    printf("\nfive tunings in a row (%s %s, retuned each time):\n", f->name, cold->label);
    char first[512] = "";
    int same = 1;
    for (int i = 0; i < 5; i++) {
        ptxjit_tune_result *result = NULL;
        ptxjit_status status = run_tune(&result, context, f, cold, 0, 1);
        if (status != PTXJIT_OK)
            return cli_fail(status);
        ptxjit_tune_info info;
        ptxjit_tune_result_info(&info, result);
        printf("  %d: %s (best %.4f ms, band %.1f%%)\n", i + 1, info.winner, info.best_ms,
               100 * info.noise);
        if (!i)
            snprintf(first, sizeof first, "%s", info.winner);
        same &= strcmp(first, info.winner) == 0;
        ptxjit_tune_result_free(result);
    }
    printf("  the same winner five times: %s\n", same ? "yes" : "NO");
    return CLI_OK;
}

int cli_bench_tune(cli_args *args)
{
    static const char *const modes[] = {"all", "sweep", "cold", "pool", "repeat"};
    const char *only = args->argc > 1 ? args->argv[1] : "all";
    int known = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        known |= strcmp(only, modes[i]) == 0;
    if (!known || args->argc > 2) {
        fprintf(stderr, "ptxjit: bench tune takes at most one of sweep, cold, pool, repeat "
                        "(none: all), not '%s'\n",
                args->argc > 2 ? args->argv[2] : only);
        return CLI_USAGE;
    }
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (!strcmp(only, "pool")) { /* compiles only: no GPU needed */
        ptxjit_close(context);
        return pool_against_serial(args);
    }
    if (ptxjit_gpu_status(context) != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: bench tune needs a GPU: %s\n", ptxjit_last_error());
        ptxjit_close(context);
        return CLI_FAIL;
    }
    if (!strcmp(only, "all") || !strcmp(only, "sweep"))
        code = winner_against_sweep(context);
    char self[4096]; /* this program: /proc/self/exe would name the shell popen starts */
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    self[length > 0 ? length : 0] = '\0';
    if (code == CLI_OK && (!strcmp(only, "all") || !strcmp(only, "cold")))
        code = cold_and_record(context, args, self);
    if (code == CLI_OK && !strcmp(only, "all"))
        code = pool_against_serial(args);
    if (code == CLI_OK && (!strcmp(only, "all") || !strcmp(only, "repeat")))
        code = five_in_a_row(context);
    ptxjit_close(context);
    return code;
}

/* tune.c — `ptxjit bench tune`: what issue 14 asks the tuner to show, in one call. For
 * each family at its shape, a tuning then an exhaustive sweep of the same space timed the same
 * way (no early abandon), and the winner's time in the sweep against the sweep's best; the
 * transpose space tuned from a cold cache (wall time), and its record read by a fresh process
 * (`ptxjit tune --json`, which times its own ptxjit_tune call); 32 distinct cold compiles
 * one after another, on the pool's threads and on its compile worker processes; five tunings
 * in a row and their winners. */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench/bench.h"

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

typedef struct {
    const char *family, *problem, *fixed;
} shape;

static const shape shapes[] = {
    {"reduce", "n=2^30", "dtype=i32"},
    {"transpose", "rows=16384 cols=16384", "dtype=f32"},
    {"matmul", "m=8192 n=8192 k=8192", "variant=wgmma dtype=bf16"},
    {"softmax", "rows=262144 cols=1024", "dtype=f32"},
    {"softmax", "rows=65536 cols=4096", "dtype=f32"},
    {"softmax", "rows=16384 cols=16384", "dtype=f32"},
};

static ptxjit_status run_tune(ptxjit_tune_result **out, ptxjit_context *context,
                              const shape *s, int exhaustive, int retune)
{
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = s->problem;
    options.fixed = s->fixed;
    options.exhaustive = exhaustive;
    options.retune = retune;
    return ptxjit_tune(out, context, s->family, &options);
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
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
        ptxjit_tune_result *tuned = NULL, *sweep = NULL;
        double started = now_ms();
        ptxjit_status status = run_tune(&tuned, context, &shapes[i], 0, 1);
        double tune_ms = now_ms() - started;
        if (status == PTXJIT_OK)
            status = run_tune(&sweep, context, &shapes[i], 1, 1);
        if (status != PTXJIT_OK) {
            fprintf(stderr, "ptxjit: %s %s: %s\n", shapes[i].family, shapes[i].problem,
                    ptxjit_last_error());
            ptxjit_tune_result_free(tuned);
            continue;
        }
        ptxjit_tune_info t, e;
        ptxjit_tune_result_info(&t, tuned);
        ptxjit_tune_result_info(&e, sweep);
        double winner_ms = median_of(sweep, t.winner);
        printf("%-10s %-24s %5d %-62s %10.1f %10.4f %7.4f\n", shapes[i].family,
               shapes[i].problem, t.candidate_count, t.winner, tune_ms, e.best_ms,
               winner_ms > 0 ? e.best_ms / winner_ms : 0);
        ptxjit_tune_result_free(tuned);
        ptxjit_tune_result_free(sweep);
    }
    return CLI_OK;
}

/* The transpose space from a cold cache (kernels and records cleared), then its record in a
 * fresh process. */
static int cold_and_record(ptxjit_context *context, cli_args *args, const char *self)
{
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
    status = run_tune(&result, fresh, &shapes[1], 0, 1);
    double cold_ms = now_ms() - started;
    ptxjit_close(fresh);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    printf("\ntranspose 16384^2 f32, %d candidates, cold cache (compiles included): %.1f ms "
           "wall, winner %s\n", info.candidate_count, cold_ms, info.winner);
    ptxjit_tune_result_free(result);
    const char *dir = args->options.cache_dir;
    char command[8800];
    snprintf(command, sizeof command,
             "%s %s%s tune transpose h=16384 w=16384 dtype=f32 --json 2>/dev/null", self,
             dir ? "--cache-dir " : "", dir ? dir : "");
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

/* 32 distinct reduce kernels (tpb 128..1024 x batch 1..8), compile-only, each pass in a fresh
 * context with an empty disk cache of its own: one thread; the pool's threads compiling in
 * this process; the pool's compile worker processes. */
static double compile_pass(cli_args *args, int threads, const char *worker, int *processes)
{
    char dir[] = "/tmp/ptxjit-bench-pool-XXXXXX";
    if (!mkdtemp(dir))
        return -1;
    ptxjit_options options = args->options;
    options.cache_dir = dir;
    options.use_gpu = 0;
    options.compile_worker = worker;
    ptxjit_context *context;
    double ms = -1;
    if (ptxjit_open(&context, &options) == PTXJIT_OK) {
        ptxjit_tune_options tune;
        ptxjit_tune_options_init(&tune);
        tune.problem = "n=1000000";
        tune.space = "tpb=128..1024 batch=1..8";
        tune.compile_only = 1;
        tune.threads = threads;
        ptxjit_tune_result *result = NULL;
        double started = now_ms();
        if (ptxjit_tune(&result, context, "reduce", &tune) == PTXJIT_OK) {
            ms = now_ms() - started;
            ptxjit_tune_info info;
            ptxjit_tune_result_info(&info, result);
            *processes = info.compile_processes;
        }
        ptxjit_tune_result_free(result);
        ptxjit_close(context);
    }
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return ms;
}

static int pool_against_serial(cli_args *args)
{
    int processes = 0, none = 0;
    double serial = compile_pass(args, 1, "none", &none);
    double threads = compile_pass(args, 0, "none", &none);
    double workers = compile_pass(args, 0, args->options.compile_worker, &processes);
    if (serial < 0 || threads < 0 || workers < 0)
        return cli_fail(PTXJIT_ERR_COMPILE);
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    printf("\n32 distinct cold compiles (reduce, nvrtc, %ld cores): one after another %.1f ms; "
           "pool threads in this process %.1f ms: %.2fx; pool with %d compile worker "
           "processes %.1f ms: %.2fx\n",
           cores, serial, threads, serial / threads, processes, workers, serial / workers);
    return CLI_OK;
}

static int five_in_a_row(ptxjit_context *context)
{
    printf("\nfive tunings in a row (transpose 16384^2 f32, retuned each time):\n");
    char first[512] = "";
    int same = 1;
    for (int i = 0; i < 5; i++) {
        ptxjit_tune_result *result = NULL;
        ptxjit_status status = run_tune(&result, context, &shapes[1], 0, 1);
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

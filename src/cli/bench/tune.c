/* tune.c — `ptxjit bench tune`: what issues 14 and 30 ask the tuner to show, in one call.
 * search [FAMILY]: for each problem of the family (or of every family), the space compiled
 * into the kernel cache first (timed apart: compiles are not the tuning's figure), then tuned
 * in a fresh context that finds the kernels on disk (the wall time, and how many candidates
 * were pruned and timed in how many rounds), an exhaustive sweep of the same space timed the
 * same way (no pruning, no halving), the winner's time in the sweep against the sweep's best,
 * then the two timed head to head in alternating rounds (the figure the target reads), and
 * four more tunings: the same winner five times? sweep: the tuning and the sweep alone;
 * repeat [FAMILY]: the five tunings alone (the cold problem's family unless named); one
 * problem tuned from a cold cache (wall time), and its record read by a fresh process
 * (`ptxjit tune --json`, which times its own ptxjit_tune call); the distinct cold compiles of
 * one space one after another, on the pool's threads and on its compile worker processes.
 * The problems and the spaces are the families' (tune_problems, tune_pool in family_cli.h). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench/bench.h"
#include "cli/family_cli.h"
#include "cli/timing.h"

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
static double median_in(const ptxjit_tune_result *result, const char *params)
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

/* A tuning in a context of its own (kernels from the disk cache, modules loaded anew, nothing
 * of the bench's context shared), as a fresh process would tune: *ms its wall time. */
static ptxjit_status fresh_tune(ptxjit_tune_result **out, double *ms, cli_args *args,
                                const cli_family *f, const cli_tune_problem *p, int exhaustive)
{
    ptxjit_options options = args->options;
    options.process_cache = 0;
    ptxjit_context *fresh;
    ptxjit_status status = ptxjit_open(&fresh, &options);
    if (status != PTXJIT_OK)
        return status;
    double started = now_ms();
    status = run_tune(out, fresh, f, p, exhaustive, 1);
    *ms = now_ms() - started;
    ptxjit_close(fresh); /* the result owns its strings */
    return status;
}


/* The candidates that failed to compile, launch or check. */
static int failed_candidates(const ptxjit_tune_result *result)
{
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    int failed = 0;
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c;
        ptxjit_tune_result_candidate(&c, result, i);
        failed += c.status != PTXJIT_OK;
    }
    return failed;
}

/* The space compiled into the kernel cache (no GPU time), so that what follows times the
 * tuning, not compiles. */
static ptxjit_status warm_space(ptxjit_context *context, const cli_family *f,
                                const cli_tune_problem *p)
{
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = p->problem;
    options.fixed = p->fixed;
    options.compile_only = 1;
    ptxjit_tune_result *result = NULL;
    double started = now_ms();
    ptxjit_status status = ptxjit_tune(&result, context, f->name, &options);
    if (status != PTXJIT_OK)
        return status;
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    const int failed = failed_candidates(result);
    printf("  compiled into the kernel cache first: %d candidates (%d failed) in %.1f ms, %d "
           "compile worker process%s\n",
           info.candidate_count, failed, now_ms() - started, info.compile_processes,
           info.compile_processes == 1 ? "" : "es");
    ptxjit_tune_result_free(result);
    return PTXJIT_OK;
}

/* How many candidates took part in each round ("272 -> 41 -> 9"). */
static void rounds_text(char *out, size_t size, const ptxjit_tune_result *result)
{
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    size_t used = 0;
    out[0] = '\0';
    for (int r = 1; r <= info.rounds && used < size; r++) {
        int in = 0;
        for (int i = 0; i < info.candidate_count; i++) {
            ptxjit_tune_candidate c;
            ptxjit_tune_result_candidate(&c, result, i);
            in += c.rounds >= r;
        }
        used += (size_t)snprintf(out + used, size - used, "%s%d", r > 1 ? " -> " : "", in);
    }
}

static void tuning_line(const char *what, const ptxjit_tune_result *result, double ms)
{
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    const int excluded = failed_candidates(result);
    char rounds[128];
    rounds_text(rounds, sizeof rounds, result);
    printf("  %s: %.1f ms wall; %d candidates: %d excluded, %d pruned before running, %d timed "
           "in %d round%s (%s); winner %s, %.4f ms\n",
           what, ms, info.candidate_count, excluded, info.candidates_pruned,
           info.candidates_timed, info.rounds, info.rounds == 1 ? "" : "s", rounds, info.winner,
           info.best_ms);
}

/* The targets of issue 30, said plainly. */
#define TARGET_TUNE_MS 2000.0
#define TARGET_RATIO 0.99
#define HEAD_TO_HEAD_ROUNDS 6

/* The median time of params alone on the problem: a tuning of the one point it makes (its first
 * word a space of one value, the rest fixed: a tuning with nothing left to tune is refused). */
static ptxjit_status time_alone(double *ms, ptxjit_context *context, const cli_family *f,
                                const cli_tune_problem *p, const char *params)
{
    char first[256];
    const size_t length = strcspn(params, " ");
    if (length >= sizeof first || !params[length])
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "bench tune: cannot time '%s' alone",
                        params);
    memcpy(first, params, length);
    first[length] = '\0';
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = p->problem;
    options.space = first;
    options.fixed = params + length + 1;
    options.retune = 1;
    ptxjit_tune_result *result = NULL;
    ptxjit_status status = ptxjit_tune(&result, context, f->name, &options);
    if (status == PTXJIT_OK) {
        ptxjit_tune_info info;
        ptxjit_tune_result_info(&info, result);
        *ms = info.best_ms;
    }
    ptxjit_tune_result_free(result);
    return status;
}

/* The tuned winner against the sweep's best, head to head: a sample of the sweep against
 * another, seconds apart on a GPU whose clock moves with its heat, is not a ratio a skeptic
 * accepts. Each timed alone, in rounds that alternate which goes first (A B, B A, ...); *ratio
 * the median of the rounds' best / winner, *lo and *hi their range. */
static ptxjit_status head_to_head(double *ratio, double *lo, double *hi, ptxjit_context *context,
                                  const cli_family *f, const cli_tune_problem *p,
                                  const char *winner, const char *best)
{
    double ratios[HEAD_TO_HEAD_ROUNDS];
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; i < HEAD_TO_HEAD_ROUNDS && status == PTXJIT_OK; i++) {
        double winner_ms = 0, best_ms = 0;
        const int winner_first = i % 2 == 0;
        status = time_alone(winner_first ? &winner_ms : &best_ms, context, f, p,
                            winner_first ? winner : best);
        if (status == PTXJIT_OK)
            status = time_alone(winner_first ? &best_ms : &winner_ms, context, f, p,
                                winner_first ? best : winner);
        ratios[i] = winner_ms > 0 ? best_ms / winner_ms : 0;
    }
    if (status != PTXJIT_OK)
        return status;
    *ratio = median_of(ratios, HEAD_TO_HEAD_ROUNDS); /* sorts them */
    *lo = ratios[0];
    *hi = ratios[HEAD_TO_HEAD_ROUNDS - 1];
    return PTXJIT_OK;
}

/* One problem: warmed, tuned, swept, the tuned winner against the sweep; repeats more
 * tunings (0: none) and says whether every one picked the first's winner. */
static int search_problem(ptxjit_context *context, cli_args *args, const cli_family *f,
                          const cli_tune_problem *p, int warm, int repeats)
{
    printf("\n%s %s, fixed %s:\n", f->name, p->problem, p->fixed);
    ptxjit_status status = warm ? warm_space(context, f, p) : PTXJIT_OK;
    ptxjit_tune_result *tuned = NULL, *sweep = NULL;
    double tune_ms = 0, sweep_ms = 0;
    if (status == PTXJIT_OK)
        status = fresh_tune(&tuned, &tune_ms, args, f, p, 0);
    if (status == PTXJIT_OK)
        status = fresh_tune(&sweep, &sweep_ms, args, f, p, 1);
    if (status != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: %s %s: %s\n", f->name, p->problem, ptxjit_last_error());
        ptxjit_tune_result_free(tuned);
        return CLI_FAIL;
    }
    ptxjit_tune_info t, e;
    ptxjit_tune_result_info(&t, tuned);
    ptxjit_tune_result_info(&e, sweep);
    tuning_line("tuning 1", tuned, tune_ms);
    double winner_ms = median_in(sweep, t.winner), ratio = winner_ms > 0 ? e.best_ms / winner_ms
                                                                          : 0;
    printf("  exhaustive sweep: %.1f ms wall, %d timed fully; its best %.4f ms (%s); the tuned "
           "winner there %.4f ms: %.4f of the best\n",
           sweep_ms, e.candidates_timed, e.best_ms, e.winner, winner_ms, ratio);
    const int same_kernel = strcmp(t.winner, e.winner) == 0;
    if (!same_kernel) {
        double lo = 0, hi = 0;
        status = head_to_head(&ratio, &lo, &hi, context, f, p, t.winner, e.winner);
        if (status != PTXJIT_OK) {
            fprintf(stderr, "ptxjit: %s %s: %s\n", f->name, p->problem, ptxjit_last_error());
            ptxjit_tune_result_free(tuned);
            ptxjit_tune_result_free(sweep);
            return CLI_FAIL;
        }
        printf("  head to head, %d rounds alternating which goes first: the tuned winner %.4f "
               "of the sweep's best (median; %.4f-%.4f)\n",
               HEAD_TO_HEAD_ROUNDS, ratio, lo, hi);
    } else {
        ratio = 1.0; /* the same kernel: nothing to time against it */
    }
    int same = 1;
    double slowest = tune_ms;
    for (int i = 2; i <= repeats + 1; i++) {
        ptxjit_tune_result *again = NULL;
        double ms = 0;
        if (fresh_tune(&again, &ms, args, f, p, 0) != PTXJIT_OK) {
            fprintf(stderr, "ptxjit: %s %s: %s\n", f->name, p->problem, ptxjit_last_error());
            same = 0;
            break;
        }
        char what[32];
        snprintf(what, sizeof what, "tuning %d", i);
        tuning_line(what, again, ms);
        ptxjit_tune_info info;
        ptxjit_tune_result_info(&info, again);
        same &= strcmp(info.winner, t.winner) == 0;
        slowest = ms > slowest ? ms : slowest;
        ptxjit_tune_result_free(again);
    }
    char ratio_text[64];
    if (same_kernel)
        snprintf(ratio_text, sizeof ratio_text, "the sweep's own winner");
    else
        snprintf(ratio_text, sizeof ratio_text, "%.4f head to head", ratio);
    printf("  targets: tuned in <= %.0f ms: %s (%.1f ms%s); winner >= %.2f of the sweep's "
           "best: %s (%s)",
           TARGET_TUNE_MS, slowest <= TARGET_TUNE_MS ? "yes" : "NO", slowest,
           repeats ? ", the slowest tuning" : "", TARGET_RATIO,
           ratio >= TARGET_RATIO ? "yes" : "NO", ratio_text);
    if (repeats)
        printf("; the same winner %d times: %s", repeats + 1, same ? "yes" : "NO");
    printf("\n");
    ptxjit_tune_result_free(tuned);
    ptxjit_tune_result_free(sweep);
    return CLI_OK;
}

/* Every problem of family (NULL: of every family). */
static int search_all(ptxjit_context *context, cli_args *args, const cli_family *only, int warm,
                      int repeats)
{
    const cli_family *f;
    const cli_tune_problem *p;
    int code = CLI_OK;
    for (size_t i = 0; (p = cli_tune_problem_at(i, &f)); i++)
        if (!only || f == only) {
            int one = search_problem(context, args, f, p, warm, repeats);
            code = one != CLI_OK ? one : code;
        }
    return code;
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

/* Five tunings in a row of family's first problem (NULL: the cold problem), each in a fresh
 * context, and their winners. */
static int five_in_a_row(cli_args *args, const cli_family *only)
{
    const cli_family *f = NULL;
    const cli_tune_problem *p = NULL;
    if (only) {
        f = only;
        p = only->tune_problems;
    } else {
        p = cli_tune_cold(&f);
    }
    printf("\nfive tunings in a row (%s %s, %s; each retuned in a fresh context):\n", f->name,
           p->problem, p->fixed);
    char first[512] = "";
    int same = 1;
    for (int i = 0; i < 5; i++) {
        ptxjit_tune_result *result = NULL;
        double ms = 0;
        ptxjit_status status = fresh_tune(&result, &ms, args, f, p, 0);
        if (status != PTXJIT_OK)
            return cli_fail(status);
        ptxjit_tune_info info;
        ptxjit_tune_result_info(&info, result);
        printf("  %d: %s (best %.4f ms, band %.1f%%, %.1f ms wall)\n", i + 1, info.winner,
               info.best_ms, 100 * info.noise, ms);
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
    static const char *const modes[] = {"all", "search", "sweep", "cold", "pool", "repeat"};
    const char *only = args->argc > 1 ? args->argv[1] : "all";
    int known = 0;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        known |= strcmp(only, modes[i]) == 0;
    int takes_family = !strcmp(only, "search") || !strcmp(only, "sweep") ||
                       !strcmp(only, "repeat");
    const cli_family *family = NULL;
    if (known && takes_family && args->argc == 3) {
        family = cli_family_lookup(args->argv[2]);
        if (!family || !family->tune_problems || !family->tune_problems->problem) {
            fprintf(stderr, "ptxjit: bench tune %s: '%s' is no family with bench tune problems "
                            "(those of reduce, transpose, matmul, softmax)\n",
                    only, args->argv[2]);
            return CLI_USAGE;
        }
    }
    if (!known || args->argc > 3 || (args->argc == 3 && !takes_family)) {
        fprintf(stderr, "ptxjit: bench tune takes at most one of search, sweep, cold, pool, "
                        "repeat (none: all), and after search, sweep or repeat a family, not "
                        "'%s'\n",
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
    if (!strcmp(only, "all") || !strcmp(only, "search"))
        code = search_all(context, args, family, 1, 4);
    else if (!strcmp(only, "sweep"))
        code = search_all(context, args, family, 0, 0);
    char self[4096]; /* this program: /proc/self/exe would name the shell popen starts */
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    self[length > 0 ? length : 0] = '\0';
    if (code == CLI_OK && (!strcmp(only, "all") || !strcmp(only, "cold")))
        code = cold_and_record(context, args, self);
    if (code == CLI_OK && !strcmp(only, "all"))
        code = pool_against_serial(args);
    if (code == CLI_OK && !strcmp(only, "repeat"))
        code = five_in_a_row(args, family);
    ptxjit_close(context);
    return code;
}

/* cmd_tune.c — `ptxjit tune FAMILY [problem words] [fixed params] [--space "..."] [--retune]
 * [--bucket pow2] [--compile-only]`, `tune --list` and `tune --clear`: the candidate table and
 * the winner on stderr, the winner's canonical params alone on stdout (or the whole result as
 * JSON with --json), a progress bar on stderr only when it is a terminal. The options are
 * tune's own (cli_tune_options), which main.c refuses to every other command. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/family_cli.h"
#include "cli/json.h"

static int check_bucket(const char *value)
{
    if (strcmp(value, "pow2") == 0 || strcmp(value, "exact") == 0)
        return CLI_OK;
    fprintf(stderr, "ptxjit: --bucket takes pow2 or exact, not '%s'\n", value);
    return CLI_USAGE;
}

/* In the order the message of main.c names them to another command. */
enum { TUNE_SPACE, TUNE_RETUNE, TUNE_COMPILE_ONLY, TUNE_BUCKET, TUNE_LIST, TUNE_CLEAR };
const cli_option cli_tune_options[] = {
    [TUNE_SPACE] = {"--space", "\"tpb=128,256 batch=4..16\"", NULL},
    [TUNE_RETUNE] = {"--retune", NULL, NULL},
    [TUNE_COMPILE_ONLY] = {"--compile-only", NULL, NULL},
    [TUNE_BUCKET] = {"--bucket", "pow2", check_bucket},
    [TUNE_LIST] = {"--list", NULL, NULL},
    [TUNE_CLEAR] = {"--clear", NULL, NULL},
    {NULL, NULL, NULL},
};

static double cli_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Whether key names a parameter of family. */
static int is_param(ptxjit_context *context, const char *family, const char *word)
{
    size_t n = strcspn(word, "=");
    int count = 0;
    if (ptxjit_family_param_count(&count, context, family) != PTXJIT_OK)
        return 0;
    for (int i = 0; i < count; i++) {
        ptxjit_param_info p;
        if (ptxjit_family_param(&p, context, family, i) == PTXJIT_OK && strlen(p.name) == n &&
            strncmp(p.name, word, n) == 0)
            return 1;
    }
    return n == 7 && strncmp(word, "backend", 7) == 0;
}

/* The library's problem word for a CLI size word (transpose's run sizes h, w are its rows and
 * cols), or NULL when word is no size of the family. */
static const char *problem_name(const char *family, const char *word)
{
    const cli_family *c = cli_family_lookup(family);
    const char *const *names = c ? c->problem_words() : NULL;
    size_t n = strcspn(word, "=");
    for (int i = 0; names && names[i]; i++) {
        const char *name = names[i];
        if ((strlen(name) == n && !strncmp(name, word, n)) ||
            (c->sizes[i] && strlen(c->sizes[i]) == n && !strncmp(c->sizes[i], word, n)))
            return name;
    }
    return NULL;
}

/* Appends " first second" to *text (no space before the first word); 0 when out of memory. */
static int append(char **text, const char *first, const char *second)
{
    char *joined;
    if (asprintf(&joined, "%s%s%s%s", *text, **text ? " " : "", first, second) < 0)
        return 0;
    free(*text);
    *text = joined;
    return 1;
}

/* Sorts argv's words into the problem (size words, or problem="...") and the fixed params. */
static int split_words(char **problem, char **fixed, ptxjit_context *context, const char *family,
                       int argc, char **argv)
{
    for (int i = 0; i < argc; i++) {
        const char *word = argv[i], *name;
        if (!strchr(word, '=')) {
            fprintf(stderr, "ptxjit: tune: '%s' is not key=value (problem words such as n=2^30, "
                            "or fixed parameters such as dtype=f32)\n", word);
            return CLI_USAGE;
        }
        int ok;
        if (strncmp(word, "problem=", 8) == 0)
            ok = append(problem, word + 8, "");
        else if (!is_param(context, family, word) && (name = problem_name(family, word)))
            ok = append(problem, name, strchr(word, '='));
        else
            ok = append(fixed, word, "");
        if (!ok) {
            fprintf(stderr, "ptxjit: out of memory\n");
            return CLI_FAIL;
        }
    }
    return CLI_OK;
}

static void table_text(const ptxjit_tune_result *result)
{
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    fprintf(stderr, "%s %s%s%s: space %s\n", info.family, info.problem,
            *info.fixed ? ", fixed " : "", info.fixed, info.space);
    /* A candidate beyond the space's points: the op's fitted request (docs/TUNING.md). */
    const int added = info.candidate_count -
                      (info.points_considered - info.points_refused - info.points_merged);
    fprintf(stderr, "%d points, %d refused, %d merged%s: %d candidates%s%s\n",
            info.points_considered, info.points_refused, info.points_merged,
            added > 0 ? ", + the op's fitted request" : "", info.candidate_count,
            *info.device ? " on " : "", info.device);
    if (info.winner)
        fprintf(stderr, "%d pruned before running, %d timed in %d round%s\n",
                info.candidates_pruned, info.candidates_timed, info.rounds,
                info.rounds == 1 ? "" : "s");
    fprintf(stderr, "%-70s %10s %7s %4s  %s\n", "candidate", "median ms", "spread", "runs",
            "status");
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c;
        ptxjit_tune_result_candidate(&c, result, i);
        if (c.status != PTXJIT_OK)
            fprintf(stderr, "%-70s %10s %7s %4s  %s: %s\n", c.params, "-", "-", "-",
                    ptxjit_status_name(c.status), c.message);
        else if (!info.winner)
            fprintf(stderr, "%-70s %10s %7s %4s  compiled\n", c.params, "-", "-", "-");
        else if (c.pruned)
            fprintf(stderr, "%-70s %10s %7s %4s  pruned: %s\n", c.params, "-", "-", "-",
                    c.message);
        else
            fprintf(stderr, "%-70s %10.4f %6.2f%% %4d  %s%s\n", c.params, c.median_ms,
                    100 * c.spread, c.runs, c.abandoned ? c.message : "ok",
                    c.winner ? "  <- winner" : "");
    }
    if (!info.from_record)
        fprintf(stderr, info.compile_processes ? "compiled by %d compile worker process%s\n"
                                               : "compiled in this process\n",
                info.compile_processes, info.compile_processes == 1 ? "" : "es");
    if (!info.winner) {
        fprintf(stderr, "compiled only: no winner (nothing was timed)\n");
        return;
    }
    fprintf(stderr, "winner %s: %.4f ms best, tie band %.1f%% (the earliest within it wins)\n",
            info.winner, info.best_ms, 100 * info.noise);
    fprintf(stderr, "%s; record %s\n",
            info.from_record ? "from the record (nothing timed now)"
                             : "tuned now",
            info.record_path ? info.record_path : "(not stored: no disk cache)");
}

/* call_ms: how long ptxjit_tune took in this process (< 0: not measured). */
static void result_json(cli_json *json, const ptxjit_tune_result *result, double call_ms)
{
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    cli_json_object_begin(json);
    cli_json_member_string(json, "family", info.family);
    cli_json_member_string(json, "problem", info.problem);
    cli_json_member_string(json, "fixed", info.fixed);
    cli_json_member_string(json, "space", info.space);
    cli_json_member_string(json, "winner", info.winner);
    cli_json_member_string(json, "reference", info.reference);
    cli_json_member_string(json, "device", info.device);
    cli_json_key(json, "from_record");
    cli_json_bool(json, info.from_record);
    cli_json_member_string(json, "record_path", info.record_path);
    cli_json_member_int(json, "points_considered", info.points_considered);
    cli_json_member_int(json, "points_refused", info.points_refused);
    cli_json_member_int(json, "points_merged", info.points_merged);
    cli_json_member_int(json, "compile_processes", info.compile_processes);
    cli_json_member_int(json, "candidates_pruned", info.candidates_pruned);
    cli_json_member_int(json, "candidates_timed", info.candidates_timed);
    cli_json_member_int(json, "rounds", info.rounds);
    char number[64];
    snprintf(number, sizeof number, "%.6f", info.best_ms);
    cli_json_member_string(json, "best_ms", number);
    snprintf(number, sizeof number, "%.4f", info.noise);
    cli_json_member_string(json, "noise", number);
    snprintf(number, sizeof number, "%.3f", info.wall_ms);
    cli_json_member_string(json, "wall_ms", number);
    if (call_ms >= 0) {
        snprintf(number, sizeof number, "%.4f", call_ms);
        cli_json_member_string(json, "call_ms", number);
    }
    cli_json_key(json, "candidates");
    cli_json_array_begin(json);
    for (int i = 0; i < info.candidate_count; i++) {
        ptxjit_tune_candidate c;
        ptxjit_tune_result_candidate(&c, result, i);
        cli_json_object_begin(json);
        cli_json_member_string(json, "params", c.params);
        cli_json_member_string(json, "status", ptxjit_status_name(c.status));
        cli_json_member_string(json, "message", c.message);
        snprintf(number, sizeof number, "%.6f", c.median_ms);
        cli_json_member_string(json, "median_ms", number);
        snprintf(number, sizeof number, "%.5f", c.spread);
        cli_json_member_string(json, "spread", number);
        cli_json_member_int(json, "runs", c.runs);
        cli_json_key(json, "abandoned");
        cli_json_bool(json, c.abandoned);
        cli_json_key(json, "pruned");
        cli_json_bool(json, c.pruned);
        cli_json_member_int(json, "rounds", c.rounds);
        cli_json_key(json, "winner");
        cli_json_bool(json, c.winner);
        cli_json_object_end(json);
    }
    cli_json_array_end(json);
    cli_json_object_end(json);
}

static int list_records(ptxjit_context *context, int json)
{
    ptxjit_tune_result **list;
    int count;
    ptxjit_status status = ptxjit_tune_list(&list, &count, context);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    cli_json out;
    if (json) {
        cli_json_init(&out, stdout);
        cli_json_array_begin(&out);
    }
    for (int i = 0; i < count; i++) {
        ptxjit_tune_info info;
        ptxjit_tune_result_info(&info, list[i]);
        if (json)
            result_json(&out, list[i], -1);
        else
            printf("%s %s%s%s [%s] on %s: %s\n", info.family, info.problem,
                   *info.fixed ? " " : "", info.fixed, info.space, info.device, info.winner);
    }
    if (json) {
        cli_json_array_end(&out);
        cli_json_finish(&out);
    } else if (!count) {
        fprintf(stderr, "no tuning records in %s\n",
                ptxjit_cache_dir(context) ? ptxjit_cache_dir(context) : "(no disk cache)");
    }
    ptxjit_tune_list_free(list, count);
    return CLI_OK;
}

/* The tuner times a built-in family through its op; a user family needs a program's run
 * callback (it alone knows the kernel's arguments), which a command cannot supply: say what
 * the command can do instead of passing on the library's options.run advice. */
static int refuse_untimable(const char *family)
{
    fprintf(stderr,
            "ptxjit: tune: '%s' has no op the command line can time (a user family's "
            "arguments are its own); 'ptxjit tune %s problem=\"TEXT\" [fixed params] "
            "--compile-only' compiles its space into the cache; to time it, a program calls "
            "ptxjit_tune with a run callback (docs/TUNING.md, \"The library\")\n",
            family, family);
    return CLI_USAGE;
}

static int tune_family(ptxjit_context *context, cli_args *args)
{
    const char *family = args->argv[0], *described;
    ptxjit_status known = ptxjit_family_describe(&described, context, family);
    if (known != PTXJIT_OK)
        return cli_fail(known); /* no such family: its error names those there are */
    if (!args->own[TUNE_COMPILE_ONLY] && !cli_family_lookup(family))
        return refuse_untimable(family);
    char *problem = strdup(""), *fixed = strdup("");
    int code = problem && fixed ? split_words(&problem, &fixed, context, family, args->argc - 1,
                                              args->argv + 1)
                                : CLI_FAIL;
    if (code != CLI_OK) {
        free(problem);
        free(fixed);
        return code;
    }
    ptxjit_tune_options options;
    ptxjit_tune_options_init(&options);
    options.problem = problem;
    options.fixed = fixed;
    options.space = args->own[TUNE_SPACE];
    options.retune = args->own[TUNE_RETUNE] != NULL;
    options.compile_only = args->own[TUNE_COMPILE_ONLY] != NULL;
    options.bucket = args->own[TUNE_BUCKET] && strcmp(args->own[TUNE_BUCKET], "pow2") == 0
                         ? PTXJIT_TUNE_BUCKET_POW2
                         : PTXJIT_TUNE_BUCKET_EXACT;
    if (isatty(STDERR_FILENO))
        options.progress = cli_progress_bar;
    ptxjit_tune_result *result = NULL;
    double started = cli_now_ms();
    ptxjit_status status = ptxjit_tune(&result, context, family, &options);
    double call_ms = cli_now_ms() - started;
    free(problem);
    free(fixed);
    if (status != PTXJIT_OK)
        return cli_fail(status);
    table_text(result);
    ptxjit_tune_info info;
    ptxjit_tune_result_info(&info, result);
    if (args->json) {
        cli_json json;
        cli_json_init(&json, stdout);
        result_json(&json, result, call_ms);
        cli_json_finish(&json);
    } else if (info.winner) {
        printf("%s\n", info.winner);
    }
    ptxjit_tune_result_free(result);
    return CLI_OK;
}

int cmd_tune(cli_args *args)
{
    int list = args->own[TUNE_LIST] != NULL, clear = args->own[TUNE_CLEAR] != NULL;
    int modes = list + clear;
    if (modes > 1 || (modes && args->argc) || (!modes && args->argc < 1)) {
        fprintf(stderr, "ptxjit: usage: ptxjit tune FAMILY [problem words] [fixed params] "
                        "[--space \"P=V,V ...\"] [--retune] [--compile-only] [--bucket pow2], "
                        "ptxjit tune "
                        "--list, or ptxjit tune --clear\n");
        return CLI_USAGE;
    }
    if (args->own[TUNE_COMPILE_ONLY])
        args->options.use_gpu = 0;
    if (modes)
        args->options.use_gpu = 0; /* the records are files: no GPU needed */
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (list) {
        code = list_records(context, args->json);
    } else if (clear) {
        uint64_t removed = 0;
        ptxjit_status status = ptxjit_tune_clear(context, &removed);
        code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
        if (status == PTXJIT_OK && args->json) {
            cli_json json;
            cli_json_init(&json, stdout);
            cli_json_object_begin(&json);
            cli_json_member_uint(&json, "removed", removed);
            cli_json_member_string(&json, "path", ptxjit_cache_dir(context));
            cli_json_object_end(&json);
            cli_json_finish(&json);
        } else if (status == PTXJIT_OK) {
            fprintf(stderr, "ptxjit: removed %llu tuning records from %s\n",
                    (unsigned long long)removed,
                    ptxjit_cache_dir(context) ? ptxjit_cache_dir(context) : "(no disk cache)");
        }
    } else {
        code = tune_family(context, args);
    }
    ptxjit_close(context);
    return code;
}

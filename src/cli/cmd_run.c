/* cmd_run.c — `run FAMILY [key=value ...] [SIZE=N ...] [runs=R] [--plan]`: the family's runner
 * from the table, its size words, its run words (matmul's layout) and runs= taken out of the
 * parameters. Needs a GPU; with --plan it prints instead, with no GPU, the request the
 * family's op launches for the problem and why (ptxjit_plan, or the family's plan_with where
 * a run word is given). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/family_cli.h"

enum { RUN_PLAN };

const cli_option cli_run_options[] = {
    [RUN_PLAN] = {"--plan", NULL, NULL},
    {NULL, NULL, NULL},
};

/* A run word's value: a count from word->least (0 written as 0) to word->most. 0 after a
 * message naming the word and what it is. */
static int run_word_value(size_t *out, const char *text, const cli_run_word *word)
{
    const uint64_t most = word->most ? word->most : PJ_COUNT_MAX;
    uint64_t value = 0;
    if ((strcmp(text, "0") == 0 || pj_count_parse(&value, text, strlen(text), most)) &&
        value >= word->least) {
        *out = (size_t)value;
        return 1;
    }
    if (word->most)
        fprintf(stderr, "ptxjit: %s=%s is not a count from %zu to %zu (%s)\n", word->name,
                text, word->least, word->most, word->means);
    else
        fprintf(stderr, "ptxjit: %s=%s is not a count from %zu to 2^48 (%s)\n", word->name,
                text, word->least, word->means);
    return 0;
}

/* Takes the family's size words out of argv into sizes (defaults where absent), runs= after
 * them, and its run words into *words; the rest is the parameter string (caller frees). NULL
 * after a usage message. */
static char *split_sizes(size_t *sizes, cli_run_values *words, const cli_family *f, int argc,
                         char **argv)
{
    const char *own[32] = {NULL}, *values[32] = {NULL};
    int count = 0, extra = 0;
    while (f->sizes[count] && count < 14) {
        own[count] = f->sizes[count];
        count++;
    }
    own[count] = "runs";
    while (f->run_words && f->run_words[extra].name && extra < CLI_RUN_WORDS_MAX) {
        own[count + 1 + extra] = f->run_words[extra].name;
        extra++;
    }
    memset(words, 0, sizeof *words);
    char *params = cli_join_params(argc, argv, own, values);
    int ok = params != NULL;
    for (int i = 0; ok && i < count; i++)
        ok = cli_size(&sizes[i], values[i], own[i], f->size_defaults[i]);
    if (ok)
        ok = cli_size(&sizes[count], values[count], "runs", 20);
    for (int i = 0; ok && i < extra; i++) {
        const char *text = values[count + 1 + i];
        if (text)
            ok = run_word_value(&words->value[i], text, &f->run_words[i]);
        words->given[i] = text != NULL;
        words->any |= text != NULL;
    }
    if (!ok) {
        free(params);
        return NULL;
    }
    return params;
}

/* "rows=3344 cols=4859": the sizes as the library's problem words (the family's size
 * words on the command line may be others: transpose's h and w). */
static void problem_text(char *out, size_t size, const cli_family *f, const size_t *sizes)
{
    const char *const *words = f->problem_words();
    size_t used = 0;
    out[0] = '\0';
    for (int i = 0; words && words[i] && f->sizes[i] && used < size; i++)
        used += (size_t)snprintf(out + used, size - used, "%s%s=%zu", i ? " " : "",
                                 words[i], sizes[i]);
}

/* --plan: the request on one line ("FAMILY canonical-params"), then why, indented; the
 * family's own plan where a run word is given. */
static int print_plan(cli_args *args, const cli_family *f, const char *params,
                      const size_t *sizes, const cli_run_values *words)
{
    ptxjit_context *context = NULL;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    if (words->any) {
        code = f->plan_with(context, params, sizes, words);
        ptxjit_close(context);
        return code;
    }
    char problem[512], *request = NULL, *why = NULL;
    problem_text(problem, sizeof problem, f, sizes);
    ptxjit_status status = ptxjit_plan(&request, &why, context, f->name, params, problem);
    if (status == PTXJIT_OK) {
        printf("%s %s\n", f->name, request);
        printf("  %s %s\n", problem, why ? why : "as asked: the request runs this problem");
    }
    free(request);
    free(why);
    code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    ptxjit_close(context);
    return code;
}

int cmd_run(cli_args *args)
{
    if (args->argc < 1) {
        fprintf(stderr, "ptxjit: usage: ptxjit run FAMILY [key=value ...] [SIZE=N ...] "
                        "[runs=R] [--plan]\n");
        return CLI_USAGE;
    }
    const cli_family *f = cli_family_find(args->argv[0]);
    if (!f)
        return CLI_USAGE;
    size_t sizes[16];
    cli_run_values words;
    char *params = split_sizes(sizes, &words, f, args->argc - 1, args->argv + 1);
    if (!params)
        return CLI_USAGE;
    int count = 0;
    while (f->sizes[count])
        count++;
    if (args->own[RUN_PLAN]) {
        int code = print_plan(args, f, params, sizes, &words);
        free(params);
        return code;
    }
    ptxjit_context *context = NULL;
    int code = cli_open_gpu(&context, args);
    if (code != CLI_OK) { /* cli_open_gpu closed it */
        free(params);
        return code;
    }
    /* PARAM=auto is the op's to resolve, with the whole problem (a layout's batch too): run
     * then launches what --plan prints. */
    if (code == CLI_OK && words.any)
        code = f->run_with(context, params, sizes, &words, (int)sizes[count]);
    else if (code == CLI_OK)
        code = f->run(context, params, sizes, (int)sizes[count]);
    ptxjit_close(context);
    free(params);
    return code;
}

/* fail.c — a failed call as the command line reports it: the library's message on stderr
 * (pointing at a command where the library points embedders at a call) and the exit code of
 * its status; and the one list of the commands that take --json. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* The library's advice to embedders that a person at the command line reads as the command
 * that does the same (the library names no command: tests/test_conventions.c). */
static const struct {
    const char *api, *command;
} advice[] = {
    {"ask through ptxjit_get_kernel_tuned (with the problem) or a family op (ptxjit_reduce, "
     "...), or give a value",
     "at the command line auto is resolved where the sizes are given ('ptxjit run FAMILY "
     "SIZE=N ... PARAM=auto', after 'ptxjit tune FAMILY SIZE=N ...' recorded a winner), or "
     "give a value"},
    {"the whole log: ptxjit_last_compile_log(); the specialized source: "
     "ptxjit_last_compile_source(), or ptxjit_specialize() without compiling",
     "the whole log and the command that prints the specialized source: below"},
    {"once the template is fixed, ptxjit_reload_templates reads it again",
     "once the template is fixed, the next command reads it"},
    {"pass a run callback that launches a candidate (options.run), or compile_only",
     "the command line tunes it with --compile-only only (a program passes a run callback)"},
};

/* message with its first advice[] replaced (the caller frees); NULL when none applies or out
 * of memory (the message is then printed as it is). */
static char *as_commands(const char *message)
{
    for (size_t i = 0; i < sizeof advice / sizeof advice[0]; i++) {
        const char *at = strstr(message, advice[i].api);
        char *rewritten;
        if (at && asprintf(&rewritten, "%.*s%s%s", (int)(at - message), message,
                           advice[i].command, at + strlen(advice[i].api)) >= 0)
            return rewritten;
    }
    return NULL;
}

/* `ptxjit_family_describe("reduce")` is printed as `'ptxjit info reduce'`; the other advice
 * as advice[] says. */
static void print_error(const char *original)
{
    char *rewritten = as_commands(original);
    const char *message = rewritten ? rewritten : original;
    static const char api[] = "ptxjit_family_describe(\"";
    const char *at = strstr(message, api);
    const char *name = at ? at + strlen(api) : NULL;
    const char *end = name ? strstr(name, "\")") : NULL;
    if (!end)
        fprintf(stderr, "ptxjit: %s\n", message);
    else
        fprintf(stderr, "ptxjit: %.*s'ptxjit info %.*s'%s\n", (int)(at - message), message,
                (int)(end - name), name, end + 2);
    free(rewritten);
}

int cli_fail(ptxjit_status status)
{
    print_error(ptxjit_last_error());
    /* The message is a summary; a person at a terminal gets the whole log too. */
    const char *log = status == PTXJIT_ERR_COMPILE ? ptxjit_last_compile_log() : "";
    if (*log)
        fprintf(stderr, "--- the whole compiler log ---\n%s%s", log,
                log[strlen(log) - 1] == '\n' ? "" : "\n");
    switch (status) {
    case PTXJIT_ERR_PARAM:
    case PTXJIT_ERR_UNKNOWN_FAMILY:
    case PTXJIT_ERR_INVALID_ARGUMENT:
        return CLI_USAGE;
    default:
        return CLI_FAIL;
    }
}

int cli_json_refused(const char *command)
{
    fprintf(stderr, "ptxjit: --json works with list, info, inspect, cache stats, tune, warm and "
                    "bench jit (and cache export, cache import), not with '%s'; leave it out\n",
            command);
    return CLI_USAGE;
}

/* fail.c — a failed call as the command line reports it: the library's message on stderr
 * (pointing at a command where the library points embedders at a call) and the exit code of
 * its status; and the one list of the commands that take --json. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* The library's messages point embedders at its API; at the command line the same pointer
 * is a command: `ptxjit_family_describe("reduce")` is printed as `'ptxjit info reduce'`. */
static void print_error(const char *message)
{
    static const char api[] = "ptxjit_family_describe(\"";
    const char *at = strstr(message, api);
    const char *name = at ? at + strlen(api) : NULL;
    const char *end = name ? strstr(name, "\")") : NULL;
    if (!end) {
        fprintf(stderr, "ptxjit: %s\n", message);
        return;
    }
    fprintf(stderr, "ptxjit: %.*s'ptxjit info %.*s'%s\n", (int)(at - message), message,
            (int)(end - name), name, end + 2);
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

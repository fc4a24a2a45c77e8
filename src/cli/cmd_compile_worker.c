/* cmd_compile_worker.c — `ptxjit compile-worker`: the library's compile worker (the library's
 * src/pool/worker_process.c starts it and holds the other end of its input and output). It compiles
 * each request it reads into the disk cache and answers with the key, so that the process
 * that asked finds the kernel there. Not meant to be run by hand, though it can be: one
 * request a line, FAMILY<TAB>PARAMS. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char *origin_word(ptxjit_origin origin)
{
    return origin == PTXJIT_ORIGIN_COMPILED ? "compiled"
           : origin == PTXJIT_ORIGIN_DISK   ? "disk"
                                            : "memory";
}

/* One request: "ok KEY ORIGIN" or "error STATUS TEXT" (the text on one line). */
static void answer(ptxjit_context *context, char *line)
{
    char *tab = strchr(line, '\t');
    if (!tab) {
        printf("error %d the request is not FAMILY<TAB>PARAMS\n", PTXJIT_ERR_INVALID_ARGUMENT);
        return;
    }
    *tab = '\0';
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, line, tab + 1, &origin);
    if (status == PTXJIT_OK && !ptxjit_cache_dir(context))
        status = PTXJIT_ERR_CACHE; /* nothing was stored where the caller looks */
    if (status == PTXJIT_OK) {
        printf("ok %s %s\n", ptxjit_kernel_key(kernel), origin_word(origin));
        return;
    }
    char text[512];
    snprintf(text, sizeof text, "%s", ptxjit_last_error());
    for (char *c = text; *c; c++)
        if (*c == '\n' || *c == '\r')
            *c = ' ';
    printf("error %d %s\n", (int)status, text);
}

int cmd_compile_worker(cli_args *args)
{
    if (args->argc != 0) {
        fprintf(stderr, "ptxjit: compile-worker takes no arguments (it reads requests on "
                        "stdin)\n");
        return CLI_USAGE;
    }
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    printf("ptxjit-compile-worker 1 %s %s\n", PTXJIT_VERSION, ptxjit_arch(context));
    fflush(stdout);
    char line[8192];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        answer(context, line);
        fflush(stdout);
    }
    ptxjit_close(context);
    return CLI_OK;
}

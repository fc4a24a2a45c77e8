/* words.c — a command's key=value words: counts read strictly, parameter words joined. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli_internal.h"

char *cli_join_params(int argc, char **argv, const char *const *own, const char **own_values)
{
    size_t total = 1;
    for (int i = 0; i < argc; i++)
        total += strlen(argv[i]) + 1;
    char *joined = calloc(1, total);
    if (!joined)
        return NULL;
    for (int i = 0; i < argc; i++) {
        int taken = 0;
        for (int k = 0; own && own[k]; k++) {
            size_t n = strlen(own[k]);
            if (strncmp(argv[i], own[k], n) == 0 && argv[i][n] == '=') {
                own_values[k] = argv[i] + n + 1;
                taken = 1;
            }
        }
        if (!taken) {
            strcat(joined, *joined ? " " : "");
            strcat(joined, argv[i]);
        }
    }
    return joined;
}

int cli_count(size_t *out, const char *text, const char *name, size_t fallback, uint64_t max)
{
    if (!text) {
        *out = fallback;
        return 1;
    }
    uint64_t value;
    if (!pj_count_parse(&value, text, strlen(text), max)) {
        if (max < ((uint64_t)1 << 30)) /* small counts: the power forms would only confuse */
            fprintf(stderr, "ptxjit: %s=%s is not a count from 1 to %llu\n", name, text,
                    (unsigned long long)max);
        else
            fprintf(stderr, "ptxjit: %s=%s is not a count from 1 to %llu (e.g. %s=1000003, "
                            "%s=2^30 or %s=2^28+37)\n",
                    name, text, (unsigned long long)max, name, name, name);
        return 0;
    }
    *out = (size_t)value;
    return 1;
}

int cli_size(size_t *out, const char *text, const char *name, size_t fallback)
{
    return cli_count(out, text, name, fallback,
                     strcmp(name, "runs") == 0 ? CLI_MAX_RUNS : PJ_COUNT_MAX);
}

/* ptxas_log.c — a compile log made the same for every compile of the same input. */
#include <string.h>

#include "compilers/ptxas_log.h"

void pj_ptxas_log_settle(char *log)
{
    if (!log)
        return;
    char *out = log;
    for (const char *line = log; *line;) {
        const char *end = strchr(line, '\n');
        size_t length = end ? (size_t)(end - line) + 1 : strlen(line);
        /* a line of its own: "ptxas info    : Compile time = 11.366 ms" */
        const char *mark = strstr(line, "Compile time = ");
        if (!mark || mark >= line + length) {
            memmove(out, line, length);
            out += length;
        }
        line += length;
    }
    *out = '\0';
}

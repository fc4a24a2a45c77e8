/* progress.c — the progress bar of tune, warm, aot and bench matmul shapes=: on stderr,
 * redrawn in place. */
#include <stdio.h>

#include "cli/cli.h"

void cli_progress_bar(void *user, int done, int total, const char *params)
{
    (void)user;
    int width = 30, filled = total ? done * width / total : width;
    fprintf(stderr, "\r[%.*s%*s] %d/%d %-60.60s", filled, "##############################",
            width - filled, "", done, total, params);
    if (done == total)
        fprintf(stderr, "\r%*s\r", 110, "");
    fflush(stderr);
}

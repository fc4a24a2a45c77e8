/* artifact.c — the compiled-kernel record shared by backends and caches. */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void pj_artifact_free(pj_artifact *artifact)
{
    if (!artifact)
        return;
    if (artifact->storage || artifact->borrowed) {
        free(artifact->entries);
        free(artifact->storage);
        memset(artifact, 0, sizeof *artifact);
        return;
    }
    free(artifact->family);
    free(artifact->params);
    free(artifact->options);
    free(artifact->ptx);
    free(artifact->cubin);
    free(artifact->log);
    for (int i = 0; i < artifact->entry_count; i++)
        free(artifact->entries[i]);
    free(artifact->entries);
    memset(artifact, 0, sizeof *artifact);
}

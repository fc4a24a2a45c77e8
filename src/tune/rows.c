/* rows.c — a candidate's row of a tuning filled in, and the error that ends a tuning whose
 * candidate lost the GPU context: shared by the first round (loop.c) and the later ones
 * (rounds.c). */
#include <stdlib.h>

#include "tune/tune.h"

ptxjit_status pj_tune_set_row(pj_tune_row *row, const char *params, ptxjit_status status,
                              const char *message)
{
    free(row->params);
    free(row->message);
    row->params = pj_strdup(params);
    row->message = pj_strdup(message ? message : "");
    row->status = status;
    return row->params && row->message ? PTXJIT_OK
                                       : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status pj_tune_set_outcome(pj_tune_row *row, ptxjit_status status, const char *message)
{
    char *text = pj_strdup(message ? message : "");
    if (!text)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    free(row->message);
    row->message = text;
    row->status = status;
    return PTXJIT_OK;
}

ptxjit_status pj_tune_lost_context(pj_tuning *t, const char *params, const char *message)
{
    return pj_error(PTXJIT_ERR_CUDA,
                    "%s: candidate %s left the GPU context unusable (%s): CUDA errors of this "
                    "kind are sticky, so nothing more can run in it; close the ptxjit context "
                    "(the device must be reset, or the process restarted, before the GPU is "
                    "used again), and exclude this configuration from the space",
                    t->family, params, message);
}

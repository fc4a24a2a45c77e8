/* space.h — tuning spaces: the values a tuning tries for each tuned parameter (the template's
 * `//@ptxjit tune PARAM VALUES` lines, replaced or widened per call by a space string in the
 * same syntax), and the points of their product that the family's schema accepts, each as the
 * canonical form of a request, duplicates merged, in a fixed order (the order that breaks
 * ties between candidates: docs/TUNING.md). */
#ifndef PTXJIT_TUNE_SPACE_H
#define PTXJIT_TUNE_SPACE_H

#include "request/select.h"
#include "params/schema.h"
#include "params/values.h"
#include "records/fixed.h"

/* A space takes at most this many points before pruning (each point is a compile);
 * one parameter at most PJ_TUNE_MAX_VALUES values (params/values.h). */
#define PJ_TUNE_MAX_POINTS 4096

typedef struct {
    char **points;   /* canonical params (backend= where llvm) of each distinct point */
    int count;
    int considered;  /* points of the product */
    int refused;     /* of those, refused by a constraint or the route (pruned, not compiled) */
    int merged;      /* of those, the same request as an earlier point */
    char *space;     /* the space in canonical text: tuned parameters in declaration order,
                        "tpb=128,256 batch=2,4" (a record's key holds it) */
    char *fixed;     /* the fixed parameters, sorted by name ("" for none) */
    char *reference; /* canonical params of the fixed parameters alone: the configuration
                        whose result every candidate's is checked against */
    char *refusal;   /* why the first refused point was refused ("" if none was) */
} pj_tune_space;

/* The space of schema for fixed ("dtype=f32 backend=llvm"; NULL: none) and override (a space
 * string "tpb=128,256 batch=4..16" replacing the template's values of the parameters it names
 * and adding others; NULL: the template's). A fixed parameter is not tuned; a fixed word
 * PARAM=auto is no fixed value (the parameter stays tuned). sm: the target's compute capability.
 * PTXJIT_ERR_PARAM for a bad fixed parameter or override, a space with nothing to tune, one of
 * more than PJ_TUNE_MAX_POINTS points, or one whose every point is refused. */
ptxjit_status pj_tune_space_build(pj_tune_space *out, const pj_schema *schema, const char *fixed,
                                  const char *override, int sm, pj_backend default_backend);
/* The same without enumerating the points (count 0): the space's text, fixed parameters and
 * reference, all a record's key needs. */
ptxjit_status pj_tune_space_describe(pj_tune_space *out, const pj_schema *schema,
                                     const char *fixed, const char *override, int sm,
                                     pj_backend default_backend);
/* Adds a point given as its canonical params (taken: freed here; NULL: out of memory),
 * unless the space has it. */
ptxjit_status pj_tune_space_add(pj_tune_space *space, char *canonical);
void pj_tune_space_free(pj_tune_space *space);

#endif

/* tune.h — the tuner's parts, shared by tuner.c (the loop), runner.c (runs, checks and
 * timings on the GPU) and the tests, which replace the GPU with a synthetic bench. */
#ifndef PTXJIT_TUNE_TUNE_H
#define PTXJIT_TUNE_TUNE_H

#include "request/context.h"
#include "catalog/family.h"
#include "pool/pool.h"
#include "records/bucket.h"
#include "records/memo.h"
#include "records/problem.h"
#include "records/record.h"
#include "request/auto.h"
#include "tune/space.h"

struct ptxjit_tune_result {
    pj_tune_record record;
    int from_record;
    int compile_only;
    char *record_path; /* NULL: not on disk */
    int processes;     /* compile workers that answered (0: compiled in this process) */
};

/* ---- the bench: where candidates run ---- */
typedef struct pj_tune_bench pj_tune_bench;
struct pj_tune_bench {
    void *state;
    /* Runs kernel once, waits for it, and checks its result; reference = 1: keeps the result
     * as the reference instead. */
    ptxjit_status (*check)(pj_tune_bench *bench, ptxjit_kernel *kernel, int reference);
    /* count timed runs of kernel, each in samples[i] (ms). */
    ptxjit_status (*measure)(pj_tune_bench *bench, ptxjit_kernel *kernel, double *samples,
                             int count);
    /* After a failure: 1 when the GPU context can no longer be used (a sticky CUDA error). */
    int (*lost)(pj_tune_bench *bench);
    void (*release)(pj_tune_bench *bench);
};

/* Everything a bench is made from. */
typedef struct {
    ptxjit_context *context;
    const char *family;
    const pj_family *builtin;           /* run by its op; NULL with user callbacks */
    const uint64_t *sizes;              /* a built-in family's problem */
    const pj_request *reference;        /* the reference configuration's request */
    const ptxjit_tune_options *options; /* run, check, user */
} pj_tune_bench_spec;

ptxjit_status pj_tune_bench_gpu(pj_tune_bench *out, const pj_tune_bench_spec *spec);

/* Tests set this to replace the GPU bench (the loop then needs no GPU). */
typedef ptxjit_status pj_tune_bench_factory(pj_tune_bench *out, const pj_tune_bench_spec *spec);
extern pj_tune_bench_factory *pj_tune_bench_override;
/* ---- the pick (tuner.c), exposed for the tests ---- */
/* The noise band of the best row: max(1%, 2x its spread), at most 5%. */
double pj_tune_noise(const pj_tune_row *best);
/* Index of the winner among rows (status OK, not abandoned): the earliest row whose median
 * is within the best's median x (1 + noise); -1 when no row is eligible. *noise gets the band. */
int pj_tune_pick(const pj_tune_row *rows, int count, double *noise);

#endif

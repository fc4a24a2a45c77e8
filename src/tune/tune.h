/* tune.h — the tuner's parts, shared by tuner.c (the call: setup, records, results), loop.c
 * (compiles, pruning and the first round as candidates arrive), rounds.c (successive
 * halving), rows.c (a candidate's row), prune.c (the rules that drop a compiled candidate before it runs), pick.c (the
 * statistics of a candidate's runs and the pick rule), runner.c (runs, checks and timings on
 * the GPU), limits.c (the GPU's limits) and the tests, which replace the GPU with a synthetic
 * bench. */
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

/* ---- the GPU's limits (limits.c), what the launch rule compares a candidate with ---- */
/* 0 in a field: not known, and the rules that need it do not apply. */
typedef struct {
    int sms;             /* streaming multiprocessors */
    int clock_khz;       /* the SMs' highest clock (CU_DEVICE_ATTRIBUTE_CLOCK_RATE) */
    int block_registers; /* registers a block may have (65536) */
    int sm_registers;    /* registers of an SM */
    int block_shared;    /* shared memory a block may have, opted in (232448 on sm_90) */
    int sm_shared;       /* shared memory of an SM (233472 on sm_90) */
    int reserved_shared; /* shared memory the system reserves per block (1024 from sm_80) */
    int sm_threads;      /* resident threads of an SM (2048) */
} pj_tune_limits;

/* The device's limits through the driver; fields it does not answer stay 0. */
void pj_tune_limits_read(pj_tune_limits *out, ptxjit_context *context);

/* ---- the bench: where candidates run ---- */
typedef struct pj_tune_bench pj_tune_bench;
struct pj_tune_bench {
    void *state;
    /* Runs kernel once, waits for it, and checks its result; reference = 1: keeps the result
     * as the reference instead. *ms (NULL: not asked) gets the run's own time, taken between
     * events around it alone: the first round's sample (loop.c says why that is fair). */
    ptxjit_status (*check)(pj_tune_bench *bench, ptxjit_kernel *kernel, int reference,
                           double *ms);
    /* count timed runs of kernel, each in samples[i] (ms); warm = 1: one untimed run first, so
     * that the stream is busy when the first is timed. */
    ptxjit_status (*measure)(pj_tune_bench *bench, ptxjit_kernel *kernel, double *samples,
                             int count, int warm);
    /* After a failure: 1 when the GPU context can no longer be used (a sticky CUDA error). */
    int (*lost)(pj_tune_bench *bench);
    void (*release)(pj_tune_bench *bench);
    pj_tune_limits limits; /* the device the bench runs on */
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

/* ---- the pick and the statistics (pick.c), exposed for the tests ---- */
/* The noise band of the best row: max(floor, 2x its spread), within 1% to 5% (floor 0: 1%). */
double pj_tune_noise(const pj_tune_row *best, double floor);
/* Index of the winner among rows (status OK, timed, neither abandoned nor pruned): the earliest
 * row whose median is within the best's median x (1 + noise); -1 when no row is eligible.
 * *noise gets the band (floor: as pj_tune_noise's). */
int pj_tune_pick(const pj_tune_row *rows, int count, double floor, double *noise);
/* row's median and spread (median absolute deviation over the median) of count samples. */
void pj_tune_summarize(pj_tune_row *row, const double *samples, int count);
/* The median of count values (reordered). */
double pj_tune_median(double *values, int count);

/* ---- what a compiled candidate tells before it runs, and the rules (prune.c) ---- */
typedef struct {
    int registers;      /* per thread, of the main (first) entry */
    int static_shared;  /* its static shared memory per block */
    int max_threads;    /* the most threads its block may have on a device of limits' registers
                           (its launch bound, or fewer where registers run out) */
    int spill_bytes;    /* spill stores and loads over every entry, per thread; -1: unknown
                           (the compile log does not say) */
    unsigned threads;   /* per block, as the family launches it; 0: unknown (user families) */
    unsigned dynamic_shared; /* likewise, bytes */
} pj_tune_facts;

/* kernel's facts: its cubin and compile log, and a built-in family's launch geometry (NULL:
 * a user family: threads and dynamic_shared 0); limits gives the register file. */
ptxjit_status pj_tune_facts_read(pj_tune_facts *out, const ptxjit_kernel *kernel,
                                 const pj_family *builtin, const pj_tune_limits *limits);
/* 1 when a block of the candidate fits an SM of the device; else 0, and why in why. */
int pj_tune_launchable(const pj_tune_facts *facts, const pj_tune_limits *limits, char *why,
                       size_t size);
/* The family's lower bound on the candidate's time (ms) for the problem, 0 when none. */
double pj_tune_bound(const pj_family *builtin, const ptxjit_kernel *kernel,
                     const uint64_t *sizes, const pj_tune_limits *limits);
/* Tests set this to stand for every family's bound (NULL: the families' own). */
typedef double pj_tune_bound_fn(const pj_request *request, const uint64_t *sizes, int sms,
                                int clock_khz);
extern pj_tune_bound_fn *pj_tune_bound_override;

/* ---- one tuning, shared by tuner.c, loop.c and rounds.c ---- */

/* Where a point stands in the loop. */
typedef enum {
    PJ_POINT_WAITING,   /* not compiled yet */
    PJ_POINT_DONE,      /* its row is final: excluded, pruned, or (exhaustive) timed fully */
    PJ_POINT_DEFERRED,  /* spills: timed only if no candidate without spills runs right */
    PJ_POINT_TIMED      /* in the successive halving; first[] holds its first round's time */
} pj_point_state;

typedef struct {
    ptxjit_context *context;
    const char *family;
    const ptxjit_tune_options *options;
    const pj_family *builtin;
    pj_tune_space space;
    pj_compile_request *compiles; /* the reference, then the points */
    int offset;           /* where the points start in compiles (1: after the reference) */
    int processes;        /* compile workers that answered (pool) */
    const char *measured; /* the problem the candidates run (record.problem may be its bucket) */
    uint64_t sizes[PJ_TUNE_MAX_SIZES]; /* a built-in family's sizes of it */
    int runs;             /* the final round's */
    pj_tune_bench bench;
    pj_tune_record record;
    int reference_row;    /* the row whose result is the reference, -1 before one ran */
    double best_ms;       /* the best time of the latest round so far (0: none yet) */
    pj_point_state *states;    /* per point */
    ptxjit_kernel **kernels;   /* per point, once compiled */
    double *first;             /* per point: its first round's time */
    pj_tune_facts *facts;      /* per point, once compiled */
    int spill_free;       /* points without spills that ran right */
    int rounds;           /* timing rounds done */
} pj_tuning;

/* The tuning's least tie band: its family's (pj_family_tune.tie_floor), 0 for user kernels. */
double pj_tune_floor(const pj_tuning *t);

/* plan_point.c: *out the canonical request (backend= where llvm) that builtin's op launches
 * for the problem of sizes with the fixed parameters alone and no record, where the family's
 * fit added words to the defaults and the request runs the problem; else NULL. Fails only
 * when out of memory. */
ptxjit_status pj_tune_plan_point(char **out, ptxjit_context *context, const pj_schema *schema,
                                 const pj_family *builtin, const char *fixed,
                                 pj_backend backend, const uint64_t *sizes);

/* loop.c: the space compiled on the pool, every point pruned or timed in its first round as
 * it arrives, then the successive halving (or, exhaustive, every point timed fully). */
ptxjit_status pj_tune_run_all(pj_tuning *t);
/* loop.c: compile_only: every point compiled, nothing run. */
ptxjit_status pj_tune_compile_all(pj_tuning *t);
/* rows.c: the row of a point, its params and message copied. */
ptxjit_status pj_tune_set_row(pj_tune_row *row, const char *params, ptxjit_status status,
                              const char *message);
/* rows.c: a row's status and message replaced (its params stay). */
ptxjit_status pj_tune_set_outcome(pj_tune_row *row, ptxjit_status status, const char *message);
/* rows.c: the error that ends a tuning whose candidate left the GPU context unusable. */
ptxjit_status pj_tune_lost_context(pj_tuning *t, const char *params, const char *message);

/* rounds.c: the rounds after the first, over the points in PJ_POINT_TIMED: each keeps the
 * candidates that could still win and times them with more runs; the last times the
 * finalists with t->runs runs each (the pick rule's rows). */
ptxjit_status pj_tune_halve(pj_tuning *t);

#endif

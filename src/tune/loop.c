/* loop.c — a tuning's candidates, as they come: the space compiled on the compile pool in the
 * space's order while this thread takes each point as its compile finishes (whichever is
 * ready: the GPU never waits for one compile while another is done), reads what its
 * cubin and compile log say (prune.c), drops it if it cannot launch, sets it aside if it
 * spills, drops it if the family's bound says it cannot beat a time already measured, and
 * otherwise runs it once, checked: the first round of the successive halving (rounds.c),
 * which goes on once every point has arrived. So the GPU runs candidates while the pool still
 * compiles the later ones, and a point costs one run of the GPU until it proves close to the
 * best.
 *
 * The first round's sample is the checked run's own time (events around the run alone, after
 * the outputs were poisoned): the kernel's module is loaded and its function fetched
 * (cuModuleGetFunction, which is when the driver loads a kernel) before it, on the pool's
 * thread (preload), so what the first launch adds is the host's launch call and a cold
 * instruction cache: microseconds, which the first cut's slack covers (rounds.c) — except
 * where the runs themselves take microseconds: a checked run under SHORT_RUN_MS is followed by
 * one warm run, and the shorter is the sample. Every later round times warm runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

/* A first round's checked run shorter than this is run once more, warm, and the shorter of
 * the two is its sample: at a few microseconds a run, a first launch's extra (measured: a
 * 10 us fp8 matmul whose checked run took 44 us, the round's best 21 us) exceeds the first
 * cut's slack, where a second run costs the tuning almost nothing. */
#define SHORT_RUN_MS 0.2
/* The family's bound prunes a candidate only when it exceeds a measured time by this much:
 * a first-round time may lie under the kernel's true time by noise, never by 2%. */
#define BOUND_MARGIN 0.02
#define MAX_RUNS 1000

static void progress(pj_tuning *t, int done, const char *params)
{
    if (t->options->progress)
        t->options->progress(t->options->progress_user, done, t->space.count, params);
    if (t->context->logger.on_event)
        pj_notify(&t->context->logger, (ptxjit_event){.kind = PTXJIT_EVENT_TUNE_PROGRESS,
                                                      .family = t->family,
                                                      .params = params,
                                                      .done = done,
                                                      .total = t->space.count});
}

/* A run of point index failed: a lost context ends the tuning, anything else excludes it. */
static ptxjit_status run_failed(pj_tuning *t, int index, ptxjit_status status)
{
    const char *params = t->space.points[index];
    t->states[index] = PJ_POINT_DONE;
    if (status != PTXJIT_ERR_OUT_OF_MEMORY && t->bench.lost(&t->bench)) {
        char *why = pj_strdup(ptxjit_last_error());
        status = pj_tune_lost_context(t, params, why ? why : "?");
        free(why);
        return status;
    }
    return pj_tune_set_row(&t->record.rows[index], params, status, ptxjit_last_error());
}

/* Compiled, never run: why is the rule that dropped it. */
static ptxjit_status prune(pj_tuning *t, int index, const char *why)
{
    t->states[index] = PJ_POINT_DONE;
    t->record.rows[index].pruned = 1;
    return pj_tune_set_row(&t->record.rows[index], t->space.points[index], PTXJIT_OK, why);
}

/* Runs the reference configuration (compiles[0]) first, to keep its result. */
static ptxjit_status run_reference(pj_tuning *t, pj_compile_pool *pool)
{
    ptxjit_kernel *kernel;
    const char *message;
    ptxjit_status status = pj_compile_pool_wait(pool, 0, &kernel, NULL, &message);
    if (status != PTXJIT_OK)
        return PTXJIT_OK; /* the first point that runs becomes the reference */
    status = t->bench.check(&t->bench, kernel, 1, NULL);
    if (status == PTXJIT_OK)
        t->reference_row = -2; /* the reference ran; it is no row */
    else if (t->bench.lost(&t->bench))
        return pj_tune_lost_context(t, t->compiles[0].params, ptxjit_last_error());
    return PTXJIT_OK;
}

/* exhaustive: after its checked run, one warm run and t->runs timed ones. */
static ptxjit_status time_fully(pj_tuning *t, int index)
{
    double samples[MAX_RUNS];
    pj_tune_row *row = &t->record.rows[index];
    ptxjit_status status = t->bench.measure(&t->bench, t->kernels[index], samples, t->runs, 1);
    if (status != PTXJIT_OK)
        return run_failed(t, index, status);
    t->states[index] = PJ_POINT_DONE;
    pj_tune_summarize(row, samples, t->runs);
    row->runs = t->runs;
    row->rounds = 1;
    if (t->best_ms <= 0 || row->median_ms < t->best_ms)
        t->best_ms = row->median_ms;
    return PTXJIT_OK;
}

/* The family's bound, where it says the candidate cannot beat the best time so far. */
static int beaten(pj_tuning *t, int index, char *why, size_t size)
{
    if (t->options->exhaustive || t->best_ms <= 0)
        return 0;
    double bound = pj_tune_bound(t->builtin, t->kernels[index], t->sizes, &t->bench.limits);
    if (bound <= t->best_ms * (1 + BOUND_MARGIN))
        return 0;
    snprintf(why, size, "cannot win: no run of it can take less than %.4f ms (the family's "
             "lower bound for this problem on %d SMs), %.2fx the %.4f ms a candidate took",
             bound, t->bench.limits.sms, bound / t->best_ms, t->best_ms);
    return 1;
}

/* The first round of a point: dropped by the bound, or run once, checked (or kept as the
 * reference), its run's time its sample. */
static ptxjit_status first_round(pj_tuning *t, int index)
{
    char why[512];
    if (beaten(t, index, why, sizeof why))
        return prune(t, index, why);
    pj_tune_row *row = &t->record.rows[index];
    int reference = t->reference_row == -1;
    double ms = 0;
    ptxjit_status status = t->bench.check(&t->bench, t->kernels[index], reference, &ms);
    if (status != PTXJIT_OK)
        return run_failed(t, index, status);
    double warm = 0;
    if (ms > 0 && ms < SHORT_RUN_MS && !t->options->exhaustive) {
        status = t->bench.measure(&t->bench, t->kernels[index], &warm, 1, 0);
        if (status != PTXJIT_OK)
            return run_failed(t, index, status);
        ms = warm > 0 && warm < ms ? warm : ms;
    }
    if (reference)
        t->reference_row = index;
    t->spill_free += t->facts[index].spill_bytes == 0;
    status = pj_tune_set_row(row, t->space.points[index], PTXJIT_OK, "");
    if (status != PTXJIT_OK || t->options->exhaustive)
        return status == PTXJIT_OK ? time_fully(t, index) : status;
    t->states[index] = PJ_POINT_TIMED;
    t->first[index] = ms;
    row->median_ms = ms;
    row->runs = 1;
    row->rounds = 1;
    if (t->best_ms <= 0 || ms < t->best_ms)
        t->best_ms = ms;
    return PTXJIT_OK;
}

/* One point as it arrives from the pool (compiled: status, kernel; or not: message):
 * excluded (its compile failed), pruned (it cannot launch), set aside (it spills), or into its
 * first round. */
static ptxjit_status arrive(pj_tuning *t, int index, ptxjit_status status, ptxjit_kernel *kernel,
                            const char *message)
{
    const char *params = t->space.points[index];
    pj_tune_row *row = &t->record.rows[index];
    if (status != PTXJIT_OK) {
        t->states[index] = PJ_POINT_DONE;
        return pj_tune_set_row(row, params, status, message);
    }
    t->kernels[index] = kernel;
    pj_tune_facts *facts = &t->facts[index];
    status = pj_tune_facts_read(facts, kernel, t->builtin, &t->bench.limits);
    if (status == PTXJIT_ERR_OUT_OF_MEMORY)
        return status;
    if (status != PTXJIT_OK) { /* an unreadable cubin: no rule applies, the run will tell */
        memset(facts, 0, sizeof *facts);
        facts->spill_bytes = -1;
    }
    char why[512];
    if (!pj_tune_launchable(facts, &t->bench.limits, why, sizeof why))
        return prune(t, index, why);
    if (!t->options->exhaustive && facts->spill_bytes > 0) {
        t->states[index] = PJ_POINT_DEFERRED;
        return pj_tune_set_row(row, params, PTXJIT_OK, "");
    }
    return first_round(t, index);
}

/* The points set aside for spills: dropped when a candidate without spills ran right, else
 * given their first round now. */
static ptxjit_status settle_spills(pj_tuning *t)
{
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; i < t->space.count && status == PTXJIT_OK; i++) {
        if (t->states[i] != PJ_POINT_DEFERRED)
            continue;
        if (t->spill_free > 0) {
            char why[512];
            snprintf(why, sizeof why, "cannot win: spills %d bytes per thread to local memory "
                     "(ptxas' spill stores and loads) where %d candidate%s without spills ran "
                     "right", t->facts[i].spill_bytes, t->spill_free,
                     t->spill_free == 1 ? "" : "s");
            status = prune(t, i, why);
        } else {
            status = first_round(t, i);
        }
    }
    return status;
}

/* On a pool thread, as each kernel is ready: its module loaded on the GPU (the driver loads
 * a kernel's code when the module's functions are fetched), so the tuning's thread finds it
 * ready to launch and the GPU is not left idle while the host loads it. Any failure is left
 * for the candidate's own run to report. */
static void preload(void *user, ptxjit_kernel *kernel)
{
    pj_tuning *t = user;
    CUcontext saved;
    if (t->context->gpu_status != PTXJIT_OK || pj_gpu_enter(t->context, &saved) != PTXJIT_OK)
        return;
    int index;
    (void)pj_kernel_load(kernel, NULL, &index);
    pj_gpu_leave(t->context, saved);
}

static ptxjit_status make_state(pj_tuning *t)
{
    size_t n = (size_t)t->space.count + 1;
    t->states = calloc(n, sizeof *t->states);
    t->kernels = calloc(n, sizeof *t->kernels);
    t->first = calloc(n, sizeof *t->first);
    t->facts = calloc(n, sizeof *t->facts);
    return t->states && t->kernels && t->first && t->facts
               ? PTXJIT_OK
               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status pj_tune_run_all(pj_tuning *t)
{
    pj_compile_pool *pool;
    int total = t->space.count + t->offset;
    if (t->runs > MAX_RUNS)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "at most %d runs", MAX_RUNS);
    ptxjit_status status = make_state(t);
    if (status == PTXJIT_OK)
        status = pj_compile_pool_start_ready(&pool, t->context, t->compiles, total,
                                             t->options->threads, preload, t);
    if (status != PTXJIT_OK)
        return status;
    if (t->offset)
        status = run_reference(t, pool);
    /* Every row exists from the start: points arrive in the order their compiles finish. */
    t->record.row_count = t->space.count;
    for (int done = 0; done < t->space.count && status == PTXJIT_OK; done++) {
        int index;
        ptxjit_kernel *kernel;
        const char *message;
        ptxjit_status compiled = pj_compile_pool_wait_next(pool, &index, &kernel, NULL, &message);
        index -= t->offset;
        status = index < 0 ? pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "the pool handed the "
                                      "reference out twice")
                           : arrive(t, index, compiled, kernel, message);
        if (status == PTXJIT_OK)
            progress(t, done + 1, t->space.points[index]);
    }
    t->processes = pj_compile_pool_processes(pool);
    pj_compile_pool_free(pool); /* every compile is done: its workers may go */
    if (status == PTXJIT_OK)
        status = settle_spills(t);
    t->rounds = 1;
    if (status == PTXJIT_OK && !t->options->exhaustive)
        status = pj_tune_halve(t);
    return status;
}

ptxjit_status pj_tune_compile_all(pj_tuning *t)
{
    pj_compile_pool *pool;
    ptxjit_status status = pj_compile_pool_start(&pool, t->context, t->compiles + t->offset,
                                                 t->space.count, t->options->threads);
    if (status != PTXJIT_OK)
        return status;
    for (int i = 0; i < t->space.count && status == PTXJIT_OK; i++) {
        ptxjit_kernel *kernel;
        const char *message;
        ptxjit_status compiled = pj_compile_pool_wait(pool, i, &kernel, NULL, &message);
        status = pj_tune_set_row(&t->record.rows[i], t->space.points[i], compiled, message);
        t->record.row_count = i + 1;
        progress(t, i + 1, t->space.points[i]);
    }
    t->processes = pj_compile_pool_processes(pool);
    pj_compile_pool_free(pool);
    return status;
}

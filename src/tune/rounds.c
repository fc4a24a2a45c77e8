/* rounds.c — successive halving: after the first round (one checked run per candidate,
 * loop.c), each round keeps the candidates that could still win and times them with more
 * runs; the last round times the finalists as a whole tuning used to time every candidate
 * (one warm run, then the tuning's runs), and the pick rule (pick.c) takes its rows.
 *
 * A cut keeps every candidate within a margin of the round's best, and at least the fastest
 * share of them. The margin is what makes the winner stable: a candidate within the final
 * round's noise band (at most 5%) of the best, measured with fewer runs, lies within that
 * margin, so it reaches the final round in every tuning, and the earliest of the tied ones in
 * the space's order wins every time. The share only keeps more (a fluke fast time in a round
 * cannot cut the field down to itself). A candidate cut is marked abandoned, with its round's
 * time and how far it was from that round's best. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

/* So few candidates after the first cut skip the middle round. */
#define FINALISTS 4
/* A cut keeps at least this many (and at least its share): one fluke time never decides. */
#define KEEP_AT_LEAST 2
/* After the first round (one run each, its time with the launch call's microseconds): within
 * 10% of the best, plus 20 microseconds, and at least the fastest eighth. A run of a kernel
 * of a millisecond or more varies by about 1% from the next; the final band is at most 5%. */
#define FIRST_MARGIN 0.10
#define FIRST_SLACK_MS 0.02
#define FIRST_SHARE 8
/* The middle round: 3 runs each, their median; then within the noise band the final round
 * will apply (max(1%, twice the spread), at most 5%, estimated from the middle round's best)
 * plus 2% for three runs' noise, plus 2 microseconds, and at least the fastest third. */
#define MIDDLE_RUNS 3
#define MIDDLE_EXTRA 0.02
#define MIDDLE_SLACK_MS 0.002
#define MIDDLE_SHARE 3
#define MAX_RUNS 1000

typedef struct {
    int index;   /* the point */
    double time; /* its latest round's */
} entrant;

static int by_time(const void *a, const void *b)
{
    const entrant *x = a, *y = b;
    return (x->time > y->time) - (x->time < y->time);
}

static int by_index(const void *a, const void *b)
{
    return ((const entrant *)a)->index - ((const entrant *)b)->index;
}

/* Marks point index dropped after round (1-based), time its round's, best the round's best. */
static ptxjit_status drop(pj_tuning *t, int index, int round, double time, double best)
{
    pj_tune_row *row = &t->record.rows[index];
    char why[256];
    snprintf(why, sizeof why, "abandoned after round %d: %.4f ms, %.2fx that round's best "
             "%.4f ms", round, time, best > 0 ? time / best : 0, best);
    row->abandoned = 1;
    t->states[index] = PJ_POINT_DONE;
    return pj_tune_set_outcome(row, PTXJIT_OK, why);
}

/* Keeps, of the n entrants (any order), those within margin of the best (and slack_ms) and
 * at least the fastest n / share; the others dropped after round. Leaves the kept ones first,
 * in the space's order, and returns their count (-1: out of memory). */
static int cut(pj_tuning *t, entrant *e, int n, int round, double margin, double slack_ms,
               int share)
{
    qsort(e, (size_t)n, sizeof *e, by_time);
    double best = e[0].time;
    int quota = (n + share - 1) / share, kept = 0;
    quota = quota < KEEP_AT_LEAST ? KEEP_AT_LEAST : quota;
    for (int i = 0; i < n; i++) {
        if (i < quota || e[i].time <= best * (1 + margin) + slack_ms)
            e[kept++] = e[i];
        else if (drop(t, e[i].index, round, e[i].time, best) != PTXJIT_OK)
            return -1;
    }
    qsort(e, (size_t)kept, sizeof *e, by_index);
    return kept;
}

/* A run that failed in a later round (a candidate that passed its check): excluded, or the
 * tuning ends if the context is lost. */
static ptxjit_status failed(pj_tuning *t, int index, ptxjit_status status)
{
    pj_tune_row *row = &t->record.rows[index];
    t->states[index] = PJ_POINT_DONE;
    if (status != PTXJIT_ERR_OUT_OF_MEMORY && t->bench.lost(&t->bench)) {
        char *why = pj_strdup(ptxjit_last_error());
        status = pj_tune_lost_context(t, row->params, why ? why : "?");
        free(why);
        return status;
    }
    return pj_tune_set_outcome(row, status, ptxjit_last_error());
}

/* The middle round: MIDDLE_RUNS runs of each entrant, their median its time. Entrants whose
 * runs fail leave the round (n shrinks). */
static ptxjit_status middle_round(pj_tuning *t, entrant *e, int *n)
{
    double samples[MIDDLE_RUNS];
    int kept = 0;
    for (int i = 0; i < *n; i++) {
        pj_tune_row *row = &t->record.rows[e[i].index];
        ptxjit_status status =
            t->bench.measure(&t->bench, t->kernels[e[i].index], samples, MIDDLE_RUNS, 0);
        if (status != PTXJIT_OK) {
            status = failed(t, e[i].index, status);
            if (status != PTXJIT_OK)
                return status;
            continue;
        }
        pj_tune_summarize(row, samples, MIDDLE_RUNS);
        row->runs = MIDDLE_RUNS;
        row->rounds++;
        e[kept] = e[i];
        e[kept++].time = row->median_ms;
    }
    *n = kept;
    return PTXJIT_OK;
}

/* The middle cut's margin: the band the pick rule will use, as the middle round's best row
 * (the fastest median) shows its noise, plus MIDDLE_EXTRA. */
static double middle_margin(const pj_tuning *t, const entrant *e, int n)
{
    const pj_tune_row *best = &t->record.rows[e[0].index];
    for (int i = 1; i < n; i++)
        if (e[i].time < best->median_ms)
            best = &t->record.rows[e[i].index];
    return pj_tune_noise(best, pj_tune_floor(t)) + MIDDLE_EXTRA;
}

/* The final round: one warm run and t->runs timed runs of each finalist, taken in
 * FINAL_PASSES passes over the finalists, each pass in the other direction (A B C, C B A,
 * ...): a GPU's clock drifts over a round of large products (power and heat), and timing each
 * finalist's runs back to back gave the earlier ones another GPU than the later ones — five
 * tunings of matmul 8192^3 picked three winners, one at 0.916 of the sweep's best (H100,
 * docs/PERFORMANCE.md 2026-11-28 02:53). Interleaved, every finalist sees the same drift. */
#define FINAL_PASSES 4

static ptxjit_status final_round(pj_tuning *t, const entrant *e, int n)
{
    const int runs = t->runs < MAX_RUNS ? t->runs : MAX_RUNS;
    const int passes = runs < FINAL_PASSES ? runs : FINAL_PASSES;
    double *samples = calloc((size_t)n * (size_t)runs, sizeof *samples);
    int *taken = calloc((size_t)n, sizeof *taken), *alive = calloc((size_t)n, sizeof *alive);
    if (!samples || !taken || !alive) {
        free(samples), free(taken), free(alive);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; i < n; i++)
        alive[i] = 1;
    for (int pass = 0; pass < passes && status == PTXJIT_OK; pass++) {
        const int count = runs * (pass + 1) / passes - runs * pass / passes;
        for (int j = 0; j < n && status == PTXJIT_OK; j++) {
            const int i = pass % 2 ? n - 1 - j : j;
            if (!alive[i])
                continue;
            ptxjit_status measured = t->bench.measure(&t->bench, t->kernels[e[i].index],
                                                      samples + (size_t)i * (size_t)runs +
                                                          taken[i],
                                                      count, pass == 0);
            if (measured != PTXJIT_OK) {
                alive[i] = 0;
                status = failed(t, e[i].index, measured);
                continue;
            }
            taken[i] += count;
        }
    }
    t->best_ms = 0;
    for (int i = 0; i < n && status == PTXJIT_OK; i++) {
        if (!alive[i])
            continue;
        pj_tune_row *row = &t->record.rows[e[i].index];
        pj_tune_summarize(row, samples + (size_t)i * (size_t)runs, runs);
        row->runs = runs;
        row->rounds++;
        t->states[e[i].index] = PJ_POINT_DONE;
        if (t->best_ms <= 0 || row->median_ms < t->best_ms)
            t->best_ms = row->median_ms;
    }
    free(samples), free(taken), free(alive);
    return status;
}

ptxjit_status pj_tune_halve(pj_tuning *t)
{
    entrant *e = calloc((size_t)t->space.count + 1, sizeof *e);
    if (!e)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    int n = 0;
    for (int i = 0; i < t->space.count; i++)
        if (t->states[i] == PJ_POINT_TIMED)
            e[n++] = (entrant){i, t->first[i]};
    ptxjit_status status = PTXJIT_OK;
    if (n > KEEP_AT_LEAST) {
        n = cut(t, e, n, 1, FIRST_MARGIN, FIRST_SLACK_MS, FIRST_SHARE);
        if (n < 0)
            status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (status == PTXJIT_OK && n > FINALISTS) {
        status = middle_round(t, e, &n);
        t->rounds++;
        if (status == PTXJIT_OK && n > KEEP_AT_LEAST) {
            n = cut(t, e, n, t->rounds, middle_margin(t, e, n), MIDDLE_SLACK_MS, MIDDLE_SHARE);
            if (n < 0)
                status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    if (status == PTXJIT_OK && n > 0) {
        status = final_round(t, e, n);
        t->rounds++;
    }
    free(e);
    return status;
}

/* pick.c — a candidate's runs summarized (median, and the median absolute deviation as its
 * noise), and the pick rule: the earliest candidate in the space's order within the noise band
 * of the best, so that two tunings whose times differ by noise pick the same winner. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tune/tune.h"

#define LEAST_BAND 0.01
#define MOST_BAND 0.05

double pj_tune_noise(const pj_tune_row *best, double floor)
{
    const double least = floor > MOST_BAND ? MOST_BAND : floor > LEAST_BAND ? floor : LEAST_BAND;
    const double band = 2 * best->spread;
    return band < least ? least : band > MOST_BAND ? MOST_BAND : band;
}

double pj_tune_floor(const pj_tuning *t)
{
    return t->builtin && t->builtin->tune ? t->builtin->tune->tie_floor : 0;
}

/* Timed to the end: not excluded, pruned or dropped by a round. */
static int eligible(const pj_tune_row *row)
{
    return row->status == PTXJIT_OK && !row->abandoned && !row->pruned && row->runs > 0 &&
           row->median_ms > 0;
}

int pj_tune_pick(const pj_tune_row *rows, int count, double floor, double *noise)
{
    int best = -1;
    for (int i = 0; i < count; i++)
        if (eligible(&rows[i]) && (best < 0 || rows[i].median_ms < rows[best].median_ms))
            best = i;
    if (best < 0)
        return -1;
    *noise = pj_tune_noise(&rows[best], floor);
    for (int i = 0; i < count; i++)
        if (eligible(&rows[i]) && rows[i].median_ms <= rows[best].median_ms * (1 + *noise))
            return i;
    return best;
}

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double pj_tune_median(double *values, int count)
{
    qsort(values, (size_t)count, sizeof *values, compare_doubles);
    return count % 2 ? values[count / 2] : (values[count / 2 - 1] + values[count / 2]) / 2;
}

void pj_tune_summarize(pj_tune_row *row, const double *samples, int count)
{
    double *work = malloc((size_t)count * sizeof *work);
    if (!work) {
        row->median_ms = samples[0];
        row->spread = 0;
        return;
    }
    memcpy(work, samples, (size_t)count * sizeof *work);
    row->median_ms = pj_tune_median(work, count);
    for (int i = 0; i < count; i++)
        work[i] = fabs(samples[i] - row->median_ms);
    row->spread = row->median_ms > 0 ? pj_tune_median(work, count) / row->median_ms : 0;
    free(work);
}

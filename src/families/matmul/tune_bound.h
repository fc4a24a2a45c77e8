/* tune_bound.h — a lower bound on a matmul run's time, for ptxjit_tune's pruning
 * (catalog/family.h: pj_family_tune.bound_ms). */
#ifndef PTXJIT_MATMUL_TUNE_BOUND_H
#define PTXJIT_MATMUL_TUNE_BOUND_H

#include "request/context.h"

/* ms that no run of request can beat on the problem m = sizes[0], n = sizes[1], k = sizes[2]
 * on sms SMs clocked at most clock_khz; 0 when the request cannot be read. */
double pj_matmul_tune_bound(const pj_request *request, const uint64_t *sizes, int sms,
                            int clock_khz);

#endif

/* scaffold.h — what a tuning does around a built-in family's op (catalog/family.h:
 * pj_family_tune): the problem's device buffers, made once from the family's list of them
 * (random inputs, zeros), outputs poisoned before each checked run, the reference
 * configuration's result kept and each candidate's compared with it, and all of it released.
 * The family says only what is its own: the problem, its buffers, a run, the types its results
 * are of. */
#ifndef PTXJIT_TUNE_SCAFFOLD_H
#define PTXJIT_TUNE_SCAFFOLD_H

#include "catalog/family.h"
#include "request/context.h"
#include "tune/check.h"

typedef struct pj_tune_scaffold pj_tune_scaffold;

/* The buffers of the problem of sizes for the reference configuration's request, filled, in
 * the tuning's CUDA context (the bench entered it). */
ptxjit_status pj_tune_scaffold_open(pj_tune_scaffold **out, ptxjit_context *context,
                                    const pj_family *family, const uint64_t *sizes,
                                    const pj_request *reference);
/* One run of kernel's op on the buffers (asynchronous). */
ptxjit_status pj_tune_scaffold_run(pj_tune_scaffold *scaffold, ptxjit_kernel *kernel,
                                   void *stream);
/* Before a checked run: every output poisoned (NaN), or zeros where the run reads it. */
ptxjit_status pj_tune_scaffold_poison(pj_tune_scaffold *scaffold);
/* After kernel's run has finished: its outputs kept as the reference (reference = 1), or
 * compared with the reference's: PTXJIT_ERR_CUDA naming the first mismatch, PTXJIT_ERR_PARAM
 * for a candidate whose results are of other types. */
ptxjit_status pj_tune_scaffold_check(pj_tune_scaffold *scaffold, ptxjit_kernel *kernel,
                                     int reference);
/* The bytes of the problem's buffers, all together. */
size_t pj_tune_scaffold_bytes(const pj_tune_scaffold *scaffold);
/* The scaffold's checker (its module of the tuner's kernels), which the runner's L2 flush shares. */
pj_tune_checker *pj_tune_scaffold_checker(pj_tune_scaffold *scaffold);
void pj_tune_scaffold_close(pj_tune_scaffold *scaffold);

#endif

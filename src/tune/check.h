/* check.h — the tuner's own kernels (random inputs made on the GPU, the comparison of a
 * candidate's output with the reference's, both on the GPU so that a check of a 1 GiB result
 * costs a pass over it, not a copy to the host; the read that empties L2 before a timed run),
 * one module loaded once per tuning: by the scaffold (scaffold.c), or by the runner for user
 * kernels (runner.c). */
#ifndef PTXJIT_TUNE_CHECK_H
#define PTXJIT_TUNE_CHECK_H

#include "catalog/family.h"
#include "request/context.h"

typedef struct pj_tune_checker pj_tune_checker;

ptxjit_status pj_tune_checker_open(pj_tune_checker **out, ptxjit_context *context);
void pj_tune_checker_close(pj_tune_checker *checker);

/* count elements of kind at data, random (uniform in [-1, 1) for floats, any bits for
 * PJ_TUNE_BITS) from seed; on the default stream. */
ptxjit_status pj_tune_fill(pj_tune_checker *checker, CUdeviceptr data, uint64_t count,
                           pj_tune_kind kind, unsigned seed);
/* Waits for the stream, then compares count elements of got with want: PTXJIT_OK when each
 * is within rel * |want| + abs (floats; NaN never is) or equal (PJ_TUNE_BITS); else
 * PTXJIT_ERR_CUDA "wrong result: N of M elements of what differ ... the first at index I". */
ptxjit_status pj_tune_compare(pj_tune_checker *checker, CUdeviceptr got, CUdeviceptr want,
                              uint64_t count, pj_tune_kind kind, double rel, double abs,
                              const char *what);
/* Reads words 16-byte words at data (the flush buffer); a block's sum is written to sink only
 * if it equals key, which keeps the compiler from leaving the read out (a 4-byte sink, almost
 * never written). On the default stream. */
ptxjit_status pj_tune_read(pj_tune_checker *checker, CUdeviceptr data, uint64_t words,
                           unsigned key, CUdeviceptr sink);
#endif

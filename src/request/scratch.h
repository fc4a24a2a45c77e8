/* scratch.h — the context's device workspace, which the family ops borrow in stream order
 * (split-K's sums and arrival counts, families/matmul/op.c). It has two parts: one kept at
 * zero — made zero when allocated, and every borrower leaves it as it found it — and one of
 * any content. One borrower at a time: a borrow takes the workspace's lock and has its stream
 * wait (on the GPU, through an event) for the launches of the borrow before, on whatever
 * stream they were queued; its return records that event and lets the next borrower in. */
#ifndef PTXJIT_REQUEST_SCRATCH_H
#define PTXJIT_REQUEST_SCRATCH_H

#include "request/context.h"

typedef struct {
    CUdeviceptr zeroed; /* at least zeroed_bytes, zero, to be left zero */
    CUdeviceptr loose;  /* at least loose_bytes of any content */
} pj_scratch_lease;

/* Lends the workspace, grown (freed and allocated in stream order) where it is smaller than
 * asked. The context's CUDA context is current (pj_gpu_enter). On success the workspace is
 * held until pj_scratch_return, which the caller must call after queueing its launches. */
ptxjit_status pj_scratch_borrow(pj_scratch_lease *out, ptxjit_context *context,
                                size_t zeroed_bytes, size_t loose_bytes, CUstream stream);
/* Ends the borrow: the next one on another stream waits for what was queued on stream.
 * Returns status, or the event's failure where status is PTXJIT_OK. */
ptxjit_status pj_scratch_return(ptxjit_context *context, CUstream stream, ptxjit_status status);
/* At close, with the context's CUDA context current: frees the workspace (after the GPU is
 * done with it) and its event. */
void pj_scratch_free(ptxjit_context *context);

#endif

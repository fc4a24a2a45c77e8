/* timing.h — CUDA-event timing, wall time and fresh random data for `run` and `bench`. */
#ifndef PTXJIT_CLI_TIMING_H
#define PTXJIT_CLI_TIMING_H

#include <stddef.h>
#include <stdint.h>

#include "ptxjit.h"

/* Runs fn(arg) warmup times, then runs times between CUDA events on the default stream;
 * writes the median in ms. The stream is held until each sample is wholly enqueued, so the
 * events time the GPU work, not the host's time to submit it. Stops at the first failing
 * call and returns its status. */
typedef ptxjit_status (*timed_fn)(void *arg);
ptxjit_status time_median_ms(double *out, ptxjit_context *context, timed_fn fn, void *arg,
                             int warmup, int runs);
/* The same with L2 emptied before each run: flush_bytes at flush (twice the L2) filled on the
 * stream after the sample's gate and before its first event, so that the run finds none of
 * what the last one left there and the fill is not timed. flush 0: time_median_ms. */
ptxjit_status time_median_ms_flushed(double *out, ptxjit_context *context, timed_fn fn,
                                     void *arg, int warmup, int runs, ptxjit_devptr flush,
                                     size_t flush_bytes);
/* The ceiling of memory-bound kernels: a 2 GiB device-to-device copy, bytes read + written. */
ptxjit_status copy_bandwidth(double *gbps, ptxjit_context *context, int runs);
/* Milliseconds on the monotonic clock. */
double wall_ms(void);
/* The median of count values (sorts them). */
double median_of(double *values, int count);
/* Fills with random values from a seed taken from the clock: never zeros, never the same. */
void random_i32(int32_t *data, size_t n);
void random_f32(float *data, size_t n);

#endif

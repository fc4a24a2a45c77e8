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
/* How a timed run finds L2 (bench matmul shapes=): emptied by reading a buffer of twice its
 * size (L2 then holds clean lines of that buffer, and the last run's writes are written back
 * during the read, outside the events: what Nsight Compute's cache control and rotating the
 * operands leave), or by filling it (L2 then holds dirty lines, whose write-back to DRAM lands
 * in the timed run, as after a kernel that wrote much). bytes: twice the L2; the buffer holds
 * 256 more, where the read leaves its sum. */
typedef enum { CLI_FLUSH_NONE, CLI_FLUSH_READ, CLI_FLUSH_WRITE } cli_flush_mode;
typedef struct {
    cli_flush_mode mode;
    ptxjit_devptr buffer;
    size_t bytes;
} cli_l2_flush;
/* Its name in the bench's words (flush=read, flush=write). */
const char *cli_flush_name(cli_flush_mode mode);
/* The same with L2 emptied before each run as flush says (NULL or CLI_FLUSH_NONE:
 * time_median_ms), on the stream after the sample's gate and before its first event, so that
 * the run finds none of what the last one left there and the flush is not timed. */
ptxjit_status time_median_ms_flushed(double *out, ptxjit_context *context, timed_fn fn,
                                     void *arg, int warmup, int runs, const cli_l2_flush *flush);
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

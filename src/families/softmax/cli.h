/* cli.h — the softmax family on the command line (src/families/softmax/cli.c). */
#ifndef PTXJIT_FAMILIES_SOFTMAX_CLI_H
#define PTXJIT_FAMILIES_SOFTMAX_CLI_H

#include <stddef.h>

#include "ptxjit.h"

/* `ptxjit run softmax [params] [rows=M cols=N] [runs=R]`: a fresh random rows x cols matrix,
 * a NaN-poisoned output, every row checked against the float64 softmax (max abs and relative
 * error, row sums), then the median of runs timed launches and GB/s counting the bytes read
 * and written. An exit status (cli.h). */
int cli_softmax_run(ptxjit_context *context, const char *params, size_t rows, size_t cols,
                    int runs);

/* `ptxjit bench softmax [n=N] [runs=R] ["PARAMS" ...]`: fp32 and bf16 at N = 1024, 4096, 16384
 * (or n alone) and M = 2^28 / N (1 GiB of fp32 input); every configuration of the family's bench sets that fits N (online:
 * registers for 1 to 4 times the row; block: any), through both backends; the best per
 * N and dtype, the device-to-device copy measured in the same run, each backend's GB/s, their
 * ratio and the max error against float64 on sampled rows. With sets (set_count > 0), those
 * parameter sets are timed instead (each in the table of its dtype). An exit status. */
int cli_softmax_bench(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                      int set_count);

#endif

/* run_family.h — per-family runners behind `ptxjit run` and `ptxjit bench`. */
#ifndef PTXJIT_CLI_RUN_FAMILY_H
#define PTXJIT_CLI_RUN_FAMILY_H

#include <stddef.h>

#include "ptxjit.h"

int reduce_run(ptxjit_context *context, const char *params, size_t n, int runs);
int reduce_bench(ptxjit_context *context, size_t n, int runs);
int transpose_run(ptxjit_context *context, const char *params, size_t rows, size_t cols,
                  int runs);
/* n = 0: the write-up's sizes, 16384^2 and 32768^2. With set_count > 0, the parameter sets
 * are timed instead of the built-in sweep. */
int transpose_bench(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                    int set_count);
int matmul_run(ptxjit_context *context, const char *params, size_t m, size_t n, size_t k,
               int runs);
/* n = 0: the write-up's table at 4096³ fp32 and wgmma at 8192³ bf16; with set_count > 0 the
 * parameter sets are timed instead of the progression (each in the table of its dtype). */
int matmul_bench(ptxjit_context *context, size_t n, int runs, const char *const *sets,
                 int set_count);
/* Memory-hit + launch against a bare cuLaunchKernel, and a fresh process's disk hit. */
int jit_costs(ptxjit_context *context, const char *self_path);

#endif

/* cli_layout.h — `ptxjit run matmul` with a layout (cli_layout.c): its run words batch=, lda=,
 * ldb=, ldc=, stride_a=, stride_b=, stride_c=, and the run and the plan they go to. */
#ifndef PTXJIT_FAMILIES_MATMUL_CLI_LAYOUT_H
#define PTXJIT_FAMILIES_MATMUL_CLI_LAYOUT_H

#include "cli/family_cli.h"

extern const cli_run_word cli_matmul_layout_words[];

/* The family's run_with and plan_with (family_cli.h); sizes are m, n, k. */
int cli_matmul_run_layout(ptxjit_context *context, const char *params, const size_t *sizes,
                          const cli_run_values *words, int runs);
int cli_matmul_plan_layout(ptxjit_context *context, const char *params, const size_t *sizes,
                           const cli_run_values *words);

#endif

/* cli_shapes.h — `bench matmul shapes=` (cli_shapes.c). */
#ifndef PTXJIT_FAMILIES_MATMUL_CLI_SHAPES_H
#define PTXJIT_FAMILIES_MATMUL_CLI_SHAPES_H

#include "families/matmul/cli_product.h"

/* `bench matmul shapes=MxNxK,... [rounds=R] [flush=read|write|none] ["PARAMS" ...]`: each
 * shape, each set against the fastest cuBLAS of its input type, in rounds that alternate which
 * side goes first, L2 emptied before each timed run as mode says (cli/timing.h). */
ptxjit_status cli_matmul_shapes_bench(ptxjit_context *context, cublas_peer *cublas,
                                      const char *list, int runs, int rounds,
                                      cli_flush_mode mode, const char *const *sets, int set_count,
                                      int *all_ok);

#endif

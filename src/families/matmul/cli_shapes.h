/* cli_shapes.h — `bench matmul shapes=` (cli_shapes.c). */
#ifndef PTXJIT_FAMILIES_MATMUL_CLI_SHAPES_H
#define PTXJIT_FAMILIES_MATMUL_CLI_SHAPES_H

#include "families/matmul/cli_product.h"

/* `bench matmul shapes=MxNxK,... [rounds=R] ["PARAMS" ...]`: each shape, each set against the
 * fastest cuBLAS of its input type, in rounds that alternate which side goes first. */
ptxjit_status cli_matmul_shapes_bench(ptxjit_context *context, cublas_peer *cublas,
                                      const char *list, int runs, int rounds,
                                      const char *const *sets, int set_count, int *all_ok);

#endif

/* cublas_peer.h — cuBLAS, loaded with dlopen, as the peer that benchmarks compare against. */
#ifndef PTXJIT_CLI_CUBLAS_PEER_H
#define PTXJIT_CLI_CUBLAS_PEER_H

#include "ptxjit.h"

typedef struct cublas_peer cublas_peer;

/* NULL (with the reason in *why) when libcublas cannot be loaded or initialized. */
cublas_peer *cublas_peer_open(const char **why);
void cublas_peer_close(cublas_peer *peer);
/* out (cols x rows, row-major) = transpose of in (rows x cols, row-major), fp32, through
 * cublasSgeam; 0 on success. */
int cublas_peer_transpose_f32(cublas_peer *peer, ptxjit_devptr out, ptxjit_devptr in,
                              size_t rows, size_t cols);

#endif

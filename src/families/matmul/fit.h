/* fit.h — the wgmma tile for the product's shape (fit.c). */
#ifndef PTXJIT_MATMUL_FIT_H
#define PTXJIT_MATMUL_FIT_H

#include "families/matmul/config.h"

typedef struct {
    int bm, bn;        /* the tile of C */
    const char *words; /* the parameters that ask for it */
} pj_matmul_fit_tile;

/* 1 when params names a parameter of the tile or its pipeline (mma, bm, consumers, stages,
 * sched, group, cluster, store): the request is then taken as written. */
int pj_matmul_fit_names_tile(const char *params);

/* The smaller tile predicted fastest for an m x n C on sms SMs, where it is predicted at most
 * 0.85 of the bm x bn tile's time; NULL to keep bm x bn. */
const pj_matmul_fit_tile *pj_matmul_fit_choose(uint64_t m, uint64_t n, int bm, int bn, int sms);

/* The op's kernel for m x n: *kernel and *config as the request gave them, replaced by the
 * kernel of the smaller tile (and *chosen set to it; else NULL) where the request is for a
 * wgmma variant without clusters, names no tile parameter, and pj_matmul_fit_choose picks one.
 * A template without the tile's parameters keeps the request's kernel. chosen may be NULL. */
ptxjit_status pj_matmul_fit(ptxjit_kernel **kernel, matmul_config *config,
                            const pj_matmul_fit_tile **chosen, ptxjit_context *context,
                            const char *params, size_t m, size_t n);

#endif

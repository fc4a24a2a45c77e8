/* fit.h — variant=online's threads for the row's length (fit.c). */
#ifndef PTXJIT_SOFTMAX_FIT_H
#define PTXJIT_SOFTMAX_FIT_H

#include "catalog/family.h"
#include "families/softmax/shape.h"

/* The words (tpb, tpr, items) for rows of cols elements read vec at a time, or NULL where the
 * defaults stay (rows over 4096 vectors). */
const char *pj_softmax_fit_choose(uint64_t cols, int vec);

/* The family's fit (pj_family.fit): pj_softmax_fit_choose's words for a variant=online request
 * that names none of tpb, tpr and items, on the problem rows, cols (sizes); NULL otherwise. */
const char *pj_softmax_fit_words(const pj_request *request, const char *params,
                                 const uint64_t *sizes, int sms, int llvm);

#endif

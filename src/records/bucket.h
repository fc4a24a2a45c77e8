/* bucket.h — the bucket of a tuning problem: which records answer it. */
#ifndef PTXJIT_RECORDS_BUCKET_H
#define PTXJIT_RECORDS_BUCKET_H

#include "internal.h"

/* The problem's pow2 bucket: "pow2: " then each word, an integer value rounded up to a power
 * of two ("rows=3000 cols=1000" -> "pow2: rows=4096 cols=1024"). */
ptxjit_status pj_tune_bucket(char **out, const char *problem);

#endif

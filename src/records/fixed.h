/* fixed.h — the fixed parameters of a tuning ("dtype=f32 tpb=auto backend=llvm"): read against
 * the family's schema, and written in the canonical form a record's key holds (sorted, without
 * the PARAM=auto words and backend=). Also the word walk and the parameter lookup that a
 * tuning space's text (tune/space.c) reads the same way. */
#ifndef PTXJIT_RECORDS_FIXED_H
#define PTXJIT_RECORDS_FIXED_H

#include "params/schema.h"

typedef struct {
    const pj_schema *schema;
    char **words;  /* "name=value", without the auto ones, sorted once read */
    int count;
    int *seen;     /* per parameter: fixed (1) or auto (2) */
} pj_tune_fixed;

/* PTXJIT_ERR_PARAM for a word that is not key=value, an unknown parameter or one given twice.
 * Free the set (also after a failure) with pj_tune_fixed_free. */
ptxjit_status pj_tune_fixed_read(pj_tune_fixed *set, const pj_schema *schema, const char *fixed);
void pj_tune_fixed_free(pj_tune_fixed *set);
/* The set's words, space-separated. Caller frees; NULL when out of memory. */
char *pj_tune_fixed_text(const pj_tune_fixed *set);
/* fixed read and written back: the form a record's key holds. Caller frees. */
ptxjit_status pj_tune_fixed_canonical(char **out, const pj_schema *schema, const char *fixed);

/* Calls visit(word, length) for each word of text between separators; stops at a failure. */
typedef ptxjit_status pj_tune_word_fn(void *user, const char *word, size_t length);
ptxjit_status pj_tune_each_word(const char *text, const char *separators, pj_tune_word_fn *visit,
                                void *user);
/* The index of the parameter named by word's first n bytes; PTXJIT_ERR_PARAM naming the
 * family's parameters when there is none (where: "the space", "a fixed parameter"). */
ptxjit_status pj_tune_param_named(int *index, const pj_schema *schema, const char *word, size_t n,
                                  const char *where);

#endif

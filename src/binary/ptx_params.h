/* ptx_params.h — an entry's parameter list read from PTX text: each parameter's size,
 * alignment and offset in the launch's parameter buffer, laid out in order by alignment.
 * Plain C over a string: no kernel, context or GPU, so that the tests can give it any PTX. */
#ifndef PTXJIT_PTX_PARAMS_H
#define PTXJIT_PTX_PARAMS_H

#include "internal.h"

typedef struct {
    size_t offset, size, align;
    char type[64]; /* as declared, for messages: ".u64", ".align 64 .b8[128]" */
} pj_ptx_param;

typedef struct pj_ptx_entry {
    pj_ptx_param *params;
    int count;
} pj_ptx_entry;

/* The parameters of `.entry NAME` in ptx, in order. PTXJIT_ERR_INVALID_ARGUMENT when ptx has
 * no such entry; PTXJIT_ERR_UNSUPPORTED, naming the declaration, for a parameter list this
 * reader does not understand. On failure *out is empty. */
ptxjit_status pj_ptx_entry_params(pj_ptx_entry *out, const char *ptx, const char *name);
/* Lays the parameters out again as if the buffer started at base in its constant bank: each
 * at the next address that is a multiple of its alignment, offsets still from the buffer's
 * start. The reader lays them out from 0; the driver's buffer starts where the cubin says
 * (0x210 on sm_90, a multiple of 16 only), which moves parameters aligned to more than 16. */
void pj_ptx_entry_layout(pj_ptx_entry *entry, size_t base);
void pj_ptx_entry_free(pj_ptx_entry *entry);
/* Frees an array of count entries' lists (a kernel's: one per entry) and the array; NULL is
 * nothing to free. */
void pj_ptx_entries_free(pj_ptx_entry *entries, int count);

#endif

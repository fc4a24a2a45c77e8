/* cubin_params.h — where the driver puts an entry's parameters, as the cubin records it:
 * ptxas leaves, in the entry's `.nv.info.NAME` section, one EIATTR_KPARAM_INFO record per
 * parameter (ordinal, offset, size) and an EIATTR_PARAM_CBANK record (where the parameters
 * start in their constant bank). The driver reads these records to place a launch's
 * arguments, so their offsets are the ones a packed parameter buffer must use. */
#ifndef PTXJIT_CUBIN_PARAMS_H
#define PTXJIT_CUBIN_PARAMS_H

#include "internal.h"

typedef struct {
    size_t offset, size;
} pj_cubin_param;

typedef struct {
    pj_cubin_param *params; /* by ordinal; NULL when the cubin has no records for the entry */
    int count;
    size_t bank_offset; /* where parameter 0 sits in its constant bank (0x210 on sm_90) */
    int has_bank;
} pj_cubin_param_list;

/* The records of entry name in the cubin. PTXJIT_ERR_UNSUPPORTED when cubin is no CUDA ELF,
 * has no `.nv.info.NAME` section, or its records are malformed or leave an ordinal out;
 * PTXJIT_ERR_OUT_OF_MEMORY. */
ptxjit_status pj_cubin_entry_params(pj_cubin_param_list *out, const void *cubin, size_t size,
                                    const char *name);
void pj_cubin_param_list_free(pj_cubin_param_list *entry);

#endif

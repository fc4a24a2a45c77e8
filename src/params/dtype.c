/* dtype.c — the names and C++ types of PJ_DTYPE_LIST's element types. */
#include "params/dtype.h"

static const struct {
    const char *name, *ctype;
} dtype_table[] = {
#define PJ_DTYPE_ROW(name, ctype, bytes) {#name, ctype},
    PJ_DTYPE_LIST(PJ_DTYPE_ROW)
#undef PJ_DTYPE_ROW
};

const char *pj_dtype_name(pj_dtype dtype) { return dtype_table[dtype].name; }
const char *pj_dtype_ctype(pj_dtype dtype) { return dtype_table[dtype].ctype; }

/* dtype.c — the element types of PJ_DTYPE_LIST by name, C++ type and size. */
#include <string.h>

#include "params/dtype.h"

static const struct {
    const char *name, *ctype;
    int bytes;
} dtype_table[] = {
#define PJ_DTYPE_ROW(name, ctype, bytes) {#name, ctype, bytes},
    PJ_DTYPE_LIST(PJ_DTYPE_ROW)
#undef PJ_DTYPE_ROW
};

int pj_dtype_from_name(const char *name)
{
    for (int i = 0; i < PJ_DTYPE_COUNT; i++)
        if (strcmp(dtype_table[i].name, name) == 0)
            return i;
    return -1;
}
const char *pj_dtype_name(pj_dtype dtype) { return dtype_table[dtype].name; }
const char *pj_dtype_ctype(pj_dtype dtype) { return dtype_table[dtype].ctype; }
int pj_dtype_bytes(pj_dtype dtype) { return dtype_table[dtype].bytes; }

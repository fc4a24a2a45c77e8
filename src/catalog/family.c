/* family.c — the table of families, made from list.h: the one place the library learns which
 * families exist. */
#include <string.h>

#include "catalog/family.h"

#define PJ_FAMILY_ENTRY(name) &pj_family_##name,
const pj_family *const pj_families[] = {PJ_FAMILY_LIST(PJ_FAMILY_ENTRY) NULL};
#undef PJ_FAMILY_ENTRY

const pj_family *pj_family_find(const char *name)
{
    for (int i = 0; name && pj_families[i]; i++)
        if (strcmp(pj_families[i]->name, name) == 0)
            return pj_families[i];
    return NULL;
}

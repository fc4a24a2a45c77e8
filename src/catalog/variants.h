/* variants.h — a family's variant list written once, as an X-macro X(name, ENUMERATOR), and
 * what is made of it: the enum, the "a,b,c" text the template's `variant` enum must equal, and
 * the lookup by name. Header-only and free of library state, so that the host op (libptxjit),
 * the IR generator (the LLVM plugin) and the tests read the same list. */
#ifndef PTXJIT_FAMILIES_VARIANTS_H
#define PTXJIT_FAMILIES_VARIANTS_H

#include <string.h>

#define PJ_VARIANT_ENUM(name, id) id,
#define PJ_VARIANT_TEXT(name, id) "," #name
/* "a,b,c" from a variant X-macro LIST. */
#define PJ_VARIANT_LIST_TEXT(LIST) (&(LIST(PJ_VARIANT_TEXT))[1])

/* The position of name in the comma-separated list, or -1. */
static inline int pj_variant_index(const char *list, const char *name)
{
    size_t length = strlen(name);
    int index = 0;
    for (const char *s = list; *s; index++) {
        size_t n = strcspn(s, ",");
        if (n == length && strncmp(s, name, n) == 0)
            return index;
        s += n + (s[n] == ',');
    }
    return -1;
}

#endif

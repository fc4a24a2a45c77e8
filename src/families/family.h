/* family.h — a kernel family as the library sees it: one descriptor per family, defined in
 * src/families/NAME/op.c as pj_family_NAME, and the table of them all (family.c), built from
 * list.h. Everything else that must agree about a family — the template's variant enum, the
 * LLVM generator's version and variants — is checked against this descriptor by the tests or
 * at plugin load, so the places cannot drift apart silently. */
#ifndef PTXJIT_FAMILIES_FAMILY_H
#define PTXJIT_FAMILIES_FAMILY_H

#include "families/list.h"
#include "params/schema.h"

/* A block of the family's main entry as a request launches it. */
typedef struct {
    unsigned threads;      /* per block */
    unsigned shared_bytes; /* dynamic shared memory per block */
} pj_geometry;

typedef struct pj_family {
    const char *name;          /* the template's family name; its file is templates/NAME.cu */
    const char *variants;      /* the template's `variant` enum, "a,b,c" ("": no such param) */
    int llvm_version;          /* the LLVM IR generator's version, part of llvm keys */
    const char *llvm_variants; /* the variants the generator builds, "a,b" */
    /* Threads and dynamic shared memory per block of the request's main entry. */
    ptxjit_status (*geometry)(pj_geometry *out, const pj_request *request);
    /* Parameter sets worth timing, NULL-terminated: the CLI's bench sweeps time them. */
    const char *const *bench_sets;
} pj_family;

#define PJ_FAMILY_DECLARE(name) extern const pj_family pj_family_##name;
PJ_FAMILY_LIST(PJ_FAMILY_DECLARE)
#undef PJ_FAMILY_DECLARE

/* Every family, in list order, NULL-terminated. */
extern const pj_family *const pj_families[];
/* The descriptor of a built-in family, or NULL. */
const pj_family *pj_family_find(const char *name);

#endif

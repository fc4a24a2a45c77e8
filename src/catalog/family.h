/* family.h — a kernel family as the library sees it: one descriptor per family, defined in
 * src/families/NAME/op.c as pj_family_NAME, and the table of them all (family.c), built from
 * list.h. Everything else that must agree about a family — the template's variant enum, the
 * LLVM generator's version and variants — is checked against this descriptor by the tests or
 * at plugin load, so the places cannot drift apart silently. */
#ifndef PTXJIT_FAMILIES_FAMILY_H
#define PTXJIT_FAMILIES_FAMILY_H

#include "catalog/list.h"
#include "catalog/reader.h"
#include "params/schema.h"

/* A block of the family's main entry as a request launches it. */
typedef struct {
    unsigned threads;      /* per block */
    unsigned shared_bytes; /* dynamic shared memory per block */
} pj_geometry;

/* What ptxjit_tune needs of a built-in family to run its op on a problem (tune/tuner.c): the
 * problem's words, random inputs of its shape on the GPU, one run of a candidate, and the
 * check of a candidate's result against the reference configuration's. */
typedef struct {
    /* PTXJIT_OK when request can run the problem of sizes (problem_names' values) at all
     * (checked before compiling, so a point that cannot, such as a row longer than
     * variant=online holds, is pruned); else why not. */
    ptxjit_status (*admits)(const pj_request *request, const uint64_t *sizes);
    /* Inputs of the problem for the reference's dtype (fixed-seed random values), their
     * output buffers, and room for the reference's output. */
    ptxjit_status (*prepare)(void **state, ptxjit_context *context, const char *problem,
                             const pj_request *reference);
    /* One run of kernel's op on stream (asynchronous). */
    ptxjit_status (*run)(void *state, ptxjit_kernel *kernel, void *stream);
    /* Before a checked run: output buffers poisoned (NaN), so that an element left unwritten
     * fails the check. */
    ptxjit_status (*poison)(void *state);
    /* After a run has finished: keep its output as the reference (reference = 1), or compare
     * with the reference: PTXJIT_ERR_CUDA naming the first mismatch. */
    ptxjit_status (*check)(void *state, ptxjit_kernel *kernel, int reference);
    void (*release)(void *state);
    int memory_bound; /* L2 flushed before each timed run */
    const char *const *problem_names; /* the problem's words, in order, NULL-terminated */
} pj_family_tune;

typedef struct pj_family {
    const char *name;          /* the template's family name; its file is templates/NAME.cu */
    const char *variants;      /* the template's `variant` enum, "a,b,c" ("": no such param) */
    int llvm_version;          /* the LLVM IR generator's version, part of llvm keys */
    const char *llvm_variants; /* the variants the generator builds, "a,b" */
    /* Threads and dynamic shared memory per block of the request's main entry. */
    ptxjit_status (*geometry)(pj_geometry *out, const pj_request *request);
    /* Parameter sets worth timing, NULL-terminated: the CLI's bench sweeps time them. */
    const char *const *bench_sets;
    /* How ptxjit_tune runs the family's op (NULL: only with the caller's run callback). */
    const pj_family_tune *tune;
} pj_family;

#define PJ_FAMILY_DECLARE(name) extern const pj_family pj_family_##name;
PJ_FAMILY_LIST(PJ_FAMILY_DECLARE)
#undef PJ_FAMILY_DECLARE

/* The request as a family's decoder reads it (catalog/reader.h; request_reader.c). */
pj_param_reader pj_request_reader(const pj_request *request);

/* Every family, in list order, NULL-terminated. */
extern const pj_family *const pj_families[];
/* The descriptor of a built-in family, or NULL. */
const pj_family *pj_family_find(const char *name);

#endif

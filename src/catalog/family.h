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

/* How a tuning fills and compares a buffer's elements (tune/compare.cu's kinds). */
typedef enum {
    PJ_TUNE_BITS = 0, /* 4-byte words, exactly */
    PJ_TUNE_F32 = 1,
    PJ_TUNE_F16 = 2,
    PJ_TUNE_BF16 = 3
} pj_tune_kind;

/* What a buffer of a tuning holds. */
typedef enum {
    PJ_TUNE_INPUT,  /* random values from seed (floats uniform in [-1, 1)), made once */
    PJ_TUNE_OUTPUT, /* poisoned before each checked run, so that an element left unwritten
                       fails; the reference configuration's result kept, each candidate's
                       compared with it */
    PJ_TUNE_ZEROS   /* zeros, made once: an input whose cost matters, not its values */
} pj_tune_role;

/* One device buffer of a family's problem, as the tuning scaffold (tune/scaffold.c) makes,
 * fills, poisons and compares it. */
typedef struct pj_tune_buffer pj_tune_buffer;
struct pj_tune_buffer {
    pj_tune_role role;
    size_t bytes;      /* 0: no buffer (its address is 0) */
    pj_tune_kind kind; /* its elements, as the GPU's fill and compare read them */
    uint64_t count;    /* elements of kind */
    unsigned seed;     /* INPUT: the fill's */
    /* INPUT of a type the GPU's fill does not make (fp8): count values made on the host from
     * seed, each stored as type by store. */
    void (*store)(void *host, pj_dtype type, size_t index, float value);
    pj_dtype type;
    /* OUTPUT: an element of a candidate passes within rel * |want| + abs of the reference's
     * (floats; NaN never does) or equal to it (PJ_TUNE_BITS); what names the output in a
     * mismatch. */
    double rel, abs;
    const char *what;
    int read;          /* OUTPUT the run also reads (beta=scaled): zeros before each checked
                          run, not NaN */
    /* OUTPUT judged on the host instead (a scalar): PTXJIT_OK, or PTXJIT_ERR_CUDA saying how
     * got differs from want. */
    ptxjit_status (*judge)(const pj_tune_buffer *buffer, const void *got, const void *want,
                           const uint64_t *sizes);
};

#define PJ_TUNE_MAX_BUFFERS 4

enum { PJ_TUNE_EMPTY_ALWAYS = 1, PJ_TUNE_EMPTY_IF_FITS = 2 };

/* What ptxjit_tune needs of a built-in family to run its op on a problem (tune/tuner.c): the
 * problem's words, its buffers, one run of a candidate; the scaffold does the rest (random
 * inputs, poisoned outputs, the reference configuration's result kept and every candidate's
 * compared with it). */
typedef struct {
    const char *const *problem_names; /* the problem's words, in order, NULL-terminated */
    /* L2 emptied before each timed run: PJ_TUNE_EMPTY_ALWAYS, or PJ_TUNE_EMPTY_IF_FITS where
     * the problem's buffers fit in twice the L2 (tune/runner.c); 0 never. */
    int empty_l2;
    /* The pick rule's least tie band (tune/pick.c; taken within 1% to 5%, so 0 means 1%):
     * where candidates' times move against each other between tunings by more than 1%, a
     * narrower band picks by noise. */
    double tie_floor;
    /* PTXJIT_OK when request can run the problem of sizes (problem_names' values) at all
     * (checked before compiling, so a point that cannot, such as a row longer than
     * variant=online holds, is pruned); else why not. */
    ptxjit_status (*admits)(const pj_request *request, const uint64_t *sizes);
    /* The problem's buffers for the reference configuration: *count of them in out (at most
     * PJ_TUNE_MAX_BUFFERS), in the order run takes their addresses. */
    ptxjit_status (*buffers)(pj_tune_buffer *out, int *count, const pj_request *reference,
                             const uint64_t *sizes);
    /* One run of kernel's op on the buffers (asynchronous). */
    ptxjit_status (*run)(ptxjit_context *context, ptxjit_kernel *kernel,
                         const ptxjit_devptr *buffers, const uint64_t *sizes, void *stream);
    /* The element types of request's results, as a refusal names them ("dtype f32"): a
     * candidate's result is compared only with a reference's of the same types. */
    ptxjit_status (*types)(char out[64], const pj_request *request);
    const char *fix_types; /* what to fix when they differ: "dtype (a fixed parameter)" */
    /* A lower bound on one run's time in ms of request on the problem of sizes, on a GPU of
     * sms SMs whose clock is at most clock_khz: no code of that configuration runs faster,
     * because the bound counts only work every such kernel must do at the hardware's peak
     * (matmul: its tiles' multiply-adds on the busiest SM). The tuner drops a candidate whose
     * bound is above a time another candidate measured (docs/TUNING.md, "Pruning"). 0: no
     * bound known. NULL: the family has no such model. */
    double (*bound_ms)(const pj_request *request, const uint64_t *sizes, int sms, int clock_khz);
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
    /* Words a request that leaves its variant to the defaults takes, the first that can run
     * it, where the defaults cannot run a problem's shape (tune->admits says which can;
     * request/plan.h), NULL-terminated; NULL: none. */
    const char *const *shape_fallbacks;
    /* Words that fit a request to its problem on a GPU of sms SMs where the request leaves
     * them to the defaults (the matmul's tile for its shape; request/plan.h), or NULL; params
     * is the request as written, request the same read; llvm: 1 where it compiles through the
     * llvm backend. The words live as long as the library. NULL: the family fits nothing. */
    const char *(*fit)(const pj_request *request, const char *params, const uint64_t *sizes,
                       int sms, int llvm);
    /* What the op does for the problem beyond launching the request's kernel, in a sentence
     * for a plan (matmul: the operands it stages), or "" (buffers taken as aligned). NULL:
     * nothing. */
    void (*explain)(char *out, size_t size, const pj_request *request, const uint64_t *sizes);
} pj_family;

#define PJ_FAMILY_DECLARE(name) extern const pj_family pj_family_##name;
PJ_FAMILY_LIST(PJ_FAMILY_DECLARE)
#undef PJ_FAMILY_DECLARE

/* The request as a family's decoder reads it (catalog/reader.h; request_reader.c). */
pj_param_reader pj_request_reader(const pj_request *request);
/* The error a family op gives for a request its decoder refused: the template of the family's
 * name (a user's) lacks a parameter the op needs, or has a value it does not know
 * ("variant"). */
ptxjit_status pj_decode_refusal(const pj_decode_result *decoded, const pj_request *request);

/* Every family, in list order, NULL-terminated. */
extern const pj_family *const pj_families[];
/* The descriptor of a built-in family, or NULL. */
const pj_family *pj_family_find(const char *name);

#endif

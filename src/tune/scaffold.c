/* scaffold.c — a built-in family's problem on the GPU for a tuning: its buffers as the family
 * lists them, made, filled, poisoned, kept and compared here, so that a family writes none of
 * it. Runs in the tuning's CUDA context, on the default stream. */
#include <stdlib.h>
#include <string.h>

#include "records/problem.h"
#include "tune/check.h"
#include "tune/scaffold.h"

typedef struct {
    pj_tune_buffer spec;
    ptxjit_devptr reference; /* OUTPUT compared on the GPU: the reference configuration's */
    void *want, *got;        /* OUTPUT judged on the host: the reference's, a candidate's */
} slot;

struct pj_tune_scaffold {
    ptxjit_context *context;
    const pj_family *family;
    pj_tune_checker *checker;
    uint64_t sizes[PJ_TUNE_MAX_SIZES];
    slot slots[PJ_TUNE_MAX_BUFFERS];
    ptxjit_devptr addresses[PJ_TUNE_MAX_BUFFERS]; /* what run takes */
    int count;
    char types[64]; /* the reference's result types */
};

/* bytes of device memory (none for 0 bytes: the address stays 0). */
static ptxjit_status device_alloc(ptxjit_devptr *out, ptxjit_context *context, size_t bytes)
{
    CUdeviceptr data = 0;
    ptxjit_status status =
        bytes ? PJ_CU(context->driver->cuMemAlloc(&data, bytes), "cuMemAlloc") : PTXJIT_OK;
    *out = data;
    return status;
}

static void device_free(ptxjit_context *context, ptxjit_devptr data)
{
    if (data)
        context->driver->cuMemFree(data);
}

static ptxjit_status memset_async(ptxjit_context *context, ptxjit_devptr data, unsigned char byte,
                                  size_t bytes)
{
    return PJ_CU(context->driver->cuMemsetD8Async(data, byte, bytes, NULL), "cuMemsetD8Async");
}

/* A buffer, and for an output the room for the reference's result. */
static ptxjit_status make_slot(pj_tune_scaffold *s, int i)
{
    slot *b = &s->slots[i];
    ptxjit_status status = device_alloc(&s->addresses[i], s->context, b->spec.bytes);
    if (status != PTXJIT_OK || b->spec.role != PJ_TUNE_OUTPUT)
        return status;
    if (!b->spec.judge)
        return device_alloc(&b->reference, s->context, b->spec.bytes);
    b->want = calloc(1, b->spec.bytes ? b->spec.bytes : 1);
    b->got = calloc(1, b->spec.bytes ? b->spec.bytes : 1);
    return b->want && b->got ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* A type the GPU's fill does not make: uniform in [-1, 1) from seed, made on the host. */
static ptxjit_status fill_on_host(pj_tune_scaffold *s, const slot *b, ptxjit_devptr data)
{
    unsigned char *host = malloc(b->spec.bytes ? b->spec.bytes : 1);
    if (!host)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    uint64_t state = b->spec.seed * 0x9e3779b97f4a7c15ull + 1;
    for (size_t i = 0; i < b->spec.count; i++) {
        state = state * 6364136223846793005ull + 1442695040888963407ull;
        b->spec.store(host, b->spec.type, i, (float)((double)(state >> 11) * 0x1p-52 - 1.0));
    }
    ptxjit_status status = ptxjit_copy_to_device(s->context, data, host, b->spec.bytes);
    free(host);
    return status;
}

static ptxjit_status fill_slot(pj_tune_scaffold *s, int i)
{
    const slot *b = &s->slots[i];
    if (!b->spec.bytes) /* a buffer the configuration does without */
        return PTXJIT_OK;
    if (b->spec.role == PJ_TUNE_ZEROS)
        return memset_async(s->context, s->addresses[i], 0, b->spec.bytes);
    if (b->spec.role != PJ_TUNE_INPUT)
        return PTXJIT_OK;
    if (b->spec.store)
        return fill_on_host(s, b, s->addresses[i]);
    return pj_tune_fill(s->checker, s->addresses[i], b->spec.count, b->spec.kind, b->spec.seed);
}

/* The family's buffers made and filled; the types of the reference's results. */
static ptxjit_status prepare(pj_tune_scaffold *s, const pj_request *reference)
{
    const pj_family_tune *tune = s->family->tune;
    pj_tune_buffer specs[PJ_TUNE_MAX_BUFFERS];
    ptxjit_status status = tune->buffers(specs, &s->count, reference, s->sizes);
    for (int i = 0; status == PTXJIT_OK && i < s->count; i++)
        s->slots[i].spec = specs[i];
    if (status == PTXJIT_OK)
        status = tune->types(s->types, reference);
    if (status == PTXJIT_OK)
        status = pj_tune_checker_open(&s->checker, s->context);
    for (int i = 0; status == PTXJIT_OK && i < s->count; i++)
        status = make_slot(s, i);
    for (int i = 0; status == PTXJIT_OK && i < s->count; i++)
        status = fill_slot(s, i);
    return status;
}

ptxjit_status pj_tune_scaffold_open(pj_tune_scaffold **out, ptxjit_context *context,
                                    const pj_family *family, const uint64_t *sizes,
                                    const pj_request *reference)
{
    pj_tune_scaffold *s = calloc(1, sizeof *s);
    if (!s)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    s->context = context;
    s->family = family;
    for (int i = 0; family->tune->problem_names[i]; i++)
        s->sizes[i] = sizes[i];
    ptxjit_status status = prepare(s, reference);
    if (status != PTXJIT_OK) {
        pj_tune_scaffold_close(s);
        return status;
    }
    *out = s;
    return PTXJIT_OK;
}

ptxjit_status pj_tune_scaffold_run(pj_tune_scaffold *s, ptxjit_kernel *kernel, void *stream)
{
    return s->family->tune->run(s->context, kernel, s->addresses, s->sizes, stream);
}

ptxjit_status pj_tune_scaffold_poison(pj_tune_scaffold *s)
{
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; status == PTXJIT_OK && i < s->count; i++)
        if (s->slots[i].spec.role == PJ_TUNE_OUTPUT)
            /* 0xff in every byte is NaN in every float type; beta 0 would keep NaN NaN */
            status = memset_async(s->context, s->addresses[i], s->slots[i].spec.read ? 0 : 0xff,
                                  s->slots[i].spec.bytes);
    return status;
}

/* A candidate's output against the reference's, or (reference) kept as it. */
static ptxjit_status check_slot(pj_tune_scaffold *s, int i, int reference)
{
    slot *b = &s->slots[i];
    const pj_driver *d = s->context->driver;
    if (b->spec.judge) {
        ptxjit_status status = PJ_CU(d->cuMemcpyDtoH(reference ? b->want : b->got,
                                                     s->addresses[i], b->spec.bytes),
                                     "cuMemcpyDtoH");
        return status != PTXJIT_OK || reference
                   ? status
                   : b->spec.judge(&b->spec, b->got, b->want, s->sizes);
    }
    if (reference)
        return PJ_CU(d->cuMemcpyDtoDAsync(b->reference, s->addresses[i], b->spec.bytes, NULL),
                     "cuMemcpyDtoDAsync");
    return pj_tune_compare(s->checker, s->addresses[i], b->reference, b->spec.count,
                           b->spec.kind, b->spec.rel, b->spec.abs, b->spec.what);
}

/* The candidate's results are of the reference's types, or it cannot be checked. */
static ptxjit_status check_types(pj_tune_scaffold *s, ptxjit_kernel *kernel)
{
    char types[64];
    ptxjit_status status = s->family->tune->types(types, &kernel->request);
    if (status != PTXJIT_OK || strcmp(types, s->types) == 0)
        return status;
    return pj_error(PTXJIT_ERR_PARAM, "%s: a candidate of %s cannot be checked against a "
                    "reference of %s; fix %s", s->family->name, types, s->types,
                    s->family->tune->fix_types);
}

ptxjit_status pj_tune_scaffold_check(pj_tune_scaffold *s, ptxjit_kernel *kernel, int reference)
{
    ptxjit_status status = check_types(s, kernel);
    for (int i = 0; status == PTXJIT_OK && i < s->count; i++)
        if (s->slots[i].spec.role == PJ_TUNE_OUTPUT)
            status = check_slot(s, i, reference);
    return status;
}

size_t pj_tune_scaffold_bytes(const pj_tune_scaffold *scaffold)
{
    size_t bytes = 0;
    for (int i = 0; i < scaffold->count; i++)
        bytes += scaffold->slots[i].spec.bytes;
    return bytes;
}

pj_tune_checker *pj_tune_scaffold_checker(pj_tune_scaffold *s)
{
    return s->checker;
}

void pj_tune_scaffold_close(pj_tune_scaffold *s)
{
    if (!s)
        return;
    for (int i = 0; i < s->count; i++) {
        device_free(s->context, s->addresses[i]);
        device_free(s->context, s->slots[i].reference);
        free(s->slots[i].want);
        free(s->slots[i].got);
    }
    pj_tune_checker_close(s->checker);
    free(s);
}

/* fit.c — variant=online's threads for the row's length, where the request leaves them to the
 * defaults. The defaults (tpr 128 for f32, 64 for 16-bit types; items 8) hold rows of up to
 * 4096 elements, but a short row then leaves most of a thread's registers unused and a block
 * of many rows merging through shared memory: bf16 rows of 1024 ran at 84.6% of the device
 * copy with them and at 99.9–100.1% with tpb=128 tpr=128 items=1 (docs/PERFORMANCE.md,
 * softmax, H200). The bests of the family's bench sets at 1024, 4096 and 16384 (f32 and
 * bf16) all give each thread one to four 16-byte vectors of the row: so a row of `chunks`
 * vectors gets one vector a thread up to 64 of them, two up to 1024, four up to 4096. Rows of
 * 65 to 128 vectors took one a thread on 128 threads until the H200 (2026-11-28 16:10) ran bf16
 * rows of 1024 at 84.4% of the copy that way and at 99.7% with two a thread on 64 (98.6% with
 * tpb=256); the H100 had run the first at 99.8%. */
#include <string.h>

#include "families/softmax/fit.h"
#include "request/plan.h"

typedef struct {
    int tpr, items;
    const char *words;
} softmax_fit;

/* Whole blocks of at least 128 threads: rows of 32 or 64 threads share a block. */
static const softmax_fit fits[] = {
    {32, 1, "tpb=128 tpr=32 items=1"},     {64, 1, "tpb=128 tpr=64 items=1"},
    {64, 2, "tpb=128 tpr=64 items=2"},     {128, 2, "tpb=128 tpr=128 items=2"},
    {256, 2, "tpb=256 tpr=256 items=2"},   {512, 2, "tpb=512 tpr=512 items=2"},
    {512, 4, "tpb=512 tpr=512 items=4"},   {1024, 4, "tpb=1024 tpr=1024 items=4"},
};

static uint64_t pow2_at_least(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
        p *= 2;
    return p;
}

const char *pj_softmax_fit_choose(uint64_t cols, int vec)
{
    if (!cols || vec < 1)
        return NULL;
    const uint64_t chunks = (cols + (uint64_t)vec - 1) / (uint64_t)vec;
    const int items = chunks <= 64 ? 1 : chunks <= 1024 ? 2 : chunks <= 4096 ? 4 : 0;
    if (!items)
        return NULL; /* the defaults' longest rows, or beyond: as asked */
    uint64_t tpr = pow2_at_least(chunks) / (uint64_t)items;
    if (tpr < 32)
        tpr = 32;
    for (size_t i = 0; i < sizeof fits / sizeof fits[0]; i++)
        if ((uint64_t)fits[i].tpr == tpr && fits[i].items == items)
            return fits[i].words;
    return NULL;
}

const char *pj_softmax_fit_words(const pj_request *request, const char *params,
                                 const uint64_t *sizes, int sms, int llvm)
{
    (void)sms;
    (void)llvm;
    static const char *const named[] = {"tpb", "tpr", "items"};
    /* Decoded here, not through op.c (which names this fit in the family's descriptor). */
    const pj_param_reader reader = pj_request_reader(request);
    softmax_config config;
    if (pj_softmax_decode(&config, &reader).code != PJ_DECODED)
        return NULL; /* a template of its own: the op says what it lacks */
    if (config.shape.variant != SOFTMAX_ONLINE)
        return NULL;
    for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
        if (pj_plan_names_word(params, named[i]))
            return NULL;
    return pj_softmax_fit_choose(sizes[1], config.shape.vec);
}

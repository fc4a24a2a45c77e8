/* front.c — see front.h. Each thread has PJ_FRONT_SLOTS slots of two cache lines, chosen by
 * the address of the caller's params text (a call site passes the same one each time); the
 * texts are compared in full, so the address only spreads requests over the slots. */
#include <stddef.h>
#include <string.h>

#include "front.h"

#define PJ_FRONT_SLOTS 4

typedef struct {
    _Alignas(64) const ptxjit_context *context; /* NULL: empty */
    uint64_t epoch;
    ptxjit_kernel *kernel;
    unsigned char params_at, options_at; /* where those start in text */
    char text[102]; /* family, params and options, each with its NUL */
} front_slot;

_Static_assert(sizeof(front_slot) == 128, "a slot is two cache lines");

static _Thread_local front_slot slots[PJ_FRONT_SLOTS];
static uint64_t epochs;

uint64_t pj_front_new_epoch(void) { return __atomic_add_fetch(&epochs, 1, __ATOMIC_RELAXED); }

static front_slot *slot_of(const char *params)
{
    return &slots[((uintptr_t)params >> 4) % PJ_FRONT_SLOTS];
}

ptxjit_kernel *pj_front_find(const ptxjit_context *context, uint64_t epoch, const char *family,
                             const char *params, const char *options)
{
    const front_slot *slot = slot_of(params);
    if (slot->context != context || slot->epoch != epoch)
        return NULL;
    if (strcmp(slot->text + slot->params_at, params) != 0 || strcmp(slot->text, family) != 0 ||
        strcmp(slot->text + slot->options_at, options) != 0)
        return NULL;
    return slot->kernel;
}

void pj_front_note(const ptxjit_context *context, uint64_t epoch, const char *family,
                   const char *params, const char *options, ptxjit_kernel *kernel)
{
    size_t f = strlen(family) + 1, p = strlen(params) + 1, o = strlen(options) + 1;
    front_slot *slot = slot_of(params);
    if (f + p + o > sizeof slot->text)
        return;
    memcpy(slot->text, family, f);
    memcpy(slot->text + f, params, p);
    memcpy(slot->text + f + p, options, o);
    slot->params_at = (unsigned char)f;
    slot->options_at = (unsigned char)(f + p);
    slot->context = context;
    slot->epoch = epoch;
    slot->kernel = kernel;
}

/* kernel_info.c — what a kernel tells of itself once made: its family, canonical parameters,
 * key, PTX, log, compile options, source, cubin and entries, an entry's index by name, and
 * where its compile's time went. */
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "request/route.h"

const char *ptxjit_kernel_family(const ptxjit_kernel *k) { return k ? k->schema->family : NULL; }
const char *ptxjit_kernel_params(const ptxjit_kernel *k) { return k ? k->canonical : NULL; }
const char *ptxjit_kernel_key(const ptxjit_kernel *k) { return k ? k->key_hex : NULL; }
const char *ptxjit_kernel_ptx(const ptxjit_kernel *k) { return k ? k->artifact.ptx : NULL; }
const char *ptxjit_kernel_log(const ptxjit_kernel *k) { return k ? k->artifact.log : NULL; }

const char *ptxjit_kernel_compile_options(const ptxjit_kernel *k)
{
    return k ? k->compile_options.canonical : NULL;
}

/* Made on the first call, outside the lock (llvm: the generator runs again, to print its IR),
 * and kept with the kernel. */
const char *ptxjit_kernel_source(const ptxjit_kernel *k)
{
    if (!k)
        return NULL;
    ptxjit_kernel *kernel = (ptxjit_kernel *)k; /* a cache of the text, not a change */
    ptxjit_context *context = kernel->context;
    pthread_mutex_lock(&context->lock);
    const char *source = kernel->source;
    pthread_mutex_unlock(&context->lock);
    if (source)
        return source;
    char *made = NULL;
    if (kernel->route->source(&made, kernel) != PTXJIT_OK)
        return NULL;
    pthread_mutex_lock(&context->lock);
    if (!kernel->source) {
        kernel->source = made;
        made = NULL;
    }
    source = kernel->source;
    pthread_mutex_unlock(&context->lock);
    free(made);
    return source;
}

int ptxjit_kernel_entry_count(const ptxjit_kernel *k) { return k ? k->artifact.entry_count : 0; }

const void *ptxjit_kernel_cubin(const ptxjit_kernel *kernel, size_t *size)
{
    if (size)
        *size = kernel ? kernel->artifact.cubin_size : 0;
    return kernel ? kernel->artifact.cubin : NULL;
}

const char *ptxjit_kernel_entry_name(const ptxjit_kernel *kernel, int index)
{
    if (!kernel || index < 0 || index >= kernel->artifact.entry_count)
        return NULL;
    return kernel->artifact.entries[index];
}

ptxjit_status pj_kernel_entry_index(int *out, const ptxjit_kernel *kernel, const char *entry)
{
    *out = 0;
    if (!entry)
        return PTXJIT_OK;
    for (int i = 0; i < kernel->artifact.entry_count; i++)
        if (strcmp(kernel->artifact.entries[i], entry) == 0) {
            *out = i;
            return PTXJIT_OK;
        }
    pj_strbuf names;
    pj_sb_init(&names);
    for (int i = 0; i < kernel->artifact.entry_count; i++)
        pj_sb_appendf(&names, "%s%s", i ? ", " : "", kernel->artifact.entries[i]);
    ptxjit_status status = pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                                    "%s (%s) has no entry '%s'; its entries: %s (or NULL for "
                                    "the first)",
                                    kernel->schema->family, kernel->canonical, entry,
                                    names.data ? names.data : "none");
    pj_sb_free(&names);
    return status;
}

const char *pj_kernel_entry_name(const ptxjit_kernel *kernel, const char *entry)
{
    return entry ? entry : kernel->artifact.entry_count ? kernel->artifact.entries[0] : "?";
}

void pj_kernel_stage_ms(double out[4], const ptxjit_kernel *kernel)
{
    const pj_stages *s = &kernel->stages;
    out[0] = s->generate_ms;
    out[1] = s->optimize_ms;
    out[2] = s->emit_ms;
    out[3] = s->compile_ms;
}

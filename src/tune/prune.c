/* prune.c — what a compiled candidate tells before it runs (its cubin's registers and shared
 * memory, its compile log's spills, a built-in family's launch geometry), and the rules that
 * drop it without GPU time. Each rule is safe: it drops only a candidate that cannot launch, or
 * one that cannot be the fastest (docs/TUNING.md, "Pruning", says why each holds). */
#include <stdio.h>
#include <string.h>

#include "binary/cubin.h"
#include "tune/tune.h"

pj_tune_bound_fn *pj_tune_bound_override;

/* Spill bytes (stores and loads) per thread over every entry; -1 when the log does not say
 * for one of them. */
static int spill_bytes(const ptxjit_kernel *kernel)
{
    int total = 0;
    for (int i = 0; i < kernel->artifact.entry_count; i++) {
        ptxjit_kernel_resources r;
        if (ptxjit_kernel_resources_static(&r, kernel, kernel->artifact.entries[i]) !=
                PTXJIT_OK ||
            r.spill_stores < 0 || r.spill_loads < 0)
            return -1;
        total += r.spill_stores + r.spill_loads;
    }
    return total;
}

ptxjit_status pj_tune_facts_read(pj_tune_facts *out, const ptxjit_kernel *kernel,
                                 const pj_family *builtin, const pj_tune_limits *limits)
{
    memset(out, 0, sizeof *out);
    const pj_artifact *a = &kernel->artifact;
    if (a->entry_count < 1)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "%s (%s) has no entry",
                        kernel->schema->family, kernel->canonical);
    pj_cubin_entry entry;
    ptxjit_status status = pj_cubin_entry_read(&entry, a->cubin, a->cubin_size, a->entries[0]);
    if (status != PTXJIT_OK)
        return status;
    out->registers = entry.registers;
    out->static_shared = entry.shared_bytes;
    out->max_threads = pj_cubin_max_threads_for(
        &entry, limits->block_registers > 0 ? limits->block_registers : PJ_CUBIN_BLOCK_REGISTERS);
    out->spill_bytes = spill_bytes(kernel);
    if (builtin && builtin->geometry) {
        pj_geometry g;
        if (builtin->geometry(&g, &kernel->request) == PTXJIT_OK) {
            out->threads = g.threads;
            out->dynamic_shared = g.shared_bytes;
        }
    }
    return PTXJIT_OK;
}

/* Registers a block of threads takes on an SM: the warps' registers, each warp's rounded up
 * to 256 (as pj_cubin_max_threads counts them). */
static long long block_registers(const pj_tune_facts *f)
{
    long long per_warp = ((long long)f->registers * 32 + 255) / 256 * 256;
    return per_warp * ((f->threads + 31) / 32);
}

int pj_tune_launchable(const pj_tune_facts *f, const pj_tune_limits *l, char *why, size_t size)
{
    if (!f->threads) /* a user family's launch is its own: nothing to compare */
        return 1;
    if ((int)f->threads > f->max_threads) {
        snprintf(why, size, "cannot launch: a block of %u threads at %d registers each needs "
                 "more registers than a block may have (at most %d threads at that count)",
                 f->threads, f->registers, f->max_threads);
        return 0;
    }
    long long shared = (long long)f->static_shared + f->dynamic_shared;
    if (l->block_shared > 0 && shared > l->block_shared) {
        snprintf(why, size, "cannot launch: a block needs %lld bytes of shared memory (%d "
                 "static, %u dynamic), the device allows %d", shared, f->static_shared,
                 f->dynamic_shared, l->block_shared);
        return 0;
    }
    if (l->sm_shared > 0 && shared + l->reserved_shared > l->sm_shared) {
        snprintf(why, size, "cannot launch: a block needs %lld bytes of shared memory and the "
                 "system's %d, more than an SM's %d", shared, l->reserved_shared, l->sm_shared);
        return 0;
    }
    if (l->sm_registers > 0 && f->registers > 0 && block_registers(f) > l->sm_registers) {
        snprintf(why, size, "cannot launch: a block of %u threads at %d registers takes %lld "
                 "registers, more than an SM's %d", f->threads, f->registers,
                 block_registers(f), l->sm_registers);
        return 0;
    }
    if (l->sm_threads > 0 && (int)f->threads > l->sm_threads) {
        snprintf(why, size, "cannot launch: a block of %u threads, an SM holds %d", f->threads,
                 l->sm_threads);
        return 0;
    }
    return 1;
}

double pj_tune_bound(const pj_family *builtin, const ptxjit_kernel *kernel,
                     const uint64_t *sizes, const pj_tune_limits *limits)
{
    pj_tune_bound_fn *bound = pj_tune_bound_override;
    if (!bound && builtin && builtin->tune)
        bound = builtin->tune->bound_ms;
    if (!bound || limits->sms <= 0 || limits->clock_khz <= 0)
        return 0;
    double ms = bound(&kernel->request, sizes, limits->sms, limits->clock_khz);
    return ms > 0 ? ms : 0;
}

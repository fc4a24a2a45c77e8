/* cache_calls.c — the public calls on a context's disk cache: its directory, statistics (the
 * remote tier's counters with them), clearing, trimming, and bundles (cache/bundle.h). */
#include <string.h>

#include "cache/bundle.h"
#include "cache/copier.h"
#include "context.h"
#include "remote/remote.h"

const char *ptxjit_cache_dir(const ptxjit_context *context)
{
    return context && context->disk ? pj_disk_cache_dir(context->disk) : NULL;
}

/* The context's disk cache is there, with the remote hits that the copier still holds
 * written to it: they are the cache's too. Else PTXJIT_ERR_CACHE, its message ending with
 * hint. */
static ptxjit_status disk_cache(ptxjit_context *context, const char *hint)
{
    if (!context->disk)
        return pj_error(PTXJIT_ERR_CACHE,
                        "the disk cache is off for this context (disabled, or its directory "
                        "was unusable: see the warning printed at open)%s",
                        hint);
    pj_copier_flush(context->copier);
    return PTXJIT_OK;
}

static ptxjit_status disk(ptxjit_context *context)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "context is NULL");
    return disk_cache(context, "");
}

ptxjit_status ptxjit_cache_stats_get(ptxjit_cache_stats *out, ptxjit_context *context)
{
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_cache_stats_get: out is NULL");
    ptxjit_status status = disk(context);
    if (status == PTXJIT_OK)
        status = pj_disk_cache_stats(context->disk, out);
    if (status == PTXJIT_OK)
        pj_remote_stats_fill(context->remote, out);
    return status;
}

ptxjit_status ptxjit_cache_clear(ptxjit_context *context, uint64_t *removed)
{
    ptxjit_status status = disk(context);
    uint64_t count = 0;
    if (status == PTXJIT_OK)
        status = pj_disk_cache_clear(context->disk, &count);
    if (removed)
        *removed = count;
    return status;
}

ptxjit_status ptxjit_cache_trim(ptxjit_context *context, uint64_t *evicted, uint64_t *temp_files)
{
    ptxjit_status status = disk(context);
    evict_report report = {0};
    if (status == PTXJIT_OK)
        status = pj_disk_cache_trim(context->disk, &report);
    if (evicted)
        *evicted = report.evicted;
    if (temp_files)
        *temp_files = report.temp_removed;
    return status;
}

/* The disk cache a bundle is written from or read into; stats zeroed first, even when the
 * call fails. */
static ptxjit_status bundle_cache(ptxjit_context *context, const char *path,
                                  ptxjit_bundle_stats *stats)
{
    memset(stats, 0, sizeof *stats);
    if (!context || !path)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "context and path must be given");
    return disk_cache(context, "; bundles move the disk cache's entries");
}

ptxjit_status ptxjit_cache_export(ptxjit_context *context, const char *path,
                                  const char *const *families, int count,
                                  ptxjit_bundle_stats *stats)
{
    ptxjit_bundle_stats ignored;
    stats = stats ? stats : &ignored;
    ptxjit_status status = bundle_cache(context, path, stats);
    if (status != PTXJIT_OK)
        return status;
    return pj_bundle_export(context->disk, path, families, count, stats);
}

ptxjit_status ptxjit_cache_import(ptxjit_context *context, const char *path,
                                  ptxjit_bundle_stats *stats)
{
    ptxjit_bundle_stats ignored;
    stats = stats ? stats : &ignored;
    ptxjit_status status = bundle_cache(context, path, stats);
    if (status != PTXJIT_OK)
        return status;
    return pj_bundle_import(context->disk, path, stats);
}

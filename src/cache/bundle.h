/* bundle.h — a disk cache's entries and tuning records written to one tar file (a bundle), and
 * a bundle's members checked and stored into a disk cache (bundle.c says how). */
#ifndef PTXJIT_CACHE_BUNDLE_H
#define PTXJIT_CACHE_BUNDLE_H

#include "cache/disk.h"

/* Writes disk's entries (families: only those of these count families; count 0: all) and
 * tuning records to path, atomically; *stats, zeroed by the caller, counts them and the
 * entries found corrupt. */
ptxjit_status pj_bundle_export(pj_disk_cache *disk, const char *path,
                               const char *const *families, int count, ptxjit_bundle_stats *stats);
/* Stores into disk each member of the bundle at path that passes a disk load's checks;
 * *stats, zeroed by the caller, counts what was stored and what was skipped. */
ptxjit_status pj_bundle_import(pj_disk_cache *disk, const char *path, ptxjit_bundle_stats *stats);

#endif

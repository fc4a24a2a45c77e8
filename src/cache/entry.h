/* entry.h — the bytes of one disk-cache entry: how an artifact is encoded, and every check a
 * reader makes before it trusts a length it read. No file system here (see disk.c), so the
 * fuzzer can feed the decoder any bytes. */
#ifndef PTXJIT_CACHE_ENTRY_H
#define PTXJIT_CACHE_ENTRY_H

#include "internal.h"

/* Bumped when the encoding changes; also names the cache's versioned directory (v1). */
#define PJ_DISK_FORMAT_VERSION 1
/* Far above any cubin; a reader refuses larger files before allocating for them. */
#define PJ_ENTRY_MAX_BYTES ((uint64_t)1 << 30)

/* Exactly 32 lowercase hex digits: keys become file names, so nothing else may pass. */
int pj_entry_key_valid(const char *key);
/* Whether a reader would accept the artifact back (entry names present and non-empty, a
 * cubin pointer when it has a size): what it would refuse is refused where it is made. */
int pj_entry_storable(const pj_artifact *artifact);

/* The entry file's bytes for key (caller frees); NULL if out of memory. */
char *pj_entry_encode(size_t *size, const char *key, const pj_artifact *artifact);

/* Decodes data as key's entry. PTXJIT_OK: *out holds it (free with pj_artifact_free).
 * PTXJIT_ERR_CACHE: the bytes are not a whole, intact entry for key; *why says what is wrong
 * (a constant string). PTXJIT_ERR_OUT_OF_MEMORY. On failure *out is empty. */
ptxjit_status pj_entry_decode(pj_artifact *out, const char **why, const char *data, size_t size,
                           const char *key);

#endif

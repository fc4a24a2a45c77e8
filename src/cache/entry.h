/* entry.h — the bytes of one disk-cache entry: how an artifact is encoded, and every check a
 * reader makes before it trusts a length it read. No file system here (see disk.c), so the
 * fuzzer can feed the decoder any bytes. */
#ifndef PTXJIT_CACHE_ENTRY_H
#define PTXJIT_CACHE_ENTRY_H

#include "internal.h"

/* Names the cache's versioned directory (v1); bumped when the directory's layout changes. */
#define PJ_DISK_FORMAT_VERSION 1
/* An entry's own format, in its header; bumped when the encoding changes. An entry of an
 * older format is a miss (the next store replaces it), not corrupt. 2: the compile options. */
#define PJ_ENTRY_FORMAT_VERSION 2
/* Far above any cubin; a reader refuses larger files before allocating for them. */
#define PJ_ENTRY_MAX_BYTES ((uint64_t)1 << 30)

/* Exactly 32 lowercase hex digits: keys become file names, so nothing else may pass. */
int pj_entry_key_valid(const char *key);
/* Whether a reader would accept the artifact back (entry names present and non-empty, a
 * cubin pointer when it has a size): what it would refuse is refused where it is made. */
int pj_entry_storable(const pj_artifact *artifact);

/* The entry file's bytes for key (caller frees); NULL if out of memory. */
char *pj_entry_encode(size_t *size, const char *key, const pj_artifact *artifact);

/* The *why of an entry written in an older format: a miss, not damage. */
extern const char pj_entry_older_format[];

/* Decodes data as key's entry. PTXJIT_OK: *out holds it (free with pj_artifact_free).
 * PTXJIT_ERR_CACHE: the bytes are not a whole, intact entry for key; *why says what is wrong
 * (a constant string; pj_entry_older_format for an entry of an older format).
 * PTXJIT_ERR_OUT_OF_MEMORY. On failure *out is empty. */
ptxjit_status pj_entry_decode(pj_artifact *out, const char **why, const char *data, size_t size,
                           const char *key);

/* Room a buffer needs past an entry's size for pj_entry_decode_in_place (the cubin is moved
 * up to an address malloc would give it). */
#define PJ_ENTRY_DECODE_SLACK 16
/* The same checks, but no copy: on PTXJIT_OK *out's strings and cubin point into data (a
 * malloc'ed buffer of size + PJ_ENTRY_DECODE_SLACK bytes), which the artifact then owns and
 * pj_artifact_free frees; the text fields are NUL-terminated in place and the cubin moved to
 * a 16-byte boundary. On failure data is left to the caller (its bytes may have moved). A
 * disk hit decodes this way: the PTX and cubin are not copied a second time. */
ptxjit_status pj_entry_decode_in_place(pj_artifact *out, const char **why, char *data,
                                       size_t size, const char *key);

#endif

/* envelope.h — what the remote tier stores under a Redis key: a signature envelope around the
 * disk entry's bytes, exactly as the disk cache writes them (cache/entry.c):
 *   "PTXJITS\0", u32 envelope version, u32 flags (1: signed), 8 bytes key id, 32 bytes
 *   HMAC-SHA-256 over (the Redis key name || the entry bytes), then the entry bytes.
 * The key id (the first 8 bytes of SHA-256 over a label and the secret) tells "signed with
 * another key" from "forged"; it is no secret and proves nothing by itself. */
#ifndef PTXJIT_REMOTE_ENVELOPE_H
#define PTXJIT_REMOTE_ENVELOPE_H

#include "internal.h"

#define PJ_ENVELOPE_VERSION 1
#define PJ_ENVELOPE_HEADER_SIZE (8 + 4 + 4 + 8 + 32)

/* The value to store under name: entry wrapped and, with a secret, signed (secret NULL: the
 * unsigned mode, a zero signature). Caller frees; NULL if out of memory, or if signing and
 * nettle cannot be loaded (error set; the signed mode loads it at the open already). */
char *pj_envelope_seal(size_t *size, const unsigned char *secret, size_t secret_size,
                       const char *name, const char *entry, size_t entry_size);
/* Checks value as the one stored under name: NULL, with *entry and *entry_size pointing into
 * value, when it may be used; else why not (a constant string). With a secret the signature
 * must be this key's and correct (compared in constant time); without one (unsigned mode)
 * any envelope is taken. The entry's own checks (checksum, key, version) are the caller's. */
const char *pj_envelope_open(const char **entry, size_t *entry_size, const unsigned char *secret,
                             size_t secret_size, const char *name, const char *value,
                             size_t size);

#endif

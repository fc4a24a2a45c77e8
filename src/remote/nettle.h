/* nettle.h — the parts of nettle that sign remote entries (SHA-256, HMAC-SHA-256, a
 * constant-time compare), loaded with dlopen when a signed remote tier is configured, so that
 * libptxjit.so starts where nettle is not installed: only the signed mode needs it. nettle's
 * headers are needed to build (the context structs, the prototypes); nothing is linked. */
#ifndef PTXJIT_REMOTE_NETTLE_H
#define PTXJIT_REMOTE_NETTLE_H

#include <nettle/hmac.h>
#include <nettle/memops.h>
#include <nettle/sha2.h>

#include "internal.h"

/* nettle's entry points, typed by its own prototypes. The fields are not named like the
 * functions: nettle's headers #define sha256_init and the others to their nettle_ names. */
typedef struct {
    __typeof__(nettle_sha256_init) *hash_init;
    __typeof__(nettle_sha256_update) *hash_update;
    __typeof__(nettle_sha256_digest) *hash_digest;
    __typeof__(nettle_hmac_sha256_set_key) *mac_set_key;
    __typeof__(nettle_hmac_sha256_update) *mac_update;
    __typeof__(nettle_hmac_sha256_digest) *mac_digest;
    __typeof__(nettle_memeql_sec) *equal; /* 1 when equal; time independent of the bytes */
} pj_nettle;

/* Loads libnettle.so.8 (or $PTXJIT_NETTLE_LIBRARY alone, when set) once per process and sets
 * *out (out may be NULL: only load). PTXJIT_ERR_CACHE when it cannot be loaded or lacks an
 * entry point, the error naming what was tried, the package and the variable. */
ptxjit_status pj_nettle_load(const pj_nettle **out);

#endif

/* hash.c — XXH3-128 from libxxhash (header-inlined, so the library carries no runtime
 * dependency), with length-prefixed fields for unambiguous cache keys. */
#define XXH_INLINE_ALL
#include <stdio.h>
#include <string.h>
#include <xxhash.h>

#include "internal.h"

struct pj_hasher {
    XXH3_state_t *state;
};

pj_hasher *pj_hasher_new(void)
{
    pj_hasher *hasher = malloc(sizeof *hasher);
    if (!hasher)
        return NULL;
    hasher->state = XXH3_createState();
    if (!hasher->state) {
        free(hasher);
        return NULL;
    }
    XXH3_128bits_reset(hasher->state);
    return hasher;
}

void pj_hasher_free(pj_hasher *hasher)
{
    if (!hasher)
        return;
    XXH3_freeState(hasher->state);
    free(hasher);
}

void pj_hasher_update(pj_hasher *hasher, const void *data, size_t size)
{
    XXH3_128bits_update(hasher->state, data, size);
}

void pj_hasher_field(pj_hasher *hasher, const char *name, const void *data, size_t size)
{
    uint64_t name_size = strlen(name), data_size = size;
    pj_hasher_update(hasher, &name_size, sizeof name_size);
    pj_hasher_update(hasher, name, name_size);
    pj_hasher_update(hasher, &data_size, sizeof data_size);
    pj_hasher_update(hasher, data, size);
}

void pj_hasher_field_str(pj_hasher *hasher, const char *name, const char *text)
{
    pj_hasher_field(hasher, name, text ? text : "", text ? strlen(text) : 0);
}

pj_hash128 pj_hasher_digest(pj_hasher *hasher)
{
    XXH128_hash_t digest = XXH3_128bits_digest(hasher->state);
    return (pj_hash128){digest.low64, digest.high64};
}

pj_hash128 pj_hash(const void *data, size_t size)
{
    XXH128_hash_t digest = XXH3_128bits(data, size);
    return (pj_hash128){digest.low64, digest.high64};
}

uint64_t pj_hash64(const void *data, size_t size, uint64_t seed)
{
    return XXH3_64bits_withSeed(data, size, seed);
}

void pj_hash_hex(const pj_hash128 *hash, char out[33])
{
    static const char digits[] = "0123456789abcdef"; /* as "%016llx%016llx" writes them */
    for (int i = 0; i < 16; i++) {
        out[i] = digits[(hash->high >> (60 - 4 * i)) & 15];
        out[16 + i] = digits[(hash->low >> (60 - 4 * i)) & 15];
    }
    out[32] = '\0';
}

/* fuzz_entry.c — the disk-cache entry decoder. The first byte is for the harness: bit 0
 * re-signs the rest with a valid checksum, so that the fuzzer gets past the checksum to the
 * length and name checks behind it (a file that lies about its lengths but is well signed
 * must be refused just the same). The key is the one the file names, when it is a valid one.
 * Properties: no crash, no read out of bounds, no undefined behaviour; an accepted file is
 * canonical: encoding what was decoded gives back the same bytes; decoding in place (a disk
 * hit's way) accepts and refuses exactly the same files, and what it gives encodes back to
 * the same bytes too. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/entry.h"
#include "fuzz.h"

#define FIXED_KEY "0123456789abcdef0123456789abcdef"

static void sign(char *data, size_t size)
{
    if (size < 16)
        return;
    pj_hash128 sum = pj_hash(data, size - 16);
    memcpy(data + size - 16, &sum.low, 8);
    memcpy(data + size - 8, &sum.high, 8);
}

int fuzz_entry(const uint8_t *input, size_t input_size)
{
    if (input_size < 1)
        return 0;
    size_t size = input_size - 1;
    char *data = malloc(size ? size : 1), key[33];
    fuzz_require(data != NULL, "malloc");
    memcpy(data, input + 1, size);
    if (input[0] & 1)
        sign(data, size);
    snprintf(key, sizeof key, "%s", FIXED_KEY);
    if (size >= 48) {
        memcpy(key, data + 16, 32);
        if (!pj_entry_key_valid(key))
            snprintf(key, sizeof key, "%s", FIXED_KEY);
    }
    pj_artifact artifact;
    const char *why = NULL;
    ptxjit_status status = pj_entry_decode(&artifact, &why, data, size, key);
    fuzz_require(status == PTXJIT_OK || (status == PTXJIT_ERR_CACHE && why),
                 "a refusal says why");
    if (status == PTXJIT_OK) {
        size_t again_size = 0;
        char *again = pj_entry_encode(&again_size, key, &artifact);
        fuzz_require(again && again_size == size && memcmp(again, data, size) == 0,
                     "an accepted entry encodes back to the same bytes");
        fuzz_require(pj_entry_storable(&artifact), "an accepted entry could be stored");
        free(again);
        pj_artifact_free(&artifact);
    }
    char *in_place = malloc(size + PJ_ENTRY_DECODE_SLACK);
    fuzz_require(in_place != NULL, "malloc");
    memcpy(in_place, data, size);
    const char *in_place_why = NULL;
    ptxjit_status in_place_status = pj_entry_decode_in_place(&artifact, &in_place_why,
                                                             in_place, size, key);
    fuzz_require(in_place_status == status && in_place_why == why,
                 "decoding in place accepts and refuses as copying does");
    if (in_place_status == PTXJIT_OK) {
        fuzz_require(artifact.cubin_size == 0 || (uintptr_t)artifact.cubin % 16 == 0,
                     "the cubin is 16-byte aligned");
        size_t again_size = 0;
        char *again = pj_entry_encode(&again_size, key, &artifact);
        fuzz_require(again && again_size == size && memcmp(again, data, size) == 0,
                     "an entry decoded in place encodes back to the same bytes");
        free(again);
        pj_artifact_free(&artifact); /* frees in_place */
    } else {
        free(in_place);
    }
    free(data);
    return 0;
}

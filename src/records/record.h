/* record.h — tuning records: what a tuning found (the winner and every candidate's time and
 * status), keyed by everything that could change the answer, kept in the disk cache beside the
 * kernels ("<key>.tune", the entry format and its guarantees) and in a copy per context. */
#ifndef PTXJIT_TUNE_RECORD_H
#define PTXJIT_TUNE_RECORD_H

#include "internal.h"

/* Bumped when a record's key inputs or its body change: old records are then simply missed. */
#define PJ_TUNE_RECORD_VERSION 2

/* What a record's key hashes. space NULL: the "latest" key, which a request's PARAM=auto finds
 * whatever space the tuning had. */
typedef struct {
    const char *family;
    const char *template_text; /* the template's full text */
    const char *fixed;         /* sorted, without auto words or backend= */
    const char *space;         /* canonical space text; NULL: latest */
    const char *problem;       /* canonical problem text */
    const char *device;        /* name, SM count, driver version: pj_tune_device_identity */
    const char *arch;
    const char *backend;
    const char *compiler;      /* the backend's compiler version */
} pj_tune_key_inputs;

ptxjit_status pj_tune_record_key(pj_hash128 *out, const pj_tune_key_inputs *in);

typedef struct {
    char *params;
    ptxjit_status status; /* PTXJIT_OK: compiled, ran, checked (and timed unless compile-only) */
    char *message;        /* why not, else "" */
    double median_ms, spread; /* of its last round's runs; spread: median absolute
                                 deviation over the median */
    int runs;             /* timed runs of its last round */
    int abandoned;        /* dropped by successive halving: clearly slower than the round's
                             best (message says by how much) */
    int pruned;           /* dropped after its compile, never run: a pruning rule (message
                             says which) */
    int rounds;           /* timing rounds it took part in (0: not timed) */
} pj_tune_row;

typedef struct {
    char *family, *problem, *fixed, *space, *device, *backend;
    char *winner;     /* canonical params */
    char *reference;  /* the configuration results were checked against */
    double noise;     /* the band within which candidates count as tied */
    double best_ms;
    double wall_ms;   /* how long the tuning took */
    int64_t tuned_at; /* seconds since the epoch */
    int considered, refused, merged;
    int latest;       /* stored under the latest key (a copy of the space's own record) */
    pj_tune_row *rows;
    int row_count;
} pj_tune_record;

void pj_tune_record_free(pj_tune_record *record); /* the members */
/* A deep copy; PTXJIT_ERR_OUT_OF_MEMORY. */
ptxjit_status pj_tune_record_copy(pj_tune_record *out, const pj_tune_record *in);

/* The record as the body of a cache entry (text lines, tabs between fields), and back.
 * Decoding refuses anything it did not write (PTXJIT_ERR_CACHE, why in the message). */
char *pj_tune_record_encode(const pj_tune_record *record);
ptxjit_status pj_tune_record_decode(pj_tune_record *out, const char *text);

struct pj_disk_cache;
struct pj_remote;
/* Stores record under key (32 hex digits) in the disk cache, then publishes it to remote (NULL:
 * none); *path (may be NULL) gets where (caller frees). */
ptxjit_status pj_tune_record_store(struct pj_disk_cache *disk, struct pj_remote *remote,
                                   const char *key, const pj_tune_record *record, char **path);
/* Looks key up on disk, then (a miss) in remote (NULL: none), whose find is stored on disk:
 * *found 1 with *out filled when a whole, intact record of this family is there; a damaged
 * one is reported, removed and missed (as kernel entries are). */
ptxjit_status pj_tune_record_load(struct pj_disk_cache *disk, struct pj_remote *remote,
                                  const char *key, const char *family, pj_tune_record *out,
                                  int *found);

#endif

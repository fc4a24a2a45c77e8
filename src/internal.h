/* internal.h — declarations shared by ptxjit's internal modules: errors, string buffers,
 * hashing and the compiled-kernel artifact that the backends produce and the caches keep. */
#ifndef PTXJIT_INTERNAL_H
#define PTXJIT_INTERNAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ptxjit.h"

#define PJ_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define PJ_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

/* ---- error.c: the thread-local last error ---- */
/* Sets the calling thread's last error to the formatted message and returns status. */
ptxjit_status pj_error(ptxjit_status status, const char *format, ...) PJ_PRINTF(2, 3);
/* Prepends "context: " to the current message (keeps the status). */
ptxjit_status pj_error_wrap(ptxjit_status status, const char *format, ...) PJ_PRINTF(2, 3);
void pj_error_clear(void);
/* Keeps copies of a failed compile's whole log and input for the calling thread
 * (ptxjit_last_compile_log / _source); the last-error string holds only a summary. */
void pj_compile_failure(const char *log, const char *source);

/* Where warnings go: a callback with its user pointer (NULL fn: stderr); and where the floors
 * below the request pipeline tell the context's event callback what they met (the remote
 * tier's failures, evictions): ptxjit_options.on_event itself, NULL when there is none. */
typedef struct {
    ptxjit_log_fn fn;
    void *user;
    ptxjit_event_fn on_event;
    void *event_user;
} pj_logger;
void pj_log(const pj_logger *logger, ptxjit_log_level level, const char *format, ...)
    PJ_PRINTF(3, 4);
/* Calls logger's on_event, if any, with event (its NULL strings made ""). */
void pj_notify(const pj_logger *logger, ptxjit_event event);

/* ---- strbuf.c: a growable NUL-terminated string; allocation failure is sticky ---- */
typedef struct {
    char *data;
    size_t length, capacity;
    int failed;
} pj_strbuf;
void pj_sb_init(pj_strbuf *sb);
void pj_sb_append(pj_strbuf *sb, const char *text);
void pj_sb_append_n(pj_strbuf *sb, const char *text, size_t n);
void pj_sb_appendf(pj_strbuf *sb, const char *format, ...) PJ_PRINTF(2, 3);
void pj_sb_vappendf(pj_strbuf *sb, const char *format, va_list args);
/* Hands the string to the caller (never NULL unless allocation failed); resets sb. */
char *pj_sb_take(pj_strbuf *sb);
void pj_sb_free(pj_strbuf *sb);

/* value in decimal into out (at least 24 bytes), as "%lld" writes it, without printf: the
 * request path formats numbers in every fresh process, where printf's first use costs more
 * than a disk hit's system calls. Returns out. */
char *pj_format_int(char out[24], long long value);
/* text into out, cut to size - 1 bytes and NUL-terminated, as snprintf(out, size, "%s"). */
void pj_copy_string(char *out, size_t size, const char *text);

char *pj_strdup(const char *text);
char *pj_strndup(const char *text, size_t n);
/* Reads a whole regular file, at most max_bytes of it; *out is NUL-terminated. Opened
 * non-blocking and checked on the open descriptor: a FIFO, a device, a directory or a socket
 * is PTXJIT_ERR_IO naming what it is, never waited on or read. A file over max_bytes (at the
 * open, or grown while read) is PTXJIT_ERR_IO with *size the size seen (> max_bytes), which
 * tells it from the other failures; nothing past max_bytes + 1 bytes is read. Else
 * PTXJIT_ERR_IO with the reason; *out is NULL after any failure. */
ptxjit_status pj_read_file_at_most(char **out, size_t *size, const char *path, size_t max_bytes);
/* The same with no cap but memory. */
ptxjit_status pj_read_file(char **out, size_t *size, const char *path);

/* ---- hash.c: XXH3-128 (libxxhash) ---- */
typedef struct {
    uint64_t low, high;
} pj_hash128;
typedef struct pj_hasher pj_hasher;
pj_hasher *pj_hasher_new(void);
void pj_hasher_free(pj_hasher *hasher);
void pj_hasher_update(pj_hasher *hasher, const void *data, size_t size);
/* Adds a length-prefixed field, so that ("ab","c") and ("a","bc") hash differently. */
void pj_hasher_field(pj_hasher *hasher, const char *name, const void *data, size_t size);
void pj_hasher_field_str(pj_hasher *hasher, const char *name, const char *text);
pj_hash128 pj_hasher_digest(pj_hasher *hasher);
pj_hash128 pj_hash(const void *data, size_t size);
/* One-shot 64-bit XXH3, for hash tables on hot paths (no allocation). */
uint64_t pj_hash64(const void *data, size_t size, uint64_t seed);
/* 32 lowercase hex digits + NUL. */
void pj_hash_hex(const pj_hash128 *hash, char out[33]);

/* ---- artifact.c: a compiled kernel, as the backends produce it and the caches store it ---- */
typedef struct {
    char *family;       /* family name */
    char *params;       /* canonical parameters */
    char *options;      /* compile options, resolved (pj_compile_options.resolved); may be "" */
    char *ptx;          /* NUL-terminated PTX */
    uint8_t *cubin;     /* the cubin for the target arch */
    size_t cubin_size;
    char *log;          /* compiler log, NUL-terminated, may be "" */
    char **entries;     /* kernel entry names (mangling-free, extern "C") */
    int entry_count;
    void *storage;      /* NULL: each member is its own allocation. Else the one buffer the
                           strings, cubin and entry names point into (a disk hit's entry,
                           decoded in place); entries itself is still allocated apart */
    int borrowed;       /* 1: the members point into a registered AOT table, the program's
                           static data (request/aot.c); only entries itself is freed */
} pj_artifact;
void pj_artifact_free(pj_artifact *artifact); /* frees the members, not the struct */

/* Where one compile's time went, in ms (`ptxjit bench compile`). nvrtc: generate is the
 * prelude, compile is NVRTC; llvm: generate is the IR generator, then the optimization
 * passes, the PTX emission, and compile is nvJitLink. */
typedef struct {
    double generate_ms, optimize_ms, emit_ms, compile_ms;
} pj_stages;

#endif

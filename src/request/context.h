/* context.h — the state behind ptxjit_context and ptxjit_kernel, and the internal calls on
 * them that the modules above share: context.c's (the GPU, the target), the template
 * registry's schema lookups, the request pipeline's (kernel.c, kernel_info.c) and the loading
 * of gpu/launch.c, which the family ops use. It includes none of those modules' headers:
 * they read the state from here (open.c opens and closes it). */
#ifndef PTXJIT_CONTEXT_H
#define PTXJIT_CONTEXT_H

#include <pthread.h>

#include "request/backend.h"
#include "cache/disk.h"
#include "compile_options.h"
#include "driver/driver.h"
#include "includes.h"
#include "params/schema.h"

#define PJ_BUCKETS 256
#define PJ_MAX_OPTIONS 8

typedef struct pj_alias pj_alias;
struct pj_route;

struct ptxjit_kernel {
    /* What a launch reads, together in the first cache line. */
    ptxjit_context *context;
    int loaded;            /* module loaded on the GPU; read with acquire, set under lock */
    CUfunction *functions; /* one per entry */
    const pj_schema *schema;
    pj_request request; /* parameter values, for the family ops */
    char *canonical;
    pj_hash128 key;
    char key_hex[33];
    char compiler_version[64]; /* the version in the key */
    pj_backend backend;        /* the request's backend= word, or the context's default */
    const struct pj_route *route; /* that backend's route (request/route.h) */
    pj_stages stages;          /* where its compile's time went; zeros if not compiled here */
    pj_compile_options compile_options; /* the context's, then the request's own */
    pj_include_set includes;   /* the headers its key covers (nvrtc), checked after the compile */
    char *components;          /* its key's inputs as text (key.h), kept beside its disk entry */
    char *template_dir;        /* a file template's directory, resolved (nvrtc); NULL: none */
    int keep_off_disk;         /* its inputs changed while it compiled: the key may not
                                  describe the code, so the disk cache does not get it */
    const ptxjit_aot_kernel *aot; /* the registered AOT table's entry it is (aot.c); NULL:
                                  produced by the pipeline */
    pj_artifact artifact;      /* read-only once produced; the process's when shared */
    struct pj_share_entry *shared; /* the entry of share.c that owns artifact; NULL: owned
                                      here (share.h) */
    char *source;       /* what the route compiles (specialized source, or LLVM IR), made on
                           the first ptxjit_kernel_source; set under context->lock */
    int ready;          /* 0 while one thread compiles it; guarded by context->lock */
    CUmodule module;
    int *shared_limits;    /* per entry: dynamic shared memory allowed so far (under lock) */
    struct pj_ptx_entry *entry_params; /* per entry, read from the PTX and cubin on first
                                          use, published atomically (entry_params.c) */
    ptxjit_kernel *next;   /* bucket chain */
};

struct ptxjit_context {
    /* What a memory hit and a launch read, together in the first cache line. GPU: driver is
     * NULL when gpu_status != OK (gpu_error says why). */
    const pj_driver *driver;
    CUcontext cu_context;
    ptxjit_status gpu_status;
    uint64_t front_epoch; /* this thread's front of exact requests (front.h) holds while it
                             is unchanged: new at open and whenever the aliases are forgotten */
    ptxjit_event_fn on_event; /* options.on_event (events.h); NULL: no events, one branch */
    pj_logger logger;
    char arch[32];
    pj_backend default_backend;    /* from options.backend; a request's backend= overrides */
    char *options[PJ_MAX_OPTIONS]; /* compiler options, part of the key */
    int option_count;
    struct pj_templates *templates; /* the template registry (templates.c) */
    char *toolkit_include;         /* "-I<toolkit>/include", last on the include path (after
                                      the template's and the user's dirs), whether or not it
                                      exists (not stat'ed: NVRTC skips a missing one) */
    char *compile_options;         /* options.compile_options or $PTXJIT_COMPILE_OPTIONS,
                                      checked at open; put before each request's own */
    pj_disk_cache *disk;           /* NULL: disk cache off or unusable */
    char *template_path;           /* options.template_path (NULL: none), for compile workers */
    char *compile_worker;          /* options.compile_worker (NULL: not given) */
    int confine_includes;          /* options.confine_includes or $PTXJIT_CONFINE_INCLUDES:
                                      includes stay under the allowed directories (includes.h) */
    struct pj_remote *remote;      /* the remote tier (remote/remote.h); NULL: none */
    int compile_wait_ms;           /* how long a miss waits for another process's or node's
                                      compile of its key (cache/compile_lock.h); 0: never */
    struct pj_copier *copier;      /* writes remote hits to disk after their requests
                                      (cache/copier.h); NULL: no disk cache, or written at once */
    char compiler_version[PJ_BACKEND_COUNT][64]; /* per backend, "" until first needed;
                                                    guarded by lock */
    /* The GPU's other state. */
    char gpu_error[1024];
    CUdevice device;
    int device_ordinal;
    int sm_count;
    int process_cache;             /* options.process_cache: kernels shared with the process's
                                      other contexts (share.c) */
    /* Memory cache: kernels by key, and exact request strings as a fast path. */
    pthread_mutex_t lock;
    pthread_cond_t compiled;
    ptxjit_kernel *kernels[PJ_BUCKETS];
    pj_alias *aliases[PJ_BUCKETS]; /* read without the lock (alias.h: pj_alias_find); changed
                                      under it, each bucket's head published atomically */
    pj_alias *retired_aliases;     /* forgotten aliases, freed at close: a reader without the
                                      lock may still be walking them */
    struct pj_tune_memo *tune_memo; /* tuning records and auto resolutions (records/memo.c,
                                       its own lock); made under lock (auto.c) */
    struct pj_scratch *scratch;     /* the device workspace the family ops borrow (scratch.h);
                                       NULL until first borrowed; made under lock */
    struct pj_aot_node *aot;        /* registered AOT tables (aot.c), in order: read without
                                       the lock (acquire), appended under it (release) */
    void *event_user;               /* on_event's argument */
};

/* ---- context.c ---- */
/* The target's compute capability as a number: 90 for sm_90a. */
int pj_context_sm(const ptxjit_context *context);
/* Every public call that touches the GPU runs between these two, on every path: enter makes
 * the context's CUDA context (the device's primary one) current on this thread if another is,
 * and keeps that one in *saved (NULL: nothing to put back); leave makes it current again.
 * Enter fails, saying why, where the GPU is unusable; leave then does nothing. */
ptxjit_status pj_gpu_enter(ptxjit_context *context, CUcontext *saved);
void pj_gpu_leave(ptxjit_context *context, CUcontext saved);
/* 1 when this thread's last ptxjit call that touched the GPU left context's CUDA context
 * current (pj_gpu_leave keeps a thread-local note). Only a hint: the caller may have made
 * another current since; the launch that trusts it (gpu/launch.c) falls back to pj_gpu_enter
 * when the driver refuses. */
int pj_gpu_left_current(const ptxjit_context *context);
/* pj_gpu_leave, then the result of the driver call made in between as a status. */
ptxjit_status pj_gpu_return(ptxjit_context *context, CUcontext saved, CUresult result,
                            const char *call);

/* ---- templates.c: a family's schema in the registry's current snapshot ---- */
/* NULL when the family is not there. */
const pj_schema *pj_context_find_schema(ptxjit_context *context, const char *family);
/* With pj_templates_find's errors (templates.h) when it is not. */
ptxjit_status pj_context_schema(const pj_schema **out, ptxjit_context *context,
                                const char *family);

/* ---- kernel.c ---- */
/* The version of backend's compiler that keys hold (through the cache's memo: a disk hit
 * loads no compiler). */
ptxjit_status pj_context_compiler_version(ptxjit_context *context, pj_backend backend,
                                         char out[64]);
/* A request's kernel with its key and key components, not looked up or produced (explain.c);
 * freed with pj_kernel_unkeyed. */
ptxjit_status pj_kernel_keyed(ptxjit_kernel **out, ptxjit_context *context, const char *family,
                              const char *params, const char *options);
void pj_kernel_unkeyed(ptxjit_kernel *kernel);
/* Frees every kernel of the context, and the exact requests (alias.h) that name them. */
void pj_kernel_free_all(ptxjit_context *context);

/* ---- kernel_info.c ---- */
/* The index of entry (NULL: 0) among the kernel's entries; else PTXJIT_ERR_INVALID_ARGUMENT
 * listing them. */
ptxjit_status pj_kernel_entry_index(int *out, const ptxjit_kernel *kernel, const char *entry);
/* entry, or the name of the first entry when entry is NULL: for messages. */
const char *pj_kernel_entry_name(const ptxjit_kernel *kernel, const char *entry);
/* Where the kernel's compile's time went, in ms, in the order of pj_stages (generate,
 * optimize, emit, compile); zeros for a kernel not compiled in this context. */
void pj_kernel_stage_ms(double out[4], const ptxjit_kernel *kernel);

/* ---- gpu/launch.c, a layer above: for the family ops and the CLI ---- */
/* Loads kernel's module and functions once; index of entry (NULL: 0) in *index. The caller
 * has made the context current (pj_gpu_enter). */
ptxjit_status pj_kernel_load(ptxjit_kernel *kernel, const char *entry, int *index);
/* The loaded function of entry (NULL: the first), allowed shared_bytes of dynamic shared
 * memory per block (the limit is raised above 48 KiB as needed). */
ptxjit_status pj_kernel_function(CUfunction *out, ptxjit_kernel *kernel, const char *entry,
                              unsigned shared_bytes);

#endif

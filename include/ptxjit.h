/* ptxjit.h — the one public header of ptxjit, a JIT for parameter-specialized GPU kernels.
 *
 * A context turns a request ("reduce", "variant=vectorized tpb=256") into a loaded kernel:
 * parameters are validated against the family's schema, the family's template is specialized,
 * compiled (NVRTC) to PTX and cubin, cached in memory and on disk, and loaded through the CUDA
 * driver (dlopen'ed; never linked). Everything except loading and launching works without a GPU.
 *
 * Conventions: functions return ptxjit_status; out-parameters come first; ptxjit_last_error()
 * holds the detailed message of the calling thread's last failure. Kernels are owned by the
 * context that made them and stay valid until ptxjit_close(). A context may be used from several
 * threads at once.
 *
 * CUDA contexts: ptxjit works in the device's primary context, the one the CUDA runtime uses,
 * so device pointers and streams of the CUDA runtime on the same device (cudaMalloc,
 * cudaStream_t) can be passed to ptxjit, and ptxjit's to the runtime. A call that touches the
 * GPU makes the primary context current for itself only when the calling thread has another
 * one current, and makes that one current again before returning, on errors too: a context of
 * the caller's own (cuCtxCreate) stays current across ptxjit calls, but its pointers and
 * streams cannot be used with ptxjit's kernels. Where no context is current, the primary one
 * is left current, as the CUDA runtime leaves it. */
#ifndef PTXJIT_H
#define PTXJIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTXJIT_VERSION "0.1.0"

/* Status codes, declared once: X(name, value, short description). */
#define PTXJIT_STATUS_LIST(X)                                                        \
    X(PTXJIT_OK, 0, "success")                                                       \
    X(PTXJIT_ERR_INVALID_ARGUMENT, 1, "invalid argument")                            \
    X(PTXJIT_ERR_UNKNOWN_FAMILY, 2, "unknown kernel family")                         \
    X(PTXJIT_ERR_PARAM, 3, "invalid kernel parameter")                               \
    X(PTXJIT_ERR_TEMPLATE, 4, "invalid kernel template")                             \
    X(PTXJIT_ERR_NO_COMPILER, 5, "compiler library not available")                   \
    X(PTXJIT_ERR_COMPILE, 6, "compilation failed")                                   \
    X(PTXJIT_ERR_CACHE, 7, "cache error")                                            \
    X(PTXJIT_ERR_NO_DRIVER, 8, "CUDA driver not available")                          \
    X(PTXJIT_ERR_NO_DEVICE, 9, "no CUDA device")                                     \
    X(PTXJIT_ERR_CUDA, 10, "CUDA driver call failed")                                \
    X(PTXJIT_ERR_OUT_OF_MEMORY, 11, "out of memory")                                 \
    X(PTXJIT_ERR_IO, 12, "input/output error")                                       \
    X(PTXJIT_ERR_UNSUPPORTED, 13, "operation not supported")

typedef enum {
#define PTXJIT_STATUS_ENUM(name, value, text) name = value,
    PTXJIT_STATUS_LIST(PTXJIT_STATUS_ENUM)
#undef PTXJIT_STATUS_ENUM
} ptxjit_status;

/* "PTXJIT_ERR_PARAM" and the like; never NULL. */
const char *ptxjit_status_name(ptxjit_status status);
/* The calling thread's last error message: what failed, why, and how to fix it. Like errno,
 * it means something right after a call that failed (returned a status other than PTXJIT_OK,
 * or NULL where a call says so): a call that succeeds does not clear it (ptxjit_open alone
 * does) and may have replaced it with a problem it recovered from (a kernel it could not
 * store in the disk cache, say). "" if no call has failed yet.
 * For a compile error (PTXJIT_ERR_COMPILE) it is a summary: the first error lines and the
 * source around them; the whole log and source are below. */
const char *ptxjit_last_error(void);
/* The whole compiler log of the calling thread's last failed compile ("" if none): NVRTC's
 * log, or for backend=llvm nvJitLink's. Valid until that thread's next failed compile. */
const char *ptxjit_last_compile_log(void);
/* What that compile was given ("" if none): the specialized CUDA source (backend=nvrtc) or the
 * PTX from LLVM (backend=llvm). Valid until that thread's next failed compile. */
const char *ptxjit_last_compile_source(void);

typedef struct ptxjit_context ptxjit_context;
typedef struct ptxjit_kernel ptxjit_kernel;
typedef uint64_t ptxjit_devptr; /* a CUdeviceptr */

typedef enum { PTXJIT_LOG_WARNING = 1, PTXJIT_LOG_INFO = 2 } ptxjit_log_level;
typedef void (*ptxjit_log_fn)(void *user, ptxjit_log_level level, const char *message);

/* ---- Events ----
 * What the JIT does, told as it happens to ptxjit_options.on_event (docs/EMBEDDING.md,
 * "Events"). The callback runs on the thread that made the request, never under a lock of
 * the library: it may call ptxjit (another request, even on this context; never ptxjit_close
 * of the context that tells it: the call it came from still uses it) and may block,
 * though a slow callback slows that request. REMOTE_* and EVICTION events may also come from
 * the context's own threads (the remote tier's copier to disk, a compile lease's renewal):
 * the callback must be thread-safe. The event and its strings are valid only during the
 * call. Unset (NULL), it costs a request one predictable branch. */
typedef enum {
    PTXJIT_EVENT_REQUEST_START = 1, /* a ptxjit_get_kernel(_ex): family and params as given */
    PTXJIT_EVENT_REQUEST_END = 2,   /* its answer: tier, status, ms; on success the
                                       canonical params and key (else as given and "") */
    PTXJIT_EVENT_COMPILE_START = 3, /* every cache missed: this thread compiles the key */
    PTXJIT_EVENT_COMPILE_END = 4,   /* status, ms and the compile's stage_ms */
    /* The remote tier failed an exchange (unreachable, an error reply, a broken reply, the
     * deadline) or refused an entry (a failed check, over the size limit): detail says
     * which; key where known. The request goes on with the local tiers. */
    PTXJIT_EVENT_REMOTE_ERROR = 5,
    PTXJIT_EVENT_REMOTE_BACKOFF = 6, /* failures in a row: the tier is skipped for ms */
    PTXJIT_EVENT_EVICTION = 7,      /* the disk cache removed count entries (bytes) to stay
                                       under its cap */
    PTXJIT_EVENT_TUNE_START = 8,    /* a ptxjit_tune search: family; detail the problem */
    PTXJIT_EVENT_TUNE_PROGRESS = 9, /* done of total points handled; params the last one */
    PTXJIT_EVENT_TUNE_END = 10      /* status, ms; params the winner ("" if none) */
} ptxjit_event_kind;

/* Where a request's kernel came from, fastest first. */
typedef enum {
    PTXJIT_TIER_NONE = 0,       /* the request failed before any tier answered */
    PTXJIT_TIER_THREAD_MEMO = 1,/* this thread's exact-request memo */
    PTXJIT_TIER_MEMORY = 2,     /* this context's kernels (PTXJIT_ORIGIN_MEMORY) */
    PTXJIT_TIER_PROCESS = 3,    /* another context of this process (PTXJIT_ORIGIN_SHARED) */
    PTXJIT_TIER_DISK = 4,       /* the disk cache (PTXJIT_ORIGIN_DISK) */
    PTXJIT_TIER_REMOTE = 5,     /* the remote cache (PTXJIT_ORIGIN_REMOTE) */
    PTXJIT_TIER_AOT = 6,        /* a registered ahead-of-time table's kernel (docs/AOT.md) */
    PTXJIT_TIER_COMPILE = 7     /* compiled by this request (PTXJIT_ORIGIN_COMPILED) */
} ptxjit_tier;

typedef struct {
    ptxjit_event_kind kind;
    ptxjit_tier tier;       /* REQUEST_END; NONE for the others */
    ptxjit_status status;   /* the ENDs' outcome; PTXJIT_OK for the STARTs */
    const char *family;     /* never NULL */
    const char *params;     /* canonical where known (the END of a request that succeeded,
                               the compiles), else as the caller gave them; never NULL */
    const char *options;    /* compile options: canonical where known, else as given; "" */
    const char *key;        /* the cache key, 32 hex digits; "" where not known */
    double ms;              /* the ENDs: the request's or the compile's wall time */
    double stage_ms[4];     /* COMPILE_END, and the REQUEST_END that compiled: generate,
                               optimize, emit, compile (as `ptxjit bench compile`) */
    const char *detail;     /* REMOTE_*: what failed; EVICTION: the cache directory;
                               TUNE_START: the problem; else "" */
    uint64_t count, bytes;  /* EVICTION: entries removed and their bytes */
    int done, total;        /* TUNE_PROGRESS (TUNE_END: total points) */
} ptxjit_event;
typedef void (*ptxjit_event_fn)(void *user, const ptxjit_event *event);
/* "thread_memo", "memory", "process", "disk", "remote", "aot", "compile", "none". */
const char *ptxjit_tier_name(ptxjit_tier tier);

typedef struct {
    /* Disk cache root; NULL: $PTXJIT_CACHE_DIR, else $XDG_CACHE_HOME/ptxjit, else
     * ~/.cache/ptxjit. */
    const char *cache_dir;
    int disk_cache;            /* 1 (default): use the disk cache; 0: memory only */
    const char *arch;          /* "sm_90a"; NULL: $PTXJIT_ARCH, else the device's, else sm_90a */
    const char *backend;       /* "nvrtc" (NULL: the default) or "llvm": kernels generated as
                                  LLVM IR, PTX from LLVM's NVPTX backend, cubin from
                                  nvJitLink; a request's backend=... word overrides it */
    const char *template_path; /* extra ':'-separated template dirs, searched before
                                  $PTXJIT_TEMPLATE_PATH and the built-in templates (see
                                  "Template registry" below) */
    int device;                /* CUDA device ordinal (default 0) */
    int use_gpu;               /* 1 (default): open the driver if present; 0: never touch it */
    ptxjit_log_fn log;         /* warnings (corrupt cache entry, ...) and info; NULL: warnings
                                  to stderr, info too when $PTXJIT_VERBOSE is set */
    void *log_user;
    uint64_t cache_max_bytes;  /* disk cache cap, least recently used entries evicted first;
                                  0: $PTXJIT_CACHE_MAX_BYTES, else 1 GiB */
    int cache_shared;          /* 1: the cache directory is shared with its group on purpose
                                  (see docs/RELIABILITY.md); 0: as $PTXJIT_CACHE_SHARED says,
                                  by default private: a directory that another user owns or
                                  others can write is not used */
    const char *compile_options; /* compile options put before each request's own (see
                                  "Compile options" below); NULL: $PTXJIT_COMPILE_OPTIONS, else
                                  none. Checked by ptxjit_open (PTXJIT_ERR_INVALID_ARGUMENT) */
    const char *compile_worker; /* the ptxjit program that compiles many requests at once
                                  (ptxjit_tune, ptxjit_warm) in processes of its own, into the
                                  disk cache: NVRTC compiles in one process stop scaling near
                                  4x. NULL: $PTXJIT_COMPILE_WORKER, else ptxjit beside the
                                  library, beside the program, then on $PATH, found at run
                                  time; "" or "none": threads of this process only (see
                                  "Compile workers" in docs/TUNING.md) */
    const char *remote_cache;  /* a shared remote cache on Redis, "redis://HOST:PORT[/DB]" or
                                  "unix:///PATH[?db=N]"; NULL: $PTXJIT_REMOTE_CACHE; "": none.
                                  Entries are signed with the fleet key of
                                  $PTXJIT_REMOTE_CACHE_KEY_FILE (docs/FLEET.md); a remote that
                                  is configured but cannot be trusted fails ptxjit_open with
                                  PTXJIT_ERR_CACHE, an unreachable one only warns */
    int process_cache;         /* 1 (default): share compiled kernels with the other contexts
                                  of this process that share theirs (one context per GPU, see
                                  "Several GPUs" below): a key that one of them holds or is
                                  producing is taken from it (PTXJIT_ORIGIN_SHARED), not read
                                  from disk or compiled again; each context still loads its
                                  own module on its own device. 0: this context produces
                                  every kernel itself (cold-compile timings) */
    int compile_wait_ms;       /* how long a request that misses every cache waits for another
                                  process of the same cache directory, or another node of the
                                  remote cache, that compiles the same key, before compiling
                                  it itself; 0: $PTXJIT_COMPILE_WAIT_MS, else 30000; < 0: never
                                  wait (every process compiles what it misses) */
    int remote_lease_ms;       /* the remote cache's compile lease: a node that takes it
                                  renews it while it compiles; a node that dies holding it
                                  delays the others this long at most. 0:
                                  $PTXJIT_REMOTE_CACHE_LEASE_MS, else 3000 */
    uint64_t template_max_bytes; /* the largest template file read from a template directory,
                                  and header a template includes; a larger one is a template
                                  problem (see "Template registry"), not read. 0: $PTXJIT_TEMPLATE_MAX_BYTES (a
                                  number of bytes), else 16 MiB (built-in templates are under
                                  64 KiB) */
    int confine_includes;      /* 1: a template's includes resolve only under its own
                                  directory, the -I directories of the compile options and
                                  the CUDA toolkit's include directory; an absolute path, a
                                  ".." or a link that leads out, and an include the scan
                                  cannot check (through a macro, #include_next, ...) are
                                  refused with PTXJIT_ERR_TEMPLATE before anything is read
                                  or compiled, on a cache hit too. For a service compiling
                                  its users' templates ("Include confinement" in
                                  docs/TEMPLATES.md). 0: as $PTXJIT_CONFINE_INCLUDES says (1:
                                  on), by default off; neither turns the other's on off */
    const struct ptxjit_aot_table *const *aot_tables; /* NULL-terminated: ahead-of-time
                                  tables (`ptxjit aot`, "Ahead-of-time tables" below)
                                  registered by ptxjit_open as ptxjit_register_aot registers
                                  them, in order; a bad table fails the open. NULL: none */
    ptxjit_event_fn on_event;  /* NULL (default): no events; see "Events" above */
    void *event_user;          /* on_event's first argument */
} ptxjit_options;

/* Fills *options with the defaults above. */
void ptxjit_options_init(ptxjit_options *options);

/* Opens a context. With no driver or no GPU it still opens (see ptxjit_gpu_status). */
ptxjit_status ptxjit_open(ptxjit_context **out, const ptxjit_options *options);
/* Closes a context and frees its kernels; NULL is ignored. Like free(), closing a context
 * twice (or a pointer ptxjit_open did not return) is undefined and must not be done; as a
 * cheap guard, a close of a pointer that is not an open context of this process is refused
 * with a warning through the default logger (stderr) and frees nothing. That guard is best
 * effort: once a later ptxjit_open reuses the address, the stale pointer names the new
 * context. Must not race other calls on the context. */
void ptxjit_close(ptxjit_context *context);

/* ---- Several GPUs ----
 * One context per device (options.device), all open at once, each driven by any thread: a
 * key is compiled (or read from the disk) once in the process and its cubin shared in memory
 * by every context with process_cache on (the key holds the architecture, so devices of
 * different architectures compile apart; threads asking for different keys never wait on
 * each other). Each context loads its own module on its own device at its first launch, and
 * reports resources as its device's driver does. A call makes its device's primary context
 * current only for itself, as above, so one thread may drive several devices in turn.
 * ptxjit_device_count gives the number of devices (the ordinals 0 .. count-1);
 * PTXJIT_ERR_NO_DRIVER or PTXJIT_ERR_NO_DEVICE, *out 0, where none can be used. */
ptxjit_status ptxjit_device_count(int *out);

/* PTXJIT_OK when kernels can be loaded and launched; else why not (the message says). */
ptxjit_status ptxjit_gpu_status(ptxjit_context *context);
/* The target architecture the context compiles for, e.g. "sm_90a". */
const char *ptxjit_arch(const ptxjit_context *context);
/* The disk cache's root directory (versioned), or NULL when the disk cache is off. */
const char *ptxjit_cache_dir(const ptxjit_context *context);

/* ---- Families and their parameter schemas ---- */
int ptxjit_family_count(ptxjit_context *context);
const char *ptxjit_family_name(ptxjit_context *context, int index);
/* Where the family's template came from: "built-in:reduce.cu", a file path, or
 * "memory:NAME" (ptxjit_add_template). Families and their strings stay valid until
 * ptxjit_close; an add or reload may change the list (and so the indexes). */
const char *ptxjit_family_origin(ptxjit_context *context, int index);
/* A readable description of the family's schema: parameters, types, allowed values, defaults,
 * docs and constraints. The string is owned by the context. */
ptxjit_status ptxjit_family_describe(const char **out, ptxjit_context *context,
                                     const char *family);
/* Validates "key=value ..." against the family's schema and writes the canonical form
 * (defaults filled, sorted by name) into a string the caller frees with free(); *out is NULL
 * after an error. params NULL: the defaults. */
ptxjit_status ptxjit_canonical_params(char **out, ptxjit_context *context, const char *family,
                                      const char *params);

/* ---- Template registry ----
 * A context's families come from the template directories (options.template_path, then
 * $PTXJIT_TEMPLATE_PATH, as ptxjit_open found them), the templates added from memory, and
 * the built-in templates. In a directory, a template is a .cu file with a "//@ptxjit family
 * NAME" line; a .cu file without any //@ptxjit line is a helper (e.g. included by templates)
 * and ignored, as is every other file. A leading UTF-8 byte order mark is dropped and CRLF
 * line ends become LF. A user template may replace a built-in family of its name.
 *
 * Only regular files are read (a FIFO, a device or a directory named *.cu is a problem,
 * never waited on), none over options.template_max_bytes.
 * A template that cannot be used — it does not parse, its file cannot be read or is too
 * large, or another user template declares its family too — and a directory that cannot be
 * read are problems,
 * not failures: each is logged once as a warning and listed below, and only the families
 * they name are unavailable (requests for them fail with PTXJIT_ERR_TEMPLATE and the problem;
 * a family no template could be read for is PTXJIT_ERR_UNKNOWN_FAMILY, whose message lists
 * the unreadable files). These calls are safe against concurrent requests: a kernel made
 * from a template that is replaced later stays valid until ptxjit_close, and later requests
 * (the same parameter text included) use the new template. */
int ptxjit_template_problem_count(ptxjit_context *context);
/* Problem number index, "PATH: message"; NULL when out of range. Owned by the context, valid
 * until ptxjit_close. */
const char *ptxjit_template_problem(ptxjit_context *context, int index);
/* Registers a template from text (e.g. one the calling program generates); name is a label,
 * "axpy.cu", and the template's origin is "memory:axpy.cu". A text that does not parse is
 * refused with PTXJIT_ERR_TEMPLATE and the parse error, and nothing is registered. A family
 * that an earlier memory template declares is replaced (the update path of a generating
 * tool); one that a directory template declares is refused (PTXJIT_ERR_TEMPLATE, naming
 * both); a built-in one is replaced. */
ptxjit_status ptxjit_add_template(ptxjit_context *context, const char *name, const char *text);
/* Reads the template directories again, so that edited, new and removed files take effect;
 * memory templates are kept. New problems are logged and listed; PTXJIT_OK unless out of
 * memory (then the registry is unchanged). */
ptxjit_status ptxjit_reload_templates(ptxjit_context *context);

/* ---- Family schemas as data ----
 * What ptxjit_family_describe writes as text, for programs that build requests, present
 * choices or check them before asking for a kernel. family is a name as ptxjit_family_name
 * gives it (else PTXJIT_ERR_UNKNOWN_FAMILY, naming the known ones); an index out of range or
 * a NULL out is PTXJIT_ERR_INVALID_ARGUMENT. Every string and array handed out is owned by
 * the context and stays valid until ptxjit_close(). Nothing here allocates or needs a GPU. */
typedef enum {
    PTXJIT_PARAM_INT = 0,   /* an integer in [min, max], a power of two when pow2 */
    PTXJIT_PARAM_ENUM = 1,  /* one of values */
    PTXJIT_PARAM_DTYPE = 2  /* one of values, each an element type (i32 u32 i64 f16 bf16 f32
                               f64) */
} ptxjit_param_kind;

typedef struct {
    const char *name;
    ptxjit_param_kind kind;
    const char *kind_name;       /* "int", "enum" or "dtype" */
    int64_t min, max;            /* int: the inclusive range; else 0 */
    int pow2;                    /* int: 1 when the value must be a power of two; else 0 */
    int value_count;             /* enum, dtype: how many values are allowed; int: 0 */
    const char *const *values;   /* enum, dtype: the allowed names, in declared order; int: NULL */
    int64_t default_value;       /* int: the default; enum, dtype: its index in values */
    const char *default_text;    /* the default as a request writes it: "512", "vectorized" */
    int default_if_count;        /* conditional defaults (ptxjit_family_default_if), tried
                                    in order before default_value */
    const char *doc;             /* NULL when the template gives none */
    const char *when;            /* the parameter applies only where this expression holds (a
                                    request may not name it elsewhere); NULL: always */
} ptxjit_param_info;

typedef struct {
    const char *condition;       /* over earlier parameters and sm: "variant == wgmma" */
    int64_t value;               /* as ptxjit_param_info's default_value */
    const char *value_text;      /* as its default_text: "bf16" */
} ptxjit_default_if_info;

typedef struct {
    const char *expression;      /* must hold for every request: "batch <= 16" */
    const char *message;         /* why, as the error of a request that breaks it says */
} ptxjit_constraint_info;

/* The family's one-line description; NULL when its template gives none. */
ptxjit_status ptxjit_family_doc(const char **out, ptxjit_context *context, const char *family);
/* Parameters, in declared order: a default_if condition names only parameters before its
 * own. */
ptxjit_status ptxjit_family_param_count(int *out, ptxjit_context *context, const char *family);
ptxjit_status ptxjit_family_param(ptxjit_param_info *out, ptxjit_context *context,
                                  const char *family, int index);
/* Conditional default number index (0 <= index < default_if_count) of parameter param. */
ptxjit_status ptxjit_family_default_if(ptxjit_default_if_info *out, ptxjit_context *context,
                                       const char *family, int param, int index);
ptxjit_status ptxjit_family_constraint_count(int *out, ptxjit_context *context,
                                             const char *family);
ptxjit_status ptxjit_family_constraint(ptxjit_constraint_info *out, ptxjit_context *context,
                                       const char *family, int index);
/* The template's tuning space: one line per tuned parameter (`//@ptxjit tune PARAM VALUES`). */
typedef struct {
    const char *param;   /* the parameter's name */
    const char *values;  /* as the template writes them: "128,256,512" or "128..1024" */
} ptxjit_tune_line_info;
ptxjit_status ptxjit_family_tune_count(int *out, ptxjit_context *context, const char *family);
ptxjit_status ptxjit_family_tune_line(ptxjit_tune_line_info *out, ptxjit_context *context,
                                      const char *family, int index);
/* The kernel's entry points (extern "C" names), as ptxjit_launch takes them. */
ptxjit_status ptxjit_family_entry_count(int *out, ptxjit_context *context, const char *family);
ptxjit_status ptxjit_family_entry(const char **out, ptxjit_context *context, const char *family,
                                  int index);

/* ---- Kernels ---- */
typedef enum {
    PTXJIT_ORIGIN_COMPILED = 0, /* compiled by this call */
    PTXJIT_ORIGIN_DISK = 1,     /* read from the disk cache */
    PTXJIT_ORIGIN_MEMORY = 2,   /* already in this context */
    PTXJIT_ORIGIN_REMOTE = 3,   /* from the remote cache (checked, then stored on disk) */
    PTXJIT_ORIGIN_SHARED = 4    /* from another context of this process, which compiled it
                                   or read it for the same key (options.process_cache) */
} ptxjit_origin;

/* The kernel for (family, params): validated, specialized, compiled or found in a cache. The
 * kernel is not yet loaded on the GPU, so this works without one. *origin may be NULL.
 * The same as ptxjit_get_kernel_ex (below) with no compile options of its own.
 *
 * What goes into a compile is in the cache key: the template's text, the compiler, target
 * and options, and every user header the template can include (its own directory's, the
 * -I directories'): their paths and content, so that an edited header gives a new kernel.
 * A template's `#include "x"` is looked for next to the template first, then in the -I
 * directories in order, then in the toolkit's include directory; `#include <x>` in the
 * template's directory, the -I directories, the toolkit's. A header that changes while the
 * kernel compiles keeps that kernel off the disk cache (a warning says so). The same request
 * text in the same context is answered from memory without looking at the headers again. */
ptxjit_status ptxjit_get_kernel(ptxjit_kernel **out, ptxjit_context *context, const char *family,
                                const char *params, ptxjit_origin *origin);

const char *ptxjit_kernel_family(const ptxjit_kernel *kernel);
const char *ptxjit_kernel_params(const ptxjit_kernel *kernel); /* canonical */
const char *ptxjit_kernel_key(const ptxjit_kernel *kernel);    /* 32 hex digits */
const char *ptxjit_kernel_ptx(const ptxjit_kernel *kernel);    /* NUL-terminated PTX text */
const void *ptxjit_kernel_cubin(const ptxjit_kernel *kernel, size_t *size);
const char *ptxjit_kernel_log(const ptxjit_kernel *kernel);    /* compiler log, may be "" */
/* What the kernel's route compiles: the specialized CUDA source (backend=nvrtc), or the
 * generated LLVM IR (backend=llvm); made on the first call, also for kernels from the disk
 * cache. NULL when it cannot be made (out of memory, the llvm plugin missing):
 * ptxjit_last_error() says why, and a later call tries again. Valid as long as the kernel. */
const char *ptxjit_kernel_source(const ptxjit_kernel *kernel);
/* What the route of (family, params) compiles — the specialized CUDA source (backend=nvrtc:
 * the prelude, then the template under `#line 1 "ORIGIN"`, so that compiler messages cite
 * the template's own file and lines)
 * or the generated LLVM IR (backend=llvm) — without compiling it and without the caches: also
 * for a request whose compile fails. The parameters are validated as for ptxjit_get_kernel.
 * *out is the caller's (free()). */
ptxjit_status ptxjit_specialize(char **out, ptxjit_context *context, const char *family,
                                const char *params);
int ptxjit_kernel_entry_count(const ptxjit_kernel *kernel);
const char *ptxjit_kernel_entry_name(const ptxjit_kernel *kernel, int index);

typedef struct {
    int registers;       /* per thread */
    int static_smem;     /* bytes of static shared memory per block (dynamic not included) */
    int local_bytes;     /* per thread; nonzero means spills or stack arrays */
    int max_threads;     /* per block: the launch bound, or less where registers run out */
    int param_bytes;     /* the entry's parameters, bytes */
    int spill_stores;    /* bytes per thread that ptxas spilled, from the compile log
                            ("N bytes spill stores": both routes ask ptxas -v; the cubin
                            records no spills); -1: unknown (a cache entry compiled before
                            ptxjit asked for that log, or a log without the entry's line) */
    int spill_loads;     /* likewise "N bytes spill loads"; -1: unknown */
} ptxjit_kernel_resources;
/* The resources of one entry (NULL: the first) as the driver reports them: loads the kernel
 * (once per context) and asks it for registers, static_smem, local_bytes and max_threads;
 * the other fields as ptxjit_kernel_resources_static gives them (-1 each where the cubin
 * cannot be read). Needs a GPU. */
ptxjit_status ptxjit_kernel_resources_get(ptxjit_kernel_resources *out, ptxjit_kernel *kernel,
                                          const char *entry);
/* The same resources read from the kernel's cubin, without a GPU, equal to the driver's
 * (checked on an H100): registers (EIATTR_REGCOUNT), static_smem (the size of
 * .nv.shared.ENTRY, less the 1 KiB the system reserves that ptxas counts there from sm_90
 * on), local_bytes (the entry's stack frame, EIATTR_FRAME_SIZE), max_threads (the launch
 * bound, 1024 without one, lowered where a block of that many threads would not get its
 * registers: the driver's rule on compute capability 7.0 and later), param_bytes, and the
 * spills from the compile log. entry NULL is the first. An entry the kernel does not have is
 * PTXJIT_ERR_INVALID_ARGUMENT naming the entries it has; a cubin that cannot be read (not a
 * CUDA ELF, truncated) is too, saying why. */
ptxjit_status ptxjit_kernel_resources_static(ptxjit_kernel_resources *out,
                                             const ptxjit_kernel *kernel, const char *entry);

typedef struct { unsigned x, y, z; } ptxjit_dim3;

/* Launches entry (NULL: the first) on stream (NULL: the default stream). args as for
 * cuLaunchKernel: an array of pointers to each argument. Loads the module on first use.
 * shared_bytes is the dynamic shared memory per block; above 48 KiB the entry's limit is
 * raised first (once), up to what the device allows. A grid or block with a zero dimension,
 * or a block of more than 1024 threads, is PTXJIT_ERR_INVALID_ARGUMENT before the GPU is
 * touched. A launch the driver refuses is PTXJIT_ERR_CUDA with a message naming the family,
 * its canonical parameters, the entry, grid, block, shared memory (and cluster) and the CUDA
 * error's name, text and number. The arguments are not checked: ptxjit_launch_checked does
 * that. */
ptxjit_status ptxjit_launch(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                            ptxjit_dim3 block, unsigned shared_bytes, void *stream, void **args);
/* ptxjit_launch in thread-block clusters of cluster.x × cluster.y × cluster.z blocks (sm_90:
 * the blocks of a cluster run at once and share their shared memory); each grid dimension
 * must be a multiple of the cluster's. A cluster of 1 × 1 × 1 is a plain launch. */
ptxjit_status ptxjit_launch_cluster(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                                    ptxjit_dim3 block, ptxjit_dim3 cluster, unsigned shared_bytes,
                                    void *stream, void **args);

/* ---- Device memory, for programs that have no CUDA runtime of their own ---- */
ptxjit_status ptxjit_alloc(ptxjit_devptr *out, ptxjit_context *context, size_t bytes);
ptxjit_status ptxjit_free(ptxjit_context *context, ptxjit_devptr pointer);
ptxjit_status ptxjit_copy_to_device(ptxjit_context *context, ptxjit_devptr dst, const void *src,
                                    size_t bytes);
ptxjit_status ptxjit_copy_to_host(ptxjit_context *context, void *dst, ptxjit_devptr src,
                                  size_t bytes);
ptxjit_status ptxjit_synchronize(ptxjit_context *context);

/* ---- Entry parameters and checked launches ----
 * Each entry's parameters, read once per kernel from what it was compiled to (no GPU needed,
 * so this works offline too): size, alignment and type from the PTX's declarations, offset
 * from the cubin's parameter records, which the driver reads to place a launch's arguments.
 * entry NULL means the first; an entry the kernel does not have is
 * PTXJIT_ERR_INVALID_ARGUMENT naming those it has. */
typedef struct {
    size_t offset; /* bytes from the start of the parameter buffer, as the driver places it
                      (cuFuncGetParamInfo; CU_LAUNCH_PARAM_BUFFER_POINTER takes a buffer laid
                      out so). Each parameter sits at the next multiple of its alignment
                      counted from where the buffer starts in its constant bank, which on sm_90
                      is a multiple of 16 only: a CUtensorMap (align 64) after 24 bytes of other
                      parameters is at 48, not 64 */
    size_t size;   /* bytes: 8 for a pointer or 64-bit integer, 4 for an int or float, 128
                      for a CUtensorMap passed by value */
    size_t align;  /* bytes: the type's size, or the .align the PTX declares */
} ptxjit_param_layout;
ptxjit_status ptxjit_kernel_param_count(int *out, const ptxjit_kernel *kernel,
                                        const char *entry);
/* Parameter index (0 <= index < the count above) of entry. */
ptxjit_status ptxjit_kernel_param_layout(ptxjit_param_layout *out, const ptxjit_kernel *kernel,
                                         const char *entry, int index);
/* ptxjit_launch, after checking the arguments against the entry's parameters: arg_count must
 * be the entry's parameter count, every args[i] non-NULL and arg_sizes[i] (the sizeof of what
 * args[i] points to) the size of parameter i. A mismatch is PTXJIT_ERR_INVALID_ARGUMENT naming
 * the entry and the argument ("entry reduce_kernel of reduce takes 3 arguments, 2 given";
 * "argument 2 of entry reduce_kernel is 8 bytes (.u64), 4 given"), before the GPU is touched.
 * Sizes are all the PTX tells: a pointer and a 64-bit integer look alike. */
ptxjit_status ptxjit_launch_checked(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                                    ptxjit_dim3 block, unsigned shared_bytes, void *stream,
                                    int arg_count, void **args, const size_t *arg_sizes);

/* ---- Streams, events and asynchronous copies, for programs with no CUDA runtime ----
 * Streams and events are the driver's CUstream and CUevent as void *, made in the device's
 * primary context: the CUDA runtime's streams and events of the same device may be passed
 * instead, and these to the runtime. A NULL stream is the default stream. Host memory of an
 * asynchronous copy must stay valid (and unchanged, for a copy to the device) until the
 * stream has done the copy; with pageable memory (malloc) the driver may finish the copy
 * before returning, with page-locked memory (cudaMallocHost) it overlaps. */
#define PTXJIT_STREAM_NON_BLOCKING 1 /* does not wait for the default stream (nor it for it) */
/* flags: 0 (the stream waits for work on the default stream, as the default stream waits for
 * it) or PTXJIT_STREAM_NON_BLOCKING. */
ptxjit_status ptxjit_stream_create(void **out, ptxjit_context *context, int flags);
ptxjit_status ptxjit_stream_destroy(ptxjit_context *context, void *stream);
ptxjit_status ptxjit_stream_synchronize(ptxjit_context *context, void *stream);
/* Events record with timing (for ptxjit_event_elapsed_ms). */
ptxjit_status ptxjit_event_create(void **out, ptxjit_context *context);
ptxjit_status ptxjit_event_record(ptxjit_context *context, void *event, void *stream);
ptxjit_status ptxjit_event_synchronize(ptxjit_context *context, void *event);
/* Milliseconds between two recorded, completed events. */
ptxjit_status ptxjit_event_elapsed_ms(float *out, ptxjit_context *context, void *start,
                                      void *end);
ptxjit_status ptxjit_event_destroy(ptxjit_context *context, void *event);
ptxjit_status ptxjit_copy_to_device_async(ptxjit_context *context, ptxjit_devptr dst,
                                          const void *src, size_t bytes, void *stream);
ptxjit_status ptxjit_copy_to_host_async(ptxjit_context *context, void *dst, ptxjit_devptr src,
                                        size_t bytes, void *stream);
/* count bytes set to value. */
ptxjit_status ptxjit_memset_d8_async(ptxjit_context *context, ptxjit_devptr dst,
                                     unsigned char value, size_t count, void *stream);
/* count 32-bit words set to value; dst must be 4-byte aligned. */
ptxjit_status ptxjit_memset_d32_async(ptxjit_context *context, ptxjit_devptr dst, uint32_t value,
                                      size_t count, void *stream);

/* ---- CUDA handles, for what ptxjit does not wrap ----
 * Owned by ptxjit: valid until ptxjit_close(), never to be unloaded or destroyed by the
 * caller. Each needs a GPU. */
/* The CUfunction of entry (NULL: the first), the kernel's module loaded first if it was not.
 * Its dynamic shared memory limit is what ptxjit's own launches raised it to (48 KiB unless
 * one asked for more); a launch of it with more needs
 * cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES) first. */
ptxjit_status ptxjit_kernel_function(void **out, ptxjit_kernel *kernel, const char *entry);
/* The kernel's CUmodule, loaded first if it was not. */
ptxjit_status ptxjit_kernel_module(void **out, ptxjit_kernel *kernel);
/* The CUcontext ptxjit works in: the device's primary context (retained until
 * ptxjit_close()). */
ptxjit_status ptxjit_cuda_context(void **out, ptxjit_context *context);

/* ---- High-level operations ---- */
/* Sums n elements at input (dtype from params: i32 or f32) with the reduce kernel that params
 * select, and writes the sum to *result_host (an int32_t or a float). int32 sums wrap modulo
 * 2^32. Any n >= 1 and any element-aligned input address. */
ptxjit_status ptxjit_reduce(ptxjit_context *context, const char *params, ptxjit_devptr input,
                            size_t n, void *result_host);
/* The same, asynchronous: the sum lands in device memory at result_device on stream. */
ptxjit_status ptxjit_reduce_async(ptxjit_context *context, const char *params,
                                  ptxjit_devptr input, size_t n, ptxjit_devptr result_device,
                                  void *stream);

/* Writes the transpose of the rows x cols row-major matrix at input (elements of the params'
 * dtype: f32, f16, bf16, f64) to output, a cols x rows row-major matrix, on stream (NULL: the
 * default stream). Bit-exact. The TMA variants need 16-byte aligned buffers and rows that are
 * a multiple of 16 bytes in both matrices (the tensor maps' strides); variant=smem takes any
 * shape. Every variant counts rows and cols in 32 bits: at most 4294967295 each, else
 * PTXJIT_ERR_INVALID_ARGUMENT. */
ptxjit_status ptxjit_transpose(ptxjit_context *context, const char *params, ptxjit_devptr input,
                               ptxjit_devptr output, size_t rows, size_t cols, void *stream);

/* C = A·B for row-major A (m x k), B (k x n) and C (m x n) with the kernel that params select
 * (dtype: f32 for the SIMT, tensor_core and wgmma_tf32 variants, bf16/f16 for wgmma; fp8:
 * e4m3/e5m2 for wgmma_fp8; out: C's type), on stream (NULL: the default stream). Accumulates in
 * fp32. The SIMT variants take any shape; tensor_core needs k and n multiples of 4 and 16-byte
 * aligned a and b; the wgmma variants n a multiple of 8, rows of A and B a multiple of 16
 * bytes (k a multiple of 8 for 16-bit inputs, 4 for tf32, 16 for fp8) and 16-byte aligned a
 * and b (any m); with b_layout=nk (wgmma_tf32's and wgmma_fp8's default) B is given as its
 * transpose, an n x k row-major matrix; store=tma needs a 16-byte aligned c. A wgmma request
 * that names no parameter of the tile (mma, bm, consumers, stages, sched, group, cluster,
 * store) gets a smaller tile where the default tiles would leave SMs idle (few rows, or a last
 * wave nearly empty: docs/ARCHITECTURE.md, "The tile for the shape"). The same as
 * ptxjit_matmul_ex with epilogue NULL. */
ptxjit_status ptxjit_matmul(ptxjit_context *context, const char *params, ptxjit_devptr a,
                            ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n, size_t k,
                            void *stream);

/* The launch values of the wgmma variants' fused epilogue, C = act(alpha·A·B + beta·C + bias):
 * which terms exist is compile-time (params alpha=scaled, beta=scaled, bias=column,
 * act=relu|gelu; wgmma_fp8 always scales), their values are these. */
typedef struct {
    float alpha;        /* alpha=scaled: the product's factor */
    float beta;         /* beta=scaled: the factor of C's values before the call */
    ptxjit_devptr bias; /* bias=column: n floats (f32, 4-byte aligned), bias[j] on column j */
    float a_scale;      /* wgmma_fp8: A's values are a_scale times its fp8 elements */
    float b_scale;      /* wgmma_fp8: B's likewise */
} ptxjit_matmul_epilogue;
/* alpha 1, beta 0, no bias, scales 1: what ptxjit_matmul uses. */
void ptxjit_matmul_epilogue_init(ptxjit_matmul_epilogue *epilogue);
/* ptxjit_matmul with the epilogue's values (NULL: ptxjit_matmul_epilogue_init's). A value
 * that the params do not use must be its default (alpha 1, beta 0, bias 0, scales 1; else
 * PTXJIT_ERR_INVALID_ARGUMENT naming the parameter that uses it), and bias=column needs a bias
 * address. */
ptxjit_status ptxjit_matmul_ex(ptxjit_context *context, const char *params, ptxjit_devptr a,
                               ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n, size_t k,
                               const ptxjit_matmul_epilogue *epilogue, void *stream);

/* Where the matrices of a product lie, as cublasGemmStridedBatchedEx takes them (row-major
 * here): the rows of A, B and C are lda, ldb and ldc elements apart (0: their row length, k,
 * n (b_layout=nk: k) and n — dense); a strided batch of `batch` products has product i's A, B
 * and C at i·stride_a, i·stride_b and i·stride_c elements from a, b and c. A stride_a or
 * stride_b of 0 gives every product the same matrix; C's matrices may not overlap. */
typedef struct {
    size_t lda, ldb, ldc;
    size_t batch; /* products; 0 is taken as 1 */
    size_t stride_a, stride_b, stride_c;
} ptxjit_matmul_layout;
/* Dense rows, one product. */
void ptxjit_matmul_layout_init(ptxjit_matmul_layout *layout);
/* ptxjit_matmul_ex on the matrices of layout (NULL: ptxjit_matmul_layout_init's). The wgmma
 * variants built from the template run every product in one launch and read and write the
 * rows where they lie (rows or strides that are not whole 16-byte units, or buffers that are
 * not 16-byte aligned, are copied: `ptxjit run --plan` says when); the other kernels run once
 * per product, on dense copies where the rows are not dense. A layout that cannot hold the
 * product (lda < k, ...; C's matrices overlapping) is PTXJIT_ERR_INVALID_ARGUMENT naming the
 * value. The epilogue applies to every product (the same bias). */
ptxjit_status ptxjit_matmul_strided(ptxjit_context *context, const char *params, ptxjit_devptr a,
                                    ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n,
                                    size_t k, const ptxjit_matmul_layout *layout,
                                    const ptxjit_matmul_epilogue *epilogue, void *stream);

/* Writes the row-wise softmax of the rows x cols row-major matrix at input to output (same
 * shape; elements of the params' dtype: f32, f16, bf16), on stream (NULL: the default stream):
 * out[r][c] = exp(in[r][c] - max_r) / sum over c' of exp(in[r][c'] - max_r). The math is fp32
 * (exp through ex2.approx: within about 1e-6 relative of float64 for f32 outputs; f16 and bf16
 * outputs are rounded once more). variant=online (the default) holds a row in registers, one
 * read and one write of the matrix, and takes cols up to tpr * vec * items (a longer row is
 * refused, naming the limit); variant=block takes any cols up to 2^31 - 1, reading each row
 * twice. Any rows and cols >= 1 and element-aligned buffers; buffers aligned to vec elements
 * with cols a multiple of vec take vector accesses. input and output may be the same buffer
 * (in place); buffers that overlap otherwise are refused. */
ptxjit_status ptxjit_softmax(ptxjit_context *context, const char *params, ptxjit_devptr input,
                             ptxjit_devptr output, size_t rows, size_t cols, void *stream);

/* ---- Autotuning (docs/TUNING.md) ----
 * A template declares which parameters are tuned and over which values (`//@ptxjit tune PARAM
 * VALUES`); ptxjit_tune compiles every point of that space that the schema accepts (in
 * parallel; with the template's space, plus the request a built-in family's op fits to the
 * problem where its fit changes the defaults), runs each on the problem (built-in families:
 * their op on random inputs of the problem's shape; user families: the caller's run
 * callback), checks its result against the
 * configuration of the fixed parameters alone, times it on the GPU and picks a winner. The
 * record is kept in the disk cache (and in the context): a later ptxjit_tune of the same
 * problem, and a request's PARAM=auto, find it without timing anything. */

/* Launches one candidate on stream (ptxjit_launch with kernel); user is the options' user. */
typedef ptxjit_status (*ptxjit_tune_run_fn)(void *user, ptxjit_kernel *kernel, void *stream);
/* After a run of kernel on stream has finished: PTXJIT_OK when its result is right (compare
 * with your reference); any other status excludes the candidate (ptxjit_last_error says why). */
typedef ptxjit_status (*ptxjit_tune_check_fn)(void *user, ptxjit_kernel *kernel, void *stream);
/* Progress: done of total candidates handled, the one just handled (params). */
typedef void (*ptxjit_tune_progress_fn)(void *user, int done, int total, const char *params);

typedef struct {
    /* The problem. Built-in families: the op's shape, "n=1073741824" (reduce; 2^30 is
     * accepted), "rows=16384 cols=16384" (transpose, softmax), "m=8192 n=8192 k=8192"
     * (matmul). User families: the caller's text naming the problem; it is part of the
     * record's key exactly as given. */
    const char *problem;
    const char *fixed;     /* fixed parameters, "dtype=bf16 variant=wgmma" (backend= too); a
                              fixed parameter is not tuned. NULL: none */
    const char *space;     /* "tpb=128,256 batch=4..16": replaces the template's values of the
                              parameters it names, and may tune others (the op's fitted request
                              is then not added). NULL: the template's */
    ptxjit_tune_run_fn run;     /* required for user families; for a built-in family it
                                   replaces the family's own op */
    ptxjit_tune_check_fn check; /* optional, with run: NULL accepts every result that ran */
    void *user;
    int threads;      /* compile threads; 0: the machine's cores */
    int runs;         /* timed runs of each candidate of the final round; 0: 10 (the rounds
                         before it time fewer: docs/TUNING.md, "Fast") */
    int retune;       /* 1: measure even when a record exists (and replace it) */
    int compile_only; /* 1: compile the whole space and stop (no GPU needed, no record): warms
                         the cache; the result lists each candidate's compile status */
    int exhaustive;   /* 1: no pruning of candidates that could run and no successive
                         halving: every candidate that can launch timed fully (a reference
                         sweep; implies retune, and its record replaces the space's) */
    ptxjit_tune_progress_fn progress; /* NULL: none */
    void *progress_user;
    int bucket;       /* PTXJIT_TUNE_BUCKET_EXACT (0): the record is of this problem;
                         PTXJIT_TUNE_BUCKET_POW2: of its bucket, each integer of the problem
                         rounded up to a power of two (timed at this problem): a later tuning
                         with the bucket of any problem in it, and auto for such a problem
                         without an exact record, take its winner */
} ptxjit_tune_options;

enum { PTXJIT_TUNE_BUCKET_EXACT = 0, PTXJIT_TUNE_BUCKET_POW2 = 1 };

/* Fills *options with the defaults above (all NULL and 0). */
void ptxjit_tune_options_init(ptxjit_tune_options *options);

typedef struct ptxjit_tune_result ptxjit_tune_result;

/* Tunes family for options->problem. *out is the caller's (ptxjit_tune_result_free). Without a
 * GPU only compile_only works: timing is refused with PTXJIT_ERR_NO_DEVICE. PTXJIT_ERR_PARAM:
 * a bad fixed parameter, space or problem, or a space with no valid point. No candidate that
 * ran right: PTXJIT_ERR_CUDA or the reference's own error. A candidate that leaves the GPU
 * context unusable (an illegal address: CUDA errors of that kind are sticky) ends the tuning
 * with PTXJIT_ERR_CUDA naming the candidate: the context cannot launch anything more and must
 * be closed (and the process's device reset) before the GPU is used again. */
ptxjit_status ptxjit_tune(ptxjit_tune_result **out, ptxjit_context *context, const char *family,
                          const ptxjit_tune_options *options);

typedef struct {
    const char *family;
    const char *problem;   /* canonical: "n=1073741824" */
    const char *fixed;     /* sorted */
    const char *space;     /* canonical: tuned parameters in declaration order */
    const char *winner;    /* the winner's canonical params; NULL when compile_only */
    const char *reference; /* the configuration every candidate's result was checked against */
    const char *device;    /* the GPU the times are from ("" when compile_only) */
    int from_record;       /* 1: found in a record (memory or disk), nothing timed now */
    const char *record_path; /* where the record is on disk; NULL: not stored (no disk cache,
                                compile_only, or a record kept in memory only) */
    int candidate_count;   /* the distinct points compiled (ptxjit_tune_result_candidate) */
    int points_considered, points_refused, points_merged; /* of the space's product */
    double best_ms;        /* the fastest candidate's median */
    double noise;          /* the tie band: candidates within best_ms * (1 + noise) are tied,
                              and the earliest of them in the space's order wins */
    double wall_ms;        /* how long the tuning took (the original one, for a record) */
    int compile_processes; /* compile worker processes that compiled candidates (0: every
                              compile in this process: no worker program, no disk cache, one
                              thread, or a family added from memory) */
    int candidates_pruned; /* compiled, never run: dropped by a pruning rule (each candidate's
                              message says which) */
    int candidates_timed;  /* ran right and were timed (in one round at least) */
    int rounds;            /* timing rounds of the successive halving (1: every candidate
                              timed fully, as an exhaustive sweep does; 0: nothing timed) */
} ptxjit_tune_info;

typedef struct {
    const char *params;    /* canonical */
    ptxjit_status status;  /* PTXJIT_OK: compiled and, unless pruned, ran with its result
                              right */
    const char *message;   /* why it was excluded (status), pruned or abandoned; "" for a
                              candidate timed to the final round */
    double median_ms;      /* of its last round's timed runs; 0 when not timed */
    double spread;         /* median absolute deviation of those runs over the median */
    int runs;              /* timed runs of its last round */
    int abandoned;         /* dropped by successive halving: clearly slower than its round's
                              best (the message says by how much); median_ms is that round's */
    int winner;            /* 1 for the winner */
    int pruned;            /* compiled but never run: it could not launch on the device, or
                              could not win (spills where others do not, a lower bound on its
                              time above a time measured); the message says which rule */
    int rounds;            /* timing rounds it took part in; 0: not timed */
} ptxjit_tune_candidate;

ptxjit_status ptxjit_tune_result_info(ptxjit_tune_info *out, const ptxjit_tune_result *result);
/* Candidate index (0 <= index < candidate_count), in the space's order. */
ptxjit_status ptxjit_tune_result_candidate(ptxjit_tune_candidate *out,
                                           const ptxjit_tune_result *result, int index);
void ptxjit_tune_result_free(ptxjit_tune_result *result);

/* The records in the disk cache, one result each (from_record = 1);
 * *out is the caller's: ptxjit_tune_list_free. */
ptxjit_status ptxjit_tune_list(ptxjit_tune_result ***out, int *count, ptxjit_context *context);
void ptxjit_tune_list_free(ptxjit_tune_result **list, int count);
/* Removes every tuning record (disk and this context's); kernels stay. *removed: how many
 * files (may be NULL). */
ptxjit_status ptxjit_tune_clear(ptxjit_context *context, uint64_t *removed);

/* PARAM=auto: ptxjit_get_kernel for the problem (as ptxjit_tune_options.problem writes it):
 * each auto parameter takes the value of the winner of the last tuning of family for this
 * problem, fixed parameters (the request's other words) and device; without one, of the last
 * tuning of the problem's pow2 bucket (ptxjit_tune_options.bucket) whose winner can run this
 * problem. With no such record (or one whose winner disagrees with the request's other
 * parameters) the auto parameters take their defaults, and an INFO log line says so: call
 * ptxjit_tune first to record one. The
 * family ops (ptxjit_reduce, ...) resolve auto the same way with the shape they are given,
 * and where no winner applies fit the defaults to that shape as for a request without the
 * auto words (ptxjit_plan). A request without auto is ptxjit_get_kernel. */
ptxjit_status ptxjit_get_kernel_tuned(ptxjit_kernel **out, ptxjit_context *context,
                                      const char *family, const char *params,
                                      const char *problem, ptxjit_origin *origin);

/* What a built-in family's op (ptxjit_reduce, ptxjit_transpose, ptxjit_matmul,
 * ptxjit_softmax) launches for params on a problem, with no GPU and no compile: *request the
 * kernel request in canonical form, *why (NULL when the request is taken as asked) why it
 * differs. An op answers any valid problem: where the variant the request leaves to the
 * defaults cannot run its shape, it takes one that can (transpose: variant=smem; softmax:
 * variant=block) — a request that names its variant is refused with that variant's reason,
 * as here; matmul's tile is fitted to the shape (on this GPU's SMs; 132 without a GPU), and
 * softmax's threads per row to the row (where the request names none of tpb, tpr, items).
 * PARAM=auto resolves as in ptxjit_get_kernel_tuned, except that auto words no winner
 * applies to leave their parameters to the defaults, fitted like any left out (*why says
 * which happened). problem as ptxjit_tune_options.problem
 * writes it ("rows=3344 cols=4859"; buffers taken as aligned). *request and *why are the
 * caller's (free()). */
ptxjit_status ptxjit_plan(char **request, char **why, ptxjit_context *context,
                          const char *family, const char *params, const char *problem);

/* ---- Warm-up ----
 * Compiles a list of requests into the cache at once (the tuner's pool: threads, and compile
 * worker processes where options.compile_worker allows), so that a program's first requests
 * are disk hits: in a container image's build, a deploy, a CI cache. */
typedef struct {
    int threads;                      /* 0: the machine's cores */
    ptxjit_tune_progress_fn progress; /* NULL: none; params is the request just handled */
    void *progress_user;
} ptxjit_warm_options;

typedef struct {
    const char *request;  /* as given: "FAMILY key=value ..." */
    ptxjit_status status; /* PTXJIT_OK: in the cache now */
    ptxjit_origin origin; /* PTXJIT_ORIGIN_COMPILED: compiled by this call; DISK, MEMORY
                             or SHARED: it was cached already */
    const char *message;  /* why it was refused; "" when status is PTXJIT_OK */
} ptxjit_warm_item;

typedef struct {
    int count;                  /* requests, items[0..count) in the given order */
    int compiled, cached, refused;
    int compile_processes;      /* compile worker processes that compiled (0: none) */
    double wall_ms;
    ptxjit_warm_item *items;
} ptxjit_warm_result;

/* Compiles requests[0..count) ("FAMILY key=value ...", one request each; PARAM=auto is
 * refused: it needs a problem, see ptxjit_get_kernel_tuned) into the memory and disk caches.
 * A request that fails is refused (its item says why); the call still succeeds. *out is the
 * caller's (ptxjit_warm_result_free). options may be NULL. */
ptxjit_status ptxjit_warm(ptxjit_warm_result **out, ptxjit_context *context,
                          const char *const *requests, int count,
                          const ptxjit_warm_options *options);
void ptxjit_warm_result_free(ptxjit_warm_result *result);

/* ---- Why a request missed ----
 * The request's key and its components, one "name value" line each (family, params, template
 * hash, backend, compiler, arch, specializer, each compiler option, each header the key covers
 * as "header PATH HASH"), then "disk: hit" or "disk: miss", and on a miss the entries of the
 * family in the disk cache that differ least ("nearest KEY: N differing", then one indented
 * line per difference: "compiler: nvrtc 12.8 -> nvrtc 13.0", "header PATH changed|added|
 * removed", "option -lineinfo added|removed", "template changed", "params: A -> B"), at most
 * three; entries stored before ptxjit kept their components are counted as unknown. With a
 * remote tier, then "remote: hit|miss (URL)" (a miss says when the entry there would be
 * rejected) and the nearest of the notes the server keeps of the family's newest entries
 * ("remote nearest KEY: ..."), or "remote: not reachable (URL)". Nothing is compiled, looked
 * up in memory or counted in the statistics (a failed exchange with the server still counts
 * toward its back-off, and tells REMOTE_ERROR). *out is the caller's (free()). */
ptxjit_status ptxjit_explain(char **out, ptxjit_context *context, const char *family,
                             const char *params, const char *compile_options);

/* ---- Disk cache ---- */
typedef struct {
    uint64_t entries, bytes;                    /* now on disk */
    uint64_t hits, misses, stores, corrupt;     /* since the cache was created or cleared */
    uint64_t evicted;                           /* entries removed to keep under the cap */
    uint64_t max_bytes;                         /* the cap this context keeps */
    uint64_t tune_records;                      /* tuning records on disk (ptxjit_tune);
                                                   entries counts kernels, bytes both */
    /* The remote cache, counted by every process that uses this cache directory: lookups that
     * found a valid entry, found none, found one that failed a check (never used), failed
     * (server unreachable, timeout); entries sent; time spent waiting on the server. */
    uint64_t remote_hits, remote_misses, remote_rejected, remote_errors;
    uint64_t remote_publishes, remote_ms;
    int remote_configured;                      /* 1: this context has a remote cache */
    /* One compile of a key at a time (docs/FLEET.md, "One compile per key"), counted by every
     * process that uses this cache directory: requests that found another process of this
     * directory compiling their key and waited for it, and those of them that stopped waiting
     * at the bound (ptxjit_options.compile_wait_ms) and compiled it themselves. */
    uint64_t compile_waits, compile_wait_timeouts;
    /* The fleet's: remote misses after which this node took the key's lease at once and
     * compiled it; requests that waited for another node's lease; and waits that ended without
     * the entry (its holder's lease expired, its holder gave it up having published nothing,
     * or the wait bound passed), after which this node compiled it. */
    uint64_t lease_wins, lease_waits, lease_timeouts;
    /* Kernels compiled by the processes of this cache directory (those that succeeded), the
     * milliseconds they took in all, and how many took at most 100 ms, 300 ms, 1 s, 3 s,
     * 10 s, 30 s: each counted in the first bound it fits (longer ones in none). */
    uint64_t compiles, compile_ms;
#define PTXJIT_COMPILE_BUCKETS 6
    uint64_t compile_buckets[PTXJIT_COMPILE_BUCKETS];
} ptxjit_cache_stats;
ptxjit_status ptxjit_cache_stats_get(ptxjit_cache_stats *out, ptxjit_context *context);
/* Removes every entry of this cache version (kernels and tuning records); returns how many
 * in *removed (may be NULL). */
ptxjit_status ptxjit_cache_clear(ptxjit_context *context, uint64_t *removed);
/* Evicts least recently used entries until the cache is under its cap (stores do this as
 * they go) and removes the temporary files that writers killed mid-store left more than an
 * hour ago. Counts in *evicted and *temp_files (either may be NULL). Another process's
 * eviction is waited for at most 30 s (then PTXJIT_ERR_IO, saying so). */
ptxjit_status ptxjit_cache_trim(ptxjit_context *context, uint64_t *evicted,
                                uint64_t *temp_files);

/* ---- Cache bundles ----
 * A bundle is a POSIX tar file (`tar tf` lists it) of cache entries and tuning records, each
 * under its path relative to the cache root ("v1/ab/<key>", "v1/ab/<key>.tune"): a cache for a
 * container image or an air-gapped machine. */
typedef struct {
    uint64_t entries, records; /* written (export) or published into the cache (import) */
    uint64_t corrupt;   /* failed the disk format's checks (size, checksum, key, version) */
    uint64_t foreign;   /* another cache version's, or not a cache file at all */
    uint64_t unsafe;    /* links, devices, absolute paths or ".." in a name: never written */
    uint64_t untrusted; /* export: entries a load of this cache refuses as untrusted (owned
                           by another user, or writable by others; docs/RELIABILITY.md), left
                           out of the bundle */
    uint64_t duplicates; /* import: members whose key an earlier member of the bundle had;
                            the first one's checks decided, these are not imported again */
} ptxjit_bundle_stats;
/* Writes the cache's entries (families: only those of these count families; count 0: all)
 * and tuning records to path, atomically (a temporary file renamed into place). An entry is
 * exported only if a load would trust it (else counted as untrusted). stats may be NULL.
 * PTXJIT_ERR_INVALID_ARGUMENT for a NULL family name (naming its index), PTXJIT_ERR_CACHE
 * without a disk cache, PTXJIT_ERR_IO when path cannot be written or an entry cannot be read
 * (one evicted meanwhile is left out). */
ptxjit_status ptxjit_cache_export(ptxjit_context *context, const char *path,
                                  const char *const *families, int count,
                                  ptxjit_bundle_stats *stats);
/* Publishes every member of the bundle at path into the cache, each checked first as a disk
 * load checks an entry (an entry for another architecture is kept: its key differs) and
 * stored atomically; bad members are skipped and counted in *stats (may be NULL), never
 * written, and a key given again is counted once, as a duplicate after the first.
 * PTXJIT_ERR_IO when path cannot be read (or is not a regular file: a FIFO is never waited
 * on), PTXJIT_ERR_CACHE when it is not a tar
 * file; a store that fails (a full disk) ends the import with its error, the members
 * published before it kept. */
ptxjit_status ptxjit_cache_import(ptxjit_context *context, const char *path,
                                  ptxjit_bundle_stats *stats);

/* ---- Ahead-of-time tables (docs/AOT.md) ----
 * `ptxjit aot LIST -o kernels.c` compiles a request list (the format of ptxjit warm) for one or
 * more architectures into one C file: the cubins as static data and a ptxjit_aot_table that
 * describes them. A program compiles that file in, registers the table with its context, and
 * the table's requests then answer as memory hits (PTXJIT_ORIGIN_MEMORY) for the context's
 * architecture — no disk cache read, no NVRTC, no LLVM, no compiler version looked up — from
 * ptxjit_get_kernel, the family ops and PARAM=auto alike. The entry for the context's arch is
 * taken where there is one (sm_90a on Hopper), else the newest plain sm_XY of the same major
 * version not above the device's (sm_80 on an sm_86 GPU); an "a" entry serves only its own
 * arch. A request the tables do not hold goes on to the caches and the compiler; where no
 * compiler can be loaded it fails with PTXJIT_ERR_NO_COMPILER naming the tables and the
 * request. An entry built from another text of its family's template than the context's
 * (the template hash differs: the template was edited, or another replaced it) is never
 * served: registering warns about it, and a request for it goes on as not held.
 *
 * Ownership: the table and everything it points to are the program's, static data in
 * practice (the generated file's); they must stay valid and unchanged while any context they
 * were registered with is open. ptxjit copies none of it: kernels point into it. */
#define PTXJIT_AOT_FORMAT 1

typedef struct {
    const char *request;         /* the list's line, as written */
    const char *family;
    const char *params;          /* canonical for arch (ptxjit_kernel_params) */
    const char *compile_options; /* canonical (ptxjit_kernel_compile_options); "" for none */
    const char *arch;            /* "sm_90a" */
    const char *backend;         /* "nvrtc" or "llvm" */
    const char *key;             /* ptxjit_kernel_key of the compile: 32 hex digits */
    const char *template_hash;   /* XXH3-128 of the template text it was built from, 32 hex */
    const char *compiler;        /* the compiler version its key holds: "nvrtc 12.8" */
    int entry_count;
    const char *const *entries;  /* the template's entries, in declared order */
    const unsigned char *cubin;
    size_t cubin_size;
    const char *ptx;             /* NULL: left out (ptxjit aot --no-ptx); ptxjit_kernel_ptx is
                                    then "" and ptxjit_launch_checked cannot check arguments */
} ptxjit_aot_kernel;

/* A tuning record's winner (ptxjit aot --from-records): what PARAM=auto resolves to for the
 * problem (or its pow2 bucket, "pow2: ...") and fixed parameters, on a context of arch whose
 * template is the one hashed. Looked at before the disk cache's records. */
typedef struct {
    const char *family;
    const char *backend;
    const char *arch;
    const char *problem;         /* canonical, as ptxjit_tune_info.problem */
    const char *fixed;           /* as ptxjit_tune_info.fixed */
    const char *winner;          /* canonical params, as ptxjit_tune_info.winner */
    const char *template_hash;
} ptxjit_aot_record;

typedef struct ptxjit_aot_table {
    int format;                  /* PTXJIT_AOT_FORMAT: a table of another format is refused */
    const char *name;            /* ptxjit aot --name; in messages */
    int kernel_count;
    const ptxjit_aot_kernel *kernels;
    int record_count;
    const ptxjit_aot_record *records;
} ptxjit_aot_table;

/* Registers table with context (after those registered before: the first table holding a
 * request serves it). Checks the table's format and every field (PTXJIT_ERR_INVALID_ARGUMENT
 * naming the table, the kernel and the field; nothing registered), and warns (log) of
 * entries whose template hash is not the context's template's. May run while other threads
 * ask for kernels. */
ptxjit_status ptxjit_register_aot(ptxjit_context *context, const ptxjit_aot_table *table);

/* ---- Compile options ----
 * Compiler flags for a request (backend=nvrtc), from a closed list so that no caller's text
 * becomes an arbitrary compiler option: NULL or "" for none, or whitespace-separated words,
 * each one of
 *   -DNAME, -DNAME=VALUE   a macro (NAME a C identifier; VALUE printable characters without
 *                          spaces, quotes or backslashes); a NAME given two values is refused
 *   -I DIR, -IDIR          an include directory; it must exist (searched in the given order,
 *                          after the template's own directory, before the toolkit's)
 *   -lineinfo              line information for profilers
 *   -use_fast_math         (or --use_fast_math) fast approximate math
 *   -G                     device debug information (slow code)
 * Anything else is PTXJIT_ERR_INVALID_ARGUMENT naming the word and the allowed forms. The
 * context's compile_options come first, then the request's. The options are part of the
 * cache key (each DIR by its resolved path) and of the disk cache's entry. backend=llvm takes
 * none: a request with any (the context's included) is PTXJIT_ERR_UNSUPPORTED, before any
 * compiler loads. The exact-request fast path holds (family, params, compile_options). */
ptxjit_status ptxjit_get_kernel_ex(ptxjit_kernel **out, ptxjit_context *context,
                                   const char *family, const char *params,
                                   const char *compile_options, ptxjit_origin *origin);
/* The kernel's compile options in canonical form: the defines in the given order, then
 * -IDIR for each include directory (as given), then -lineinfo, -use_fast_math, -G; "" when
 * none. Valid as long as the kernel. */
const char *ptxjit_kernel_compile_options(const ptxjit_kernel *kernel);

#ifdef __cplusplus
}
#endif
#endif

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
/* The calling thread's last error message: what failed, why, and how to fix it. "" if none.
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
                                  $PTXJIT_TEMPLATE_PATH and the built-in templates */
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
} ptxjit_options;

/* Fills *options with the defaults above. */
void ptxjit_options_init(ptxjit_options *options);

/* Opens a context. With no driver or no GPU it still opens (see ptxjit_gpu_status). */
ptxjit_status ptxjit_open(ptxjit_context **out, const ptxjit_options *options);
void ptxjit_close(ptxjit_context *context);

/* PTXJIT_OK when kernels can be loaded and launched; else why not (the message says). */
ptxjit_status ptxjit_gpu_status(ptxjit_context *context);
/* The target architecture the context compiles for, e.g. "sm_90a". */
const char *ptxjit_arch(const ptxjit_context *context);
/* The disk cache's root directory (versioned), or NULL when the disk cache is off. */
const char *ptxjit_cache_dir(const ptxjit_context *context);

/* ---- Families and their parameter schemas ---- */
int ptxjit_family_count(ptxjit_context *context);
const char *ptxjit_family_name(ptxjit_context *context, int index);
/* Where the family's template came from: "built-in:reduce.cu" or a file path. */
const char *ptxjit_family_origin(ptxjit_context *context, int index);
/* A readable description of the family's schema: parameters, types, allowed values, defaults,
 * docs and constraints. The string is owned by the context. */
ptxjit_status ptxjit_family_describe(const char **out, ptxjit_context *context,
                                     const char *family);
/* Validates "key=value ..." against the family's schema and writes the canonical form
 * (defaults filled, sorted by name) into a string the caller frees with free(). */
ptxjit_status ptxjit_canonical_params(char **out, ptxjit_context *context, const char *family,
                                      const char *params);

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
/* The kernel's entry points (extern "C" names), as ptxjit_launch takes them. */
ptxjit_status ptxjit_family_entry_count(int *out, ptxjit_context *context, const char *family);
ptxjit_status ptxjit_family_entry(const char **out, ptxjit_context *context, const char *family,
                                  int index);

/* ---- Kernels ---- */
typedef enum {
    PTXJIT_ORIGIN_COMPILED = 0, /* compiled by this call */
    PTXJIT_ORIGIN_DISK = 1,     /* read from the disk cache */
    PTXJIT_ORIGIN_MEMORY = 2    /* already in this context */
} ptxjit_origin;

/* The kernel for (family, params): validated, specialized, compiled or found in a cache. The
 * kernel is not yet loaded on the GPU, so this works without one. *origin may be NULL. */
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
/* What the route of (family, params) compiles — the specialized CUDA source (backend=nvrtc)
 * or the generated LLVM IR (backend=llvm) — without compiling it and without the caches: also
 * for a request whose compile fails. The parameters are validated as for ptxjit_get_kernel.
 * *out is the caller's (free()). */
ptxjit_status ptxjit_specialize(char **out, ptxjit_context *context, const char *family,
                                const char *params);
int ptxjit_kernel_entry_count(const ptxjit_kernel *kernel);
const char *ptxjit_kernel_entry_name(const ptxjit_kernel *kernel, int index);

typedef struct {
    int registers;       /* per thread */
    int static_smem;     /* bytes */
    int local_bytes;     /* per thread; nonzero means spills or stack arrays */
    int max_threads;     /* per block */
} ptxjit_kernel_resources;
/* Loads the kernel (once per context) and reads the resources of one entry. Needs a GPU. */
ptxjit_status ptxjit_kernel_resources_get(ptxjit_kernel_resources *out, ptxjit_kernel *kernel,
                                          const char *entry);

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
 * shape. */
ptxjit_status ptxjit_transpose(ptxjit_context *context, const char *params, ptxjit_devptr input,
                               ptxjit_devptr output, size_t rows, size_t cols, void *stream);

/* C = A·B for row-major A (m x k), B (k x n) and C (m x n) with the kernel that params select
 * (dtype: f32 for the SIMT and tensor_core variants, bf16/f16 for wgmma; out: C's type), on
 * stream (NULL: the default stream). Accumulates in fp32. The SIMT variants take any shape;
 * tensor_core needs k and n multiples of 4 and 16-byte aligned a and b; wgmma k and n
 * multiples of 8 and 16-byte aligned a and b (any m). */
ptxjit_status ptxjit_matmul(ptxjit_context *context, const char *params, ptxjit_devptr a,
                            ptxjit_devptr b, ptxjit_devptr c, size_t m, size_t n, size_t k,
                            void *stream);

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

/* ---- Disk cache ---- */
typedef struct {
    uint64_t entries, bytes;                    /* now on disk */
    uint64_t hits, misses, stores, corrupt;     /* since the cache was created or cleared */
    uint64_t evicted;                           /* entries removed to keep under the cap */
    uint64_t max_bytes;                         /* the cap this context keeps */
} ptxjit_cache_stats;
ptxjit_status ptxjit_cache_stats_get(ptxjit_cache_stats *out, ptxjit_context *context);
/* Removes every entry of this cache version; returns how many in *removed (may be NULL). */
ptxjit_status ptxjit_cache_clear(ptxjit_context *context, uint64_t *removed);
/* Evicts least recently used entries until the cache is under its cap (stores do this as
 * they go) and removes the temporary files that writers killed mid-store left more than an
 * hour ago. Counts in *evicted and *temp_files (either may be NULL). */
ptxjit_status ptxjit_cache_trim(ptxjit_context *context, uint64_t *evicted,
                                uint64_t *temp_files);

#ifdef __cplusplus
}
#endif
#endif

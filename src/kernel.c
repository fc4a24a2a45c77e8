/* kernel.c — the request pipeline: parameters → key → memory cache → disk cache → compile,
 * with each key compiled once per context even when threads ask at once, and no lock held
 * while compiling. Also the kernel accessors, module loading and launch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "backend/compiler_id.h"
#include "backend/llvm.h"
#include "backend/llvm_plugin.h"
#include "backend/nvjitlink.h"
#include "backend/nvrtc.h"
#include "cache/key.h"
#include "context.h"
#include "specialize.h"

/* An exact (family, params text) seen before: the fast path of repeated requests. */
struct pj_alias {
    uint64_t hash;
    char *family, *params;
    ptxjit_kernel *kernel;
    pj_alias *next;
};

/* Runs on every request, hits included: one-shot hashes, no allocation. */
static uint64_t alias_hash(const char *family, const char *params)
{
    return pj_hash64(params, strlen(params), pj_hash64(family, strlen(family), 0));
}

/* Caller holds context->lock. */
static ptxjit_kernel *alias_find(ptxjit_context *context, uint64_t hash, const char *family,
                                 const char *params)
{
    for (pj_alias *a = context->aliases[hash % PJ_BUCKETS]; a; a = a->next)
        if (a->hash == hash && strcmp(a->family, family) == 0 && strcmp(a->params, params) == 0)
            return a->kernel;
    return NULL;
}

/* Caller holds context->lock. A failed allocation only loses the fast path. */
static void alias_add(ptxjit_context *context, uint64_t hash, const char *family,
                      const char *params, ptxjit_kernel *kernel)
{
    if (alias_find(context, hash, family, params))
        return;
    pj_alias *a = calloc(1, sizeof *a);
    if (!a)
        return;
    a->hash = hash;
    a->family = pj_strdup(family);
    a->params = pj_strdup(params);
    a->kernel = kernel;
    if (!a->family || !a->params) {
        free(a->family);
        free(a->params);
        free(a);
        return;
    }
    a->next = context->aliases[hash % PJ_BUCKETS];
    context->aliases[hash % PJ_BUCKETS] = a;
}

static ptxjit_kernel **kernel_slot(ptxjit_context *context, const pj_hash128 *key)
{
    ptxjit_kernel **slot = &context->kernels[key->low % PJ_BUCKETS];
    while (*slot && ((*slot)->key.low != key->low || (*slot)->key.high != key->high))
        slot = &(*slot)->next;
    return slot;
}

static void kernel_free(ptxjit_kernel *kernel)
{
    if (!kernel)
        return;
    if (kernel->loaded && kernel->context->driver)
        kernel->context->driver->cuModuleUnload(kernel->module);
    pj_request_free(&kernel->request);
    pj_artifact_free(&kernel->artifact);
    free(kernel->canonical);
    free(kernel->source);
    free(kernel->functions);
    free(kernel->shared_limits);
    free(kernel);
}

void pj_kernel_free_all(ptxjit_context *context)
{
    for (int b = 0; b < PJ_BUCKETS; b++) {
        for (ptxjit_kernel *k = context->kernels[b], *next; k; k = next) {
            next = k->next;
            kernel_free(k);
        }
        for (pj_alias *a = context->aliases[b], *next; a; a = next) {
            next = a->next;
            free(a->family);
            free(a->params);
            free(a);
        }
        context->kernels[b] = NULL;
        context->aliases[b] = NULL;
    }
}

/* The log's "NAME.cu(LINE): error" lines, each shown with the generated source around it. */
static void append_error_excerpts(pj_strbuf *sb, const char *log, const char *source)
{
    int shown = 0;
    for (const char *s = strstr(log, ".cu("); s && shown < 3; s = strstr(s + 1, ".cu(")) {
        int line = atoi(s + 4);
        if (line <= 0 || !strstr(s, "error"))
            continue;
        char *excerpt = pj_specialize_excerpt(source, line - 2, line + 2);
        pj_sb_appendf(sb, "\ngenerated source around line %d:\n%s", line, excerpt ? excerpt : "");
        free(excerpt);
        shown++;
    }
}

static ptxjit_status compile_error(ptxjit_kernel *kernel, const char *log)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s (%s): NVRTC failed for %s: %s\n--- compiler log ---\n%s",
               kernel->schema->family, kernel->canonical, kernel->context->arch,
               ptxjit_last_error(), log ? log : "(no log)");
    if (log && kernel->source)
        append_error_excerpts(&sb, log, kernel->source);
    pj_sb_appendf(&sb, "\n(template %s; see the whole source with 'ptxjit source %s %s')",
               kernel->schema->origin, kernel->schema->family, kernel->canonical);
    ptxjit_status status = pj_error(PTXJIT_ERR_COMPILE, "%s", sb.data ? sb.data : "");
    pj_sb_free(&sb);
    return status;
}

/* Each declared entry must be in the PTX, else launches would fail much later. */
static ptxjit_status check_entries(const ptxjit_kernel *kernel)
{
    for (int i = 0; i < kernel->schema->entry_count; i++) {
        char pattern[256];
        snprintf(pattern, sizeof pattern, ".entry %s(", kernel->schema->entries[i]);
        if (!strstr(kernel->artifact.ptx, pattern))
            return pj_error(PTXJIT_ERR_TEMPLATE,
                            "%s: entry '%s' is declared but not in the PTX; define it as "
                            "extern \"C\" __global__ in %s",
                            kernel->schema->family, kernel->schema->entries[i],
                            kernel->schema->origin);
    }
    return PTXJIT_OK;
}

static ptxjit_status fill_metadata(ptxjit_kernel *kernel)
{
    pj_artifact *a = &kernel->artifact;
    const pj_schema *schema = kernel->schema;
    a->family = pj_strdup(schema->family);
    a->params = pj_strdup(kernel->canonical);
    a->entries = calloc((size_t)schema->entry_count, sizeof *a->entries);
    if (!a->family || !a->params || !a->entries)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < schema->entry_count; i++) {
        a->entries[i] = pj_strdup(schema->entries[i]);
        if (!a->entries[i])
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        a->entry_count = i + 1;
    }
    return PTXJIT_OK;
}

static double clock_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* The LLVM route: IR generator → passes → PTX (the plugin) → cubin (nvJitLink). */
static ptxjit_status compile_llvm(ptxjit_kernel *kernel)
{
    ptxjit_status status = pj_llvm_compile(&kernel->artifact, &kernel->stages, &kernel->request,
                                        kernel->canonical, kernel->context->arch);
    kernel->ir_on_request = status == PTXJIT_OK;
    if (status == PTXJIT_OK)
        status = fill_metadata(kernel);
    if (status == PTXJIT_OK)
        status = check_entries(kernel);
    return status;
}

static ptxjit_status compile(ptxjit_kernel *kernel)
{
    ptxjit_context *context = kernel->context;
    if (kernel->backend == PJ_BACKEND_LLVM)
        return compile_llvm(kernel);
    double start = clock_ms();
    kernel->source = pj_specialize_source(&kernel->request, kernel->canonical);
    if (!kernel->source)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    char name[128], *log = NULL;
    snprintf(name, sizeof name, "%s.cu", kernel->schema->family);
    kernel->stages.generate_ms = clock_ms() - start;
    start = clock_ms();
    ptxjit_status status = pj_nvrtc_compile(&kernel->artifact, kernel->source, name,
                                         (const char *const *)context->options,
                                         context->option_count, &log);
    kernel->stages.compile_ms = clock_ms() - start;
    if (status == PTXJIT_ERR_COMPILE)
        status = compile_error(kernel, log);
    free(log);
    if (status == PTXJIT_OK && !kernel->artifact.cubin)
        status = pj_error(PTXJIT_ERR_COMPILE, "NVRTC gave no cubin for %s", context->arch);
    if (status == PTXJIT_OK)
        status = fill_metadata(kernel);
    if (status == PTXJIT_OK)
        status = check_entries(kernel);
    return status;
}

/* A disk entry whose recorded request differs from ours is not ours, whatever its key. */
static int artifact_matches(const ptxjit_kernel *kernel, const pj_artifact *a)
{
    if (strcmp(a->family, kernel->schema->family) != 0 || strcmp(a->params, kernel->canonical))
        return 0;
    if (a->entry_count != kernel->schema->entry_count)
        return 0;
    for (int i = 0; i < a->entry_count; i++)
        if (strcmp(a->entries[i], kernel->schema->entries[i]) != 0)
            return 0;
    return 1;
}

/* The memo of the compiler library each backend loads: NVRTC, or nvJitLink for llvm. */
static char *memo_path(ptxjit_context *context, pj_backend backend)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s/compiler%s", pj_disk_cache_dir(context->disk),
               backend == PJ_BACKEND_LLVM ? "-nvjitlink" : "");
    return pj_sb_take(&sb);
}

/* The llvm route's compiler: the LLVM built into the plugin, and nvJitLink. */
static void llvm_route_version(char out[64], const char *nvjitlink)
{
    /* Both names are short ("llvm 19.1.7", "nvjitlink 13.0"); a cut would only split keys. */
    int length = snprintf(out, 64, "%s, ", pj_llvm_version_string());
    if (length > 0 && length < 64)
        snprintf(out + length, (size_t)(64 - length), "%.40s", nvjitlink);
}

/* The compiler version for keys, found once per context and backend: through the disk
 * cache's memo when there is one, so that a disk hit never has to load the compiler. */
static ptxjit_status context_compiler_version(ptxjit_context *context, pj_backend backend,
                                              char out[64])
{
    pthread_mutex_lock(&context->lock);
    snprintf(out, 64, "%s", context->compiler_version[backend]);
    pthread_mutex_unlock(&context->lock);
    if (out[0])
        return PTXJIT_OK;
    char *memo = context->disk ? memo_path(context, backend) : NULL;
    char found[64];
    ptxjit_status status = pj_compiler_version_of(
        backend == PJ_BACKEND_LLVM ? &pj_compiler_nvjitlink : &pj_compiler_nvrtc, found, 64, memo);
    free(memo);
    if (status != PTXJIT_OK)
        return status;
    if (backend == PJ_BACKEND_LLVM)
        llvm_route_version(out, found);
    else
        snprintf(out, 64, "%s", found);
    pthread_mutex_lock(&context->lock);
    snprintf(context->compiler_version[backend], 64, "%s", out);
    pthread_mutex_unlock(&context->lock);
    return PTXJIT_OK;
}

/* The version of the compiler that really ran, to compare with the one in the key. */
static void compiled_version(char out[64], pj_backend backend)
{
    if (backend == PJ_BACKEND_LLVM)
        llvm_route_version(out, pj_nvjitlink_version_string());
    else
        snprintf(out, 64, "%s", pj_nvrtc_version_string());
}

/* Fills kernel->artifact from the disk cache or the compiler; runs without the lock. */
static ptxjit_status produce(ptxjit_kernel *kernel, ptxjit_origin *origin)
{
    ptxjit_context *context = kernel->context;
    if (context->disk) {
        int found = 0;
        pj_artifact cached = {0};
        if (pj_disk_cache_load(context->disk, kernel->key_hex, &cached, &found) == PTXJIT_OK &&
            found) {
            if (artifact_matches(kernel, &cached)) {
                kernel->artifact = cached;
                *origin = PTXJIT_ORIGIN_DISK;
                return PTXJIT_OK;
            }
            pj_log(&context->logger, PTXJIT_LOG_WARNING,
                   "cache entry %s holds another request (%s %s); recompiling",
                   kernel->key_hex, cached.family, cached.params);
            pj_artifact_free(&cached);
        }
    }
    ptxjit_status status = kernel->backend == PJ_BACKEND_LLVM ? PTXJIT_OK : pj_nvrtc_load();
    if (status == PTXJIT_OK)
        status = compile(kernel);
    if (status != PTXJIT_OK)
        return status;
    *origin = PTXJIT_ORIGIN_COMPILED;
    char actual[64];
    compiled_version(actual, kernel->backend);
    if (context->disk && strcmp(actual, kernel->compiler_version) != 0) {
        /* The memo named another compiler than the one that compiled this: keep the kernel
         * out of the disk cache, where its key would lie, and make the next process ask anew. */
        char *memo = memo_path(context, kernel->backend);
        pj_log(&context->logger, PTXJIT_LOG_WARNING,
               "%s changed (%s, the cache remembered %s); kernel not cached on disk",
               kernel->backend == PJ_BACKEND_LLVM ? "nvJitLink" : "NVRTC", actual,
               kernel->compiler_version);
        if (memo)
            unlink(memo);
        free(memo);
        return PTXJIT_OK;
    }
    if (context->disk && pj_disk_cache_store(context->disk, kernel->key_hex, &kernel->artifact))
        pj_log(&context->logger, PTXJIT_LOG_WARNING, "kernel not saved to the disk cache: %s",
               ptxjit_last_error());
    return PTXJIT_OK;
}

static ptxjit_status nvrtc_key(ptxjit_kernel *kernel)
{
    const ptxjit_context *context = kernel->context;
    pj_key_inputs inputs = {
        kernel->schema->family, kernel->canonical, kernel->schema->source, "nvrtc",
        kernel->compiler_version, context->arch, (const char *const *)context->options,
        context->option_count, PJ_SPECIALIZER_VERSION};
    return pj_cache_key(&kernel->key, &inputs);
}

/* The llvm route's code comes from the family's generator, not the template text: the key
 * names the generator and its version, the builder's version, LLVM and nvJitLink, and what
 * the NVPTX target and nvJitLink are asked for. */
static ptxjit_status llvm_key(ptxjit_kernel *kernel)
{
    const ptxjit_context *context = kernel->context;
    char generator[128];
    snprintf(generator, sizeof generator, "llvm IR generator %s v%d", kernel->schema->family,
             pj_llvm_generator_version(kernel->schema->family));
    char codegen[32];
    snprintf(codegen, sizeof codegen, "codegen-level=%d", PJ_LLVM_CODEGEN_LEVEL);
    const char *options[] = {"features=" PJ_LLVM_PTX_FEATURES, "passes=" PJ_LLVM_PASSES, codegen,
                             "nvjitlink=-O3"};
    pj_key_inputs inputs = {kernel->schema->family, kernel->canonical, generator, "llvm",
                            kernel->compiler_version, context->arch, options,
                            (int)PJ_ARRAY_SIZE(options), PJ_LLVM_BUILDER_VERSION};
    return pj_cache_key(&kernel->key, &inputs);
}

static ptxjit_status new_kernel(ptxjit_kernel **out, ptxjit_context *context,
                                const pj_schema *schema, const char *params)
{
    ptxjit_kernel *kernel = calloc(1, sizeof *kernel);
    if (!kernel)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    kernel->context = context;
    kernel->schema = schema;
    char *rest = NULL;
    ptxjit_status status = pj_backend_take(&kernel->backend, &rest, params,
                                        context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&kernel->request, schema, rest, pj_context_sm(context));
    free(rest);
    if (status != PTXJIT_OK) {
        free(kernel);
        return status;
    }
    kernel->canonical = pj_backend_canonical(pj_request_canonical(&kernel->request), kernel->backend);
    /* An unsupported (family, variant) fails here, before any compiler is loaded. */
    if (kernel->backend == PJ_BACKEND_LLVM)
        status = pj_llvm_check_request(&kernel->request);
    if (status == PTXJIT_OK)
        status = context_compiler_version(context, kernel->backend, kernel->compiler_version);
    if (status == PTXJIT_OK && !kernel->canonical)
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == PTXJIT_OK)
        status = kernel->backend == PJ_BACKEND_LLVM ? llvm_key(kernel) : nvrtc_key(kernel);
    if (status != PTXJIT_OK) {
        kernel_free(kernel);
        return status;
    }
    pj_hash_hex(&kernel->key, kernel->key_hex);
    *out = kernel;
    return PTXJIT_OK;
}

/* Takes the memory-cache slot for fresh's key: returns the ready kernel already there (fresh
 * is freed), or NULL when fresh was inserted and the caller must produce it. */
static ptxjit_kernel *claim_slot(ptxjit_context *context, ptxjit_kernel *fresh)
{
    pthread_mutex_lock(&context->lock);
    for (;;) {
        ptxjit_kernel **slot = kernel_slot(context, &fresh->key);
        if (!*slot) {
            *slot = fresh;
            pthread_mutex_unlock(&context->lock);
            return NULL;
        }
        if ((*slot)->ready) {
            ptxjit_kernel *existing = *slot;
            pthread_mutex_unlock(&context->lock);
            kernel_free(fresh);
            return existing;
        }
        /* Another thread compiles this key; it broadcasts when done or failed. */
        pthread_cond_wait(&context->compiled, &context->lock);
    }
}

static void publish(ptxjit_context *context, ptxjit_kernel *kernel, ptxjit_status status,
                    uint64_t alias, const char *family, const char *params)
{
    pthread_mutex_lock(&context->lock);
    if (status == PTXJIT_OK) {
        kernel->ready = 1;
        alias_add(context, alias, family, params, kernel);
    } else {
        ptxjit_kernel **slot = kernel_slot(context, &kernel->key);
        *slot = kernel->next;
    }
    pthread_cond_broadcast(&context->compiled);
    pthread_mutex_unlock(&context->lock);
}

ptxjit_status ptxjit_get_kernel(ptxjit_kernel **out, ptxjit_context *context, const char *family,
                                const char *params, ptxjit_origin *origin)
{
    ptxjit_origin ignored;
    if (!origin)
        origin = &ignored;
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    params = params ? params : "";
    uint64_t alias = alias_hash(family, params);
    pthread_mutex_lock(&context->lock);
    ptxjit_kernel *known = alias_find(context, alias, family, params);
    pthread_mutex_unlock(&context->lock);
    if (known) {
        *out = known;
        *origin = PTXJIT_ORIGIN_MEMORY;
        return PTXJIT_OK;
    }
    const pj_schema *schema;
    ptxjit_kernel *kernel = NULL;
    ptxjit_status status = pj_context_schema(&schema, context, family);
    if (status == PTXJIT_OK)
        status = new_kernel(&kernel, context, schema, params);
    if (status != PTXJIT_OK)
        return status;
    ptxjit_kernel *existing = claim_slot(context, kernel);
    if (existing) {
        pthread_mutex_lock(&context->lock);
        alias_add(context, alias, family, params, existing);
        pthread_mutex_unlock(&context->lock);
        *out = existing;
        *origin = PTXJIT_ORIGIN_MEMORY;
        return PTXJIT_OK;
    }
    status = produce(kernel, origin);
    publish(context, kernel, status, alias, family, params);
    if (status != PTXJIT_OK) {
        kernel_free(kernel);
        return status;
    }
    *out = kernel;
    return PTXJIT_OK;
}

const char *ptxjit_kernel_family(const ptxjit_kernel *k) { return k ? k->schema->family : NULL; }
const char *ptxjit_kernel_params(const ptxjit_kernel *k) { return k ? k->canonical : NULL; }
const char *ptxjit_kernel_key(const ptxjit_kernel *k) { return k ? k->key_hex : NULL; }
const char *ptxjit_kernel_ptx(const ptxjit_kernel *k) { return k ? k->artifact.ptx : NULL; }
const char *ptxjit_kernel_log(const ptxjit_kernel *k) { return k ? k->artifact.log : NULL; }

/* The llvm route prints its IR only when asked (printing is 3% of a compile, and 600 KB of
 * text for a wgmma kernel): the generator runs again, outside the lock. */
const char *ptxjit_kernel_source(const ptxjit_kernel *k)
{
    if (!k || k->backend != PJ_BACKEND_LLVM)
        return k ? k->source : NULL;
    ptxjit_kernel *kernel = (ptxjit_kernel *)k; /* a cache of the IR, not a change */
    ptxjit_context *context = kernel->context;
    pthread_mutex_lock(&context->lock);
    const char *source = kernel->source;
    int generate = !source && kernel->ir_on_request;
    pthread_mutex_unlock(&context->lock);
    if (!generate)
        return source;
    char *ir = pj_llvm_generate_ir(&kernel->request, kernel->canonical, context->arch);
    pthread_mutex_lock(&context->lock);
    if (!kernel->source) {
        kernel->source = ir;
        ir = NULL;
    }
    source = kernel->source;
    pthread_mutex_unlock(&context->lock);
    free(ir);
    return source;
}
int ptxjit_kernel_entry_count(const ptxjit_kernel *k) { return k ? k->artifact.entry_count : 0; }

const void *ptxjit_kernel_cubin(const ptxjit_kernel *kernel, size_t *size)
{
    if (size)
        *size = kernel ? kernel->artifact.cubin_size : 0;
    return kernel ? kernel->artifact.cubin : NULL;
}

const char *ptxjit_kernel_entry_name(const ptxjit_kernel *kernel, int index)
{
    if (!kernel || index < 0 || index >= kernel->artifact.entry_count)
        return NULL;
    return kernel->artifact.entries[index];
}

static int entry_index(const ptxjit_kernel *kernel, const char *entry)
{
    if (!entry)
        return 0;
    for (int i = 0; i < kernel->artifact.entry_count; i++)
        if (strcmp(kernel->artifact.entries[i], entry) == 0)
            return i;
    return -1;
}

static ptxjit_status load_module(ptxjit_kernel *kernel)
{
    ptxjit_context *context = kernel->context;
    const pj_driver *d = context->driver;
    ptxjit_status status = PJ_CU(d->cuModuleLoadData(&kernel->module, kernel->artifact.cubin),
                                 "cuModuleLoadData");
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "%s (%s) compiled for %s", kernel->schema->family,
                             kernel->canonical, context->arch);
    kernel->functions = calloc((size_t)kernel->artifact.entry_count, sizeof(CUfunction));
    kernel->shared_limits = calloc((size_t)kernel->artifact.entry_count, sizeof(int));
    if (!kernel->functions || !kernel->shared_limits)
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; status == PTXJIT_OK && i < kernel->artifact.entry_count; i++)
        status = PJ_CU(d->cuModuleGetFunction(&kernel->functions[i], kernel->module,
                                              kernel->artifact.entries[i]),
                       "cuModuleGetFunction");
    if (status != PTXJIT_OK) {
        d->cuModuleUnload(kernel->module);
        free(kernel->functions);
        free(kernel->shared_limits);
        kernel->functions = NULL;
        kernel->shared_limits = NULL;
        return status;
    }
    __atomic_store_n(&kernel->loaded, 1, __ATOMIC_RELEASE);
    return PTXJIT_OK;
}

ptxjit_status pj_kernel_load(ptxjit_kernel *kernel, const char *entry, int *index)
{
    if (!kernel)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "kernel is NULL");
    ptxjit_context *context = kernel->context;
    ptxjit_status status = pj_context_make_current(context);
    if (status != PTXJIT_OK)
        return status;
    *index = entry_index(kernel, entry);
    if (*index < 0)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "%s has no entry '%s'",
                        kernel->schema->family, entry);
    if (__atomic_load_n(&kernel->loaded, __ATOMIC_ACQUIRE))
        return PTXJIT_OK;
    pthread_mutex_lock(&context->lock);
    if (!kernel->loaded)
        status = load_module(kernel);
    pthread_mutex_unlock(&context->lock);
    return status;
}

/* A block gets more than 48 KiB of dynamic shared memory only once the function's limit is
 * raised; raised once per entry, to the largest size asked for so far. */
static ptxjit_status allow_shared_bytes(ptxjit_kernel *kernel, int index, unsigned bytes)
{
    ptxjit_context *context = kernel->context;
    ptxjit_status status = PTXJIT_OK;
    pthread_mutex_lock(&context->lock);
    if ((unsigned)kernel->shared_limits[index] < bytes) {
        status = PJ_CU(context->driver->cuFuncSetAttribute(
                           kernel->functions[index],
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes),
                       "cuFuncSetAttribute");
        if (status == PTXJIT_OK)
            kernel->shared_limits[index] = (int)bytes;
    }
    pthread_mutex_unlock(&context->lock);
    if (status != PTXJIT_OK)
        return pj_error_wrap(status, "%s (%s) asks for %u bytes of dynamic shared memory per "
                             "block, more than the device allows; choose smaller tiles",
                             kernel->schema->family, kernel->canonical, bytes);
    return status;
}

ptxjit_status pj_kernel_function(CUfunction *out, ptxjit_kernel *kernel, const char *entry,
                              unsigned shared_bytes)
{
    int index;
    ptxjit_status status = pj_kernel_load(kernel, entry, &index);
    if (status != PTXJIT_OK)
        return status;
    if (shared_bytes > 48 * 1024 &&
        (unsigned)__atomic_load_n(&kernel->shared_limits[index], __ATOMIC_ACQUIRE) < shared_bytes) {
        status = allow_shared_bytes(kernel, index, shared_bytes);
        if (status != PTXJIT_OK)
            return status;
    }
    *out = kernel->functions[index];
    return PTXJIT_OK;
}

ptxjit_status ptxjit_launch(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                            ptxjit_dim3 block, unsigned shared_bytes, void *stream, void **args)
{
    CUfunction function;
    ptxjit_status status = pj_kernel_function(&function, kernel, entry, shared_bytes);
    if (status != PTXJIT_OK)
        return status;
    const pj_driver *d = kernel->context->driver;
    return PJ_CU(d->cuLaunchKernel(function, grid.x, grid.y, grid.z, block.x, block.y, block.z,
                                   shared_bytes, (CUstream)stream, args, NULL),
                 "cuLaunchKernel");
}

ptxjit_status ptxjit_launch_cluster(ptxjit_kernel *kernel, const char *entry, ptxjit_dim3 grid,
                                    ptxjit_dim3 block, ptxjit_dim3 cluster, unsigned shared_bytes,
                                    void *stream, void **args)
{
    if (cluster.x == 1 && cluster.y == 1 && cluster.z == 1)
        return ptxjit_launch(kernel, entry, grid, block, shared_bytes, stream, args);
    if (!cluster.x || !cluster.y || !cluster.z || grid.x % cluster.x || grid.y % cluster.y ||
        grid.z % cluster.z)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "launch: a cluster of %u x %u x %u blocks must divide the grid of "
                        "%u x %u x %u; round the grid up to a multiple of it",
                        cluster.x, cluster.y, cluster.z, grid.x, grid.y, grid.z);
    CUfunction function;
    ptxjit_status status = pj_kernel_function(&function, kernel, entry, shared_bytes);
    if (status != PTXJIT_OK)
        return status;
    CUlaunchAttribute attribute;
    memset(&attribute, 0, sizeof attribute);
    attribute.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attribute.value.clusterDim.x = cluster.x;
    attribute.value.clusterDim.y = cluster.y;
    attribute.value.clusterDim.z = cluster.z;
    CUlaunchConfig config = {grid.x, grid.y, grid.z, block.x, block.y, block.z, shared_bytes,
                             (CUstream)stream, &attribute, 1};
    const pj_driver *d = kernel->context->driver;
    return PJ_CU(d->cuLaunchKernelEx(&config, function, args, NULL), "cuLaunchKernelEx");
}

ptxjit_status ptxjit_kernel_resources_get(ptxjit_kernel_resources *out, ptxjit_kernel *kernel,
                                          const char *entry)
{
    int index;
    ptxjit_status status = pj_kernel_load(kernel, entry, &index);
    if (status != PTXJIT_OK)
        return status;
    const pj_driver *d = kernel->context->driver;
    CUfunction f = kernel->functions[index];
    struct {
        int *slot;
        CUfunction_attribute which;
    } reads[] = {{&out->registers, CU_FUNC_ATTRIBUTE_NUM_REGS},
                 {&out->static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
                 {&out->local_bytes, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
                 {&out->max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(reads) && status == PTXJIT_OK; i++)
        status = PJ_CU(d->cuFuncGetAttribute(reads[i].slot, reads[i].which, f),
                       "cuFuncGetAttribute");
    return status;
}

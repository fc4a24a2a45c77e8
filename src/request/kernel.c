/* kernel.c — the request pipeline: exact request (front.c, alias.c) → parameters → route →
 * key → memory cache → disk cache → compile, with each key compiled once per context even
 * when threads ask at once (once per process where contexts share: share.c; once per cache
 * directory and fleet when processes do: produce_once), and no lock held while compiling.
 * What a kernel tells: kernel_info.c; loading and launching: gpu/launch.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "alias.h"
#include "aot.h"
#include "binary/ptx_params.h"
#include "cache/compile_lock.h"
#include "cache/copier.h"
#include "context.h"
#include "events.h"
#include "front.h"
#include "remote/remote.h"
#include "request/route.h"
#include "request/select.h"
#include "share.h"
#include "templates.h"
#include "util/latency.h"

/* Notes kernel as the answer to text (alias.h). Caller holds context->lock. generation: the
 * template registry's when the kernel's schema was found; a request that raced an add or a
 * reload leaves no alias, which could outlive the template it was made from. */
static void remember(ptxjit_context *context, uint64_t alias, const pj_request_text *text,
                     ptxjit_kernel *kernel, uint64_t generation)
{
    if (generation == pj_templates_generation(context))
        pj_alias_add(context, alias, text, kernel);
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
    /* Before the artifact: it counts the entries. */
    pj_ptx_entries_free(kernel->entry_params, kernel->artifact.entry_count);
    pj_request_free(&kernel->request);
    pj_share_release(kernel); /* a shared artifact is the process's: only its reference goes */
    pj_artifact_free(&kernel->artifact);
    pj_compile_options_free(&kernel->compile_options);
    pj_includes_free(&kernel->includes);
    free(kernel->template_dir);
    free(kernel->canonical);
    free(kernel->components);
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
        context->kernels[b] = NULL;
    }
    pj_aliases_free(context);
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
    a->options = pj_strdup(kernel->compile_options.resolved);
    a->entries = calloc((size_t)schema->entry_count, sizeof *a->entries);
    if (!a->family || !a->params || !a->options || !a->entries)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < schema->entry_count; i++) {
        a->entries[i] = pj_strdup(schema->entries[i]);
        if (!a->entries[i])
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        a->entry_count = i + 1;
    }
    return PTXJIT_OK;
}

/* The route's compile, then what every kernel must have: its metadata and its entries. */
static ptxjit_status compile(ptxjit_kernel *kernel)
{
    double started = pj_event_compile_start(kernel); /* events.h: NVTX range, events */
    ptxjit_status status = kernel->route->compile(kernel);
    if (status == PTXJIT_OK)
        status = fill_metadata(kernel);
    if (status == PTXJIT_OK)
        status = check_entries(kernel);
    pj_event_compile_end(kernel, status, started);
    return status;
}

/* A disk entry whose recorded request differs from ours is not ours, whatever its key. */
static int artifact_matches(const ptxjit_kernel *kernel, const pj_artifact *a)
{
    if (strcmp(a->family, kernel->schema->family) != 0 || strcmp(a->params, kernel->canonical))
        return 0;
    if (strcmp(a->options, kernel->compile_options.resolved) != 0)
        return 0;
    if (a->entry_count != kernel->schema->entry_count)
        return 0;
    for (int i = 0; i < a->entry_count; i++)
        if (strcmp(a->entries[i], kernel->schema->entries[i]) != 0)
            return 0;
    return 1;
}

/* The memo of the compiler library the route loads, in the cache directory. */
static char *memo_path(ptxjit_context *context, const pj_route *route)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, pj_disk_cache_dir(context->disk));
    pj_sb_append(&sb, "/");
    pj_sb_append(&sb, route->memo);
    return pj_sb_take(&sb);
}

/* The compiler version for keys, found once per context and route: through the disk cache's
 * memo when there is one, so that a disk hit never has to load the compiler. */
static ptxjit_status context_compiler_version(ptxjit_context *context, pj_backend backend,
                                              char out[64])
{
    pthread_mutex_lock(&context->lock);
    pj_copy_string(out, 64, context->compiler_version[backend]);
    pthread_mutex_unlock(&context->lock);
    if (out[0])
        return PTXJIT_OK;
    const pj_route *route = pj_route_of(backend);
    char *memo = context->disk ? memo_path(context, route) : NULL;
    ptxjit_status status = route->version(out, memo);
    free(memo);
    if (status != PTXJIT_OK)
        return status;
    pthread_mutex_lock(&context->lock);
    pj_copy_string(context->compiler_version[backend], 64, out);
    pthread_mutex_unlock(&context->lock);
    return PTXJIT_OK;
}

ptxjit_status pj_context_compiler_version(ptxjit_context *context, pj_backend backend,
                                         char out[64])
{
    return context_compiler_version(context, backend, out);
}

/* After a wait for another process's compile: the entry it left on disk, if it is this
 * request's (as produce's first look). 1 when kernel->artifact was filled. */
static int from_disk(ptxjit_kernel *kernel)
{
    ptxjit_context *context = kernel->context;
    int found = 0;
    pj_artifact cached = {0};
    if (!context->disk ||
        pj_disk_cache_load(context->disk, kernel->key_hex, &cached, &found) != PTXJIT_OK || !found)
        return 0;
    if (artifact_matches(kernel, &cached)) {
        kernel->artifact = cached;
        return 1;
    }
    pj_log(&context->logger, PTXJIT_LOG_WARNING,
           "cache entry %s holds another request (%s %s%s%s); recompiling", kernel->key_hex,
           cached.family, cached.params, *cached.options ? " " : "", cached.options);
    pj_artifact_free(&cached);
    return 0;
}

/* An entry of the remote tier, checked there and here (the request it holds), and stored on
 * disk for this machine's next process: as a copy, without fsyncs (the server still holds
 * it; see pj_disk_cache_store_copy), and later (after the request, cache/copier.h) unless
 * now: waiters on this key's compile lock look for it on disk. 1 when kernel->artifact was
 * filled; fetched is taken. */
static int take_fetched(ptxjit_kernel *kernel, pj_artifact *fetched, int now)
{
    ptxjit_context *context = kernel->context;
    if (!artifact_matches(kernel, fetched)) {
        pj_log(&context->logger, PTXJIT_LOG_WARNING,
               "remote cache entry %s holds another request (%s %s); recompiling",
               kernel->key_hex, fetched->family, fetched->params);
        pj_artifact_free(fetched);
        return 0;
    }
    kernel->artifact = *fetched;
    if (context->copier && !now)
        pj_copier_add(context->copier, kernel->key_hex, &kernel->artifact);
    else if (context->disk &&
             pj_disk_cache_store_copy(context->disk, kernel->key_hex, &kernel->artifact))
        pj_log(&context->logger, PTXJIT_LOG_WARNING, "kernel not saved to the disk cache: %s",
               ptxjit_last_error());
    return 1;
}

/* After a disk miss: one GET. *missing: the server answered that it holds no such key. */
static int from_remote(ptxjit_kernel *kernel, int *missing)
{
    pj_artifact fetched;
    int found = 0;
    *missing = pj_remote_fetch(kernel->context->remote, PJ_REMOTE_KERNEL, kernel->key_hex,
                               &fetched, &found);
    return found && take_fetched(kernel, &fetched, 0);
}

static ptxjit_status produce_once(ptxjit_kernel *kernel, struct pj_remote *remote,
                                  ptxjit_origin *origin);

/* Fills kernel->artifact from the disk cache, the remote cache or the compiler; runs without
 * the lock. */
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
                   "cache entry %s holds another request (%s %s%s%s); recompiling",
                   kernel->key_hex, cached.family, cached.params, *cached.options ? " " : "",
                   cached.options);
            pj_artifact_free(&cached);
        }
    }
    int missing = 0;
    if (context->remote && from_remote(kernel, &missing)) {
        *origin = PTXJIT_ORIGIN_REMOTE;
        return PTXJIT_OK;
    }
    return produce_once(kernel, missing ? context->remote : NULL, origin);
}

/* Compiles kernel and keeps the result: on disk (durably), then on the remote tier. *published:
 * the remote took it. */
static ptxjit_status compile_and_keep(ptxjit_kernel *kernel, int *published)
{
    ptxjit_context *context = kernel->context;
    *published = 0;
    ptxjit_status status = compile(kernel);
    if (status != PTXJIT_OK)
        return status;
    char actual[64];
    kernel->route->compiled_version(actual);
    if (context->disk && strcmp(actual, kernel->compiler_version) != 0) {
        /* The memo named another compiler than the one that compiled this: keep the kernel
         * out of the disk cache, where its key would lie, and make the next process ask anew. */
        char *memo = memo_path(context, kernel->route);
        pj_log(&context->logger, PTXJIT_LOG_WARNING,
               "%s changed (%s, the cache remembered %s); kernel not cached on disk",
               kernel->route->compiler, actual, kernel->compiler_version);
        if (memo)
            unlink(memo);
        free(memo);
        return PTXJIT_OK;
    }
    if (context->disk && !kernel->keep_off_disk &&
        pj_disk_cache_store(context->disk, kernel->key_hex, &kernel->artifact))
        pj_log(&context->logger, PTXJIT_LOG_WARNING, "kernel not saved to the disk cache: %s",
               ptxjit_last_error());
    else if (context->disk && !kernel->keep_off_disk) /* for `ptxjit explain` (issue 33) */
        pj_disk_cache_store_note(context->disk, kernel->key_hex, kernel->components);
    /* Locally first, then the fleet; the same rule keeps a kernel off both. */
    if (!kernel->keep_off_disk)
        *published = pj_remote_publish(context->remote, PJ_REMOTE_KERNEL, kernel->key_hex,
                                       &kernel->artifact);
    if (*published) /* for `ptxjit explain` on the other nodes */
        pj_remote_publish_note(context->remote, kernel->schema->family, kernel->key_hex,
                               kernel->components);
    return PTXJIT_OK;
}

/* For the fleet's wait: whether the entry turned up on this machine's disk meanwhile. */
static int on_disk_now(void *user)
{
    ptxjit_kernel *kernel = user;
    return pj_compile_lock_entry_there(kernel->context->disk, kernel->key_hex);
}

/* A miss of every cache: one process of the cache directory (the compile lock) and one node of
 * the fleet (the remote lease, when the server answered the miss: remote) compiles the key,
 * while the others wait, a bounded time, for the entry it leaves. A holder that fails or dies
 * only sends the others to compile. */
static ptxjit_status produce_once(ptxjit_kernel *kernel, struct pj_remote *remote,
                                  ptxjit_origin *origin)
{
    ptxjit_context *context = kernel->context;
    pj_compile_lock lock;
    struct timespec started, now;
    clock_gettime(CLOCK_MONOTONIC, &started);
    (void)pj_compile_lock_take(&lock, context->disk, kernel->key_hex, context->compile_wait_ms);
    /* One bound for both waits: what the local lock took is not waited again for the lease
     * (0 left: no lease, compile now). */
    clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t spent = (int64_t)(now.tv_sec - started.tv_sec) * 1000 +
                    (now.tv_nsec - started.tv_nsec) / 1000000;
    int wait_left = spent >= context->compile_wait_ms ? 0
                                                      : context->compile_wait_ms - (int)spent;
    ptxjit_status status = PTXJIT_OK;
    if (lock.entry_there && from_disk(kernel)) {
        *origin = PTXJIT_ORIGIN_DISK;
        pj_compile_lock_release(&lock);
        return PTXJIT_OK;
    }
    struct pj_lease *lease = NULL;
    pj_artifact fetched;
    pj_remote_claim_result claim =
        pj_remote_claim(&lease, &fetched, remote, PJ_REMOTE_KERNEL, kernel->key_hex, wait_left,
                        context->disk ? on_disk_now : NULL, kernel);
    if (claim == PJ_REMOTE_FETCHED && take_fetched(kernel, &fetched, 1)) {
        *origin = PTXJIT_ORIGIN_REMOTE;
    } else if (claim == PJ_REMOTE_LOCAL && from_disk(kernel)) {
        *origin = PTXJIT_ORIGIN_DISK;
    } else {
        int published = 0;
        status = compile_and_keep(kernel, &published);
        if (status == PTXJIT_OK)
            *origin = PTXJIT_ORIGIN_COMPILED;
        pj_remote_lease_end(lease, published);
    }
    pj_compile_lock_release(&lock);
    return status;
}

/* The context's compile options and then the request's, which only a route that compiles
 * with them may take. */
static ptxjit_status parse_compile_options(ptxjit_kernel *kernel, const char *options)
{
    ptxjit_status status = pj_compile_options_parse(&kernel->compile_options,
                                                    kernel->context->compile_options, options);
    if (status != PTXJIT_OK || kernel->route->takes_compile_options ||
        pj_compile_options_empty(&kernel->compile_options))
        return status;
    return pj_error(PTXJIT_ERR_UNSUPPORTED,
                    "%s (%s): compile options apply to backend=nvrtc; backend=%s generates its "
                    "kernels without a compiler to give '%s' to: leave the options out (also "
                    "the context's compile_options and $PTXJIT_COMPILE_OPTIONS) or use "
                    "backend=nvrtc",
                    kernel->schema->family, kernel->canonical, kernel->route->name,
                    kernel->compile_options.canonical);
}

/* The request of kernel: its backend word, parameters validated against the schema, route,
 * canonical form, compile options, and whether the route builds it (checked before any
 * compiler loads). On failure kernel->request may hold allocations: the caller frees as for
 * a kernel. */
static ptxjit_status parse_request(ptxjit_kernel *kernel, const char *params,
                                   const char *options)
{
    ptxjit_context *context = kernel->context;
    char *rest = NULL;
    ptxjit_status status = pj_backend_take(&kernel->backend, &rest, params,
                                           context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&kernel->request, kernel->schema, rest, pj_context_sm(context));
    free(rest);
    if (status != PTXJIT_OK)
        return status;
    kernel->route = pj_route_of(kernel->backend);
    kernel->canonical = pj_backend_canonical(pj_request_canonical(&kernel->request),
                                             kernel->backend);
    if (!kernel->canonical)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    status = parse_compile_options(kernel, options);
    if (status != PTXJIT_OK)
        return status;
    return kernel->route->check(&kernel->request);
}

static ptxjit_status new_kernel(ptxjit_kernel **out, ptxjit_context *context,
                                const pj_schema *schema, const pj_request_text *text)
{
    ptxjit_kernel *kernel = calloc(1, sizeof *kernel);
    if (!kernel)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    kernel->context = context;
    kernel->schema = schema;
    double start = pj_latency_start();
    ptxjit_status status = parse_request(kernel, text->params, text->options);
    pj_latency_stop(PJ_LATENCY_request, start);
    /* A registered AOT table's entry brings its key: no compiler version, no key to hash. */
    const ptxjit_aot_kernel *entry = status == PTXJIT_OK && context->aot ? pj_aot_find(kernel)
                                                                         : NULL;
    if (entry)
        status = pj_aot_take(kernel, entry);
    start = pj_latency_start();
    if (status == PTXJIT_OK && !entry)
        status = context_compiler_version(context, kernel->backend, kernel->compiler_version);
    pj_latency_stop(PJ_LATENCY_compiler, start);
    start = pj_latency_start();
    if (status == PTXJIT_OK && !entry)
        status = kernel->route->key(&kernel->key, kernel);
    pj_latency_stop(PJ_LATENCY_key, start);
    if (status != PTXJIT_OK) {
        status = pj_aot_refuse(kernel, status);
        kernel_free(kernel);
        return status;
    }
    if (!entry)
        pj_hash_hex(&kernel->key, kernel->key_hex);
    *out = kernel;
    return PTXJIT_OK;
}

/* What the route would compile, without compiling: no compiler version, key or cache. */
ptxjit_status ptxjit_specialize(char **out, ptxjit_context *context, const char *family,
                                const char *params)
{
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    *out = NULL;
    ptxjit_kernel request = {.context = context};
    ptxjit_status status = pj_context_schema(&request.schema, context, family);
    if (status == PTXJIT_OK)
        status = parse_request(&request, params ? params : "", NULL);
    if (status == PTXJIT_OK)
        status = request.route->source(out, &request);
    pj_request_free(&request.request);
    pj_compile_options_free(&request.compile_options);
    free(request.canonical);
    return status;
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
                    uint64_t alias, const pj_request_text *text, uint64_t generation)
{
    pthread_mutex_lock(&context->lock);
    if (status == PTXJIT_OK) {
        kernel->ready = 1;
        remember(context, alias, text, kernel, generation);
    } else {
        ptxjit_kernel **slot = kernel_slot(context, &kernel->key);
        *slot = kernel->next;
    }
    pthread_cond_broadcast(&context->compiled);
    pthread_mutex_unlock(&context->lock);
}

/* ptxjit_get_kernel_ex, told (events) or not. */
static ptxjit_status get_kernel(ptxjit_kernel **out, ptxjit_context *context,
                                const char *family, const char *params,
                                const char *compile_options, ptxjit_origin *origin)
{
    ptxjit_origin ignored;
    if (!origin)
        origin = &ignored;
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    pj_request_text text = {family, params ? params : "", compile_options ? compile_options : ""};
    uint64_t epoch = __atomic_load_n(&context->front_epoch, __ATOMIC_ACQUIRE);
    ptxjit_kernel *known = pj_front_find(context, epoch, text.family, text.params, text.options);
    if (known) {
        *out = known;
        *origin = PTXJIT_ORIGIN_MEMORY;
        return PTXJIT_OK;
    }
    uint64_t alias = pj_alias_hash(&text);
    known = pj_alias_find(context, alias, &text);
    if (known) {
        pj_front_note(context, epoch, text.family, text.params, text.options, known);
        *out = known;
        *origin = PTXJIT_ORIGIN_MEMORY;
        return PTXJIT_OK;
    }
    pj_template *template;
    uint64_t generation;
    ptxjit_kernel *kernel = NULL;
    double start = pj_latency_start();
    ptxjit_status status = pj_templates_find(&template, &generation, context, family);
    pj_latency_stop(PJ_LATENCY_schema, start);
    if (status == PTXJIT_OK)
        status = new_kernel(&kernel, context, pj_template_schema(template), &text);
    if (status != PTXJIT_OK)
        return status;
    ptxjit_kernel *existing = claim_slot(context, kernel);
    if (existing) {
        pthread_mutex_lock(&context->lock);
        remember(context, alias, &text, existing, generation);
        pthread_mutex_unlock(&context->lock);
        *out = existing;
        *origin = PTXJIT_ORIGIN_MEMORY;
        return PTXJIT_OK;
    }
    if (kernel->aot)
        *origin = PTXJIT_ORIGIN_MEMORY; /* the program's own static table */
    else
        status = pj_share_produce(kernel, origin, produce); /* produce, or another context's */
    publish(context, kernel, status, alias, &text, generation);
    if (status != PTXJIT_OK) {
        status = pj_aot_refuse(kernel, status);
        kernel_free(kernel);
        return status;
    }
    *out = kernel;
    return PTXJIT_OK;
}

/* ---- events (issue 33): a request told to options.on_event, start and end ---- */
/* Out of line: a context without a callback jumps straight to get_kernel. */
__attribute__((noinline, cold)) static ptxjit_status
get_kernel_told(ptxjit_kernel **out, ptxjit_context *context, const char *family,
                const char *params, const char *compile_options, ptxjit_origin *origin)
{
    ptxjit_origin got = PTXJIT_ORIGIN_COMPILED;
    pj_event_request_start(context, family ? family : "", params, compile_options);
    double started = pj_route_clock_ms();
    /* Whether this thread's memo answers: looked up once more here, so that get_kernel's
     * fast path carries nothing for the events. */
    int memo = out && family &&
               pj_front_find(context, __atomic_load_n(&context->front_epoch, __ATOMIC_ACQUIRE),
                             family, params ? params : "",
                             compile_options ? compile_options : "") != NULL;
    ptxjit_status status = get_kernel(out, context, family, params, compile_options, &got);
    double ms = pj_route_clock_ms() - started;
    if (origin)
        *origin = got;
    ptxjit_tier tier = status != PTXJIT_OK ? PTXJIT_TIER_NONE
                       : memo              ? PTXJIT_TIER_THREAD_MEMO
                       : (*out)->aot       ? PTXJIT_TIER_AOT /* a registered table's kernel */
                                           : pj_event_tier_of(got);
    pj_event_request_end(context, status == PTXJIT_OK ? *out : NULL, family ? family : "",
                         params, compile_options, tier, status, ms);
    return status;
}

ptxjit_status ptxjit_get_kernel_ex(ptxjit_kernel **out, ptxjit_context *context,
                                   const char *family, const char *params,
                                   const char *compile_options, ptxjit_origin *origin)
{
    if (__builtin_expect(context && context->on_event, 0))
        return get_kernel_told(out, context, family, params, compile_options, origin);
    return get_kernel(out, context, family, params, compile_options, origin);
}

ptxjit_status ptxjit_get_kernel(ptxjit_kernel **out, ptxjit_context *context, const char *family,
                                const char *params, ptxjit_origin *origin)
{
    return ptxjit_get_kernel_ex(out, context, family, params, NULL, origin);
}

/* ---- explain (issue 33): a request keyed, neither looked up nor produced ---- */
ptxjit_status pj_kernel_keyed(ptxjit_kernel **out, ptxjit_context *context, const char *family,
                              const char *params, const char *options)
{
    pj_request_text text = {family, params ? params : "", options ? options : ""};
    pj_template *template;
    uint64_t generation;
    ptxjit_status status = pj_templates_find(&template, &generation, context, family);
    if (status == PTXJIT_OK)
        status = new_kernel(out, context, pj_template_schema(template), &text);
    return status;
}

void pj_kernel_unkeyed(ptxjit_kernel *kernel)
{
    kernel_free(kernel);
}

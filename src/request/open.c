/* open.c — opening a context: options and environment, the target architecture and the
 * GPU, then the template registry (templates.c), the disk cache, the remote tier and its
 * copier; and closing one, in the order its parts depend on each other. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aot.h"
#include "cache/compile_lock.h"
#include "cache/copier.h"
#include "context.h"
#include "select.h"
#include "front.h"
#include "open_contexts.h"
#include "scratch.h"
#include "util/count.h"
#include "records/memo.h"
#include "remote/remote.h"
#include "templates.h"
#include "util/latency.h"

void ptxjit_options_init(ptxjit_options *options)
{
    memset(options, 0, sizeof *options);
    options->disk_cache = 1;
    options->use_gpu = 1;
    options->process_cache = 1;
}

static int device_attribute(ptxjit_context *context, CUdevice_attribute which)
{
    int value = 0;
    context->driver->cuDeviceGetAttribute(&value, which, context->device);
    return value;
}

/* The GPU is optional: failures are kept in gpu_status for the calls that need it. */
static void open_gpu(ptxjit_context *context)
{
    const pj_driver *driver = NULL;
    ptxjit_status status = pj_driver_get(&driver);
    int count = 0;
    if (status == PTXJIT_OK)
        status = PJ_CU(driver->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (status == PTXJIT_OK && context->device_ordinal >= count)
        status = pj_error(PTXJIT_ERR_NO_DEVICE, "device %d requested but %d present",
                          context->device_ordinal, count);
    if (status == PTXJIT_OK)
        status = PJ_CU(driver->cuDeviceGet(&context->device, context->device_ordinal),
                       "cuDeviceGet");
    if (status == PTXJIT_OK)
        status = PJ_CU(driver->cuDevicePrimaryCtxRetain(&context->cu_context, context->device),
                       "cuDevicePrimaryCtxRetain");
    context->gpu_status = status;
    if (status != PTXJIT_OK) {
        pj_copy_string(context->gpu_error, sizeof context->gpu_error, ptxjit_last_error());
        return;
    }
    context->driver = driver;
    context->sm_count = device_attribute(context, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
}

static int valid_arch(const char *arch)
{
    if (strncmp(arch, "sm_", 3) != 0 || arch[3] < '1' || arch[3] > '9')
        return 0;
    const char *s = arch + 3;
    while (*s >= '0' && *s <= '9')
        s++;
    return (*s == '\0' || ((*s == 'a' || *s == 'f') && s[1] == '\0')) && s - arch <= 6;
}

/* Options, then $PTXJIT_ARCH, then the device (with 'a' from sm_90 on, so that its
 * architecture-specific instructions are available), then sm_90a. */
static ptxjit_status choose_arch(ptxjit_context *context, const char *requested)
{
    const char *env = getenv("PTXJIT_ARCH");
    const char *arch = requested && *requested ? requested : env && *env ? env : NULL;
    if (arch) {
        if (!valid_arch(arch))
            return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                            "architecture '%s' is not of the form sm_NN, sm_NNa or sm_NNf "
                            "(e.g. sm_90a)",
                            arch);
        pj_copy_string(context->arch, sizeof context->arch, arch);
    } else if (context->gpu_status == PTXJIT_OK) {
        int major = device_attribute(context, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        int minor = device_attribute(context, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        snprintf(context->arch, sizeof context->arch, "sm_%d%d%s", major, minor,
                 major >= 9 ? "a" : "");
    } else {
        pj_copy_string(context->arch, sizeof context->arch, "sm_90a");
    }
    return PTXJIT_OK;
}

static int add_option(ptxjit_context *context, const char *prefix, const char *value)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, prefix);
    pj_sb_append(&sb, value);
    return (context->options[context->option_count++] = pj_sb_take(&sb)) != NULL;
}

/* The compile options; the toolkit include folder lets templates use cuda_fp16.h and
 * cuda_bf16.h. It goes last on the include path, after the dirs of each request (the route
 * puts it there), so that a user's header is never shadowed by a toolkit one. It is not
 * stat'ed here: a disk hit needs only its name (for the key), and NVRTC skips an include
 * directory that does not exist, as a C compiler does. */
static ptxjit_status choose_options(ptxjit_context *context)
{
    int ok = add_option(context, "-arch=", context->arch);
    ok &= add_option(context, "", "-std=c++17");
    const char *cuda = getenv("CUDA_HOME");
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, "-I");
    pj_sb_append(&sb, cuda && *cuda ? cuda : "/usr/local/cuda");
    pj_sb_append(&sb, "/include");
    ok &= (context->toolkit_include = pj_sb_take(&sb)) != NULL;
    return ok ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* The context's own compile options: the option, else $PTXJIT_COMPILE_OPTIONS; checked here
 * so that a bad word fails the open, not every request. */
static ptxjit_status choose_compile_options(ptxjit_context *context,
                                            const ptxjit_options *options)
{
    const char *env = getenv("PTXJIT_COMPILE_OPTIONS");
    const char *text = options->compile_options ? options->compile_options : env ? env : "";
    pj_compile_options parsed;
    ptxjit_status status = pj_compile_options_parse(&parsed, text, NULL);
    pj_compile_options_free(&parsed);
    if (status == PTXJIT_ERR_INVALID_ARGUMENT && !options->compile_options)
        return pj_error_wrap(status, "$PTXJIT_COMPILE_OPTIONS");
    if (status != PTXJIT_OK)
        return status;
    context->compile_options = pj_strdup(text);
    return context->compile_options ? PTXJIT_OK
                                    : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* options.confine_includes, else $PTXJIT_CONFINE_INCLUDES. A word that is neither on nor off
 * confines, with a warning: a switch a service sets for safety fails safe. */
static int choose_confinement(const ptxjit_options *options, const pj_logger *logger)
{
    if (options->confine_includes)
        return 1;
    const char *text = getenv("PTXJIT_CONFINE_INCLUDES");
    const int on = pj_switch_parse(text);
    if (on >= 0)
        return on;
    pj_log(logger, PTXJIT_LOG_WARNING,
           "PTXJIT_CONFINE_INCLUDES='%.64s' is neither 1 nor 0; includes are confined (the "
           "safe reading). Set it to 1, or to 0 to leave them free",
           text);
    return 1;
}

/* What a compile worker must be told to compile as this context does (pool/compile_pool.c). */
static ptxjit_status keep_worker_options(ptxjit_context *context, const ptxjit_options *options)
{
    if (options->template_path && !(context->template_path = pj_strdup(options->template_path)))
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (options->compile_worker && !(context->compile_worker = pj_strdup(options->compile_worker)))
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    return PTXJIT_OK;
}

static ptxjit_status open_disk_cache(ptxjit_context *context, const ptxjit_options *options)
{
    if (!options->disk_cache)
        return PTXJIT_OK;
    pj_disk_options disk = {options->cache_dir, options->cache_max_bytes, options->cache_shared};
    if (pj_disk_cache_open(&context->disk, &disk, &context->logger) != PTXJIT_OK) {
        /* Kernels still compile without a disk cache; say why it is off. */
        pj_log(&context->logger, PTXJIT_LOG_WARNING, "disk cache disabled: %s",
               ptxjit_last_error());
        context->disk = NULL;
    }
    return PTXJIT_OK;
}

static void close_context(ptxjit_context *context);

ptxjit_status ptxjit_open(ptxjit_context **out, const ptxjit_options *options)
{
    ptxjit_options defaults;
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_open: out is NULL");
    *out = NULL;
    if (!options) {
        ptxjit_options_init(&defaults);
        options = &defaults;
    }
    const char *backend = options->backend && *options->backend ? options->backend : "nvrtc";
    pj_backend default_backend;
    if (pj_backend_from_name(&default_backend, backend) != PTXJIT_OK)
        return PTXJIT_ERR_UNSUPPORTED;
    ptxjit_context *context = calloc(1, sizeof *context);
    if (!context)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_init(&context->lock, NULL);
    pthread_cond_init(&context->compiled, NULL);
    context->logger =
        (pj_logger){options->log, options->log_user, options->on_event, options->event_user};
    context->device_ordinal = options->device;
    context->process_cache = options->process_cache;
    context->on_event = options->on_event;
    context->event_user = options->event_user;
    context->default_backend = default_backend;
    context->gpu_status = PTXJIT_ERR_NO_DRIVER;
    context->front_epoch = pj_front_new_epoch();
    pj_copy_string(context->gpu_error, sizeof context->gpu_error,
                   "the GPU was turned off for this context (use_gpu = 0)");
    if (options->use_gpu)
        open_gpu(context);
    ptxjit_status status = choose_arch(context, options->arch);
    double start = pj_latency_start();
    if (status == PTXJIT_OK)
        status = pj_templates_open(context, options);
    pj_latency_stop(PJ_LATENCY_templates, start);
    start = pj_latency_start();
    if (status == PTXJIT_OK)
        status = open_disk_cache(context, options);
    pj_latency_stop(PJ_LATENCY_dirs, start);
    if (status == PTXJIT_OK)
        status = pj_remote_open(&context->remote, options->remote_cache,
                                options->remote_lease_ms,
                                context->disk ? pj_disk_cache_dir(context->disk) : NULL,
                                &context->logger);
    context->compile_wait_ms = pj_compile_wait_ms(options->compile_wait_ms, &context->logger);
    context->confine_includes = choose_confinement(options, &context->logger);
    if (context->remote && context->disk)
        context->copier = pj_copier_new(context->disk, &context->logger);
    if (status == PTXJIT_OK)
        status = choose_options(context);
    if (status == PTXJIT_OK)
        status = choose_compile_options(context, options);
    if (status == PTXJIT_OK)
        status = keep_worker_options(context, options);
    if (status == PTXJIT_OK)
        status = pj_aot_register_all(context, options->aot_tables);
    if (status == PTXJIT_OK && !pj_open_contexts_add(context))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status != PTXJIT_OK) {
        close_context(context);
        return status;
    }
    pj_error_clear();
    *out = context;
    return PTXJIT_OK;
}

/* Frees an open (or half-opened) context, in the order its parts depend on each other. */
static void close_context(ptxjit_context *context)
{
    pj_copier_free(context->copier); /* it reads the kernels' artifacts: first */
    /* Modules unload from their own context; the caller's comes back before the release. */
    CUcontext saved = NULL;
    if (context->driver)
        pj_gpu_enter(context, &saved);
    pj_scratch_free(context); /* after the GPU is done with it: before the modules go */
    pj_kernel_free_all(context);
    pj_tune_memo_free(context->tune_memo);
    if (context->driver) {
        pj_gpu_leave(context, saved);
        context->driver->cuDevicePrimaryCtxRelease(context->device);
    }
    pj_templates_close(context);
    pj_aot_free(context);
    for (int i = 0; i < context->option_count; i++)
        free(context->options[i]);
    free(context->toolkit_include);
    free(context->compile_options);
    free(context->template_path);
    free(context->compile_worker);
    pj_disk_cache_close(context->disk);
    pj_remote_close(context->remote);
    pthread_mutex_destroy(&context->lock);
    pthread_cond_destroy(&context->compiled);
    free(context);
}

void ptxjit_close(ptxjit_context *context)
{
    if (!context)
        return;
    /* From the context's own copier thread (an event callback, or a garbage collector run in
     * one) the close would join the thread it runs on: refused, the context left open. */
    if (pj_open_contexts_has(context) && pj_copier_is_own_thread(context->copier)) {
        pj_log(&context->logger, PTXJIT_LOG_WARNING,
               "ptxjit_close(%p) called on the context's own copier thread (from an event "
               "callback): not closed; close the context from a thread of the program's",
               (void *)context);
        return;
    }
    /* A second close (or a pointer never opened) would free freed memory: warn, touch
     * nothing. The default logger, since the context's own logger is in that memory. */
    if (!pj_open_contexts_remove(context)) {
        pj_log(NULL, PTXJIT_LOG_WARNING,
               "ptxjit_close(%p): not an open context (closed already?); ignored",
               (void *)context);
        return;
    }
    close_context(context);
}

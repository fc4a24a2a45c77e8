/* context.c — opening a context: options and environment, the template registry (user
 * directories first, then the built-in templates), the target architecture and the GPU. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "context.h"
#include "backend/route_llvm.h"
#include "backend/nvrtc.h"

extern const struct {
    const char *path;
    const char *text;
} pj_embedded_templates[];

void ptxjit_options_init(ptxjit_options *options)
{
    memset(options, 0, sizeof *options);
    options->disk_cache = 1;
    options->use_gpu = 1;
}

static ptxjit_status add_schema(ptxjit_context *context, const char *source, const char *origin)
{
    pj_schema *schema;
    ptxjit_status status = pj_schema_parse(&schema, source, origin);
    if (status != PTXJIT_OK)
        return status;
    if (pj_context_find_schema(context, schema->family)) {
        /* User directories come first, so a user template overrides a built-in one. */
        pj_log(&context->logger, PTXJIT_LOG_INFO, "%s: family %s already defined; ignored",
               origin, schema->family);
        pj_schema_free(schema);
        return PTXJIT_OK;
    }
    pj_schema **grown = realloc(context->schemas,
                                (size_t)(context->schema_count + 1) * sizeof *grown);
    if (!grown) {
        pj_schema_free(schema);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    context->schemas = grown;
    grown[context->schema_count++] = schema;
    return PTXJIT_OK;
}

static int compare_strings(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every *.cu file of dir, in name order, so that the first definition of a family is stable. */
static ptxjit_status load_template_dir(ptxjit_context *context, const char *dir)
{
    DIR *handle = opendir(dir);
    if (!handle)
        return pj_error(PTXJIT_ERR_TEMPLATE, "template directory %s: %s; fix the path in "
                        "PTXJIT_TEMPLATE_PATH or the template_path option", dir, strerror(errno));
    char *names[1024];
    int count = 0, out_of_memory = 0;
    for (struct dirent *e; (e = readdir(handle)) && count < 1024;) {
        size_t n = strlen(e->d_name);
        if (n > 3 && strcmp(e->d_name + n - 3, ".cu") == 0) {
            names[count] = pj_strdup(e->d_name);
            out_of_memory |= !names[count];
            count += names[count] != NULL;
        }
    }
    closedir(handle);
    qsort(names, (size_t)count, sizeof *names, compare_strings);
    ptxjit_status status =
        out_of_memory ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory") : PTXJIT_OK;
    for (int i = 0; i < count; i++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        char *text = NULL;
        if (status == PTXJIT_OK && (status = pj_read_file(&text, NULL, path)) == PTXJIT_OK)
            status = add_schema(context, text, path);
        free(text);
        free(names[i]);
    }
    return status;
}

static ptxjit_status load_template_path(ptxjit_context *context, const char *path)
{
    if (!path || !*path)
        return PTXJIT_OK;
    char *copy = pj_strdup(path), *save = NULL;
    if (!copy)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = PTXJIT_OK;
    for (char *dir = strtok_r(copy, ":", &save); dir && status == PTXJIT_OK;
         dir = strtok_r(NULL, ":", &save))
        status = load_template_dir(context, dir);
    free(copy);
    return status;
}

static ptxjit_status load_templates(ptxjit_context *context, const ptxjit_options *options)
{
    ptxjit_status status = load_template_path(context, options->template_path);
    if (status == PTXJIT_OK)
        status = load_template_path(context, getenv("PTXJIT_TEMPLATE_PATH"));
    for (int i = 0; status == PTXJIT_OK && pj_embedded_templates[i].path; i++) {
        char origin[256];
        snprintf(origin, sizeof origin, "built-in:%s", pj_embedded_templates[i].path);
        status = add_schema(context, pj_embedded_templates[i].text, origin);
    }
    return status;
}

const pj_schema *pj_context_find_schema(ptxjit_context *context, const char *family)
{
    for (int i = 0; i < context->schema_count; i++)
        if (strcmp(context->schemas[i]->family, family) == 0)
            return context->schemas[i];
    return NULL;
}

static int attribute(ptxjit_context *context, CUdevice_attribute which)
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
        snprintf(context->gpu_error, sizeof context->gpu_error, "%s", ptxjit_last_error());
        return;
    }
    context->driver = driver;
    context->sm_count = attribute(context, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
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
        snprintf(context->arch, sizeof context->arch, "%s", arch);
    } else if (context->gpu_status == PTXJIT_OK) {
        int major = attribute(context, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
        int minor = attribute(context, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
        snprintf(context->arch, sizeof context->arch, "sm_%d%d%s", major, minor,
                 major >= 9 ? "a" : "");
    } else {
        snprintf(context->arch, sizeof context->arch, "sm_90a");
    }
    return PTXJIT_OK;
}

static int add_option(ptxjit_context *context, const char *format, const char *value)
    PJ_PRINTF(2, 0);
static int add_option(ptxjit_context *context, const char *format, const char *value)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, format, value);
    return (context->options[context->option_count++] = pj_sb_take(&sb)) != NULL;
}

/* The compile options; the toolkit include folder lets templates use cuda_fp16.h and
 * cuda_bf16.h. */
static ptxjit_status choose_options(ptxjit_context *context)
{
    int ok = add_option(context, "-arch=%s", context->arch);
    ok &= add_option(context, "%s", "-std=c++17");
    const char *cuda = getenv("CUDA_HOME");
    char include[4096];
    snprintf(include, sizeof include, "%s/include",
             cuda && *cuda ? cuda : "/usr/local/cuda");
    struct stat st;
    if (stat(include, &st) == 0 && S_ISDIR(st.st_mode))
        ok &= add_option(context, "-I%s", include);
    return ok ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
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
    context->logger = (pj_logger){options->log, options->log_user};
    context->device_ordinal = options->device;
    context->default_backend = default_backend;
    context->gpu_status = PTXJIT_ERR_NO_DRIVER;
    snprintf(context->gpu_error, sizeof context->gpu_error,
             "the GPU was turned off for this context (use_gpu = 0)");
    if (options->use_gpu)
        open_gpu(context);
    ptxjit_status status = choose_arch(context, options->arch);
    if (status == PTXJIT_OK)
        status = load_templates(context, options);
    if (status == PTXJIT_OK)
        status = open_disk_cache(context, options);
    if (status == PTXJIT_OK)
        status = choose_options(context);
    if (status != PTXJIT_OK) {
        ptxjit_close(context);
        return status;
    }
    pj_error_clear();
    *out = context;
    return PTXJIT_OK;
}

void ptxjit_close(ptxjit_context *context)
{
    if (!context)
        return;
    /* Modules unload from their own context; the caller's comes back before the release. */
    CUcontext saved = NULL;
    if (context->driver)
        pj_gpu_enter(context, &saved);
    pj_kernel_free_all(context);
    if (context->driver) {
        pj_gpu_leave(context, saved);
        context->driver->cuDevicePrimaryCtxRelease(context->device);
    }
    for (int i = 0; i < context->schema_count; i++) {
        pj_schema_free(context->schemas[i]);
        if (context->descriptions)
            free(context->descriptions[i]);
    }
    free(context->descriptions);
    free(context->schemas);
    for (int i = 0; i < context->option_count; i++)
        free(context->options[i]);
    pj_disk_cache_close(context->disk);
    pthread_mutex_destroy(&context->lock);
    pthread_cond_destroy(&context->compiled);
    free(context);
}

ptxjit_status ptxjit_gpu_status(ptxjit_context *context)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "context is NULL");
    if (context->gpu_status != PTXJIT_OK)
        return pj_error(context->gpu_status, "%s", context->gpu_error);
    return PTXJIT_OK;
}

/* One cuCtxGetCurrent when ours is already current (the launch path's usual case). Where none
 * is current, ours stays current afterwards, as the CUDA runtime leaves its own: only a
 * context of the caller's is put back. */
ptxjit_status pj_gpu_enter(ptxjit_context *context, CUcontext *saved)
{
    *saved = NULL;
    if (context->gpu_status != PTXJIT_OK)
        return pj_error(context->gpu_status, "%s", context->gpu_error);
    CUcontext current = NULL;
    ptxjit_status status = PJ_CU(context->driver->cuCtxGetCurrent(&current), "cuCtxGetCurrent");
    if (status != PTXJIT_OK || current == context->cu_context)
        return status;
    status = PJ_CU(context->driver->cuCtxSetCurrent(context->cu_context), "cuCtxSetCurrent");
    if (status == PTXJIT_OK)
        *saved = current;
    return status;
}

void pj_gpu_leave(ptxjit_context *context, CUcontext saved)
{
    if (saved)
        context->driver->cuCtxSetCurrent(saved);
}

ptxjit_status pj_gpu_return(ptxjit_context *context, CUcontext saved, CUresult result,
                            const char *call)
{
    pj_gpu_leave(context, saved);
    return pj_driver_check(result, call);
}

int pj_context_sm(const ptxjit_context *context)
{
    return atoi(context->arch + 3); /* "sm_90a" -> 90; choose_arch checked the form */
}

const char *ptxjit_arch(const ptxjit_context *context)
{
    return context ? context->arch : NULL;
}

const char *ptxjit_cache_dir(const ptxjit_context *context)
{
    return context && context->disk ? pj_disk_cache_dir(context->disk) : NULL;
}

int ptxjit_family_count(ptxjit_context *context)
{
    return context ? context->schema_count : 0;
}

const char *ptxjit_family_name(ptxjit_context *context, int index)
{
    if (!context || index < 0 || index >= context->schema_count)
        return NULL;
    return context->schemas[index]->family;
}

const char *ptxjit_family_origin(ptxjit_context *context, int index)
{
    if (!context || index < 0 || index >= context->schema_count)
        return NULL;
    return context->schemas[index]->origin;
}

static ptxjit_status unknown_family(ptxjit_context *context, const char *family)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; i < context->schema_count; i++)
        pj_sb_appendf(&sb, "%s%s", i ? ", " : "", context->schemas[i]->family);
    ptxjit_status status = pj_error(PTXJIT_ERR_UNKNOWN_FAMILY,
                                    "unknown kernel family '%s'; known: %s (see 'ptxjit list')",
                                    family, sb.data ? sb.data : "none");
    pj_sb_free(&sb);
    return status;
}

ptxjit_status pj_context_schema(const pj_schema **out, ptxjit_context *context, const char *family)
{
    if (!context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "context and family must not be NULL");
    *out = pj_context_find_schema(context, family);
    return *out ? PTXJIT_OK : unknown_family(context, family);
}

/* What each backend compiles of the family: nvrtc every request; llvm what its generator
 * builds. Takes ownership of text. */
static char *describe_backends(char *text, const pj_schema *schema)
{
    if (!text)
        return NULL;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, text);
    free(text);
    const char *variants = pj_llvm_generator_variants(schema->family);
    pj_sb_append(&sb, "backends:\n  nvrtc  every request (the template, compiled by NVRTC)\n");
    if (!variants)
        pj_sb_append(&sb, "  llvm   not supported by this backend (no IR generator for the family)\n");
    else if (strncmp(schema->origin, "built-in:", 9) != 0)
        pj_sb_append(&sb, "  llvm   not supported by this backend (it generates the built-in template's "
                       "kernels; this one comes from a user directory)\n");
    else
        pj_sb_appendf(&sb, "  llvm   variants %s (IR generator v%d; backend=llvm)\n", variants,
                   pj_llvm_generator_version(schema->family));
    return pj_sb_take(&sb);
}

ptxjit_status ptxjit_family_describe(const char **out, ptxjit_context *context,
                                     const char *family)
{
    const pj_schema *schema;
    ptxjit_status status = pj_context_schema(&schema, context, family);
    if (status != PTXJIT_OK)
        return status;
    int index = 0;
    while (context->schemas[index] != schema)
        index++;
    pthread_mutex_lock(&context->lock);
    if (!context->descriptions)
        context->descriptions = calloc((size_t)context->schema_count, sizeof(char *));
    if (context->descriptions && !context->descriptions[index])
        context->descriptions[index] = describe_backends(pj_schema_describe(schema), schema);
    *out = context->descriptions ? context->descriptions[index] : NULL;
    pthread_mutex_unlock(&context->lock);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status ptxjit_canonical_params(char **out, ptxjit_context *context, const char *family,
                                      const char *params)
{
    const pj_schema *schema;
    ptxjit_status status = pj_context_schema(&schema, context, family);
    if (status != PTXJIT_OK)
        return status;
    pj_request request;
    pj_backend backend;
    char *rest = NULL;
    status = pj_backend_take(&backend, &rest, params, context->default_backend);
    if (status == PTXJIT_OK)
        status = pj_request_parse(&request, schema, rest, pj_context_sm(context));
    free(rest);
    if (status != PTXJIT_OK)
        return status;
    *out = pj_backend_canonical(pj_request_canonical(&request), backend);
    pj_request_free(&request);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* route_nvrtc.c — the NVRTC route: the family's template specialized by the request (the
 * prelude of compile-time constants, then the template text), compiled by NVRTC to PTX and a
 * cubin in one step, with the request's compile options and the template's directory, the
 * user's include dirs and the toolkit's on the include path, in that order. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compilers/compiler_id.h"
#include "compilers/nvrtc.h"
#include "request/route.h"
#include "request/key.h"
#include "request/includes.h"
#include "request/templates.h"
#include "request/specialize.h"

/* How many of the log's error lines the summary in ptxjit_last_error() quotes. */
#define PJ_SUMMARY_ERRORS 5

static ptxjit_status nvrtc_check(const pj_request *request)
{
    (void)request; /* NVRTC compiles every template; it may still fail, with its log */
    return PTXJIT_OK;
}

static ptxjit_status nvrtc_version(char out[64], const char *memo_path)
{
    return pj_compiler_version_of(&pj_compiler_nvrtc, out, 64, memo_path);
}

static void nvrtc_compiled_version(char out[64])
{
    snprintf(out, 64, "%s", pj_nvrtc_version_string());
}

/* NVRTC's arguments for kernel, in order: the context's (architecture, language), the
 * template's directory, the compile options (defines, the user's dirs, flags), the toolkit's
 * include dir last. The strings belong to their holders, but for template_include. */
typedef struct {
    const char *argv[PJ_NVRTC_MAX_OPTIONS];
    int count;
    char *template_include; /* "-I<template dir>" */
} nvrtc_args;

/* NVRTC's -minimal (12.4 and newer) leaves out the built-in header's texture, surface,
 * device-runtime and runtime-type declarations: about 4 ms of a reduce compile, the same
 * cubin. Only for templates that declare `nvrtc minimal` (a user's may use cudaError_t), and
 * only where the version in the key knows it, so the option is in the key as any other. */
static int nvrtc_takes_minimal(const char *compiler_version)
{
    const char *prefix = "nvrtc ";
    if (strncmp(compiler_version, prefix, strlen(prefix)) != 0)
        return 0;
    char *dot, *end;
    long long major = strtoll(compiler_version + strlen(prefix), &dot, 10);
    if (dot == compiler_version + strlen(prefix) || *dot != '.')
        return 0;
    long long minor = strtoll(dot + 1, &end, 10);
    if (end == dot + 1)
        return 0;
    return major > 12 || (major == 12 && minor >= 4);
}

/* -Ofc (NVRTC 12.8 and newer; older ones compile without it, at their full level). */
static int nvrtc_takes_fast_compile(const char *compiler_version)
{
    const char *prefix = "nvrtc ";
    if (strncmp(compiler_version, prefix, strlen(prefix)) != 0)
        return 0;
    char *dot, *end;
    long long major = strtoll(compiler_version + strlen(prefix), &dot, 10);
    if (dot == compiler_version + strlen(prefix) || *dot != '.')
        return 0;
    long long minor = strtoll(dot + 1, &end, 10);
    return end != dot + 1 && (major > 12 || (major == 12 && minor >= 8));
}

/* The template's `nvrtc fast_compile=LEVEL` as NVRTC's option, or NULL. */
static const char *fast_compile_option(const ptxjit_kernel *kernel)
{
    static const char *const options[] = {
#define PJ_FAST_COMPILE_OPTION(name) "-Ofc=" #name,
        PJ_FAST_COMPILE_LEVELS(PJ_FAST_COMPILE_OPTION)
#undef PJ_FAST_COMPILE_OPTION
    };
    int level = kernel->schema->nvrtc_fast_compile;
    if (level < 1 || level > (int)PJ_ARRAY_SIZE(options) ||
        !nvrtc_takes_fast_compile(kernel->compiler_version))
        return NULL;
    return options[level - 1];
}

static ptxjit_status make_args(nvrtc_args *out, const ptxjit_kernel *kernel)
{
    const ptxjit_context *context = kernel->context;
    const pj_compile_options *options = &kernel->compile_options;
    memset(out, 0, sizeof *out);
    for (int i = 0; i < context->option_count; i++)
        out->argv[out->count++] = context->options[i];
    if (kernel->schema->nvrtc_minimal && nvrtc_takes_minimal(kernel->compiler_version))
        out->argv[out->count++] = "-minimal";
    if (fast_compile_option(kernel)) /* before the bench's extra option, which then wins */
        out->argv[out->count++] = fast_compile_option(kernel);
    if (pj_nvrtc_extra_option())
        out->argv[out->count++] = pj_nvrtc_extra_option();
    if (kernel->template_dir) {
        pj_strbuf sb;
        pj_sb_init(&sb);
        pj_sb_append(&sb, "-I");
        pj_sb_append(&sb, kernel->template_dir);
        if (!(out->template_include = pj_sb_take(&sb)))
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        out->argv[out->count++] = out->template_include;
    }
    for (int i = 0; i < options->word_count; i++)
        out->argv[out->count++] = options->words[i];
    if (context->toolkit_include)
        out->argv[out->count++] = context->toolkit_include;
    return PTXJIT_OK;
}

/* The template's include path without the toolkit's: its own directory, then the user's. */
static int user_include_dirs(const char **out, const ptxjit_kernel *kernel)
{
    int count = 0;
    if (kernel->template_dir)
        out[count++] = kernel->template_dir;
    for (int i = 0; i < kernel->compile_options.include_dir_count; i++)
        out[count++] = kernel->compile_options.include_dirs[i];
    return count;
}

/* A define that asks __has_include or __has_embed (-DX=__has_include(</x>), then `#if X`)
 * names a file where the include scan never looks: refused where includes are confined. */
static ptxjit_status refuse_probing_defines(const ptxjit_kernel *kernel)
{
    const pj_compile_options *options = &kernel->compile_options;
    for (int i = 0; i < options->word_count; i++) {
        const char *word = options->words[i];
        if (strncmp(word, "-D", 2) == 0 &&
            (strstr(word, "__has_include") || strstr(word, "__has_embed")))
            return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                            "compile option '%s': a define that asks about a file cannot be "
                            "checked where includes are confined (the confine_includes option "
                            "or PTXJIT_CONFINE_INCLUDES); write __has_include in the template",
                            word);
    }
    return PTXJIT_OK;
}

/* Everything that goes into the compile: the template's text, every option (the include
 * path among them), and the headers the template can include, which kernel keeps for the
 * check after the compile. */
static ptxjit_status nvrtc_key(pj_hash128 *out, ptxjit_kernel *kernel)
{
    const ptxjit_context *context = kernel->context;
    const pj_schema *schema = kernel->schema;
    ptxjit_status status = pj_template_dir(&kernel->template_dir, schema->origin);
    if (status != PTXJIT_OK)
        return status;
    const char *dirs[PJ_COMPILE_OPTIONS_MAX + 1];
    int dir_count = user_include_dirs(dirs, kernel);
    /* The whole specialized source: the prelude's <cuda_bf16.h> could be a user's too. A
     * template from memory has no directory but may include a header by its absolute path;
     * a built-in one includes only the toolkit's (and is not specialized twice for it). */
    int scanned = dir_count || pj_origin_is_memory(schema->origin);
    char *text = scanned ? pj_specialize_source(&kernel->request, kernel->canonical) : NULL;
    if (scanned && !text)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    /* Confined, the toolkit's include dir (as NVRTC gets it: "-I<dir>") is allowed too. */
    pj_include_confinement confinement = {context->toolkit_include ? context->toolkit_include + 2
                                                                   : NULL};
    if (context->confine_includes)
        status = refuse_probing_defines(kernel);
    if (status == PTXJIT_OK)
        status = pj_includes_scan(&kernel->includes, text ? text : "", schema->origin,
                                  kernel->template_dir, dirs, dir_count,
                                  context->confine_includes ? &confinement : NULL,
                                  pj_templates_max_bytes(context));
    free(text);
    nvrtc_args args;
    if (status == PTXJIT_OK)
        status = make_args(&args, kernel);
    if (status != PTXJIT_OK)
        return status;
    pj_key_inputs inputs = {schema->family, kernel->canonical, schema->source, "nvrtc",
                            kernel->compiler_version, context->arch, args.argv, args.count,
                            PJ_SPECIALIZER_VERSION, &kernel->includes, &schema->source_hash,
                            &kernel->components};
    status = pj_cache_key(out, &inputs);
    free(args.template_include);
    return status;
}

/* The program's name. NVRTC looks for the template's `#include "x"` first in the directory of
 * this name: a file template's own path makes that the template's directory; a template
 * without a file gets a directory that cannot exist (/dev/null is no directory), so that the
 * process's working directory never supplies a header. */
static char *program_name(const ptxjit_kernel *kernel)
{
    const char *origin = kernel->schema->origin, *slash = strrchr(origin, '/');
    pj_strbuf sb;
    pj_sb_init(&sb);
    if (kernel->template_dir)
        pj_sb_appendf(&sb, "%s/%s", kernel->template_dir, slash ? slash + 1 : origin);
    else
        pj_sb_appendf(&sb, "/dev/null/%s.cu", kernel->schema->family);
    return pj_sb_take(&sb);
}

static ptxjit_status nvrtc_source(char **out, const ptxjit_kernel *kernel)
{
    *out = pj_specialize_source(&kernel->request, kernel->canonical);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* The log's first error lines, each as NVRTC wrote it. */
static int append_first_errors(pj_strbuf *sb, const char *log)
{
    int shown = 0, total = 0;
    for (const char *line = log; *line;) {
        size_t length = strcspn(line, "\n");
        if (memmem(line, length, "error", 5)) {
            if (shown < PJ_SUMMARY_ERRORS) {
                pj_sb_appendf(sb, "\n  %.*s", (int)length, line);
                shown++;
            }
            total++;
        }
        line += length + (line[length] == '\n');
    }
    return total - shown;
}

/* Where a log line points: "FILE(LINE): ..." gives FILE's length and LINE; 0 if it does not. */
static int cited_line(const char *line, size_t length, size_t *file_length)
{
    for (const char *paren = memchr(line, '(', length); paren;
         paren = memchr(paren + 1, '(', length - (size_t)(paren + 1 - line))) {
        const char *digits = paren + 1, *end = digits;
        while (end < line + length && *end >= '0' && *end <= '9')
            end++;
        if (end > digits && line + length - end >= 3 && strncmp(end, "): ", 3) == 0) {
            *file_length = (size_t)(paren - line);
            return atoi(digits);
        }
        if (paren + 1 >= line + length)
            break;
    }
    return 0;
}

/* The first two error lines that cite the template or the prelude, each with the lines
 * around it: the template's own (labelled with its origin), or the generated prelude's. An
 * error in a header is shown by its log line alone: the header is the user's own file. */
static void append_error_excerpts(pj_strbuf *sb, const char *log, const char *source,
                                  const pj_schema *schema)
{
    int shown = 0;
    for (const char *line = log; *line && shown < 2;) {
        size_t length = strcspn(line, "\n"), file_length = 0;
        int cited = memmem(line, length, "error", 5) ? cited_line(line, length, &file_length) : 0;
        int in_template = cited > 0 && file_length == strlen(schema->origin) &&
                          strncmp(line, schema->origin, file_length) == 0;
        int in_prelude = cited > 0 && file_length == strlen(PJ_PRELUDE_NAME) &&
                         strncmp(line, PJ_PRELUDE_NAME, file_length) == 0;
        if (in_template || in_prelude) {
            char *excerpt = pj_specialize_excerpt(in_template ? schema->source : source,
                                                  cited - 2, cited + 2);
            pj_sb_appendf(sb, "\n%s around line %d:\n%s",
                          in_template ? schema->origin : "the generated prelude", cited,
                          excerpt ? excerpt : "");
            free(excerpt);
            shown++;
        }
        line += length + (line[length] == '\n');
    }
}

/* The summary in ptxjit_last_error(); the whole log and source stay reachable through
 * ptxjit_last_compile_log() and ptxjit_last_compile_source(). */
static ptxjit_status compile_error(const ptxjit_kernel *kernel, const char *source,
                                   const char *log)
{
    pj_compile_failure(log ? log : "", source);
    pj_strbuf sb;
    pj_sb_init(&sb);
    const char *options = kernel->compile_options.canonical;
    pj_sb_appendf(&sb, "%s (%s%s%s): NVRTC failed for %s: %s", kernel->schema->family,
                  kernel->canonical, options && *options ? "; compile options " : "",
                  options ? options : "", kernel->context->arch, ptxjit_last_error());
    int more = log ? append_first_errors(&sb, log) : 0;
    if (more > 0)
        pj_sb_appendf(&sb, "\n  ... %d more error lines", more);
    if (log)
        append_error_excerpts(&sb, log, source, kernel->schema);
    pj_sb_appendf(&sb, "\n(template %s; the whole log: ptxjit_last_compile_log(); the "
                       "specialized source: ptxjit_last_compile_source(), or "
                       "ptxjit_specialize() without compiling)",
                  kernel->schema->origin);
    ptxjit_status status = pj_error(PTXJIT_ERR_COMPILE, "%s", sb.data ? sb.data : "");
    pj_sb_free(&sb);
    return status;
}

/* A header edited while NVRTC read it may be in the code in either version while the key
 * holds the hash of one: such a kernel is used, but never stored on disk under that key. */
static void check_headers_unchanged(ptxjit_kernel *kernel)
{
    const char *which = NULL;
    if (!pj_includes_changed(&kernel->includes, &which))
        return;
    kernel->keep_off_disk = 1;
    pj_log(&kernel->context->logger, PTXJIT_LOG_WARNING,
           "%s (%s): header %s changed (or could not be read again) while the kernel compiled; "
           "kernel not saved to the disk cache, the next request compiles it anew",
           kernel->schema->family, kernel->canonical, which);
}

static ptxjit_status nvrtc_route_compile(ptxjit_kernel *kernel)
{
    ptxjit_context *context = kernel->context;
    ptxjit_status status = pj_nvrtc_load();
    if (status != PTXJIT_OK)
        return status;
    double start = pj_route_clock_ms();
    char *source = NULL;
    status = nvrtc_source(&source, kernel);
    if (status != PTXJIT_OK)
        return status;
    char *name = program_name(kernel), *log = NULL;
    nvrtc_args args;
    status = name ? make_args(&args, kernel) : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status != PTXJIT_OK) {
        free(name);
        free(source);
        return status;
    }
    kernel->stages.generate_ms = pj_route_clock_ms() - start;
    start = pj_route_clock_ms();
    status = pj_nvrtc_compile(&kernel->artifact, source, name, args.argv, args.count, &log);
    kernel->stages.compile_ms = pj_route_clock_ms() - start;
    if (status == PTXJIT_ERR_COMPILE)
        status = compile_error(kernel, source, log);
    free(args.template_include);
    free(name);
    free(log);
    free(source);
    if (status == PTXJIT_OK && !kernel->artifact.cubin)
        status = pj_error(PTXJIT_ERR_COMPILE, "NVRTC gave no cubin for %s", context->arch);
    if (status == PTXJIT_OK)
        check_headers_unchanged(kernel);
    return status;
}

const pj_route pj_route_nvrtc = {
    "nvrtc", "NVRTC", "compiler", nvrtc_check, nvrtc_version, nvrtc_compiled_version,
    nvrtc_key, nvrtc_route_compile, nvrtc_source,
    1, /* defines, include dirs and flags reach NVRTC */
};

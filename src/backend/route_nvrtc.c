/* route_nvrtc.c — the NVRTC route: the family's template specialized by the request (the
 * prelude of compile-time constants, then the template text), compiled by NVRTC to PTX and a
 * cubin in one step. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/compiler_id.h"
#include "backend/nvrtc.h"
#include "backend/route.h"
#include "cache/key.h"
#include "specialize.h"

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

static ptxjit_status nvrtc_key(pj_hash128 *out, const ptxjit_kernel *kernel)
{
    const ptxjit_context *context = kernel->context;
    pj_key_inputs inputs = {
        kernel->schema->family, kernel->canonical, kernel->schema->source, "nvrtc",
        kernel->compiler_version, context->arch, (const char *const *)context->options,
        context->option_count, PJ_SPECIALIZER_VERSION};
    return pj_cache_key(out, &inputs);
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

/* The first "NAME.cu(LINE): error" lines, each shown with the generated source around it. */
static void append_error_excerpts(pj_strbuf *sb, const char *log, const char *source)
{
    int shown = 0;
    for (const char *s = strstr(log, ".cu("); s && shown < 2; s = strstr(s + 1, ".cu(")) {
        int line = atoi(s + 4);
        const char *end = strchr(s, '\n');
        const char *error = strstr(s, "error");
        if (line <= 0 || !error || (end && error > end))
            continue;
        char *excerpt = pj_specialize_excerpt(source, line - 2, line + 2);
        pj_sb_appendf(sb, "\ngenerated source around line %d:\n%s", line,
                      excerpt ? excerpt : "");
        free(excerpt);
        shown++;
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
    pj_sb_appendf(&sb, "%s (%s): NVRTC failed for %s: %s", kernel->schema->family,
                  kernel->canonical, kernel->context->arch, ptxjit_last_error());
    int more = log ? append_first_errors(&sb, log) : 0;
    if (more > 0)
        pj_sb_appendf(&sb, "\n  ... %d more error lines", more);
    if (log)
        append_error_excerpts(&sb, log, source);
    pj_sb_appendf(&sb, "\n(the whole log: ptxjit_last_compile_log(); template %s; the source: "
                       "'ptxjit source %s %s')",
                  kernel->schema->origin, kernel->schema->family, kernel->canonical);
    ptxjit_status status = pj_error(PTXJIT_ERR_COMPILE, "%s", sb.data ? sb.data : "");
    pj_sb_free(&sb);
    return status;
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
    char name[128], *log = NULL;
    snprintf(name, sizeof name, "%s.cu", kernel->schema->family);
    kernel->stages.generate_ms = pj_route_clock_ms() - start;
    start = pj_route_clock_ms();
    status = pj_nvrtc_compile(&kernel->artifact, source, name,
                              (const char *const *)context->options, context->option_count, &log);
    kernel->stages.compile_ms = pj_route_clock_ms() - start;
    if (status == PTXJIT_ERR_COMPILE)
        status = compile_error(kernel, source, log);
    free(log);
    free(source);
    if (status == PTXJIT_OK && !kernel->artifact.cubin)
        status = pj_error(PTXJIT_ERR_COMPILE, "NVRTC gave no cubin for %s", context->arch);
    return status;
}

const pj_route pj_route_nvrtc = {
    "nvrtc", "NVRTC", "compiler", nvrtc_check, nvrtc_version, nvrtc_compiled_version,
    nvrtc_key, nvrtc_route_compile, nvrtc_source,
};

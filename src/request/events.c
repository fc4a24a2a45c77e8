/* events.c — see events.h. */
#include <string.h>

#include "request/events.h"
#include "request/route.h"
#include "util/nvtx.h"

static void stages_ms(double out[4], const ptxjit_kernel *kernel)
{
    out[0] = kernel->stages.generate_ms;
    out[1] = kernel->stages.optimize_ms;
    out[2] = kernel->stages.emit_ms;
    out[3] = kernel->stages.compile_ms;
}

void pj_event_request_start(const ptxjit_context *context, const char *family,
                            const char *params, const char *options)
{
    ptxjit_event event = {.kind = PTXJIT_EVENT_REQUEST_START,
                          .status = PTXJIT_OK,
                          .family = family,
                          .params = params ? params : "",
                          .options = options ? options : "",
                          .key = "",
                          .detail = ""};
    context->on_event(context->event_user, &event);
}

void pj_event_request_end(const ptxjit_context *context, const ptxjit_kernel *kernel,
                          const char *family, const char *params, const char *options,
                          ptxjit_tier tier, ptxjit_status status, double ms)
{
    ptxjit_event event = {.kind = PTXJIT_EVENT_REQUEST_END,
                          .tier = tier,
                          .status = status,
                          .family = family,
                          .params = params ? params : "",
                          .options = options ? options : "",
                          .key = "",
                          .detail = "",
                          .ms = ms};
    if (kernel) {
        event.family = kernel->schema->family;
        event.params = kernel->canonical;
        event.options = kernel->compile_options.resolved;
        event.key = kernel->key_hex;
        if (tier == PTXJIT_TIER_COMPILE)
            stages_ms(event.stage_ms, kernel);
    }
    context->on_event(context->event_user, &event);
}

ptxjit_tier pj_event_tier_of(ptxjit_origin origin)
{
    switch (origin) {
    case PTXJIT_ORIGIN_COMPILED: return PTXJIT_TIER_COMPILE;
    case PTXJIT_ORIGIN_DISK: return PTXJIT_TIER_DISK;
    case PTXJIT_ORIGIN_MEMORY: return PTXJIT_TIER_MEMORY;
    case PTXJIT_ORIGIN_REMOTE: return PTXJIT_TIER_REMOTE;
    case PTXJIT_ORIGIN_SHARED: return PTXJIT_TIER_PROCESS;
    }
    return PTXJIT_TIER_NONE;
}

static ptxjit_event compile_event(const ptxjit_kernel *kernel, ptxjit_event_kind kind)
{
    return (ptxjit_event){.kind = kind,
                          .status = PTXJIT_OK,
                          .family = kernel->schema->family,
                          .params = kernel->canonical,
                          .options = kernel->compile_options.resolved,
                          .key = kernel->key_hex,
                          .detail = ""};
}

double pj_event_compile_start(const ptxjit_kernel *kernel)
{
    pj_nvtx_push("compile", kernel->schema->family);
    const ptxjit_context *context = kernel->context;
    if (context->on_event) {
        ptxjit_event event = compile_event(kernel, PTXJIT_EVENT_COMPILE_START);
        context->on_event(context->event_user, &event);
    }
    return pj_route_clock_ms();
}

void pj_event_compile_end(const ptxjit_kernel *kernel, ptxjit_status status, double started)
{
    double ms = pj_route_clock_ms() - started;
    pj_nvtx_pop();
    const ptxjit_context *context = kernel->context;
    if (status == PTXJIT_OK && context->disk)
        pj_disk_cache_count_compile(context->disk, ms); /* the directory's metrics */
    if (context->on_event) {
        ptxjit_event event = compile_event(kernel, PTXJIT_EVENT_COMPILE_END);
        event.status = status;
        event.ms = ms;
        stages_ms(event.stage_ms, kernel);
        context->on_event(context->event_user, &event);
    }
}

const char *ptxjit_tier_name(ptxjit_tier tier)
{
    static const char *const names[] = {"none", "thread_memo", "memory", "process",
                                        "disk", "remote",      "aot",    "compile"};
    return (unsigned)tier < sizeof names / sizeof *names ? names[tier] : "unknown";
}

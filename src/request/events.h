/* events.h — telling ptxjit_options.on_event what a request does (include/ptxjit.h,
 * "Events"), and the NVTX ranges around compiles. Each call builds one event and calls the
 * context's callback on the calling thread; the callers hold no lock of the library and test
 * context->on_event first, so that a context without one pays a branch. */
#ifndef PTXJIT_REQUEST_EVENTS_H
#define PTXJIT_REQUEST_EVENTS_H

#include "request/context.h"

/* A request as given, before any tier looked. */
void pj_event_request_start(const ptxjit_context *context, const char *family,
                            const char *params, const char *options);
/* Its answer. kernel: the kernel it got (NULL when it failed: family, params and options
 * are then told as given). */
void pj_event_request_end(const ptxjit_context *context, const ptxjit_kernel *kernel,
                          const char *family, const char *params, const char *options,
                          ptxjit_tier tier, ptxjit_status status, double ms);
/* The tier of an origin (ptxjit_origin), for the ENDs of requests that were not memo hits. */
ptxjit_tier pj_event_tier_of(ptxjit_origin origin);

/* Around a compile of kernel (the route's, without the stores): the NVTX range always, the
 * events when the context has a callback. pj_event_compile_end takes the time from the
 * start's return value. */
double pj_event_compile_start(const ptxjit_kernel *kernel);
void pj_event_compile_end(const ptxjit_kernel *kernel, ptxjit_status status, double started);

#endif

/* latency.h — where the time of one open and one request goes, for `ptxjit bench jit`'s
 * breakdown of a fresh-process disk hit. Off unless a thread sets pj_latency_probe: the
 * library then pays one thread-local load per stage. */
#ifndef PTXJIT_LATENCY_H
#define PTXJIT_LATENCY_H

#include <time.h>

#define PJ_LATENCY_STAGES(X)                                                               \
    X(templates, "open: the template registry")                                            \
    X(dirs, "open: the cache directories")                                                 \
    X(schema, "get: the family's template and schema (built-ins: made at build time)")     \
    X(request, "get: the request parsed, canonical form, compile options")                 \
    X(compiler, "get: the compiler version (the memo in the cache directory)")             \
    X(key, "get: headers the template can include, the key")                               \
    X(read, "get: the entry read")                                                         \
    X(verify, "get: the entry checked and decoded")

typedef enum {
#define PJ_LATENCY_ENUM(name, text) PJ_LATENCY_##name,
    PJ_LATENCY_STAGES(PJ_LATENCY_ENUM)
#undef PJ_LATENCY_ENUM
    PJ_LATENCY_COUNT
} pj_latency_stage;

/* Microseconds per stage, added to while set (the caller owns the array). */
extern _Thread_local double *pj_latency_probe;

static inline double pj_latency_start(void)
{
    if (!pj_latency_probe)
        return 0;
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static inline void pj_latency_stop(pj_latency_stage stage, double start)
{
    if (pj_latency_probe)
        pj_latency_probe[stage] += pj_latency_start() - start;
}

#endif

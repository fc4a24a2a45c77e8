/* nvtx.c — see nvtx.h. NVTX3's own definitions are static or weak and hidden: the library
 * exports none of them. A toolkit without nvtx3 (older than 10) builds without ranges. */
#include <stdio.h>

#include "util/nvtx.h"

#if defined(__has_include)
#if __has_include(<nvtx3/nvToolsExt.h>)
#define PJ_HAVE_NVTX 1
#endif
#endif

#ifdef PJ_HAVE_NVTX
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>

/* NVTX3 sets its function pointers on first use with no lock a reader waits on, so two threads
 * making their first range race (ThreadSanitizer reports it, and a profiler's injected pointer
 * could be read half-set). Initializing once under pthread_once orders every later read after
 * those writes. */
static pthread_once_t nvtx_once = PTHREAD_ONCE_INIT;

static void nvtx_initialize(void)
{
    nvtxInitialize(NULL);
}

void pj_nvtx_push(const char *what, const char *detail)
{
    char name[160];
    snprintf(name, sizeof name, "ptxjit %s%s%s", what, detail ? " " : "", detail ? detail : "");
    pthread_once(&nvtx_once, nvtx_initialize);
    nvtxRangePushA(name);
}

void pj_nvtx_push_name(const char *name)
{
    pthread_once(&nvtx_once, nvtx_initialize);
    nvtxRangePushA(name);
}

void pj_nvtx_pop(void)
{
    pthread_once(&nvtx_once, nvtx_initialize);
    nvtxRangePop();
}
#else
void pj_nvtx_push(const char *what, const char *detail)
{
    (void)what;
    (void)detail;
}

void pj_nvtx_push_name(const char *name)
{
    (void)name;
}

void pj_nvtx_pop(void) {}
#endif

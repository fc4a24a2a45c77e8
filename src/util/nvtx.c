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

void pj_nvtx_push(const char *what, const char *detail)
{
    char name[160];
    snprintf(name, sizeof name, "ptxjit %s%s%s", what, detail ? " " : "", detail ? detail : "");
    nvtxRangePushA(name);
}

void pj_nvtx_pop(void)
{
    nvtxRangePop();
}
#else
void pj_nvtx_push(const char *what, const char *detail)
{
    (void)what;
    (void)detail;
}

void pj_nvtx_pop(void) {}
#endif

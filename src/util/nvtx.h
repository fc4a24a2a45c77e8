/* nvtx.h — named ranges for profilers (Nsight Systems), through the CUDA toolkit's
 * header-only NVTX3: nothing is linked, and without a profiler attached a range costs a call
 * through a pointer to an empty function. Ranges nest per thread: every push is popped on
 * the same thread. */
#ifndef PTXJIT_UTIL_NVTX_H
#define PTXJIT_UTIL_NVTX_H

/* Opens a range named "ptxjit <what> <detail>" (detail may be NULL) on this thread. */
void pj_nvtx_push(const char *what, const char *detail);
/* Closes this thread's innermost range. */
void pj_nvtx_pop(void);
/* A range named by a constant string, for the family ops: no formatting on a launch's path
 * (without a profiler a push and a pop cost a few nanoseconds together). */
void pj_nvtx_push_name(const char *name);

#endif

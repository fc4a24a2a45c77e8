/* nvrtc.h — the NVRTC backend: CUDA C++ source → PTX and cubin in one compile. libnvrtc is
 * loaded with dlopen on first use, so ptxjit builds and runs where it is missing. */
#ifndef PTXJIT_BACKEND_NVRTC_H
#define PTXJIT_BACKEND_NVRTC_H

#include "internal.h"

/* PTXJIT_OK when libnvrtc could be loaded; else PTXJIT_ERR_NO_COMPILER with where it looked. */
ptxjit_status pj_nvrtc_load(void);
/* "nvrtc 13.0" (after a successful pj_nvrtc_load). */
const char *pj_nvrtc_version_string(void);
/* The path of the library file that was loaded, or NULL. */
const char *pj_nvrtc_library_path(void);

/* Whether NVRTC may use the CUDA driver's compute cache; off unless allowed (process-wide:
 * only `ptxjit bench compile` turns it on, to show what it hides). */
void pj_nvrtc_allow_driver_cache(int allowed);

/* One more option for every NVRTC compile of the process (NULL: none): the bench's switch
 * for options that trade code for compile time (`ptxjit bench compile ofc=mid`), never a
 * default. It goes through the route's argument list, so keys change with it. */
void pj_nvrtc_set_extra_option(const char *option);
const char *pj_nvrtc_extra_option(void);

#define PJ_NVRTC_MAX_OPTIONS 63
/* Compiles source for the architecture in options ("-arch=sm_90a" gives PTX and cubin).
 * name is the program's file name in the log. On success out->ptx, cubin and log are set.
 * On failure PTXJIT_ERR_COMPILE, *log_out (if given) receives the log; caller frees. */
ptxjit_status pj_nvrtc_compile(pj_artifact *out, const char *source, const char *name,
                            const char *const *options, int option_count, char **log_out);

#endif

/* nvjitlink.h — PTX → cubin through nvJitLink (the toolkit's linker with ptxas inside), for
 * the LLVM route. libnvJitLink is loaded with dlopen on first use, like NVRTC. */
#ifndef PTXJIT_BACKEND_NVJITLINK_H
#define PTXJIT_BACKEND_NVJITLINK_H

#include "internal.h"

/* PTXJIT_OK when libnvJitLink could be loaded; else PTXJIT_ERR_NO_COMPILER saying where it
 * looked. */
ptxjit_status pj_nvjitlink_load(void);
/* "nvjitlink 13.0" (after a successful pj_nvjitlink_load). */
const char *pj_nvjitlink_version_string(void);
/* The path of the library file that was loaded, or NULL. */
const char *pj_nvjitlink_library_path(void);

/* Whether nvJitLink may use the CUDA driver's compute cache; off unless allowed (process-wide:
 * only `ptxjit bench compile` turns it on, to show what it hides). */
void pj_nvjitlink_allow_driver_cache(int allowed);

/* Compiles ptx for arch ("sm_90a") into out->cubin; out->log gets the info log. On failure
 * PTXJIT_ERR_COMPILE with nvJitLink's error log in the message. */
ptxjit_status pj_nvjitlink_compile(pj_artifact *out, const char *ptx, const char *arch);

#endif

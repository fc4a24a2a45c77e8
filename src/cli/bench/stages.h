/* stages.h — where a compile's time went, for `bench compile`: ptxjit.h has no accessor for a
 * kernel's stage timings, so stages.c reads them off the kernel (the one file of the command
 * line that knows the kernel's struct, until the library gives one). */
#ifndef PTXJIT_CLI_BENCH_STAGES_H
#define PTXJIT_CLI_BENCH_STAGES_H

#include "ptxjit.h"

/* ms; nvrtc: generate is the prelude, compile is NVRTC; llvm: generate is the IR generator,
 * then the optimization passes, the PTX emission, and compile is nvJitLink. Zeros for a
 * kernel not compiled in this context. */
typedef struct {
    double generate_ms, optimize_ms, emit_ms, compile_ms;
} cli_stages;

void cli_compile_stages(cli_stages *out, const ptxjit_kernel *kernel);

#endif

/* nvdisasm.h — the CUDA toolkit's disassembler, for `ptxjit sass` (cmd_kernel.c). */
#ifndef PTXJIT_CLI_NVDISASM_H
#define PTXJIT_CLI_NVDISASM_H

#include <stddef.h>

/* nvdisasm's path into program, or CLI_NO_TOOL after saying where it looked and how to get
 * one. */
int cli_nvdisasm_find(char *program, size_t size);
/* The cubin disassembled to stdout; an exit status. */
int cli_disassemble(const char *program, const void *cubin, size_t bytes);

#endif

/* aot.h — ahead-of-time tables (ptxjit_register_aot, options.aot_tables): a program's static
 * cubins answering its requests as memory hits, before the caches and the compilers; their
 * tuning records answering PARAM=auto. kernel.c asks here after a request is parsed, auto.c
 * for a problem's winner. */
#ifndef PTXJIT_REQUEST_AOT_H
#define PTXJIT_REQUEST_AOT_H

#include "request/context.h"

/* Registers options' NULL-terminated tables (NULL: none) at ptxjit_open. */
ptxjit_status pj_aot_register_all(ptxjit_context *context,
                                  const struct ptxjit_aot_table *const *tables);
/* Frees the context's list of tables (not the tables: the program's). */
void pj_aot_free(ptxjit_context *context);

/* The entry that serves kernel's parsed request (family, canonical params, backend, compile
 * options, template) for the context's architecture, or NULL. An entry of the request built
 * from another template text is never returned; a warning names it. */
const ptxjit_aot_kernel *pj_aot_find(const ptxjit_kernel *kernel);
/* Makes kernel entry's: its key, compiler version and an artifact that borrows the table's
 * bytes. */
ptxjit_status pj_aot_take(ptxjit_kernel *kernel, const ptxjit_aot_kernel *entry);
/* status, after a request of a context with tables failed for want of a compiler
 * (PTXJIT_ERR_NO_COMPILER): the error then names the tables, the request and the fix. */
ptxjit_status pj_aot_refuse(const ptxjit_kernel *kernel, ptxjit_status status);

/* The winner a registered record gives family's auto parameters for (backend, fixed,
 * problem) on the context's arch, or NULL. Valid while the context is open. */
const char *pj_aot_winner(ptxjit_context *context, const pj_schema *schema, const char *backend,
                          const char *fixed, const char *problem);

/* What `ptxjit aot` writes of a kernel beside ptxjit.h's accessors: the template's hash and
 * the compiler version its key holds, and its backend's name. */
ptxjit_status pj_aot_kernel_identity(char template_hash[33], char compiler[64],
                                     const char **backend, const ptxjit_kernel *kernel);

#endif

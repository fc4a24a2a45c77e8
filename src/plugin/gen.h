/* gen.h — the kernel generators: one per family, each builds its kernel in an ir_builder from
 * the request's parameters, with the template's entry name, parameters and launch geometry so
 * that the family's host op launches it unchanged. Prefix gen_. */
#ifndef PTXJIT_LLVM_GEN_H
#define PTXJIT_LLVM_GEN_H

#include <stddef.h>

#include "compilers/llvm_plugin.h"
#include "catalog/list.h"
#include "catalog/reader.h"
#include "ir.h"

/* A parameter's value (an integer, or an enum's or dtype's index); 0 if absent. */
long long gen_int(const pj_llvm_request *request, const char *name);
/* A parameter's value name ("vectorized", "f32", "256"); "" if absent. */
const char *gen_text(const pj_llvm_request *request, const char *name);
/* Whether parameter name has the value named value. */
int gen_is(const pj_llvm_request *request, const char *name, const char *value);
/* The request as a family's decoder reads it (catalog/reader.h). */
pj_param_reader gen_reader(const pj_llvm_request *request);

/* Builds the kernel; PJ_LLVM_OK, or PJ_LLVM_UNSUPPORTED / PJ_LLVM_FAILED with the reason in
 * error. */
typedef int (*gen_fn)(ir_builder *ir, const pj_llvm_request *request, char *error,
                      size_t error_size);
/* A family's generator, defined at the end of src/families/NAME/gen.c as gen_family_NAME
 * with the version and variants of the family's shape.h. */
typedef struct {
    const char *family;
    int version;
    const char *variants;
    gen_fn generate;
} gen_family;

#define PJ_GEN_DECLARE(name) extern const gen_family gen_family_##name;
PJ_FAMILY_LIST(PJ_GEN_DECLARE)
#undef PJ_GEN_DECLARE

#endif

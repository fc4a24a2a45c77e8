/* dtype.h — the element types a template may take, and their sizes: the one place both are
 * declared. Includes nothing, so that the LLVM plugin, which links none of the library, reads
 * the same sizes from PJ_DTYPE_LIST. */
#ifndef PTXJIT_PARAMS_DTYPE_H
#define PTXJIT_PARAMS_DTYPE_H

/* X(name, C++ type, bytes). */
#define PJ_DTYPE_LIST(X)                  \
    X(i32, "int", 4)                      \
    X(u32, "unsigned int", 4)             \
    X(i64, "long long", 8)                \
    X(f16, "__half", 2)                   \
    X(bf16, "__nv_bfloat16", 2)           \
    X(f32, "float", 4)                    \
    X(f64, "double", 8)

typedef enum {
#define PJ_DTYPE_ENUM(name, ctype, bytes) PJ_DTYPE_##name,
    PJ_DTYPE_LIST(PJ_DTYPE_ENUM)
#undef PJ_DTYPE_ENUM
    PJ_DTYPE_COUNT
} pj_dtype;

int pj_dtype_from_name(const char *name); /* -1 if unknown */
const char *pj_dtype_name(pj_dtype dtype);
const char *pj_dtype_ctype(pj_dtype dtype);
int pj_dtype_bytes(pj_dtype dtype);

#endif

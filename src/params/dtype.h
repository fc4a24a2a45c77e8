/* dtype.h — the element types a template may take, and their sizes: the one place both are
 * declared. Header-only where the LLVM plugin needs it (a type by name, its size): the plugin
 * links none of the library and reads the same list. */
#ifndef PTXJIT_PARAMS_DTYPE_H
#define PTXJIT_PARAMS_DTYPE_H

#include <string.h>

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

/* The dtype named name; -1 if none. */
static inline int pj_dtype_from_name(const char *name)
{
#define PJ_DTYPE_BY_NAME(name_, ctype, bytes)                                                  \
    if (strcmp(name, #name_) == 0)                                                             \
        return PJ_DTYPE_##name_;
    PJ_DTYPE_LIST(PJ_DTYPE_BY_NAME)
#undef PJ_DTYPE_BY_NAME
    return -1;
}

/* A dtype's element bytes; 0 for no dtype. */
static inline int pj_dtype_bytes(int dtype)
{
    static const int sizes[] = {
#define PJ_DTYPE_SIZE(name, ctype, bytes) bytes,
        PJ_DTYPE_LIST(PJ_DTYPE_SIZE)
#undef PJ_DTYPE_SIZE
    };
    return dtype >= 0 && dtype < PJ_DTYPE_COUNT ? sizes[dtype] : 0;
}

const char *pj_dtype_name(pj_dtype dtype);
const char *pj_dtype_ctype(pj_dtype dtype);

#endif

/* list.h — the one list of kernel families. Each line names a folder src/families/NAME/ and a
 * template templates/NAME.cu; the library, the LLVM plugin, the CLI, the tests and the
 * Makefile all expand this list (docs/ADDING_A_FAMILY.md). */
#ifndef PTXJIT_FAMILIES_LIST_H
#define PTXJIT_FAMILIES_LIST_H

#define PJ_FAMILY_LIST(X) \
    X(reduce)             \
    X(transpose)          \
    X(matmul)             \
    X(softmax)

#endif

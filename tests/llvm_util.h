/* llvm_util.h — what the LLVM generators' tests (src/families/NAME/test_llvm.c) share: a
 * context for sm_90a without a GPU, compiles that must succeed, and counts in the PTX. The
 * generators target sm_90a whatever the machine, so that every variant compiles anywhere. */
#ifndef PTXJIT_TEST_LLVM_UTIL_H
#define PTXJIT_TEST_LLVM_UTIL_H

#include "test_util.h"

/* An sm_90a context without a GPU or a disk cache, whose default route is backend ("llvm"),
 * or NULL: the context's default, so that a test compares the routes by naming backend=llvm
 * in some requests. */
ptxjit_context *test_open_sm_90a(const char *backend);
/* family's kernel for params; a failure fails the test, naming params and the error. */
ptxjit_kernel *test_compile(ptxjit_context *context, const char *family, const char *params);
/* 1 when family's schema accepts params, else 0: a sweep skips what the template refuses. */
int test_valid(ptxjit_context *context, const char *family, const char *params);
/* How often needle occurs in text (overlapping occurrences too). */
int test_count(const char *text, const char *needle);
/* The number right after the first needle in text ("maxntid 256"), or -1 without one. */
long test_number_after(const char *text, const char *needle);

#endif

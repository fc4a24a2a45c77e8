/* test_util.h — helpers shared by the test files. */
#ifndef PTXJIT_TEST_UTIL_H
#define PTXJIT_TEST_UTIL_H

#include <check.h>
#include <stdlib.h>

#include "internal.h"

/* A fresh empty directory under $TMPDIR (or /tmp); caller removes it with test_rmtree. */
char *test_mkdtemp(void);
/* Runs the CLI ($PTXJIT_CLI) with args and PTXJIT_CACHE_DIR=cache_dir (NULL: as inherited),
 * after the environment assignments in env ("" for none); *output: stdout, and stderr too
 * unless err_path names a file for it (the caller frees *output). Returns the exit status
 * (-1: killed). */
int test_run_cli(char **output, const char *cache_dir, const char *env, const char *args,
                 const char *err_path);
void test_rmtree(const char *path);
/* Under valgrind: runs the compilers $PTXJIT_TEST_WARM_COMPILERS names ("nvrtc,llvm,nvjitlink")
 * once in the runner before Check forks, so that no test process translates them again
 * (tests/warm_compilers.c). */
void test_warm_compilers(void);
/* A context that compiles without touching the driver or a disk cache, for arch (NULL: the
 * default, sm_90a without a GPU). */
ptxjit_context *test_open_offline(const char *arch);
/* params of family must be refused (PTXJIT_ERR_PARAM) with needle in the message, for arch. */
void test_expect_refused(const char *family, const char *params, const char *needle,
                         const char *arch);
/* A GPU context for one test (each Check test is its own process), or NULL after printing
 * why the test is skipped. */
ptxjit_context *test_gpu_context(const char *test);
/* Every how many of its requests a sweep (or a long list of configurations compiled by both
 * backends) compiles one: $PTXJIT_TEST_SWEEP_STRIDE, else 1 (all). The sanitizer and valgrind
 * runs set it (Makefile): there a compile costs 3-100 times more, and the full sweeps (~2,100
 * kernels, ~2 min natively) would outlast the CI job. */
int test_sweep_stride(void);
/* Which request of each stride a sweep takes: $PTXJIT_TEST_SWEEP_OFFSET (modulo the stride),
 * else 0. CI sets it from the commit (mk/hardening.mk), so that successive commits' samples
 * cover different requests; the run's log names it, and setting it repeats that sample. */
int test_sweep_offset(void);
/* 1 when a sweep takes its index-th request (from 0): index % stride == offset. */
int test_sweep_takes(size_t index);
/* How many of a sweep's first count requests it takes. */
size_t test_sweep_taken(size_t count);
/* A case of suite for the tests whose point is many compiles (sweeps of variants or options,
 * compile workers, several GPUs, tuning spaces), tagged "many_compiles": they run natively and
 * under asan, ubsan and tsan; memcheck, where one compile takes seconds, leaves them out
 * (mk/hardening.mk) and checks the same code in the cases that compile a kernel or two. */
TCase *test_many_compiles_case(Suite *suite, int timeout_seconds);
/* 1 when this build has the llvm route; else 0 after printing that test is skipped (a build
 * without LLVM: `make LLVM_CONFIG=none test`). */
int test_llvm_or_skip(const char *test);
/* The environment assignments for test_run_cli that put the fake driver (tests/fake_cuda,
 * built beside $PTXJIT_CLI) under the CLI with one device, written into env; 0 after printing
 * test's SKIP line where make test has not built it. */
int test_fake_driver_env(char *env, size_t size, const char *test);

/* Runs fn(arg) in a child process bounded to seconds of wall time (an alarm) and to 1 GiB of
 * memory more than this process maps now (RLIMIT_DATA over /proc's VmData, so that it holds
 * under a sanitizer's reservations too): a hang or a runaway read fails the calling test
 * instead of hanging or exhausting the machine. fn returns 0 for success; the child exits
 * with it. Asserts that the child exited 0, with what it did otherwise in the message. */
void test_bounded_child(const char *what, int (*fn)(void *), void *arg, int seconds);
/* The largest allocation ptxjit asked for (malloc, calloc or realloc, which the runner wraps:
 * test_out_of_memory.c) since the last call; the count restarts at 0. */
size_t test_largest_allocation(void);

#define PJ_SUITE_DECLARE(name) Suite *name(void);
#include "suites.h"
PJ_TEST_SUITES(PJ_SUITE_DECLARE)
PJ_GPU_TEST_SUITES(PJ_SUITE_DECLARE)
#define PJ_FAMILY_SUITE_DECLARE(name) Suite *suite_##name(void); Suite *suite_##name##_gpu(void);
PJ_FAMILY_LIST(PJ_FAMILY_SUITE_DECLARE)
#undef PJ_FAMILY_SUITE_DECLARE
#undef PJ_SUITE_DECLARE

#endif

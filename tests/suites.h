/* suites.h — every Check suite of the test runner, one line each: X(function name); and each
 * family's two (src/families/NAME/test.c and test_gpu.c), from src/catalog/list.h. The llvm
 * generator suites of reduce, transpose and matmul live in their family's folder too
 * (src/families/NAME/test_llvm.c and test_llvm_gpu.c) but are listed here: not every family
 * has them (softmax checks both routes in its own suites). */
#include "catalog/list.h"

#define PJ_TEST_SUITES(X)     \
    X(suite_strbuf)           \
    X(suite_dynlib)           \
    X(suite_params)           \
    X(suite_pipeline)         \
    X(suite_cache_disk)       \
    X(suite_cache_evict)      \
    X(suite_cache_trust)      \
    X(suite_faults)           \
    X(suite_out_of_memory)    \
    X(suite_cli)              \
    X(suite_families)         \
    X(suite_backend_select)   \
    X(suite_llvm)             \
    X(suite_llvm_reduce)      \
    X(suite_llvm_transpose)   \
    X(suite_llvm_matmul)      \
    X(suite_threads)          \
    X(suite_fuzz_replay)      \
    X(suite_templates)        \
    X(suite_compile_inputs)   \
    X(suite_inspect)          \
    X(suite_conventions)      \
    X(suite_bench_compile)    \
    X(suite_tune)             \
    X(suite_tune_search)      \
    X(suite_pool)             \
    X(suite_launch_api)       \
    X(suite_examples)         \
    X(suite_cold_compile)     \
    X(suite_latency)          \
    X(suite_jit_time)         \
    X(suite_bundle)           \
    X(suite_remote)           \
    X(suite_remote_poison)    \
    X(suite_remote_signing)   \
    X(suite_remote_hostile)   \
    X(suite_remote_lease)     \
    X(suite_multigpu)         \
    X(suite_compile_once)     \
    X(suite_builtins)         \
    X(suite_hit_path)         \
    X(suite_plan)             \
    X(suite_aot)              \
    X(suite_events)           \
    X(suite_events_fleet)     \
    X(suite_chart)

/* Suites that need a GPU: run only where one is usable. */
#define PJ_GPU_TEST_SUITES(X)                                                              \
    X(suite_llvm_reduce_gpu) X(suite_llvm_transpose_gpu) X(suite_llvm_matmul_gpu)         \
    X(suite_inspect_gpu) X(suite_tune_gpu) X(suite_launch_api_gpu)                      \
    X(suite_multigpu_gpu) X(suite_chart_gpu)


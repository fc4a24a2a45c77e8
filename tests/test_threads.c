/* test_threads.c — one context used by many threads at once: every key compiled once, the
 * compiles of distinct keys running at the same time (seen by a stand-in NVRTC that counts
 * them, tests/shim/nvrtc_shim.c), and every thread getting the same, right kernel; the same
 * through the llvm backend, whose plugin and nvJitLink the threads load together. `make tsan`
 * runs this under ThreadSanitizer, which fails the test on any data race. */
#include <dlfcn.h>
#include <libgen.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

enum { THREADS = 8, KEYS = 4, ROUNDS = 25 };

/* Each key in three spellings: the alias table and the key table both get exercised. */
typedef struct {
    const char *spellings[KEYS][3];
    const char *canonical[KEYS];
} key_set;

static const key_set nvrtc_keys = {
    {{"tpb=64", "variant=vectorized tpb=64", "dtype=i32,tpb=64"},
     {"tpb=128", "tpb=128 batch=4", "variant=vectorized,tpb=128,dtype=i32"},
     {"variant=one_pass tpb=256", "tpb=256 variant=one_pass", "variant=one_pass,tpb=256"},
     {"variant=batched batch=3", "batch=3 variant=batched", "variant=batched tpb=512 batch=3"}},
    {"batch=4 dtype=i32 tpb=64 variant=vectorized", "batch=4 dtype=i32 tpb=128 variant=vectorized",
     "dtype=i32 tpb=256 variant=one_pass", "batch=3 dtype=i32 tpb=512 variant=batched"},
};

/* Four kernels of four of the llvm generator's variants; backend=llvm in every spelling. */
static const key_set llvm_keys = {
    {{"backend=llvm tpb=64", "variant=vectorized tpb=64 backend=llvm", "backend=llvm,tpb=64"},
     {"backend=llvm variant=two_pass tpb=128", "tpb=128 variant=two_pass backend=llvm",
      "backend=llvm,dtype=i32,variant=two_pass,tpb=128"},
     {"backend=llvm variant=one_pass tpb=256 dtype=f32",
      "dtype=f32 tpb=256 variant=one_pass backend=llvm",
      "backend=llvm,variant=one_pass,tpb=256,dtype=f32"},
     {"backend=llvm variant=batched batch=3", "batch=3 backend=llvm variant=batched",
      "variant=batched tpb=512 batch=3 backend=llvm"}},
    {"backend=llvm batch=4 dtype=i32 tpb=64 variant=vectorized",
     "backend=llvm dtype=i32 tpb=128 variant=two_pass",
     "backend=llvm dtype=f32 tpb=256 variant=one_pass",
     "backend=llvm batch=3 dtype=i32 tpb=512 variant=batched"},
};

typedef struct {
    ptxjit_context *context;
    const key_set *keys;
    pthread_barrier_t *start;
    int index;
    ptxjit_kernel *kernels[KEYS]; /* what this thread got for each key */
    int compiled, failures;
    char failure[512];
} worker;

static void note_failure(worker *w, const char *what, const char *detail)
{
    if (!w->failures++)
        snprintf(w->failure, sizeof w->failure, "thread %d: %s: %s", w->index, what, detail);
}

/* Asks for key k; checks the kernel against the first one this thread got for it. */
static void request(worker *w, int k, int round)
{
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin;
    const char *params = w->keys->spellings[k][(w->index + round / KEYS) % 3];
    if (ptxjit_get_kernel(&kernel, w->context, "reduce", params, &origin) != PTXJIT_OK) {
        note_failure(w, params, ptxjit_last_error());
        return;
    }
    w->compiled += origin == PTXJIT_ORIGIN_COMPILED;
    if (strcmp(ptxjit_kernel_params(kernel), w->keys->canonical[k]) != 0)
        note_failure(w, "wrong canonical params", ptxjit_kernel_params(kernel));
    if (!strstr(ptxjit_kernel_ptx(kernel), ".entry reduce_kernel("))
        note_failure(w, "PTX without the entry", params);
    if (w->kernels[k] && w->kernels[k] != kernel)
        note_failure(w, "two kernels for one key", params);
    w->kernels[k] = kernel;
}

/* Round 0 starts each thread on key index % KEYS, all at once: four distinct keys wanted by
 * two threads each. Later rounds go round every key, each in changing spellings. */
static void *work(void *arg)
{
    worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int round = 0; round < ROUNDS; round++)
        request(w, (w->index + round) % KEYS, round);
    ptxjit_cache_stats stats;
    if (ptxjit_cache_stats_get(&stats, w->context) != PTXJIT_OK)
        note_failure(w, "stats", ptxjit_last_error());
    return NULL;
}

/* THREADS threads, started together, each asking ROUNDS times for keys of the set; every
 * thread must get the same kernel record for a key. Returns how many requests compiled. */
static int run_threads(ptxjit_context *context, const key_set *keys)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, THREADS);
    worker workers[THREADS];
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++) {
        workers[t] = (worker){context, keys, &start, t, {NULL}, 0, 0, ""};
        ck_assert_int_eq(pthread_create(&threads[t], NULL, work, &workers[t]), 0);
    }
    int compiled = 0;
    for (int t = 0; t < THREADS; t++) {
        pthread_join(threads[t], NULL);
        ck_assert_msg(workers[t].failures == 0, "%s", workers[t].failure);
        compiled += workers[t].compiled;
        for (int k = 0; k < KEYS; k++)
            ck_assert_ptr_eq(workers[t].kernels[k], workers[0].kernels[k]);
    }
    pthread_barrier_destroy(&start);
    return compiled;
}

/* A context without the GPU, with its disk cache in dir. */
static ptxjit_context *open_cached(const char *dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    return context;
}

/* The disk cache of the context got one entry per key, each stored once; then the context
 * and its directory (dir, freed) go. */
static void expect_each_key_stored_once_then_close(ptxjit_context *context, char *dir)
{
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.stores, KEYS);
    ck_assert_uint_eq(stats.entries, KEYS);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}

/* The stand-in NVRTC, built next to the test runner (see the Makefile). */
static void *load_shim(char *path, size_t size)
{
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert_int_gt(n, 0);
    self[n] = '\0';
    snprintf(path, size, "%s/libpjtest_nvrtc_shim.so", dirname(self));
    void *shim = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ck_assert_msg(shim != NULL, "%s (make builds it with the test runner)", dlerror());
    return shim;
}

START_TEST(threads_compile_each_key_once_and_distinct_keys_at_the_same_time)
{
    char shim_path[4200];
    void *shim = load_shim(shim_path, sizeof shim_path);
    void (*expect)(int) = (void (*)(int))dlsym(shim, "pjtest_shim_expect");
    void (*counts)(int *, int *, int *) = (void (*)(int *, int *, int *))dlsym(shim,
                                                                             "pjtest_shim_counts");
    ck_assert(expect && counts);
    expect(KEYS); /* no compile proceeds until KEYS of them are in flight together */
    setenv("PTXJIT_NVRTC_LIBRARY", shim_path, 1);
    char *dir = test_mkdtemp();
    ptxjit_context *context = open_cached(dir);
    int compiled = run_threads(context, &nvrtc_keys);
    int total, most_at_once, gave_up;
    counts(&total, &most_at_once, &gave_up);
    printf("threads: %d threads x %d requests, %d keys: %d compiles, at most %d at once%s\n",
           THREADS, ROUNDS, KEYS, total, most_at_once, gave_up ? " (barrier gave up)" : "");
    ck_assert_int_eq(compiled, KEYS);      /* each key compiled once ... */
    ck_assert_int_eq(total, KEYS);         /* ... and NVRTC called once per key */
    ck_assert_int_eq(gave_up, 0);          /* the four compiles met in flight ... */
    ck_assert_int_eq(most_at_once, KEYS);  /* ... all at the same time */
    expect_each_key_stored_once_then_close(context, dir);
    unsetenv("PTXJIT_NVRTC_LIBRARY");
}
END_TEST

/* The first llvm compiles of the process, from eight threads at once: the plugin, nvJitLink
 * and LLVM's NVPTX target are each loaded once (pthread_once), every key compiled once and
 * stored once, and ThreadSanitizer sees libptxjit's side of every call. */
START_TEST(threads_load_the_llvm_backend_once_and_compile_each_key_once)
{
    if (!test_llvm_or_skip("threads_load_the_llvm_backend_once_and_compile_each_key_once"))
        return;
    char *dir = test_mkdtemp();
    ptxjit_context *context = open_cached(dir);
    int compiled = run_threads(context, &llvm_keys);
    printf("threads: %d threads x %d requests, %d llvm keys: %d compiles\n", THREADS, ROUNDS,
           KEYS, compiled);
    ck_assert_int_eq(compiled, KEYS);
    expect_each_key_stored_once_then_close(context, dir);
}
END_TEST

Suite *suite_threads(void)
{
    Suite *suite = suite_create("threads");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 600); /* NVRTC under valgrind or ThreadSanitizer is slow */
    suite_add_tcase(suite, tc);
    TCase *many = test_many_compiles_case(suite, 600);
    tcase_add_test(many, threads_load_the_llvm_backend_once_and_compile_each_key_once);
    tcase_add_test(many, threads_compile_each_key_once_and_distinct_keys_at_the_same_time);
    return suite;
}

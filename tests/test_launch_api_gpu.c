/* test_launch_api_gpu.c — the launch API on a GPU: the parameter layouts read from PTX and
 * cubin equal the driver's (cuFuncGetParamInfo) for every entry of every family, and a
 * parameter buffer packed by them runs; a context of the caller's stays current across
 * ptxjit's calls, and a launch is right after the caller switched contexts behind ptxjit's
 * back; streams, events, asynchronous copies and fills around a checked launch,
 * against a CPU reference; failed launches name the launch. Skips, saying why, where no GPU
 * is usable. */
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "request/route_llvm.h"
#include "request/context.h"
#include "launch_api.h"
#include "test_util.h"

/* The launch_probe context with the GPU, or NULL after saying why the test is skipped. */
static ptxjit_context *probe_gpu(char **dir, const char *test)
{
    ptxjit_context *context = launch_probe_open(dir, 1);
    if (ptxjit_gpu_status(context) == PTXJIT_OK)
        return context;
    printf("SKIP %s: no GPU (%s)\n", test, ptxjit_last_error());
    fflush(stdout);
    ptxjit_close(context);
    test_rmtree(*dir);
    free(*dir);
    return NULL;
}

static void probe_close(ptxjit_context *context, char *dir)
{
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}

static ptxjit_kernel *get(ptxjit_context *context, const char *family, const char *params)
{
    ptxjit_kernel *kernel = NULL;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK,
                  "%s %s: %s", family, params, ptxjit_last_error());
    return kernel;
}

static uint64_t state;
static float next_float(void)
{
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return (float)((double)(state >> 11) * 0x1.0p-52 - 1.0);
}

static void seed(void)
{
    state = (uint64_t)time(NULL) * 0x9e3779b97f4a7c15ull | 1;
}

/* Every entry's layout against cuFuncGetParamInfo; returns the number of entries compared. */
static int compare_with_driver(ptxjit_kernel *kernel)
{
    const pj_driver *d = kernel->context->driver;
    for (int e = 0; e < ptxjit_kernel_entry_count(kernel); e++) {
        const char *entry = ptxjit_kernel_entry_name(kernel, e);
        void *function = NULL;
        ck_assert_msg(ptxjit_kernel_function(&function, kernel, entry) == PTXJIT_OK, "%s",
                      ptxjit_last_error());
        int count = -1;
        ck_assert_int_eq(ptxjit_kernel_param_count(&count, kernel, entry), PTXJIT_OK);
        for (int i = 0; i <= count; i++) {
            size_t offset = 0, size = 0;
            CUresult result = d->cuFuncGetParamInfo((CUfunction)function, (size_t)i, &offset,
                                                    &size);
            if (i == count) {
                ck_assert_msg(result != CUDA_SUCCESS, "%s %s: the driver has a parameter %d",
                              ptxjit_kernel_params(kernel), entry, i);
                break;
            }
            ck_assert_msg(result == CUDA_SUCCESS, "%s %s parameter %d: CUresult %d",
                          ptxjit_kernel_params(kernel), entry, i, (int)result);
            ptxjit_param_layout layout;
            ck_assert_int_eq(ptxjit_kernel_param_layout(&layout, kernel, entry, i), PTXJIT_OK);
            ck_assert_msg(layout.offset == offset && layout.size == size,
                          "%s (%s) %s parameter %d: ptxjit %zu+%zu, driver %zu+%zu",
                          ptxjit_kernel_family(kernel), ptxjit_kernel_params(kernel), entry, i,
                          layout.offset, layout.size, offset, size);
        }
    }
    return ptxjit_kernel_entry_count(kernel);
}

START_TEST(layouts_equal_the_drivers)
{
    char *dir;
    ptxjit_context *context = probe_gpu(&dir, "layouts_equal_the_drivers");
    if (!context)
        return;
    if (!context->driver->cuFuncGetParamInfo) {
        printf("SKIP layouts_equal_the_drivers: the driver has no cuFuncGetParamInfo (CUDA "
               "12.4)\n");
        probe_close(context, dir);
        return;
    }
    int compared = 0;
    for (int f = 0; f < ptxjit_family_count(context); f++) {
        const char *family = ptxjit_family_name(context, f);
        compared += compare_with_driver(get(context, family, ""));
        ptxjit_kernel *llvm = NULL;
        if (pj_llvm_built() &&
            ptxjit_get_kernel(&llvm, context, family, "backend=llvm", NULL) == PTXJIT_OK)
            compared += compare_with_driver(llvm);
    }
    ck_assert_int_ge(compared, 6);
    probe_close(context, dir);
}
END_TEST

/* probe_kernel's arguments packed into one buffer at the offsets read from PTX, launched with
 * CU_LAUNCH_PARAM_BUFFER_POINTER: the kernel sees each value where the layout put it. */
START_TEST(buffer_packed_by_the_layouts_runs)
{
    char *dir;
    ptxjit_context *context = probe_gpu(&dir, "buffer_packed_by_the_layouts_runs");
    if (!context)
        return;
    ptxjit_kernel *kernel = get(context, "launch_probe", "");
    ptxjit_devptr sum = 0;
    ck_assert_int_eq(ptxjit_alloc(&sum, context, 4), PTXJIT_OK);
    signed char a = 3;
    short b = -5;
    float c = 7;
    struct probe_pair p = {11, 2};
    double dd = 13;
    struct probe_wide w = {{17, 0, 0}};
    unsigned char e = 200;
    struct probe_float2 f = {19, 0};
    const void *values[] = {&a, &b, &c, &p, &dd, &w, &e, &f, &sum};
    alignas(64) unsigned char buffer[256];
    memset(buffer, 0, sizeof buffer);
    size_t used = 0;
    for (int i = 0; i < 9; i++) {
        ptxjit_param_layout layout;
        ck_assert_int_eq(ptxjit_kernel_param_layout(&layout, kernel, "probe_kernel", i),
                         PTXJIT_OK);
        memcpy(buffer + layout.offset, values[i], layout.size);
        used = layout.offset + layout.size;
    }
    void *function = NULL;
    ck_assert_int_eq(ptxjit_kernel_function(&function, kernel, "probe_kernel"), PTXJIT_OK);
    void *extra[] = {CU_LAUNCH_PARAM_BUFFER_POINTER, buffer, CU_LAUNCH_PARAM_BUFFER_SIZE, &used,
                     CU_LAUNCH_PARAM_END};
    const pj_driver *d = context->driver;
    ck_assert_int_eq(d->cuLaunchKernel((CUfunction)function, 1, 1, 1, 32, 1, 1, 0, NULL, NULL,
                                       extra),
                     CUDA_SUCCESS);
    int got = 0;
    ck_assert_int_eq(ptxjit_copy_to_host(context, &got, sum, 4), PTXJIT_OK);
    ck_assert_int_eq(got, 3 - 5 + 7 + 11 + 2 + 13 + 17 + 200 + 19);
    ptxjit_free(context, sum);
    probe_close(context, dir);
}
END_TEST

static void expect_saxpy(const float *got, const float *x, const float *y, float a, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        double want = (double)a * x[i] + y[i];
        ck_assert_msg(fabs(got[i] - want) <= 1e-6 * (fabs((double)a * x[i]) + fabs(y[i])) + 1e-30,
                      "y[%zu] = %.9g, want %.9g", i, got[i], want);
    }
}

/* The current context, which must be mine. */
static void expect_current(const pj_driver *d, CUcontext mine, const char *after)
{
    CUcontext now = NULL;
    ck_assert_int_eq(d->cuCtxGetCurrent(&now), CUDA_SUCCESS);
    ck_assert_msg(now == mine, "after %s the caller's context is no longer current", after);
}

START_TEST(callers_context_stays_current)
{
    char *dir;
    ptxjit_context *context = probe_gpu(&dir, "callers_context_stays_current");
    if (!context)
        return;
    const pj_driver *d = context->driver;
    if (!d->cuCtxCreate || !d->cuCtxDestroy) {
        printf("SKIP callers_context_stays_current: the driver has no cuCtxCreate_v2\n");
        probe_close(context, dir);
        return;
    }
    /* No context current: ptxjit leaves its own current, as the CUDA runtime does. */
    void *primary = NULL;
    ck_assert_int_eq(ptxjit_cuda_context(&primary, context), PTXJIT_OK);
    ck_assert_int_eq(d->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    ptxjit_devptr scratch = 0;
    ck_assert_int_eq(ptxjit_alloc(&scratch, context, 64), PTXJIT_OK);
    expect_current(d, (CUcontext)primary, "ptxjit_alloc with no context current");
    CUcontext mine = NULL;
    ck_assert_int_eq(d->cuCtxCreate(&mine, 0, context->device), CUDA_SUCCESS);
    ck_assert_ptr_ne(mine, primary);
    expect_current(d, mine, "cuCtxCreate");

    enum { N = 10007 };
    static float x[N], y[N], got[N];
    static int32_t ints[N];
    seed();
    int64_t want_sum = 0;
    for (int i = 0; i < N; i++) {
        x[i] = next_float();
        y[i] = next_float();
        ints[i] = (int32_t)(next_float() * 1000);
        want_sum += ints[i];
    }
    ptxjit_kernel *kernel = get(context, "launch_probe", "tpb=128");
    expect_current(d, mine, "ptxjit_get_kernel");
    void *function = NULL;
    ck_assert_int_eq(ptxjit_kernel_function(&function, kernel, "saxpy_kernel"), PTXJIT_OK);
    expect_current(d, mine, "ptxjit_kernel_function");
    ptxjit_devptr dx = 0, dy = 0, dints = 0;
    ck_assert_int_eq(ptxjit_alloc(&dx, context, sizeof x), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dy, context, sizeof y), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dints, context, sizeof ints), PTXJIT_OK);
    expect_current(d, mine, "ptxjit_alloc");
    ck_assert_int_eq(ptxjit_copy_to_device(context, dx, x, sizeof x), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, dy, y, sizeof y), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, dints, ints, sizeof ints), PTXJIT_OK);
    expect_current(d, mine, "ptxjit_copy_to_device");
    float a = -2.5f;
    unsigned n = N;
    void *args[] = {&dx, &dy, &a, &n};
    const ptxjit_dim3 grid = {(N + 127) / 128, 1, 1}, block = {128, 1, 1};
    ptxjit_status status = ptxjit_launch(kernel, "saxpy_kernel", grid, block, 0, NULL, args);
    ck_assert_msg(status == PTXJIT_OK, "%s", ptxjit_last_error());
    expect_current(d, mine, "ptxjit_launch");
    ck_assert_int_eq(ptxjit_synchronize(context), PTXJIT_OK);
    expect_current(d, mine, "ptxjit_synchronize");
    ck_assert_int_eq(ptxjit_copy_to_host(context, got, dy, sizeof got), PTXJIT_OK);
    expect_current(d, mine, "ptxjit_copy_to_host");
    expect_saxpy(got, x, y, a, N);
    int32_t sum = 0;
    status = ptxjit_reduce(context, "variant=one_pass dtype=i32", dints, N, &sum);
    ck_assert_msg(status == PTXJIT_OK, "%s", ptxjit_last_error());
    ck_assert_int_eq(sum, (int32_t)(uint32_t)want_sum);
    expect_current(d, mine, "ptxjit_reduce");
    void *stream = NULL;
    ck_assert_int_eq(ptxjit_stream_create(&stream, context, 0), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_stream_destroy(context, stream), PTXJIT_OK);
    expect_current(d, mine, "ptxjit_stream_create and _destroy");
    ck_assert_int_eq(ptxjit_launch(kernel, "saxpy_kernel", (ptxjit_dim3){1, 65536, 1}, block, 0,
                                   NULL, args),
                     PTXJIT_ERR_CUDA);
    expect_current(d, mine, "a failed launch");
    ptxjit_kernel_resources resources;
    ck_assert_int_eq(ptxjit_kernel_resources_get(&resources, kernel, "saxpy_kernel"), PTXJIT_OK);
    ck_assert_int_eq(resources.max_threads, 128);
    expect_current(d, mine, "ptxjit_kernel_resources_get");
    ck_assert_int_eq(ptxjit_free(context, dx), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_free(context, dy), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_free(context, dints), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_free(context, scratch), PTXJIT_OK);
    expect_current(d, mine, "ptxjit_free");
    probe_close(context, dir);
    expect_current(d, mine, "ptxjit_close");
    ck_assert_int_eq(d->cuCtxDestroy(mine), CUDA_SUCCESS);
}
END_TEST

/* A launch goes straight to the driver where this thread's last ptxjit call left ptxjit's
 * context current; a caller that made its own context current since (without ptxjit
 * knowing) still gets a right launch, in ptxjit's context, and its own context back; so does
 * one that made none current; and a thread of its own. */
static void *launch_from_thread(void *arg)
{
    void **a = arg;
    ptxjit_status status = ptxjit_launch(a[0], "saxpy_kernel", *(ptxjit_dim3 *)a[1],
                                         *(ptxjit_dim3 *)a[2], 0, NULL, a[3]);
    return (void *)(intptr_t)status;
}

START_TEST(launch_after_the_caller_switched_contexts)
{
    char *dir;
    ptxjit_context *context = probe_gpu(&dir, "launch_after_the_caller_switched_contexts");
    if (!context)
        return;
    const pj_driver *d = context->driver;
    if (!d->cuCtxCreate || !d->cuCtxDestroy) {
        printf("SKIP launch_after_the_caller_switched_contexts: no cuCtxCreate_v2\n");
        probe_close(context, dir);
        return;
    }
    void *primary = NULL;
    ck_assert_int_eq(ptxjit_cuda_context(&primary, context), PTXJIT_OK);
    ck_assert_int_eq(d->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    enum { N = 4099 };
    static float x[N], y[N], got[N], want[N];
    seed();
    for (int i = 0; i < N; i++) {
        x[i] = next_float();
        y[i] = next_float();
    }
    ptxjit_kernel *kernel = get(context, "launch_probe", "tpb=128");
    ptxjit_devptr dx = 0, dy = 0;
    ck_assert_int_eq(ptxjit_alloc(&dx, context, sizeof x), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dy, context, sizeof y), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, dx, x, sizeof x), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device(context, dy, y, sizeof y), PTXJIT_OK);
    expect_current(d, (CUcontext)primary, "ptxjit calls with no context current");
    float a = 1.5f;
    unsigned n = N;
    void *args[] = {&dx, &dy, &a, &n};
    ptxjit_dim3 grid = {(N + 127) / 128, 1, 1}, block = {128, 1, 1};
    memcpy(want, y, sizeof y);
    /* 1: ptxjit's context current, as its last call left it: the direct launch. 2: the
     * caller's own context made current behind ptxjit's back. 3: none current. */
    CUcontext mine = NULL;
    ck_assert_int_eq(d->cuCtxCreate(&mine, 0, context->device), CUDA_SUCCESS);
    ck_assert_int_eq(d->cuCtxSetCurrent((CUcontext)primary), CUDA_SUCCESS);
    CUcontext before[] = {(CUcontext)primary, mine, NULL};
    for (int round = 0; round < 3; round++) {
        ck_assert_int_eq(ptxjit_synchronize(context), PTXJIT_OK); /* leaves primary current */
        ck_assert_int_eq(d->cuCtxSetCurrent(before[round]), CUDA_SUCCESS);
        ptxjit_status status = ptxjit_launch(kernel, "saxpy_kernel", grid, block, 0, NULL, args);
        ck_assert_msg(status == PTXJIT_OK, "round %d: %s", round, ptxjit_last_error());
        expect_current(d, before[round] ? before[round] : (CUcontext)primary, "ptxjit_launch");
        for (int i = 0; i < N; i++)
            want[i] = a * x[i] + want[i];
        /* The driver's resource reads run in the kernel's context too. */
        ck_assert_int_eq(d->cuCtxSetCurrent(before[round]), CUDA_SUCCESS);
        ptxjit_kernel_resources resources;
        status = ptxjit_kernel_resources_get(&resources, kernel, "saxpy_kernel");
        ck_assert_msg(status == PTXJIT_OK, "round %d: %s", round, ptxjit_last_error());
        ck_assert_int_gt(resources.registers, 0);
        ck_assert_int_gt(resources.max_threads, 0);
        expect_current(d, before[round] ? before[round] : (CUcontext)primary,
                       "ptxjit_kernel_resources_get");
    }
    pthread_t thread;
    void *thread_args[] = {kernel, &grid, &block, args};
    ck_assert_int_eq(pthread_create(&thread, NULL, launch_from_thread, thread_args), 0);
    void *thread_status = NULL;
    ck_assert_int_eq(pthread_join(thread, &thread_status), 0);
    ck_assert_int_eq((int)(intptr_t)thread_status, PTXJIT_OK);
    for (int i = 0; i < N; i++)
        want[i] = a * x[i] + want[i];
    ck_assert_int_eq(ptxjit_synchronize(context), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host(context, got, dy, sizeof got), PTXJIT_OK);
    for (int i = 0; i < N; i++)
        ck_assert_msg(fabs(got[i] - want[i]) <= 1e-5 * (fabs(want[i]) + 4 * fabs(a * x[i])),
                      "y[%d] = %.9g, want %.9g", i, got[i], want[i]);
    ck_assert_int_eq(ptxjit_free(context, dx), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_free(context, dy), PTXJIT_OK);
    probe_close(context, dir);
    ck_assert_int_eq(d->cuCtxDestroy(mine), CUDA_SUCCESS);
}
END_TEST

/* Poisoned buffers filled by asynchronous copies on a stream of ptxjit's, a checked launch on
 * it between two events, the result copied back on it; sizes that are no multiple of the
 * block, and a tail past n that must stay poisoned. */
START_TEST(stream_events_async_copies_and_fills)
{
    char *dir;
    ptxjit_context *context = probe_gpu(&dir, "stream_events_async_copies_and_fills");
    if (!context)
        return;
    enum { N = 1000003, TAIL = 37 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y);
    float *got = malloc((N + TAIL) * sizeof *got);
    ck_assert(x && y && got);
    seed();
    for (size_t i = 0; i < N; i++) {
        x[i] = next_float();
        y[i] = next_float();
    }
    void *stream = NULL, *start = NULL, *end = NULL;
    ck_assert_int_eq(ptxjit_stream_create(&stream, context, PTXJIT_STREAM_NON_BLOCKING),
                     PTXJIT_OK);
    ck_assert_ptr_nonnull(stream);
    ck_assert_int_eq(ptxjit_event_create(&start, context), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_event_create(&end, context), PTXJIT_OK);
    ptxjit_devptr dx = 0, dy = 0;
    ck_assert_int_eq(ptxjit_alloc(&dx, context, N * sizeof *x), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_alloc(&dy, context, (N + TAIL) * sizeof *y), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_memset_d8_async(context, dx, 0xff, N * sizeof *x, stream), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_memset_d8_async(context, dy, 0xff, (N + TAIL) * sizeof *y, stream),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device_async(context, dx, x, N * sizeof *x, stream),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_device_async(context, dy, y, N * sizeof *y, stream),
                     PTXJIT_OK);
    ptxjit_kernel *kernel = get(context, "launch_probe", "tpb=128");
    float a = 1.75f;
    unsigned n = N;
    void *args[] = {&dx, &dy, &a, &n};
    size_t sizes[] = {sizeof dx, sizeof dy, sizeof a, sizeof n};
    ck_assert_int_eq(ptxjit_event_record(context, start, stream), PTXJIT_OK);
    ptxjit_status status = ptxjit_launch_checked(kernel, "saxpy_kernel",
                                                 (ptxjit_dim3){(N + 127) / 128, 1, 1},
                                                 (ptxjit_dim3){128, 1, 1}, 0, stream, 4, args,
                                                 sizes);
    ck_assert_msg(status == PTXJIT_OK, "%s", ptxjit_last_error());
    ck_assert_int_eq(ptxjit_event_record(context, end, stream), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host_async(context, got, dy, (N + TAIL) * sizeof *got,
                                               stream),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_event_synchronize(context, end), PTXJIT_OK);
    float ms = -1;
    ck_assert_int_eq(ptxjit_event_elapsed_ms(&ms, context, start, end), PTXJIT_OK);
    ck_assert(ms >= 0);
    ck_assert_int_eq(ptxjit_stream_synchronize(context, stream), PTXJIT_OK);
    expect_saxpy(got, x, y, a, N);
    const unsigned char *tail = (const unsigned char *)(got + N);
    for (size_t i = 0; i < TAIL * sizeof *got; i++)
        ck_assert_msg(tail[i] == 0xff, "byte %zu past n was written", i);
    /* 32-bit fills of an odd count: the word after them keeps x. */
    enum { WORDS = 1001 };
    ck_assert_int_eq(ptxjit_memset_d32_async(context, dx, 0x3fc00000u, WORDS, stream), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_copy_to_host_async(context, got, dx, (WORDS + 1) * sizeof *got, stream),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_stream_synchronize(context, stream), PTXJIT_OK);
    for (int i = 0; i < WORDS; i++)
        ck_assert_msg(got[i] == 1.5f, "word %d: %g", i, got[i]);
    ck_assert(memcmp(&got[WORDS], &x[WORDS], sizeof *got) == 0);
    ck_assert_int_eq(ptxjit_event_destroy(context, start), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_event_destroy(context, end), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_stream_destroy(context, stream), PTXJIT_OK);
    ptxjit_free(context, dx);
    ptxjit_free(context, dy);
    free(x);
    free(y);
    free(got);
    probe_close(context, dir);
}
END_TEST

START_TEST(failed_launches_name_the_launch)
{
    char *dir;
    ptxjit_context *context = probe_gpu(&dir, "failed_launches_name_the_launch");
    if (!context)
        return;
    ptxjit_kernel *kernel = get(context, "launch_probe", "tpb=128");
    ptxjit_devptr buffer = 0;
    ck_assert_int_eq(ptxjit_alloc(&buffer, context, 1024), PTXJIT_OK);
    float a = 1;
    unsigned n = 128;
    void *args[] = {&buffer, &buffer, &a, &n};
    const ptxjit_dim3 block = {128, 1, 1};
    ck_assert_int_eq(ptxjit_launch(kernel, "saxpy_kernel", (ptxjit_dim3){1, 65536, 1}, block, 0,
                                   NULL, args),
                     PTXJIT_ERR_CUDA);
    const char *message = ptxjit_last_error();
    ck_assert_msg(strstr(message, "launching launch_probe (tpb=128) entry saxpy_kernel with grid "
                                  "1 x 65536 x 1, block 128 x 1 x 1, 0 bytes of dynamic shared "
                                  "memory: cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE ("),
                  "%s", message);
    ck_assert_msg(strstr(message, "CUDA error 1)"), "%s", message);
    ck_assert_msg(strstr(message, "65535"), "%s", message); /* the hint */
    /* More threads than the entry's launch bound. */
    ck_assert_int_eq(ptxjit_launch(kernel, "saxpy_kernel", (ptxjit_dim3){1, 1, 1},
                                   (ptxjit_dim3){256, 1, 1}, 0, NULL, args),
                     PTXJIT_ERR_CUDA);
    message = ptxjit_last_error();
    ck_assert_msg(strstr(message, "entry saxpy_kernel with grid 1 x 1 x 1, block 256 x 1 x 1"),
                  "%s", message);
    ck_assert_msg(strstr(message, "failed: CUDA_ERROR_"), "%s", message);
    /* More dynamic shared memory than any device has. */
    ck_assert_int_eq(ptxjit_launch(kernel, "saxpy_kernel", (ptxjit_dim3){1, 1, 1}, block,
                                   1u << 20, NULL, args),
                     PTXJIT_ERR_CUDA);
    message = ptxjit_last_error();
    ck_assert_msg(strstr(message, "entry saxpy_kernel asks for 1048576 bytes of dynamic shared"),
                  "%s", message);
    ck_assert_msg(strstr(message, "CUDA_ERROR_"), "%s", message);
    /* Clusters past the portable 8 blocks, without the entry's opt-in. */
    ptxjit_status status = ptxjit_launch_cluster(kernel, "saxpy_kernel", (ptxjit_dim3){32, 1, 1},
                                                 block, (ptxjit_dim3){32, 1, 1}, 0, NULL, args);
    ck_assert_int_eq(status, PTXJIT_ERR_CUDA);
    message = ptxjit_last_error();
    ck_assert_msg(strstr(message, "block 128 x 1 x 1, 0 bytes of dynamic shared memory in "
                                  "clusters of 32 x 1 x 1: cuLaunchKernelEx failed: CUDA_ERROR_"),
                  "%s", message);
    /* None of them spoiled the context: a launch that fits runs. */
    ck_assert_int_eq(ptxjit_memset_d32_async(context, buffer, 0, 256, NULL), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_launch(kernel, "saxpy_kernel", (ptxjit_dim3){1, 1, 1}, block, 0,
                                   NULL, args),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_synchronize(context), PTXJIT_OK);
    ptxjit_free(context, buffer);
    probe_close(context, dir);
}
END_TEST

Suite *suite_launch_api_gpu(void)
{
    Suite *s = suite_create("launch_api_gpu");
    TCase *t = tcase_create("core");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, layouts_equal_the_drivers);
    tcase_add_test(t, buffer_packed_by_the_layouts_runs);
    tcase_add_test(t, callers_context_stays_current);
    tcase_add_test(t, launch_after_the_caller_switched_contexts);
    tcase_add_test(t, stream_events_async_copies_and_fills);
    tcase_add_test(t, failed_launches_name_the_launch);
    suite_add_tcase(s, t);
    return s;
}

/* test_multigpu.c — several GPUs in one process, without a GPU: the fake driver
 * (tests/fake_cuda, $PJ_FAKE_DEVICES devices of $PJ_FAKE_DEVICE_ARCHS) stands in for libcuda.
 * One context per device, each driven by a thread of its own: one compile per distinct key in
 * the process (shared in memory: the same cubin bytes), one per architecture where they mix,
 * a failed compile reported to the thread that waited for it, requests for other keys never
 * held up by it, every module load and launch in its own device's context, the caller's
 * context put back, and the shared kernels' lifetime. The fake runs no kernel; the GPU suite
 * (test_multigpu_gpu.c) checks results. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "request/context.h"
#include "request/share.h"
#include "test_util.h"

enum { FAKE_LOADS, FAKE_LAUNCHES, FAKE_ALLOCS, FAKE_REFUSED }; /* the fake's COUNT_* */
enum { MAX_DEVICES = 4, MAX_REQUESTS = 4 };

static int (*fake_count)(int device, int what);

/* Makes the fake this process's CUDA driver, with devices of archs ("90,80"). 0 after saying
 * why the test is skipped: the fake is not built, or the driver may be loaded already (Check
 * not forking: tests share the process). */
static int use_fake_driver(const char *test, int devices, const char *archs)
{
    const char *fork_mode = getenv("CK_FORK"), *cli = getenv("PTXJIT_CLI");
    if (fork_mode && strcmp(fork_mode, "no") == 0) {
        printf("SKIP %s: the fake driver must be the process's first (CK_FORK=no)\n", test);
        return 0;
    }
    char path[4096];
    const char *slash = cli ? strrchr(cli, '/') : NULL;
    snprintf(path, sizeof path, "%.*sfake_cuda/libcuda.so.1", slash ? (int)(slash + 1 - cli) : 0,
             cli ? cli : "");
    if (!cli || access(path, R_OK) != 0) {
        printf("SKIP %s: no %s (make test builds it)\n", test, path);
        return 0;
    }
    char count[16];
    snprintf(count, sizeof count, "%d", devices);
    setenv("PJ_FAKE_DEVICES", count, 1);
    setenv("PJ_FAKE_DEVICE_ARCHS", archs, 1);
    setenv("PTXJIT_CUDA_LIBRARY", path, 1);
    void *fake = dlopen(path, RTLD_NOW); /* the object ptxjit's loader opens too */
    ck_assert_msg(fake, "%s", dlerror());
    *(void **)&fake_count = dlsym(fake, "fake_cuda_count");
    ck_assert_ptr_nonnull(fake_count);
    int found = 0;
    ck_assert_msg(ptxjit_device_count(&found) == PTXJIT_OK, "%s", ptxjit_last_error());
    ck_assert_int_eq(found, devices);
    return 1;
}

static ptxjit_context *open_device(int device, int process_cache)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.device = device;
    options.disk_cache = 0; /* every kernel a compile, none a disk hit */
    options.process_cache = process_cache;
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    ck_assert_msg(ptxjit_gpu_status(context) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

typedef struct {
    const char *family, *params;
} request;

/* One device's thread: every request after the others are ready, then each kernel launched
 * and its resources read, on its own device. Failures are kept for the main thread, which
 * asserts (an assertion belongs to the test's own thread). */
typedef struct {
    ptxjit_context *context;
    int device;
    const request *requests;
    int count;
    pthread_barrier_t *start;
    ptxjit_kernel *kernels[MAX_REQUESTS];
    ptxjit_origin origins[MAX_REQUESTS];
    int registers[MAX_REQUESTS];
    char error[1024];
} device_worker;

static void *drive_device(void *arg)
{
    device_worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int i = 0; i < w->count && !w->error[0]; i++) {
        const request *r = &w->requests[i];
        if (ptxjit_get_kernel(&w->kernels[i], w->context, r->family, r->params,
                              &w->origins[i]) != PTXJIT_OK)
            snprintf(w->error, sizeof w->error, "device %d, %s %s: %s", w->device, r->family,
                     r->params, ptxjit_last_error());
    }
    for (int i = 0; i < w->count && !w->error[0]; i++) {
        uint64_t pointer = 0;
        void *args[] = {&pointer, &pointer, &pointer, &pointer};
        ptxjit_kernel_resources resources;
        ptxjit_dim3 one = {1, 1, 1}, block = {32, 1, 1};
        if (ptxjit_launch(w->kernels[i], NULL, one, block, 0, NULL, args) != PTXJIT_OK ||
            ptxjit_kernel_resources_get(&resources, w->kernels[i], NULL) != PTXJIT_OK)
            snprintf(w->error, sizeof w->error, "device %d, launching %s: %s", w->device,
                     w->requests[i].family, ptxjit_last_error());
        else
            w->registers[i] = resources.registers;
    }
    return NULL;
}

/* Runs the requests on every device at once, one thread each. */
static void drive_all(device_worker *workers, ptxjit_context **contexts, int devices,
                      const request *requests, int count)
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)devices);
    pthread_t threads[MAX_DEVICES];
    for (int d = 0; d < devices; d++) {
        workers[d] = (device_worker){.context = contexts[d], .device = d, .requests = requests,
                                     .count = count, .start = &start};
        ck_assert_int_eq(pthread_create(&threads[d], NULL, drive_device, &workers[d]), 0);
    }
    for (int d = 0; d < devices; d++)
        pthread_join(threads[d], NULL);
    pthread_barrier_destroy(&start);
    for (int d = 0; d < devices; d++)
        ck_assert_msg(!workers[d].error[0], "%s", workers[d].error);
}

static pj_share_counters since(const pj_share_counters *before)
{
    pj_share_counters now;
    pj_share_counters_get(&now);
    return (pj_share_counters){now.compiled - before->compiled, now.disk - before->disk,
                               now.remote - before->remote, now.shared - before->shared,
                               now.waited - before->waited};
}

static const request three_keys[] = {{"reduce", "variant=one_pass"},
                                     {"reduce", "variant=vectorized tpb=256"},
                                     {"transpose", "variant=smem"}};

/* Four devices of one architecture, the same three requests from four threads at once: three
 * compiles in the process; each context gets the same key and the very same cubin bytes, one
 * of them as the compile, the others from it; each device loads its own three modules and
 * launches there, and its resources come from its own device's functions. */
START_TEST(multigpu_one_compile_per_key_across_devices)
{
    if (!use_fake_driver("multigpu_one_compile_per_key_across_devices", 4, "90,90,90,90"))
        return;
    enum { DEVICES = 4, REQUESTS = 3 };
    ptxjit_context *contexts[DEVICES];
    for (int d = 0; d < DEVICES; d++)
        contexts[d] = open_device(d, 1);
    pj_share_counters before;
    pj_share_counters_get(&before);
    device_worker workers[DEVICES];
    drive_all(workers, contexts, DEVICES, three_keys, REQUESTS);
    pj_share_counters done = since(&before);
    ck_assert_uint_eq(done.compiled, REQUESTS);
    ck_assert_uint_eq(done.shared, REQUESTS * (DEVICES - 1));
    for (int i = 0; i < REQUESTS; i++) {
        int compiled = 0;
        const void *cubin = ptxjit_kernel_cubin(workers[0].kernels[i], NULL);
        for (int d = 0; d < DEVICES; d++) {
            const device_worker *w = &workers[d];
            compiled += w->origins[i] == PTXJIT_ORIGIN_COMPILED;
            ck_assert_msg(w->origins[i] == PTXJIT_ORIGIN_COMPILED ||
                              w->origins[i] == PTXJIT_ORIGIN_SHARED,
                          "device %d: origin %d", d, (int)w->origins[i]);
            ck_assert_str_eq(ptxjit_kernel_key(w->kernels[i]),
                             ptxjit_kernel_key(workers[0].kernels[i]));
            ck_assert_ptr_eq(ptxjit_kernel_cubin(w->kernels[i], NULL), cubin);
            ck_assert_int_eq(w->registers[i], 16 + d); /* the fake's mark of device d */
        }
        ck_assert_int_eq(compiled, 1);
    }
    for (int d = 0; d < DEVICES; d++) {
        ck_assert_int_eq(fake_count(d, FAKE_LOADS), REQUESTS);
        ck_assert_int_eq(fake_count(d, FAKE_LAUNCHES), REQUESTS);
        ck_assert_int_eq(fake_count(d, FAKE_REFUSED), 0);
    }
    /* Asked again: each context's own memory now. */
    ptxjit_kernel *again;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&again, contexts[2], "reduce", "variant=one_pass",
                                       &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_MEMORY);
    ck_assert_ptr_eq(again, workers[2].kernels[0]);
    for (int d = 0; d < DEVICES; d++)
        ptxjit_close(contexts[d]);
}
END_TEST

/* Devices of two architectures: one compile for each, a key for each, and every device loads
 * the cubin of its own architecture (the fake refuses a module of another SM). */
START_TEST(multigpu_mixed_architectures_compile_once_per_architecture)
{
    if (!use_fake_driver("multigpu_mixed_architectures_compile_once_per_architecture", 4,
                         "90,80,90,80"))
        return;
    enum { DEVICES = 4 };
    ptxjit_context *contexts[DEVICES];
    for (int d = 0; d < DEVICES; d++)
        contexts[d] = open_device(d, 1);
    ck_assert_str_eq(ptxjit_arch(contexts[0]), "sm_90a");
    ck_assert_str_eq(ptxjit_arch(contexts[1]), "sm_80");
    pj_share_counters before;
    pj_share_counters_get(&before);
    static const request one[] = {{"reduce", "variant=vectorized"}};
    device_worker workers[DEVICES];
    drive_all(workers, contexts, DEVICES, one, 1);
    pj_share_counters done = since(&before);
    ck_assert_uint_eq(done.compiled, 2);
    ck_assert_uint_eq(done.shared, 2);
    ck_assert_str_eq(ptxjit_kernel_key(workers[0].kernels[0]),
                     ptxjit_kernel_key(workers[2].kernels[0]));
    ck_assert_str_eq(ptxjit_kernel_key(workers[1].kernels[0]),
                     ptxjit_kernel_key(workers[3].kernels[0]));
    ck_assert_str_ne(ptxjit_kernel_key(workers[0].kernels[0]),
                     ptxjit_kernel_key(workers[1].kernels[0]));
    for (int d = 0; d < DEVICES; d++) {
        ck_assert_int_eq(fake_count(d, FAKE_LOADS), 1);
        ck_assert_int_eq(fake_count(d, FAKE_LAUNCHES), 1);
        ck_assert_int_eq(fake_count(d, FAKE_REFUSED), 0);
        ptxjit_close(contexts[d]);
    }
}
END_TEST

/* ---- a producer held while another thread asks ---- */

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t hold_changed = PTHREAD_COND_INITIALIZER;
static int producers, holding, released;
static uint64_t release_when_waited; /* 0: release only when released is set */

/* The first producer of the test is held until another thread waits on its key (the counters
 * say so) or the test releases it; 60 s at most, so that a bug fails the test, not hangs it. */
static void hold_first_producer(const pj_hash128 *key)
{
    (void)key;
    pthread_mutex_lock(&hold_lock);
    int first = producers++ == 0;
    holding |= first;
    pthread_cond_broadcast(&hold_changed);
    pthread_mutex_unlock(&hold_lock);
    for (int waited_ms = 0; first && waited_ms < 60000; waited_ms += 2) {
        pj_share_counters now;
        pj_share_counters_get(&now);
        pthread_mutex_lock(&hold_lock);
        int go = released || (release_when_waited && now.waited >= release_when_waited);
        pthread_mutex_unlock(&hold_lock);
        if (go)
            break;
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
}

static void wait_until_holding(void)
{
    pthread_mutex_lock(&hold_lock);
    while (!holding)
        pthread_cond_wait(&hold_changed, &hold_lock);
    pthread_mutex_unlock(&hold_lock);
}

typedef struct {
    ptxjit_context *context;
    const char *family, *params;
    ptxjit_status status;
    ptxjit_origin origin;
    char message[2048], log[256];
    int finished_while_held; /* the first producer had not been released yet */
} asker;

static void *ask(void *arg)
{
    asker *a = arg;
    ptxjit_kernel *kernel;
    a->status = ptxjit_get_kernel(&kernel, a->context, a->family, a->params, &a->origin);
    snprintf(a->message, sizeof a->message, "%s", a->status ? ptxjit_last_error() : "");
    snprintf(a->log, sizeof a->log, "%s", ptxjit_last_compile_log());
    pthread_mutex_lock(&hold_lock);
    a->finished_while_held = !released;
    pthread_mutex_unlock(&hold_lock);
    return NULL;
}

static const char broken[] =
    "//@ptxjit family broken\n//@ptxjit entry broken_kernel\n"
    "extern \"C\" __global__ void broken_kernel(int *x) { x[0] = undefined_name; }\n";

/* Two devices ask for one kernel that does not compile, the second while the first compiles
 * it: one compile, and both get its failure: the status, the message and the whole log. */
START_TEST(multigpu_failed_compile_reported_to_every_waiter)
{
    if (!use_fake_driver("multigpu_failed_compile_reported_to_every_waiter", 2, "90,90"))
        return;
    ptxjit_context *contexts[2] = {open_device(0, 1), open_device(1, 1)};
    for (int d = 0; d < 2; d++)
        ck_assert_int_eq(ptxjit_add_template(contexts[d], "broken.cu", broken), PTXJIT_OK);
    pj_share_counters before;
    pj_share_counters_get(&before);
    release_when_waited = before.waited + 1;
    pj_share_hold = hold_first_producer;
    asker first = {contexts[0], "broken", "", 0, 0, "", "", 0};
    asker second = {contexts[1], "broken", "", 0, 0, "", "", 0};
    pthread_t threads[2];
    ck_assert_int_eq(pthread_create(&threads[0], NULL, ask, &first), 0);
    wait_until_holding();
    ck_assert_int_eq(pthread_create(&threads[1], NULL, ask, &second), 0);
    pthread_join(threads[0], NULL);
    pthread_join(threads[1], NULL);
    ck_assert_int_eq(producers, 1);
    ck_assert_uint_eq(since(&before).waited, 1);
    ck_assert_int_eq(first.status, PTXJIT_ERR_COMPILE);
    ck_assert_int_eq(second.status, PTXJIT_ERR_COMPILE);
    ck_assert_ptr_nonnull(strstr(first.message, "undefined_name"));
    ck_assert_str_eq(second.message, first.message);
    ck_assert_ptr_nonnull(strstr(first.log, "undefined_name"));
    ck_assert_str_eq(second.log, first.log);
    /* The failure is not kept: the next request compiles (and fails) anew. */
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, contexts[1], "broken", "", &origin),
                     PTXJIT_ERR_COMPILE);
    ck_assert_int_eq(producers, 2);
    pj_share_hold = NULL;
    ptxjit_close(contexts[0]);
    ptxjit_close(contexts[1]);
}
END_TEST

/* While one device's thread compiles a key (held), another device's request for another key
 * compiles and returns: only threads of the same key wait on each other. */
START_TEST(multigpu_other_keys_do_not_wait)
{
    if (!use_fake_driver("multigpu_other_keys_do_not_wait", 2, "90,90"))
        return;
    ptxjit_context *contexts[2] = {open_device(0, 1), open_device(1, 1)};
    pj_share_hold = hold_first_producer;
    asker held = {contexts[0], "reduce", "variant=one_pass", 0, 0, "", "", 0};
    asker other = {contexts[1], "reduce", "variant=two_pass", 0, 0, "", "", 0};
    pthread_t threads[2];
    ck_assert_int_eq(pthread_create(&threads[0], NULL, ask, &held), 0);
    wait_until_holding();
    ck_assert_int_eq(pthread_create(&threads[1], NULL, ask, &other), 0);
    pthread_join(threads[1], NULL);
    pthread_mutex_lock(&hold_lock);
    released = 1;
    pthread_mutex_unlock(&hold_lock);
    pthread_join(threads[0], NULL);
    pj_share_hold = NULL;
    ck_assert_msg(other.status == PTXJIT_OK, "%s", other.message);
    ck_assert_msg(held.status == PTXJIT_OK, "%s", held.message);
    ck_assert_msg(other.finished_while_held, "the other key waited for the held compile");
    ck_assert_int_eq(other.origin, PTXJIT_ORIGIN_COMPILED);
    ptxjit_close(contexts[0]);
    ptxjit_close(contexts[1]);
}
END_TEST

/* One thread drives two devices with device 1's context its own current one: each call on
 * device 0 runs there (the fake counts it there, and refuses a launch in the wrong context)
 * and puts device 1's back. */
START_TEST(multigpu_one_thread_drives_two_devices_and_keeps_its_context)
{
    if (!use_fake_driver("multigpu_one_thread_drives_two_devices_and_keeps_its_context", 2,
                         "90,90"))
        return;
    ptxjit_context *contexts[2] = {open_device(0, 1), open_device(1, 1)};
    const pj_driver *driver = NULL;
    ck_assert_int_eq(pj_driver_get(&driver), PTXJIT_OK);
    void *mine = NULL, *theirs = NULL;
    ck_assert_int_eq(ptxjit_cuda_context(&mine, contexts[1]), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_cuda_context(&theirs, contexts[0]), PTXJIT_OK);
    ck_assert_ptr_ne(mine, theirs);
    ck_assert_int_eq(driver->cuCtxSetCurrent((CUcontext)mine), CUDA_SUCCESS);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, contexts[0], "reduce", "variant=one_pass", NULL),
                     PTXJIT_OK);
    ptxjit_devptr buffer;
    ck_assert_int_eq(ptxjit_alloc(&buffer, contexts[0], 64), PTXJIT_OK);
    void *stream;
    ck_assert_int_eq(ptxjit_stream_create(&stream, contexts[0], 0), PTXJIT_OK);
    uint64_t n = 16;
    void *args[] = {&buffer, &buffer, &n};
    ptxjit_dim3 one = {1, 1, 1}, block = {32, 1, 1};
    ck_assert_msg(ptxjit_launch(kernel, NULL, one, block, 0, stream, args) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    CUcontext current = NULL;
    driver->cuCtxGetCurrent(&current);
    ck_assert_ptr_eq(current, mine);
    ck_assert_int_eq(fake_count(0, FAKE_LAUNCHES), 1);
    ck_assert_int_eq(fake_count(0, FAKE_ALLOCS), 1);
    ck_assert_int_eq(fake_count(1, FAKE_LAUNCHES), 0);
    ck_assert_int_eq(fake_count(1, FAKE_ALLOCS), 0);
    /* The same kernel on device 1: its own module, loaded there. */
    ptxjit_kernel *on_one;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&on_one, contexts[1], "reduce", "variant=one_pass",
                                       &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_SHARED);
    ck_assert_int_eq(ptxjit_launch(on_one, NULL, one, block, 0, NULL, args), PTXJIT_OK);
    void *module0, *module1;
    ck_assert_int_eq(ptxjit_kernel_module(&module0, kernel), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_kernel_module(&module1, on_one), PTXJIT_OK);
    ck_assert_ptr_ne(module0, module1);
    ck_assert_int_eq(fake_count(1, FAKE_LAUNCHES), 1);
    /* Device 0's stream with device 1's kernel: the driver's refusal, reported. */
    ck_assert_int_eq(ptxjit_launch(on_one, NULL, one, block, 0, stream, args), PTXJIT_ERR_CUDA);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "CUDA_ERROR_INVALID_CONTEXT"));
    driver->cuCtxGetCurrent(&current);
    ck_assert_ptr_eq(current, mine);
    ck_assert_int_eq(ptxjit_stream_destroy(contexts[0], stream), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_free(contexts[0], buffer), PTXJIT_OK);
    /* With no context current, a call leaves its own device's primary one current (as the
     * CUDA runtime would), and the next device's call puts it back. */
    ck_assert_int_eq(driver->cuCtxSetCurrent(NULL), CUDA_SUCCESS);
    ck_assert_int_eq(ptxjit_synchronize(contexts[1]), PTXJIT_OK);
    driver->cuCtxGetCurrent(&current);
    ck_assert_ptr_eq(current, mine);
    ck_assert_int_eq(ptxjit_synchronize(contexts[0]), PTXJIT_OK);
    driver->cuCtxGetCurrent(&current);
    ck_assert_ptr_eq(current, mine);
    ptxjit_close(contexts[0]);
    ptxjit_close(contexts[1]);
}
END_TEST

/* A context opened with process_cache = 0 produces every kernel itself. */
START_TEST(multigpu_process_cache_off_compiles_apart)
{
    if (!use_fake_driver("multigpu_process_cache_off_compiles_apart", 2, "90,90"))
        return;
    ptxjit_context *shared = open_device(0, 1), *apart = open_device(1, 0);
    pj_share_counters before;
    pj_share_counters_get(&before);
    ptxjit_kernel *a, *b;
    ptxjit_origin origin_a, origin_b;
    ck_assert_int_eq(ptxjit_get_kernel(&a, shared, "reduce", "variant=batched", &origin_a),
                     PTXJIT_OK);
    ck_assert_int_eq(ptxjit_get_kernel(&b, apart, "reduce", "variant=batched", &origin_b),
                     PTXJIT_OK);
    ck_assert_int_eq(origin_a, PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(origin_b, PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_eq(ptxjit_kernel_key(a), ptxjit_kernel_key(b));
    ck_assert_ptr_ne(ptxjit_kernel_cubin(a, NULL), ptxjit_kernel_cubin(b, NULL));
    ck_assert_uint_eq(since(&before).compiled, 2);
    ptxjit_close(shared);
    ptxjit_close(apart);
}
END_TEST

/* A shared kernel outlives the context that compiled it; the process keeps it only while a
 * context holds it: once every holder is closed, the next context compiles it again. */
START_TEST(multigpu_shared_kernel_outlives_its_compiler)
{
    if (!use_fake_driver("multigpu_shared_kernel_outlives_its_compiler", 2, "90,90"))
        return;
    ptxjit_context *first = open_device(0, 1), *second = open_device(1, 1);
    ptxjit_kernel *a, *b;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&a, first, "softmax", "", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(ptxjit_get_kernel(&b, second, "softmax", "", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_SHARED);
    size_t size = 0;
    const void *cubin = ptxjit_kernel_cubin(b, &size);
    void *copy = malloc(size);
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, cubin, size);
    ptxjit_close(first);
    ck_assert_ptr_eq(ptxjit_kernel_cubin(b, NULL), cubin);
    ck_assert_int_eq(memcmp(ptxjit_kernel_cubin(b, NULL), copy, size), 0);
    void *function;
    ck_assert_int_eq(ptxjit_kernel_function(&function, b, NULL), PTXJIT_OK);
    ck_assert_int_eq(fake_count(1, FAKE_LOADS), 1);
    free(copy);
    ptxjit_close(second);
    ptxjit_context *third = open_device(0, 1);
    ck_assert_int_eq(ptxjit_get_kernel(&a, third, "softmax", "", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    ptxjit_close(third);
}
END_TEST

/* Without a driver the count is refused with the reason, and 0. */
START_TEST(multigpu_device_count_without_a_driver)
{
    const char *fork_mode = getenv("CK_FORK");
    if (fork_mode && strcmp(fork_mode, "no") == 0) {
        printf("SKIP multigpu_device_count_without_a_driver: CK_FORK=no\n");
        return;
    }
    setenv("PTXJIT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    int count = -1;
    ck_assert_int_eq(ptxjit_device_count(&count), PTXJIT_ERR_NO_DRIVER);
    ck_assert_int_eq(count, 0);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "/nonexistent/libcuda.so.1"));
    ck_assert_int_eq(ptxjit_device_count(NULL), PTXJIT_ERR_INVALID_ARGUMENT);
}
END_TEST

Suite *suite_multigpu(void)
{
    Suite *s = suite_create("multigpu");
    TCase *t = tcase_create("fake_driver");
    tcase_set_timeout(t, 300);
    tcase_add_test(t, multigpu_failed_compile_reported_to_every_waiter);
    tcase_add_test(t, multigpu_one_thread_drives_two_devices_and_keeps_its_context);
    tcase_add_test(t, multigpu_device_count_without_a_driver);
    suite_add_tcase(s, t);
    TCase *many = test_many_compiles_case(s, 300);
    tcase_add_test(many, multigpu_one_compile_per_key_across_devices);
    tcase_add_test(many, multigpu_shared_kernel_outlives_its_compiler);
    tcase_add_test(many, multigpu_mixed_architectures_compile_once_per_architecture);
    tcase_add_test(many, multigpu_other_keys_do_not_wait);
    tcase_add_test(many, multigpu_process_cache_off_compiles_apart);
    return s;
}

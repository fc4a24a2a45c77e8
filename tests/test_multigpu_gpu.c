/* test_multigpu_gpu.c — every family on every visible GPU at once: one context and one thread
 * per device, all asking for the same kernels together (one compile per distinct key in the
 * process: keys differ only between architectures), then each running every family's op on
 * its own device's data, checked against the CPU references. With one GPU the same runs on
 * it alone, and the test says the cross-device part was skipped. */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "families/matmul/op.h"
#include "families/reduce/op.h"
#include "families/softmax/op.h"
#include "families/transpose/op.h"
#include "request/share.h"
#include "test_util.h"

enum { MAX_DEVICES = 16 };

typedef struct {
    const char *family, *params;
    int min_sm; /* 90: TMA and wgmma */
} gpu_request;

static const gpu_request requests[] = {
    {"reduce", "variant=vectorized dtype=i32", 0}, {"reduce", "variant=two_pass dtype=f32", 0},
    {"transpose", "variant=smem dtype=f32", 0},    {"transpose", "variant=tma_batched", 90},
    {"matmul", "variant=block_tiled", 0},          {"matmul", "variant=wgmma", 90},
    {"softmax", "", 0},                            {"softmax", "variant=block dtype=bf16", 0}};
enum { REQUESTS = sizeof requests / sizeof requests[0] };

typedef struct {
    ptxjit_context *context;
    int device;
    pthread_barrier_t *start;
    ptxjit_kernel *kernels[REQUESTS]; /* NULL: not for this device's architecture */
    ptxjit_origin origins[REQUESTS];
    char error[2048];
} device_worker;

static int failed(device_worker *w, const char *format, ...) PJ_PRINTF(2, 3);
static int failed(device_worker *w, const char *format, ...)
{
    int n = snprintf(w->error, sizeof w->error, "device %d: ", w->device);
    va_list args;
    va_start(args, format);
    vsnprintf(w->error + n, sizeof w->error - (size_t)n, format, args);
    va_end(args);
    return 0;
}

static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float random_unit(uint64_t *state) /* [-1, 1) */
{
    return (float)((double)(next_random(state) >> 11) * 0x1.0p-52 - 1.0);
}

/* Device buffers of one check, freed together. */
typedef struct {
    ptxjit_context *context;
    ptxjit_devptr pointers[3];
    int count;
} buffers;

static ptxjit_devptr upload(buffers *b, const void *host, size_t bytes)
{
    ptxjit_devptr pointer = 0;
    if (ptxjit_alloc(&pointer, b->context, bytes) != PTXJIT_OK)
        return 0;
    b->pointers[b->count++] = pointer;
    if (ptxjit_copy_to_device(b->context, pointer, host, bytes) != PTXJIT_OK)
        return 0;
    return pointer;
}

static void buffers_free(buffers *b)
{
    for (int i = 0; i < b->count; i++)
        ptxjit_free(b->context, b->pointers[i]);
}

static int check_reduce(device_worker *w, const char *params, uint64_t *seed)
{
    enum { N = 1000003 };
    int is_float = strstr(params, "f32") != NULL;
    int32_t *host = malloc(N * 4);
    if (!host)
        return failed(w, "out of memory");
    for (size_t i = 0; i < N; i++) {
        if (is_float)
            ((float *)host)[i] = random_unit(seed);
        else
            host[i] = (int32_t)(uint32_t)next_random(seed);
    }
    buffers b = {w->context, {0}, 0};
    ptxjit_devptr input = upload(&b, host, N * 4);
    uint32_t bits = 0;
    int ok = input && ptxjit_reduce(w->context, params, input, N, &bits) == PTXJIT_OK;
    if (!ok)
        failed(w, "reduce %s: %s", params, ptxjit_last_error());
    else if (is_float) {
        float got;
        memcpy(&got, &bits, 4);
        double magnitude, want = pj_reduce_reference_f32((const float *)host, N, &magnitude);
        if (!pj_reduce_f32_close(got, want, magnitude))
            ok = failed(w, "reduce %s: got %.9g, want %.9g", params, got, want);
    } else if (bits != pj_reduce_reference_i32(host, N)) {
        ok = failed(w, "reduce %s: got %u, want %u", params, bits,
                  pj_reduce_reference_i32(host, N));
    }
    buffers_free(&b);
    free(host);
    return ok;
}

static int check_transpose(device_worker *w, const char *params, uint64_t *seed)
{
    enum { ROWS = 1000, COLS = 768, BYTES = ROWS * COLS * 4 };
    unsigned char *in = malloc(BYTES), *out = malloc(BYTES), *want = malloc(BYTES);
    int ok = in && out && want;
    for (size_t i = 0; ok && i < BYTES; i++)
        in[i] = (unsigned char)next_random(seed);
    if (ok)
        memset(out, 0xff, BYTES);
    buffers b = {w->context, {0}, 0};
    ptxjit_devptr d_in = ok ? upload(&b, in, BYTES) : 0, d_out = ok ? upload(&b, out, BYTES) : 0;
    ok = d_in && d_out &&
         ptxjit_transpose(w->context, params, d_in, d_out, ROWS, COLS, NULL) == PTXJIT_OK &&
         ptxjit_copy_to_host(w->context, out, d_out, BYTES) == PTXJIT_OK;
    if (!ok)
        failed(w, "transpose %s: %s", params, ptxjit_last_error());
    else {
        pj_transpose_reference(want, in, ROWS, COLS, 4);
        if (memcmp(out, want, BYTES) != 0)
            ok = failed(w, "transpose %s: the output differs from the CPU transpose", params);
    }
    buffers_free(&b);
    free(in);
    free(out);
    free(want);
    return ok;
}

/* ‖C − ref‖ / ‖ref‖ over every row, against float64. */
static int check_matmul(device_worker *w, ptxjit_kernel *kernel, const char *params,
                        uint64_t *seed)
{
    enum { M = 256, N = 192, K = 128 };
    matmul_config config;
    if (pj_matmul_config_of(&config, kernel) != PTXJIT_OK)
        return failed(w, "matmul %s: %s", params, ptxjit_last_error());
    const size_t e = (size_t)pj_dtype_bytes(config.dtype), eo = (size_t)pj_dtype_bytes(config.out);
    void *a = malloc(M * K * e), *bm = malloc(K * N * e), *c = malloc(M * N * eo);
    double *want = malloc(N * sizeof *want);
    int ok = a && bm && c && want;
    for (size_t i = 0; ok && i < M * K; i++)
        pj_matmul_set_element(a, config.dtype, i, random_unit(seed));
    for (size_t i = 0; ok && i < K * N; i++)
        pj_matmul_set_element(bm, config.dtype, i, random_unit(seed));
    if (ok)
        memset(c, 0xff, M * N * eo); /* NaN in every type */
    buffers b = {w->context, {0}, 0};
    ptxjit_devptr da = ok ? upload(&b, a, M * K * e) : 0, db = ok ? upload(&b, bm, K * N * e) : 0;
    ptxjit_devptr dc = ok ? upload(&b, c, M * N * eo) : 0;
    ok = da && db && dc &&
         ptxjit_matmul(w->context, params, da, db, dc, M, N, K, NULL) == PTXJIT_OK &&
         ptxjit_copy_to_host(w->context, c, dc, M * N * eo) == PTXJIT_OK;
    if (!ok)
        failed(w, "matmul %s: %s", params, ptxjit_last_error());
    double diff = 0, norm = 0;
    for (size_t row = 0; ok && row < M; row++) {
        pj_matmul_reference_row(want, a, bm, config.dtype, N, K, row);
        for (size_t j = 0; j < N; j++) {
            double delta = pj_matmul_element(c, config.out, row * N + j) - want[j];
            diff += delta * delta;
            norm += want[j] * want[j];
        }
    }
    double tolerance = config.variant == MATMUL_WGMMA ? 1e-2 : 1e-5;
    if (ok && !(sqrt(diff / norm) <= tolerance))
        ok = failed(w, "matmul %s: relative error %.3e over %.0e", params, sqrt(diff / norm),
                  tolerance);
    buffers_free(&b);
    free(a);
    free(bm);
    free(c);
    free(want);
    return ok;
}

static int check_softmax(device_worker *w, ptxjit_kernel *kernel, const char *params,
                         uint64_t *seed)
{
    enum { ROWS = 333, COLS = 1000 };
    softmax_config config;
    if (pj_softmax_config_of(&config, kernel) != PTXJIT_OK)
        return failed(w, "softmax %s: %s", params, ptxjit_last_error());
    const size_t bytes = ROWS * COLS * (size_t)pj_dtype_bytes(config.dtype);
    void *in = malloc(bytes), *out = malloc(bytes);
    double *want = malloc(COLS * sizeof *want);
    int ok = in && out && want;
    for (size_t i = 0; ok && i < ROWS * COLS; i++)
        pj_softmax_set_element(in, config.dtype, i, 3 * random_unit(seed));
    if (ok)
        memset(out, 0xff, bytes);
    buffers b = {w->context, {0}, 0};
    ptxjit_devptr d_in = ok ? upload(&b, in, bytes) : 0, d_out = ok ? upload(&b, out, bytes) : 0;
    ok = d_in && d_out &&
         ptxjit_softmax(w->context, params, d_in, d_out, ROWS, COLS, NULL) == PTXJIT_OK &&
         ptxjit_copy_to_host(w->context, out, d_out, bytes) == PTXJIT_OK;
    if (!ok)
        failed(w, "softmax %s: %s", params, ptxjit_last_error());
    const softmax_tolerance tolerance = pj_softmax_tolerance(config.dtype);
    const size_t row_bytes = COLS * (size_t)pj_dtype_bytes(config.dtype);
    for (size_t r = 0; ok && r < ROWS; r++) {
        pj_softmax_reference(want, (const char *)in + r * row_bytes, config.dtype, COLS);
        for (size_t c = 0; ok && c < COLS; c++) {
            double got = pj_softmax_element(out, config.dtype, r * COLS + c);
            if (!(fabs(got - want[c]) <= tolerance.rel * want[c] + tolerance.abs))
                ok = failed(w, "softmax %s: [%zu][%zu] is %.9g, want %.9g", params, r, c, got,
                          want[c]);
        }
    }
    buffers_free(&b);
    free(in);
    free(out);
    free(want);
    return ok;
}

static int device_sm(ptxjit_context *context)
{
    return atoi(ptxjit_arch(context) + 3);
}

/* Every request of this device's architecture, after every device's thread is ready. */
static void *request_all(void *arg)
{
    device_worker *w = arg;
    pthread_barrier_wait(w->start);
    for (int i = 0; i < REQUESTS && !w->error[0]; i++) {
        if (device_sm(w->context) < requests[i].min_sm)
            continue;
        if (ptxjit_get_kernel(&w->kernels[i], w->context, requests[i].family,
                              requests[i].params, &w->origins[i]) != PTXJIT_OK)
            failed(w, "%s %s: %s", requests[i].family, requests[i].params, ptxjit_last_error());
    }
    return NULL;
}

/* Every family's op on this device's own data, checked. */
static void *run_all(void *arg)
{
    device_worker *w = arg;
    uint64_t seed = (uint64_t)time(NULL) ^ ((uint64_t)w->device << 40);
    pthread_barrier_wait(w->start);
    for (int i = 0; i < REQUESTS && !w->error[0]; i++) {
        const gpu_request *r = &requests[i];
        ptxjit_kernel *kernel = w->kernels[i];
        if (!kernel)
            continue;
        if (strcmp(r->family, "reduce") == 0)
            check_reduce(w, r->params, &seed);
        else if (strcmp(r->family, "transpose") == 0)
            check_transpose(w, r->params, &seed);
        else if (strcmp(r->family, "matmul") == 0)
            check_matmul(w, kernel, r->params, &seed);
        else
            check_softmax(w, kernel, r->params, &seed);
    }
    return NULL;
}

static void on_every_device(device_worker *workers, int devices, void *(*body)(void *))
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)devices);
    pthread_t threads[MAX_DEVICES];
    for (int d = 0; d < devices; d++) {
        workers[d].start = &start;
        ck_assert_int_eq(pthread_create(&threads[d], NULL, body, &workers[d]), 0);
    }
    for (int d = 0; d < devices; d++)
        pthread_join(threads[d], NULL);
    pthread_barrier_destroy(&start);
    for (int d = 0; d < devices; d++)
        ck_assert_msg(!workers[d].error[0], "%s", workers[d].error);
}

/* The distinct keys the workers hold, and that each was compiled by exactly one of them. */
static int distinct_keys(const device_worker *workers, int devices)
{
    int distinct = 0;
    for (int d = 0; d < devices; d++)
        for (int i = 0; i < REQUESTS; i++) {
            if (!workers[d].kernels[i])
                continue;
            const char *key = ptxjit_kernel_key(workers[d].kernels[i]);
            int seen = 0, compiled = 0;
            for (int e = 0; e < devices; e++)
                for (int j = 0; j < REQUESTS; j++)
                    if (workers[e].kernels[j] &&
                        strcmp(ptxjit_kernel_key(workers[e].kernels[j]), key) == 0) {
                        seen |= e < d || (e == d && j < i);
                        compiled += workers[e].origins[j] == PTXJIT_ORIGIN_COMPILED;
                    }
            ck_assert_msg(compiled == 1, "%s %s: compiled %d times in the process",
                          requests[i].family, requests[i].params, compiled);
            distinct += !seen;
        }
    return distinct;
}

START_TEST(multigpu_every_family_on_every_device)
{
    int devices = 0;
    if (ptxjit_device_count(&devices) != PTXJIT_OK) {
        printf("SKIP multigpu_every_family_on_every_device: %s\n", ptxjit_last_error());
        return;
    }
    if (devices < 2)
        printf("multigpu: 1 device, the cross-device part skipped\n");
    devices = devices > MAX_DEVICES ? MAX_DEVICES : devices;
    char *dir = test_mkdtemp(); /* an empty disk cache: every key is compiled here */
    device_worker workers[MAX_DEVICES];
    memset(workers, 0, sizeof workers);
    for (int d = 0; d < devices; d++) {
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.device = d;
        options.cache_dir = dir;
        workers[d].device = d;
        ck_assert_msg(ptxjit_open(&workers[d].context, &options) == PTXJIT_OK, "device %d: %s",
                      d, ptxjit_last_error());
        ck_assert_msg(ptxjit_gpu_status(workers[d].context) == PTXJIT_OK, "device %d: %s", d,
                      ptxjit_last_error());
    }
    pj_share_counters before, after;
    pj_share_counters_get(&before);
    on_every_device(workers, devices, request_all);
    pj_share_counters_get(&after);
    int keys = distinct_keys(workers, devices);
    ck_assert_uint_eq(after.compiled - before.compiled, (uint64_t)keys);
    ck_assert_uint_eq(after.disk - before.disk, 0);
    on_every_device(workers, devices, run_all);
    printf("multigpu: %d device%s, %d distinct keys compiled once each, every family checked "
           "on every device\n", devices, devices == 1 ? "" : "s", keys);
    for (int d = 0; d < devices; d++)
        ptxjit_close(workers[d].context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_multigpu_gpu(void)
{
    Suite *s = suite_create("multigpu_gpu");
    TCase *t = tcase_create("devices");
    tcase_set_timeout(t, 600);
    tcase_add_test(t, multigpu_every_family_on_every_device);
    suite_add_tcase(s, t);
    return s;
}

/* bench_multigpu.c — `ptxjit bench multigpu`: reduce and transpose on every GPU of the machine
 * at once, each on its own data, one context and one thread per device, against the same
 * figure of one GPU alone (issue 17: the aggregate should reach 0.95 x N x one GPU). The
 * kernels are asked for by every device together, so the line of compiles shows the process
 * compiling each key once. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "util/count.h"
#include "cli/timing.h"
#include "request/share.h"

enum { MAX_LANES = 16, REPEATS = 3, WARMUP = 3 };

typedef struct {
    const char *family;
    size_t rows, cols;     /* transpose: the matrix; reduce: n in cols, rows 1 */
    const char *params;    /* "" : the family's defaults */
} workload;

/* One device: its context, stream and buffers; its share of a timed pass. */
typedef struct {
    ptxjit_context *context;
    int device;
    void *stream;
    ptxjit_devptr input, output, result;
    const workload *work;
    int runs;
    pthread_barrier_t *start;
    double begin_ms, end_ms;
    ptxjit_origin origin;
    ptxjit_status status;
    char error[1024];
} lane;

static const char *params_text(const workload *w)
{
    return *w->params ? w->params : "(defaults)";
}

static size_t input_bytes(const workload *w)
{
    return w->rows * w->cols * 4;
}

/* Bytes a run moves: reduce reads its input; transpose reads it and writes the output. */
static double moved_bytes(const workload *w)
{
    return (double)input_bytes(w) * (strcmp(w->family, "reduce") == 0 ? 1 : 2);
}

static ptxjit_status run_once(lane *l)
{
    const workload *w = l->work;
    if (strcmp(w->family, "reduce") == 0)
        return ptxjit_reduce_async(l->context, w->params, l->input, w->cols, l->result,
                                   l->stream);
    return ptxjit_transpose(l->context, w->params, l->input, l->output, w->rows, w->cols,
                            l->stream);
}

static ptxjit_status lane_fail(lane *l, ptxjit_status status)
{
    if (status != PTXJIT_OK && l->status == PTXJIT_OK) {
        l->status = status;
        snprintf(l->error, sizeof l->error, "device %d: %s", l->device, ptxjit_last_error());
    }
    return status;
}

/* Inputs of ones (f32 1.0 for transpose), the output poisoned: the check needs no host copy
 * of the input. */
static ptxjit_status lane_prepare(lane *l)
{
    const workload *w = l->work;
    int reduce = strcmp(w->family, "reduce") == 0;
    ptxjit_status status = ptxjit_stream_create(&l->stream, l->context,
                                                PTXJIT_STREAM_NON_BLOCKING);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&l->input, l->context, input_bytes(w));
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(reduce ? &l->result : &l->output, l->context,
                              reduce ? 4 : input_bytes(w));
    if (status == PTXJIT_OK)
        status = ptxjit_memset_d32_async(l->context, l->input, reduce ? 1 : 0x3f800000u,
                                         w->rows * w->cols, l->stream);
    if (status == PTXJIT_OK && !reduce)
        status = ptxjit_memset_d32_async(l->context, l->output, 0xffffffffu, w->rows * w->cols,
                                         l->stream);
    if (status == PTXJIT_OK)
        status = ptxjit_stream_synchronize(l->context, l->stream);
    return lane_fail(l, status);
}

/* The sum of ones is n (mod 2^32); every transposed element is 1.0f. */
static ptxjit_status lane_check(lane *l)
{
    const workload *w = l->work;
    if (strcmp(w->family, "reduce") == 0) {
        uint32_t got = 0;
        ptxjit_status status = ptxjit_copy_to_host(l->context, &got, l->result, 4);
        if (status == PTXJIT_OK && got != (uint32_t)w->cols)
            status = pj_error(PTXJIT_ERR_CUDA, "reduce %s: the sum of %zu ones is %u",
                              params_text(w), w->cols, got);
        return lane_fail(l, status);
    }
    enum { CHUNK = 1 << 22 }; /* elements per copy */
    uint32_t *host = malloc(CHUNK * 4);
    ptxjit_status status = host ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "no memory");
    size_t total = w->rows * w->cols;
    for (size_t at = 0; status == PTXJIT_OK && at < total; at += CHUNK) {
        size_t n = total - at < CHUNK ? total - at : CHUNK;
        status = ptxjit_copy_to_host(l->context, host, l->output + at * 4, n * 4);
        for (size_t i = 0; status == PTXJIT_OK && i < n; i++)
            if (host[i] != 0x3f800000u)
                status = pj_error(PTXJIT_ERR_CUDA, "transpose %s: element %zu is 0x%08x, not "
                                  "1.0f", params_text(w), at + i, host[i]);
    }
    free(host);
    return lane_fail(l, status);
}

static void lane_release(lane *l)
{
    if (!l->context)
        return;
    ptxjit_free(l->context, l->input);
    ptxjit_free(l->context, l->output);
    ptxjit_free(l->context, l->result);
    if (l->stream)
        ptxjit_stream_destroy(l->context, l->stream);
    l->input = l->output = l->result = 0;
    l->stream = NULL;
}

/* The kernel, asked for by every lane at once. */
static void *lane_request(void *arg)
{
    lane *l = arg;
    pthread_barrier_wait(l->start);
    ptxjit_kernel *kernel;
    lane_fail(l, ptxjit_get_kernel(&kernel, l->context, l->work->family, l->work->params,
                                   &l->origin));
    return NULL;
}

/* Warm-up runs, then (all lanes released together) the timed runs on this lane's stream. */
static void *lane_time(void *arg)
{
    lane *l = arg;
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; i < WARMUP && status == PTXJIT_OK; i++)
        status = run_once(l);
    if (status == PTXJIT_OK)
        status = ptxjit_stream_synchronize(l->context, l->stream);
    pthread_barrier_wait(l->start);
    l->begin_ms = wall_ms();
    for (int i = 0; i < l->runs && status == PTXJIT_OK; i++)
        status = run_once(l);
    if (status == PTXJIT_OK)
        status = ptxjit_stream_synchronize(l->context, l->stream);
    l->end_ms = wall_ms();
    lane_fail(l, status);
    return NULL;
}

/* body on lanes[0..count), one thread each, released together. */
static ptxjit_status on_lanes(lane *lanes, int count, void *(*body)(void *))
{
    pthread_barrier_t start;
    pthread_barrier_init(&start, NULL, (unsigned)count);
    pthread_t threads[MAX_LANES];
    for (int i = 0; i < count; i++) {
        lanes[i].start = &start;
        pthread_create(&threads[i], NULL, body, &lanes[i]);
    }
    for (int i = 0; i < count; i++)
        pthread_join(threads[i], NULL);
    pthread_barrier_destroy(&start);
    for (int i = 0; i < count; i++)
        if (lanes[i].status != PTXJIT_OK)
            return pj_error(lanes[i].status, "%s", lanes[i].error);
    return PTXJIT_OK;
}

/* GB/s of count lanes together, the best of REPEATS passes: all bytes moved over the time from
 * the first lane's start to the last lane's end. per_lane: each lane's own in that pass. */
static ptxjit_status aggregate_gbps(double *out, double *per_lane, lane *lanes, int count)
{
    *out = 0;
    for (int r = 0; r < REPEATS; r++) {
        ptxjit_status status = on_lanes(lanes, count, lane_time);
        if (status != PTXJIT_OK)
            return status;
        double begin = lanes[0].begin_ms, end = lanes[0].end_ms;
        for (int i = 1; i < count; i++) {
            begin = lanes[i].begin_ms < begin ? lanes[i].begin_ms : begin;
            end = lanes[i].end_ms > end ? lanes[i].end_ms : end;
        }
        double bytes = moved_bytes(lanes[0].work) * lanes[0].runs * count;
        double gbps = bytes / ((end - begin) * 1e6);
        if (gbps > *out) {
            *out = gbps;
            for (int i = 0; per_lane && i < count; i++)
                per_lane[i] = moved_bytes(lanes[i].work) * lanes[i].runs /
                              ((lanes[i].end_ms - lanes[i].begin_ms) * 1e6);
        }
    }
    return PTXJIT_OK;
}

static ptxjit_status bench_workload(lane *lanes, int count, const workload *work, int runs)
{
    pj_share_counters before, after;
    pj_share_counters_get(&before);
    for (int i = 0; i < count; i++) {
        lanes[i].work = work;
        lanes[i].runs = runs;
    }
    ptxjit_status status = on_lanes(lanes, count, lane_request);
    pj_share_counters_get(&after);
    for (int i = 0; i < count && status == PTXJIT_OK; i++)
        status = lane_prepare(&lanes[i]);
    double single = 0, together = 0, per_lane[MAX_LANES] = {0};
    if (status == PTXJIT_OK)
        status = aggregate_gbps(&single, NULL, lanes, 1);
    if (status == PTXJIT_OK)
        status = aggregate_gbps(&together, per_lane, lanes, count);
    for (int i = 0; i < count && status == PTXJIT_OK; i++)
        status = lane_check(&lanes[i]);
    for (int i = 0; i < count; i++)
        lane_release(&lanes[i]);
    if (status != PTXJIT_OK)
        return status;
    double ratio = together / (count * single);
    printf("| %s | %s | %.2f | %.1f | %.1f | %.1f | **%.3f** %s |", work->family,
           params_text(work), moved_bytes(work) / 1e9, single,
           together, count * single, ratio,
           count < 2 ? "(1 GPU)" : ratio >= 0.95 ? "(>= 0.95)" : "(below 0.95)");
    for (int i = 0; i < count; i++)
        printf("%s%.0f", i ? " / " : " ", per_lane[i]);
    printf(" | %llu compiled, %llu disk, %llu shared |\n",
           (unsigned long long)(after.compiled - before.compiled),
           (unsigned long long)(after.disk - before.disk),
           (unsigned long long)(after.shared - before.shared));
    return PTXJIT_OK;
}

/* `bench multigpu [reduce|transpose] [devices=N] [n=N] [rows=R cols=C] [runs=R] ["PARAMS"]`:
 * sizes[0] is reduce's n, sizes[1] and [2] transpose's rows and cols. */
static int parse_words(cli_args *args, const char **only, int *devices, size_t sizes[3],
                       int *runs, const char **params)
{
    static const char *const counts[] = {"devices", "runs", "n", "rows", "cols"};
    size_t values[5] = {0, (size_t)*runs, sizes[0], sizes[1], sizes[2]};
    static const uint64_t max[] = {1024, CLI_MAX_RUNS, PJ_COUNT_MAX, PJ_COUNT_MAX, PJ_COUNT_MAX};
    for (int i = 1; i < args->argc; i++) {
        const char *word = args->argv[i], *equals = strchr(word, '=');
        int which = -1;
        for (int c = 0; equals && c < 5; c++)
            if (strlen(counts[c]) == (size_t)(equals - word) &&
                strncmp(word, counts[c], (size_t)(equals - word)) == 0)
                which = c;
        if (strcmp(word, "reduce") == 0 || strcmp(word, "transpose") == 0) {
            *only = word;
        } else if (which >= 0) {
            if (!cli_count(&values[which], equals + 1, counts[which], 0, max[which]))
                return 0;
        } else if (equals && !*params) {
            *params = word;
        } else {
            fprintf(stderr, "ptxjit: bench multigpu takes reduce or transpose, devices=N, n=N, "
                            "rows=R, cols=C, runs=R and one quoted parameter set, not '%s'\n",
                    word);
            return 0;
        }
    }
    if (*params && !*only) {
        fprintf(stderr, "ptxjit: bench multigpu: a parameter set needs its family (reduce or "
                        "transpose) before it\n");
        return 0;
    }
    *devices = (int)values[0]; /* 0: not given, every GPU */
    *runs = (int)values[1];
    sizes[0] = values[2], sizes[1] = values[3], sizes[2] = values[4];
    return 1;
}

static int open_lanes(lane *lanes, int count, cli_args *args)
{
    for (int i = 0; i < count; i++) {
        ptxjit_options options = args->options;
        options.device = i;
        lanes[i] = (lane){.device = i};
        ptxjit_status status = ptxjit_open(&lanes[i].context, &options);
        if (status == PTXJIT_OK)
            status = ptxjit_gpu_status(lanes[i].context);
        if (status != PTXJIT_OK)
            return cli_fail(status);
    }
    return CLI_OK;
}

int cmd_bench_multigpu(cli_args *args)
{
    const char *only = NULL, *params = NULL;
    int devices = 0, runs = 20;
    size_t sizes[3] = {(size_t)1 << 28, 16384, 16384};
    if (!parse_words(args, &only, &devices, sizes, &runs, &params))
        return CLI_USAGE;
    if (!args->options.use_gpu) {
        fprintf(stderr, "ptxjit: bench multigpu needs a GPU (--no-gpu was given)\n");
        return CLI_FAIL;
    }
    int present = 0;
    ptxjit_status status = ptxjit_device_count(&present);
    if (status != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: bench multigpu needs a GPU: %s\n", ptxjit_last_error());
        return CLI_FAIL;
    }
    int count = devices && devices < present ? devices : present;
    count = count > MAX_LANES ? MAX_LANES : count;
    lane lanes[MAX_LANES] = {{0}};
    int code = open_lanes(lanes, count, args);
    if (code == CLI_OK) {
        char name[256] = "?";
        lanes[0].context->driver->cuDeviceGetName(name, sizeof name, lanes[0].context->device);
        printf("bench multigpu: %d of %d GPU%s (device 0: %s, %s), one context and thread "
               "each, each on its own data; %d runs, best of %d passes; aggregate = all bytes "
               "over the first start to the last end%s\n\n",
               count, present, present == 1 ? "" : "s", name, ptxjit_arch(lanes[0].context),
               runs, REPEATS,
               count < 2 ? "; 1 device: the aggregate is the single-GPU figure" : "");
        printf("| family | params | GB moved per GPU per run | 1 GPU GB/s | %d GPUs GB/s | "
               "%d x 1 GPU | aggregate / (N x 1 GPU) | per GPU GB/s | kernels |\n",
               count, count);
        printf("|---|---|---:|---:|---:|---:|---:|---|---|\n");
        fflush(stdout);
        const workload reduce = {"reduce", 1, sizes[0], only && params ? params : ""};
        const workload transpose = {"transpose", sizes[1], sizes[2],
                                    only && params ? params : ""};
        if (!only || strcmp(only, "reduce") == 0)
            status = bench_workload(lanes, count, &reduce, runs);
        if (status == PTXJIT_OK && (!only || strcmp(only, "transpose") == 0))
            status = bench_workload(lanes, count, &transpose, runs);
        code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    }
    for (int i = 0; i < count; i++)
        ptxjit_close(lanes[i].context);
    return code;
}

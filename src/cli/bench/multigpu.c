/* multigpu.c — `ptxjit bench multigpu [FAMILY] [devices=N] [SIZE=N ...] [runs=R] ["PARAMS"]`:
 * a family's op on every GPU of the machine at once, each on its own data, one context and
 * one thread per device, against the same figure of one GPU alone (issue 17: the aggregate
 * should reach 0.95 x N x one GPU). The family's part is its cli_multigpu (family_cli.h):
 * buffers of known inputs, one run, the check; without FAMILY, the families it marks
 * by_default, in list order. The kernels are asked for by every device together, so the line
 * of compiles shows the process compiling each key once. */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/bench/bench.h"
#include "cli/family_cli.h"
#include "cli/libcuda.h"
#include "cli/timing.h"

enum { MAX_LANES = 16, REPEATS = 3, WARMUP = 3, MAX_SIZE_WORDS = 32 };

typedef struct {
    const cli_family *family;
    const size_t *sizes; /* its multigpu size words' values, in their order */
    const char *params;  /* "" : the family's defaults */
} workload;

/* One device: its context, stream and the family's buffers; its share of a timed pass. */
typedef struct {
    ptxjit_context *context;
    int device;
    void *stream;
    void *state;
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

static ptxjit_status lane_fail(lane *l, ptxjit_status status)
{
    if (status != PTXJIT_OK && l->status == PTXJIT_OK) {
        l->status = status;
        snprintf(l->error, sizeof l->error, "device %d: %s", l->device, ptxjit_last_error());
    }
    return status;
}

static ptxjit_status run_once(lane *l)
{
    return l->work->family->multigpu->run(l->state, l->work->params, l->stream);
}

static ptxjit_status lane_prepare(lane *l)
{
    const workload *w = l->work;
    ptxjit_status status = ptxjit_stream_create(&l->stream, l->context,
                                                PTXJIT_STREAM_NON_BLOCKING);
    if (status == PTXJIT_OK)
        status = w->family->multigpu->prepare(&l->state, l->context, w->params, w->sizes,
                                              l->stream);
    return lane_fail(l, status);
}

static ptxjit_status lane_check(lane *l)
{
    return lane_fail(l, l->work->family->multigpu->check(l->state, params_text(l->work)));
}

static void lane_release(lane *l)
{
    if (!l->context)
        return;
    if (l->state)
        l->work->family->multigpu->release(l->state);
    if (l->stream)
        ptxjit_stream_destroy(l->context, l->stream);
    l->state = NULL;
    l->stream = NULL;
}

/* The kernel, asked for by every lane at once. */
static void *lane_request(void *arg)
{
    lane *l = arg;
    pthread_barrier_wait(l->start);
    ptxjit_kernel *kernel;
    lane_fail(l, ptxjit_get_kernel(&kernel, l->context, l->work->family->name, l->work->params,
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

/* GB/s of count lanes together, the best of REPEATS passes: all bytes moved (moved a run on
 * each lane) over the time from the first lane's start to the last lane's end. per_lane: each
 * lane's own in that pass. */
static ptxjit_status aggregate_gbps(double *out, double *per_lane, lane *lanes, int count,
                                    double moved)
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
        double bytes = moved * lanes[0].runs * count;
        double gbps = bytes / ((end - begin) * 1e6);
        if (gbps > *out) {
            *out = gbps;
            for (int i = 0; per_lane && i < count; i++)
                per_lane[i] = moved * lanes[i].runs /
                              ((lanes[i].end_ms - lanes[i].begin_ms) * 1e6);
        }
    }
    return PTXJIT_OK;
}

/* Where the lanes' kernels came from: each lane's first request in its own context is one
 * produce of the process (compiled, read from the disk) or a take of another's (shared). */
static void print_origins(const lane *lanes, int count)
{
    unsigned long long compiled = 0, disk = 0, shared = 0;
    for (int i = 0; i < count; i++) {
        compiled += lanes[i].origin == PTXJIT_ORIGIN_COMPILED;
        disk += lanes[i].origin == PTXJIT_ORIGIN_DISK;
        shared += lanes[i].origin == PTXJIT_ORIGIN_SHARED;
    }
    printf(" | %llu compiled, %llu disk, %llu shared |\n", compiled, disk, shared);
}

static ptxjit_status bench_workload(lane *lanes, int count, const workload *work, int runs)
{
    for (int i = 0; i < count; i++) {
        lanes[i].work = work;
        lanes[i].runs = runs;
    }
    ptxjit_status status = on_lanes(lanes, count, lane_request);
    for (int i = 0; i < count && status == PTXJIT_OK; i++)
        status = lane_prepare(&lanes[i]);
    double moved = status == PTXJIT_OK ? work->family->multigpu->bytes(lanes[0].state) : 0;
    double single = 0, together = 0, per_lane[MAX_LANES] = {0};
    if (status == PTXJIT_OK)
        status = aggregate_gbps(&single, NULL, lanes, 1, moved);
    if (status == PTXJIT_OK)
        status = aggregate_gbps(&together, per_lane, lanes, count, moved);
    for (int i = 0; i < count && status == PTXJIT_OK; i++)
        status = lane_check(&lanes[i]);
    for (int i = 0; i < count; i++)
        lane_release(&lanes[i]);
    if (status != PTXJIT_OK)
        return status;
    double ratio = together / (count * single);
    printf("| %s | %s | %.2f | %.1f | %.1f | %.1f | **%.3f** %s |", work->family->name,
           params_text(work), moved / 1e9, single,
           together, count * single, ratio,
           count < 2 ? "(1 GPU)" : ratio >= 0.95 ? "(>= 0.95)" : "(below 0.95)");
    for (int i = 0; i < count; i++)
        printf("%s%.0f", i ? " / " : " ", per_lane[i]);
    print_origins(lanes, count);
    return PTXJIT_OK;
}

/* ---- the words ---- */

/* What the command line asks: one family (NULL: the default ones), the devices (0: all), the
 * runs, the size words of every family's op (each given one sets that size in every family
 * of the run that takes it) and one parameter set. */
typedef struct {
    const cli_family *only;
    size_t devices, runs;
    const char *size_words[MAX_SIZE_WORDS];
    size_t size_values[MAX_SIZE_WORDS];
    int size_given[MAX_SIZE_WORDS], size_count;
    const char *params;
} bench_words;

/* The families with an op for this bench, as a choice: "a, b or c". */
static void print_families(void)
{
    int count = 0, printed = 0;
    for (int i = 0; cli_families[i]; i++)
        count += cli_families[i]->multigpu != NULL;
    for (int i = 0; cli_families[i]; i++)
        if (cli_families[i]->multigpu)
            fprintf(stderr, "%s%s", printed++ ? printed == count ? " or " : ", " : "",
                    cli_families[i]->name);
}

static int refuse_word(const bench_words *w, const char *word)
{
    fprintf(stderr, "ptxjit: bench multigpu takes ");
    print_families();
    fprintf(stderr, ", devices=N");
    for (int i = 0; i < w->size_count; i++)
        fprintf(stderr, ", %s=%c", w->size_words[i], toupper((unsigned char)w->size_words[i][0]));
    fprintf(stderr, ", runs=R and one quoted parameter set, not '%s'\n", word);
    return 0;
}

/* Every family's size words, each once, in list order. */
static void collect_size_words(bench_words *w)
{
    for (int i = 0; cli_families[i]; i++)
        for (int s = 0; cli_families[i]->multigpu && cli_families[i]->multigpu->sizes[s]; s++) {
            const char *word = cli_families[i]->multigpu->sizes[s];
            int known = 0;
            for (int k = 0; k < w->size_count; k++)
                known |= strcmp(w->size_words[k], word) == 0;
            if (!known && w->size_count < MAX_SIZE_WORDS)
                w->size_words[w->size_count++] = word;
        }
}

static const cli_family *multigpu_family(const char *word)
{
    for (int i = 0; cli_families[i]; i++)
        if (cli_families[i]->multigpu && strcmp(cli_families[i]->name, word) == 0)
            return cli_families[i];
    return NULL;
}

/* A count word (devices=, runs= or a size): 1 and its value stored; 0 after a message; -1
 * when word is no count word. */
static int take_count(bench_words *w, const char *word)
{
    const char *equals = strchr(word, '=');
    size_t length = equals ? (size_t)(equals - word) : 0;
    if (!equals)
        return -1;
    if (length == 7 && strncmp(word, "devices", 7) == 0)
        return cli_count(&w->devices, equals + 1, "devices", 0, 1024);
    if (length == 4 && strncmp(word, "runs", 4) == 0)
        return cli_count(&w->runs, equals + 1, "runs", 0, CLI_MAX_RUNS);
    for (int k = 0; k < w->size_count; k++)
        if (strlen(w->size_words[k]) == length && strncmp(word, w->size_words[k], length) == 0)
            return (w->size_given[k] = cli_count(&w->size_values[k], equals + 1,
                                                 w->size_words[k], 0, PJ_COUNT_MAX));
    return -1;
}

static int parse_words(bench_words *w, cli_args *args)
{
    *w = (bench_words){.runs = 20};
    collect_size_words(w);
    for (int i = 1; i < args->argc; i++) {
        const char *word = args->argv[i];
        const cli_family *family = multigpu_family(word);
        int counted = family ? -1 : take_count(w, word);
        if (family)
            w->only = family;
        else if (counted == 0)
            return 0;
        else if (counted < 0 && strchr(word, '=') && !w->params)
            w->params = word;
        else if (counted < 0)
            return refuse_word(w, word);
    }
    if (w->params && !w->only) {
        fprintf(stderr, "ptxjit: bench multigpu: a parameter set needs its family (");
        print_families();
        fprintf(stderr, ") before it\n");
        return 0;
    }
    return 1;
}

/* The family's sizes: the words given, its defaults for the rest. */
static void family_sizes(size_t *sizes, const bench_words *w, const cli_multigpu *m)
{
    for (int s = 0; m->sizes[s]; s++) {
        sizes[s] = m->size_defaults[s];
        for (int k = 0; k < w->size_count; k++)
            if (w->size_given[k] && strcmp(w->size_words[k], m->sizes[s]) == 0)
                sizes[s] = w->size_values[k];
    }
}

/* ---- the command ---- */

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

static void print_head(lane *lanes, int count, int present, int runs)
{
    char name[256] = "?";
    cli_cuda_device_name(name, sizeof name, lanes[0].context);
    printf("bench multigpu: %d of %d GPU%s (device 0: %s, %s), one context and thread "
           "each, each on its own data; %d runs, best of %d passes; aggregate = all bytes "
           "over the first start to the last end%s\n\n",
           count, present, present == 1 ? "" : "s", name, ptxjit_arch(lanes[0].context),
           runs, REPEATS, count < 2 ? "; 1 device: the aggregate is the single-GPU figure" : "");
    printf("| family | params | GB moved per GPU per run | 1 GPU GB/s | %d GPUs GB/s | "
           "%d x 1 GPU | aggregate / (N x 1 GPU) | per GPU GB/s | kernels |\n",
           count, count);
    printf("|---|---|---:|---:|---:|---:|---:|---|---|\n");
    fflush(stdout);
}

/* Each family of the run in list order: the named one, else the default ones. */
static ptxjit_status bench_families(lane *lanes, int count, const bench_words *w)
{
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; cli_families[i] && status == PTXJIT_OK; i++) {
        const cli_family *f = cli_families[i];
        if (!f->multigpu || (w->only ? f != w->only : !f->multigpu->by_default))
            continue;
        size_t sizes[MAX_SIZE_WORDS];
        family_sizes(sizes, w, f->multigpu);
        const workload work = {f, sizes, w->only && w->params ? w->params : ""};
        status = bench_workload(lanes, count, &work, (int)w->runs);
    }
    return status;
}

int cli_bench_multigpu(cli_args *args)
{
    bench_words w;
    if (!parse_words(&w, args))
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
    int count = w.devices && (int)w.devices < present ? (int)w.devices : present;
    count = count > MAX_LANES ? MAX_LANES : count;
    lane lanes[MAX_LANES] = {{0}};
    int code = open_lanes(lanes, count, args);
    if (code == CLI_OK) {
        print_head(lanes, count, present, (int)w.runs);
        status = bench_families(lanes, count, &w);
        code = status == PTXJIT_OK ? CLI_OK : cli_fail(status);
    }
    for (int i = 0; i < count; i++)
        ptxjit_close(lanes[i].context);
    return code;
}

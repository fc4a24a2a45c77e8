/* jit.c — `ptxjit bench jit`: cold compile; the library's lookup (a disk hit) in fresh
 * processes without a GPU, with the stages of its open and request (latency.h); a memory hit,
 * and its rate from 1 to 16 threads of one context; and, with a GPU, the first use in fresh
 * processes (open with the driver's start, the disk hit, the first launch through the family's
 * op, the synchronize) beside a bare driver program's, and a memory hit + launch and
 * ptxjit_launch alone against a bare cuLaunchKernel of the same function. Text, or --json. The
 * request is the one family's that has a jit hook (family_cli.h). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/bench/bench.h"
#include "cli/family_cli.h"
#include "cli/json.h"
#include "cli/libcuda.h"
#include "cli/timing.h"
#include "cli_internal.h"

#define COLD_SAMPLES 10
#define FRESH_SAMPLES 31 /* fresh processes: at least 30, an odd count for the median */
#define HITS_PER_THREAD 2000000
#define MAX_THREADS 16

static const char *const stage_names[PJ_LATENCY_COUNT] = {
#define PJ_LATENCY_NAME(name, text) #name,
    PJ_LATENCY_STAGES(PJ_LATENCY_NAME)
#undef PJ_LATENCY_NAME
};
static const char *const stage_texts[PJ_LATENCY_COUNT] = {
#define PJ_LATENCY_TEXT(name, text) text,
    PJ_LATENCY_STAGES(PJ_LATENCY_TEXT)
#undef PJ_LATENCY_TEXT
};

/* The launch rows: medians of every launch of each kind, and the ratios to the bare one. */
typedef enum { LAUNCH_HIT, LAUNCH_ONLY, LAUNCH_BARE, LAUNCH_KINDS } launch_kind;

typedef struct {
    double us[LAUNCH_KINDS];
    int blocked; /* the launches timed behind a long fill */
} launch_figures;

/* The first use in a fresh process with a GPU: ptxjit's stages (jit-time --launch) and a bare
 * driver program's (jit-time --bare), in the order each prints them. */
enum { OURS_STAGES = 5, BARE_STAGES = 7 };
static const char *const ours_stages[OURS_STAGES] = {"open", "get", "alloc", "launch", "sync"};
static const char *const bare_stages[BARE_STAGES] = {"load",   "init",   "context", "alloc",
                                                     "module", "launch", "sync"};
typedef enum { FIRST_NO_GPU, FIRST_NONE, FIRST_FAILED, FIRST_MEASURED } first_state;

typedef struct {
    double stage_ms[BARE_STAGES]; /* medians; OURS_STAGES of them for ptxjit's */
    double total_ms;              /* the median of each process's sum of its stages */
    double process_ms;            /* the whole process, as this one waits for it */
} first_figures;

typedef struct {
    double cold_ms;                      /* median */
    double open_ms, get_ms, hit_ms, process_ms; /* fresh process, medians */
    double stage_us[PJ_LATENCY_COUNT];   /* fresh process, medians */
    double memory_hit_ns;                /* one thread */
    int thread_runs;
    int threads[8];
    double rate[8];                      /* hits per second, all threads together */
    int launched;                        /* a GPU was there for the launch rows */
    launch_figures launch;
    first_state first;
    first_figures ours, bare;            /* when FIRST_MEASURED */
} jit_figures;

/* The family's request of bench jit, from context. */
static ptxjit_status get_request(ptxjit_kernel **kernel, ptxjit_context *context,
                                 const cli_family *family)
{
    return ptxjit_get_kernel(kernel, context, family->name, family->jit->params, NULL);
}

/* Specialize + NVRTC in this (warm) process, with no cache to hit. */
static int cold_compiles(double *median_ms, const cli_family *family)
{
    double ms[COLD_SAMPLES];
    for (int i = 0; i < COLD_SAMPLES; i++) {
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.disk_cache = 0;
        options.process_cache = 0;
        options.use_gpu = 0;
        ptxjit_context *context;
        ptxjit_kernel *kernel;
        if (ptxjit_open(&context, &options) != PTXJIT_OK)
            return 0;
        double start = wall_ms();
        ptxjit_status status = get_request(&kernel, context, family);
        ms[i] = wall_ms() - start;
        ptxjit_close(context);
        if (status != PTXJIT_OK)
            return 0;
    }
    *median_ms = median_of(ms, COLD_SAMPLES);
    return 1;
}

/* Fills dir's cache, then asks fresh processes (this binary's jit-time) for the same kernel;
 * each says its open, its request and their stages. */
static int fresh_process_hits(jit_figures *f, const cli_family *family, const char *self,
                              const char *dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    if (ptxjit_open(&context, &options) != PTXJIT_OK)
        return 0;
    ptxjit_status status = get_request(&kernel, context, family);
    ptxjit_close(context);
    if (status != PTXJIT_OK)
        return 0;
    char command[8192];
    snprintf(command, sizeof command, "'%s' --no-gpu --cache-dir '%s' jit-time %s %s", self, dir,
             family->name, family->jit->params);
    double open_ms[FRESH_SAMPLES], get_ms[FRESH_SAMPLES], hit_ms[FRESH_SAMPLES];
    double process_ms[FRESH_SAMPLES], stages[PJ_LATENCY_COUNT][FRESH_SAMPLES];
    for (int i = 0; i < FRESH_SAMPLES; i++) {
        double start = wall_ms();
        FILE *child = popen(command, "r");
        int origin = -1, fields = 0;
        if (child) {
            fields = fscanf(child, "open_ms %lf get_ms %lf origin %d", &open_ms[i], &get_ms[i],
                            &origin);
            for (int s = 0; s < PJ_LATENCY_COUNT && fields >= 3 + s; s++)
                fields += fscanf(child, " %lf", &stages[s][i]) == 1;
        }
        int exit_status = child ? pclose(child) : -1;
        process_ms[i] = wall_ms() - start;
        hit_ms[i] = open_ms[i] + get_ms[i];
        if (fields != 3 + PJ_LATENCY_COUNT || exit_status != 0 || origin != PTXJIT_ORIGIN_DISK)
            return 0;
    }
    f->open_ms = median_of(open_ms, FRESH_SAMPLES);
    f->get_ms = median_of(get_ms, FRESH_SAMPLES);
    f->hit_ms = median_of(hit_ms, FRESH_SAMPLES);
    f->process_ms = median_of(process_ms, FRESH_SAMPLES);
    for (int s = 0; s < PJ_LATENCY_COUNT; s++)
        f->stage_us[s] = median_of(stages[s], FRESH_SAMPLES);
    return 1;
}

/* One cache line each: the threads' results side by side would share lines, and the bench
 * would time the lines moving between cores instead of the library. */
typedef struct {
    _Alignas(64) ptxjit_context *context;
    const cli_family *family;
    pthread_barrier_t *start;
    ptxjit_status status;
} hitter;

/* HITS_PER_THREAD memory hits of the same request, after every thread is ready; the status is
 * kept in a local until the end, for the same reason. */
static void *hit_loop(void *arg)
{
    hitter *h = arg;
    ptxjit_context *context = h->context;
    const char *family = h->family->name, *params = h->family->jit->params;
    ptxjit_status status = PTXJIT_OK;
    pthread_barrier_wait(h->start);
    for (int i = 0; i < HITS_PER_THREAD && status == PTXJIT_OK; i++) {
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        status = ptxjit_get_kernel(&kernel, context, family, params, &origin);
        if (status == PTXJIT_OK && origin != PTXJIT_ORIGIN_MEMORY)
            status = PTXJIT_ERR_CACHE;
    }
    h->status = status;
    return NULL;
}

/* Hits per second of threads threads together, the best of 3 runs. */
static int hit_rate(double *rate, ptxjit_context *context, const cli_family *family,
                    int threads)
{
    *rate = 0;
    for (int run = 0; run < 3; run++) {
        pthread_t ids[MAX_THREADS];
        hitter hitters[MAX_THREADS];
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, (unsigned)threads + 1);
        int made = 0;
        for (; made < threads; made++) {
            hitters[made] = (hitter){context, family, &start, PTXJIT_OK};
            if (pthread_create(&ids[made], NULL, hit_loop, &hitters[made]) != 0)
                break;
        }
        if (made < threads) { /* let the ones made run and end */
            for (int i = made; i < threads; i++)
                pthread_barrier_wait(&start);
            for (int i = 0; i < made; i++)
                pthread_join(ids[i], NULL);
            pthread_barrier_destroy(&start);
            return 0;
        }
        pthread_barrier_wait(&start);
        double began = wall_ms();
        int ok = 1;
        for (int i = 0; i < threads; i++) {
            pthread_join(ids[i], NULL);
            ok &= hitters[i].status == PTXJIT_OK;
        }
        double seconds = (wall_ms() - began) / 1e3;
        pthread_barrier_destroy(&start);
        if (!ok)
            return 0;
        double r = (double)threads * HITS_PER_THREAD / seconds;
        *rate = r > *rate ? r : *rate;
    }
    return 1;
}

/* 1, 2, 4, 8, 16 threads, none above min(16, cores) (which is then the last count). */
static int memory_hits(jit_figures *f, const cli_family *family, const char *dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    if (ptxjit_open(&context, &options) != PTXJIT_OK)
        return 0;
    int ok = get_request(&kernel, context, family) == PTXJIT_OK;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int most = cores < 1 ? 1 : cores > MAX_THREADS ? MAX_THREADS : (int)cores;
    static const int counts[] = {1, 2, 4, 8, 16};
    f->thread_runs = 0;
    for (int i = 0; ok && i < 5; i++) {
        int threads = counts[i] < most ? counts[i] : most;
        if (f->thread_runs && f->threads[f->thread_runs - 1] == threads)
            break;
        f->threads[f->thread_runs] = threads;
        ok = hit_rate(&f->rate[f->thread_runs], context, family, threads);
        f->thread_runs += ok;
    }
    f->memory_hit_ns = ok ? 1e9 / f->rate[0] : 0;
    ptxjit_close(context);
    return ok;
}

/* The request's cubin (the bytes its cache entry holds), for arch, at path, and its entry
 * into entry; the cache at dir filled for arch on the way (the fresh processes ask for it). */
static int write_cubin(char *entry, size_t entry_size, const cli_family *family,
                       const char *dir, const char *arch, const char *path)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    options.arch = arch;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    if (ptxjit_open(&context, &options) != PTXJIT_OK) {
        fprintf(stderr, "ptxjit: bench jit: %s\n", ptxjit_last_error());
        return 0;
    }
    size_t size = 0;
    const void *cubin = NULL;
    if (get_request(&kernel, context, family) == PTXJIT_OK)
        cubin = ptxjit_kernel_cubin(kernel, &size);
    else
        fprintf(stderr, "ptxjit: bench jit: %s\n", ptxjit_last_error());
    FILE *file = cubin ? fopen(path, "wb") : NULL;
    int ok = file && fwrite(cubin, 1, size, file) == size;
    if (file)
        ok &= fclose(file) == 0;
    if (cubin && !ok)
        fprintf(stderr, "ptxjit: bench jit: cannot write %s\n", path);
    if (ok)
        snprintf(entry, entry_size, "%s", ptxjit_kernel_entry_name(kernel, 0));
    ptxjit_close(context);
    return ok;
}

/* The name_ms values of line, in names' order, into ms; what follows them, or NULL where the
 * line is not that. */
static const char *parse_stages(double *ms, const char *line, const char *const *names,
                                int count)
{
    for (int i = 0; i < count; i++) {
        char word[40], key[40];
        int used = 0;
        snprintf(key, sizeof key, "%s_ms", names[i]);
        if (sscanf(line, "%39s %lf%n", word, &ms[i], &used) != 2 || strcmp(word, key) != 0)
            return NULL;
        line += used;
    }
    return line;
}

static void first_medians(first_figures *out, double (*ms)[FRESH_SAMPLES], double *totals,
                          double *process, int stages)
{
    for (int s = 0; s < stages; s++)
        out->stage_ms[s] = median_of(ms[s], FRESH_SAMPLES);
    out->total_ms = median_of(totals, FRESH_SAMPLES);
    out->process_ms = median_of(process, FRESH_SAMPLES);
}

/* The first use of the request in fresh processes with the GPU, as a program sees it
 * (jit-time --launch: the open with the driver's start in it, the disk hit, the buffer, the
 * first launch through the family's op, the synchronize), and a bare driver program's first
 * use of the same cubin with the same launch (jit-time --bare), FRESH_SAMPLES of each, taking
 * turns A B B A so that a drift of the machine reaches both. This process keeps its own
 * context on the GPU meanwhile. 0 after saying what failed. */
static int first_uses(jit_figures *f, const cli_family *family, const char *self,
                      const char *dir, ptxjit_context *context, int device)
{
    char cubin[4200], entry[256], ours[8192], bare[8800];
    const char *arch = ptxjit_arch(context);
    snprintf(cubin, sizeof cubin, "%s/first.cubin", dir);
    if (!write_cubin(entry, sizeof entry, family, dir, arch, cubin))
        return 0;
    /* The cache's entry is for arch; the children are told it, as they are the device. */
    snprintf(ours, sizeof ours, "'%s' --cache-dir '%s' --arch %s --device %d jit-time --launch "
             "%s %s", self, dir, arch, device, family->name, family->jit->params);
    snprintf(bare, sizeof bare, "'%s' --device %d jit-time --bare '%s' %s", self, device, cubin,
             entry);
    double ms[2][BARE_STAGES][FRESH_SAMPLES];
    double totals[2][FRESH_SAMPLES], process[2][FRESH_SAMPLES];
    int counts[2] = {0, 0};
    for (int i = 0; i < 2 * FRESH_SAMPLES; i++) {
        int side = i % 4 == 1 || i % 4 == 2; /* 0: ptxjit, 1: the bare program */
        int k = counts[side]++, stages = side ? BARE_STAGES : OURS_STAGES;
        const char *command = side ? bare : ours;
        char line[512] = "";
        double start = wall_ms();
        FILE *child = popen(command, "r");
        if (child && !fgets(line, sizeof line, child))
            line[0] = '\0';
        int exit_status = child ? pclose(child) : -1;
        process[side][k] = wall_ms() - start;
        double stage[BARE_STAGES];
        const char *rest = parse_stages(stage, line, side ? bare_stages : ours_stages, stages);
        int origin = -1;
        if (exit_status != 0 || !rest ||
            (!side && (sscanf(rest, " origin %d", &origin) != 1 ||
                       origin != PTXJIT_ORIGIN_DISK))) {
            fprintf(stderr, "ptxjit: bench jit: a fresh process with the GPU failed (%s): %s\n",
                    exit_status != 0 ? "its message above" : "it did not say its stages as "
                    "expected, or its request was not a disk hit", command);
            return 0;
        }
        totals[side][k] = 0;
        for (int s = 0; s < stages; s++) {
            ms[side][s][k] = stage[s];
            totals[side][k] += stage[s];
        }
    }
    first_medians(&f->ours, ms[0], totals[0], process[0], OURS_STAGES);
    first_medians(&f->bare, ms[1], totals[1], process[1], BARE_STAGES);
    return 1;
}

/* Launches wait behind this on the stream: a fill of BLOCKER_BYTES (about 0.7 ms on an
 * H100), longer than a batch takes to enqueue, so that every launch of each kind is timed
 * with the GPU busy. With the GPU idle or nearly so, the driver's own time per launch changed
 * by more than what was measured (the queue emptying or not between launches). */
#define BLOCKER_BYTES ((size_t)2 << 30)
#define LAUNCH_BATCH 99 /* 33 of each kind */
#define LAUNCH_ROUNDS 153
#define LAUNCH_EACH (LAUNCH_ROUNDS * LAUNCH_BATCH / LAUNCH_KINDS)

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

/* One launch of a kind, timed alone: a memory hit + ptxjit_launch, ptxjit_launch of the
 * kernel already held, or a bare cuLaunchKernel of the same function with the same
 * arguments, grid, block and stream. */
static ptxjit_status timed_launch(double *us, ptxjit_context *context, const cli_family *family,
                                  ptxjit_kernel *kernel, void *function, cli_launch *launch,
                                  launch_kind kind)
{
    ptxjit_status status;
    double start = now_us();
    if (kind == LAUNCH_BARE) {
        status = cli_cuda_launch(function, launch->grid, launch->block, launch->args);
    } else if (kind == LAUNCH_ONLY) {
        status = ptxjit_launch(kernel, NULL, launch->grid, launch->block, 0, NULL, launch->args);
    } else {
        ptxjit_kernel *again;
        status = get_request(&again, context, family);
        if (status == PTXJIT_OK)
            status = ptxjit_launch(again, NULL, launch->grid, launch->block, 0, NULL,
                                   launch->args);
    }
    *us = now_us() - start;
    return status;
}

/* Host time per launch. Each round queues the blocker, then LAUNCH_BATCH launches, the kinds
 * taking turns launch by launch (the round's first kind rotating), each timed alone: every
 * kind sees the same state of the driver and of the queue, whose own time per launch drifts
 * by more than the differences measured. The figures are the medians of all launches of
 * each kind. */
static ptxjit_status launch_costs(launch_figures *out, ptxjit_context *context,
                                  const cli_family *family)
{
    ptxjit_kernel *kernel;
    ptxjit_devptr buffer = 0, blocker = 0;
    ptxjit_status status = get_request(&kernel, context, family);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&buffer, context, family->jit->buffer_bytes);
    if (status == PTXJIT_OK && ptxjit_alloc(&blocker, context, BLOCKER_BYTES) != PTXJIT_OK)
        blocker = 0; /* a smaller GPU: the launches are timed with it idle */
    out->blocked = blocker != 0;
    void *function = NULL;
    if (status == PTXJIT_OK)
        status = ptxjit_kernel_function(&function, kernel, NULL);
    cli_launch launch;
    family->jit->launch(&launch, buffer);
    double *times[LAUNCH_KINDS];
    int counts[LAUNCH_KINDS] = {0};
    for (int k = 0; k < LAUNCH_KINDS; k++)
        times[k] = calloc(LAUNCH_EACH, sizeof *times[k]);
    for (int k = 0; k < LAUNCH_KINDS && status == PTXJIT_OK; k++)
        if (!times[k])
            status = PTXJIT_ERR_OUT_OF_MEMORY;
    /* The bare launches find the context current, as ptxjit_launch keeps it: nothing but the
     * driver's call is timed. */
    void *saved = NULL;
    if (status == PTXJIT_OK)
        status = cli_cuda_enter(context, &saved);
    for (int r = 0; r < LAUNCH_ROUNDS && status == PTXJIT_OK; r++) {
        if (blocker)
            status = ptxjit_memset_d32_async(context, blocker, 0, BLOCKER_BYTES / 4, NULL);
        for (int i = 0; i < LAUNCH_BATCH && status == PTXJIT_OK; i++) {
            launch_kind kind = (launch_kind)((i + r) % LAUNCH_KINDS);
            status = timed_launch(&times[kind][counts[kind]++], context, family, kernel,
                                  function, &launch, kind);
        }
        if (status == PTXJIT_OK)
            status = ptxjit_synchronize(context);
    }
    cli_cuda_leave(saved);
    if (buffer)
        ptxjit_free(context, buffer);
    if (blocker)
        ptxjit_free(context, blocker);
    for (int k = 0; k < LAUNCH_KINDS; k++) {
        if (status == PTXJIT_OK)
            out->us[k] = median_of(times[k], counts[k]);
        free(times[k]);
    }
    return status;
}

static void print_stages(const char *who, const first_figures *figures,
                         const char *const *names, int stages)
{
    printf("    %-13s", who);
    for (int s = 0; s < stages; s++)
        printf("%s%s %.3f", s ? " + " : "", names[s], figures->stage_ms[s]);
    printf(" = %.3f ms (whole process %.1f ms)\n", figures->total_ms, figures->process_ms);
}

static const char *const first_absent[] = {
    [FIRST_NO_GPU] = "no usable GPU",
    [FIRST_NONE] = "the family gives no first use",
    [FIRST_FAILED] = "a fresh process failed; its message is above",
};

/* The first use with the GPU: ptxjit's and the bare driver program's stages, or why not. */
static void print_first(const jit_figures *f, const cli_family *family)
{
    if (f->first != FIRST_MEASURED) {
        printf("  first use, fresh process with the GPU (open, get, first launch, sync) beside a "
               "bare driver program: not measured (%s)\n", first_absent[f->first]);
        return;
    }
    printf("  first use, fresh process with the GPU (%s through the family's op), medians of %d "
           "processes each, taking turns with a bare driver program; the sum is each "
           "process's:\n", family->jit->first->what, FRESH_SAMPLES);
    print_stages("ptxjit:", &f->ours, ours_stages, OURS_STAGES);
    print_stages("bare driver:", &f->bare, bare_stages, BARE_STAGES);
    printf("    ptxjit / bare: %.3f (sums), %.3f (whole processes)\n",
           f->ours.total_ms / f->bare.total_ms, f->ours.process_ms / f->bare.process_ms);
    printf("    (ptxjit: open = libcuda loaded, cuInit, the primary context, templates, cache; "
           "get = the disk hit; alloc = cuMemAlloc + the input copied up; launch = the op, "
           "the module's load included)\n");
    printf("    (bare: load = dlopen + cuGetProcAddress; init = cuInit; context = the primary "
           "context + cuCtxSetCurrent; the same alloc; module = cuModuleLoadData of the "
           "cache's cubin, read before the timer; the op's memset + cuLaunchKernel; "
           "cuCtxSynchronize)\n");
}

static void print_text(const jit_figures *f, const cli_family *family, const char *arch)
{
    printf("JIT costs for %s %s, %s:\n", family->name, family->jit->params, arch);
    printf("  cold compile, warm process (specialize + NVRTC -> PTX + cubin), median of %d: "
           "%.2f ms\n", COLD_SAMPLES, f->cold_ms);
    /* --no-gpu: no driver, no CUDA context, no module load; the library's lookup alone. What
     * a program with a GPU adds (the driver's start: hundreds of ms) is the first use below. */
    printf("  lookup (a disk hit), fresh process without a GPU (no driver, context or module "
           "load), median of %d: ptxjit_open + ptxjit_get_kernel %.3f ms (open %.3f + get "
           "%.3f; whole process %.1f ms)\n",
           FRESH_SAMPLES, f->hit_ms, f->open_ms, f->get_ms, f->process_ms);
    for (int s = 0; s < PJ_LATENCY_COUNT; s++)
        printf("    %-8s %7.1f us  %s\n", stage_names[s], f->stage_us[s], stage_texts[s]);
    print_first(f, family);
    printf("  memory hit: %.1f ns (one thread)\n", f->memory_hit_ns);
    printf("  memory hits of one context from threads (best of 3 runs of %d hits each):\n",
           HITS_PER_THREAD);
    for (int i = 0; i < f->thread_runs; i++)
        printf("    %2d threads: %8.2f M hits/s, %5.2fx one thread's\n", f->threads[i],
               f->rate[i] / 1e6, f->rate[i] / f->rate[0]);
    if (f->launched) {
        const launch_figures *l = &f->launch;
        printf("  launches (medians of %d of each kind, taking turns, %s):\n", LAUNCH_EACH,
               l->blocked ? "the GPU kept busy by a 2 GiB fill queued before each batch"
                          : "the GPU idle: no room for the 2 GiB fill that keeps it busy");
        printf("    memory hit + launch: %.3f us, ratio %.3f to a bare cuLaunchKernel\n",
               l->us[LAUNCH_HIT], l->us[LAUNCH_HIT] / l->us[LAUNCH_BARE]);
        printf("    ptxjit_launch alone: %.3f us, ratio %.3f\n", l->us[LAUNCH_ONLY],
               l->us[LAUNCH_ONLY] / l->us[LAUNCH_BARE]);
        printf("    bare cuLaunchKernel: %.3f us\n", l->us[LAUNCH_BARE]);
    } else
        printf("  memory hit + launch: not measured (no usable GPU)\n");
}

static void json_number(cli_json *json, const char *key, double value)
{
    cli_json_key(json, key);
    cli_json_double(json, value);
}

static void json_stages(cli_json *json, const first_figures *figures, const char *const *names,
                        int stages)
{
    cli_json_member_int(json, "processes", FRESH_SAMPLES);
    cli_json_key(json, "stages_ms");
    cli_json_object_begin(json);
    for (int s = 0; s < stages; s++)
        json_number(json, names[s], figures->stage_ms[s]);
    cli_json_object_end(json);
    json_number(json, "total_ms", figures->total_ms);
    json_number(json, "process_ms", figures->process_ms);
}

/* fresh_gpu and bare_driver (null, and fresh_gpu_not_measured saying why, without a GPU). */
static void json_first(cli_json *json, const jit_figures *f, const cli_family *family)
{
    int measured = f->first == FIRST_MEASURED;
    cli_json_key(json, "fresh_gpu");
    if (measured) {
        cli_json_object_begin(json);
        cli_json_member_string(json, "problem", family->jit->first->what);
        json_stages(json, &f->ours, ours_stages, OURS_STAGES);
        json_number(json, "ratio_to_bare", f->ours.total_ms / f->bare.total_ms);
        json_number(json, "process_ratio_to_bare", f->ours.process_ms / f->bare.process_ms);
        cli_json_object_end(json);
    } else {
        cli_json_null(json);
    }
    cli_json_key(json, "bare_driver");
    if (measured) {
        cli_json_object_begin(json);
        json_stages(json, &f->bare, bare_stages, BARE_STAGES);
        cli_json_object_end(json);
    } else {
        cli_json_null(json);
    }
    cli_json_key(json, "fresh_gpu_not_measured");
    if (measured)
        cli_json_null(json);
    else
        cli_json_string(json, first_absent[f->first]);
}

static void print_json(const jit_figures *f, const cli_family *family, const char *arch)
{
    cli_json json;
    cli_json_init(&json, stdout);
    cli_json_object_begin(&json);
    cli_json_member_string(&json, "family", family->name);
    cli_json_member_string(&json, "params", family->jit->params);
    cli_json_member_string(&json, "arch", arch);
    json_number(&json, "cold_compile_ms", f->cold_ms);
    cli_json_key(&json, "fresh_disk_hit");
    cli_json_object_begin(&json);
    cli_json_member_int(&json, "processes", FRESH_SAMPLES);
    json_number(&json, "open_get_ms", f->hit_ms);
    json_number(&json, "open_ms", f->open_ms);
    json_number(&json, "get_ms", f->get_ms);
    json_number(&json, "process_ms", f->process_ms);
    cli_json_key(&json, "stages_us");
    cli_json_object_begin(&json);
    for (int s = 0; s < PJ_LATENCY_COUNT; s++)
        json_number(&json, stage_names[s], f->stage_us[s]);
    cli_json_object_end(&json);
    cli_json_key(&json, "gpu"); /* measured without one: the library's lookup */
    cli_json_bool(&json, 0);
    cli_json_object_end(&json);
    json_first(&json, f, family);
    json_number(&json, "memory_hit_ns", f->memory_hit_ns);
    cli_json_key(&json, "threads");
    cli_json_array_begin(&json);
    for (int i = 0; i < f->thread_runs; i++) {
        cli_json_object_begin(&json);
        cli_json_member_int(&json, "threads", f->threads[i]);
        json_number(&json, "hits_per_second", f->rate[i]);
        json_number(&json, "scaling", f->rate[i] / f->rate[0]);
        cli_json_object_end(&json);
    }
    cli_json_array_end(&json);
    cli_json_key(&json, "launch");
    if (f->launched) {
        cli_json_object_begin(&json);
        const launch_figures *l = &f->launch;
        cli_json_member_int(&json, "launches_of_each", LAUNCH_EACH);
        json_number(&json, "memory_hit_launch_us", l->us[LAUNCH_HIT]);
        json_number(&json, "launch_only_us", l->us[LAUNCH_ONLY]);
        json_number(&json, "bare_launch_us", l->us[LAUNCH_BARE]);
        json_number(&json, "ratio", l->us[LAUNCH_HIT] / l->us[LAUNCH_BARE]);
        json_number(&json, "launch_only_ratio", l->us[LAUNCH_ONLY] / l->us[LAUNCH_BARE]);
        cli_json_key(&json, "gpu_kept_busy");
        cli_json_bool(&json, l->blocked);
        cli_json_object_end(&json);
    } else {
        cli_json_null(&json);
    }
    cli_json_object_end(&json);
    cli_json_finish(&json);
}

int cli_bench_jit(cli_args *args)
{
    if (args->argc > 1) {
        fprintf(stderr, "ptxjit: bench jit takes no arguments, not '%s'\n", args->argv[1]);
        return CLI_USAGE;
    }
    const cli_family *family = cli_family_jit();
    ptxjit_context *context;
    int code = cli_open(&context, args);
    if (code != CLI_OK)
        return code;
    char self[4096], dir[] = "/tmp/ptxjit-bench-XXXXXX";
    ssize_t length = readlink("/proc/self/exe", self, sizeof self - 1);
    if (length <= 0 || !mkdtemp(dir)) {
        fprintf(stderr, "ptxjit: cannot find this program or make a temporary directory\n");
        ptxjit_close(context);
        return CLI_FAIL;
    }
    self[length] = '\0';
    jit_figures f = {0};
    ptxjit_status status = PTXJIT_OK;
    int ok = cold_compiles(&f.cold_ms, family) && fresh_process_hits(&f, family, self, dir) &&
             memory_hits(&f, family, dir);
    int gpu = ptxjit_gpu_status(context) == PTXJIT_OK;
    if (!gpu)
        f.first = FIRST_NO_GPU;
    else if (!family->jit->first)
        f.first = FIRST_NONE;
    else if (ok) /* a failure here leaves the other figures standing, and fails the exit */
        f.first = first_uses(&f, family, self, dir, context, args->options.device)
                      ? FIRST_MEASURED
                      : FIRST_FAILED;
    if (ok && gpu) {
        status = launch_costs(&f.launch, context, family);
        f.launched = status == PTXJIT_OK;
    }
    char cleanup[4200];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    if (system(cleanup) != 0)
        fprintf(stderr, "ptxjit: could not remove %s\n", dir);
    if (!ok || status != PTXJIT_OK) {
        code = cli_fail(ok ? status : PTXJIT_ERR_COMPILE);
    } else {
        if (args->json)
            print_json(&f, family, ptxjit_arch(context));
        else
            print_text(&f, family, ptxjit_arch(context));
        code = f.first == FIRST_FAILED ? CLI_FAIL : CLI_OK;
    }
    ptxjit_close(context);
    return code;
}

/* bench_jit.c — `ptxjit bench jit`: cold compile, a disk hit in a fresh process, and a
 * memory hit + launch against a bare cuLaunchKernel of the same function. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/timing.h"
#include "context.h"

#define JIT_PARAMS "variant=vectorized tpb=512 batch=8"
#define SAMPLES 10

/* Specialize + NVRTC in this (warm) process, with no cache to hit. */
static int cold_compiles(double *ms)
{
    for (int i = 0; i < SAMPLES; i++) {
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.disk_cache = 0;
        options.use_gpu = 0;
        ptxjit_context *context;
        ptxjit_kernel *kernel;
        if (ptxjit_open(&context, &options) != PTXJIT_OK)
            return 0;
        double start = wall_ms();
        ptxjit_status status = ptxjit_get_kernel(&kernel, context, "reduce", JIT_PARAMS, NULL);
        ms[i] = wall_ms() - start;
        ptxjit_close(context);
        if (status != PTXJIT_OK)
            return 0;
    }
    return 1;
}

/* Fills dir's cache, then asks a fresh process (this binary's jit-time) for the same kernel. */
static int fresh_process_hits(double *open_ms, double *get_ms, double *process_ms,
                              const char *self, const char *dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    if (ptxjit_open(&context, &options) != PTXJIT_OK ||
        ptxjit_get_kernel(&kernel, context, "reduce", JIT_PARAMS, NULL) != PTXJIT_OK)
        return 0;
    ptxjit_close(context);
    char command[8192];
    snprintf(command, sizeof command, "'%s' --no-gpu --cache-dir '%s' jit-time reduce %s",
             self, dir, JIT_PARAMS);
    for (int i = 0; i < SAMPLES; i++) {
        double start = wall_ms();
        FILE *child = popen(command, "r");
        int origin = -1;
        int fields = child ? fscanf(child, "open_ms %lf get_ms %lf origin %d", &open_ms[i],
                                    &get_ms[i], &origin)
                           : 0;
        int exit_status = child ? pclose(child) : -1;
        process_ms[i] = wall_ms() - start;
        if (fields != 3 || exit_status != 0 || origin != PTXJIT_ORIGIN_DISK)
            return 0;
    }
    return 1;
}

/* Host time per launch, in batches small enough that the launch queue never fills. */
static ptxjit_status launch_costs(double *ours_us, double *bare_us, ptxjit_context *context)
{
    enum { BATCH = 200, ROUNDS = 25 };
    ptxjit_kernel *kernel;
    ptxjit_devptr buffer = 0;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, "reduce", JIT_PARAMS, NULL);
    if (status == PTXJIT_OK)
        status = ptxjit_alloc(&buffer, context, 64);
    int index = 0;
    if (status == PTXJIT_OK)
        status = pj_kernel_load(kernel, NULL, &index);
    CUdeviceptr in = buffer, out = buffer + 32;
    unsigned long long n = 1;
    void *args[] = {&in, &out, &n};
    ptxjit_dim3 grid = {1, 1, 1}, block = {512, 1, 1};
    double ours[ROUNDS], bare[ROUNDS];
    for (int r = 0; r < ROUNDS && status == PTXJIT_OK; r++) {
        double start = wall_ms();
        for (int i = 0; i < BATCH && status == PTXJIT_OK; i++) {
            ptxjit_kernel *again;
            status = ptxjit_get_kernel(&again, context, "reduce", JIT_PARAMS, NULL);
            if (status == PTXJIT_OK)
                status = ptxjit_launch(again, NULL, grid, block, 0, NULL, args);
        }
        ours[r] = (wall_ms() - start) * 1e3 / BATCH;
        if (status == PTXJIT_OK)
            status = ptxjit_synchronize(context);
        start = wall_ms();
        for (int i = 0; i < BATCH && status == PTXJIT_OK; i++)
            status = PJ_CU(context->driver->cuLaunchKernel(kernel->functions[index], 1, 1, 1, 512,
                                                           1, 1, 0, NULL, args, NULL),
                           "cuLaunchKernel");
        bare[r] = (wall_ms() - start) * 1e3 / BATCH;
        if (status == PTXJIT_OK)
            status = ptxjit_synchronize(context);
    }
    if (buffer)
        ptxjit_free(context, buffer);
    *ours_us = median_of(ours, ROUNDS);
    *bare_us = median_of(bare, ROUNDS);
    return status;
}

int jit_costs(ptxjit_context *context, const char *self_link)
{
    char self[4096], dir[] = "/tmp/ptxjit-bench-XXXXXX";
    ssize_t length = readlink(self_link, self, sizeof self - 1);
    if (length <= 0 || !mkdtemp(dir)) {
        fprintf(stderr, "ptxjit: cannot find this program or make a temporary directory\n");
        return CLI_FAIL;
    }
    self[length] = '\0';
    double cold[SAMPLES], open_ms[SAMPLES], get_ms[SAMPLES], process_ms[SAMPLES];
    double ours = 0, bare = 0;
    int ok = cold_compiles(cold) && fresh_process_hits(open_ms, get_ms, process_ms, self, dir);
    ptxjit_status status = ok ? launch_costs(&ours, &bare, context) : PTXJIT_ERR_COMPILE;
    char cleanup[4200];
    snprintf(cleanup, sizeof cleanup, "rm -rf '%s'", dir);
    if (system(cleanup) != 0)
        fprintf(stderr, "ptxjit: could not remove %s\n", dir);
    if (!ok || status != PTXJIT_OK)
        return cli_fail(status);
    printf("JIT costs for reduce %s, %s, median of %d:\n", JIT_PARAMS, ptxjit_arch(context),
           SAMPLES);
    printf("  cold compile, warm process (specialize + NVRTC -> PTX + cubin): %8.2f ms\n",
           median_of(cold, SAMPLES));
    printf("  disk hit, fresh process: ptxjit_open %.3f ms + ptxjit_get_kernel %.3f ms "
           "(whole process %.1f ms)\n",
           median_of(open_ms, SAMPLES), median_of(get_ms, SAMPLES), median_of(process_ms, SAMPLES));
    printf("  memory hit + launch: %.3f us per launch; bare cuLaunchKernel: %.3f us; "
           "ratio %.2f\n",
           ours, bare, ours / bare);
    return CLI_OK;
}

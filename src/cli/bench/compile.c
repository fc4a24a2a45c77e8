/* compile.c — `ptxjit bench compile`: cold compiles of both routes in one process,
 * request → cubin, each stage timed, the wall time beside the thread's CPU time, and what the
 * cubins hold; with a GPU also the module loads and the same compiles with the CUDA driver's
 * compute cache on (NVRTC's and nvJitLink's own default, which ptxjit turns off). The requests
 * and their targets are the families' (compile_params, compile_targets in family_cli.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/bench/bench.h"
#include "cli/family_cli.h"
#include "cli/timing.h"
#include "cli_internal.h"

#define COMPILE_SAMPLES_MAX 100

typedef struct {
    int samples;
    double total[COMPILE_SAMPLES_MAX], cpu[COMPILE_SAMPLES_MAX], generate[COMPILE_SAMPLES_MAX],
        optimize[COMPILE_SAMPLES_MAX], emit[COMPILE_SAMPLES_MAX], compile[COMPILE_SAMPLES_MAX],
        other[COMPILE_SAMPLES_MAX];
    double first_ms;  /* the first request in the process: libraries loaded then */
    char cubin[256];  /* what the last cubin holds */
    int cubin_is_sass;
} route_times;

static double thread_cpu_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* One cold compile into sample i (-1: the first of the process): a fresh context without a
 * disk cache, or the kernels of the process's other contexts, so nothing can be a hit.
 * Compiles run in the calling thread, so its CPU time is the compile's. */
static ptxjit_status cold_compile(route_times *t, int i, const cli_args *args, const char *family,
                                  const char *params)
{
    ptxjit_options options = args->options;
    options.disk_cache = 0;
    options.process_cache = 0;
    options.use_gpu = 0;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ptxjit_status status = ptxjit_open(&context, &options);
    if (status != PTXJIT_OK)
        return status;
    double cpu = thread_cpu_ms(), start = wall_ms();
    status = ptxjit_get_kernel(&kernel, context, family, params, &origin);
    double total = wall_ms() - start;
    cpu = thread_cpu_ms() - cpu;
    if (status == PTXJIT_OK && origin != PTXJIT_ORIGIN_COMPILED)
        status = pj_error(PTXJIT_ERR_CACHE, "a cold compile was served from a cache");
    if (status == PTXJIT_OK && i < 0)
        t->first_ms = total;
    if (status == PTXJIT_OK && i >= 0) {
        double s[4]; /* generate, optimize, emit, compile */
        pj_kernel_stage_ms(s, kernel);
        t->total[i] = total;
        t->cpu[i] = cpu;
        t->generate[i] = s[0];
        t->optimize[i] = s[1];
        t->emit[i] = s[2];
        t->compile[i] = s[3];
        t->other[i] = total - s[0] - s[1] - s[2] - s[3];
        size_t size = 0;
        const void *cubin = ptxjit_kernel_cubin(kernel, &size);
        t->cubin_is_sass = pj_cubin_describe(t->cubin, sizeof t->cubin, cubin, size);
    }
    ptxjit_close(context);
    return status;
}

/* The routes (nvrtc, and llvm where it builds the request), samples of each: first the
 * first request of the process for each, then the samples in the order A B B A A B ..., so
 * that a load that comes and goes on the machine falls on both routes alike. */
static ptxjit_status time_routes(route_times t[2], int routes, int samples, const cli_args *args,
                                 const char *family, const char *const params[2])
{
    ptxjit_status status = PTXJIT_OK;
    for (int r = 0; r < routes && status == PTXJIT_OK; r++) {
        t[r].samples = samples;
        status = cold_compile(&t[r], -1, args, family, params[r]);
    }
    for (int i = 0; i < samples && status == PTXJIT_OK; i++)
        for (int k = 0; k < routes && status == PTXJIT_OK; k++) {
            int r = routes == 2 && i % 2 ? 1 - k : k;
            status = cold_compile(&t[r], i, args, family, params[r]);
        }
    return status;
}

/* Whether the llvm route builds the request: 0 with the reason in why when it does not (a
 * family from a template folder, a variant without a generator, a build without LLVM). A
 * request that is wrong for both routes is left to the nvrtc compile to report. */
static int llvm_builds(char *why, size_t size, const cli_args *args, const char *family,
                       const char *params)
{
    ptxjit_options options = args->options;
    options.disk_cache = 0;
    options.use_gpu = 0;
    ptxjit_context *context;
    if (ptxjit_open(&context, &options) != PTXJIT_OK)
        return 1;
    char *source = NULL;
    ptxjit_status status = ptxjit_specialize(&source, context, family, params);
    free(source);
    int builds = status != PTXJIT_ERR_UNSUPPORTED && status != PTXJIT_ERR_NO_COMPILER;
    if (!builds)
        snprintf(why, size, "%s", ptxjit_last_error());
    ptxjit_close(context);
    return builds;
}

static void print_table_head(void)
{
    printf("| route | generate | optimize | PTX emit | compile | other | total | CPU | first in "
           "process |\n");
    printf("|-------|---------:|---------:|---------:|--------:|------:|------:|----:|---------"
           "-------:|\n");
}

static void print_row(const char *label, route_times *t, int llvm)
{
    int n = t->samples;
    if (llvm)
        printf("| %s | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.2f | %.1f |\n", label,
               median_of(t->generate, n), median_of(t->optimize, n), median_of(t->emit, n),
               median_of(t->compile, n), median_of(t->other, n), median_of(t->total, n),
               median_of(t->cpu, n), t->first_ms);
    else
        printf("| %s | %.2f | - | - | %.2f | %.2f | %.2f | %.2f | %.1f |\n", label,
               median_of(t->generate, n), median_of(t->compile, n), median_of(t->other, n),
               median_of(t->total, n), median_of(t->cpu, n), t->first_ms);
}

/* The host and the compilers, so that a table from another machine can be read. */
static void print_setting(const char *arch)
{
    char model[256] = "?", line[512], load[64] = "?";
    FILE *f = fopen("/proc/cpuinfo", "r");
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
            snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
            model[strcspn(model, "\n")] = '\0';
            break;
        }
    if (f)
        fclose(f);
    f = fopen("/proc/loadavg", "r");
    if (f && fgets(line, sizeof line, f))
        snprintf(load, sizeof load, "%.*s", (int)strcspn(line, " "), line);
    if (f)
        fclose(f);
    printf("host: %s, %ld CPUs, load average %s (1 min); target %s\n", model,
           sysconf(_SC_NPROCESSORS_ONLN), load, arch);
    printf("compilers: %s (%s); %s (%s); llvm %s (%s)\n", pj_nvrtc_version_string(),
           pj_nvrtc_library_path() ? pj_nvrtc_library_path() : "?", pj_nvjitlink_version_string(),
           pj_nvjitlink_library_path() ? pj_nvjitlink_library_path() : "?",
           pj_llvm_version_string() + strlen("llvm "),
           pj_llvm_plugin_path() ? pj_llvm_plugin_path() : "?");
}

/* Loads each route's kernel once in a GPU context and times it: a cubin of SASS loads as it
 * is; PTX would be compiled by the driver here, and that time would belong to the compile. */
static void print_loads(ptxjit_context *gpu, int routes, const char *family,
                        const char *const params[2])
{
    printf("\nmodule load in a GPU context (%s), once per route, ms:", ptxjit_arch(gpu));
    for (int r = 0; r < routes; r++) {
        ptxjit_kernel *kernel;
        ptxjit_kernel_resources res;
        ptxjit_status status = ptxjit_get_kernel(&kernel, gpu, family, params[r], NULL);
        double start = wall_ms();
        if (status == PTXJIT_OK)
            status = ptxjit_kernel_resources_get(&res, kernel, ptxjit_kernel_entry_name(kernel, 0));
        double ms = wall_ms() - start;
        if (status == PTXJIT_OK)
            printf(" %s %.3f (%d registers)", r ? "llvm" : "nvrtc", ms, res.registers);
        else
            printf(" %s failed: %s", r ? "llvm" : "nvrtc", ptxjit_last_error());
    }
    printf("\n");
}

static int usage_samples(const char *text, int *samples)
{
    size_t value;
    if (!cli_count(&value, text, "samples", 10, COMPILE_SAMPLES_MAX))
        return 0;
    *samples = (int)value;
    return 1;
}

/* With a GPU (a driver that initializes): module loads, and the compiles again with the
 * driver's compute cache allowed, warmed by the first compile of each route. */
static ptxjit_status gpu_part(const cli_args *args, int routes, const char *family,
                              const char *const p[2], int samples)
{
    ptxjit_options options = args->options;
    options.disk_cache = 0;
    ptxjit_context *gpu;
    ptxjit_status status = ptxjit_open(&gpu, &options);
    if (status != PTXJIT_OK)
        return status;
    if (!options.use_gpu || ptxjit_gpu_status(gpu) != PTXJIT_OK) {
        printf("\nno GPU (%s): module loads and the driver's compute cache not shown\n",
               options.use_gpu ? ptxjit_last_error() : "--no-gpu");
        ptxjit_close(gpu);
        return PTXJIT_OK;
    }
    print_loads(gpu, routes, family, p);
    route_times cached[2];
    pj_nvrtc_allow_driver_cache(1);
    pj_nvjitlink_allow_driver_cache(1);
    status = time_routes(cached, routes, samples, args, family, p);
    pj_nvrtc_allow_driver_cache(0);
    pj_nvjitlink_allow_driver_cache(0);
    ptxjit_close(gpu);
    if (status != PTXJIT_OK)
        return status;
    printf("\nthe same with the CUDA driver's compute cache on (~/.nv/ComputeCache: NVRTC's and "
           "nvJitLink's default; a hit skips NVRTC's NVVM and ptxas steps and nvJitLink's "
           "ptxas; 'first' is the compile that fills it, or hits an earlier run's entry):\n\n");
    print_table_head();
    print_row("nvrtc, driver cache", &cached[0], 0);
    if (routes == 2) {
        print_row("llvm, driver cache", &cached[1], 1);
        printf("\nllvm / nvrtc total with the driver cache: %.3f\n",
               median_of(cached[1].total, samples) / median_of(cached[0].total, samples));
    }
    return PTXJIT_OK;
}

/* One request's cold compiles on both routes (llvm where it builds it): the table, the
 * cubins, and with a GPU the loads and the driver-cache compiles. t[1].samples is 0 where
 * llvm was not timed. */
static ptxjit_status bench_request(route_times t[2], const cli_args *args, const char *family,
                                   const char *params, int samples, int gpu)
{
    char nvrtc_params[512], llvm_params[512], no_llvm[1024] = "";
    snprintf(nvrtc_params, sizeof nvrtc_params, "%s backend=nvrtc", params);
    snprintf(llvm_params, sizeof llvm_params, "%s backend=llvm", params);
    const char *const p[2] = {nvrtc_params, llvm_params};
    int count = llvm_builds(no_llvm, sizeof no_llvm, args, family, llvm_params) ? 2 : 1;
    t[1].samples = 0;
    ptxjit_status status = time_routes(t, count, samples, args, family, p);
    if (status != PTXJIT_OK)
        return status;
    printf("\ncold compile, request -> cubin, %s %s, median of %d in one process (each in a "
           "fresh context without disk cache; the compilers' driver cache off; routes "
           "alternating A B B A), ms; other = total - stages (request, key, metadata); CPU = "
           "this thread's CPU time (total)%s%s:\n\n",
           family, *params ? params : "(the family's defaults)", samples,
           pj_nvrtc_extra_option() ? "; NVRTC with " : "",
           pj_nvrtc_extra_option() ? pj_nvrtc_extra_option() : "");
    print_table_head();
    print_row("nvrtc (prelude; NVRTC -> PTX + cubin)", &t[0], 0);
    if (count == 2) {
        print_row("llvm (IR build; O3; NVPTX; nvJitLink)", &t[1], 1);
        printf("\nllvm / nvrtc total: %.3f (CPU: %.3f)\n",
               median_of(t[1].total, samples) / median_of(t[0].total, samples),
               median_of(t[1].cpu, samples) / median_of(t[0].cpu, samples));
    } else {
        printf("\nllvm: not timed: %s\n", no_llvm);
    }
    printf("\ncubin, nvrtc: %s\n", t[0].cubin);
    if (count == 2)
        printf("cubin, llvm:  %s\n", t[1].cubin);
    if (gpu)
        status = gpu_part(args, count, family, p, samples);
    if (status == PTXJIT_OK && (!t[0].cubin_is_sass || (count == 2 && !t[1].cubin_is_sass)))
        status = pj_error(PTXJIT_ERR_COMPILE, "a cubin holds no SASS (see above)");
    return status;
}

#define COMPILE_TARGET_RATIO 0.40 /* issue 15's llvm / nvrtc, for every target request */

/* Issue 15's cold-compile targets: the families' requests, median of N, request -> cubin. */
static void print_targets(route_times t[][2], int samples)
{
    printf("\ncold compile targets (issue 15; H100, median of 10, request -> cubin), median of "
           "%d here%s%s:\n\n",
           samples, pj_nvrtc_extra_option() ? ", NVRTC with " : "",
           pj_nvrtc_extra_option() ? pj_nvrtc_extra_option() : "");
    printf("| request | nvrtc ms | target | llvm ms | llvm / nvrtc | target |\n");
    printf("|---------|---------:|-------:|--------:|-------------:|-------:|\n");
    const cli_family *f;
    const cli_compile_target *target;
    for (size_t i = 0; (target = cli_compile_target_at(i, &f)); i++) {
        double nvrtc = median_of(t[i][0].total, samples);
        printf("| %s | %.1f | <= %.0f |", target->label, nvrtc, target->nvrtc_ms);
        if (t[i][1].samples) {
            double llvm = median_of(t[i][1].total, samples);
            printf(" %.1f | %.3f | <= %.2f |\n", llvm, llvm / nvrtc, COMPILE_TARGET_RATIO);
        } else {
            printf(" - | - | <= %.2f |\n", COMPILE_TARGET_RATIO);
        }
    }
}

/* `bench compile` alone: each target request (the first with the GPU's part), then the table. */
static ptxjit_status bench_targets(const cli_args *args, int samples)
{
    const cli_family *f;
    size_t count = 0;
    while (cli_compile_target_at(count, &f))
        count++;
    route_times(*t)[2] = calloc(count + 1, sizeof *t); /* + 1: never an allocation of 0 */
    if (!t)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = PTXJIT_OK;
    const cli_compile_target *target;
    for (size_t i = 0; status == PTXJIT_OK && (target = cli_compile_target_at(i, &f)); i++)
        status = bench_request(t[i], args, f->name, target->params, samples, i == 0);
    if (status == PTXJIT_OK)
        print_targets(t, samples);
    free(t);
    return status;
}

/* `ofc=LEVEL` with a GPU: each target request run (fresh data, checked against the CPU
 * reference, timed by the family's `run`) with NVRTC's default and with -Ofc=LEVEL,
 * alternating A B B A, so the speed each costs is read off in the same call. A context per
 * run: a context answers a request text it has seen from memory, whatever the option. */
static ptxjit_status ofc_run(const cli_args *args, const cli_family *f, const char *params,
                             int runs)
{
    ptxjit_options options = args->options;
    options.disk_cache = 0;
    ptxjit_context *gpu;
    ptxjit_status status = ptxjit_open(&gpu, &options);
    if (status != PTXJIT_OK)
        return status;
    if (f->run(gpu, params, f->size_defaults, runs) != CLI_OK)
        status = pj_error(PTXJIT_ERR_CUDA, "%s %s: the run failed (above)", f->name, params);
    ptxjit_close(gpu);
    return status;
}

static ptxjit_status ofc_speed_check(const cli_args *args, const char *option, int runs)
{
    ptxjit_options options = args->options;
    ptxjit_context *probe;
    ptxjit_status status = ptxjit_open(&probe, &options);
    if (status != PTXJIT_OK)
        return status;
    int gpu = options.use_gpu && ptxjit_gpu_status(probe) == PTXJIT_OK;
    if (!gpu)
        printf("\nno GPU (%s): the speed of the %s kernels not checked\n",
               options.use_gpu ? ptxjit_last_error() : "--no-gpu", option);
    ptxjit_close(probe);
    if (!gpu)
        return PTXJIT_OK;
    printf("\nkernel speed, NVRTC's default against %s (each family's `run` at its default "
           "sizes, %d runs, order A B B A):\n",
           option, runs);
    const cli_family *f;
    const cli_compile_target *target;
    for (size_t i = 0; status == PTXJIT_OK && (target = cli_compile_target_at(i, &f)); i++) {
        char params[256];
        snprintf(params, sizeof params, "%s backend=nvrtc", target->params);
        for (int k = 0; k < 4 && status == PTXJIT_OK; k++) {
            int with = k == 1 || k == 2;
            pj_nvrtc_set_extra_option(with ? option : NULL);
            printf("\n%s, NVRTC %s:\n", target->label, with ? option : "default");
            fflush(stdout);
            status = ofc_run(args, f, params, runs);
        }
    }
    pj_nvrtc_set_extra_option(option);
    return status;
}

/* ofc=LEVEL: NVRTC's -Ofc (fast compile) level for every NVRTC compile of this bench. */
static int usage_ofc(const char *text, const char **option)
{
    static const char *const levels[][2] = {
        {"min", "-Ofc=min"}, {"mid", "-Ofc=mid"}, {"max", "-Ofc=max"}};
    *option = NULL;
    if (!text)
        return 1;
    for (size_t i = 0; i < CLI_LENGTH(levels); i++)
        if (strcmp(text, levels[i][0]) == 0) {
            *option = levels[i][1];
            return 1;
        }
    fprintf(stderr, "ptxjit: ofc=%s: give min, mid or max (NVRTC's -Ofc levels)\n", text);
    return 0;
}

/* The request of `bench compile FAMILY` without parameters: the family's compile_params, else
 * its defaults (a family from --templates has no descriptor). */
static const char *alone_params(const char *family)
{
    const cli_family *f = cli_family_lookup(family);
    return f && f->compile_params ? f->compile_params : "";
}

int cli_bench_compile(cli_args *args)
{
    /* argv: "compile" [FAMILY] [key=value ...] */
    int named = args->argc >= 2 && !strchr(args->argv[1], '=');
    const char *family = named ? args->argv[1] : NULL;
    static const char *const own[] = {"samples", "ofc", "runs", NULL};
    const char *values[3] = {NULL, NULL, NULL};
    int first = named ? 2 : 1;
    char *given = cli_join_params(args->argc > first ? args->argc - first : 0, args->argv + first,
                                  own, values);
    int samples;
    size_t runs = 0;
    const char *ofc = NULL;
    int ok = usage_samples(values[0], &samples) && usage_ofc(values[1], &ofc) &&
             cli_count(&runs, values[2], "runs", 0, CLI_MAX_RUNS);
    if (ok && values[2] && !ofc) {
        fprintf(stderr, "ptxjit: runs=%s: the kernels' runs, for ofc= only\n", values[2]);
        ok = 0;
    }
    if (ok && !family && given && *given) {
        fprintf(stderr, "ptxjit: bench compile: '%s' needs a FAMILY before it\n", given);
        ok = 0;
    }
    if (!ok) {
        free(given);
        return CLI_USAGE;
    }
    pj_nvrtc_set_extra_option(ofc);
    ptxjit_status status = PTXJIT_OK;
    if (family) {
        route_times t[2];
        status = bench_request(t, args, family, given && *given ? given : alone_params(family),
                               samples, 1);
    } else {
        status = bench_targets(args, samples);
    }
    ptxjit_options options = args->options;
    options.use_gpu = 0;
    ptxjit_context *context;
    if (status == PTXJIT_OK && ptxjit_open(&context, &options) == PTXJIT_OK) {
        printf("\n");
        print_setting(ptxjit_arch(context)); /* after the compiles: their versions are known */
        ptxjit_close(context);
    }
    if (status == PTXJIT_OK && ofc)
        status = ofc_speed_check(args, ofc, runs ? (int)runs : 20);
    pj_nvrtc_set_extra_option(NULL);
    free(given);
    return status == PTXJIT_OK ? CLI_OK : cli_fail(status);
}

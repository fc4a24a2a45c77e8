/* aot_example.c — a program that ships its kernels compiled ahead of time: `ptxjit aot` made
 * kernels.c (the table example_kernels) from requests.txt, and this program serves every one
 * of them with no compiler, no disk cache and no file read. Run it with NVRTC made unavailable
 * (PTXJIT_NVRTC_LIBRARY=/nonexistent PTXJIT_LLVM_LIBRARY=/nonexistent) to see that nothing
 * needs one. It asks for each request of the table that serves its GPU's architecture (sm_90a
 * on Hopper, sm_80 on an A100; without a GPU, sm_90a), checks that each came from the table,
 * prints its key and an FNV-1a hash of its cubin (tests/test_aot.c compares them with a JIT
 * compile), asks for a request the table lacks, and with a GPU runs the family ops on those
 * kernels and checks them against the CPU. docs/AOT.md explains it.
 * Build (make examples does):
 *   ptxjit aot requests.txt -o kernels.c --arch sm_90a,sm_80 --name example_kernels
 *   cc aot_example.c kernels.c $(pkg-config --cflags --libs ptxjit-static) -o aot_example */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ptxjit.h>

extern const ptxjit_aot_table example_kernels;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static uint64_t fnv1a(const void *data, size_t size)
{
    uint64_t hash = 14695981039346656037ull;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
    return hash;
}

/* Every kernel of the table that serves this context, from the table: 0, or 1 after saying
 * what went wrong. */
static int serve_table(ptxjit_context *context, double opened_ms, int *served)
{
    const char *arch = ptxjit_arch(context);
    for (int i = 0; i < example_kernels.kernel_count; i++) {
        const ptxjit_aot_kernel *entry = &example_kernels.kernels[i];
        if (strcmp(entry->arch, arch) != 0)
            continue;
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        if (ptxjit_get_kernel(&kernel, context, entry->family, entry->params, &origin) !=
            PTXJIT_OK) {
            fprintf(stderr, "aot_example: %s\n", ptxjit_last_error());
            return 1;
        }
        if (!*served)
            printf("first kernel ready %.3f ms after ptxjit_open returned\n",
                   now_ms() - opened_ms);
        size_t size = 0;
        const void *cubin = ptxjit_kernel_cubin(kernel, &size);
        if (origin != PTXJIT_ORIGIN_MEMORY || cubin != (const void *)entry->cubin) {
            fprintf(stderr, "aot_example: %s %s did not come from the table\n", entry->family,
                    entry->params);
            return 1;
        }
        printf("from the table: %s %s (%s) key %s cubin %zu bytes fnv1a %016llx\n",
               entry->family, entry->params, arch, ptxjit_kernel_key(kernel), size,
               (unsigned long long)fnv1a(cubin, size));
        (*served)++;
    }
    return 0;
}

/* A request the table lacks: compiled where a compiler is, else refused, naming the table. */
static void ask_unlisted(ptxjit_context *context)
{
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, "reduce", "variant=two_pass",
                                             &origin);
    if (status == PTXJIT_OK)
        printf("not in the table, compiled by the JIT: reduce %s\n", ptxjit_kernel_params(kernel));
    else
        printf("not in the table, refused as expected (%s): %s\n", ptxjit_status_name(status),
               ptxjit_last_error());
}

/* ---- with a GPU: the family ops on the table's kernels, against the CPU ---- */

#define ROWS 1000
#define COLS 999

static int check(ptxjit_status status, const char *what)
{
    if (status != PTXJIT_OK)
        fprintf(stderr, "aot_example: %s: %s\n", what, ptxjit_last_error());
    return status == PTXJIT_OK;
}

static int run_reduce(ptxjit_context *context, ptxjit_devptr buffer, int32_t *host)
{
    int64_t expected = 0;
    for (int i = 0; i < ROWS * COLS; i++)
        expected += host[i] = (i * 7) % 1001 - 500;
    int32_t sum = 0;
    if (!check(ptxjit_copy_to_device(context, buffer, host, sizeof(int32_t) * ROWS * COLS),
               "copy") ||
        !check(ptxjit_reduce(context, "", buffer, (size_t)ROWS * COLS, &sum), "ptxjit_reduce"))
        return 0;
    if (sum != (int32_t)expected)
        fprintf(stderr, "aot_example: reduce gave %d, the CPU %lld\n", sum, (long long)expected);
    return sum == (int32_t)expected;
}

static int run_transpose(ptxjit_context *context, ptxjit_devptr in, ptxjit_devptr out,
                         float *host, float *back)
{
    for (int i = 0; i < ROWS * COLS; i++)
        host[i] = (float)(i % 4099) * 0.25f;
    size_t bytes = sizeof(float) * ROWS * COLS;
    if (!check(ptxjit_copy_to_device(context, in, host, bytes), "copy") ||
        !check(ptxjit_transpose(context, "variant=smem", in, out, ROWS, COLS, NULL),
               "ptxjit_transpose") ||
        !check(ptxjit_copy_to_host(context, back, out, bytes), "copy"))
        return 0;
    for (int r = 0; r < ROWS; r++)
        for (int c = 0; c < COLS; c++)
            if (back[(size_t)c * ROWS + r] != host[(size_t)r * COLS + c]) {
                fprintf(stderr, "aot_example: transpose differs at (%d, %d)\n", r, c);
                return 0;
            }
    return 1;
}

static int run_softmax(ptxjit_context *context, ptxjit_devptr in, ptxjit_devptr out, float *host,
                       float *back)
{
    size_t bytes = sizeof(float) * ROWS * COLS;
    for (int i = 0; i < ROWS * COLS; i++)
        host[i] = (float)((i * 13) % 97) / 17.0f - 2.5f;
    if (!check(ptxjit_copy_to_device(context, in, host, bytes), "copy") ||
        !check(ptxjit_softmax(context, "tpb=128 tpr=128 items=8", in, out, ROWS, COLS, NULL),
               "ptxjit_softmax") ||
        !check(ptxjit_copy_to_host(context, back, out, bytes), "copy"))
        return 0;
    for (int r = 0; r < ROWS; r++) {
        const float *row = host + (size_t)r * COLS;
        double max = row[0], sum = 0;
        for (int c = 1; c < COLS; c++)
            max = row[c] > max ? row[c] : max;
        for (int c = 0; c < COLS; c++)
            sum += exp(row[c] - max);
        for (int c = 0; c < COLS; c++) {
            double want = exp(row[c] - max) / sum, got = back[(size_t)r * COLS + c];
            if (fabs(got - want) > 1e-5 * want + 1e-7) {
                fprintf(stderr, "aot_example: softmax (%d, %d) is %g, the CPU %g\n", r, c, got,
                        want);
                return 0;
            }
        }
    }
    return 1;
}

static int run_on_gpu(ptxjit_context *context)
{
    size_t bytes = sizeof(float) * ROWS * COLS;
    float *host = malloc(bytes), *back = malloc(bytes);
    ptxjit_devptr in = 0, out = 0;
    int ok = host && back && check(ptxjit_alloc(&in, context, bytes), "alloc") &&
             check(ptxjit_alloc(&out, context, bytes), "alloc") &&
             run_reduce(context, in, (int32_t *)host) &&
             run_transpose(context, in, out, host, back) &&
             run_softmax(context, in, out, host, back);
    if (in)
        ptxjit_free(context, in);
    if (out)
        ptxjit_free(context, out);
    free(host);
    free(back);
    return ok;
}

int main(void)
{
    const ptxjit_aot_table *tables[] = {&example_kernels, NULL};
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.disk_cache = 0; /* nothing read from, or written to, a cache directory */
    options.aot_tables = tables;
    ptxjit_context *context;
    if (ptxjit_open(&context, &options) != PTXJIT_OK) {
        fprintf(stderr, "aot_example: %s\n", ptxjit_last_error());
        return 1;
    }
    double opened = now_ms();
    int served = 0, failed = serve_table(context, opened, &served);
    if (!failed && !served) {
        fprintf(stderr, "aot_example: the table holds no kernel for %s; regenerate it with that "
                        "architecture in --arch\n", ptxjit_arch(context));
        failed = 1;
    }
    if (!failed) {
        printf("%d kernels for %s, every one from the table\n", served, ptxjit_arch(context));
        ask_unlisted(context);
    }
    if (!failed && ptxjit_gpu_status(context) == PTXJIT_OK) {
        failed = !run_on_gpu(context);
        if (!failed)
            printf("reduce, transpose and softmax on the GPU: results match the CPU\n");
    } else if (!failed) {
        printf("no GPU (%s): every kernel came from the table, nothing run\n",
               ptxjit_last_error());
    }
    ptxjit_close(context);
    return failed;
}

/* tool.c — a program that brings its own kernels to ptxjit, as an embedding tool does:
 *
 *   - axpy (y = a·x + y, ITEMS elements per thread) is a template the tool holds as a string and
 *     registers with ptxjit_add_template;
 *   - rownorm (each row divided by its L2 norm) is a template file in a directory, with a helper
 *     header beside it (tool_templates/), found through the template_path option.
 *
 * It asks for both by parameters, prints what an embedder can learn without a GPU (canonical
 * parameters, cache key, entries, their parameter layouts, registers and shared memory read
 * from the cubin), shows that a launch with a wrong argument is refused, and, with a GPU, runs
 * both kernels on a stream of its own (asynchronous copies, a memset that poisons the output,
 * events around the launches) and checks every result against a CPU reference.
 *
 * Build: cc tool.c $(pkg-config --cflags --libs ptxjit) -lm -o tool
 * Run:   ./tool [TEMPLATE_DIR]      (default: tool_templates, next to this file) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ptxjit.h>

/* The tool's own family, generated or shipped inside the program. */
static const char axpy_template[] =
    "//@ptxjit family axpy\n"
    "//@ptxjit doc y = a*x + y, each thread handling ITEMS elements (thread coarsening).\n"
    "//@ptxjit entry axpy_kernel\n"
    "//@ptxjit param items int(1..16) default=4 doc=\"elements per thread\"\n"
    "//@ptxjit param tpb int(32..1024) pow2 default=256 doc=\"threads per block\"\n"
    "extern \"C\" __global__ void __launch_bounds__(TPB)\n"
    "axpy_kernel(float a, const float *x, float *y, long long n)\n"
    "{\n"
    "    const long long base = (long long)blockIdx.x * TPB * ITEMS + threadIdx.x;\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < ITEMS; i++) {\n"
    "        const long long j = base + (long long)i * TPB;\n"
    "        if (j < n)\n"
    "            y[j] = a * x[j] + y[j];\n"
    "    }\n"
    "}\n";

enum { ITEMS = 4, AXPY_TPB = 256, ROWNORM_TPB = 128 };
#define AXPY_PARAMS "items=4 tpb=256"
#define ROWNORM_PARAMS "tpb=128 dtype=f32"

static int failed(const char *what)
{
    fprintf(stderr, "tool: %s: %s\n", what, ptxjit_last_error());
    return 1;
}

/* What an embedder can know of a kernel before any GPU is involved. */
static int describe(ptxjit_kernel *kernel, ptxjit_origin origin)
{
    static const char *origins[] = {"compiled", "disk cache", "memory cache"};
    printf("%s %s: key %s (%s)\n", ptxjit_kernel_family(kernel), ptxjit_kernel_params(kernel),
           ptxjit_kernel_key(kernel), origins[origin]);
    for (int e = 0; e < ptxjit_kernel_entry_count(kernel); e++) {
        const char *entry = ptxjit_kernel_entry_name(kernel, e);
        int count;
        ptxjit_kernel_resources resources;
        if (ptxjit_kernel_param_count(&count, kernel, entry) != PTXJIT_OK ||
            ptxjit_kernel_resources_static(&resources, kernel, entry) != PTXJIT_OK)
            return failed(entry);
        printf("  entry %s: %d registers, %d B static shared, %d B local, up to %d threads;"
               " parameters", entry, resources.registers, resources.static_smem,
               resources.local_bytes, resources.max_threads);
        for (int i = 0; i < count; i++) {
            ptxjit_param_layout layout;
            if (ptxjit_kernel_param_layout(&layout, kernel, entry, i) != PTXJIT_OK)
                return failed(entry);
            printf(" [%zu..%zu)", layout.offset, layout.offset + layout.size);
        }
        printf("\n");
    }
    return 0;
}

/* A wrong argument is an error naming the entry, not a corrupt launch; no GPU needed. */
static int show_checked_launch(ptxjit_kernel *axpy)
{
    float a = 2.0f;
    int n = 10; /* the kernel takes a long long */
    ptxjit_devptr x = 0, y = 0;
    void *args[] = {&a, &x, &y, &n};
    size_t sizes[] = {sizeof a, sizeof x, sizeof y, sizeof n};
    ptxjit_dim3 grid = {1, 1, 1}, block = {AXPY_TPB, 1, 1};
    if (ptxjit_launch_checked(axpy, NULL, grid, block, 0, NULL, 4, args, sizes) == PTXJIT_OK) {
        fprintf(stderr, "tool: a launch with an int for a long long was not refused\n");
        return 1;
    }
    printf("refused as expected: %s\n", ptxjit_last_error());
    return 0;
}

static void fill_random(float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        v[i] = (float)rand() / (float)RAND_MAX * 2.0f - 1.0f;
}

static int close_enough(double got, double want, double tolerance)
{
    return fabs(got - want) <= tolerance * (1.0 + fabs(want));
}

/* Device buffers of one run; freed together. */
typedef struct {
    ptxjit_devptr x, y, m, out;
} buffers;

static void free_buffers(ptxjit_context *context, const buffers *b)
{
    ptxjit_free(context, b->x);
    ptxjit_free(context, b->y);
    ptxjit_free(context, b->m);
    ptxjit_free(context, b->out);
}

/* Both kernels on one stream: copies in, poison, launches between two events, copies out. */
static int run_on_gpu(ptxjit_context *context, ptxjit_kernel *axpy, ptxjit_kernel *rownorm)
{
    const long long n = 1000003;            /* not a multiple of TPB * ITEMS */
    const int rows = 77, cols = 1001;       /* not multiples of the block */
    const size_t cells = (size_t)rows * cols;
    float a = 0.75f, eps = 1e-6f;
    float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *got = malloc(n * sizeof *got);
    float *m = malloc(cells * sizeof *m), *normed = malloc(cells * sizeof *normed);
    buffers b = {0};
    void *stream = NULL, *start = NULL, *stop = NULL;
    int code = 1;
    if (!x || !y || !got || !m || !normed)
        goto done;
    srand((unsigned)time(NULL));
    fill_random(x, n);
    fill_random(y, n);
    fill_random(m, cells);
    if (ptxjit_stream_create(&stream, context, PTXJIT_STREAM_NON_BLOCKING) != PTXJIT_OK ||
        ptxjit_event_create(&start, context) != PTXJIT_OK ||
        ptxjit_event_create(&stop, context) != PTXJIT_OK ||
        ptxjit_alloc(&b.x, context, n * sizeof *x) != PTXJIT_OK ||
        ptxjit_alloc(&b.y, context, n * sizeof *y) != PTXJIT_OK ||
        ptxjit_alloc(&b.m, context, cells * sizeof *m) != PTXJIT_OK ||
        ptxjit_alloc(&b.out, context, cells * sizeof *m) != PTXJIT_OK) {
        failed("setting up the GPU run");
        goto done;
    }
    void *axpy_args[] = {&a, &b.x, &b.y, (void *)&n};
    size_t axpy_sizes[] = {sizeof a, sizeof b.x, sizeof b.y, sizeof n};
    void *rownorm_args[] = {&b.m, &b.out, (void *)&rows, (void *)&cols, &eps};
    size_t rownorm_sizes[] = {sizeof b.m, sizeof b.out, sizeof rows, sizeof cols, sizeof eps};
    unsigned axpy_blocks = (unsigned)((n + AXPY_TPB * ITEMS - 1) / (AXPY_TPB * ITEMS));
    if (ptxjit_copy_to_device_async(context, b.x, x, n * sizeof *x, stream) != PTXJIT_OK ||
        ptxjit_copy_to_device_async(context, b.y, y, n * sizeof *y, stream) != PTXJIT_OK ||
        ptxjit_copy_to_device_async(context, b.m, m, cells * sizeof *m, stream) != PTXJIT_OK ||
        ptxjit_memset_d32_async(context, b.out, 0x7fc00000u, cells, stream) != PTXJIT_OK ||
        ptxjit_event_record(context, start, stream) != PTXJIT_OK ||
        ptxjit_launch_checked(axpy, NULL, (ptxjit_dim3){axpy_blocks, 1, 1},
                              (ptxjit_dim3){AXPY_TPB, 1, 1}, 0, stream, 4, axpy_args,
                              axpy_sizes) != PTXJIT_OK ||
        ptxjit_launch_checked(rownorm, NULL, (ptxjit_dim3){(unsigned)rows, 1, 1},
                              (ptxjit_dim3){ROWNORM_TPB, 1, 1}, 0, stream, 5, rownorm_args,
                              rownorm_sizes) != PTXJIT_OK ||
        ptxjit_event_record(context, stop, stream) != PTXJIT_OK ||
        ptxjit_copy_to_host_async(context, got, b.y, n * sizeof *got, stream) != PTXJIT_OK ||
        ptxjit_copy_to_host_async(context, normed, b.out, cells * sizeof *normed, stream) !=
            PTXJIT_OK ||
        ptxjit_stream_synchronize(context, stream) != PTXJIT_OK) {
        failed("the GPU run");
        goto done;
    }
    long long bad = 0;
    for (long long i = 0; i < n; i++)
        bad += !close_enough(got[i], (double)a * x[i] + y[i], 1e-6);
    for (int r = 0; r < rows; r++) {
        double sum = 0;
        for (int c = 0; c < cols; c++)
            sum += (double)m[(size_t)r * cols + c] * m[(size_t)r * cols + c];
        double scale = 1.0 / sqrt(sum + eps);
        for (int c = 0; c < cols; c++)
            bad += !close_enough(normed[(size_t)r * cols + c], m[(size_t)r * cols + c] * scale,
                                 1e-5);
    }
    float ms = 0;
    ptxjit_event_elapsed_ms(&ms, context, start, stop);
    printf("GPU: axpy on %lld elements and rownorm on %d x %d on the tool's stream (%.3f ms): "
           "%s\n", n, rows, cols, ms, bad ? "WRONG" : "results match the CPU");
    if (bad)
        fprintf(stderr, "tool: %lld results differ from the CPU reference\n", bad);
    code = bad != 0;
done:
    free_buffers(context, &b);
    if (start)
        ptxjit_event_destroy(context, start);
    if (stop)
        ptxjit_event_destroy(context, stop);
    if (stream)
        ptxjit_stream_destroy(context, stream);
    free(x);
    free(y);
    free(got);
    free(m);
    free(normed);
    return code;
}

int main(int argc, char **argv)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.template_path = argc > 1 ? argv[1] : "tool_templates";
    ptxjit_context *context;
    if (ptxjit_open(&context, &options) != PTXJIT_OK)
        return failed("open");
    for (int i = 0; i < ptxjit_template_problem_count(context); i++)
        fprintf(stderr, "tool: template problem: %s\n", ptxjit_template_problem(context, i));
    ptxjit_kernel *axpy, *rownorm;
    ptxjit_origin axpy_origin, rownorm_origin;
    int code = 1;
    if (ptxjit_add_template(context, "axpy.cu", axpy_template) != PTXJIT_OK)
        failed("add_template axpy");
    else if (ptxjit_get_kernel(&axpy, context, "axpy", AXPY_PARAMS, &axpy_origin) != PTXJIT_OK)
        failed("axpy");
    else if (ptxjit_get_kernel(&rownorm, context, "rownorm", ROWNORM_PARAMS, &rownorm_origin) !=
             PTXJIT_OK)
        failed("rownorm (is the template directory right? tool [TEMPLATE_DIR])");
    else if (describe(axpy, axpy_origin) == 0 && describe(rownorm, rownorm_origin) == 0 &&
             show_checked_launch(axpy) == 0) {
        if (ptxjit_gpu_status(context) == PTXJIT_OK) {
            code = run_on_gpu(context, axpy, rownorm);
        } else {
            printf("no GPU (%s): kernels compiled and inspected, not run\n",
                   ptxjit_last_error());
            code = 0;
        }
    }
    ptxjit_close(context);
    return code;
}

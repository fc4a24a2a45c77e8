/* embed.c — a small program that embeds ptxjit: asks for a reduce kernel by parameters,
 * prints its canonical form, cache key and PTX header, and with a GPU sums a vector with it.
 * Build: cc embed.c $(pkg-config --cflags --libs ptxjit) -o embed */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ptxjit.h>

static int fail(const char *what)
{
    fprintf(stderr, "embed: %s: %s\n", what, ptxjit_last_error());
    return 1;
}

static void print_ptx_header(const char *ptx)
{
    /* The header runs up to the first .entry (version, target, address size). */
    const char *end = strstr(ptx, ".visible .entry");
    fwrite(ptx, 1, end ? (size_t)(end - ptx) : strlen(ptx), stdout);
}

static int sum_on_gpu(ptxjit_context *context, const char *params)
{
    enum { N = 1000003 };
    int32_t *host = malloc(N * sizeof *host);
    uint32_t want = 0;
    srand(12345u ^ (unsigned)(uintptr_t)host);
    for (int i = 0; i < N; i++) {
        host[i] = rand() - RAND_MAX / 2;
        want += (uint32_t)host[i];
    }
    ptxjit_devptr device;
    int32_t got = 0;
    int ok = ptxjit_alloc(&device, context, N * sizeof *host) == PTXJIT_OK &&
             ptxjit_copy_to_device(context, device, host, N * sizeof *host) == PTXJIT_OK &&
             ptxjit_reduce(context, params, device, N, &got) == PTXJIT_OK;
    free(host);
    if (!ok)
        return fail("reduce");
    ptxjit_free(context, device);
    printf("sum of %d random int32 on the GPU: %d (CPU: %d) %s\n", N, got, (int32_t)want,
           (uint32_t)got == want ? "ok" : "WRONG");
    return (uint32_t)got == want ? 0 : 1;
}

int main(int argc, char **argv)
{
    const char *params = argc > 1 ? argv[1] : "variant=vectorized tpb=256 batch=8";
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    if (ptxjit_open(&context, NULL) != PTXJIT_OK)
        return fail("open");
    if (ptxjit_get_kernel(&kernel, context, "reduce", params, &origin) != PTXJIT_OK) {
        int code = fail("get_kernel");
        ptxjit_close(context);
        return code;
    }
    size_t cubin_size;
    ptxjit_kernel_cubin(kernel, &cubin_size);
    printf("reduce %s\nkey %s (%s), cubin %zu bytes for %s\n", ptxjit_kernel_params(kernel),
           ptxjit_kernel_key(kernel),
           origin == PTXJIT_ORIGIN_COMPILED ? "compiled" : "from the cache", cubin_size,
           ptxjit_arch(context));
    print_ptx_header(ptxjit_kernel_ptx(kernel));
    int code = 0;
    if (ptxjit_gpu_status(context) == PTXJIT_OK)
        code = sum_on_gpu(context, params);
    else
        printf("no GPU (%s): not run\n", ptxjit_last_error());
    ptxjit_close(context);
    return code;
}

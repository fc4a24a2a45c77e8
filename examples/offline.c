/* offline.c — ptxjit embedded without a GPU: opens a context that never touches the driver,
 * compiles a reduce kernel, and prints its canonical parameters, the PTX's entry line and
 * what its cubin says about its resources. make test builds it from outside the source tree
 * against the installed static library (tests/install_check.sh).
 * Build: cc offline.c $(pkg-config --cflags --libs ptxjit-static) -o offline */
#include <stdio.h>
#include <string.h>

#include <ptxjit.h>

int main(int argc, char **argv)
{
    const char *params = argc > 1 ? argv[1] : "variant=vectorized tpb=256";
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;    /* compile only: no driver, no GPU needed */
    options.disk_cache = 0; /* leave no files behind */
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_kernel_resources r;
    if (ptxjit_open(&context, &options) != PTXJIT_OK) {
        fprintf(stderr, "offline: %s\n", ptxjit_last_error());
        return 1;
    }
    if (ptxjit_get_kernel(&kernel, context, "reduce", params, NULL) != PTXJIT_OK ||
        ptxjit_kernel_resources_static(&r, kernel, NULL) != PTXJIT_OK) {
        fprintf(stderr, "offline: %s\n", ptxjit_last_error());
        ptxjit_close(context);
        return 1;
    }
    const char *ptx = ptxjit_kernel_ptx(kernel), *entry = strstr(ptx, ".visible .entry");
    printf("reduce %s for %s\n%.*s\n", ptxjit_kernel_params(kernel), ptxjit_arch(context),
           entry ? (int)strcspn(entry, "(") : 0, entry ? entry : "");
    printf("%d registers, %d B static shared memory, at most %d threads per block\n",
           r.registers, r.static_smem, r.max_threads);
    ptxjit_close(context);
    return 0;
}

/* main.c — the Check test runner: every suite in suites.h. The GPU suites run only where a
 * GPU is usable; elsewhere the runner says once why they were left out, so the summary line
 * counts only tests that really ran. */
#include <dlfcn.h>
#include <nvrtc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* Asks a child process whether a GPU is usable: a CUDA context must not exist in the parent,
 * whose children (one per test) need their own. */
static int gpu_usable(char *reason, size_t size)
{
    int fds[2];
    if (pipe(fds) != 0)
        return 0;
    pid_t child = fork();
    if (child == 0) {
        close(fds[0]);
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.disk_cache = 0;
        ptxjit_context *context = NULL;
        int ok = ptxjit_open(&context, &options) == PTXJIT_OK &&
                 ptxjit_gpu_status(context) == PTXJIT_OK;
        const char *why = ok ? "" : ptxjit_last_error();
        ssize_t written = write(fds[1], why, strlen(why));
        (void)written;
        ptxjit_close(context);
        _exit(ok ? 0 : 1);
    }
    close(fds[1]);
    ssize_t n = child > 0 ? read(fds[0], reason, size - 1) : 0;
    reason[n > 0 ? n : 0] = '\0';
    close(fds[0]);
    int status = 1;
    if (child > 0)
        waitpid(child, &status, 0);
    return child > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* Under valgrind, translating NVRTC's code costs about 20 s in each process that first
 * compiles, and Check forks one per test; a child inherits what its parent translated. So
 * with PTXJIT_TEST_WARM_NVRTC set (`make valgrind`), the runner compiles one small kernel
 * through NVRTC itself first: directly, not through ptxjit, whose tests check when ptxjit
 * loads its compiler. */
static void warm_compiler(void)
{
    const char *names[] = {"libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so",
                           "/usr/local/cuda/lib/libnvrtc.so"};
    void *nvrtc = NULL;
    for (size_t i = 0; i < PJ_ARRAY_SIZE(names) && !nvrtc; i++)
        nvrtc = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    nvrtcResult (*create)(nvrtcProgram *, const char *, const char *, int, const char *const *,
                          const char *const *) = nvrtc ? dlsym(nvrtc, "nvrtcCreateProgram") : NULL;
    nvrtcResult (*compile)(nvrtcProgram, int, const char *const *) =
        nvrtc ? dlsym(nvrtc, "nvrtcCompileProgram") : NULL;
    nvrtcResult (*destroy)(nvrtcProgram *) = nvrtc ? dlsym(nvrtc, "nvrtcDestroyProgram") : NULL;
    nvrtcProgram program;
    const char *source = "extern \"C\" __global__ void warm(int *x, int n) {\n"
                         "  int v = x[threadIdx.x];\n"
                         "  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(~0u, v, o);\n"
                         "  if (threadIdx.x == 0) atomicAdd(x + n, v);\n}\n";
    const char *options[] = {"-arch=sm_90a", "-std=c++17"};
    if (create && compile && destroy && create(&program, source, "warm.cu", 0, NULL, NULL) == 0) {
        compile(program, 2, options);
        destroy(&program);
    }
    printf("NVRTC warmed for the forked tests%s\n", compile ? "" : " (not found: not warmed)");
    fflush(stdout); /* or every forked child prints it again */
}

int main(void)
{
    if (getenv("PTXJIT_TEST_WARM_NVRTC"))
        warm_compiler();
    char reason[2048];
    int gpu = gpu_usable(reason, sizeof reason); /* before the runner: the child owns nothing */
    SRunner *runner = srunner_create(NULL);
#define PJ_SUITE_ADD(name) srunner_add_suite(runner, name());
    PJ_TEST_SUITES(PJ_SUITE_ADD)
    if (gpu) {
        PJ_GPU_TEST_SUITES(PJ_SUITE_ADD)
    } else {
        printf("GPU suites not run (no usable GPU: %s)\n", reason);
    }
#undef PJ_SUITE_ADD
    srunner_run_all(runner, CK_NORMAL);
    int failed = srunner_ntests_failed(runner);
    srunner_free(runner);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

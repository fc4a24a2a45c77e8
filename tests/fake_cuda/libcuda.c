/* libcuda.c — a stand-in libcuda.so.1 for test_cli: it records its loading and each cuInit in
 * the file named by $PTXJIT_TEST_CUDA_LOG and reports no device, so a test can tell whether
 * anything in the process (ptxjit, NVRTC, nvJitLink) tried to start the CUDA driver. */
#include <stdio.h>
#include <stdlib.h>

static void record(const char *what)
{
    const char *path = getenv("PTXJIT_TEST_CUDA_LOG");
    FILE *log = path ? fopen(path, "a") : NULL;
    if (log) {
        fprintf(log, "%s\n", what);
        fclose(log);
    }
}

__attribute__((constructor)) static void loaded(void)
{
    record("loaded");
}

int cuInit(unsigned flags)
{
    (void)flags;
    record("cuInit");
    return 100; /* CUDA_ERROR_NO_DEVICE */
}

int cuGetExportTable(const void **table, const void *id)
{
    (void)id;
    *table = NULL;
    return 100;
}

int cuDriverGetVersion(int *version)
{
    *version = 0;
    return 100;
}

/* launch_api.h — what tests/test_launch_api.c (offline) and test_launch_api_gpu.c share: a
 * user template whose entries take parameters of every shape the PTX reader must lay out,
 * the C struct whose offsets those layouts must equal, and a context that finds it. */
#ifndef PTXJIT_TEST_LAUNCH_API_H
#define PTXJIT_TEST_LAUNCH_API_H

#include <stdalign.h>

#include "ptxjit.h"

/* probe_kernel(a, b, c, p, d, w, e, f, g) writes the sum of its arguments to *g; saxpy_kernel
 * is y = a x + y over n elements, TPB threads a block. */
#define LAUNCH_PROBE_TEMPLATE                                                                \
    "//@ptxjit family launch_probe\n"                                                        \
    "//@ptxjit doc Parameters of every shape (tests/launch_api.h).\n"                        \
    "//@ptxjit entry probe_kernel\n"                                                         \
    "//@ptxjit entry saxpy_kernel\n"                                                         \
    "//@ptxjit param tpb int(32..1024) pow2 default=128\n"                                   \
    "struct Pair { double d; char c; };\n"                                                   \
    "struct __align__(16) Wide { float v[3]; };\n"                                           \
    "extern \"C\" __global__ void probe_kernel(signed char a, short b, float c, Pair p,\n"   \
    "                                        double d, Wide w, unsigned char e, float2 f,\n" \
    "                                        int *g)\n"                                      \
    "{\n"                                                                                    \
    "    if (threadIdx.x == 0)\n"                                                            \
    "        *g = a + b + (int)c + (int)p.d + p.c + (int)d + (int)w.v[0] + e + (int)f.x;\n"  \
    "}\n"                                                                                    \
    "extern \"C\" __global__ void __launch_bounds__(TPB)\n"                                  \
    "saxpy_kernel(const float *x, float *y, float a, unsigned n)\n"                          \
    "{\n"                                                                                    \
    "    unsigned i = blockIdx.x * TPB + threadIdx.x;\n"                                     \
    "    if (i < n)\n"                                                                       \
    "        y[i] = a * x[i] + y[i];\n"                                                      \
    "}\n"

/* probe_kernel's parameters as a C struct: the driver's parameter buffer is laid out as C
 * lays out this struct (each member at the next multiple of its alignment). */
struct probe_pair {
    double d;
    char c;
};
struct probe_wide {
    alignas(16) float v[3];
};
struct probe_float2 {
    alignas(8) float x;
    float y;
};
struct probe_args {
    signed char a;
    short b;
    float c;
    struct probe_pair p;
    double d;
    struct probe_wide w;
    unsigned char e;
    struct probe_float2 f;
    int *g;
};

/* A context (with the GPU when use_gpu) whose template path holds launch_probe; *dir is the
 * directory to remove with test_rmtree and free. */
ptxjit_context *launch_probe_open(char **dir, int use_gpu);

#endif

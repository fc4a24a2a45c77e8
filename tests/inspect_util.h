/* inspect_util.h — what test_inspect.c and test_inspect_gpu.c share: a user template whose
 * kernels have a stack frame and no launch bound, and the requests whose cubins they read. */
#ifndef PTXJIT_TEST_INSPECT_UTIL_H
#define PTXJIT_TEST_INSPECT_UTIL_H

#include <stdio.h>
#include <string.h>

#include "test_util.h"

/* Three entries: stack_kernel stores into a local array at indices known only at run time (a
 * stack frame of 4·N bytes, launch bound 128); plain_kernel and heavy_kernel declare no
 * launch bound, and heavy_kernel holds N floats in registers at once, so that with N large
 * the register file, not 1024, limits its blocks. */
static const char inspect_stack_template[] =
    "//@ptxjit family stack\n"
    "//@ptxjit entry stack_kernel\n"
    "//@ptxjit entry plain_kernel\n"
    "//@ptxjit entry heavy_kernel\n"
    "//@ptxjit param n int(2..256) default=64\n"
    "extern \"C\" __global__ void __launch_bounds__(128) stack_kernel(const int *in, int *out,\n"
    "                                                                int k)\n"
    "{\n"
    "    int buf[N];\n"
    "    for (int i = 0; i < N; i++)\n"
    "        buf[i] = 0;\n"
    "    for (int i = 0; i < N; i++)\n"
    "        buf[(i * k) % N] += in[threadIdx.x * N + i];\n"
    "    out[threadIdx.x] = buf[(k + threadIdx.x) % N];\n"
    "}\n"
    "extern \"C\" __global__ void plain_kernel(int *out)\n"
    "{\n"
    "    out[threadIdx.x] = threadIdx.x;\n"
    "}\n"
    "extern \"C\" __global__ void heavy_kernel(const float *in, float *out)\n"
    "{\n"
    "    float v[N];\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < N; i++)\n"
    "        v[i] = in[threadIdx.x + i * 32];\n"
    "    float s = 0;\n"
    "#pragma unroll\n"
    "    for (int i = 0; i < N; i++)\n"
    "        s += v[i] * v[N - 1 - i] + v[(i * 7) % N];\n"
    "    out[threadIdx.x] = s;\n"
    "}\n";

/* A fresh folder holding stack.cu; the caller removes it with test_rmtree. */
static inline char *inspect_write_stack_template(void)
{
    char *dir = test_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/stack.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    ck_assert_int_eq(fputs(inspect_stack_template, file) >= 0, 1);
    ck_assert_int_eq(fclose(file), 0);
    return dir;
}

/* Built-in kernels worth comparing besides every family's defaults (inspect_each_family):
 * reduce's variants, matmul's wgmma and the variants with the most and the fewest
 * registers, both backends. */
static const struct {
    const char *family, *params;
} inspect_requests[] = {
    {"reduce", "variant=two_pass"},
    {"reduce", "variant=warp_shuffle"},
    {"reduce", "variant=one_pass tpb=128"},
    {"reduce", "variant=batched dtype=f32 batch=16"},
    {"reduce", "variant=vectorized tpb=1024 batch=8"},
    {"reduce", "backend=llvm"},
    {"transpose", "variant=smem"},
    {"transpose", "variant=tma"},
    {"matmul", "variant=wgmma consumers=1 mma=m64n128k16"},
    {"matmul", "variant=wgmma backend=llvm"},
    {"matmul", "variant=naive"},
    {"matmul", "variant=tiled"},
    {"matmul", "variant=block_tiled"},
    {"matmul", "variant=tensor_core"},
    {"softmax", "variant=block"},
};

/* Calls check(context, family, "") for every built-in family, from the context's table. */
static inline void inspect_each_family(ptxjit_context *context,
                                       void (*check)(ptxjit_context *, const char *, const char *))
{
    int families = 0;
    for (int i = 0; i < ptxjit_family_count(context); i++)
        if (strncmp(ptxjit_family_origin(context, i), "built-in:", 9) == 0) {
            check(context, ptxjit_family_name(context, i), "");
            families++;
        }
    ck_assert_int_ge(families, 4);
}

#endif

/* check.c — the tuner's kernels (compare.cu, as PTX in compare_ptx.c) loaded through the
 * driver, and the calls the scaffold makes of them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tune/check.h"

extern const char pj_tune_compare_ptx[];

struct pj_tune_checker {
    ptxjit_context *context;
    CUmodule module;
    CUfunction compare, fill, read;
    CUdeviceptr result; /* u64 mismatches, u64 first index */
};

ptxjit_status pj_tune_checker_open(pj_tune_checker **out, ptxjit_context *context)
{
    pj_tune_checker *c = calloc(1, sizeof *c);
    if (!c)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    c->context = context;
    /* Opened inside a tuning (pj_tune_bench_gpu entered the CUDA context): enter and leave
     * switch nothing there, and keep a caller's context anywhere else. */
    CUcontext saved;
    ptxjit_status status = pj_gpu_enter(context, &saved);
    if (status != PTXJIT_OK) {
        free(c);
        return status;
    }
    const pj_driver *d = context->driver;
    status = PJ_CU(d->cuModuleLoadData(&c->module, pj_tune_compare_ptx),
                   "cuModuleLoadData (the tuner's check kernels)");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuModuleGetFunction(&c->compare, c->module, "pj_tune_compare"),
                       "cuModuleGetFunction");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuModuleGetFunction(&c->fill, c->module, "pj_tune_fill"),
                       "cuModuleGetFunction");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuModuleGetFunction(&c->read, c->module, "pj_tune_read"),
                       "cuModuleGetFunction");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuMemAlloc(&c->result, 16), "cuMemAlloc");
    if (status != PTXJIT_OK)
        pj_tune_checker_close(c);
    pj_gpu_leave(context, saved);
    if (status != PTXJIT_OK)
        return status;
    *out = c;
    return PTXJIT_OK;
}

void pj_tune_checker_close(pj_tune_checker *c)
{
    if (!c)
        return;
    const pj_driver *d = c->context->driver;
    if (c->result)
        d->cuMemFree(c->result);
    if (c->module)
        d->cuModuleUnload(c->module);
    free(c);
}

/* A grid-stride launch of 256-thread blocks, a few per SM. */
static ptxjit_status launch(pj_tune_checker *c, CUfunction f, uint64_t count, void **args,
                            const char *what)
{
    uint64_t blocks = (count + 255) / 256, most = (uint64_t)(c->context->sm_count > 0
                                                                 ? c->context->sm_count : 1) * 8;
    blocks = blocks < most ? blocks : most;
    return PJ_CU(c->context->driver->cuLaunchKernel(f, (unsigned)(blocks ? blocks : 1), 1, 1, 256,
                                                    1, 1, 0, NULL, args, NULL),
                 what);
}

ptxjit_status pj_tune_fill(pj_tune_checker *c, CUdeviceptr data, uint64_t count,
                           pj_tune_kind kind, unsigned seed)
{
    unsigned long long n = count;
    int k = (int)kind;
    void *args[] = {&data, &n, &k, &seed};
    return launch(c, c->fill, count, args, "cuLaunchKernel (the tuner's random inputs)");
}

ptxjit_status pj_tune_read(pj_tune_checker *c, CUdeviceptr data, uint64_t words, unsigned key,
                           CUdeviceptr sink)
{
    unsigned long long n = words;
    void *args[] = {&data, &n, &key, &sink};
    return launch(c, c->read, words, args, "cuLaunchKernel (the tuner's L2 flush)");
}

/* Element index of kind at data as text, from the device. */
static void element_text(char *out, size_t size, const pj_driver *d, CUdeviceptr data,
                         uint64_t index, pj_tune_kind kind)
{
    size_t bytes = kind == PJ_TUNE_F16 || kind == PJ_TUNE_BF16 ? 2 : 4;
    uint32_t bits = 0;
    if (d->cuMemcpyDtoH(&bits, data + index * bytes, bytes) != CUDA_SUCCESS) {
        snprintf(out, size, "?");
        return;
    }
    float value;
    if (kind == PJ_TUNE_BF16)
        bits <<= 16;
    memcpy(&value, &bits, 4);
    if (kind == PJ_TUNE_BITS)
        snprintf(out, size, "0x%08x", bits);
    else if (kind == PJ_TUNE_F16)
        snprintf(out, size, "f16 0x%04x", bits);
    else
        snprintf(out, size, "%.9g", value);
}

ptxjit_status pj_tune_compare(pj_tune_checker *c, CUdeviceptr got, CUdeviceptr want,
                              uint64_t count, pj_tune_kind kind, double rel, double abs,
                              const char *what)
{
    const pj_driver *d = c->context->driver;
    uint64_t result[2] = {0, UINT64_MAX};
    unsigned long long n = count;
    int k = (int)kind;
    float r = (float)rel, a = (float)abs;
    void *args[] = {&got, &want, &n, &k, &r, &a, &c->result};
    ptxjit_status status = PJ_CU(d->cuMemcpyHtoD(c->result, result, sizeof result),
                                 "cuMemcpyHtoD");
    if (status == PTXJIT_OK)
        status = launch(c, c->compare, count, args, "cuLaunchKernel (the tuner's check kernels)");
    if (status == PTXJIT_OK)
        status = PJ_CU(d->cuMemcpyDtoH(result, c->result, sizeof result), "cuMemcpyDtoH");
    if (status != PTXJIT_OK || result[0] == 0)
        return status;
    char g[48], w[48];
    element_text(g, sizeof g, d, got, result[1], kind);
    element_text(w, sizeof w, d, want, result[1], kind);
    return pj_error(PTXJIT_ERR_CUDA,
                    "wrong result: %llu of %llu elements of %s differ from the reference "
                    "configuration's (%s), the first at index %llu: %s, not %s",
                    (unsigned long long)result[0], (unsigned long long)count, what,
                    kind == PJ_TUNE_BITS ? "bit for bit" : "beyond the tolerance",
                    (unsigned long long)result[1], g, w);
}

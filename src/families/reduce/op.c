/* op.c — the reduce family's host op: one launch with atomics for the one-pass variants, a
 * launch per pass (partials, then one block) for the two-pass ones. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "families/reduce/op.h"
#include "tune/check.h"
#include "tune/tune.h"

static ptxjit_status config_from(reduce_config *out, const pj_request *request)
{
    const pj_param_reader reader = pj_request_reader(request);
    const pj_decode_result decoded = pj_reduce_decode(out, &reader);
    if (decoded.code == PJ_DECODE_LACKS)
        return pj_error(PTXJIT_ERR_TEMPLATE,
                        "reduce template %s lacks variant, tpb, batch or dtype, which the "
                        "reduce op needs; launch it with ptxjit_launch instead",
                        request->schema->origin);
    if (decoded.code != PJ_DECODED)
        return pj_error(PTXJIT_ERR_TEMPLATE, "reduce template %s has a variant or dtype the "
                        "reduce op does not know", request->schema->origin);
    return PTXJIT_OK;
}

ptxjit_status pj_reduce_config_of(reduce_config *out, const ptxjit_kernel *kernel)
{
    return config_from(out, &kernel->request);
}

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
    return (a + b - 1) / b;
}

uint64_t pj_reduce_grid(const reduce_config *config, uint64_t input, uint64_t n)
{
    const uint64_t bytes = (uint64_t)pj_dtype_bytes(config->dtype), per_vector = 16 / bytes;
    const uint64_t tile = (uint64_t)config->tpb * (uint64_t)config->batch;
    switch (config->variant) {
    case REDUCE_BATCHED:
    case REDUCE_VECTORIZED: {
        /* Mirrors the kernel: elements before the first 16-byte boundary are not vectors. */
        uint64_t misaligned = (input & 15) / bytes;
        uint64_t head = misaligned ? (per_vector - misaligned < n ? per_vector - misaligned : n)
                                   : 0;
        uint64_t items = config->variant == REDUCE_BATCHED ? n : (n - head) / per_vector;
        /* One block per tile: many short blocks keep more loads in flight than a
         * persistent grid looping over tiles (measured on the H100: about 3170 against 3100
         * GB/s, docs/PERFORMANCE.md). The kernel's tile loop covers grids clamped at the
         * limit. */
        uint64_t blocks = ceil_div(items, tile);
        return blocks == 0 ? 1 : blocks < 0x7fffffffu ? blocks : 0x7fffffffu;
    }
    default: {
        /* Grid-stride kernels: one element per thread, capped at the largest grid. */
        uint64_t blocks = ceil_div(n, (uint64_t)config->tpb);
        return blocks < 0x7fffffffu ? blocks : 0x7fffffffu;
    }
    }
}

static ptxjit_status launch(ptxjit_kernel *kernel, const reduce_config *config, uint64_t grid,
                            CUdeviceptr in, CUdeviceptr out, uint64_t n, void *stream)
{
    unsigned long long count = n;
    void *args[] = {&in, &out, &count};
    ptxjit_dim3 grid3 = {(unsigned)grid, 1, 1}, block = {(unsigned)config->tpb, 1, 1};
    return ptxjit_launch(kernel, NULL, grid3, block, 0, stream, args);
}

static ptxjit_status two_passes(ptxjit_kernel *kernel, const reduce_config *config,
                                uint64_t grid, CUdeviceptr in, CUdeviceptr out, uint64_t n,
                                void *stream)
{
    const pj_driver *d = kernel->context->driver;
    CUdeviceptr partials = 0;
    /* Stream-ordered, so concurrent reductions on other streams never share scratch. */
    ptxjit_status status = PJ_CU(d->cuMemAllocAsync(&partials, grid * 4, (CUstream)stream),
                                 "cuMemAllocAsync");
    if (status != PTXJIT_OK)
        return status;
    status = launch(kernel, config, grid, in, partials, n, stream);
    if (status == PTXJIT_OK)
        status = launch(kernel, config, 1, partials, out, grid, stream);
    d->cuMemFreeAsync(partials, (CUstream)stream);
    return status;
}

/* The reduction's launches, with the context's CUDA context current. */
static ptxjit_status reduce_entered(ptxjit_kernel *kernel, const reduce_config *config,
                                    ptxjit_devptr input, size_t n, ptxjit_devptr result_device,
                                    void *stream)
{
    const int bytes = pj_dtype_bytes(config->dtype);
    if (n == 0)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "reduce: n must be at least 1");
    if (!input || input % (uint64_t)bytes || !result_device || result_device % 4)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "reduce: input and result must be non-null device addresses aligned "
                        "to the %d-byte element",
                        bytes);
    uint64_t grid = pj_reduce_grid(config, input, n);
    if (config->variant == REDUCE_TWO_PASS || config->variant == REDUCE_WARP_SHUFFLE)
        return two_passes(kernel, config, grid, input, result_device, n, stream);
    ptxjit_status status =
        PJ_CU(kernel->context->driver->cuMemsetD32Async(result_device, 0, 1, (CUstream)stream),
              "cuMemsetD32Async");
    if (status == PTXJIT_OK)
        status = launch(kernel, config, grid, input, result_device, n, stream);
    return status;
}

ptxjit_status ptxjit_reduce_async(ptxjit_context *context, const char *params,
                                  ptxjit_devptr input, size_t n, ptxjit_devptr result_device,
                                  void *stream)
{
    ptxjit_kernel *kernel;
    reduce_config config;
    CUcontext saved;
    const uint64_t sizes[] = {n};
    ptxjit_status status =
        pj_auto_get_kernel(&kernel, NULL, context, &pj_family_reduce, params, sizes);
    if (status == PTXJIT_OK)
        status = pj_reduce_config_of(&config, kernel);
    if (status == PTXJIT_OK)
        status = pj_gpu_enter(context, &saved);
    if (status != PTXJIT_OK)
        return status;
    status = reduce_entered(kernel, &config, input, n, result_device, stream);
    pj_gpu_leave(context, saved);
    return status;
}

ptxjit_status ptxjit_reduce(ptxjit_context *context, const char *params, ptxjit_devptr input,
                            size_t n, void *result_host)
{
    if (!context || !result_host)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "reduce: context and result must be given");
    ptxjit_devptr result = 0;
    ptxjit_status status = ptxjit_alloc(&result, context, 4);
    if (status != PTXJIT_OK)
        return status;
    status = ptxjit_reduce_async(context, params, input, n, result, NULL);
    if (status == PTXJIT_OK)
        status = ptxjit_copy_to_host(context, result_host, result, 4);
    ptxjit_free(context, result);
    return status;
}

uint32_t pj_reduce_reference_i32(const int32_t *data, size_t n)
{
    uint32_t sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += (uint32_t)data[i];
    return sum;
}

double pj_reduce_reference_f32(const float *data, size_t n, double *magnitude)
{
    double sum = 0, total = 0;
    for (size_t i = 0; i < n; i++) {
        sum += data[i];
        total += fabs(data[i]);
    }
    if (magnitude)
        *magnitude = total;
    return sum;
}

int pj_reduce_f32_close(float got, double sum, double magnitude)
{
    return isfinite(got) && fabs((double)got - sum) <= 1e-5 * magnitude + 1e-30;
}

static ptxjit_status reduce_geometry(pj_geometry *out, const pj_request *request)
{
    out->threads = (unsigned)pj_reduce_threads((int)pj_request_value(request, "tpb"));
    out->shared_bytes = 0;
    return PTXJIT_OK;
}

/* `ptxjit bench reduce` sweeps vectorized over tpb x batch. */
static const char *const bench_sets[] = {
    "variant=vectorized tpb=128 batch=2",  "variant=vectorized tpb=128 batch=4",
    "variant=vectorized tpb=128 batch=8",  "variant=vectorized tpb=128 batch=16",
    "variant=vectorized tpb=256 batch=2",  "variant=vectorized tpb=256 batch=4",
    "variant=vectorized tpb=256 batch=8",  "variant=vectorized tpb=256 batch=16",
    "variant=vectorized tpb=512 batch=2",  "variant=vectorized tpb=512 batch=4",
    "variant=vectorized tpb=512 batch=8",  "variant=vectorized tpb=512 batch=16",
    "variant=vectorized tpb=1024 batch=2", "variant=vectorized tpb=1024 batch=4",
    "variant=vectorized tpb=1024 batch=8", "variant=vectorized tpb=1024 batch=16",
    NULL};

/* ---- ptxjit_tune: random inputs of n elements, the sum compared with the reference's ---- */

typedef struct {
    ptxjit_context *context;
    pj_tune_checker *checker;
    CUdeviceptr input, result;
    uint64_t n;
    pj_dtype dtype;
    uint32_t reference; /* the reference configuration's sum, as bits */
} reduce_tuning;

static const char *const problem_names[] = {"n", NULL};

static ptxjit_status tune_admits(const pj_request *request, const uint64_t *sizes)
{
    (void)sizes; /* every configuration sums any n */
    reduce_config config;
    return config_from(&config, request);
}

static void tune_release(void *state)
{
    reduce_tuning *t = state;
    if (!t)
        return;
    pj_tune_free(t->context, t->input);
    pj_tune_free(t->context, t->result);
    pj_tune_checker_close(t->checker);
    free(t);
}

static ptxjit_status tune_prepare(void **state, ptxjit_context *context, const char *problem,
                                  const pj_request *reference)
{
    reduce_config config;
    uint64_t n = 0;
    ptxjit_status status = config_from(&config, reference);
    if (status == PTXJIT_OK)
        status = pj_tune_problem_words(&n, problem, "reduce", problem_names);
    if (status != PTXJIT_OK)
        return status;
    reduce_tuning *t = calloc(1, sizeof *t);
    if (!t)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *t = (reduce_tuning){context, NULL, 0, 0, n, config.dtype, 0};
    status = pj_tune_checker_open(&t->checker, context);
    if (status == PTXJIT_OK)
        status = pj_tune_alloc(&t->input, context, n * 4);
    if (status == PTXJIT_OK)
        status = pj_tune_alloc(&t->result, context, 4);
    if (status == PTXJIT_OK)
        status = pj_tune_fill(t->checker, t->input, n,
                              config.dtype == PJ_DTYPE_f32 ? PJ_TUNE_F32 : PJ_TUNE_BITS, 1);
    if (status != PTXJIT_OK) {
        tune_release(t);
        return status;
    }
    *state = t;
    return PTXJIT_OK;
}

static ptxjit_status tune_run(void *state, ptxjit_kernel *kernel, void *stream)
{
    reduce_tuning *t = state;
    return ptxjit_reduce_async(t->context, kernel->canonical, t->input, t->n, t->result, stream);
}

static ptxjit_status tune_poison(void *state)
{
    reduce_tuning *t = state;
    return pj_tune_poison(t->context, t->result, 4);
}

/* int32: exactly the reference's sum; f32: within the family's 1e-5 of the sum of magnitudes,
 * which for inputs uniform in [-1, 1) is about n / 2. */
static ptxjit_status tune_check(void *state, ptxjit_kernel *kernel, int reference)
{
    reduce_tuning *t = state;
    reduce_config config;
    uint32_t bits = 0;
    ptxjit_status status = pj_reduce_config_of(&config, kernel);
    if (status == PTXJIT_OK && config.dtype != t->dtype)
        return pj_error(PTXJIT_ERR_PARAM, "reduce: a candidate of dtype %s cannot be checked "
                        "against a reference of dtype %s; fix dtype (a fixed parameter)",
                        pj_dtype_name(config.dtype), pj_dtype_name(t->dtype));
    if (status == PTXJIT_OK)
        status = PJ_CU(t->context->driver->cuMemcpyDtoH(&bits, t->result, 4), "cuMemcpyDtoH");
    if (status != PTXJIT_OK || reference) {
        t->reference = bits;
        return status;
    }
    float got, want;
    memcpy(&got, &bits, 4);
    memcpy(&want, &t->reference, 4);
    int right = t->dtype == PJ_DTYPE_i32 ? bits == t->reference
                                         : pj_reduce_f32_close(got, want, t->n / 2.0);
    if (right)
        return PTXJIT_OK;
    return t->dtype == PJ_DTYPE_i32
               ? pj_error(PTXJIT_ERR_CUDA, "wrong result: sum %d, the reference configuration's "
                          "%d", (int)bits, (int)t->reference)
               : pj_error(PTXJIT_ERR_CUDA, "wrong result: sum %.9g, the reference "
                          "configuration's %.9g", got, want);
}

static const pj_family_tune tune_ops = {
    tune_admits, tune_prepare, tune_run, tune_poison, tune_check, tune_release, 1,
    problem_names,
};

const pj_family pj_family_reduce = {
    "reduce", PJ_VARIANT_LIST_TEXT(PJ_REDUCE_VARIANTS), PJ_REDUCE_LLVM_VERSION,
    PJ_REDUCE_LLVM_VARIANTS, reduce_geometry, bench_sets, &tune_ops,
};

/* op.c — the reduce family's host op: one launch with atomics for the one-pass variants, a
 * launch per pass (partials, then one block) for the two-pass ones. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "families/reduce/op.h"
#include "request/plan.h"
#include "util/nvtx.h"

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

static ptxjit_status reduce_async(ptxjit_context *context, const char *params,
                                  ptxjit_devptr input, size_t n, ptxjit_devptr result_device,
                                  void *stream)
{
    ptxjit_kernel *kernel;
    reduce_config config;
    CUcontext saved;
    const uint64_t sizes[] = {n};
    ptxjit_status status =
        pj_plan_get_kernel(&kernel, NULL, context, &pj_family_reduce, params, sizes);
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

ptxjit_status ptxjit_reduce_async(ptxjit_context *context, const char *params,
                                  ptxjit_devptr input, size_t n, ptxjit_devptr result_device,
                                  void *stream)
{
    pj_nvtx_push_name("ptxjit reduce");
    ptxjit_status status = reduce_async(context, params, input, n, result_device, stream);
    pj_nvtx_pop();
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

static const char *const problem_names[] = {"n", NULL};

static ptxjit_status tune_admits(const pj_request *request, const uint64_t *sizes)
{
    (void)sizes; /* every configuration sums any n */
    reduce_config config;
    return config_from(&config, request);
}

/* int32: exactly the reference's sum; f32: within the family's 1e-5 of the sum of magnitudes,
 * which for inputs uniform in [-1, 1) is about n / 2. */
static ptxjit_status judge_sum(const pj_tune_buffer *buffer, const void *got_bits,
                               const void *want_bits, const uint64_t *sizes)
{
    uint32_t bits, reference;
    float got, want;
    memcpy(&bits, got_bits, 4);
    memcpy(&reference, want_bits, 4);
    memcpy(&got, got_bits, 4);
    memcpy(&want, want_bits, 4);
    const int exact = buffer->kind == PJ_TUNE_BITS;
    if (exact ? bits == reference : pj_reduce_f32_close(got, want, sizes[0] / 2.0))
        return PTXJIT_OK;
    return exact ? pj_error(PTXJIT_ERR_CUDA, "wrong result: sum %d, the reference "
                            "configuration's %d", (int)bits, (int)reference)
                 : pj_error(PTXJIT_ERR_CUDA, "wrong result: sum %.9g, the reference "
                            "configuration's %.9g", got, want);
}

/* The input (random: any bits for int32) and the 4-byte sum. */
static ptxjit_status tune_buffers(pj_tune_buffer *out, int *count, const pj_request *reference,
                                  const uint64_t *sizes)
{
    reduce_config config;
    ptxjit_status status = config_from(&config, reference);
    if (status != PTXJIT_OK)
        return status;
    const pj_tune_kind kind = config.dtype == PJ_DTYPE_f32 ? PJ_TUNE_F32 : PJ_TUNE_BITS;
    out[0] = (pj_tune_buffer){.role = PJ_TUNE_INPUT, .bytes = sizes[0] * 4, .kind = kind,
                              .count = sizes[0], .seed = 1};
    out[1] = (pj_tune_buffer){.role = PJ_TUNE_OUTPUT, .bytes = 4, .kind = kind, .count = 1,
                              .judge = judge_sum};
    *count = 2;
    return PTXJIT_OK;
}

static ptxjit_status tune_run(ptxjit_context *context, ptxjit_kernel *kernel,
                              const ptxjit_devptr *buffers, const uint64_t *sizes, void *stream)
{
    return ptxjit_reduce_async(context, kernel->canonical, buffers[0], sizes[0], buffers[1],
                               stream);
}

static ptxjit_status tune_types(char out[64], const pj_request *request)
{
    reduce_config config;
    ptxjit_status status = config_from(&config, request);
    if (status == PTXJIT_OK)
        snprintf(out, 64, "dtype %s", pj_dtype_name(config.dtype));
    return status;
}

static const pj_family_tune tune_ops = {
    .problem_names = problem_names,
    .empty_l2 = PJ_TUNE_EMPTY_ALWAYS,
    .admits = tune_admits,
    .buffers = tune_buffers,
    .run = tune_run,
    .types = tune_types,
    .fix_types = "dtype (a fixed parameter)",
};

const pj_family pj_family_reduce = {
    "reduce", PJ_VARIANT_LIST_TEXT(PJ_REDUCE_VARIANTS), PJ_REDUCE_LLVM_VERSION,
    PJ_REDUCE_LLVM_VARIANTS, reduce_geometry, bench_sets, &tune_ops, NULL, NULL, NULL,
};

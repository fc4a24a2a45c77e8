/* limits.c — the GPU's limits that decide whether a block of a candidate can launch at all
 * (registers, shared memory, threads), its SM count and clock (a family's lower bound on a
 * run's time), read once per tuning through the driver. An attribute the driver does not
 * answer stays 0, and the rule that needs it does not apply: a rule never guesses a limit. */
#include <string.h>

#include "tune/tune.h"

static int attribute(ptxjit_context *context, CUdevice_attribute which)
{
    int value = 0;
    if (context->driver->cuDeviceGetAttribute(&value, which, context->device) != CUDA_SUCCESS ||
        value < 0)
        value = 0;
    return value;
}

void pj_tune_limits_read(pj_tune_limits *out, ptxjit_context *context)
{
    memset(out, 0, sizeof *out);
    if (!context->driver)
        return;
    out->sms = attribute(context, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    out->clock_khz = attribute(context, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    out->block_registers = attribute(context, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK);
    out->sm_registers = attribute(context, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    out->block_shared = attribute(context, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    out->sm_shared = attribute(context, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    out->reserved_shared =
        attribute(context, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK);
    out->sm_threads = attribute(context, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
}

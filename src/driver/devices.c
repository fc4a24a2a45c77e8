/* devices.c — the process's GPUs as ptxjit sees them: how many, so that a program opens one
 * context per device (docs/EMBEDDING.md, "Several GPUs"). */
#include "driver/driver.h"

ptxjit_status ptxjit_device_count(int *out)
{
    if (!out)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_device_count: out is NULL");
    *out = 0;
    const pj_driver *driver = NULL;
    ptxjit_status status = pj_driver_get(&driver);
    int count = 0;
    if (status == PTXJIT_OK)
        status = PJ_CU(driver->cuDeviceGetCount(&count), "cuDeviceGetCount");
    if (status == PTXJIT_OK && count < 1)
        status = pj_error(PTXJIT_ERR_NO_DEVICE, "the CUDA driver sees no device; compiling, "
                          "caching and inspecting kernels still work");
    if (status == PTXJIT_OK)
        *out = count;
    return status;
}

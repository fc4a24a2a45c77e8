/* driver.c — loads libcuda.so.1 once per process (dynlib.h) and resolves each entry point with
 * cuGetProcAddress at the CUDA 12.0 ABI, so that cuda.h's _v2/_v3 renames cannot bite. */
#include <pthread.h>
#include <stdio.h>

#include "driver/driver.h"
#include "util/dynlib.h"

typedef CUresult(CUDAAPI *get_proc_fn)(const char *, void **, int, cuuint64_t,
                                       CUdriverProcAddressQueryResult *);

static pj_driver driver;
static ptxjit_status driver_status;
static char driver_error[PJ_DYNLIB_ERROR_MAX];
static pthread_once_t driver_once = PTHREAD_ONCE_INIT;

static void fail_load(ptxjit_status status, const char *format, const char *detail)
{
    driver_status = status;
    snprintf(driver_error, sizeof driver_error, format, detail);
}

static int resolve_all(get_proc_fn get_proc)
{
    struct {
        const char *name;
        void **slot;
    } symbols[] = {
#define PJ_DRIVER_SYMBOL(name, args) {#name, (void **)&driver.name},
        PJ_DRIVER_LIST(PJ_DRIVER_SYMBOL)
#undef PJ_DRIVER_SYMBOL
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(symbols); i++) {
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        CUresult result = get_proc(symbols[i].name, symbols[i].slot, 12000,
                                   CU_GET_PROC_ADDRESS_DEFAULT, &found);
        if (result != CUDA_SUCCESS || !*symbols[i].slot) {
            fail_load(PTXJIT_ERR_NO_DRIVER,
                      "the CUDA driver lacks %s; update the NVIDIA driver (ptxjit needs a "
                      "driver for CUDA 12.0 or newer)",
                      symbols[i].name);
            return 0;
        }
    }
    return 1;
}

/* The optional entry points, each at the version that brought it: NULL where absent. */
static void resolve_optional(get_proc_fn get_proc)
{
    struct {
        const char *name;
        int version;
        void **slot;
    } symbols[] = {
#define PJ_DRIVER_OPTIONAL_SYMBOL(name, version, args) {#name, version, (void **)&driver.name},
        PJ_DRIVER_OPTIONAL_LIST(PJ_DRIVER_OPTIONAL_SYMBOL)
#undef PJ_DRIVER_OPTIONAL_SYMBOL
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(symbols); i++) {
        CUdriverProcAddressQueryResult found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        if (get_proc(symbols[i].name, symbols[i].slot, symbols[i].version,
                     CU_GET_PROC_ADDRESS_DEFAULT, &found) != CUDA_SUCCESS ||
            found != CU_GET_PROC_ADDRESS_SUCCESS)
            *symbols[i].slot = NULL;
    }
}

/* cuGetProcAddress_v2 of the driver named by $PTXJIT_CUDA_LIBRARY, else of libcuda.so.1;
 * NULL with the failure recorded. */
static get_proc_fn load_library(void)
{
    static const char *const sonames[] = {"libcuda.so.1", NULL};
    static pj_dynlib library;
    const pj_dynlib_spec spec = {
        .what = "the CUDA driver",
        .override = "PTXJIT_CUDA_LIBRARY",
        .sonames = sonames,
        .places = PJ_DYNLIB_OVERRIDE_ALONE, /* the tests name a missing driver on purpose */
        .fix = "install the NVIDIA driver, or run where a GPU is present (compiling, caching "
               "and inspecting kernels work without one)"};
    if (!pj_dynlib_open(&library, &spec)) {
        fail_load(PTXJIT_ERR_NO_DRIVER, "%s", library.error);
        return NULL;
    }
    get_proc_fn get_proc = NULL;
    const pj_dynlib_symbol symbol = {"cuGetProcAddress_v2", (void **)&get_proc};
    if (pj_dynlib_resolve(library.handle, &symbol, 1))
        fail_load(PTXJIT_ERR_NO_DRIVER,
                  "the CUDA driver has no cuGetProcAddress_v2 (%s); update the NVIDIA driver "
                  "to one for CUDA 12.0 or newer",
                  library.path);
    return get_proc;
}

static void driver_load_once(void)
{
    get_proc_fn get_proc = load_library();
    if (!get_proc || !resolve_all(get_proc))
        return;
    resolve_optional(get_proc);
    CUresult result = driver.cuInit(0);
    if (result != CUDA_SUCCESS) {
        const char *name = "?";
        driver.cuGetErrorName(result, &name);
        fail_load(result == CUDA_ERROR_NO_DEVICE ? PTXJIT_ERR_NO_DEVICE : PTXJIT_ERR_NO_DRIVER,
                  "cuInit failed with %s: no usable GPU (a stub libcuda or no device); "
                  "compiling, caching and inspecting kernels still work",
                  name);
        return;
    }
    driver.cuDriverGetVersion(&driver.version);
    driver_status = PTXJIT_OK;
}

ptxjit_status pj_driver_get(const pj_driver **out)
{
    pthread_once(&driver_once, driver_load_once);
    if (driver_status != PTXJIT_OK)
        return pj_error(driver_status, "%s", driver_error);
    *out = &driver;
    return PTXJIT_OK;
}

ptxjit_status pj_driver_check(CUresult result, const char *call)
{
    if (result == CUDA_SUCCESS)
        return PTXJIT_OK;
    /* An unknown code leaves the strings NULL (cuGetErrorName's contract). */
    const char *name = NULL, *text = NULL;
    if (driver.cuGetErrorName) {
        driver.cuGetErrorName(result, &name);
        driver.cuGetErrorString(result, &text);
    }
    name = name ? name : "an unknown CUDA error";
    text = text ? text : "no description";
    ptxjit_status status =
        result == CUDA_ERROR_OUT_OF_MEMORY ? PTXJIT_ERR_OUT_OF_MEMORY : PTXJIT_ERR_CUDA;
    return pj_error(status, "%s failed: %s (%s; CUDA error %d)", call, name, text, (int)result);
}

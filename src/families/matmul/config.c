/* config.c — a matmul request's configuration: shape.h's decoder read through the library's
 * reader, its refusals said as errors. */
#include "families/matmul/config.h"

ptxjit_status pj_matmul_config_from(matmul_config *out, const pj_request *request)
{
    const pj_param_reader reader = pj_request_reader(request);
    const pj_decode_result decoded = pj_matmul_decode(out, &reader);
    return decoded.code == PJ_DECODED ? PTXJIT_OK : pj_decode_refusal(&decoded, request);
}

ptxjit_status pj_matmul_config_of(matmul_config *out, const ptxjit_kernel *kernel)
{
    return pj_matmul_config_from(out, &kernel->request);
}

int pj_matmul_type_bytes(pj_dtype type)
{
    return pj_matmul_element_bytes(type);
}

const char *pj_matmul_type_name(pj_dtype type)
{
    return type == PJ_MATMUL_E4M3 ? "e4m3" : type == PJ_MATMUL_E5M2 ? "e5m2" : pj_dtype_name(type);
}

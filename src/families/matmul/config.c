/* config.c — a matmul request's configuration: shape.h's decoder read through the library's
 * reader, its refusals said as errors. */
#include "families/matmul/config.h"

ptxjit_status pj_matmul_config_from(matmul_config *out, const pj_request *request)
{
    const pj_param_reader reader = pj_request_reader(request);
    const pj_decode_result decoded = pj_matmul_decode(out, &reader);
    if (decoded.code == PJ_DECODE_LACKS)
        return pj_error(PTXJIT_ERR_TEMPLATE,
                        "matmul template %s lacks '%s', which the matmul op needs; launch "
                        "it with ptxjit_launch instead",
                        request->schema->origin, decoded.name);
    if (decoded.code != PJ_DECODED)
        return pj_error(PTXJIT_ERR_TEMPLATE, "matmul template %s has variant '%s', which the "
                        "matmul op does not know", request->schema->origin, decoded.name);
    return PTXJIT_OK;
}

ptxjit_status pj_matmul_config_of(matmul_config *out, const ptxjit_kernel *kernel)
{
    return pj_matmul_config_from(out, &kernel->request);
}

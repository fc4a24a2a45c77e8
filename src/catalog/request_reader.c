/* request_reader.c — the library's reader of a pj_request, through which the families' decoders
 * (their shape.h) read a request's parameters as the plugin's reader gives them; and what an
 * op says when its decoder refuses one. */
#include "catalog/family.h"

static int request_get(const void *from, const char *name, long long *value, const char **text)
{
    const pj_request *request = from;
    int index = pj_schema_param_index(request->schema, name);
    if (index < 0)
        return 0;
    const pj_param *param = &request->schema->params[index];
    *value = request->values[index];
    *text = param->kind != PJ_PARAM_INT ? param->values[*value] : NULL;
    return 1;
}

pj_param_reader pj_request_reader(const pj_request *request)
{
    return (pj_param_reader){request, request_get};
}

ptxjit_status pj_decode_refusal(const pj_decode_result *decoded, const pj_request *request)
{
    const char *family = request->schema->family, *origin = request->schema->origin;
    if (decoded->code == PJ_DECODE_LACKS)
        return pj_error(PTXJIT_ERR_TEMPLATE,
                        "%s template %s lacks '%s', which the %s op needs; launch it with "
                        "ptxjit_launch instead",
                        family, origin, decoded->name, family);
    return pj_error(PTXJIT_ERR_TEMPLATE, "%s template %s has variant '%s', which the %s op "
                    "does not know", family, origin, decoded->name, family);
}

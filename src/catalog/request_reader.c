/* request_reader.c — the library's reader of a pj_request, through which the families' decoders
 * (their shape.h) read a request's parameters as the plugin's reader gives them. */
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

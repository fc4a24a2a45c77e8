/* select.c — the backend of a request: the `backend=` word, its route and the canonical form. */
#include <stdlib.h>
#include <string.h>

#include "request/route.h"
#include "request/select.h"

/* The routes by backend; their names are the backend= words. */
static const pj_route *const routes[PJ_BACKEND_COUNT] = {&pj_route_nvrtc, &pj_route_llvm};

const pj_route *pj_route_of(pj_backend backend)
{
    return backend >= 0 && backend < PJ_BACKEND_COUNT ? routes[backend] : &pj_route_nvrtc;
}

/* The separators pj_request_parse splits on. */
#define PJ_PARAM_SEPARATORS " \t\n,"

const char *pj_backend_name(pj_backend backend)
{
    return backend >= 0 && backend < PJ_BACKEND_COUNT ? routes[backend]->name : "?";
}

ptxjit_status pj_backend_from_name(pj_backend *out, const char *name)
{
    for (int b = 0; b < PJ_BACKEND_COUNT; b++)
        if (name && strcmp(name, routes[b]->name) == 0) {
            *out = (pj_backend)b;
            return PTXJIT_OK;
        }
    return pj_error(PTXJIT_ERR_UNSUPPORTED, "backend '%s' is not available; available: nvrtc, llvm",
                    name ? name : "(null)");
}

static ptxjit_status take_word(pj_backend *out, int *seen, const char *word, size_t length)
{
    const size_t key = strlen("backend=");
    char value[32];
    if (length - key >= sizeof value)
        return pj_error(PTXJIT_ERR_PARAM, "backend=%.*s... is too long; use nvrtc or llvm",
                        16, word + key);
    memcpy(value, word + key, length - key);
    value[length - key] = '\0';
    if ((*seen)++)
        return pj_error(PTXJIT_ERR_PARAM, "parameter 'backend' is given twice");
    if (pj_backend_from_name(out, value) != PTXJIT_OK)
        return pj_error(PTXJIT_ERR_PARAM, "backend=%s is not allowed: backend must be one of "
                        "nvrtc, llvm", value);
    return PTXJIT_OK;
}

ptxjit_status pj_backend_take(pj_backend *out, char **rest, const char *params, pj_backend fallback)
{
    params = params ? params : "";
    *out = fallback;
    *rest = calloc(1, strlen(params) + 1);
    if (!*rest)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    int seen = 0;
    size_t written = 0;
    for (const char *s = params; *s;) {
        s += strspn(s, PJ_PARAM_SEPARATORS);
        size_t length = strcspn(s, PJ_PARAM_SEPARATORS);
        if (length > strlen("backend=") && strncmp(s, "backend=", strlen("backend=")) == 0) {
            ptxjit_status status = take_word(out, &seen, s, length);
            if (status != PTXJIT_OK) {
                free(*rest);
                *rest = NULL;
                return status;
            }
        } else if (length) {
            if (written)
                (*rest)[written++] = ' ';
            memcpy(*rest + written, s, length);
            written += length; /* calloc'ed: stays NUL-terminated */
        }
        s += length;
    }
    return PTXJIT_OK;
}

char *pj_backend_canonical(char *canonical, pj_backend backend)
{
    if (!canonical || backend == PJ_BACKEND_NVRTC)
        return canonical;
    /* The first parameter whose name sorts after "backend" starts where the word goes. */
    const char *at = canonical;
    while (*at && strncmp(at, "backend", strlen("backend")) < 0) {
        const char *space = strchr(at, ' ');
        at = space ? space + 1 : at + strlen(at);
    }
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append_n(&sb, canonical, (size_t)(at - canonical));
    if (at > canonical && at[-1] != ' ')
        pj_sb_append(&sb, " ");
    pj_sb_appendf(&sb, "backend=%s", pj_backend_name(backend));
    if (*at)
        pj_sb_appendf(&sb, " %s", at);
    free(canonical);
    return pj_sb_take(&sb);
}

/* nettle.c — nettle through dlopen (util/dynlib.h): found by soname or
 * $PTXJIT_NETTLE_LIBRARY; every entry point checked once at load. */
#include <pthread.h>
#include <stdio.h>

#include "remote/nettle.h"
#include "util/dynlib.h"

static struct {
    pj_dynlib lib;
    pj_nettle table;
    ptxjit_status status;
    char error[PJ_DYNLIB_ERROR_MAX];
} nettle;

static pthread_once_t nettle_once = PTHREAD_ONCE_INIT;

static void nettle_load_once(void)
{
    /* Only the soname of the ABI our headers describe (nettle 3.6 and later): another major
     * (libnettle.so.6, or the bare libnettle.so of another nettle-dev) could lay out
     * the context structs differently, and they live on our stack. */
    static const char *const sonames[] = {"libnettle.so.8", NULL};
    const pj_dynlib_spec spec = {
        .what = "nettle",
        .override = "PTXJIT_NETTLE_LIBRARY",
        .sonames = sonames,
        .places = PJ_DYNLIB_OVERRIDE_ALONE, /* the tests name a missing nettle on purpose */
        .fix = "the remote cache signs its entries with nettle's HMAC-SHA-256 "
               "(PTXJIT_REMOTE_CACHE_KEY_FILE is set): install it (Debian/Ubuntu: apt-get "
               "install libnettle8; Fedora/RHEL: dnf install nettle) or set "
               "PTXJIT_NETTLE_LIBRARY to the path of libnettle.so.8"};
    nettle.status = PTXJIT_ERR_CACHE;
    if (!pj_dynlib_open(&nettle.lib, &spec)) {
        snprintf(nettle.error, sizeof nettle.error, "%s", nettle.lib.error);
        return;
    }
    pj_nettle *t = &nettle.table;
    const pj_dynlib_symbol symbols[] = {
        {"nettle_sha256_init", (void **)&t->hash_init},
        {"nettle_sha256_update", (void **)&t->hash_update},
        {"nettle_sha256_digest", (void **)&t->hash_digest},
        {"nettle_hmac_sha256_set_key", (void **)&t->mac_set_key},
        {"nettle_hmac_sha256_update", (void **)&t->mac_update},
        {"nettle_hmac_sha256_digest", (void **)&t->mac_digest},
        {"nettle_memeql_sec", (void **)&t->equal},
    };
    const char *missing = pj_dynlib_resolve(nettle.lib.handle, symbols, PJ_ARRAY_SIZE(symbols));
    if (missing) {
        snprintf(nettle.error, sizeof nettle.error,
                 "the nettle library %s lacks %s (the remote cache's signing needs nettle 3.6 "
                 "or newer, libnettle.so.8); install libnettle8 or set PTXJIT_NETTLE_LIBRARY "
                 "to the path of another libnettle.so.8",
                 nettle.lib.path, missing);
        return;
    }
    nettle.status = PTXJIT_OK;
}

ptxjit_status pj_nettle_load(const pj_nettle **out)
{
    pthread_once(&nettle_once, nettle_load_once);
    if (nettle.status != PTXJIT_OK)
        return pj_error(nettle.status, "%s", nettle.error);
    if (out)
        *out = &nettle.table;
    return PTXJIT_OK;
}

/* config.h — the remote cache tier's settings: where the server is (a redis:// or unix:// URL),
 * the fleet secret that signs entries, the AUTH password, timeouts, back-off and size limit,
 * from the options field and the environment. A setting that is there but wrong fails the
 * open: a fleet that believes it shares a signed cache must not quietly run without one. */
#ifndef PTXJIT_REMOTE_CONFIG_H
#define PTXJIT_REMOTE_CONFIG_H

#include "internal.h"

#define PJ_REMOTE_SECRET_MIN 16   /* bytes of a key file, at least */
#define PJ_REMOTE_SECRET_MAX 4096
#define PJ_REMOTE_LEASE_DEFAULT_MS 3000

typedef struct {
    char *url;         /* as configured, for messages */
    char *host;        /* redis://HOST:PORT; NULL for a unix socket */
    int port;
    char *socket_path; /* unix:///PATH; NULL for TCP */
    int db;            /* SELECT db when not 0 */
    unsigned char *secret; /* the fleet key (HMAC-SHA-256); NULL: unsigned mode */
    size_t secret_size;
    char *password;    /* AUTH password; NULL: none */
    int connect_ms, op_ms, backoff_ms;
    int lease_ms;      /* the compile lease's TTL (remote/lease.h) */
    uint64_t max_value_bytes; /* larger entries are not sent */
} pj_remote_config;

/* Reads the settings. url NULL: $PTXJIT_REMOTE_CACHE; "" (or unset): no remote tier, *configured
 * = 0 and PTXJIT_OK. Configured but unusable (a malformed URL or number, no key file without
 * PTXJIT_REMOTE_CACHE_UNSIGNED=1, a key or password file others can read or that is not
 * ours, a key file where nettle cannot be loaded): PTXJIT_ERR_CACHE naming the setting and
 * the fix. */
ptxjit_status pj_remote_config_read(pj_remote_config *out, int *configured, const char *url);
void pj_remote_config_free(pj_remote_config *config);
/* Parses a URL alone into host/port/socket_path/db (for tests and messages). */
ptxjit_status pj_remote_url_parse(pj_remote_config *out, const char *url);

#endif

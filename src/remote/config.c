/* config.c — the remote tier's settings: URL, key and password files (owner-only, ours), the
 * numbers; every mistake is an error that names the variable and the fix. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "remote/config.h"
#include "remote/nettle.h"

#define URL_FORMS "redis://HOST:PORT[/DB] or unix:///PATH[?db=N]"

static ptxjit_status bad_url(const char *url, const char *why)
{
    return pj_error(PTXJIT_ERR_CACHE,
                    "remote cache URL '%.200s' %s; write it as " URL_FORMS
                    " (PTXJIT_REMOTE_CACHE or the remote_cache option), or leave it unset "
                    "for no remote cache",
                    url, why);
}

/* A decimal number in [min, max] that fills text. */
static int parse_int(const char *text, long min, long max, long *out)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < min || value > max)
        return 0;
    *out = value;
    return 1;
}

static ptxjit_status parse_unix(pj_remote_config *out, const char *url, const char *rest)
{
    const char *query = strchr(rest, '?');
    size_t length = query ? (size_t)(query - rest) : strlen(rest);
    if (length < 2 || rest[0] != '/')
        return bad_url(url, "names no absolute socket path");
    long db = 0;
    if (query && (strncmp(query, "?db=", 4) != 0 || !parse_int(query + 4, 0, 1 << 20, &db)))
        return bad_url(url, "has a query other than ?db=N");
    out->socket_path = pj_strndup(rest, length);
    out->db = (int)db;
    return out->socket_path ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

static ptxjit_status parse_tcp(pj_remote_config *out, const char *url, const char *rest)
{
    const char *slash = strchr(rest, '/');
    size_t length = slash ? (size_t)(slash - rest) : strlen(rest);
    const char *colon = memchr(rest, ':', length);
    if (!colon || colon == rest)
        return bad_url(url, "names no HOST:PORT");
    char port[16];
    size_t port_length = length - (size_t)(colon + 1 - rest);
    long value = 0, db = 0;
    if (port_length == 0 || port_length >= sizeof port)
        return bad_url(url, "has no valid port");
    memcpy(port, colon + 1, port_length);
    port[port_length] = '\0';
    if (!parse_int(port, 1, 65535, &value))
        return bad_url(url, "has no valid port (1 to 65535)");
    if (slash && slash[1] && !parse_int(slash + 1, 0, 1 << 20, &db))
        return bad_url(url, "has a database that is not a number");
    out->host = pj_strndup(rest, (size_t)(colon - rest));
    out->port = (int)value;
    out->db = (int)db;
    return out->host ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status pj_remote_url_parse(pj_remote_config *out, const char *url)
{
    if (strncmp(url, "redis://", 8) == 0)
        return parse_tcp(out, url, url + 8);
    if (strncmp(url, "unix://", 7) == 0)
        return parse_unix(out, url, url + 7);
    return bad_url(url, "has an unknown scheme");
}

/* Reads a secret file: a regular file of ours that nobody else can read or write (0600 or
 * stricter), not a link; its bytes in *out (NUL-terminated, caller frees). */
static ptxjit_status read_secret(unsigned char **out, size_t *size, const char *variable,
                                 const char *path, size_t min)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    const char *why = NULL;
    if (fd < 0 || fstat(fd, &st) != 0)
        why = errno == ELOOP ? "is a symbolic link" : strerror(errno);
    else if (!S_ISREG(st.st_mode))
        why = "is not a regular file";
    else if (st.st_uid != geteuid())
        why = "is owned by another user";
    else if (st.st_mode & (S_IRWXG | S_IRWXO))
        why = "can be read or written by others (its mode must be 0600 or stricter)";
    else if ((size_t)st.st_size < min || st.st_size > PJ_REMOTE_SECRET_MAX)
        why = "has the wrong size";
    unsigned char *data = why ? NULL : malloc((size_t)st.st_size + 1);
    if (!why && !data)
        why = "cannot be read: out of memory";
    if (!why && read(fd, data, (size_t)st.st_size) != st.st_size)
        why = "cannot be read whole";
    if (fd >= 0)
        close(fd);
    if (why) {
        free(data);
        return pj_error(PTXJIT_ERR_CACHE,
                        "%s '%.200s' %s; it must be a file of yours with mode 0600 holding %zu "
                        "to %d bytes (e.g. head -c 32 /dev/urandom > FILE; chmod 600 FILE)",
                        variable, path, why, min, PJ_REMOTE_SECRET_MAX);
    }
    data[st.st_size] = '\0';
    *out = data;
    *size = (size_t)st.st_size;
    return PTXJIT_OK;
}

static int env_flag(const char *name)
{
    const char *text = getenv(name);
    return text && (!strcmp(text, "1") || !strcmp(text, "yes") || !strcmp(text, "true"));
}

/* $name as a number in [min, max], else fallback; a malformed one is an error. */
static ptxjit_status env_number(long *out, const char *name, long min, long max, long fallback)
{
    const char *text = getenv(name);
    *out = fallback;
    if (!text || !*text || parse_int(text, min, max, out))
        return PTXJIT_OK;
    return pj_error(PTXJIT_ERR_CACHE, "%s='%.64s' is not a number from %ld to %ld; fix it or "
                                      "unset it (default %ld)",
                    name, text, min, max, fallback);
}

static ptxjit_status read_numbers(pj_remote_config *out)
{
    long connect_ms, op_ms, backoff_ms, max_bytes, lease_ms;
    ptxjit_status status =
        env_number(&connect_ms, "PTXJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS", 1, 60000, 100);
    if (status == PTXJIT_OK)
        status = env_number(&op_ms, "PTXJIT_REMOTE_CACHE_TIMEOUT_MS", 1, 60000, 200);
    if (status == PTXJIT_OK)
        status = env_number(&backoff_ms, "PTXJIT_REMOTE_CACHE_BACKOFF_MS", 0, 3600000, 30000);
    if (status == PTXJIT_OK)
        status = env_number(&max_bytes, "PTXJIT_REMOTE_CACHE_MAX_BYTES", 1, 1L << 30, 64L << 20);
    if (status == PTXJIT_OK)
        status = env_number(&lease_ms, "PTXJIT_REMOTE_CACHE_LEASE_MS", 100, 600000,
                            PJ_REMOTE_LEASE_DEFAULT_MS);
    if (status != PTXJIT_OK)
        return status;
    out->connect_ms = (int)connect_ms;
    out->lease_ms = (int)lease_ms;
    out->op_ms = (int)op_ms;
    out->backoff_ms = (int)backoff_ms;
    out->max_value_bytes = (uint64_t)max_bytes;
    return PTXJIT_OK;
}

/* The key file, or the explicit unsigned mode; neither is a refusal with both fixes. The
 * signed mode loads nettle here, so that a node without it fails the open rather than run
 * unsigned, or fail every fetch and publish; the unsigned mode never loads it. */
static ptxjit_status read_key(pj_remote_config *out)
{
    const char *path = getenv("PTXJIT_REMOTE_CACHE_KEY_FILE");
    if (path && *path) {
        ptxjit_status status = read_secret(&out->secret, &out->secret_size,
                                           "PTXJIT_REMOTE_CACHE_KEY_FILE", path,
                                           PJ_REMOTE_SECRET_MIN);
        if (status == PTXJIT_OK && pj_nettle_load(NULL) != PTXJIT_OK)
            return pj_error_wrap(PTXJIT_ERR_CACHE, "remote cache %.200s", out->url);
        return status;
    }
    if (env_flag("PTXJIT_REMOTE_CACHE_UNSIGNED"))
        return PTXJIT_OK;
    return pj_error(PTXJIT_ERR_CACHE,
                    "remote cache %.200s has no key to sign and check its entries with, so "
                    "anyone who can write to the server could hand this process code; set "
                    "PTXJIT_REMOTE_CACHE_KEY_FILE to a 0600 file holding the fleet's secret "
                    "(the same on every node), or PTXJIT_REMOTE_CACHE_UNSIGNED=1 on a network "
                    "where every writer is trusted",
                    out->url);
}

static ptxjit_status read_password(pj_remote_config *out)
{
    const char *path = getenv("PTXJIT_REMOTE_CACHE_PASSWORD_FILE");
    if (!path || !*path)
        return PTXJIT_OK;
    unsigned char *data;
    size_t size;
    ptxjit_status status = read_secret(&data, &size, "PTXJIT_REMOTE_CACHE_PASSWORD_FILE", path, 1);
    if (status != PTXJIT_OK)
        return status;
    while (size && (data[size - 1] == '\n' || data[size - 1] == '\r'))
        data[--size] = '\0'; /* echo pw > file leaves a line end that is not the password */
    out->password = (char *)data;
    return PTXJIT_OK;
}

ptxjit_status pj_remote_config_read(pj_remote_config *out, int *configured, const char *url)
{
    memset(out, 0, sizeof *out);
    *configured = 0;
    if (!url)
        url = getenv("PTXJIT_REMOTE_CACHE");
    if (!url || !*url)
        return PTXJIT_OK;
    *configured = 1;
    out->url = pj_strdup(url);
    ptxjit_status status = out->url ? pj_remote_url_parse(out, url)
                                    : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == PTXJIT_OK)
        status = read_numbers(out);
    if (status == PTXJIT_OK)
        status = read_key(out);
    if (status == PTXJIT_OK)
        status = read_password(out);
    if (status != PTXJIT_OK)
        pj_remote_config_free(out);
    return status;
}

void pj_remote_config_free(pj_remote_config *config)
{
    if (config->secret)
        memset(config->secret, 0, config->secret_size);
    if (config->password)
        memset(config->password, 0, strlen(config->password));
    free(config->url);
    free(config->host);
    free(config->socket_path);
    free(config->secret);
    free(config->password);
    memset(config, 0, sizeof *config);
}

/* remote.c — the remote tier: names, fetch (envelope, then the disk format's own decode),
 * publish, counters. */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/entry.h"
#include "remote/config.h"
#include "remote/connection.h"
#include "remote/envelope.h"
#include "remote/remote.h"
#include "remote/stats.h"

struct pj_remote {
    pj_remote_config config;
    pj_remote_link *link;
    pj_remote_stats stats;
    pj_logger logger;
};

ptxjit_status pj_remote_open(pj_remote **out, const char *url, const char *stats_dir,
                             const pj_logger *logger)
{
    *out = NULL;
    int configured = 0;
    pj_remote *remote = calloc(1, sizeof *remote);
    if (!remote)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (logger)
        remote->logger = *logger;
    ptxjit_status status = pj_remote_config_read(&remote->config, &configured, url);
    if (status == PTXJIT_OK && configured)
        status = pj_remote_stats_init(&remote->stats, stats_dir);
    if (status == PTXJIT_OK && configured)
        status = pj_link_open(&remote->link, &remote->config, &remote->logger);
    if (status != PTXJIT_OK || !configured) {
        pj_remote_close(remote);
        return status;
    }
    *out = remote;
    return PTXJIT_OK;
}

void pj_remote_close(pj_remote *remote)
{
    if (!remote)
        return;
    pj_link_close(remote->link);
    pj_remote_stats_free(&remote->stats);
    pj_remote_config_free(&remote->config);
    free(remote);
}

char *pj_remote_name(pj_remote_kind kind, const char *key)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "ptxjit:v%d:%s:%s", PJ_ENTRY_FORMAT_VERSION,
                  kind == PJ_REMOTE_RECORD ? "tune" : "kernel", key);
    return pj_sb_take(&sb);
}

static int64_t now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000 + t.tv_nsec / 1000;
}

static void count(pj_remote *remote, pj_remote_stat which, int64_t started_us)
{
    uint64_t delta[REMOTE_STAT_COUNT] = {0};
    delta[which] = 1;
    delta[REMOTE_STAT_time_us] = (uint64_t)(now_us() - started_us);
    pj_remote_stats_add(&remote->stats, delta);
}

/* A rejected entry is news the first time: after that it is counted, not repeated. */
static void warn_rejected(pj_remote *remote, const char *name, const char *why)
{
    static int warned;
    if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        return;
    pj_log(&remote->logger, PTXJIT_LOG_WARNING,
           "remote cache %s: entry %s rejected (%s); compiling locally, and the local result "
           "replaces it on the server. Further rejections are counted (ptxjit cache stats), "
           "not reported",
           remote->config.url, name, why);
}

/* The value checked as the one stored under name for key: envelope, then the entry's own
 * checks. NULL, with *out filled, or why it was rejected. */
static const char *check_value(pj_remote *remote, pj_artifact *out, const char *name,
                               const char *key, const char *value, size_t size)
{
    const char *entry, *why;
    size_t entry_size;
    why = pj_envelope_open(&entry, &entry_size, remote->config.secret, remote->config.secret_size,
                           name, value, size);
    if (why)
        return why;
    ptxjit_status status = pj_entry_decode(out, &why, entry, entry_size, key);
    if (status == PTXJIT_ERR_OUT_OF_MEMORY)
        return "out of memory";
    return status == PTXJIT_OK ? NULL : why;
}

void pj_remote_fetch(pj_remote *remote, pj_remote_kind kind, const char *key, pj_artifact *out,
                     int *found)
{
    *found = 0;
    memset(out, 0, sizeof *out);
    char *name = remote && pj_entry_key_valid(key) ? pj_remote_name(kind, key) : NULL;
    if (!name)
        return;
    int64_t started = now_us();
    char *value = NULL;
    size_t size = 0;
    pj_link_result result = pj_link_get(remote->link, name, &value, &size);
    if (result == PJ_LINK_OK) {
        const char *why = check_value(remote, out, name, key, value, size);
        *found = !why;
        if (why)
            warn_rejected(remote, name, why);
        count(remote, why ? REMOTE_STAT_rejected : REMOTE_STAT_hits, started);
    } else if (result != PJ_LINK_DOWN) {
        count(remote, result == PJ_LINK_NIL ? REMOTE_STAT_misses : REMOTE_STAT_errors, started);
    }
    free(value);
    free(name);
}

void pj_remote_publish(pj_remote *remote, pj_remote_kind kind, const char *key,
                       const pj_artifact *artifact)
{
    if (!remote || !pj_entry_key_valid(key) || !pj_entry_storable(artifact))
        return;
    int64_t started = now_us();
    size_t entry_size = 0, size = 0;
    char *name = pj_remote_name(kind, key);
    char *entry = pj_entry_encode(&entry_size, key, artifact);
    char *value = name && entry ? pj_envelope_seal(&size, remote->config.secret,
                                                   remote->config.secret_size, name, entry,
                                                   entry_size)
                                : NULL;
    if (value && size <= remote->config.max_value_bytes) {
        pj_link_result result = pj_link_set(remote->link, name, value, size);
        if (result != PJ_LINK_DOWN)
            count(remote, result == PJ_LINK_OK ? REMOTE_STAT_publishes : REMOTE_STAT_errors,
                  started);
    }
    free(value);
    free(entry);
    free(name);
}

void pj_remote_stats_fill(pj_remote *remote, ptxjit_cache_stats *out)
{
    uint64_t totals[REMOTE_STAT_COUNT] = {0};
    if (remote)
        pj_remote_stats_read(&remote->stats, totals);
    out->remote_hits = totals[REMOTE_STAT_hits];
    out->remote_misses = totals[REMOTE_STAT_misses];
    out->remote_rejected = totals[REMOTE_STAT_rejected];
    out->remote_errors = totals[REMOTE_STAT_errors];
    out->remote_publishes = totals[REMOTE_STAT_publishes];
    out->remote_ms = totals[REMOTE_STAT_time_us] / 1000;
    out->remote_configured = remote != NULL;
}

/* remote.c — the remote tier: names, fetch (envelope, then the disk format's own decode),
 * publish, counters. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cache/entry.h"
#include "remote/config.h"
#include "remote/connection.h"
#include "remote/envelope.h"
#include "remote/lease.h"
#include "remote/remote.h"
#include "remote/stats.h"

struct pj_remote {
    pj_remote_config config;
    pj_remote_link *link;
    pj_remote_stats stats;
    pj_logger logger;
};

ptxjit_status pj_remote_open(pj_remote **out, const char *url, int lease_ms,
                             const char *stats_dir, const pj_logger *logger)
{
    *out = NULL;
    int configured = 0;
    pj_remote *remote = calloc(1, sizeof *remote);
    if (!remote)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (logger)
        remote->logger = *logger;
    ptxjit_status status = pj_remote_config_read(&remote->config, &configured, url);
    if (status == PTXJIT_OK && configured && lease_ms && (lease_ms < 100 || lease_ms > 600000))
        status = pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                          "remote_lease_ms %d is out of range; give 100 to 600000 ms, or 0 for "
                          "$PTXJIT_REMOTE_CACHE_LEASE_MS (default %d)",
                          lease_ms, PJ_REMOTE_LEASE_DEFAULT_MS);
    else if (lease_ms)
        remote->config.lease_ms = lease_ms;
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

/* A rejected entry is news the first time: after that it is counted, not repeated in the
 * log; an event callback is told each one. */
static void rejected(pj_remote *remote, const char *name, const char *key, const char *why)
{
    static int warned;
    if (remote->logger.on_event) {
        char detail[512];
        snprintf(detail, sizeof detail, "remote cache %s: entry %s rejected (%s)",
                 remote->config.url, name, why);
        pj_notify(&remote->logger, (ptxjit_event){.kind = PTXJIT_EVENT_REMOTE_ERROR,
                                                  .status = PTXJIT_ERR_CACHE,
                                                  .key = key,
                                                  .detail = detail});
    }
    if (__atomic_exchange_n(&warned, 1, __ATOMIC_RELAXED))
        return;
    pj_log(&remote->logger, PTXJIT_LOG_WARNING,
           "remote cache %s: entry %s rejected (%s); compiling locally, and the local result "
           "replaces it on the server. Further rejections are counted (ptxjit cache stats), "
           "not reported",
           remote->config.url, name, why);
}

/* A value over the size limit is refused at its header, before any of it is read: a
 * rejected entry, which the local compile replaces on the server. */
static void rejected_too_big(pj_remote *remote, const char *name, const char *key)
{
    char why[160];
    snprintf(why, sizeof why,
             "larger than PTXJIT_REMOTE_CACHE_MAX_BYTES, %llu bytes: refused before it was read",
             (unsigned long long)remote->config.max_value_bytes);
    rejected(remote, name, key, why);
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

/* A value read under name: checked into *out (1), or rejected (0: warned once, freed). */
static int accept_value(pj_remote *remote, pj_artifact *out, const char *name, const char *key,
                        const char *value, size_t size)
{
    const char *why = check_value(remote, out, name, key, value, size);
    if (why)
        rejected(remote, name, key, why);
    return !why;
}

int pj_remote_fetch(pj_remote *remote, pj_remote_kind kind, const char *key, pj_artifact *out,
                    int *found)
{
    *found = 0;
    memset(out, 0, sizeof *out);
    char *name = remote && pj_entry_key_valid(key) ? pj_remote_name(kind, key) : NULL;
    if (!name)
        return 0;
    int64_t started = now_us();
    char *value = NULL;
    size_t size = 0;
    pj_link_result result = pj_link_get(remote->link, name, &value, &size);
    if (result == PJ_LINK_OK) {
        *found = accept_value(remote, out, name, key, value, size);
        count(remote, *found ? REMOTE_STAT_hits : REMOTE_STAT_rejected, started);
    } else if (result == PJ_LINK_TOO_BIG) {
        rejected_too_big(remote, name, key);
        count(remote, REMOTE_STAT_rejected, started);
    } else if (result != PJ_LINK_DOWN) {
        count(remote, result == PJ_LINK_NIL ? REMOTE_STAT_misses : REMOTE_STAT_errors, started);
    }
    free(value);
    free(name);
    return result == PJ_LINK_NIL;
}

int pj_remote_publish(pj_remote *remote, pj_remote_kind kind, const char *key,
                      const pj_artifact *artifact)
{
    int sent = 0;
    if (!remote || !pj_entry_key_valid(key) || !pj_entry_storable(artifact))
        return 0;
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
        sent = result == PJ_LINK_OK;
        if (result != PJ_LINK_DOWN)
            count(remote, sent ? REMOTE_STAT_publishes : REMOTE_STAT_errors, started);
    }
    pj_remote_stats_merge(&remote->stats); /* a compile's path: the counts may go out now */
    free(value);
    free(entry);
    free(name);
    return sent;
}

/* ---- the notes ---- */

static char *notes_name(const char *family)
{
    for (const char *c = family; *c; c++)
        if (!(isalnum((unsigned char)*c) || *c == '_'))
            return NULL;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "ptxjit:v%d:notes:%s", PJ_ENTRY_FORMAT_VERSION, family);
    return pj_sb_take(&sb);
}

/* A note as stored: "key <key>\n" then the components, sealed under the list's name (a note
 * copied into another family's list fails its check). */
void pj_remote_publish_note(pj_remote *remote, const char *family, const char *key,
                            const char *text)
{
    if (!remote || !family || !text || !pj_entry_key_valid(key))
        return;
    char *list = notes_name(family);
    pj_strbuf note;
    pj_sb_init(&note);
    pj_sb_appendf(&note, "key %s\n%s", key, text);
    size_t size = 0;
    char *value = list && note.data ? pj_envelope_seal(&size, remote->config.secret,
                                                       remote->config.secret_size, list,
                                                       note.data, note.length)
                                    : NULL;
    if (value && size <= remote->config.max_value_bytes) {
        int64_t started = now_us();
        pj_link_result result = pj_link_push_note(remote->link, list, value, size);
        if (result == PJ_LINK_FAILED)
            count(remote, REMOTE_STAT_errors, started);
    }
    free(value);
    pj_sb_free(&note);
    free(list);
}

/* One stored note checked: its key (into key) and components, or NULL. */
static const char *open_note(pj_remote *remote, const char *list, const char *value,
                             size_t size, char key[33])
{
    const char *note;
    size_t note_size;
    if (pj_envelope_open(&note, &note_size, remote->config.secret, remote->config.secret_size,
                         list, value, size) ||
        note_size < 4 + 32 + 1 || memcmp(note, "key ", 4) != 0 || note[4 + 32] != '\n' ||
        memchr(note, '\0', note_size))
        return NULL;
    memcpy(key, note + 4, 32);
    key[32] = '\0';
    return pj_entry_key_valid(key) ? note + 4 + 32 + 1 : NULL;
}

int pj_remote_each_note(pj_remote *remote, const char *family,
                        void (*fn)(void *user, const char *key, const char *text), void *user)
{
    char *list = remote ? notes_name(family) : NULL;
    if (!list)
        return remote ? 0 : -1;
    char seen[PJ_LINK_NOTES_KEPT][33];
    int handed = 0, asked = 1, end = 0;
    for (int first = 0; first < PJ_LINK_NOTES_KEPT && !end; first += 4) {
        char *values[4];
        size_t sizes[4];
        if (pj_link_note_range(remote->link, list, first, 4, values, sizes) != PJ_LINK_OK) {
            asked = first > 0; /* a later failure keeps what was handed */
            break;
        }
        for (int i = 0; i < 4; i++) {
            char key[33];
            /* The value's bytes end where its size says; the note is text (no NUL inside),
             * and the reply's buffer is NUL-terminated past it. */
            const char *text = values[i] ? open_note(remote, list, values[i], sizes[i], key)
                                         : NULL;
            end |= !values[i];
            int again = 0;
            for (int s = 0; text && s < handed; s++)
                again |= strcmp(seen[s], key) == 0;
            if (text && !again) {
                memcpy(seen[handed++], key, 33);
                fn(user, key, text);
            }
            free(values[i]);
        }
    }
    free(list);
    return asked ? handed : -1;
}

int pj_remote_holds(pj_remote *remote, pj_remote_kind kind, const char *key, const char **why)
{
    *why = NULL;
    char *name = remote && pj_entry_key_valid(key) ? pj_remote_name(kind, key) : NULL;
    char *value = NULL;
    size_t size = 0;
    pj_link_result result = name ? pj_link_get(remote->link, name, &value, &size)
                                 : PJ_LINK_FAILED;
    int holds = -1;
    if (result == PJ_LINK_NIL) {
        holds = 0;
    } else if (result == PJ_LINK_TOO_BIG) {
        *why = "larger than PTXJIT_REMOTE_CACHE_MAX_BYTES";
        holds = -2;
    } else if (result == PJ_LINK_OK) {
        pj_artifact artifact;
        memset(&artifact, 0, sizeof artifact);
        *why = check_value(remote, &artifact, name, key, value, size);
        if (!*why)
            pj_artifact_free(&artifact);
        holds = *why ? -2 : 1;
    }
    free(value);
    free(name);
    return holds;
}

const char *pj_remote_url(const pj_remote *remote)
{
    return remote ? remote->config.url : "";
}

/* ---- the lease ---- */

#define POLL_FIRST_MS 2
#define POLL_MOST_MS 50 /* a waiter sees a published entry this late, at most */

static void sleep_ms(int64_t ms)
{
    struct timespec t = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    while (nanosleep(&t, &t) != 0 && errno == EINTR)
        ;
}

static char *lease_name(pj_remote_kind kind, const char *key)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "ptxjit:v%d:lease:%s%s", PJ_ENTRY_FORMAT_VERSION,
                  kind == PJ_REMOTE_RECORD ? "tune:" : "", key);
    return pj_sb_take(&sb);
}

/* What a claim did, for the counters. */
typedef struct {
    int waited;       /* another node held the lease at some round */
    int rejected;     /* the entry that turned up failed a check */
    int failed;       /* the server could not be asked (not when backing off) */
    int64_t spent_us; /* on the server (not the pauses) */
} claim_report;

/* The claim loop: one claim a round, until a lease, an entry, or the end of waiting. */
static pj_remote_claim_result claim_loop(struct pj_lease **lease, pj_artifact *out,
                                         claim_report *report, pj_remote *remote,
                                         const char *lease_key, const char *name,
                                         const char *key, int wait_ms, int (*found)(void *),
                                         void *user, pj_lease_watch *watch)
{
    int64_t deadline = now_us() + (int64_t)wait_ms * 1000;
    for (int64_t delay = POLL_FIRST_MS;; delay = delay * 2 > POLL_MOST_MS ? POLL_MOST_MS
                                                                          : delay * 2) {
        char *value;
        size_t size;
        int64_t started = now_us();
        pj_claim_result claim = pj_lease_claim(lease, &value, &size, remote->link, lease_key,
                                               name, remote->config.lease_ms, watch);
        report->spent_us += now_us() - started;
        if (claim == PJ_CLAIM_ENTRY) {
            /* A rejected one is compiled here, and the result replaces it on the server. */
            report->rejected = !accept_value(remote, out, name, key, value, size);
            free(value);
            return report->rejected ? PJ_REMOTE_ALONE : PJ_REMOTE_FETCHED;
        }
        if (claim == PJ_CLAIM_WON)
            return PJ_REMOTE_LEASED;
        if (claim == PJ_CLAIM_FAILED || claim == PJ_CLAIM_DOWN) {
            report->failed = claim == PJ_CLAIM_FAILED;
            return PJ_REMOTE_ALONE;
        }
        if (claim == PJ_CLAIM_TOO_BIG) {
            rejected_too_big(remote, name, key);
            report->rejected = 1;
            return PJ_REMOTE_ALONE;
        }
        /* The holder's compile came to nothing, or it stopped renewing and the lease cannot
         * be removed (no EVAL): compile alone. */
        if (claim == PJ_CLAIM_GIVEN_UP || claim == PJ_CLAIM_STALE)
            return PJ_REMOTE_ALONE;
        report->waited = 1;
        if (found && found(user))
            return PJ_REMOTE_LOCAL;
        int64_t left = deadline - now_us();
        if (left <= 0)
            return PJ_REMOTE_ALONE;
        sleep_ms(delay * 1000 < left ? delay : (left + 999) / 1000);
    }
}

pj_remote_claim_result pj_remote_claim(struct pj_lease **lease, pj_artifact *out,
                                       pj_remote *remote, pj_remote_kind kind, const char *key,
                                       int wait_ms, int (*found)(void *user), void *user)
{
    *lease = NULL;
    memset(out, 0, sizeof *out);
    if (!remote || wait_ms <= 0 || !pj_entry_key_valid(key))
        return PJ_REMOTE_ALONE;
    char *name = pj_remote_name(kind, key), *lease_key = lease_name(kind, key);
    claim_report report = {0};
    pj_lease_watch watch = {0};
    pj_remote_claim_result result =
        name && lease_key ? claim_loop(lease, out, &report, remote, lease_key, name, key,
                                       wait_ms, found, user, &watch)
                          : PJ_REMOTE_ALONE;
    pj_lease_watch_free(&watch);
    /* A wait that did not end with the entry is a timeout: the holder's lease expired (this
     * node took it over) or the bound passed. */
    uint64_t delta[REMOTE_STAT_COUNT] = {0};
    int got = result == PJ_REMOTE_FETCHED || result == PJ_REMOTE_LOCAL;
    delta[REMOTE_STAT_lease_waits] = report.waited;
    delta[REMOTE_STAT_lease_timeouts] = report.waited && !got;
    delta[REMOTE_STAT_lease_wins] = !report.waited && result == PJ_REMOTE_LEASED;
    delta[REMOTE_STAT_hits] = result == PJ_REMOTE_FETCHED;
    delta[REMOTE_STAT_rejected] = report.rejected;
    delta[REMOTE_STAT_errors] = report.failed;
    delta[REMOTE_STAT_time_us] = (uint64_t)report.spent_us;
    pj_remote_stats_add(&remote->stats, delta);
    pj_remote_stats_merge(&remote->stats);
    free(name);
    free(lease_key);
    return result;
}

void pj_remote_lease_end(struct pj_lease *lease, int published)
{
    pj_lease_end(lease, !published);
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
    out->lease_wins = totals[REMOTE_STAT_lease_wins];
    out->lease_waits = totals[REMOTE_STAT_lease_waits];
    out->lease_timeouts = totals[REMOTE_STAT_lease_timeouts];
    out->remote_configured = remote != NULL;
}

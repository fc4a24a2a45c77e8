/* connection.c — the link to Redis: kept connections, the back-off, and exchanges (a round
 * trip of pipelined commands) under one deadline and the reply cap (connection.h); the
 * commands ptxjit sends. Sockets and deadlines are transport.c's, the protocol resp.c's. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "remote/connection.h"
#include "remote/resp.h"
#include "remote/transport.h"

#define IDLE_MAX 16
#define PIPELINE_MAX 4 /* commands of one exchange, besides a fresh connection's AUTH, SELECT */

struct pj_remote_link {
    const pj_remote_config *config;
    pj_logger logger;
    pthread_mutex_t lock;         /* guards everything below */
    int idle[IDLE_MAX];           /* connections between requests */
    int idle_count;
    pid_t pid;                    /* the process the idle connections belong to */
    int failures;                 /* in a row */
    int64_t down_until_ms;        /* backing off until then (monotonic) */
    int backoffs;                 /* how many so far: only the first is a warning */
    int scripts_refused;          /* the server answered EVAL with an error (an ACL): the
                                     lease's commands go unchecked (pj_link_renew_held) */
};

ptxjit_status pj_link_open(pj_remote_link **out, const pj_remote_config *config,
                           const pj_logger *logger)
{
    pj_remote_link *link = calloc(1, sizeof *link);
    if (!link)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    link->config = config;
    if (logger)
        link->logger = *logger;
    pthread_mutex_init(&link->lock, NULL);
    link->pid = getpid();
    *out = link;
    return PTXJIT_OK;
}

void pj_link_close(pj_remote_link *link)
{
    if (!link)
        return;
    for (int i = 0; i < link->idle_count; i++)
        close(link->idle[i]);
    pthread_mutex_destroy(&link->lock);
    free(link);
}

/* ---- kept connections and the back-off ---- */

/* In a child of fork() the idle connections are the parent's sockets as well: a command
 * sent on one would interleave with the parent's, and either could read the other's reply.
 * The child drops its copies (closing its descriptors sends nothing; the parent's stay open)
 * and connects anew. Caller holds link->lock. */
static void leave_parents_connections(pj_remote_link *link)
{
    pid_t pid = getpid();
    if (pid == link->pid)
        return;
    for (int i = 0; i < link->idle_count; i++)
        close(link->idle[i]);
    link->idle_count = 0;
    link->pid = pid;
}

/* An idle connection, or -1 (none, or backing off: *down set). One the server closed or sent
 * something on meanwhile (it restarted, or it is not speaking Redis) is dropped here, before
 * a command is lost on it. */
static int take_idle(pj_remote_link *link, int *down)
{
    pthread_mutex_lock(&link->lock);
    leave_parents_connections(link);
    *down = pj_transport_now_ms() < link->down_until_ms;
    int fd = !*down && link->idle_count ? link->idle[--link->idle_count] : -1;
    pthread_mutex_unlock(&link->lock);
    if (fd >= 0 && !pj_transport_quiet(fd)) {
        close(fd);
        fd = -1;
    }
    return fd;
}

static void succeeded(pj_remote_link *link, int fd)
{
    pthread_mutex_lock(&link->lock);
    link->failures = 0;
    if (link->idle_count < IDLE_MAX) {
        link->idle[link->idle_count++] = fd;
        fd = -1;
    }
    pthread_mutex_unlock(&link->lock);
    if (fd >= 0)
        close(fd);
}

/* The events of a failure (and of the back-off it started). */
static void tell_failure(pj_remote_link *link, const char *why, int backoff)
{
    char detail[512];
    snprintf(detail, sizeof detail, "remote cache %s: %s", link->config->url, why);
    pj_notify(&link->logger, (ptxjit_event){.kind = PTXJIT_EVENT_REMOTE_ERROR,
                                            .status = PTXJIT_ERR_CACHE,
                                            .detail = detail});
    if (backoff)
        pj_notify(&link->logger, (ptxjit_event){.kind = PTXJIT_EVENT_REMOTE_BACKOFF,
                                                .status = PTXJIT_ERR_CACHE,
                                                .detail = detail,
                                                .ms = link->config->backoff_ms});
}

/* Counts a failure; the third in a row starts a back-off, and a failure right after one
 * (the first try when it ends) starts the next. */
static void failed(pj_remote_link *link, const char *why)
{
    pthread_mutex_lock(&link->lock);
    int failures = ++link->failures;
    int64_t now = pj_transport_now_ms();
    int start = failures >= PJ_REMOTE_FAILURES_BEFORE_BACKOFF && now >= link->down_until_ms;
    int first = start && link->backoffs++ == 0;
    if (start)
        link->down_until_ms = now + link->config->backoff_ms;
    pthread_mutex_unlock(&link->lock);
    if (start)
        pj_log(&link->logger, first ? PTXJIT_LOG_WARNING : PTXJIT_LOG_INFO,
               "remote cache %s: %s, %d times in a row; going on with the local cache and "
               "trying the server again in %d ms",
               link->config->url, why, failures, link->config->backoff_ms);
    if (link->logger.on_event)
        tell_failure(link, why, start);
}

/* ---- exchanges ---- */

/* One command of an exchange. */
typedef struct {
    int argc;
    const char *argv[PJ_RESP_WORDS_MAX];
    size_t lengths[PJ_RESP_WORDS_MAX];
} link_command;

/* How one try of an exchange on one connection ended. */
typedef enum { TRY_OK, TRY_FAILED, TRY_TOO_BIG } try_result;

/* count replies read from fd into replies, by the deadline, each held to the cap. On
 * anything but TRY_OK no reply is kept, and the connection is not to be used again. */
static try_result read_replies(int fd, size_t cap, int count, pj_resp_value *replies,
                               int64_t deadline_ms, const char **why)
{
    pj_resp_reader reader;
    pj_resp_reader_init(&reader, cap);
    char chunk[16384];
    size_t have = 0, at = 0;
    int got = 0;
    try_result result = TRY_OK;
    while (got < count && result == TRY_OK) {
        if (at == have) {
            ssize_t n = pj_transport_receive(fd, chunk, sizeof chunk, deadline_ms, why);
            if (n < 0) {
                result = TRY_FAILED;
                break;
            }
            have = (size_t)n;
            at = 0;
        }
        size_t taken = 0;
        pj_resp_status status = pj_resp_feed(&reader, chunk + at, have - at, &taken);
        at += taken;
        if (status == PJ_RESP_DONE)
            pj_resp_take(&reader, &replies[got++]);
        else if (status == PJ_RESP_TOO_BIG)
            result = TRY_TOO_BIG;
        else if (status != PJ_RESP_MORE)
            result = TRY_FAILED;
        if (status == PJ_RESP_BAD || status == PJ_RESP_TOO_BIG)
            *why = reader.why;
        else if (status == PJ_RESP_NO_MEMORY)
            *why = "out of memory";
    }
    if (result == TRY_OK && at != have) {
        *why = "the server sent more than it was asked for";
        result = TRY_FAILED;
    }
    pj_resp_reader_free(&reader);
    while (result != TRY_OK && got > 0)
        pj_resp_value_free(&replies[--got]);
    return result;
}

/* A fresh connection's first commands, in the same round trip as the caller's: AUTH with
 * the password, SELECT of the database; how many. */
static int frame_handshake(pj_resp_out *out, const pj_remote_config *config, char db[24])
{
    int count = 0;
    if (config->password) {
        const char *argv[] = {"AUTH", config->password};
        const size_t lengths[] = {4, strlen(config->password)};
        count += pj_resp_out_command(out, 2, argv, lengths) == 0;
    }
    if (config->db) {
        pj_format_int(db, config->db);
        const char *argv[] = {"SELECT", db};
        const size_t lengths[] = {6, strlen(db)};
        count += pj_resp_out_command(out, 2, argv, lengths) == 0;
    }
    return count;
}

/* The commands on fd (fresh: AUTH and SELECT first), their replies read back. */
static try_result try_on(int fd, int fresh, const pj_remote_config *config, int count,
                         const link_command *commands, pj_resp_value *replies,
                         int64_t deadline_ms, const char **why)
{
    pj_resp_out out;
    char db[24];
    pj_resp_out_init(&out);
    int first = fresh ? frame_handshake(&out, config, db) : 0;
    for (int i = 0; i < count; i++)
        if (pj_resp_out_command(&out, commands[i].argc, commands[i].argv,
                                commands[i].lengths) != 0) {
            *why = "a command too long to send"; /* a bug: the commands are ptxjit's own */
            return TRY_FAILED;
        }
    if (pj_transport_send(fd, out.iov, out.iov_count, deadline_ms, why) != 0)
        return TRY_FAILED;
    pj_resp_value all[2 + PIPELINE_MAX];
    try_result result = read_replies(fd, config->max_value_bytes, first + count, all,
                                     deadline_ms, why);
    if (result != TRY_OK)
        return result;
    for (int i = 0; i < first; i++)
        if (all[i].type != PJ_RESP_STATUS) {
            *why = "the server refused AUTH or SELECT (check the password file and the "
                   "database number)";
            result = TRY_FAILED;
        }
    for (int i = 0; i < first + count; i++) {
        if (i >= first && result == TRY_OK)
            replies[i - first] = all[i];
        else
            pj_resp_value_free(&all[i]);
    }
    return result;
}

/* The commands on a kept connection, else a new one; a kept one that fails may be one the
 * server closed (it restarted): they are tried once more on a new connection while the
 * deadline allows. Error replies come back in replies with *refused set, not counted: the
 * caller decides. */
static pj_link_result exchange_any(pj_remote_link *link, int count, const link_command *commands,
                                   pj_resp_value *replies, int *refused)
{
    const pj_remote_config *config = link->config;
    int64_t start = pj_transport_now_ms();
    int64_t deadline = start + config->connect_ms + config->op_ms;
    const char *why = "the connection failed";
    if (count > PIPELINE_MAX)
        return PJ_LINK_FAILED; /* a bug: ptxjit's own commands */
    int down;
    int fd = take_idle(link, &down);
    if (down)
        return PJ_LINK_DOWN;
    try_result result = TRY_FAILED;
    if (fd >= 0 && (result = try_on(fd, 0, config, count, commands, replies, deadline,
                                    &why)) != TRY_OK) {
        close(fd);
        fd = -1;
    }
    int64_t now = pj_transport_now_ms();
    if (result == TRY_FAILED && now < deadline) {
        int64_t connect_by = now + config->connect_ms < deadline ? now + config->connect_ms
                                                                 : deadline;
        fd = pj_transport_connect(config, connect_by, &why);
        if (fd >= 0 && (result = try_on(fd, 1, config, count, commands, replies, deadline,
                                        &why)) != TRY_OK) {
            close(fd);
            fd = -1;
        }
    }
    if (result == TRY_TOO_BIG)
        return PJ_LINK_TOO_BIG;
    if (result != TRY_OK) {
        failed(link, why);
        return PJ_LINK_FAILED;
    }
    *refused = 0;
    for (int i = 0; i < count; i++)
        *refused |= replies[i].type == PJ_RESP_ERROR;
    succeeded(link, fd);
    return PJ_LINK_OK;
}

static void free_replies(int count, pj_resp_value *replies)
{
    for (int i = 0; i < count; i++)
        pj_resp_value_free(&replies[i]);
}

/* exchange_any, where an error reply is a failure, counted. */
static pj_link_result exchange(pj_remote_link *link, int count, const link_command *commands,
                               pj_resp_value *replies)
{
    int refused;
    pj_link_result result = exchange_any(link, count, commands, replies, &refused);
    if (result == PJ_LINK_OK && refused) { /* the connection is fine; the server said no */
        free_replies(count, replies);
        failed(link, "the server answered an error");
        return PJ_LINK_FAILED;
    }
    return result;
}

static link_command command2(const char *verb, const char *name)
{
    return (link_command){2, {verb, name}, {strlen(verb), strlen(name)}};
}

/* A GET's reply as a value: PJ_LINK_OK with *value (the reply's own buffer, now the
 * caller's), PJ_LINK_NIL, or PJ_LINK_FAILED for anything else. */
static pj_link_result take_value(pj_resp_value *reply, char **value, size_t *size)
{
    if (reply->type == PJ_RESP_NIL)
        return PJ_LINK_NIL;
    if (reply->type != PJ_RESP_BULK)
        return PJ_LINK_FAILED;
    *value = reply->str;
    *size = reply->length;
    reply->str = NULL;
    return PJ_LINK_OK;
}

pj_link_result pj_link_get(pj_remote_link *link, const char *name, char **value, size_t *size)
{
    pj_resp_value reply;
    link_command get = command2("GET", name);
    pj_link_result result = exchange(link, 1, &get, &reply);
    if (result != PJ_LINK_OK)
        return result;
    result = take_value(&reply, value, size);
    pj_resp_value_free(&reply);
    return result;
}

pj_link_result pj_link_set(pj_remote_link *link, const char *name, const char *value, size_t size)
{
    pj_resp_value reply;
    link_command set = {3, {"SET", name, value}, {3, strlen(name), size}};
    pj_link_result result = exchange(link, 1, &set, &reply);
    if (result == PJ_LINK_OK)
        pj_resp_value_free(&reply);
    return result;
}

/* ---- the notes ---- */

pj_link_result pj_link_push_note(pj_remote_link *link, const char *list, const char *value,
                                 size_t size)
{
    char last[16];
    snprintf(last, sizeof last, "%d", PJ_LINK_NOTES_KEPT - 1);
    link_command commands[2] = {{3, {"LPUSH", list, value}, {5, strlen(list), size}},
                                {4, {"LTRIM", list, "0", last}, {5, strlen(list), 1, strlen(last)}}};
    pj_resp_value replies[2];
    pj_link_result result = exchange(link, 2, commands, replies);
    if (result == PJ_LINK_OK)
        free_replies(2, replies);
    return result;
}

pj_link_result pj_link_note_range(pj_remote_link *link, const char *list, int first, int count,
                                  char **values, size_t *sizes)
{
    char index[4][16];
    link_command commands[4];
    pj_resp_value replies[4];
    if (count < 1 || count > 4)
        return PJ_LINK_FAILED; /* a bug: the caller's */
    for (int i = 0; i < count; i++) {
        snprintf(index[i], sizeof index[i], "%d", first + i);
        commands[i] = (link_command){3, {"LINDEX", list, index[i]},
                                     {6, strlen(list), strlen(index[i])}};
        values[i] = NULL;
        sizes[i] = 0;
    }
    pj_link_result result = exchange(link, count, commands, replies);
    if (result != PJ_LINK_OK)
        return result;
    for (int i = 0; i < count; i++)
        if (take_value(&replies[i], &values[i], &sizes[i]) == PJ_LINK_FAILED)
            result = PJ_LINK_FAILED; /* not a list: someone else's key of that name */
    free_replies(count, replies);
    if (result != PJ_LINK_OK)
        for (int i = 0; i < count; i++) {
            free(values[i]);
            values[i] = NULL;
        }
    return result;
}

/* ---- the lease's commands ---- */

static int starts_with(const pj_resp_value *reply, const char *prefix)
{
    size_t length = strlen(prefix);
    return reply->type == PJ_RESP_BULK && reply->length >= length &&
           memcmp(reply->str, prefix, length) == 0;
}

pj_link_result pj_link_claim(pj_remote_link *link, const char *lease, const char *value,
                             int ttl_ms, const char *name, pj_link_claimed *out)
{
    char ttl[24];
    pj_format_int(ttl, ttl_ms);
    link_command commands[3] = {
        {6, {"SET", lease, value, "NX", "PX", ttl},
         {3, strlen(lease), strlen(value), 2, 2, strlen(ttl)}},
        command2("GET", lease), command2("GET", name)};
    pj_resp_value replies[3];
    memset(out, 0, sizeof *out);
    pj_link_result result = exchange(link, 3, commands, replies);
    if (result != PJ_LINK_OK)
        return result;
    /* OK, or (NX refused) the lease holds this value already: exchange retries on a fresh
     * connection when a reply is lost, and the first SET may have landed. */
    pj_resp_value *held = &replies[1];
    out->won = replies[0].type == PJ_RESP_STATUS ||
               (held->type == PJ_RESP_BULK && held->length == strlen(value) &&
                memcmp(held->str, value, held->length) == 0);
    out->given_up = !out->won && starts_with(held, PJ_LEASE_GIVEN_UP);
    if (held->type == PJ_RESP_BULK) {
        out->held = held->str;
        out->held_size = held->length;
        held->str = NULL;
    }
    result = take_value(&replies[2], &out->value, &out->size);
    free_replies(3, replies);
    return result;
}

/* The lease's commands act only while it holds a value of this holder's: a holder whose
 * renewals stopped reaching the server (a back-off, a restarted server) must not renew or
 * replace the lease another node took after its own expired; and a waiter removes a stale
 * lease only while it is still the value it saw. Redis has no compare-and-act command, so
 * each is a script; a server that refuses scripts (an ACL without EVAL) gets the plain
 * command, said once, and the lease is then unchecked. */
#define LEASE_HELD_SCRIPT                                                                      \
    "local v = redis.call('get', KEYS[1]) "                                                   \
    "if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then "                                    \
    "return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return -1"
#define LEASE_REMOVE_SCRIPT                                                                    \
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end "    \
    "return 0"

static int scripts_refused(pj_remote_link *link)
{
    pthread_mutex_lock(&link->lock);
    int refused = link->scripts_refused;
    pthread_mutex_unlock(&link->lock);
    return refused;
}

static void refuse_scripts(pj_remote_link *link, const char *error)
{
    pthread_mutex_lock(&link->lock);
    int first = !link->scripts_refused;
    link->scripts_refused = 1;
    pthread_mutex_unlock(&link->lock);
    if (first)
        pj_log(&link->logger, PTXJIT_LOG_WARNING,
               "remote cache %s refuses EVAL (%s): compile leases are renewed and given up "
               "without checking their holder, so a node whose lease expired may cut short "
               "another's (a duplicate compile, never a wrong kernel), and a stale lease is "
               "compiled around instead of removed; allow EVAL for ptxjit's user (ACL +eval) "
               "to close that",
               link->config->url, error ? error : "an error");
}

/* EVAL script over lease with args[0..count) (their lengths). PJ_LINK_OK with *reply, or
 * with *refused set when the server refuses scripts (now or before: not asked again). */
static pj_link_result eval(pj_remote_link *link, const char *script, const char *lease,
                           int count, const char *const *args, const size_t *lengths,
                           pj_resp_value *reply, int *refused)
{
    *refused = scripts_refused(link);
    if (*refused)
        return PJ_LINK_OK;
    link_command command = {4 + count, {"EVAL", script, "1", lease},
                            {4, strlen(script), 1, strlen(lease)}};
    for (int i = 0; i < count; i++) {
        command.argv[4 + i] = args[i];
        command.lengths[4 + i] = lengths[i];
    }
    pj_link_result result = exchange_any(link, 1, &command, reply, refused);
    if (result == PJ_LINK_OK && *refused) {
        refuse_scripts(link, reply->str);
        pj_resp_value_free(reply);
    }
    return result;
}

/* SET lease value PX ttl while a value of holder's ("<holder>/" begins it) is there (a
 * script); else the plain command, unchecked. *held: 0 when the lease held another's value
 * (or none). */
static pj_link_result held_command(pj_remote_link *link, const char *lease, const char *holder,
                                   const char *value, const char *ttl, link_command plain,
                                   int *held)
{
    char prefix[400];
    snprintf(prefix, sizeof prefix, "%s" PJ_LEASE_RENEWAL, holder);
    const char *args[] = {prefix, value, ttl};
    const size_t lengths[] = {strlen(prefix), strlen(value), strlen(ttl)};
    pj_resp_value reply;
    int refused;
    *held = 1;
    pj_link_result result = eval(link, LEASE_HELD_SCRIPT, lease, 3, args, lengths, &reply,
                                 &refused);
    if (result != PJ_LINK_OK)
        return result;
    if (!refused) {
        *held = !(reply.type == PJ_RESP_INTEGER && reply.integer < 0);
        pj_resp_value_free(&reply);
        return PJ_LINK_OK;
    }
    result = exchange(link, 1, &plain, &reply);
    if (result == PJ_LINK_OK)
        pj_resp_value_free(&reply);
    return result;
}

pj_link_result pj_link_renew_held(pj_remote_link *link, const char *lease, const char *holder,
                                  const char *next, int ttl_ms, int *held)
{
    char ttl[24];
    pj_format_int(ttl, ttl_ms);
    link_command plain = {6, {"SET", lease, next, "XX", "PX", ttl},
                          {3, strlen(lease), strlen(next), 2, 2, strlen(ttl)}};
    return held_command(link, lease, holder, next, ttl, plain, held);
}

pj_link_result pj_link_give_up_held(pj_remote_link *link, const char *lease, const char *holder,
                                    int ttl_ms, int *held)
{
    char ttl[24], marker[400];
    pj_format_int(ttl, ttl_ms);
    snprintf(marker, sizeof marker, "%s%s", PJ_LEASE_GIVEN_UP, holder);
    link_command plain = {5, {"SET", lease, marker, "PX", ttl},
                          {3, strlen(lease), strlen(marker), 2, strlen(ttl)}};
    return held_command(link, lease, holder, marker, ttl, plain, held);
}

pj_link_result pj_link_remove_stale(pj_remote_link *link, const char *lease, const char *value,
                                    size_t size, int *removed)
{
    pj_resp_value reply;
    int refused;
    const char *args[] = {value};
    *removed = -1;
    pj_link_result result = eval(link, LEASE_REMOVE_SCRIPT, lease, 1, args, &size, &reply,
                                 &refused);
    if (result == PJ_LINK_OK && !refused) {
        *removed = reply.type == PJ_RESP_INTEGER && reply.integer == 1;
        pj_resp_value_free(&reply);
    }
    return result;
}

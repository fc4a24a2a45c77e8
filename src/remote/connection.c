/* connection.c — hiredis connections with bounded waits. hiredis writes with write(2), which
 * raises SIGPIPE on a connection the server closed; the library must neither die of it nor
 * touch the caller's handlers, so each command runs with SIGPIPE blocked on its thread and a
 * SIGPIPE it raised is taken back before the mask is restored. */
#include <hiredis/hiredis.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "remote/connection.h"

#define IDLE_MAX 16

struct pj_remote_link {
    const pj_remote_config *config;
    pj_logger logger;
    pthread_mutex_t lock;         /* guards everything below */
    redisContext *idle[IDLE_MAX]; /* connections between requests */
    int idle_count;
    pid_t pid;                    /* the process the idle connections belong to */
    int failures;                 /* in a row */
    int64_t down_until_ms;        /* backing off until then (monotonic) */
    int backoffs;                 /* how many so far: only the first is a warning */
    int scripts_refused;          /* the server answered EVAL with an error (an ACL): the
                                     lease's commands go unchecked (pj_link_expire_held) */
};

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static struct timeval timeval_ms(int ms)
{
    return (struct timeval){ms / 1000, (ms % 1000) * 1000};
}

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
        redisFree(link->idle[i]);
    pthread_mutex_destroy(&link->lock);
    free(link);
}

/* ---- SIGPIPE kept away from the caller ---- */

typedef struct {
    sigset_t old;
    int was_pending;
} pipe_guard;

static void pipe_block(pipe_guard *g)
{
    sigset_t pipe, pending;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe, &g->old);
    sigpending(&pending);
    g->was_pending = sigismember(&pending, SIGPIPE);
}

static void pipe_restore(pipe_guard *g)
{
    sigset_t pipe, pending;
    sigemptyset(&pipe);
    sigaddset(&pipe, SIGPIPE);
    sigpending(&pending);
    if (!g->was_pending && sigismember(&pending, SIGPIPE)) /* ours: take it back */
        sigtimedwait(&pipe, NULL, &(struct timespec){0, 0});
    pthread_sigmask(SIG_SETMASK, &g->old, NULL);
}

/* ---- connections ---- */

/* One command of an exchange: up to 7 words. */
typedef struct {
    int argc;
    const char *argv[7];
    size_t lengths[7];
} link_command;

/* One command on c; NULL when the connection failed (c is then unusable). A Redis error
 * reply comes back as a reply. */
static redisReply *run(redisContext *c, int argc, const char **argv, const size_t *lengths)
{
    return redisCommandArgv(c, argc, argv, lengths);
}

/* The commands written together and their replies read after: one round trip for all. 0 with
 * every reply in replies; -1 when the connection failed (c is then unusable; no reply kept). */
static int run_all(redisContext *c, int count, link_command *commands,
                   redisReply **replies)
{
    if (count == 1)
        return (replies[0] = run(c, commands[0].argc, commands[0].argv, commands[0].lengths))
                   ? 0
                   : -1;
    for (int i = 0; i < count; i++)
        if (redisAppendCommandArgv(c, commands[i].argc, commands[i].argv,
                                   commands[i].lengths) != REDIS_OK)
            return -1;
    for (int i = 0; i < count; i++) {
        void *reply = NULL;
        if (redisGetReply(c, &reply) != REDIS_OK || !reply) {
            while (i-- > 0)
                freeReplyObject(replies[i]);
            return -1;
        }
        replies[i] = reply;
    }
    return 0;
}

/* A command that must answer OK (AUTH, SELECT); 0 when it did. */
static int expect_ok(redisContext *c, int argc, const char **argv, const char **why)
{
    size_t lengths[3];
    for (int i = 0; i < argc; i++)
        lengths[i] = strlen(argv[i]);
    redisReply *reply = run(c, argc, argv, lengths);
    int ok = reply && reply->type == REDIS_REPLY_STATUS;
    if (!ok)
        *why = reply ? "the server refused AUTH or SELECT (check the password file and the "
                       "database number)"
                     : "the connection failed during AUTH or SELECT";
    if (reply)
        freeReplyObject(reply);
    return ok ? 0 : -1;
}

static redisContext *connect_new(const pj_remote_config *config, const char **why)
{
    struct timeval connect = timeval_ms(config->connect_ms);
    redisContext *c = config->socket_path
                          ? redisConnectUnixWithTimeout(config->socket_path, connect)
                          : redisConnectWithTimeout(config->host, config->port, connect);
    if (!c || c->err) {
        *why = c ? "cannot connect" : "out of memory";
        if (c)
            redisFree(c);
        return NULL;
    }
    if (redisSetTimeout(c, timeval_ms(config->op_ms)) != REDIS_OK) {
        *why = "cannot set the operation timeout";
        redisFree(c);
        return NULL;
    }
    char db[16];
    snprintf(db, sizeof db, "%d", config->db);
    if ((config->password && expect_ok(c, 2, (const char *[]){"AUTH", config->password}, why)) ||
        (config->db && expect_ok(c, 2, (const char *[]){"SELECT", db}, why))) {
        redisFree(c);
        return NULL;
    }
    return c;
}

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
        redisFree(link->idle[i]);
    link->idle_count = 0;
    link->pid = pid;
}

/* An idle connection, or NULL (backing off: *down set). */
static redisContext *take_idle(pj_remote_link *link, int *down)
{
    pthread_mutex_lock(&link->lock);
    leave_parents_connections(link);
    *down = now_ms() < link->down_until_ms;
    redisContext *c = !*down && link->idle_count ? link->idle[--link->idle_count] : NULL;
    pthread_mutex_unlock(&link->lock);
    return c;
}

static void succeeded(pj_remote_link *link, redisContext *c)
{
    pthread_mutex_lock(&link->lock);
    link->failures = 0;
    if (link->idle_count < IDLE_MAX) {
        link->idle[link->idle_count++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&link->lock);
    if (c)
        redisFree(c);
}

/* Counts a failure; the third in a row starts a back-off, and a failure right after one
 * (the first try when it ends) starts the next. */
static void failed(pj_remote_link *link, const char *why)
{
    pthread_mutex_lock(&link->lock);
    int failures = ++link->failures;
    int start = failures >= PJ_REMOTE_FAILURES_BEFORE_BACKOFF && now_ms() >= link->down_until_ms;
    int first = start && link->backoffs++ == 0;
    if (start)
        link->down_until_ms = now_ms() + link->config->backoff_ms;
    pthread_mutex_unlock(&link->lock);
    if (start)
        pj_log(&link->logger, first ? PTXJIT_LOG_WARNING : PTXJIT_LOG_INFO,
               "remote cache %s: %s, %d times in a row; going on with the local cache and "
               "trying the server again in %d ms",
               link->config->url, why, failures, link->config->backoff_ms);
}

/* The commands on a kept connection, else a new one; a kept one that fails may be one the
 * server closed (it restarted): they are tried once more on a new connection. Error replies
 * come back in replies with *refused set, not counted: the caller decides. */
static pj_link_result exchange_any(pj_remote_link *link, int count, link_command *commands,
                                   redisReply **replies, int *refused)
{
    int down;
    const char *why = "the connection failed";
    redisContext *c = take_idle(link, &down);
    if (down)
        return PJ_LINK_DOWN;
    pipe_guard guard;
    pipe_block(&guard);
    int ok = c && run_all(c, count, commands, replies) == 0;
    if (!ok) {
        if (c)
            redisFree(c);
        c = connect_new(link->config, &why);
        ok = c && run_all(c, count, commands, replies) == 0;
    }
    pipe_restore(&guard);
    if (!ok) {
        if (c) {
            why = c->errstr[0] ? "an operation failed or timed out" : why;
            redisFree(c);
        }
        failed(link, why);
        return PJ_LINK_FAILED;
    }
    *refused = 0;
    for (int i = 0; i < count; i++)
        *refused |= replies[i]->type == REDIS_REPLY_ERROR;
    succeeded(link, c);
    return PJ_LINK_OK;
}

static void free_replies(int count, redisReply **replies)
{
    for (int i = 0; i < count; i++)
        freeReplyObject(replies[i]);
}

/* exchange_any, where an error reply is a failure, counted. */
static pj_link_result exchange(pj_remote_link *link, int count, link_command *commands,
                               redisReply **replies)
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

/* A GET's reply as a value: PJ_LINK_OK with *value (caller frees), PJ_LINK_NIL, or
 * PJ_LINK_FAILED for anything else (or out of memory). */
static pj_link_result take_value(const redisReply *reply, char **value, size_t *size)
{
    if (reply->type == REDIS_REPLY_NIL)
        return PJ_LINK_NIL;
    if (reply->type != REDIS_REPLY_STRING || !(*value = malloc(reply->len + 1)))
        return PJ_LINK_FAILED;
    memcpy(*value, reply->str, reply->len);
    (*value)[reply->len] = '\0';
    *size = reply->len;
    return PJ_LINK_OK;
}

pj_link_result pj_link_get(pj_remote_link *link, const char *name, char **value, size_t *size)
{
    redisReply *reply;
    link_command get = command2("GET", name);
    pj_link_result result = exchange(link, 1, &get, &reply);
    if (result != PJ_LINK_OK)
        return result;
    result = take_value(reply, value, size);
    freeReplyObject(reply);
    return result;
}

pj_link_result pj_link_set(pj_remote_link *link, const char *name, const char *value, size_t size)
{
    redisReply *reply;
    link_command set = {3, {"SET", name, value}, {3, strlen(name), size}};
    pj_link_result result = exchange(link, 1, &set, &reply);
    if (result == PJ_LINK_OK)
        freeReplyObject(reply);
    return result;
}

pj_link_result pj_link_claim(pj_remote_link *link, const char *lease, const char *holder,
                             int ttl_ms, const char *name, int *won, int *given_up,
                             char **value, size_t *size)
{
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    link_command commands[3] = {
        {6, {"SET", lease, holder, "NX", "PX", ttl},
         {3, strlen(lease), strlen(holder), 2, 2, strlen(ttl)}},
        command2("GET", lease), command2("GET", name)};
    redisReply *replies[3];
    *won = *given_up = 0;
    pj_link_result result = exchange(link, 3, commands, replies);
    if (result != PJ_LINK_OK)
        return result;
    /* OK, or (NX refused) the lease names this holder already: exchange retries on a fresh
     * connection when a reply timed out, and the first SET may have landed. */
    const redisReply *named = replies[1];
    *won = replies[0]->type == REDIS_REPLY_STATUS ||
           (named->type == REDIS_REPLY_STRING && named->len == strlen(holder) &&
            memcmp(named->str, holder, named->len) == 0);
    *given_up = !*won && named->type == REDIS_REPLY_STRING &&
                named->len >= strlen(PJ_LEASE_GIVEN_UP) &&
                memcmp(named->str, PJ_LEASE_GIVEN_UP, strlen(PJ_LEASE_GIVEN_UP)) == 0;
    result = take_value(replies[2], value, size);
    for (int i = 0; i < 3; i++)
        freeReplyObject(replies[i]);
    return result;
}

/* The lease's commands act only while it names this holder: a holder whose renewals stopped
 * reaching the server (a back-off, a restarted server) must not renew or replace the lease
 * another node took after its own expired. Redis has no compare-and-act command, so each is
 * a script; a server that refuses scripts (an ACL without EVAL) gets the plain command, said
 * once, and the lease is then unchecked. */
#define LEASE_RENEW_SCRIPT                                                                     \
    "if redis.call('get', KEYS[1]) == ARGV[1] then "                                          \
    "return redis.call('pexpire', KEYS[1], ARGV[2]) end return -1"
#define LEASE_GIVE_UP_SCRIPT                                                                   \
    "if redis.call('get', KEYS[1]) == ARGV[1] then "                                          \
    "return redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[3]) end return -1"

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
               "another's (a duplicate compile, never a wrong kernel); allow EVAL for "
               "ptxjit's user (ACL +eval) to close that",
               link->config->url, error);
}

/* script over the lease with holder and the args (count of them); else plain (the plain
 * command's words). *held: 0 when the lease named another holder (or none). */
static pj_link_result lease_command(pj_remote_link *link, const char *script, const char *lease,
                                    const char *holder, int count, const char *const *args,
                                    link_command plain, int *held)
{
    *held = 1;
    if (!scripts_refused(link)) {
        link_command eval = {5 + count, {"EVAL", script, "1", lease, holder},
                             {4, strlen(script), 1, strlen(lease), strlen(holder)}};
        for (int i = 0; i < count; i++) {
            eval.argv[5 + i] = args[i];
            eval.lengths[5 + i] = strlen(args[i]);
        }
        redisReply *reply;
        int refused;
        pj_link_result result = exchange_any(link, 1, &eval, &reply, &refused);
        if (result != PJ_LINK_OK)
            return result;
        if (!refused) {
            *held = !(reply->type == REDIS_REPLY_INTEGER && reply->integer < 0);
            freeReplyObject(reply);
            return PJ_LINK_OK;
        }
        refuse_scripts(link, reply->str);
        freeReplyObject(reply);
    }
    redisReply *reply;
    pj_link_result result = exchange(link, 1, &plain, &reply);
    if (result == PJ_LINK_OK)
        freeReplyObject(reply);
    return result;
}

pj_link_result pj_link_expire_held(pj_remote_link *link, const char *lease, const char *holder,
                                   int ttl_ms, int *held)
{
    char ttl[16];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    link_command plain = {3, {"PEXPIRE", lease, ttl}, {7, strlen(lease), strlen(ttl)}};
    const char *args[] = {ttl};
    return lease_command(link, LEASE_RENEW_SCRIPT, lease, holder, 1, args, plain, held);
}

pj_link_result pj_link_give_up_held(pj_remote_link *link, const char *lease, const char *holder,
                                    int ttl_ms, int *held)
{
    char ttl[16], marker[400];
    snprintf(ttl, sizeof ttl, "%d", ttl_ms);
    snprintf(marker, sizeof marker, "%s%s", PJ_LEASE_GIVEN_UP, holder);
    link_command plain = {5, {"SET", lease, marker, "PX", ttl},
                          {3, strlen(lease), strlen(marker), 2, strlen(ttl)}};
    const char *args[] = {marker, ttl};
    return lease_command(link, LEASE_GIVE_UP_SCRIPT, lease, holder, 2, args, plain, held);
}

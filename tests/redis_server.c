/* redis_server.c — a redis-server per test (redis_server.h). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"
#include "test_util.h"

static int have_server(void)
{
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

static redisContext *connect_to(test_redis *r)
{
    redisContext *c = redisConnectUnix(r->socket);
    if (c && c->err) {
        redisFree(c);
        return NULL;
    }
    return c;
}

static void launch(test_redis *r)
{
    char log[4300];
    snprintf(log, sizeof log, "%s/redis.log", r->dir);
    unlink(r->socket);
    r->pid = fork();
    ck_assert_int_ge(r->pid, 0);
    if (r->pid == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL); /* a test that fails leaves no server behind */
        int null = open("/dev/null", O_RDWR);
        dup2(null, 1);
        dup2(null, 2);
        if (r->extra)
            execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", r->socket,
                   "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--logfile",
                   log, r->extra, r->extra_value, (char *)NULL);
        else
            execlp("redis-server", "redis-server", "--port", "0", "--unixsocket", r->socket,
                   "--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--logfile",
                   log, (char *)NULL);
        _exit(127);
    }
    for (int tries = 0; tries < 500; tries++) { /* up to 5 s */
        redisContext *c = connect_to(r);
        if (c) {
            redisFree(c);
            return;
        }
        nanosleep(&(struct timespec){0, 10000000}, NULL);
    }
    ck_abort_msg("redis-server did not start on %s (see %s)", r->socket, log);
}

char *test_redis_secret_file(test_redis *r, const char *name, size_t size)
{
    char *path = malloc(4300);
    snprintf(path, 4300, "%s/%s", r->dir, name);
    unsigned char bytes[256];
    ck_assert_uint_le(size, sizeof bytes);
    for (size_t i = 0; i < size; i++)
        bytes[i] = (unsigned char)rand();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bytes, size), (ssize_t)size);
    close(fd);
    return path;
}

int test_redis_start(test_redis *r, const char *test)
{
    if (!have_server()) {
        printf("%s: skipped, redis-server is not installed (make deps installs it)\n", test);
        return 0;
    }
    r->dir = test_mkdtemp();
    snprintf(r->socket, sizeof r->socket, "%s/redis.sock", r->dir);
    snprintf(r->url, sizeof r->url, "unix://%s", r->socket);
    srand((unsigned)getpid());
    char *key = test_redis_secret_file(r, "fleet.key", 32);
    snprintf(r->key_file, sizeof r->key_file, "%s", key);
    free(key);
    launch(r);
    setenv("PTXJIT_REMOTE_CACHE", r->url, 1);
    setenv("PTXJIT_REMOTE_CACHE_KEY_FILE", r->key_file, 1);
    return 1;
}

void test_redis_kill(test_redis *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
    }
    r->pid = 0;
}

void test_redis_restart(test_redis *r)
{
    test_redis_kill(r);
    launch(r);
}

void test_redis_stop(test_redis *r)
{
    test_redis_kill(r);
    test_rmtree(r->dir);
    free(r->dir);
    r->dir = NULL;
}

void test_redis_set(test_redis *r, const char *name, const void *value, size_t size)
{
    redisContext *c = connect_to(r);
    ck_assert_ptr_nonnull(c);
    redisReply *reply = redisCommand(c, "SET %s %b", name, value, size);
    ck_assert_ptr_nonnull(reply);
    ck_assert_int_eq(reply->type, REDIS_REPLY_STATUS);
    freeReplyObject(reply);
    redisFree(c);
}

char *test_redis_get(test_redis *r, const char *name, size_t *size)
{
    redisContext *c = connect_to(r);
    ck_assert_ptr_nonnull(c);
    redisReply *reply = redisCommand(c, "GET %s", name);
    ck_assert_ptr_nonnull(reply);
    char *value = NULL;
    if (reply->type == REDIS_REPLY_STRING) {
        value = malloc(reply->len + 1);
        memcpy(value, reply->str, reply->len);
        value[reply->len] = '\0';
        *size = reply->len;
    }
    freeReplyObject(reply);
    redisFree(c);
    return value;
}

/* The ids of the server's clients (CLIENT LIST), and this call's own (CLIENT ID); the count,
 * or -1 when the server cannot be asked. */
static int client_ids(test_redis *r, long long *ids, int most, long long *own)
{
    redisContext *c = connect_to(r);
    if (!c)
        return -1;
    int count = -1;
    redisReply *id = redisCommand(c, "CLIENT ID");
    redisReply *list = id && id->type == REDIS_REPLY_INTEGER ? redisCommand(c, "CLIENT LIST")
                                                            : NULL;
    if (list && list->type == REDIS_REPLY_STRING) {
        *own = id->integer;
        count = 0;
        for (const char *at = list->str; (at = strstr(at, "id=")) && count < most; at += 3)
            if (at == list->str || at[-1] == '\n')
                ids[count++] = atoll(at + 3);
    }
    if (list)
        freeReplyObject(list);
    if (id)
        freeReplyObject(id);
    redisFree(c);
    return count;
}

long long test_redis_last_client_id(test_redis *r)
{
    long long ids[256], own = -1, last = -1;
    int count = client_ids(r, ids, 256, &own);
    for (int i = 0; i < count; i++)
        last = ids[i] > last ? ids[i] : last;
    return last;
}

int test_redis_has_client_after(test_redis *r, long long after)
{
    long long ids[256], own = -1;
    int count = client_ids(r, ids, 256, &own);
    for (int i = 0; i < count; i++)
        if (ids[i] > after && ids[i] != own)
            return 1;
    return 0;
}

long long test_redis_integer(test_redis *r, const char *command)
{
    redisContext *c = connect_to(r);
    ck_assert_ptr_nonnull(c);
    redisReply *reply = redisCommand(c, command);
    ck_assert_ptr_nonnull(reply);
    ck_assert_msg(reply->type == REDIS_REPLY_INTEGER || reply->type == REDIS_REPLY_STATUS,
                  "%s: %s", command, reply->type == REDIS_REPLY_ERROR ? reply->str : "?");
    long long value = reply->type == REDIS_REPLY_INTEGER ? reply->integer : 0;
    freeReplyObject(reply);
    redisFree(c);
    return value;
}

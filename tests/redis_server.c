/* redis_server.c — a redis-server per test (redis_server.h), and a plain blocking client for
 * the tests' own commands to it (ptxjit's RESP framing and reader, src/remote/resp.h). */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "redis_server.h"
#include "remote/resp.h"
#include "test_util.h"

static int have_server(void)
{
    return system("command -v redis-server >/dev/null 2>&1") == 0;
}

/* A connection to the server, or -1. */
static int connect_to(test_redis *r)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    if (strlen(r->socket) >= sizeof address.sun_path)
        return -1;
    memcpy(address.sun_path, r->socket, strlen(r->socket) + 1);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* Every byte iov names, written. */
static int send_all(int fd, struct iovec *iov, int count)
{
    while (count > 0) {
        struct msghdr message = {.msg_iov = iov, .msg_iovlen = (size_t)count};
        ssize_t sent = sendmsg(fd, &message, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0)
            return -1;
        for (; count > 0 && (size_t)sent >= iov->iov_len; iov++, count--)
            sent -= (ssize_t)iov->iov_len;
        if (count > 0) {
            iov->iov_base = (char *)iov->iov_base + sent;
            iov->iov_len -= (size_t)sent;
        }
    }
    return 0;
}

/* The commands framed in out, on one connection; their count replies. 0 when the server
 * cannot be asked. */
static int ask_framed(test_redis *r, pj_resp_out *out, int count, pj_resp_value *replies)
{
    int fd = connect_to(r);
    if (fd < 0)
        return 0;
    int ok = send_all(fd, out->iov, out->iov_count) == 0, got = 0;
    pj_resp_reader reader;
    pj_resp_reader_init(&reader, (size_t)1 << 30);
    char chunk[4096];
    size_t have = 0, at = 0;
    while (ok && got < count) {
        if (at == have) {
            ssize_t n = read(fd, chunk, sizeof chunk);
            if (n < 0 && errno == EINTR)
                continue;
            ok = n > 0;
            have = n > 0 ? (size_t)n : 0;
            at = 0;
            continue;
        }
        size_t taken;
        pj_resp_status status = pj_resp_feed(&reader, chunk + at, have - at, &taken);
        at += taken;
        if (status == PJ_RESP_DONE)
            pj_resp_take(&reader, &replies[got++]);
        else
            ok = status == PJ_RESP_MORE;
    }
    pj_resp_reader_free(&reader);
    while (!ok && got > 0)
        pj_resp_value_free(&replies[--got]);
    close(fd);
    return ok;
}

/* One command (argc words) and its reply; 0 when the server cannot be asked. */
static int ask(test_redis *r, int argc, const char *const *argv, const size_t *lengths,
               pj_resp_value *reply)
{
    pj_resp_out out;
    pj_resp_out_init(&out);
    return pj_resp_out_command(&out, argc, argv, lengths) == 0 && ask_framed(r, &out, 1, reply);
}

/* A command of words separated by spaces, asked; its reply. */
static int ask_words(test_redis *r, const char *command, pj_resp_value *reply)
{
    char copy[1024], *words[PJ_RESP_WORDS_MAX], *save = NULL;
    size_t lengths[PJ_RESP_WORDS_MAX];
    int argc = 0;
    snprintf(copy, sizeof copy, "%s", command);
    for (char *word = strtok_r(copy, " ", &save); word && argc < PJ_RESP_WORDS_MAX;
         word = strtok_r(NULL, " ", &save)) {
        lengths[argc] = strlen(word);
        words[argc++] = word;
    }
    return ask(r, argc, (const char *const *)words, lengths, reply);
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
        pj_resp_value pong;
        if (ask_words(r, "PING", &pong)) {
            pj_resp_value_free(&pong);
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
    const char *argv[] = {"SET", name, value};
    const size_t lengths[] = {3, strlen(name), size};
    pj_resp_value reply;
    ck_assert(ask(r, 3, argv, lengths, &reply));
    ck_assert_int_eq(reply.type, PJ_RESP_STATUS);
    pj_resp_value_free(&reply);
}

char *test_redis_get(test_redis *r, const char *name, size_t *size)
{
    const char *argv[] = {"GET", name};
    const size_t lengths[] = {3, strlen(name)};
    pj_resp_value reply;
    ck_assert(ask(r, 2, argv, lengths, &reply));
    char *value = NULL;
    if (reply.type == PJ_RESP_BULK) {
        value = reply.str; /* NUL-terminated by the reader */
        *size = reply.length;
        reply.str = NULL;
    }
    pj_resp_value_free(&reply);
    return value;
}

/* The ids of the server's clients (CLIENT LIST), and this call's own (CLIENT ID); the count,
 * or -1 when the server cannot be asked. */
static int client_ids(test_redis *r, long long *ids, int most, long long *own)
{
    const char *id[] = {"CLIENT", "ID"}, *list[] = {"CLIENT", "LIST"};
    const size_t id_lengths[] = {6, 2}, list_lengths[] = {6, 4};
    pj_resp_out out;
    pj_resp_value replies[2];
    pj_resp_out_init(&out);
    pj_resp_out_command(&out, 2, id, id_lengths);
    pj_resp_out_command(&out, 2, list, list_lengths);
    if (!ask_framed(r, &out, 2, replies))
        return -1;
    int count = -1;
    if (replies[0].type == PJ_RESP_INTEGER && replies[1].type == PJ_RESP_BULK) {
        *own = replies[0].integer;
        count = 0;
        const char *text = replies[1].str;
        for (const char *at = text; (at = strstr(at, "id=")) && count < most; at += 3)
            if (at == text || at[-1] == '\n')
                ids[count++] = atoll(at + 3);
    }
    pj_resp_value_free(&replies[0]);
    pj_resp_value_free(&replies[1]);
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
    pj_resp_value reply;
    ck_assert_msg(ask_words(r, command, &reply), "%s: the server did not answer", command);
    ck_assert_msg(reply.type == PJ_RESP_INTEGER || reply.type == PJ_RESP_STATUS, "%s: %s",
                  command, reply.type == PJ_RESP_ERROR ? reply.str : "?");
    long long value = reply.type == PJ_RESP_INTEGER ? reply.integer : 0;
    pj_resp_value_free(&reply);
    return value;
}

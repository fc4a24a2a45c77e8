/* hostile_server.c — a misbehaving Redis stand-in (hostile_server.h). Every wait polls in
 * short steps so that hostile_stop ends it promptly. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "hostile_server.h"

#define STEP_MS 20

static int stopping(hostile_server *server)
{
    return __atomic_load_n(&server->stop, __ATOMIC_RELAXED);
}

/* Waits for events on fd, in steps, until they come (1) or the server stops (0). */
static int wait_for(hostile_server *server, int fd, short events)
{
    while (!stopping(server)) {
        struct pollfd p = {fd, events, 0};
        if (poll(&p, 1, STEP_MS) > 0)
            return 1;
    }
    return 0;
}

/* Sends size bytes of data (a byte at a time, trickle_ms apart, when trickling); stops when
 * the client closes the connection. 0 when it did. */
static int send_bytes(hostile_server *server, int fd, const char *data, size_t size)
{
    size_t at = 0;
    while (at < size) {
        if (server->trickle_ms > 0)
            nanosleep(&(struct timespec){0, server->trickle_ms * 1000000L}, NULL);
        size_t step = server->trickle_ms > 0 ? 1 : size - at;
        ssize_t sent = send(fd, data + at, step, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (sent > 0) {
            at += (size_t)sent;
            __atomic_add_fetch(&server->sent, (size_t)sent, __ATOMIC_RELAXED);
        } else if (sent < 0 && errno != EAGAIN && errno != EINTR) {
            return 0;
        } else if (!wait_for(server, fd, POLLOUT)) {
            return 0;
        }
        if (stopping(server))
            return 0;
    }
    return 1;
}

/* One connection: a command read, the reply and the junk sent, then held until the client
 * closes it. */
static void serve(hostile_server *server, int fd)
{
    char buffer[4096];
    if (!wait_for(server, fd, POLLIN) || recv(fd, buffer, sizeof buffer, 0) <= 0)
        return;
    if (!send_bytes(server, fd, server->reply, strlen(server->reply)))
        return;
    char junk[65536];
    memset(junk, 'x', sizeof junk);
    for (size_t left = server->junk; left > 0;) {
        size_t step = left < sizeof junk ? left : sizeof junk;
        if (!send_bytes(server, fd, junk, step))
            return;
        left -= step;
    }
    while (wait_for(server, fd, POLLIN) && recv(fd, buffer, sizeof buffer, 0) > 0)
        ;
}

static void *server_main(void *arg)
{
    hostile_server *server = arg;
    while (wait_for(server, server->listener, POLLIN)) {
        int fd = accept(server->listener, NULL, NULL);
        if (fd >= 0) {
            serve(server, fd);
            close(fd);
        }
    }
    return NULL;
}

void hostile_start(hostile_server *server)
{
    server->listener = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(server->listener, 0);
    struct sockaddr_in address = {.sin_family = AF_INET, .sin_port = 0,
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t length = sizeof address;
    ck_assert_int_eq(bind(server->listener, (struct sockaddr *)&address, sizeof address), 0);
    ck_assert_int_eq(listen(server->listener, 8), 0);
    ck_assert_int_eq(getsockname(server->listener, (struct sockaddr *)&address, &length), 0);
    snprintf(server->url, sizeof server->url, "redis://127.0.0.1:%d", ntohs(address.sin_port));
    server->stop = 0;
    server->sent = 0;
    ck_assert_int_eq(pthread_create(&server->thread, NULL, server_main, server), 0);
}

void hostile_stop(hostile_server *server)
{
    __atomic_store_n(&server->stop, 1, __ATOMIC_RELAXED);
    pthread_join(server->thread, NULL);
    close(server->listener);
}

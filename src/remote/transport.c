/* transport.c — sockets to the Redis server with deadlines (transport.h). */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "remote/transport.h"

int64_t pj_transport_now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Waits until fd is ready for events or deadline_ms passes: 1 ready (or in error: the next
 * call on it says which), 0 the deadline passed, -1 poll failed. A signal only shortens one
 * poll: the wait goes on for what is left. */
static int wait_for(int fd, short events, int64_t deadline_ms)
{
    for (;;) {
        int64_t left = deadline_ms - pj_transport_now_ms();
        if (left <= 0)
            return 0;
        struct pollfd p = {fd, events, 0};
        int n = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
        if (n > 0)
            return 1;
        if (n < 0 && errno != EINTR)
            return -1;
    }
}

/* One address: a non-blocking socket, its connect waited for until the deadline. */
static int connect_to(int family, const struct sockaddr *address, socklen_t length,
                      int64_t deadline_ms, const char **why)
{
    int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        *why = "cannot create a socket";
        return -1;
    }
    int error = 0;
    socklen_t size = sizeof error;
    if (connect(fd, address, length) == 0) {
        error = 0;
    } else if (errno != EINPROGRESS) {
        error = errno; /* refused, no such socket; EAGAIN: a unix server's backlog is full */
    } else if (wait_for(fd, POLLOUT, deadline_ms) != 1) {
        *why = "connecting timed out (PTXJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS)";
        close(fd);
        return -1;
    } else if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &size) != 0) {
        error = errno;
    }
    if (error) {
        *why = "cannot connect";
        close(fd);
        return -1;
    }
    /* Commands are small and pipelined: each write is a whole round trip's worth, and
     * Nagle's wait for an acknowledgement would only add to it. */
    int one = 1;
    if (family != AF_UNIX)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

static int connect_unix(const char *path, int64_t deadline_ms, const char **why)
{
    struct sockaddr_un address = {.sun_family = AF_UNIX};
    size_t length = strlen(path);
    if (length >= sizeof address.sun_path) {
        *why = "the unix socket's path is too long (at most 107 bytes)";
        return -1;
    }
    memcpy(address.sun_path, path, length + 1);
    return connect_to(AF_UNIX, (const struct sockaddr *)&address, sizeof address, deadline_ms,
                      why);
}

/* Each address the host resolves to, in the resolver's order, until one connects. */
static int connect_tcp(const char *host, int port, int64_t deadline_ms, const char **why)
{
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
    struct addrinfo *found = NULL;
    if (getaddrinfo(host, service, &hints, &found) != 0 || !found) {
        *why = "cannot resolve the host name";
        return -1;
    }
    int fd = -1;
    for (struct addrinfo *a = found; a && fd < 0; a = a->ai_next)
        fd = connect_to(a->ai_family, a->ai_addr, a->ai_addrlen, deadline_ms, why);
    freeaddrinfo(found);
    return fd;
}

int pj_transport_connect(const pj_remote_config *config, int64_t deadline_ms,
                         const char **why)
{
    return config->socket_path ? connect_unix(config->socket_path, deadline_ms, why)
                               : connect_tcp(config->host, config->port, deadline_ms, why);
}

static const char timed_out[] = "the server did not answer in time (PTXJIT_REMOTE_CACHE_TIMEOUT_MS)";

int pj_transport_send(int fd, struct iovec *iov, int count, int64_t deadline_ms,
                      const char **why)
{
    while (count > 0) {
        if (pj_transport_now_ms() >= deadline_ms) {
            *why = timed_out;
            return -1;
        }
        struct msghdr message = {.msg_iov = iov, .msg_iovlen = (size_t)count};
        ssize_t sent = sendmsg(fd, &message, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            int ready = wait_for(fd, POLLOUT, deadline_ms);
            if (ready == 1)
                continue;
            *why = ready == 0 ? timed_out : "the connection failed";
            return -1;
        }
        if (sent < 0) {
            *why = "the connection failed (the server closed it?)";
            return -1;
        }
        for (; count > 0 && (size_t)sent >= iov->iov_len; iov++, count--)
            sent -= (ssize_t)iov->iov_len;
        if (count > 0) {
            iov->iov_base = (char *)iov->iov_base + sent;
            iov->iov_len -= (size_t)sent;
        }
    }
    return 0;
}

ssize_t pj_transport_receive(int fd, char *buffer, size_t size, int64_t deadline_ms,
                             const char **why)
{
    for (;;) {
        /* Checked before every read, not only before a wait: bytes that keep coming, just
         * fast enough never to be waited for, must not stretch the deadline either. */
        if (pj_transport_now_ms() >= deadline_ms) {
            *why = timed_out;
            return -1;
        }
        ssize_t got = recv(fd, buffer, size, 0);
        if (got > 0)
            return got;
        if (got == 0) {
            *why = "the server closed the connection";
            return -1;
        }
        if (errno == EINTR)
            continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) {
            *why = "the connection failed";
            return -1;
        }
        int ready = wait_for(fd, POLLIN, deadline_ms);
        if (ready != 1) {
            *why = ready == 0 ? timed_out : "the connection failed";
            return -1;
        }
    }
}

int pj_transport_quiet(int fd)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, 0) == 0;
}

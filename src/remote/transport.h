/* transport.h — the remote tier's byte stream to its server: a TCP or unix stream socket,
 * non-blocking, where every wait is a poll(2) against one absolute deadline (CLOCK_MONOTONIC,
 * in ms) and every call checks that deadline first: a server that is slow, silent, or sends a
 * byte at a time cannot hold a caller past it. Sends use MSG_NOSIGNAL: a connection the
 * server closed is an error returned, never a SIGPIPE raised in the caller's process. */
#ifndef PTXJIT_REMOTE_TRANSPORT_H
#define PTXJIT_REMOTE_TRANSPORT_H

#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "remote/config.h"

int64_t pj_transport_now_ms(void);
/* A connected descriptor (close(2) it), or -1 with *why (a constant string). The connect
 * ends by deadline_ms; a host name is resolved before it (getaddrinfo: the system resolver's
 * own timeouts, which this deadline does not cut short; an address resolves at once). */
int pj_transport_connect(const pj_remote_config *config, int64_t deadline_ms,
                         const char **why);
/* Sends every byte iov names by deadline_ms (iov is used up): 0, or -1 with *why. */
int pj_transport_send(int fd, struct iovec *iov, int count, int64_t deadline_ms,
                      const char **why);
/* Some bytes, at most size, by deadline_ms: how many, or -1 with *why (the server closed the
 * connection, it failed, or the deadline passed). */
ssize_t pj_transport_receive(int fd, char *buffer, size_t size, int64_t deadline_ms,
                             const char **why);
/* 1 when an idle connection has nothing to read: the server neither closed it nor sent
 * bytes nobody asked for (either makes it unusable). */
int pj_transport_quiet(int fd);

#endif

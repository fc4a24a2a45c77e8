/* hostile_server.h — a stand-in Redis server that misbehaves, for the remote tier's bounds
 * (tests/test_remote_hostile.c): a thread listening on 127.0.0.1 (a free port) that answers
 * whatever a connection sends first with a canned reply, then junk bytes as fast as the
 * client takes them, or trickles the reply a byte at a time. Connections are served one after
 * another, each until the client closes it. */
#ifndef PTXJIT_TEST_HOSTILE_SERVER_H
#define PTXJIT_TEST_HOSTILE_SERVER_H

#include <pthread.h>
#include <stddef.h>

typedef struct {
    const char *reply;  /* sent once the client sent something */
    size_t junk;        /* then this many bytes of 'x' */
    int trickle_ms;     /* > 0: the reply (and the junk) one byte every trickle_ms */
    char url[64];       /* redis://127.0.0.1:PORT, once started */
    size_t sent;        /* bytes the clients took, all connections together */
    int listener;
    int stop;           /* atomics */
    pthread_t thread;
} hostile_server;

void hostile_start(hostile_server *server);
/* Stops the thread (it ends the connection it serves) and closes the socket. */
void hostile_stop(hostile_server *server);

#endif

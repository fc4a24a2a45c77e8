/* redis_server.h — a private redis-server for one test: on a unix socket in a temporary
 * directory, no persistence; killed (SIGKILL) and restarted on demand. Tests skip, saying so,
 * where redis-server is not installed (a GPU machine): make deps installs it. */
#ifndef PTXJIT_TEST_REDIS_SERVER_H
#define PTXJIT_TEST_REDIS_SERVER_H

#include <stddef.h>
#include <sys/types.h>

typedef struct {
    char *dir;         /* the temporary directory: socket, log, key file */
    char socket[4200];
    char url[4300];    /* unix://<socket> */
    char key_file[4200];
    pid_t pid;
    const char *extra; /* one more "--name value" pair for the server (NULL: none) */
    const char *extra_value;
} test_redis;

/* Starts the server and writes a 0600 key file; sets PTXJIT_REMOTE_CACHE and
 * PTXJIT_REMOTE_CACHE_KEY_FILE for this process. 0 after printing why test is skipped. */
int test_redis_start(test_redis *r, const char *test);
void test_redis_kill(test_redis *r);    /* SIGKILL, waited for */
void test_redis_restart(test_redis *r); /* a new, empty server on the same socket */
void test_redis_stop(test_redis *r);    /* and the directory removed */
/* Raw access to the server, for poisoning and checks. */
void test_redis_set(test_redis *r, const char *name, const void *value, size_t size);
/* The value under name (caller frees), NULL if none. */
char *test_redis_get(test_redis *r, const char *name, size_t *size);
/* A command of no arguments but its words (no quoting) that answers an integer (its value)
 * or a status (0), e.g. "PTTL name", "ACL SETUSER default -eval". */
long long test_redis_integer(test_redis *r, const char *command);
/* Connections by their ids, which the server gives in increasing order: the highest id of a
 * connected client (this call's own connection included: every later one is higher), and
 * whether a client other than this call's own has an id above after. Usable in a forked
 * child (no check that ends the test); -1 / 0 when the server cannot be asked. */
long long test_redis_last_client_id(test_redis *r);
int test_redis_has_client_after(test_redis *r, long long after);
/* A 0600 file of size random bytes in r->dir named name; its path (caller frees). */
char *test_redis_secret_file(test_redis *r, const char *name, size_t size);

#endif

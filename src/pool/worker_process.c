/* worker_process.c — the pool's side of one compile worker: a `ptxjit compile-worker` process
 * (started, greeted, sent requests, stopped) that compiles requests into the context's disk
 * cache. NVRTC compiles in one process stop scaling near 4x however many threads ask
 * (docs/PERFORMANCE.md), while processes scale with the cores; a worker is a process, and the
 * kernel reaches the caller through the disk cache, whose entries are checked as any other
 * (checksum, key, trust), so a worker can make a request slower, never wrong.
 *
 * The conversation, one line each way per request, over a socket pair (a send to a worker
 * that died fails with EPIPE instead of raising SIGPIPE in the caller's process):
 *   worker, once:  "ptxjit-compile-worker 1 VERSION ARCH"
 *   caller:        "FAMILY<TAB>PARAMS"
 *   worker:        "ok KEY ORIGIN" (ORIGIN: compiled, disk or memory) or "error STATUS TEXT" */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pool/pool.h"

extern char **environ;

#define HELLO_TIMEOUT_MS 30000 /* a worker's start: exec, open, no compile */
#define LINE_MAX_BYTES 8192

struct pj_worker {
    pid_t pid;
    int fd;
    char buffer[LINE_MAX_BYTES];
    size_t used;
};

/* environ with name=value put in (replacing name's own); the strings stay the caller's. */
static char **environment_with(char *const *set, int set_count)
{
    int count = 0;
    while (environ && environ[count])
        count++;
    char **env = calloc((size_t)(count + set_count + 1), sizeof *env);
    if (!env)
        return NULL;
    int n = 0;
    for (int i = 0; i < count; i++) {
        int replaced = 0;
        for (int s = 0; s < set_count && !replaced; s++) {
            size_t length = strcspn(set[s], "=") + 1;
            replaced = strncmp(environ[i], set[s], length) == 0;
        }
        if (!replaced)
            env[n++] = environ[i];
    }
    for (int s = 0; s < set_count; s++)
        env[n++] = set[s];
    return env;
}

/* Reads one line (without its newline) into *line; 0 at end of file or on error. timeout_ms
 * < 0: no limit (a compile takes what it takes; the worker's death ends the wait). */
static int read_line(pj_worker *w, char **line, int timeout_ms)
{
    for (;;) {
        char *end = memchr(w->buffer, '\n', w->used);
        if (end) {
            *end = '\0';
            *line = w->buffer;
            return 1;
        }
        if (w->used == sizeof w->buffer - 1)
            return 0; /* no worker of ours writes such a line */
        struct pollfd p = {w->fd, POLLIN, 0};
        int ready = poll(&p, 1, timeout_ms);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            return 0;
        ssize_t got = read(w->fd, w->buffer + w->used, sizeof w->buffer - 1 - w->used);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        w->used += (size_t)got;
    }
}

/* Drops the line read_line returned. */
static void consume_line(pj_worker *w)
{
    size_t length = strlen(w->buffer) + 1;
    memmove(w->buffer, w->buffer + length, w->used - length);
    w->used -= length;
}

static int send_all(int fd, const char *data, size_t size)
{
    while (size) {
        ssize_t sent = send(fd, data, size, MSG_NOSIGNAL);
        if (sent < 0 && errno == EINTR)
            continue;
        if (sent <= 0)
            return 0;
        data += sent;
        size -= (size_t)sent;
    }
    return 1;
}

static pid_t spawn(const pj_worker_setup *setup, int child_fd)
{
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    pid_t pid = -1;
    if (posix_spawn_file_actions_init(&actions) != 0)
        return -1;
    if (posix_spawnattr_init(&attributes) != 0) {
        posix_spawn_file_actions_destroy(&actions);
        return -1;
    }
    /* The worker gets default signal handling and an empty mask, whatever the caller set. */
    sigset_t all, none;
    sigfillset(&all);
    sigemptyset(&none);
    posix_spawnattr_setsigdefault(&attributes, &all);
    posix_spawnattr_setsigmask(&attributes, &none);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawn_file_actions_adddup2(&actions, child_fd, 0);
    posix_spawn_file_actions_adddup2(&actions, child_fd, 1);
    posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0);
    char **env = environment_with(setup->env, setup->env_count);
    if (env && posix_spawn(&pid, setup->argv[0], &actions, &attributes, setup->argv, env) != 0)
        pid = -1;
    free(env);
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    return pid;
}

/* "ptxjit-compile-worker 1 VERSION ARCH": a worker of this library, for this target. */
static int hello_matches(pj_worker *w, const pj_worker_setup *setup)
{
    char *line;
    if (!read_line(w, &line, HELLO_TIMEOUT_MS))
        return 0;
    char expected[256];
    snprintf(expected, sizeof expected, "ptxjit-compile-worker 1 %s %s", PTXJIT_VERSION,
             setup->arch);
    int matches = strcmp(line, expected) == 0;
    consume_line(w);
    return matches;
}

ptxjit_status pj_worker_start(pj_worker **out, const pj_worker_setup *setup)
{
    *out = NULL;
    pj_worker *w = calloc(1, sizeof *w);
    int fds[2];
    if (!w)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
        free(w);
        return pj_error(PTXJIT_ERR_IO, "socketpair: %s", strerror(errno));
    }
    w->fd = fds[0];
    w->pid = spawn(setup, fds[1]);
    close(fds[1]);
    if (w->pid < 0) {
        pj_worker_stop(w);
        return pj_error(PTXJIT_ERR_IO, "could not start the compile worker %s",
                        setup->argv[0]);
    }
    if (!hello_matches(w, setup)) {
        pj_worker_stop(w);
        return pj_error(PTXJIT_ERR_IO,
                        "%s did not answer as a compile worker of ptxjit %s for %s (another "
                        "version, or not ptxjit); set $PTXJIT_COMPILE_WORKER to this "
                        "version's ptxjit program",
                        setup->argv[0], PTXJIT_VERSION, setup->arch);
    }
    *out = w;
    return PTXJIT_OK;
}

int pj_worker_compile(pj_worker *w, const char *family, const char *params, char key[33],
                      int *fresh)
{
    if (strpbrk(family, "\t\n") || strpbrk(params, "\t\n"))
        return PJ_WORKER_REFUSED;
    pj_strbuf request;
    pj_sb_init(&request);
    pj_sb_appendf(&request, "%s\t%s\n", family, params);
    int sent = !request.failed && send_all(w->fd, request.data, request.length);
    pj_sb_free(&request);
    char *line;
    if (!sent || !read_line(w, &line, -1))
        return PJ_WORKER_DEAD;
    int result = PJ_WORKER_REFUSED;
    if (strncmp(line, "ok ", 3) == 0 && strlen(line) >= 3 + 32 && line[35] == ' ') {
        memcpy(key, line + 3, 32);
        key[32] = '\0';
        *fresh = strcmp(line + 36, "compiled") == 0;
        result = PJ_WORKER_COMPILED;
    }
    consume_line(w);
    return result;
}

void pj_worker_stop(pj_worker *w)
{
    if (!w)
        return;
    close(w->fd); /* the worker reads end of file and exits */
    if (w->pid > 0) {
        /* A caller that ignores SIGCHLD has its children reaped for it: ECHILD, nothing to
         * wait for. */
        while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
            ;
    }
    free(w);
}

/* pool.h — compiling many requests at once: the compile pool (compile_pool.c), used by the
 * tuner and by warm-up, and its compile workers (worker_process.c), `ptxjit compile-worker`
 * processes that compile into the disk cache when one process's compiles stop scaling. */
#ifndef PTXJIT_POOL_POOL_H
#define PTXJIT_POOL_POOL_H

#include <limits.h>

#include "request/context.h"

/* ---- compile_pool.c ---- */
typedef struct {
    const char *family;
    const char *params;
} pj_compile_request;

typedef struct pj_compile_pool pj_compile_pool;

/* Starts compiling requests[0..count) in order on threads (0: the machine's cores; never more
 * than count). Each thread runs a compile worker process of its own when the context can use
 * them (pj_compile_pool_processes), else compiles in this process. The requests' strings stay
 * the caller's until pj_compile_pool_free. */
ptxjit_status pj_compile_pool_start(pj_compile_pool **out, ptxjit_context *context,
                                    const pj_compile_request *requests, int count, int threads);
/* Called on the pool's thread with each kernel it produced, before the waiting caller gets
 * it: work that would otherwise hold up the caller (the tuner loads the kernel's module on the
 * GPU there, while its own thread runs other candidates). */
typedef void pj_compile_ready_fn(void *user, ptxjit_kernel *kernel);
/* pj_compile_pool_start with ready called for each kernel (ready NULL: none). */
ptxjit_status pj_compile_pool_start_ready(pj_compile_pool **out, ptxjit_context *context,
                                          const pj_compile_request *requests, int count,
                                          int threads, pj_compile_ready_fn *ready, void *user);
/* Waits for requests[index]: its kernel (and how it was found: *origin, may be NULL), or the
 * compile's status with *message (the pool's, valid until the free). */
ptxjit_status pj_compile_pool_wait(pj_compile_pool *pool, int index, ptxjit_kernel **kernel,
                                   ptxjit_origin *origin, const char **message);
/* Waits for the first request to finish that no wait has taken yet (the lowest index among
 * those finished): *index is which, the rest as pj_compile_pool_wait. A caller that can use
 * the requests in any order (the tuner's first round) never waits for one while another is
 * ready. Every request taken: *index -1 and PTXJIT_ERR_INVALID_ARGUMENT. */
ptxjit_status pj_compile_pool_wait_next(pj_compile_pool *pool, int *index,
                                        ptxjit_kernel **kernel, ptxjit_origin *origin,
                                        const char **message);
/* Stops handing out compiles (those running finish), joins the threads, stops the workers. */
void pj_compile_pool_free(pj_compile_pool *pool);
/* How many compile worker processes answered (0: every compile in this process). */
int pj_compile_pool_processes(pj_compile_pool *pool);

/* ---- worker_process.c ---- */
typedef struct pj_worker pj_worker;

/* How to start a worker: the command line and the variables set in its environment. */
#define PJ_WORKER_ENV_MAX 8
typedef struct {
    char *argv[16];
    char *env[PJ_WORKER_ENV_MAX];
    int env_count;
    const char *arch;
} pj_worker_setup;

/* ---- worker_program.c ---- */
/* The program to run as a worker into program: option (ptxjit_options.compile_worker), else
 * $PTXJIT_COMPILE_WORKER, else ptxjit beside the library, beside the calling program, then on
 * $PATH (worker_program.c says why this order). 0 (and *why) when there is none or workers
 * are turned off ("" or "none"). */
int pj_worker_program(char program[PATH_MAX], const char *option, const char **why);

/* ---- worker_process.c ---- */
/* Starts a worker and waits for its greeting (version and target must be ours). */
ptxjit_status pj_worker_start(pj_worker **out, const pj_worker_setup *setup);

enum { PJ_WORKER_COMPILED, PJ_WORKER_REFUSED, PJ_WORKER_DEAD };
/* Asks the worker to compile family + params into the disk cache: PJ_WORKER_COMPILED with the
 * key it stored under (*fresh: 1 when it compiled it, 0 when it was cached already);
 * PJ_WORKER_REFUSED when it could not (the caller compiles the request
 * itself, for its real error); PJ_WORKER_DEAD when the worker is gone. */
int pj_worker_compile(pj_worker *worker, const char *family, const char *params, char key[33],
                      int *fresh);
/* Ends the worker (it exits at the end of its input) and waits for it. */
void pj_worker_stop(pj_worker *worker);

#endif

/* compile_failure.c — the whole log and input of the calling thread's last failed compile.
 * ptxjit_last_error() holds a summary (a 16 KiB string cuts long logs); this keeps what a user
 * needs to fix a template, per thread like the last error, freed when the thread exits. */
#include <pthread.h>
#include <stdlib.h>

#include "internal.h"

typedef struct {
    char *log, *source;
} failure;

static pthread_key_t failure_key;
static pthread_once_t failure_once = PTHREAD_ONCE_INIT;
static int failure_key_made;

static void failure_free(void *data)
{
    failure *f = data;
    if (f) {
        free(f->log);
        free(f->source);
        free(f);
    }
}

static void make_key(void)
{
    failure_key_made = pthread_key_create(&failure_key, failure_free) == 0;
}

static failure *current(void)
{
    pthread_once(&failure_once, make_key);
    return failure_key_made ? pthread_getspecific(failure_key) : NULL;
}

void pj_compile_failure(const char *log, const char *source)
{
    failure *old = current(), *f = calloc(1, sizeof *f);
    if (!failure_key_made) {
        free(f);
        return;
    }
    if (f) {
        f->log = pj_strdup(log ? log : "");
        f->source = pj_strdup(source ? source : "");
    }
    /* Out of memory: nothing kept rather than a stale failure passed off as this one. */
    pthread_setspecific(failure_key, f);
    failure_free(old);
}

const char *ptxjit_last_compile_log(void)
{
    failure *f = current();
    return f && f->log ? f->log : "";
}

const char *ptxjit_last_compile_source(void)
{
    failure *f = current();
    return f && f->source ? f->source : "";
}

/* fileio_faults.c — the test build's pj_fileio_seam (linked with -Wl,--wrap=pj_fileio_seam):
 * the faults, the write limit and the hook that fileio_faults.h arms. The mutex is here, not
 * in the library: production cache writes take no lock for the tests' sake. */
#include <pthread.h>

#include "fileio_faults.h"

int __wrap_pj_fileio_seam(fileio_op op, size_t *write_limit);

static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int armed, after, error_number;
} faults[FILEIO_OP_COUNT];
static size_t max_write;
static fileio_hook *before_hook;

void pj_fileio_inject_fault(fileio_op op, int after_calls, int error_number)
{
    pthread_mutex_lock(&fault_lock);
    faults[op].armed = error_number != 0;
    faults[op].after = after_calls;
    faults[op].error_number = error_number;
    pthread_mutex_unlock(&fault_lock);
}

void pj_fileio_limit_writes(size_t max_bytes)
{
    pthread_mutex_lock(&fault_lock);
    max_write = max_bytes;
    pthread_mutex_unlock(&fault_lock);
}

void pj_fileio_set_hook(fileio_hook *hook)
{
    pthread_mutex_lock(&fault_lock);
    before_hook = hook;
    pthread_mutex_unlock(&fault_lock);
}

void pj_fileio_clear_faults(void)
{
    for (int op = 0; op < FILEIO_OP_COUNT; op++)
        pj_fileio_inject_fault((fileio_op)op, 0, 0);
    pj_fileio_limit_writes(0);
    pj_fileio_set_hook(NULL);
}

/* Runs the hook (outside the lock: it may kill the process, or call back into the cache),
 * caps a write, and says whether this call of op is the one that must fail. */
int __wrap_pj_fileio_seam(fileio_op op, size_t *write_limit)
{
    pthread_mutex_lock(&fault_lock);
    fileio_hook *hook = before_hook;
    int error = 0;
    if (faults[op].armed && faults[op].after-- <= 0) {
        faults[op].armed = 0;
        error = faults[op].error_number;
    }
    if (write_limit && max_write && *write_limit > max_write)
        *write_limit = max_write;
    pthread_mutex_unlock(&fault_lock);
    if (hook)
        hook(op);
    return error;
}

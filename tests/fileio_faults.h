/* fileio_faults.h — faults for the cache's file seam (src/cache/fileio.h), in the test build
 * only: the test runner and the stress program are linked with -Wl,--wrap=pj_fileio_seam, and
 * fileio_faults.c's wrapper decides there. Process-wide, guarded by a mutex. */
#ifndef PTXJIT_TESTS_FILEIO_FAULTS_H
#define PTXJIT_TESTS_FILEIO_FAULTS_H

#include <stddef.h>

#include "cache/fileio.h"

/* After `after_calls` more successful calls of op, the next one fails with error_number,
 * once (for FILEIO_WRITE a call is one write(2), so short writes count each piece).
 * error_number 0 disarms op. */
void pj_fileio_inject_fault(fileio_op op, int after_calls, int error_number);
/* Makes every write(2) take at most max_bytes (0: no limit), to exercise short writes. */
void pj_fileio_limit_writes(size_t max_bytes);
/* Called before every call of every op (NULL: none): crash tests kill the process there. */
typedef void fileio_hook(fileio_op op);
void pj_fileio_set_hook(fileio_hook *hook);
/* Disarms every fault, the write limit and the hook. */
void pj_fileio_clear_faults(void);

#endif

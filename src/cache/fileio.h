/* fileio.h — the one seam every cache write goes through, so tests can make it fail the way
 * disks do (full, short writes, failing fsync, failing rename) without a faulty disk. */
#ifndef PTXJIT_CACHE_FILEIO_H
#define PTXJIT_CACHE_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

typedef enum { FILEIO_WRITE, FILEIO_FSYNC, FILEIO_RENAME, FILEIO_OP_COUNT } fileio_op;

/* Writes all n bytes, retrying short writes and EINTR; n, or -1 with errno on failure. */
ssize_t fileio_write_all(int fd, const void *data, size_t n);
int fileio_fsync(int fd);
int fileio_rename(const char *from, const char *to);

/* ---- test hooks; process-wide, guarded by a mutex ---- */
/* After `after_calls` more successful calls of op, the next one fails with error_number,
 * once (for FILEIO_WRITE a call is one write(2), so short writes count each piece).
 * error_number 0 disarms op. */
void fileio_inject_fault(fileio_op op, int after_calls, int error_number);
/* Makes every write(2) take at most max_bytes (0: no limit), to exercise short writes. */
void fileio_limit_writes(size_t max_bytes);
/* Disarms every fault and the write limit. */
void fileio_clear_faults(void);

#endif

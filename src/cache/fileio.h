/* fileio.h — the one seam every cache write goes through, so tests can make it fail the way
 * disks do (full, failing fsync, failing rename) without a real faulty disk. */
#ifndef PTXJIT_CACHE_FILEIO_H
#define PTXJIT_CACHE_FILEIO_H

#include <stddef.h>
#include <sys/types.h>

typedef enum { FILEIO_WRITE, FILEIO_FSYNC, FILEIO_RENAME, FILEIO_OP_COUNT } fileio_op;

/* Writes all n bytes (retrying short writes and EINTR); -1 with errno on failure. */
ssize_t fileio_write_all(int fd, const void *data, size_t n);
int fileio_fsync(int fd);
int fileio_rename(const char *from, const char *to);

/* Test hook: the call of op after `after` more successful calls fails with error_number,
 * once. error_number 0 clears the fault. Process-wide; not for concurrent tests. */
void fileio_inject_fault(fileio_op op, int after, int error_number);

#endif

/* fileio.h — the one seam every cache write (and the writability check) goes through, so
 * tests can make it fail the way disks and file systems do (full, read-only, short writes,
 * failing fsync or rename, a process killed mid-write) without a faulty disk. The faults
 * themselves live in the test build (tests/fileio_faults.h), not in the library. */
#ifndef PTXJIT_CACHE_FILEIO_H
#define PTXJIT_CACHE_FILEIO_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "cache/fileio_seam.h"

/* Writes all n bytes, retrying short writes and EINTR; n, or -1 with errno on failure. */
ssize_t pj_fileio_write_all(int fd, const void *data, size_t n);
int pj_fileio_fsync(int fd);
int pj_fileio_rename(const char *from, const char *to);
/* A new file, opened for writing (O_CREAT | O_EXCL | O_CLOEXEC). */
int pj_fileio_create(const char *path, mode_t mode);
int pj_fileio_mkdir(const char *path, mode_t mode);
/* Opens path for reading and writing, creating it with exactly mode (the umask does not
 * apply: a shared cache's counters must stay group-writable). A symbolic link there fails
 * (ELOOP), anything but a regular file too (EINVAL). Not fault-injected. */
int pj_fileio_open_shared_file(const char *path, mode_t mode);
int pj_fileio_access(const char *path, int mode);
/* Whether path (relative to dir_fd, or AT_FDCWD; a link is not followed) is still the file
 * open at fd, whose stat goes to *held: a file may be renamed over between an open and an
 * unlink by name, and the one renamed in must stay. */
int pj_fileio_same_file(int fd, int dir_fd, const char *path, struct stat *held);
/* Releases fd's flock, if any, then closes it (see fileio.c for why not close alone). */
void pj_fileio_unlock_and_close(int fd);
/* flock(fd, operation) (LOCK_SH or LOCK_EX) waited for at most wait_ms, polling every 0.1 ms:
 * flock has no timeout, and an alarm would touch the caller's signals. 0 when taken; -1 with
 * errno EWOULDBLOCK when the wait ran out (a holder stopped or stuck), another errno when
 * flock failed otherwise (ENOLCK: no lock support). */
int pj_fileio_flock_within(int fd, int operation, int wait_ms);

#endif

/* fileio.h — the one seam every cache write (and the writability check) goes through, so
 * tests can make it fail the way disks and file systems do (full, read-only, short writes,
 * failing fsync or rename, a process killed mid-write) without a faulty disk. */
#ifndef PTXJIT_CACHE_FILEIO_H
#define PTXJIT_CACHE_FILEIO_H

#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

typedef enum {
    FILEIO_WRITE,
    FILEIO_FSYNC,
    FILEIO_RENAME,
    FILEIO_CREATE,
    FILEIO_MKDIR,
    FILEIO_ACCESS,
    FILEIO_OP_COUNT
} fileio_op;

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

/* ---- test hooks; process-wide, guarded by a mutex ---- */
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

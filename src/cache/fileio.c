/* fileio.c — cache writes through one seam (pj_fileio_seam, which the tests wrap to inject
 * faults). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h> /* rename */
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cache/fileio.h"

/* Asks the seam about a call of op; when it says fail, sets errno and says so. */
static int refused(fileio_op op, size_t *write_limit)
{
    int error = pj_fileio_seam(op, write_limit);
    if (error)
        errno = error;
    return error != 0;
}

ssize_t pj_fileio_write_all(int fd, const void *data, size_t n)
{
    const char *at = data;
    size_t left = n;
    while (left > 0) {
        size_t piece = left;
        if (refused(FILEIO_WRITE, &piece))
            return -1;
        ssize_t written = write(fd, at, piece);
        if (written < 0 && errno == EINTR)
            continue;
        if (written == 0) /* no progress and no reason: do not spin */
            errno = EIO;
        if (written <= 0)
            return -1;
        at += written;
        left -= (size_t)written;
    }
    return (ssize_t)n;
}

int pj_fileio_fsync(int fd)
{
    return refused(FILEIO_FSYNC, NULL) ? -1 : fsync(fd);
}

int pj_fileio_rename(const char *from, const char *to)
{
    return refused(FILEIO_RENAME, NULL) ? -1 : rename(from, to);
}

int pj_fileio_create(const char *path, mode_t mode)
{
    return refused(FILEIO_CREATE, NULL) ? -1
                                        : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
}

int pj_fileio_mkdir(const char *path, mode_t mode)
{
    return refused(FILEIO_MKDIR, NULL) ? -1 : mkdir(path, mode);
}

int pj_fileio_access(const char *path, int mode)
{
    /* AT_EACCESS: the effective user, whom the trust check and the files belong to. */
    return refused(FILEIO_ACCESS, NULL) ? -1 : faccessat(AT_FDCWD, path, mode, AT_EACCESS);
}

/* Keeps fd if it is a regular file, else closes it and fails with EINVAL. */
static int regular_or_close(int fd)
{
    struct stat st;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        return fd;
    close(fd);
    errno = EINVAL;
    return -1;
}

int pj_fileio_open_shared_file(const char *path, mode_t mode)
{
    /* O_NOFOLLOW and a regular file only: these files are rewritten in place, and a link
     * planted there must not make us rewrite what it points to; O_NONBLOCK: a FIFO must not
     * hang the open. */
    const int flags = O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
    for (int attempt = 0; attempt < 8; attempt++) {
        int fd = open(path, flags);
        if (fd >= 0)
            return regular_or_close(fd);
        if (errno != ENOENT)
            return -1;
        fd = open(path, flags | O_CREAT | O_EXCL, mode);
        if (fd >= 0 && fchmod(fd, mode) == 0)
            return fd;
        if (fd >= 0) {
            int error = errno;
            close(fd);
            errno = error;
            return -1;
        }
        if (errno != EEXIST) /* EEXIST: another process made it first; open theirs */
            return -1;
    }
    return -1;
}

int pj_fileio_same_file(int fd, int dir_fd, const char *path, struct stat *held)
{
    struct stat now;
    return fstat(fd, held) == 0 && fstatat(dir_fd, path, &now, AT_SYMLINK_NOFOLLOW) == 0 &&
           held->st_dev == now.st_dev && held->st_ino == now.st_ino;
}

void pj_fileio_unlock_and_close(int fd)
{
    /* A flock belongs to the open file, which a fork() without exec shares with the child:
     * closing our descriptor alone would leave the lock held for as long as the child
     * lives, and every other process waiting on it. LOCK_UN releases it for both. */
    (void)flock(fd, LOCK_UN);
    close(fd);
}

int pj_fileio_flock_within(int fd, int operation, int wait_ms)
{
    for (long tries = 0;; tries++) {
        if (flock(fd, operation | LOCK_NB) == 0)
            return 0;
        if (errno != EWOULDBLOCK && errno != EINTR)
            return -1;
        if (tries >= 10L * wait_ms) {
            errno = EWOULDBLOCK;
            return -1;
        }
        nanosleep(&(struct timespec){0, 100000}, NULL); /* 0.1 ms */
    }
}

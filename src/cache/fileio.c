/* fileio.c — cache writes through one seam, with injectable faults for the tests. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h> /* rename */
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/fileio.h"

static pthread_mutex_t fault_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
    int armed, after, error_number;
} faults[FILEIO_OP_COUNT];
static size_t write_limit;
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
    write_limit = max_bytes;
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

/* Runs the hook, then says whether this call of op is the one that must fail; if so, sets
 * errno. */
static int injected(fileio_op op)
{
    pthread_mutex_lock(&fault_lock);
    fileio_hook *hook = before_hook;
    int fail = faults[op].armed && faults[op].after-- <= 0;
    if (fail) {
        faults[op].armed = 0;
        errno = faults[op].error_number;
    }
    pthread_mutex_unlock(&fault_lock);
    if (hook) {
        int error = errno;
        hook(op);
        errno = error;
    }
    return fail;
}

static size_t limited(size_t n)
{
    pthread_mutex_lock(&fault_lock);
    if (write_limit && n > write_limit)
        n = write_limit;
    pthread_mutex_unlock(&fault_lock);
    return n;
}

ssize_t pj_fileio_write_all(int fd, const void *data, size_t n)
{
    const char *at = data;
    size_t left = n;
    while (left > 0) {
        if (injected(FILEIO_WRITE))
            return -1;
        ssize_t written = write(fd, at, limited(left));
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
    return injected(FILEIO_FSYNC) ? -1 : fsync(fd);
}

int pj_fileio_rename(const char *from, const char *to)
{
    return injected(FILEIO_RENAME) ? -1 : rename(from, to);
}

int pj_fileio_create(const char *path, mode_t mode)
{
    return injected(FILEIO_CREATE) ? -1 : open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
}

int pj_fileio_mkdir(const char *path, mode_t mode)
{
    return injected(FILEIO_MKDIR) ? -1 : mkdir(path, mode);
}

int pj_fileio_access(const char *path, int mode)
{
    /* AT_EACCESS: the effective user, whom the trust check and the files belong to. */
    return injected(FILEIO_ACCESS) ? -1 : faccessat(AT_FDCWD, path, mode, AT_EACCESS);
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

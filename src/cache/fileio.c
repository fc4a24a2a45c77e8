/* fileio.c — cache writes through one seam, with injectable faults for the tests. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>

#include "cache/fileio.h"

static struct {
    int armed, after, error_number;
} faults[FILEIO_OP_COUNT];

void fileio_inject_fault(fileio_op op, int after, int error_number)
{
    faults[op].armed = error_number != 0;
    faults[op].after = after;
    faults[op].error_number = error_number;
}

/* Whether this call of op is the one that must fail (and sets errno). */
static int injected(fileio_op op)
{
    if (!faults[op].armed)
        return 0;
    if (faults[op].after-- > 0)
        return 0;
    faults[op].armed = 0;
    errno = faults[op].error_number;
    return 1;
}

ssize_t fileio_write_all(int fd, const void *data, size_t n)
{
    const char *at = data;
    size_t left = n;
    while (left > 0) {
        if (injected(FILEIO_WRITE))
            return -1;
        ssize_t written = write(fd, at, left);
        if (written < 0 && errno == EINTR)
            continue;
        if (written <= 0)
            return -1;
        at += written;
        left -= (size_t)written;
    }
    return (ssize_t)n;
}

int fileio_fsync(int fd)
{
    return injected(FILEIO_FSYNC) ? -1 : fsync(fd);
}

int fileio_rename(const char *from, const char *to)
{
    return injected(FILEIO_RENAME) ? -1 : rename(from, to);
}

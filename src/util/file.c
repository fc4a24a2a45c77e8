/* file.c — a whole file read into memory, for templates, headers and cache tools. The files
 * it is given come from directories that others may fill (template and include paths), so
 * nothing about them is assumed: only a regular file is read (a FIFO would block the open and
 * the read for ever, a device such as /dev/zero never ends), and never more than the caller's
 * cap (a file that grows while it is read included). */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* What a file that is not a regular file is, for a message that names it. */
static const char *file_kind(mode_t mode)
{
    return S_ISDIR(mode)    ? "a directory"
           : S_ISFIFO(mode) ? "a FIFO"
           : S_ISCHR(mode)  ? "a character device"
           : S_ISBLK(mode)  ? "a block device"
           : S_ISSOCK(mode) ? "a socket"
                            : "not a regular file";
}

static ptxjit_status too_large(size_t *size, const char *path, uint64_t seen, size_t max_bytes)
{
    if (size)
        *size = seen > SIZE_MAX ? SIZE_MAX : (size_t)seen;
    return pj_error(PTXJIT_ERR_IO, "%s: %llu bytes, more than the %zu bytes allowed", path,
                    (unsigned long long)seen, max_bytes);
}

/* Reads fd to its end into sb, at most max_bytes + 1 bytes: one byte past the cap tells a
 * file that grew since its fstat. */
static ptxjit_status read_bounded(pj_strbuf *sb, size_t *size, int fd, const char *path,
                                  size_t max_bytes)
{
    char chunk[65536];
    for (;;) {
        size_t room = max_bytes - sb->length; /* sb never holds more than max_bytes */
        size_t want = room < sizeof chunk ? room + 1 : sizeof chunk;
        ssize_t n = read(fd, chunk, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return pj_error(PTXJIT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
        if (n == 0)
            return PTXJIT_OK;
        if ((size_t)n > room)
            return too_large(size, path, (uint64_t)sb->length + (uint64_t)n, max_bytes);
        pj_sb_append_n(sb, chunk, (size_t)n);
        if (sb->failed)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
}

ptxjit_status pj_read_file_at_most(char **out, size_t *size, const char *path, size_t max_bytes)
{
    *out = NULL;
    /* O_NONBLOCK: the open of a FIFO returns at once (and the fstat below refuses it);
     * O_NOCTTY: a terminal named here never becomes the process's controlling one. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return pj_error(PTXJIT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    struct stat st; /* of the open file: what is read is what was checked */
    ptxjit_status status = PTXJIT_OK;
    if (fstat(fd, &st) != 0)
        status = pj_error(PTXJIT_ERR_IO, "cannot read %s: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        status = pj_error(PTXJIT_ERR_IO, "%s: %s, not a regular file", path,
                          file_kind(st.st_mode));
    else if ((uint64_t)st.st_size > max_bytes)
        status = too_large(size, path, (uint64_t)st.st_size, max_bytes);
    pj_strbuf sb;
    pj_sb_init(&sb);
    if (status == PTXJIT_OK)
        status = read_bounded(&sb, size, fd, path, max_bytes);
    close(fd);
    size_t length = sb.length;
    char *data = status == PTXJIT_OK ? pj_sb_take(&sb) : NULL;
    pj_sb_free(&sb);
    if (status == PTXJIT_OK && !data)
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    if (status != PTXJIT_OK)
        return status;
    *out = data;
    if (size)
        *size = length;
    return PTXJIT_OK;
}

ptxjit_status pj_read_file(char **out, size_t *size, const char *path)
{
    return pj_read_file_at_most(out, size, path, SIZE_MAX - 1);
}

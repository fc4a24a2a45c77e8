/* fileio_seam.h — the seam every cache write of fileio.c asks first: the test build wraps it
 * at link time to make writes fail as disks do. */
#ifndef PTXJIT_CACHE_FILEIO_SEAM_H
#define PTXJIT_CACHE_FILEIO_SEAM_H

#include <stddef.h>

typedef enum {
    FILEIO_WRITE,
    FILEIO_FSYNC,
    FILEIO_RENAME,
    FILEIO_CREATE,
    FILEIO_MKDIR,
    FILEIO_ACCESS,
    FILEIO_OP_COUNT
} fileio_op;

/* Asked before every call of op: 0 to proceed, else the errno the call fails with (without
 * being made). For FILEIO_WRITE, *write_limit is what the next write(2) may take and may be
 * lowered, to make short writes; NULL for the other ops. The library's does nothing; the test
 * build replaces it with -Wl,--wrap=pj_fileio_seam (tests/fileio_faults.c), which is why it
 * is defined in a file of its own, fileio_seam.c: --wrap redirects only calls that cross
 * objects. */
int pj_fileio_seam(fileio_op op, size_t *write_limit);

#endif

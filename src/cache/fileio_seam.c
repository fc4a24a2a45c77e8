/* fileio_seam.c — the library's pj_fileio_seam: every call proceeds, whole. A file of its own
 * so that the test build can wrap it (see fileio_seam.h); nothing here may be inlined into
 * fileio.c, and nothing here costs a production write more than a call. */
#include "cache/fileio_seam.h"

int pj_fileio_seam(fileio_op op, size_t *write_limit)
{
    (void)op;
    (void)write_limit;
    return 0;
}

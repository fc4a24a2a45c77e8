/* file.c — a whole file read into memory, for templates, headers and cache tools. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
ptxjit_status pj_read_file(char **out, size_t *size, const char *path)
{
    FILE *file = fopen(path, "rb");
    if (!file)
        return pj_error(PTXJIT_ERR_IO, "cannot open %s: %s", path, strerror(errno));
    pj_strbuf sb;
    pj_sb_init(&sb);
    char chunk[65536];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, file)) > 0)
        pj_sb_append_n(&sb, chunk, n);
    int read_error = ferror(file);
    fclose(file);
    if (read_error) {
        pj_sb_free(&sb);
        return pj_error(PTXJIT_ERR_IO, "cannot read %s", path);
    }
    size_t length = sb.length;
    char *data = pj_sb_take(&sb);
    if (!data)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory reading %s", path);
    *out = data;
    if (size)
        *size = length;
    return PTXJIT_OK;
}

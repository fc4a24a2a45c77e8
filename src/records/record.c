/* record.c — a tuning record's key, its body (text: one "name<TAB>value" line per field, one
 * "row" line per candidate), and its place in the disk cache: an entry of the kernels' format
 * (family, the winner as its params, the body as its text, no cubin, one entry name "tune"),
 * so that the checksum, the trust checks, the atomic publish and the cap are the kernels'. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cache/disk.h"
#include "remote/remote.h"
#include "records/record.h"

#define MAGIC "ptxjit tune record"

ptxjit_status pj_tune_record_key(pj_hash128 *out, const pj_tune_key_inputs *in)
{
    pj_hasher *hasher = pj_hasher_new();
    if (!hasher)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    char number[32];
    snprintf(number, sizeof number, "%d", PJ_TUNE_RECORD_VERSION);
    pj_hasher_field_str(hasher, "tune-record", number);
    pj_hasher_field_str(hasher, "family", in->family);
    pj_hasher_field_str(hasher, "template", in->template_text);
    pj_hasher_field_str(hasher, "fixed", in->fixed);
    /* The latest key has no space field at all: no space text can collide with it. */
    if (in->space)
        pj_hasher_field_str(hasher, "space", in->space);
    pj_hasher_field_str(hasher, "problem", in->problem);
    pj_hasher_field_str(hasher, "device", in->device);
    pj_hasher_field_str(hasher, "arch", in->arch);
    pj_hasher_field_str(hasher, "backend", in->backend);
    pj_hasher_field_str(hasher, "compiler", in->compiler);
    *out = pj_hasher_digest(hasher);
    pj_hasher_free(hasher);
    return PTXJIT_OK;
}

void pj_tune_record_free(pj_tune_record *r)
{
    if (!r)
        return;
    free(r->family);
    free(r->problem);
    free(r->fixed);
    free(r->space);
    free(r->device);
    free(r->backend);
    free(r->winner);
    free(r->reference);
    for (int i = 0; i < r->row_count; i++) {
        free(r->rows[i].params);
        free(r->rows[i].message);
    }
    free(r->rows);
    memset(r, 0, sizeof *r);
}

static char *dup_or_empty(const char *text)
{
    return pj_strdup(text ? text : "");
}

ptxjit_status pj_tune_record_copy(pj_tune_record *out, const pj_tune_record *in)
{
    *out = *in;
    out->family = dup_or_empty(in->family);
    out->problem = dup_or_empty(in->problem);
    out->fixed = dup_or_empty(in->fixed);
    out->space = dup_or_empty(in->space);
    out->device = dup_or_empty(in->device);
    out->backend = dup_or_empty(in->backend);
    out->winner = dup_or_empty(in->winner);
    out->reference = dup_or_empty(in->reference);
    out->rows = calloc((size_t)in->row_count + 1, sizeof *out->rows);
    int ok = out->family && out->problem && out->fixed && out->space && out->device &&
             out->backend && out->winner && out->reference && out->rows;
    out->row_count = ok ? in->row_count : 0;
    for (int i = 0; ok && i < in->row_count; i++) {
        out->rows[i] = in->rows[i];
        out->rows[i].params = dup_or_empty(in->rows[i].params);
        out->rows[i].message = dup_or_empty(in->rows[i].message);
        ok = out->rows[i].params && out->rows[i].message;
    }
    if (ok)
        return PTXJIT_OK;
    pj_tune_record_free(out);
    return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* ---- body ---- */

/* Text without the characters that separate fields and lines. */
static void put_text(pj_strbuf *sb, const char *text)
{
    for (const char *s = text ? text : ""; *s; s++)
        pj_sb_append_n(sb, *s == '\t' || *s == '\n' || *s == '\r' ? " " : s, 1);
}

static void put_field(pj_strbuf *sb, const char *name, const char *text)
{
    pj_sb_appendf(sb, "%s\t", name);
    put_text(sb, text);
    pj_sb_append(sb, "\n");
}

char *pj_tune_record_encode(const pj_tune_record *r)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, MAGIC " %d\n", PJ_TUNE_RECORD_VERSION);
    put_field(&sb, "family", r->family);
    put_field(&sb, "problem", r->problem);
    put_field(&sb, "fixed", r->fixed);
    put_field(&sb, "space", r->space);
    put_field(&sb, "device", r->device);
    put_field(&sb, "backend", r->backend);
    put_field(&sb, "winner", r->winner);
    put_field(&sb, "reference", r->reference);
    /* %.17g: a double read back is the same double. */
    pj_sb_appendf(&sb, "numbers\t%.17g\t%.17g\t%.17g\t%lld\t%d\t%d\t%d\t%d\n", r->noise,
                  r->best_ms, r->wall_ms, (long long)r->tuned_at, r->considered, r->refused,
                  r->merged, r->latest);
    for (int i = 0; i < r->row_count; i++) {
        const pj_tune_row *row = &r->rows[i];
        pj_sb_appendf(&sb, "row\t%d\t%.17g\t%.17g\t%d\t%d\t%d\t%d\t", (int)row->status,
                      row->median_ms, row->spread, row->runs, row->abandoned, row->pruned,
                      row->rounds);
        put_text(&sb, row->params);
        pj_sb_append(&sb, "\t");
        put_text(&sb, row->message);
        pj_sb_append(&sb, "\n");
    }
    return pj_sb_take(&sb);
}

/* Splits line (modified in place) at tabs into at most max fields; returns the count. */
static int split(char *line, char **fields, int max)
{
    int count = 0;
    for (char *s = line; count < max;) {
        fields[count++] = s;
        char *tab = strchr(s, '\t');
        if (!tab)
            break;
        *tab = '\0';
        s = tab + 1;
    }
    return count;
}

static int read_double(const char *text, double *out)
{
    char *end;
    errno = 0;
    *out = strtod(text, &end);
    return !errno && end != text && !*end;
}

static int read_int(const char *text, long long *out)
{
    char *end;
    errno = 0;
    *out = strtoll(text, &end, 10);
    return !errno && end != text && !*end;
}

static int read_numbers(pj_tune_record *r, char **f, int n)
{
    long long v[5];
    if (n != 9 || !read_double(f[1], &r->noise) || !read_double(f[2], &r->best_ms) ||
        !read_double(f[3], &r->wall_ms))
        return 0;
    for (int i = 0; i < 5; i++)
        if (!read_int(f[4 + i], &v[i]) || (i > 0 && (v[i] < 0 || v[i] > 1 << 24)))
            return 0;
    r->tuned_at = v[0];
    r->considered = (int)v[1];
    r->refused = (int)v[2];
    r->merged = (int)v[3];
    r->latest = v[4] != 0;
    return 1;
}

static int read_row(pj_tune_record *r, char **f, int n)
{
    long long status, runs, abandoned, pruned, rounds;
    pj_tune_row row = {0};
    if (n != 10 || !read_int(f[1], &status) || status < 0 || status > PTXJIT_ERR_UNSUPPORTED ||
        !read_double(f[2], &row.median_ms) || !read_double(f[3], &row.spread) ||
        !read_int(f[4], &runs) || runs < 0 || runs > 1 << 20 || !read_int(f[5], &abandoned) ||
        !read_int(f[6], &pruned) || !read_int(f[7], &rounds) || rounds < 0 || rounds > 64)
        return 0;
    pj_tune_row *grown = realloc(r->rows, (size_t)(r->row_count + 1) * sizeof *grown);
    if (!grown)
        return -1;
    r->rows = grown;
    row.status = (ptxjit_status)status;
    row.runs = (int)runs;
    row.abandoned = abandoned != 0;
    row.pruned = pruned != 0;
    row.rounds = (int)rounds;
    row.params = pj_strdup(f[8]);
    row.message = pj_strdup(f[9]);
    grown[r->row_count++] = row;
    return row.params && row.message ? 1 : -1;
}

/* One line into r: 1 read, 0 not a line of ours, -1 out of memory. */
static int read_line(pj_tune_record *r, char *line)
{
    static const char *const names[] = {"family", "problem", "fixed", "space",
                                        "device", "backend", "winner", "reference"};
    char **slots[] = {&r->family, &r->problem, &r->fixed, &r->space,
                      &r->device, &r->backend, &r->winner, &r->reference};
    char *f[10];
    int n = split(line, f, 10);
    if (strcmp(f[0], "numbers") == 0)
        return read_numbers(r, f, n);
    if (strcmp(f[0], "row") == 0)
        return read_row(r, f, n);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(names); i++)
        if (strcmp(f[0], names[i]) == 0) {
            if (n != 2 || *slots[i])
                return 0;
            return (*slots[i] = pj_strdup(f[1])) ? 1 : -1;
        }
    return 0;
}

ptxjit_status pj_tune_record_decode(pj_tune_record *out, const char *text)
{
    memset(out, 0, sizeof *out);
    char *copy = pj_strdup(text);
    if (!copy)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    char header[64];
    snprintf(header, sizeof header, MAGIC " %d", PJ_TUNE_RECORD_VERSION);
    int result = 1;
    char *save = NULL;
    char *line = strtok_r(copy, "\n", &save);
    if (!line || strcmp(line, header) != 0)
        result = 0;
    while (result == 1 && (line = strtok_r(NULL, "\n", &save)))
        result = read_line(out, line);
    free(copy);
    if (result == 1 && !(out->family && out->problem && out->fixed && out->space &&
                         out->device && out->backend && out->winner && out->reference))
        result = 0;
    if (result == 1)
        return PTXJIT_OK;
    pj_tune_record_free(out);
    return result < 0 ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory")
                      : pj_error(PTXJIT_ERR_CACHE, "a tuning record that this version did not "
                                                   "write (or a damaged one)");
}

/* ---- the disk cache ---- */

ptxjit_status pj_tune_record_store(pj_disk_cache *disk, struct pj_remote *remote,
                                   const char *key, const pj_tune_record *record, char **path)
{
    char *names[] = {"tune"};
    pj_artifact a = {0};
    a.family = record->family;
    a.params = record->winner;
    a.ptx = pj_tune_record_encode(record);
    a.log = "";
    a.entries = names;
    a.entry_count = 1;
    if (!a.ptx)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = pj_disk_cache_store_record(disk, key, &a);
    if (status == PTXJIT_OK) /* locally first, then the fleet */
        pj_remote_publish(remote, PJ_REMOTE_RECORD, key, &a);
    free(a.ptx);
    if (status == PTXJIT_OK && path)
        *path = pj_disk_cache_record_path(disk, key);
    return status;
}

ptxjit_status pj_tune_record_load(pj_disk_cache *disk, struct pj_remote *remote, const char *key,
                                  const char *family, pj_tune_record *out, int *found)
{
    pj_artifact a;
    memset(out, 0, sizeof *out);
    ptxjit_status status = pj_disk_cache_load_record(disk, key, &a, found);
    if (status == PTXJIT_OK && !*found && remote) {
        /* Checked by the remote tier as a disk load checks it; kept here for the next process
         * (a failed store only costs that process a remote lookup). */
        pj_remote_fetch(remote, PJ_REMOTE_RECORD, key, &a, found);
        if (*found)
            (void)pj_disk_cache_store_record_copy(disk, key, &a);
    }
    if (status != PTXJIT_OK || !*found)
        return status;
    *found = 0;
    if (a.entry_count == 1 && strcmp(a.entries[0], "tune") == 0 &&
        (!family || strcmp(a.family, family) == 0)) {
        status = pj_tune_record_decode(out, a.ptx);
        *found = status == PTXJIT_OK && strcmp(out->winner, a.params) == 0 &&
                 strcmp(out->family, a.family) == 0;
        if (status == PTXJIT_OK && !*found)
            pj_tune_record_free(out);
        if (status == PTXJIT_ERR_CACHE)
            status = PTXJIT_OK; /* a miss: the caller tunes again and replaces it */
    }
    pj_artifact_free(&a);
    return status;
}

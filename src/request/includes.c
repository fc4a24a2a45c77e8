/* includes.c — finding and hashing the headers a template includes. Runs on every request
 * that misses the exact-request fast path, so it only stats, resolves and reads the few small
 * files a template names; a template with no directory and no -I dirs costs nothing. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "includes.h"
#include "params/schema.h"

typedef struct {
    pj_include_set *set;
    const char *const *dirs;
    int dir_count;
    const char *origin;
    char path[PATH_MAX]; /* where a header was found; copied before the scan goes deeper, so
                            that a frame of the recursion holds no path buffer of its own */
} scan;

static int is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* The header a line names: `#include "x"` (*quoted = 1) or `#include <x>`; 0 when the line
 * is no such include. */
static int include_on_line(const char *line, size_t length, const char **name,
                           size_t *name_length, int *quoted)
{
    size_t i = 0;
    while (i < length && is_blank(line[i]))
        i++;
    if (i == length || line[i++] != '#')
        return 0;
    while (i < length && is_blank(line[i]))
        i++;
    if (length - i < 8 || strncmp(line + i, "include", 7) != 0)
        return 0;
    i += 7;
    while (i < length && is_blank(line[i]))
        i++;
    if (i == length || (line[i] != '"' && line[i] != '<'))
        return 0;
    *quoted = line[i] == '"';
    const char *close = memchr(line + i + 1, *quoted ? '"' : '>', length - i - 1);
    if (!close || close == line + i + 1)
        return 0;
    *name = line + i + 1;
    *name_length = (size_t)(close - *name);
    return 1;
}

/* dir/name (or name alone when it is absolute) into path, if it is a regular file. */
static int try_path(char *path, size_t size, const char *dir, const char *name, size_t length)
{
    int n = name[0] == '/' ? snprintf(path, size, "%.*s", (int)length, name)
                           : snprintf(path, size, "%s/%.*s", dir, (int)length, name);
    struct stat st;
    return n > 0 && (size_t)n < size && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where the compiler will find the header: "x" in the including file's directory first. */
static int resolve(char *path, size_t size, const scan *s, const char *file_dir,
                   const char *name, size_t length, int quoted)
{
    if (name[0] == '/') /* opened as it is written, whatever the directories */
        return try_path(path, size, NULL, name, length);
    if (quoted && file_dir && try_path(path, size, file_dir, name, length))
        return 1;
    for (int i = 0; i < s->dir_count; i++)
        if (try_path(path, size, s->dirs[i], name, length))
            return 1;
    return 0;
}

static int known(const pj_include_set *set, const char *path)
{
    for (int i = 0; i < set->count; i++)
        if (strcmp(set->files[i].path, path) == 0)
            return 1;
    return 0;
}

/* Takes ownership of path. */
static ptxjit_status add_file(pj_include_set *set, char *path, const char *text, size_t size)
{
    if (set->count == set->capacity) {
        int capacity = set->capacity ? 2 * set->capacity : 8;
        pj_include_file *grown = realloc(set->files, (size_t)capacity * sizeof *grown);
        if (!grown) {
            free(path);
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        }
        set->files = grown;
        set->capacity = capacity;
    }
    set->files[set->count++] = (pj_include_file){path, pj_hash(text, size)};
    return PTXJIT_OK;
}

static ptxjit_status scan_text(scan *s, const char *text, const char *file, const char *file_dir,
                               int depth);

/* The header found at path (as the compiler will open it), included by file. */
static ptxjit_status visit(scan *s, const char *path, const char *file, int depth)
{
    char *resolved = realpath(path, NULL);
    if (!resolved)
        return errno == ENOMEM ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory")
                               : PTXJIT_OK; /* gone meanwhile: the compiler will say so */
    if (known(s->set, resolved)) {
        free(resolved);
        return PTXJIT_OK;
    }
    if (depth >= PJ_INCLUDE_MAX_DEPTH) {
        free(resolved);
        return pj_error(PTXJIT_ERR_TEMPLATE,
                        "%s: headers nest deeper than %d (%s includes %s); flatten them",
                        s->origin, PJ_INCLUDE_MAX_DEPTH, file, path);
    }
    if (s->set->count >= PJ_INCLUDE_MAX_FILES) {
        free(resolved);
        return pj_error(PTXJIT_ERR_TEMPLATE,
                        "%s: includes more than %d headers (the last %s, from %s); fewer, "
                        "larger headers keep the cache key's scan short",
                        s->origin, PJ_INCLUDE_MAX_FILES, path, file);
    }
    char *text = NULL;
    size_t size = 0;
    ptxjit_status status = pj_read_file(&text, &size, resolved);
    if (status != PTXJIT_OK) {
        free(resolved);
        /* Unreadable: the compiler cannot read it either and fails, so nothing is cached. */
        return status == PTXJIT_ERR_OUT_OF_MEMORY ? status : PTXJIT_OK;
    }
    status = add_file(s->set, resolved, text, size);
    /* "x" inside it is looked for next to it first: its directory as the compiler opened it. */
    const char *slash = strrchr(path, '/');
    char *dir = status != PTXJIT_OK ? NULL
                : slash == path     ? pj_strdup("/")
                : slash             ? pj_strndup(path, (size_t)(slash - path))
                                    : pj_strdup(".");
    if (status == PTXJIT_OK && !dir)
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (status == PTXJIT_OK)
        status = scan_text(s, text, path, dir, depth + 1);
    free(dir);
    free(text);
    return status;
}

static ptxjit_status scan_text(scan *s, const char *text, const char *file, const char *file_dir,
                               int depth)
{
    for (const char *line = text; *line;) {
        size_t length = strcspn(line, "\n");
        const char *name;
        size_t name_length;
        int quoted;
        if (include_on_line(line, length, &name, &name_length, &quoted) &&
            resolve(s->path, sizeof s->path, s, file_dir, name, name_length, quoted)) {
            char *path = pj_strdup(s->path);
            ptxjit_status status = path ? visit(s, path, file, depth)
                                        : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
            free(path);
            if (status != PTXJIT_OK)
                return status;
        }
        line += length + (line[length] == '\n');
    }
    return PTXJIT_OK;
}

ptxjit_status pj_includes_scan(pj_include_set *out, const char *source, const char *origin,
                               const char *template_dir, const char *const *dirs,
                               int dir_count)
{
    memset(out, 0, sizeof *out);
    if (!*source)
        return PTXJIT_OK; /* nothing to scan (a built-in template with no -I: see the route) */
    scan *s = malloc(sizeof *s);
    if (!s)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *s = (scan){.set = out, .dirs = dirs, .dir_count = dir_count, .origin = origin};
    ptxjit_status status = scan_text(s, source, origin, template_dir, 0);
    free(s);
    if (status != PTXJIT_OK)
        pj_includes_free(out);
    return status;
}

int pj_includes_changed(const pj_include_set *set, const char **which)
{
    for (int i = 0; i < set->count; i++) {
        char *text = NULL;
        size_t size = 0;
        int same = pj_read_file(&text, &size, set->files[i].path) == PTXJIT_OK;
        if (same) {
            pj_hash128 now = pj_hash(text, size);
            same = now.low == set->files[i].content.low && now.high == set->files[i].content.high;
        }
        free(text);
        if (!same) {
            if (which)
                *which = set->files[i].path;
            return 1;
        }
    }
    return 0;
}

void pj_includes_free(pj_include_set *set)
{
    for (int i = 0; i < set->count; i++)
        free(set->files[i].path);
    free(set->files);
    memset(set, 0, sizeof *set);
}

ptxjit_status pj_template_dir(char **out, const char *origin)
{
    *out = NULL;
    if (pj_origin_is_builtin(origin) || pj_origin_is_memory(origin))
        return PTXJIT_OK;
    const char *slash = strrchr(origin, '/');
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - origin) : 1, slash ? origin : ".");
    if (slash == origin)
        snprintf(dir, sizeof dir, "/");
    *out = realpath(dir, NULL);
    if (!*out && errno == ENOMEM)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    if (!*out)
        *out = pj_strdup(dir); /* gone since the context opened: the compiler will say so */
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* includes.c — finding and hashing the headers a template includes. Runs on every request
 * that misses the exact-request fast path, so it only stats, resolves and reads the few small
 * files a template names; a template with no directory and no -I dirs costs nothing. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "directives.h"
#include "includes.h"
#include "params/schema.h"

/* A directory a confined include may read under: as NVRTC is given it, with "." and ".."
 * folded (a name is checked against this before anything is opened), and its real path
 * (NULL when it does not exist). */
typedef struct {
    char *lexical, *real;
} root;

typedef struct {
    pj_include_set *set;
    const char *const *dirs;
    int dir_count;
    const char *origin;
    const pj_include_confinement *confine; /* NULL: not confined */
    root *roots;                           /* confined: dirs, then the toolkit's */
    int root_count;
    char path[PATH_MAX]; /* where a header was found; copied before the scan goes deeper, so
                            that a frame of the recursion holds no path buffer of its own */
} scan;

/* dir/name (or name alone when it is absolute) into path, if it is a regular file. */
static int try_path(char *path, size_t size, const char *dir, const char *name)
{
    int n = name[0] == '/' ? snprintf(path, size, "%s", name)
                           : snprintf(path, size, "%s/%s", dir, name);
    struct stat st;
    return n > 0 && (size_t)n < size && stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* Where the compiler will find the header: "x" in the including file's directory first. */
static int resolve(char *path, size_t size, const scan *s, const char *file_dir,
                   const char *name, int quoted)
{
    if (name[0] == '/') /* opened as it is written, whatever the directories */
        return try_path(path, size, NULL, name);
    if (quoted && file_dir && try_path(path, size, file_dir, name))
        return 1;
    for (int i = 0; i < s->dir_count; i++)
        if (try_path(path, size, s->dirs[i], name))
            return 1;
    return 0;
}

/* ---- confinement ---- */

/* path with its "." and ".." folded and its slashes single, as text (no link followed), into
 * out; 0 when it does not fit. ".." of "/" is "/"; a relative path keeps its leading "..". */
static int fold(char *out, size_t size, const char *path)
{
    size_t length = 0, floor = 0; /* floor: what a ".." cannot take back */
    if (path[0] == '/')
        out[length++] = '/', floor = 1;
    for (const char *part = path; *part;) {
        size_t n = strcspn(part, "/");
        int up = n == 2 && part[0] == '.' && part[1] == '.';
        if (up && length > floor) {
            while (length > floor && out[length - 1] != '/')
                length--;
            length -= length > floor; /* and the slash before the part */
        } else if (!(up && path[0] == '/') && n > 0 && !(n == 1 && part[0] == '.')) {
            size_t separator = length > 0 && out[length - 1] != '/';
            if (length + separator + n + 1 > size)
                return 0;
            if (separator)
                out[length++] = '/';
            memcpy(out + length, part, n);
            length += n;
            if (up)
                floor = length;
        }
        part += n;
        while (*part == '/')
            part++;
    }
    out[length] = '\0';
    return 1;
}

/* Whether path is dir or lies below it. */
static int is_under(const char *path, const char *dir)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return path[0] == '/';
    return strncmp(path, dir, n) == 0 && (path[n] == '/' || path[n] == '\0');
}

static int lexically_under_a_root(const scan *s, const char *path)
{
    char folded[PATH_MAX];
    if (!fold(folded, sizeof folded, path))
        return 0;
    for (int i = 0; i < s->root_count; i++)
        if (is_under(folded, s->roots[i].lexical))
            return 1;
    return 0;
}

static int really_under_a_root(const scan *s, const char *real)
{
    for (int i = 0; i < s->root_count; i++)
        if (s->roots[i].real && is_under(real, s->roots[i].real))
            return 1;
    return 0;
}

static void free_roots(scan *s)
{
    for (int i = 0; i < s->root_count; i++) {
        free(s->roots[i].lexical);
        free(s->roots[i].real);
    }
    free(s->roots);
}

static ptxjit_status add_root(scan *s, const char *dir)
{
    root *r = &s->roots[s->root_count];
    char folded[PATH_MAX];
    r->lexical = fold(folded, sizeof folded, dir) ? pj_strdup(folded) : NULL;
    r->real = realpath(dir, NULL);
    if (!r->lexical || (!r->real && errno == ENOMEM)) {
        free(r->lexical);
        free(r->real);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    s->root_count++;
    return PTXJIT_OK;
}

static ptxjit_status make_roots(scan *s)
{
    s->roots = calloc((size_t)s->dir_count + 1, sizeof *s->roots);
    if (!s->roots)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = PTXJIT_OK;
    for (int i = 0; i < s->dir_count && status == PTXJIT_OK; i++)
        status = add_root(s, s->dirs[i]);
    if (status == PTXJIT_OK && s->confine->toolkit_dir)
        status = add_root(s, s->confine->toolkit_dir);
    return status;
}

/* How the directive reads in a message: `#include "x"`, `__has_include(<x>)`. */
static void spell(char *out, size_t size, const pj_directive *d)
{
    static const char *const words[] = {"#include",      "#include_next",      "#import",
                                        "#embed",        "__has_include",      "__has_include_next",
                                        "__has_embed"};
    int probe = d->kind >= PJ_DIRECTIVE_HAS_INCLUDE;
    const char *open = d->form == PJ_NAME_QUOTED ? "\"" : "<";
    const char *close = d->form == PJ_NAME_QUOTED ? "\"" : ">";
    if (d->form == PJ_NAME_COMPUTED)
        snprintf(out, size, "%s%s", words[d->kind], probe ? "(...)" : " with a macro");
    else
        snprintf(out, size, "%s%s%s%.200s%s%s", words[d->kind], probe ? "(" : " ", open,
                 d->name, close, probe ? ")" : "");
}

static ptxjit_status refuse(const char *file, int line, const pj_directive *d, const char *why)
{
    char spelled[300];
    spell(spelled, sizeof spelled, d);
    return pj_error(PTXJIT_ERR_TEMPLATE,
                    "%s:%d: %s: %s (includes are confined, by the confine_includes option or "
                    "PTXJIT_CONFINE_INCLUDES, to the template's directory, the -I directories "
                    "and the toolkit's include directory)",
                    file, line, spelled, why);
}

#define FIX_PLACE "keep the header under the template's directory or an -I directory"

/* Why a confined scan cannot follow d at all (NULL: it can be checked). */
static const char *unfollowable(const pj_directive *d)
{
    switch (d->kind) {
    case PJ_DIRECTIVE_INCLUDE_NEXT:
    case PJ_DIRECTIVE_HAS_INCLUDE_NEXT:
        return "it searches on past the directory its file was found in, which the scan does "
               "not follow; use #include";
    case PJ_DIRECTIVE_IMPORT:
    case PJ_DIRECTIVE_EMBED:
    case PJ_DIRECTIVE_HAS_EMBED:
        return "it names a file the scan does not follow; use #include";
    case PJ_DIRECTIVE_INCLUDE:
    case PJ_DIRECTIVE_HAS_INCLUDE:
        break;
    }
    if (d->form == PJ_NAME_COMPUTED)
        return "a name given through a macro (or left unclosed) cannot be checked before the "
               "compile; write the header's name in quotes or angle brackets";
    if (d->name[0] == '/')
        return "an absolute path can name any file; name the header relative to the "
               "template's directory or an -I directory";
    return NULL;
}

/* Where NVRTC will open d's name, confined. Each place it tries in turn must stay under a
 * root as written (the name's ".." is checked before anything is opened, so that a refusal
 * tells nothing of what exists outside); the first that exists must be a regular file whose
 * real path is under a root (the toolkit's own links are its installer's: not checked).
 * *found: 1 with its path in s->path (*toolkit: 1 when in the toolkit's directory, which is
 * not scanned), 0 when none exists (NVRTC will say so); else PTXJIT_ERR_TEMPLATE. */
static ptxjit_status resolve_confined(scan *s, const char *file_dir, const pj_directive *d,
                                      const char *file, int line, int *found, int *toolkit)
{
    *found = *toolkit = 0;
    int first = d->form == PJ_NAME_QUOTED && file_dir ? -1 : 0;
    int last = s->dir_count + (s->confine->toolkit_dir != NULL);
    for (int i = first; i < last; i++) {
        const char *dir = i < 0               ? file_dir
                          : i < s->dir_count ? s->dirs[i]
                                             : s->confine->toolkit_dir;
        int n = snprintf(s->path, sizeof s->path, "%s/%s", dir, d->name);
        if (n < 0 || (size_t)n >= sizeof s->path || !lexically_under_a_root(s, s->path))
            return refuse(file, line, d,
                          n < 0 || (size_t)n >= sizeof s->path
                              ? "the path is too long to check; " FIX_PLACE
                              : "its \"..\" leads out of the directories includes may "
                                "read; " FIX_PLACE);
        struct stat st;
        if (stat(s->path, &st) != 0)
            continue; /* not there: the compiler looks on */
        *toolkit = i == s->dir_count;
        char *real = *toolkit ? NULL : realpath(s->path, NULL);
        if (!*toolkit && !real && errno == ENOMEM)
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        int inside = *toolkit || (real && really_under_a_root(s, real));
        free(real);
        if (!inside)
            return refuse(file, line, d,
                          "the file found there leads out of the directories includes may "
                          "read, through a symbolic link; copy the header in instead of "
                          "linking to it");
        if (!S_ISREG(st.st_mode))
            return refuse(file, line, d, "what is found there is not a regular file");
        *found = 1;
        return PTXJIT_OK;
    }
    return PTXJIT_OK;
}

/* What a confined scan refuses in a file's text as a whole. */
static ptxjit_status refuse_unreadable(const pj_directives *found, const char *file)
{
    if (found->nul_line)
        return pj_error(PTXJIT_ERR_TEMPLATE,
                        "%s:%d: a NUL byte: the compiler reads on past it where the include "
                        "scan cannot; a header is text, remove it (includes are confined, by "
                        "the confine_includes option or PTXJIT_CONFINE_INCLUDES)",
                        file, pj_directives_line(found, found->nul_line));
    if (found->raw_splice_line)
        return pj_error(PTXJIT_ERR_TEMPLATE,
                        "%s:%d: a raw string literal with a backslash-newline inside it (or an "
                        "opening R\"delimiter( that cannot be read): compilers differ on where "
                        "it ends, so its includes cannot be checked; remove the backslash-"
                        "newline (includes are confined, by the confine_includes option or "
                        "PTXJIT_CONFINE_INCLUDES)",
                        file, pj_directives_line(found, found->raw_splice_line));
    return PTXJIT_OK;
}

/* ---- the scan ---- */

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

static ptxjit_status scan_text(scan *s, const char *text, size_t size, const char *file,
                               const char *file_dir, int depth);

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
    ptxjit_status status = pj_read_file_at_most(&text, &size, resolved, s->set->max_bytes);
    if (status == PTXJIT_ERR_IO && size > s->set->max_bytes) {
        status = pj_error(PTXJIT_ERR_TEMPLATE,
                          "%s: the header %s (from %s) is %zu bytes, over the template cap of "
                          "%zu; split it, or raise the cap (the template_max_bytes option, "
                          "$PTXJIT_TEMPLATE_MAX_BYTES)",
                          s->origin, path, file, size, s->set->max_bytes);
        free(resolved);
        return status;
    }
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
        status = scan_text(s, text, size, path, dir, depth + 1);
    free(dir);
    free(text);
    return status;
}

/* One directive of file: checked when confined; an #include of a name followed. */
static ptxjit_status follow(scan *s, const pj_directives *found, const pj_directive *d,
                            const char *file, const char *file_dir, int depth)
{
    int line = pj_directives_line(found, d->line), at = 0, toolkit = 0;
    ptxjit_status status = PTXJIT_OK;
    if (s->confine) {
        const char *why = unfollowable(d);
        if (why)
            return refuse(file, line, d, why);
        status = resolve_confined(s, file_dir, d, file, line, &at, &toolkit);
    } else if (d->kind == PJ_DIRECTIVE_INCLUDE && d->form != PJ_NAME_COMPUTED) {
        at = resolve(s->path, sizeof s->path, s, file_dir, d->name, d->form == PJ_NAME_QUOTED);
    }
    if (status != PTXJIT_OK || !at || toolkit || d->kind != PJ_DIRECTIVE_INCLUDE)
        return status; /* __has_include reads nothing; the toolkit's headers are not hashed */
    char *path = pj_strdup(s->path);
    status = path ? visit(s, path, file, depth)
                  : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    free(path);
    return status;
}

static ptxjit_status scan_text(scan *s, const char *text, size_t size, const char *file,
                               const char *file_dir, int depth)
{
    pj_directives found;
    if (pj_directives_find(&found, text, size) < 0)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = s->confine ? refuse_unreadable(&found, file) : PTXJIT_OK;
    for (int i = 0; i < found.count && status == PTXJIT_OK; i++)
        status = follow(s, &found, &found.items[i], file, file_dir, depth);
    pj_directives_free(&found);
    return status;
}

ptxjit_status pj_includes_scan(pj_include_set *out, const char *source, const char *origin,
                               const char *template_dir, const char *const *dirs,
                               int dir_count, const pj_include_confinement *confine,
                               size_t max_bytes)
{
    memset(out, 0, sizeof *out);
    out->max_bytes = max_bytes;
    if (!*source)
        return PTXJIT_OK; /* nothing to scan (a built-in template with no -I: see the route) */
    scan *s = calloc(1, sizeof *s);
    if (!s)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    *s = (scan){.set = out, .dirs = dirs, .dir_count = dir_count, .origin = origin,
                .confine = confine};
    ptxjit_status status = confine ? make_roots(s) : PTXJIT_OK;
    if (status == PTXJIT_OK)
        status = scan_text(s, source, strlen(source), origin, template_dir, 0);
    free_roots(s);
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
        int same =
            pj_read_file_at_most(&text, &size, set->files[i].path, set->max_bytes) == PTXJIT_OK;
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

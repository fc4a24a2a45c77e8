/* explain.c — ptxjit_explain: a request's key components, and when the disk cache misses it,
 * the entries of its family there that come nearest, with the components that differ; then
 * the same for the remote tier, where one is configured. The components are key.c's lines
 * ("name value"); an entry carries its own in the note beside it (cache/disk.h), entries stored
 * before notes existed have none and are counted as unknown; the remote tier keeps the notes of
 * the newest entries of each family in a list (remote/remote.h). */
#include <stdlib.h>
#include <string.h>

#include "cache/scan.h"
#include "remote/remote.h"
#include "request/context.h"

#define NEAREST_SHOWN 3

typedef struct {
    char key[33];
    char *diff; /* the differences, one "    ..." line each */
    int count;  /* how many */
} candidate;

typedef struct {
    ptxjit_context *context;
    const ptxjit_kernel *request;
    int hit;       /* the request's own key is there */
    int unknown;   /* entries without a note */
    candidate best[NEAREST_SHOWN];
    int kept;
} explain_scan;

/* The value of the first line named name in text ("name value\n"), as a new string; NULL when
 * there is none. */
static char *value_of(const char *text, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = text; line && *line; line = strchr(line, '\n'), line += !!line)
        if (strncmp(line, name, n) == 0 && line[n] == ' ') {
            const char *end = strchr(line, '\n');
            size_t length = end ? (size_t)(end - line - n - 1) : strlen(line + n + 1);
            char *out = malloc(length + 1);
            if (out) {
                memcpy(out, line + n + 1, length);
                out[length] = 0;
            }
            return out;
        }
    return NULL;
}

/* 1 when text has the line exactly (without its newline). */
static int has_line(const char *text, const char *line, size_t length)
{
    for (const char *at = text; at && *at; at = strchr(at, '\n'), at += !!at)
        if (strncmp(at, line, length) == 0 && (at[length] == '\n' || at[length] == 0))
            return 1;
    return 0;
}

/* A header line's path: "header PATH HASH" (PATH may hold spaces: the hash is the last word). */
static int header_path(const char *line, size_t length, const char **path, size_t *path_length)
{
    if (length < 7 + 33 || strncmp(line, "header ", 7) != 0)
        return 0;
    *path = line + 7;
    *path_length = length - 7 - 33;
    return 1;
}

/* Whether text has a header line of that path, whatever its hash. */
static int has_header(const char *text, const char *path, size_t path_length)
{
    for (const char *at = text; at && *at; at = strchr(at, '\n'), at += !!at) {
        const char *end = strchr(at, '\n');
        size_t length = end ? (size_t)(end - at) : strlen(at);
        const char *p;
        size_t n;
        if (header_path(at, length, &p, &n) && n == path_length && !memcmp(p, path, n))
            return 1;
    }
    return 0;
}

/* The lines of from that to lacks, told as what changed going from the entry to the request
 * (added: in the request only; removed: in the entry only). */
static void one_sided(pj_strbuf *sb, int *count, const char *from, const char *to,
                      const char *verb)
{
    for (const char *at = from; at && *at; at = strchr(at, '\n'), at += !!at) {
        const char *end = strchr(at, '\n');
        size_t length = end ? (size_t)(end - at) : strlen(at);
        if (has_line(to, at, length))
            continue;
        const char *path;
        size_t path_length;
        if (header_path(at, length, &path, &path_length)) {
            int both = has_header(to, path, path_length);
            if (both && verb[0] == 'r') /* told once, from the request's side */
                continue;
            pj_sb_appendf(sb, "    header %.*s %s\n", (int)path_length, path,
                          both ? "changed" : verb);
            ++*count;
        } else if (strncmp(at, "option ", 7) == 0) {
            pj_sb_appendf(sb, "    option %.*s %s\n", (int)length - 7, at + 7, verb);
            ++*count;
        }
    }
}

/* What differs between an entry's components and the request's. */
static char *differences(const char *entry, const char *request, int *count)
{
    static const char *const single[] = {"params", "template", "backend", "compiler", "arch",
                                         "specializer"};
    pj_strbuf sb;
    pj_sb_init(&sb);
    *count = 0;
    for (size_t i = 0; i < sizeof single / sizeof *single; i++) {
        char *was = value_of(entry, single[i]), *now = value_of(request, single[i]);
        if (!was || !now || strcmp(was, now) != 0) {
            if (i == 1)
                pj_sb_append(&sb, "    template changed\n");
            else
                pj_sb_appendf(&sb, "    %s: %s -> %s\n", single[i], was ? was : "unknown",
                              now ? now : "unknown");
            ++*count;
        }
        free(was);
        free(now);
    }
    one_sided(&sb, count, request, entry, "added");
    one_sided(&sb, count, entry, request, "removed");
    return pj_sb_take(&sb);
}

/* Keeps c among the NEAREST_SHOWN with the fewest differences (a tie: the earlier key). */
static void keep(explain_scan *s, candidate c)
{
    int at = s->kept;
    while (at > 0 && (s->best[at - 1].count > c.count ||
                      (s->best[at - 1].count == c.count && strcmp(s->best[at - 1].key, c.key) > 0)))
        at--;
    if (at >= NEAREST_SHOWN) {
        free(c.diff);
        return;
    }
    if (s->kept == NEAREST_SHOWN)
        free(s->best[--s->kept].diff);
    memmove(&s->best[at + 1], &s->best[at], (size_t)(s->kept - at) * sizeof c);
    s->best[at] = c;
    s->kept++;
}

/* Another entry, of key, whose note is note: kept among the nearest when it is of the family
 * (the callers tell the request's own entry apart). */
static void consider(explain_scan *s, const char *key, const char *note)
{
    char *family = value_of(note, "family");
    if (family && strcmp(family, s->request->schema->family) == 0) {
        candidate c;
        pj_copy_string(c.key, sizeof c.key, key);
        c.diff = differences(note, s->request->components, &c.count);
        if (c.diff)
            keep(s, c);
    }
    free(family);
}

static void visit(int top_fd, const char *path, scan_kind kind, const struct stat *st,
                  void *user)
{
    (void)top_fd, (void)st;
    explain_scan *s = user;
    const char *key = strrchr(path, '/');
    key = key ? key + 1 : path;
    if (kind != SCAN_ENTRY)
        return;
    if (strcmp(key, s->request->key_hex) == 0) {
        s->hit = 1;
        return;
    }
    char *note = NULL;
    pj_disk_cache_read_note(s->context->disk, key, &note);
    if (!note) {
        s->unknown++;
        return;
    }
    consider(s, key, note);
    free(note);
}

static void visit_remote(void *user, const char *key, const char *note)
{
    explain_scan *s = user;
    if (strcmp(key, s->request->key_hex) != 0) /* the entry itself is asked for apart */
        consider(s, key, note);
}

/* The nearest entries found, told under where ("nearest" or "remote nearest"). */
static void tell_nearest(pj_strbuf *sb, explain_scan *s, const char *where, const char *family)
{
    for (int i = 0; i < s->kept; i++)
        pj_sb_appendf(sb, "%s %s: %d differing\n%s", where, s->best[i].key, s->best[i].count,
                      s->best[i].diff);
    if (!s->kept)
        pj_sb_appendf(sb, "%s: no entry of %s with known components\n", where, family);
    for (int i = 0; i < s->kept; i++)
        free(s->best[i].diff);
    s->kept = 0;
}

static void explain_disk(pj_strbuf *sb, ptxjit_context *context, const ptxjit_kernel *kernel,
                         const char *family)
{
    if (!context->disk) {
        pj_sb_append(sb, "disk: no disk cache\n");
        return;
    }
    explain_scan s = {.context = context, .request = kernel};
    pj_scan_cache(pj_disk_cache_dir(context->disk), visit, &s);
    pj_sb_appendf(sb, "disk: %s (%s)\n", s.hit ? "hit" : "miss",
                  pj_disk_cache_dir(context->disk));
    if (!s.hit)
        tell_nearest(sb, &s, "nearest", family);
    for (int i = 0; i < s.kept; i++)
        free(s.best[i].diff);
    if (!s.hit && s.unknown)
        pj_sb_appendf(sb, "unknown: %d entries without their key components (stored "
                          "before ptxjit kept them, or imported), not compared\n",
                      s.unknown);
}

/* The remote tier: whether it holds the entry, and else the nearest of the notes it keeps of
 * the family's newest entries. */
static void explain_remote(pj_strbuf *sb, ptxjit_context *context, const ptxjit_kernel *kernel,
                           const char *family)
{
    if (!context->remote)
        return;
    const char *why = NULL;
    int holds = pj_remote_holds(context->remote, PJ_REMOTE_KERNEL, kernel->key_hex, &why);
    if (holds == -1) {
        pj_sb_appendf(sb, "remote: not reachable (%s)\n", pj_remote_url(context->remote));
        return;
    }
    if (holds == -2)
        pj_sb_appendf(sb, "remote: miss (%s): its entry there is rejected (%s); a request "
                          "compiles and replaces it\n",
                      pj_remote_url(context->remote), why);
    else
        pj_sb_appendf(sb, "remote: %s (%s)\n", holds ? "hit" : "miss",
                      pj_remote_url(context->remote));
    if (holds == 1)
        return;
    explain_scan s = {.context = context, .request = kernel};
    if (pj_remote_each_note(context->remote, family, visit_remote, &s) < 0)
        pj_sb_append(sb, "remote nearest: the notes could not be read\n");
    else
        tell_nearest(sb, &s, "remote nearest", family);
}

ptxjit_status ptxjit_explain(char **out, ptxjit_context *context, const char *family,
                             const char *params, const char *compile_options)
{
    if (!out || !context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "out, context and family must be given");
    *out = NULL;
    ptxjit_kernel *kernel = NULL;
    ptxjit_status status = pj_kernel_keyed(&kernel, context, family, params, compile_options);
    if (status != PTXJIT_OK)
        return status;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "key %s\n%s", kernel->key_hex, kernel->components);
    explain_disk(&sb, context, kernel, kernel->schema->family);
    explain_remote(&sb, context, kernel, kernel->schema->family);
    pj_kernel_unkeyed(kernel);
    *out = pj_sb_take(&sb);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* templates.c — the template registry (templates.h): which files of the template directories
 * are templates, their text normalized, the problems of the ones that cannot be used,
 * duplicate families, templates added from memory, reloads. Each change is published as a
 * new snapshot that is never modified again, so that readers need the lock only to take it;
 * snapshots and templates stay until ptxjit_close, since kernels and the strings handed out
 * point into them. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alias.h"
#include "context.h"
#include "templates.h"
#include "util/count.h"

/* As the schema parser reads directives: this, after blanks, at the start of a line. */
#define FAMILY_DIRECTIVE "family"
#define DIRECTORY_FIX "fix the path in PTXJIT_TEMPLATE_PATH or the template_path option"
/* The default of options.template_max_bytes: far above any real template (the built-in ones
 * are under 64 KiB), far below what would hurt the process that reads it. */
#define DEFAULT_TEMPLATE_MAX_BYTES ((uint64_t)16 << 20)

/* A user template as last read: usable, or the problem that keeps it out. */
typedef struct {
    char *origin;          /* the file's path, the directory's, or "memory:NAME" */
    char *family;          /* the family it declares; NULL when not even that could be read */
    pj_template *template; /* NULL when it cannot be used */
    char *problem;         /* "ORIGIN: why", when template is NULL */
} user_template;

typedef struct {
    user_template *items;
    int count, capacity;
} user_list;

typedef struct {
    char *family; /* the family it makes unavailable; NULL: none could be read */
    char *text;   /* "PATH: message" */
} problem;

/* What readers see; never changed once published. */
typedef struct snapshot {
    pj_template **families;
    int family_count;
    problem *problems;
    int problem_count;
    uint64_t generation;
    struct snapshot *older; /* the snapshot this one replaced, kept for what points into it */
} snapshot;

struct pj_templates {
    pthread_mutex_t writer; /* one add or reload at a time; taken before context->lock */
    char *path;             /* the directories, ':'-separated: template_path's, then
                               $PTXJIT_TEMPLATE_PATH's, as ptxjit_open found them */
    user_list dirs;         /* the directories' templates, as last read */
    user_list memory;       /* ptxjit_add_template's, in the order their families came */
    size_t max_bytes;       /* the largest template file read (options.template_max_bytes) */
    pj_template *builtins;  /* the process's (pj_builtin_templates) */
    int builtin_count;
    pj_template *all;       /* every user template made, newest first */
    snapshot *current;      /* taken and replaced under context->lock */
};

char *pj_template_normalize(const char *text)
{
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3;
    char *normal = malloc(strlen(text) + 1), *out = normal;
    if (!normal)
        return NULL;
    for (const char *s = text; *s; s++) /* CRLF as LF; a lone CR too, as compilers read it */
        if (s[0] != '\r')
            *out++ = *s;
        else if (s[1] != '\n')
            *out++ = '\n';
    *out = '\0';
    return normal;
}

/* Whether text has a directive line, and the name on its first "family NAME" line (NULL if
 * none), which a template that does not parse may still tell. */
static ptxjit_status read_directives(int *has_directive, char **family, const char *text)
{
    *has_directive = 0;
    *family = NULL;
    const size_t verb = strlen(FAMILY_DIRECTIVE);
    for (const char *line = text; *line;) {
        const char *end = line + strcspn(line, "\n");
        int malformed;
        const char *s = pj_directive_words(line, end, &malformed);
        *has_directive |= malformed; /* a template, with a problem its parse will name */
        if (s) {
            *has_directive = 1;
            if (!*family && (size_t)(end - s) > verb && strncmp(s, FAMILY_DIRECTIVE, verb) == 0 &&
                (s[verb] == ' ' || s[verb] == '\t')) {
                const char *name = s + verb;
                while (name < end && (*name == ' ' || *name == '\t'))
                    name++;
                const char *after = name;
                while (after < end && (isalnum((unsigned char)*after) || *after == '_'))
                    after++;
                if (after > name && !(*family = pj_strndup(name, (size_t)(after - name))))
                    return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
            }
        }
        line = *end ? end + 1 : end;
    }
    return PTXJIT_OK;
}

static void user_free(user_template *item)
{
    free(item->origin);
    free(item->family);
    free(item->problem);
}

static void list_free(user_list *list)
{
    for (int i = 0; i < list->count; i++)
        user_free(&list->items[i]);
    free(list->items);
    *list = (user_list){0};
}

/* Room for one more item, so that the caller can add it without failing. */
static int list_reserve(user_list *list)
{
    if (list->count < list->capacity)
        return 1;
    int capacity = list->capacity ? 2 * list->capacity : 8;
    user_template *grown = realloc(list->items, (size_t)capacity * sizeof *grown);
    if (!grown)
        return 0;
    list->items = grown;
    list->capacity = capacity;
    return 1;
}

/* A zeroed item at the end of list, or NULL when out of memory. */
static user_template *list_push(user_list *list)
{
    if (!list_reserve(list))
        return NULL;
    user_template *item = &list->items[list->count++];
    *item = (user_template){0};
    return item;
}

static const user_template *declarer(const user_list *list, const char *family)
{
    for (int i = 0; i < list->count; i++)
        if (list->items[i].family && strcmp(list->items[i].family, family) == 0)
            return &list->items[i];
    return NULL;
}

/* Takes schema into the registry until close; NULL (schema freed) when out of memory. */
static pj_template *keep(struct pj_templates *t, pj_schema *schema)
{
    pj_template *template = calloc(1, sizeof *template);
    if (!template) {
        pj_schema_free(schema);
        return NULL;
    }
    template->schema = schema;
    template->family = schema->family;
    template->origin = schema->origin;
    template->next = t->all;
    t->all = template;
    return template;
}

/* "ORIGIN: message" from the thread's last error (a message that starts with the origin, as
 * the schema parser's do, is kept as it is), then fix. */
static char *problem_text(const char *origin, const char *fix)
{
    const char *message = ptxjit_last_error();
    size_t n = strlen(origin);
    pj_strbuf sb;
    pj_sb_init(&sb);
    if (strncmp(message, origin, n) != 0 || message[n] != ':')
        pj_sb_appendf(&sb, "%s: ", origin);
    pj_sb_append(&sb, message);
    pj_sb_append(&sb, fix ? fix : "");
    return pj_sb_take(&sb);
}

/* The template read from the same file, with the same text, by the previous reading: reused,
 * so that reloading unchanged files makes nothing new. */
static pj_template *unchanged(const user_list *previous, const char *path, const char *text)
{
    for (int i = 0; previous && i < previous->count; i++) {
        const user_template *item = &previous->items[i];
        if (item->template && strcmp(item->origin, path) == 0 &&
            strcmp(item->template->schema->source, text) == 0)
            return item->template;
    }
    return NULL;
}

/* The template or the problem of a file whose text was read; text is taken. */
static ptxjit_status parse_file(user_template *item, struct pj_templates *t,
                                const user_list *previous, char *text)
{
    item->template = unchanged(previous, item->origin, text);
    ptxjit_status status = PTXJIT_OK;
    pj_schema *schema;
    if (!item->template) {
        status = pj_schema_parse(&schema, text, item->origin);
        if (status == PTXJIT_OK && !(item->template = keep(t, schema)))
            status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        if (status == PTXJIT_ERR_TEMPLATE) {
            item->problem = problem_text(item->origin, NULL);
            status = item->problem ? PTXJIT_OK
                                   : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        }
    }
    free(text);
    /* The parser's name is the family, whatever the quick look of read_directives saw. */
    const char *family = item->template ? item->template->schema->family : NULL;
    if (status == PTXJIT_OK && family && (!item->family || strcmp(item->family, family) != 0)) {
        free(item->family);
        if (!(item->family = pj_strdup(family)))
            status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return status;
}

/* A file that cannot be read (the last error says why): a problem, tied to no family (none
 * could be read). */
static ptxjit_status unreadable(user_list *out, const char *path, const char *fix)
{
    char *text = problem_text(path, fix);
    user_template *item = text ? list_push(out) : NULL;
    if (!item) {
        free(text);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    item->problem = text;
    item->origin = pj_strdup(path);
    return item->origin ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* One *.cu file of a template directory: a template, a problem, or nothing when it has no
 * directive line (a helper that templates include). */
static ptxjit_status read_file(user_list *out, struct pj_templates *t, const user_list *previous,
                               const char *path, const pj_logger *logger)
{
    char *raw = NULL, *family = NULL;
    size_t size = 0;
    ptxjit_status status = pj_read_file_at_most(&raw, &size, path, t->max_bytes);
    if (status == PTXJIT_ERR_IO && size > t->max_bytes)
        return unreadable(out, path, "; a template is far smaller: move the file out of the "
                                     "template directory, or raise PTXJIT_TEMPLATE_MAX_BYTES "
                                     "(the template_max_bytes option)");
    if (status != PTXJIT_OK)
        return status == PTXJIT_ERR_OUT_OF_MEMORY
                   ? status
                   : unreadable(out, path, "; make it a readable regular file or move it out "
                                           "of the template directory");
    const char *nul = memchr(raw, '\0', size); /* the text would end there, silently */
    if (nul) {
        pj_error(PTXJIT_ERR_TEMPLATE, "%s: a NUL byte at offset %zu; a template is text", path,
                 (size_t)(nul - raw));
        free(raw);
        return unreadable(out, path, "; remove the byte, or move the file out of the template "
                                     "directory");
    }
    char *text = pj_template_normalize(raw);
    free(raw);
    if (!text)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    int has_directive;
    status = read_directives(&has_directive, &family, text);
    if (status == PTXJIT_OK && !has_directive) {
        pj_log(logger, PTXJIT_LOG_INFO,
               "%s: no //@ptxjit line, so not a template (a helper file); ignored", path);
        free(text);
        return PTXJIT_OK;
    }
    user_template *item = status == PTXJIT_OK ? list_push(out) : NULL;
    if (!item) {
        free(text);
        free(family);
        return status == PTXJIT_OK ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory") : status;
    }
    item->family = family;
    if (!(item->origin = pj_strdup(path))) {
        free(text);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return parse_file(item, t, previous, text);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void free_names(char **names, int count)
{
    for (int i = 0; i < count; i++)
        free(names[i]);
    free(names);
}

/* The *.cu names of a directory, sorted, so that families and problems come in a stable
 * order. */
static ptxjit_status list_dir(char ***out, int *count, DIR *handle)
{
    char **names = NULL;
    int capacity = 0, n = 0, out_of_memory = 0;
    for (struct dirent *e; !out_of_memory && (e = readdir(handle));) {
        size_t length = strlen(e->d_name);
        if (length <= 3 || strcmp(e->d_name + length - 3, ".cu") != 0)
            continue;
        if (n == capacity) {
            int grown_capacity = capacity ? 2 * capacity : 16;
            char **grown = realloc(names, (size_t)grown_capacity * sizeof *grown);
            if (!(out_of_memory = !grown)) {
                names = grown;
                capacity = grown_capacity;
            }
        }
        if (!out_of_memory)
            out_of_memory = !(names[n] = pj_strdup(e->d_name));
        n += !out_of_memory;
    }
    if (out_of_memory) {
        free_names(names, n);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (n)
        qsort(names, (size_t)n, sizeof *names, compare_names);
    *out = names;
    *count = n;
    return PTXJIT_OK;
}

/* A directory that cannot be read is a problem of its own, tied to no family. */
static ptxjit_status dir_problem(user_list *out, const char *dir, int error)
{
    user_template *item = list_push(out);
    if (!item)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s: cannot read this template directory (%s); " DIRECTORY_FIX, dir,
                  strerror(error));
    item->problem = pj_sb_take(&sb);
    item->origin = pj_strdup(dir);
    return item->problem && item->origin ? PTXJIT_OK
                                         : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

static ptxjit_status read_dir(user_list *out, struct pj_templates *t, const user_list *previous,
                              const char *dir, const pj_logger *logger)
{
    DIR *handle = opendir(dir);
    if (!handle)
        return dir_problem(out, dir, errno);
    char **names = NULL;
    int count = 0;
    ptxjit_status status = list_dir(&names, &count, handle);
    closedir(handle);
    for (int i = 0; i < count && status == PTXJIT_OK; i++) {
        pj_strbuf path;
        pj_sb_init(&path);
        pj_sb_appendf(&path, "%s/%s", dir, names[i]);
        status = path.failed ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory")
                             : read_file(out, t, previous, path.data, logger);
        pj_sb_free(&path);
    }
    free_names(names, count);
    return status;
}

/* Each directory of the path once, even when both the option and the variable name it. */
static int seen_before(const struct stat *ids, int count, const struct stat *st)
{
    for (int i = 0; i < count; i++)
        if (ids[i].st_dev == st->st_dev && ids[i].st_ino == st->st_ino)
            return 1;
    return 0;
}

/* The templates of every directory, in the path's order, into out; previous is the last
 * reading (unchanged files keep their template). */
static ptxjit_status read_dirs(user_list *out, struct pj_templates *t, const user_list *previous,
                               const pj_logger *logger)
{
    if (!t->path)
        return PTXJIT_OK;
    char *copy = pj_strdup(t->path), *save = NULL;
    struct stat *ids = calloc(strlen(t->path) / 2 + 1, sizeof *ids); /* one per directory */
    ptxjit_status status = copy && ids ? PTXJIT_OK
                                       : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    int id_count = 0;
    for (char *dir = copy ? strtok_r(copy, ":", &save) : NULL; dir && status == PTXJIT_OK;
         dir = strtok_r(NULL, ":", &save)) {
        struct stat st;
        int exists = stat(dir, &st) == 0;
        if (exists && seen_before(ids, id_count, &st)) {
            pj_log(logger, PTXJIT_LOG_INFO, "template directory %s is in the path twice; read once",
                   dir);
            continue;
        }
        if (exists)
            ids[id_count++] = st;
        status = read_dir(out, t, previous, dir, logger);
    }
    free(ids);
    free(copy);
    return status;
}

static ptxjit_status add_family(snapshot *s, pj_template *template)
{
    pj_template **grown = realloc(s->families, (size_t)(s->family_count + 1) * sizeof *grown);
    if (!grown)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    s->families = grown;
    grown[s->family_count++] = template;
    return PTXJIT_OK;
}

/* Takes text. */
static ptxjit_status add_problem(snapshot *s, const char *family, char *text)
{
    problem *grown = realloc(s->problems, (size_t)(s->problem_count + 1) * sizeof *grown);
    char *name = family ? pj_strdup(family) : NULL;
    if (!grown || !text || (family && !name)) {
        if (grown)
            s->problems = grown;
        free(text);
        free(name);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    s->problems = grown;
    grown[s->problem_count++] = (problem){name, text};
    return PTXJIT_OK;
}

static void snapshot_free(snapshot *s)
{
    for (int i = 0; i < s->problem_count; i++) {
        free(s->problems[i].family);
        free(s->problems[i].text);
    }
    free(s->problems);
    free(s->families);
    free(s);
}

static int declares(const user_template *item, const char *family)
{
    return item->family && strcmp(item->family, family) == 0;
}

/* "FIRST: family 'F' is also declared by SECOND[, THIRD]; ..." for a family that several user
 * templates declare; items[first] is the first of them. */
static char *duplicate_text(const user_template *const *items, int count, int first)
{
    const char *family = items[first]->family;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s: family '%s' is also declared by ", items[first]->origin, family);
    for (int i = first + 1, n = 0; i < count; i++)
        if (declares(items[i], family))
            pj_sb_appendf(&sb, "%s%s", n++ ? ", " : "", items[i]->origin);
    pj_sb_append(&sb, "; rename the family in one of them or remove one");
    return pj_sb_take(&sb);
}

static int builtin_index(const struct pj_templates *t, const char *family)
{
    for (int i = 0; i < t->builtin_count; i++)
        if (strcmp(t->builtins[i].family, family) == 0)
            return i;
    return -1;
}

/* One user family (items[i] its first declarer): available, or a problem of its own. */
static ptxjit_status compose_user(snapshot *s, const struct pj_templates *t,
                                  const user_template *const *items, int count, int i,
                                  const pj_logger *logger)
{
    const user_template *item = items[i];
    int declarers = 0;
    for (int j = i; j < count; j++)
        declarers += declares(items[j], item->family);
    ptxjit_status status = PTXJIT_OK;
    if (declarers > 1) {
        status = add_problem(s, item->family, duplicate_text(items, count, i));
        for (int j = i; j < count && status == PTXJIT_OK; j++)
            if (declares(items[j], item->family) && items[j]->problem)
                status = add_problem(s, item->family, pj_strdup(items[j]->problem));
        return status;
    }
    if (!item->template)
        return add_problem(s, item->family, pj_strdup(item->problem));
    if (builtin_index(t, item->family) >= 0)
        pj_log(logger, PTXJIT_LOG_INFO, "%s: family %s replaces the built-in template",
               item->origin, item->family);
    return add_family(s, item->template);
}

/* The snapshot of the directories' templates, the memory templates and the built-in ones
 * that no user template replaces. */
static ptxjit_status compose(snapshot **out, const struct pj_templates *t, const pj_logger *logger)
{
    int count = t->dirs.count + t->memory.count;
    snapshot *s = calloc(1, sizeof *s);
    const user_template **items = calloc((size_t)count + 1, sizeof *items);
    ptxjit_status status = s && items ? PTXJIT_OK
                                      : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; items && i < count; i++)
        items[i] = i < t->dirs.count ? &t->dirs.items[i] : &t->memory.items[i - t->dirs.count];
    for (int i = 0; i < count && status == PTXJIT_OK; i++) {
        int first = 1;
        for (int j = 0; j < i && first && items[i]->family; j++)
            first = !declares(items[j], items[i]->family);
        if (!items[i]->family)
            status = add_problem(s, NULL, pj_strdup(items[i]->problem));
        else if (first)
            status = compose_user(s, t, items, count, i, logger);
    }
    for (int b = 0; b < t->builtin_count && status == PTXJIT_OK; b++) {
        int replaced = 0;
        for (int i = 0; i < count && !replaced; i++)
            replaced = declares(items[i], t->builtins[b].family);
        if (!replaced)
            status = add_family(s, &t->builtins[b]);
    }
    free(items);
    if (status != PTXJIT_OK) {
        if (s)
            snapshot_free(s);
        return status;
    }
    *out = s;
    return PTXJIT_OK;
}

static int has_problem(const snapshot *s, const char *text)
{
    for (int i = 0; s && i < s->problem_count; i++)
        if (strcmp(s->problems[i].text, text) == 0)
            return 1;
    return 0;
}

/* Makes the registry's lists current: a new snapshot, the fast path of exact requests
 * forgotten (it would hand out kernels of replaced templates), and each problem that is new
 * logged once. Caller holds t->writer. */
static ptxjit_status publish(ptxjit_context *context)
{
    struct pj_templates *t = context->templates;
    snapshot *fresh;
    ptxjit_status status = compose(&fresh, t, &context->logger);
    if (status != PTXJIT_OK)
        return status;
    pthread_mutex_lock(&context->lock);
    snapshot *old = t->current;
    fresh->generation = old ? old->generation + 1 : 1;
    fresh->older = old;
    t->current = fresh;
    pj_aliases_forget(context);
    pthread_mutex_unlock(&context->lock);
    for (int i = 0; i < fresh->problem_count; i++) {
        const problem *p = &fresh->problems[i];
        if (has_problem(old, p->text))
            continue;
        if (p->family)
            pj_log(&context->logger, PTXJIT_LOG_WARNING, "%s (family '%s' is unavailable)",
                   p->text, p->family);
        else
            pj_log(&context->logger, PTXJIT_LOG_WARNING, "%s", p->text);
    }
    return PTXJIT_OK;
}

size_t pj_templates_max_bytes(const ptxjit_context *context)
{
    return context->templates ? context->templates->max_bytes : (size_t)DEFAULT_TEMPLATE_MAX_BYTES;
}

/* options.template_max_bytes, else $PTXJIT_TEMPLATE_MAX_BYTES, else the default; a variable
 * that is not a number of bytes is warned about and the default used. */
static size_t configured_max_bytes(const ptxjit_options *options, const pj_logger *logger)
{
    uint64_t value = options->template_max_bytes;
    const char *text = getenv("PTXJIT_TEMPLATE_MAX_BYTES");
    if (!value && text && *text && !pj_count_parse(&value, text, strlen(text), PJ_COUNT_MAX)) {
        pj_log(logger, PTXJIT_LOG_WARNING,
               "PTXJIT_TEMPLATE_MAX_BYTES='%.64s' is not a number of bytes; template files of "
               "up to %llu bytes are read. Fix it or unset it",
               text, (unsigned long long)DEFAULT_TEMPLATE_MAX_BYTES);
        value = 0;
    }
    value = value ? value : DEFAULT_TEMPLATE_MAX_BYTES;
    return value > SIZE_MAX - 1 ? SIZE_MAX - 1 : (size_t)value;
}

/* options' directories, then the variable's: "A:B", or NULL when there are none. */
static ptxjit_status join_path(char **out, const char *option, const char *variable)
{
    *out = NULL;
    option = option && *option ? option : NULL;
    variable = variable && *variable ? variable : NULL;
    if (!option && !variable)
        return PTXJIT_OK;
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb, "%s%s%s", option ? option : "", option && variable ? ":" : "",
                  variable ? variable : "");
    *out = pj_sb_take(&sb);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

ptxjit_status pj_templates_open(ptxjit_context *context, const ptxjit_options *options)
{
    struct pj_templates *t = calloc(1, sizeof *t);
    if (!t)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    pthread_mutex_init(&t->writer, NULL);
    context->templates = t; /* from here on, ptxjit_close frees it */
    ptxjit_status status =
        join_path(&t->path, options->template_path, getenv("PTXJIT_TEMPLATE_PATH"));
    /* The built-in templates: one table for the whole process, made at build time with their
     * schemas (pj_builtin_templates), so that every context shares them and none parses. */
    t->builtins = pj_builtin_templates;
    t->builtin_count = pj_builtin_template_count;
    t->max_bytes = configured_max_bytes(options, &context->logger);
    if (status == PTXJIT_OK)
        status = read_dirs(&t->dirs, t, NULL, &context->logger);
    if (status == PTXJIT_OK)
        status = publish(context);
    return status;
}

void pj_templates_close(ptxjit_context *context)
{
    struct pj_templates *t = context->templates;
    if (!t)
        return;
    for (snapshot *s = t->current, *older; s; s = older) {
        older = s->older;
        snapshot_free(s);
    }
    list_free(&t->dirs);
    list_free(&t->memory);
    for (pj_template *template = t->all, *next; template; template = next) {
        next = template->next;
        pj_schema_free(template->schema);
        free(template->description);
        free(template);
    }
    free(t->path);
    pthread_mutex_destroy(&t->writer);
    free(t);
    context->templates = NULL;
}

/* The current snapshot; it stays valid until ptxjit_close. */
static const snapshot *current(ptxjit_context *context)
{
    pthread_mutex_lock(&context->lock);
    const snapshot *s = context->templates->current;
    pthread_mutex_unlock(&context->lock);
    return s;
}

uint64_t pj_templates_generation(ptxjit_context *context)
{
    return context->templates->current->generation;
}

/* A family that a problem makes unavailable: every problem that names it. */
static ptxjit_status unavailable(const snapshot *s, const char *family)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; i < s->problem_count; i++)
        if (s->problems[i].family && strcmp(s->problems[i].family, family) == 0)
            pj_sb_appendf(&sb, "%s%s", sb.length ? "; " : "", s->problems[i].text);
    if (!sb.length && !sb.failed)
        return PTXJIT_OK;
    ptxjit_status status =
        sb.failed ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory")
                  : pj_error(PTXJIT_ERR_TEMPLATE,
                             "family '%s' is unavailable: %s (once the template is fixed, "
                             "ptxjit_reload_templates reads it again)",
                             family, sb.data);
    pj_sb_free(&sb);
    return status;
}

/* Unknown: the known families, and the files whose family could not be read (one of them
 * may be the one asked for). */
static ptxjit_status unknown(const snapshot *s, const char *family)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; i < s->family_count; i++)
        pj_sb_appendf(&sb, "%s%s", i ? ", " : "", s->families[i]->family);
    if (!s->family_count)
        pj_sb_append(&sb, "none");
    for (int i = 0, n = 0; i < s->problem_count; i++)
        if (!s->problems[i].family)
            pj_sb_appendf(&sb, "%s%s", n++ ? "; " : "; templates that could not be read: ",
                          s->problems[i].text);
    ptxjit_status status =
        sb.failed ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory")
                  : pj_error(PTXJIT_ERR_UNKNOWN_FAMILY, "unknown kernel family '%s'; known: %s",
                             family, sb.data);
    pj_sb_free(&sb);
    return status;
}

ptxjit_status pj_templates_find(pj_template **out, uint64_t *generation, ptxjit_context *context,
                                const char *family)
{
    if (!context || !family)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "context and family must not be NULL");
    const snapshot *s = current(context);
    if (generation)
        *generation = s->generation;
    for (int i = 0; i < s->family_count; i++)
        if (strcmp(s->families[i]->family, family) == 0) {
            *out = s->families[i];
            return PTXJIT_OK;
        }
    ptxjit_status status = unavailable(s, family);
    return status != PTXJIT_OK ? status : unknown(s, family);
}

const pj_schema *pj_context_find_schema(ptxjit_context *context, const char *family)
{
    const snapshot *s = current(context);
    for (int i = 0; i < s->family_count; i++)
        if (strcmp(s->families[i]->family, family) == 0)
            return pj_template_schema(s->families[i]);
    return NULL;
}

ptxjit_status pj_context_schema(const pj_schema **out, ptxjit_context *context,
                                const char *family)
{
    pj_template *template;
    ptxjit_status status = pj_templates_find(&template, NULL, context, family);
    if (status == PTXJIT_OK)
        *out = pj_template_schema(template);
    return status;
}

int ptxjit_family_count(ptxjit_context *context)
{
    return context ? current(context)->family_count : 0;
}

const char *ptxjit_family_name(ptxjit_context *context, int index)
{
    const snapshot *s = context ? current(context) : NULL;
    return s && index >= 0 && index < s->family_count ? s->families[index]->family : NULL;
}

const char *ptxjit_family_origin(ptxjit_context *context, int index)
{
    const snapshot *s = context ? current(context) : NULL;
    return s && index >= 0 && index < s->family_count ? s->families[index]->origin : NULL;
}

int ptxjit_template_problem_count(ptxjit_context *context)
{
    return context ? current(context)->problem_count : 0;
}

const char *ptxjit_template_problem(ptxjit_context *context, int index)
{
    const snapshot *s = context ? current(context) : NULL;
    return s && index >= 0 && index < s->problem_count ? s->problems[index].text : NULL;
}

/* The memory template fresh in place of the one of its family (or added), then published;
 * on failure the lists are as they were. Caller holds t->writer; fresh is taken. */
static ptxjit_status commit_memory(ptxjit_context *context, user_template *fresh)
{
    struct pj_templates *t = context->templates;
    int index = -1;
    for (int i = 0; i < t->memory.count && index < 0; i++)
        if (declares(&t->memory.items[i], fresh->family))
            index = i;
    if (index < 0 && !list_reserve(&t->memory)) {
        user_free(fresh);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    user_template replaced = index >= 0 ? t->memory.items[index] : (user_template){0};
    if (index >= 0)
        t->memory.items[index] = *fresh;
    else
        t->memory.items[t->memory.count++] = *fresh;
    ptxjit_status status = publish(context);
    if (status != PTXJIT_OK) {
        if (index >= 0)
            t->memory.items[index] = replaced;
        else
            t->memory.count--;
        user_free(fresh);
        return status;
    }
    user_free(&replaced); /* its template stays: kernels made from it may still be in use */
    return PTXJIT_OK;
}

/* Parses text as origin; a family that a directory template declares is refused. Caller holds
 * t->writer. */
static ptxjit_status add_memory(ptxjit_context *context, const char *origin, const char *text)
{
    struct pj_templates *t = context->templates;
    char *normal = pj_template_normalize(text);
    pj_schema *schema = NULL;
    ptxjit_status status = normal ? pj_schema_parse(&schema, normal, origin)
                                  : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    free(normal);
    if (status != PTXJIT_OK)
        return status;
    const user_template *other = declarer(&t->dirs, schema->family);
    if (other) {
        status = pj_error(PTXJIT_ERR_TEMPLATE,
                          "%s: family '%s' is already declared by %s; rename the family in one "
                          "of them or remove one",
                          origin, schema->family, other->origin);
        pj_schema_free(schema);
        return status;
    }
    user_template fresh = {.origin = pj_strdup(origin), .family = pj_strdup(schema->family)};
    if (!fresh.origin || !fresh.family)
        pj_schema_free(schema);
    else
        fresh.template = keep(t, schema);
    if (!fresh.template) {
        user_free(&fresh);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return commit_memory(context, &fresh);
}

ptxjit_status ptxjit_add_template(ptxjit_context *context, const char *name, const char *text)
{
    if (!context || !name || !*name || !text)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "ptxjit_add_template needs a context, a name (a label such as "
                        "\"axpy.cu\") and the template's text");
    pj_strbuf origin;
    pj_sb_init(&origin);
    pj_sb_appendf(&origin, PJ_ORIGIN_MEMORY "%s", name);
    if (origin.failed)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    struct pj_templates *t = context->templates;
    pthread_mutex_lock(&t->writer);
    ptxjit_status status = add_memory(context, origin.data, text);
    pthread_mutex_unlock(&t->writer);
    pj_sb_free(&origin);
    return status;
}

ptxjit_status ptxjit_reload_templates(ptxjit_context *context)
{
    if (!context)
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "ptxjit_reload_templates: context is NULL");
    struct pj_templates *t = context->templates;
    pthread_mutex_lock(&t->writer);
    user_list fresh = {0};
    ptxjit_status status = read_dirs(&fresh, t, &t->dirs, &context->logger);
    if (status == PTXJIT_OK) {
        user_list old = t->dirs;
        t->dirs = fresh;
        status = publish(context);
        fresh = status == PTXJIT_OK ? old : fresh;
        if (status != PTXJIT_OK)
            t->dirs = old;
    }
    list_free(&fresh);
    pthread_mutex_unlock(&t->writer);
    return status;
}

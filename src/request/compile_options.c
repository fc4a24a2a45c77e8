/* compile_options.c — compile options as a closed list: -DNAME[=VALUE], -I DIR, -lineinfo,
 * -use_fast_math, -G. NVRTC takes its options as an argument vector, so no shell ever sees
 * them; the closed list keeps out the options that would change what ptxjit relies on (the
 * architecture, the output, the language standard) or name files to write. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "compile_options.h"

#define ALLOWED                                                                               \
    "allowed: -DNAME or -DNAME=VALUE (NAME a C identifier; VALUE printable, without spaces, " \
    "quotes or backslashes), -I DIR or -IDIR (an existing directory), -lineinfo, "           \
    "-use_fast_math (or --use_fast_math), -G"

/* The flags, in the fixed order of the canonical form, and the spellings of each. */
static const struct {
    const char *word;
    const char *also;
} flags[] = {{"-lineinfo", NULL}, {"-use_fast_math", "--use_fast_math"}, {"-G", NULL}};
#define FLAG_COUNT (int)PJ_ARRAY_SIZE(flags)

/* What the words said, before the canonical strings are made. */
typedef struct {
    const char *defines[PJ_COMPILE_OPTIONS_MAX]; /* "-DNAME[=VALUE]", pointing into words */
    char *given[PJ_COMPILE_OPTIONS_MAX];         /* include dirs as written */
    char *resolved[PJ_COMPILE_OPTIONS_MAX];      /* the same, realpath */
    int define_count, include_count;
    int flag_set[FLAG_COUNT];
} parsed;

static void parsed_free(parsed *p)
{
    for (int i = 0; i < p->include_count; i++) {
        free(p->given[i]);
        free(p->resolved[i]);
    }
}

static ptxjit_status too_many(void)
{
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                    "more than %d compile options (defines and include directories); pass "
                    "fewer, e.g. collect the defines in a header under an -I directory",
                    PJ_COMPILE_OPTIONS_MAX);
}

static int is_identifier(const char *s, size_t length)
{
    if (length == 0 || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
        return 0;
    for (size_t i = 1; i < length; i++)
        if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
            return 0;
    return 1;
}

/* Printable, no space, no quote, no backslash: a value NVRTC takes as one token, with
 * nothing a later reader could take for the end of a string. */
static int is_plain_value(const char *s)
{
    for (; *s; s++)
        if (!isgraph((unsigned char)*s) || *s == '"' || *s == '\'' || *s == '\\')
            return 0;
    return 1;
}

static ptxjit_status add_define(parsed *p, const char *word)
{
    const char *name = word + 2, *equals = strchr(name, '=');
    size_t length = equals ? (size_t)(equals - name) : strlen(name);
    if (!is_identifier(name, length))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "compile option '%s': '%.*s' is not a C identifier (letters, digits and "
                        "_, not starting with a digit); " ALLOWED,
                        word, (int)length, name);
    if (equals && !is_plain_value(equals + 1))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "compile option '%s': the value must be printable characters without "
                        "spaces, quotes or backslashes; " ALLOWED,
                        word);
    for (int i = 0; i < p->define_count; i++) {
        const char *other = p->defines[i] + 2;
        if (strncmp(other, name, length) != 0 || (other[length] && other[length] != '='))
            continue;
        if (strcmp(other, name) == 0)
            return PTXJIT_OK; /* the same define again */
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "compile option '%s' defines %.*s again with another value (it was "
                        "'%s'); give each name one value",
                        word, (int)length, name, p->defines[i]);
    }
    if (p->define_count + p->include_count >= PJ_COMPILE_OPTIONS_MAX)
        return too_many();
    p->defines[p->define_count++] = word;
    return PTXJIT_OK;
}

static ptxjit_status add_include(parsed *p, const char *dir)
{
    struct stat st;
    int found = stat(dir, &st) == 0;
    if (!found || !S_ISDIR(st.st_mode))
        return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                        "compile option -I '%s': not an existing directory (%s); give a "
                        "directory that exists",
                        dir, found ? "not a directory" : strerror(errno));
    char *resolved = realpath(dir, NULL);
    if (!resolved)
        return errno == ENOMEM ? pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory")
                               : pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                                          "compile option -I '%s': %s", dir, strerror(errno));
    for (int i = 0; i < p->include_count; i++)
        if (strcmp(p->resolved[i], resolved) == 0) {
            free(resolved); /* the same directory again: the first place in the order counts */
            return PTXJIT_OK;
        }
    if (p->define_count + p->include_count >= PJ_COMPILE_OPTIONS_MAX) {
        free(resolved);
        return too_many();
    }
    char *given = pj_strdup(dir);
    if (!given) {
        free(resolved);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    p->given[p->include_count] = given;
    p->resolved[p->include_count++] = resolved;
    return PTXJIT_OK;
}

static int flag_index(const char *word)
{
    for (int f = 0; f < FLAG_COUNT; f++)
        if (strcmp(word, flags[f].word) == 0 || (flags[f].also && strcmp(word, flags[f].also) == 0))
            return f;
    return -1;
}

/* One word (and for a lone -I, the word after it: *next). */
static ptxjit_status take_word(parsed *p, char *word, char *next, int *used_next)
{
    *used_next = 0;
    int flag = flag_index(word);
    if (flag >= 0) {
        p->flag_set[flag] = 1;
        return PTXJIT_OK;
    }
    if (strncmp(word, "-D", 2) == 0 && word[2])
        return add_define(p, word);
    if (strcmp(word, "-I") == 0) {
        if (!next)
            return pj_error(PTXJIT_ERR_INVALID_ARGUMENT,
                            "compile option '-I' needs a directory after it; " ALLOWED);
        *used_next = 1;
        return add_include(p, next);
    }
    if (strncmp(word, "-I", 2) == 0)
        return add_include(p, word + 2);
    return pj_error(PTXJIT_ERR_INVALID_ARGUMENT, "compile option '%s' is not allowed; " ALLOWED,
                    word);
}

/* Splits text (modified in place) at whitespace and takes each word. */
static ptxjit_status take_text(parsed *p, char *text)
{
    char *words[2 * PJ_COMPILE_OPTIONS_MAX + 8];
    int count = 0;
    for (char *s = text; *s;) {
        while (isspace((unsigned char)*s))
            s++;
        if (!*s)
            break;
        if (count == (int)PJ_ARRAY_SIZE(words))
            return too_many();
        words[count++] = s;
        while (*s && !isspace((unsigned char)*s))
            s++;
        if (*s)
            *s++ = '\0';
    }
    for (int i = 0; i < count; i++) {
        int used_next = 0;
        ptxjit_status status = take_word(p, words[i], i + 1 < count ? words[i + 1] : NULL,
                                         &used_next);
        if (status != PTXJIT_OK)
            return status;
        i += used_next;
    }
    return PTXJIT_OK;
}

/* The canonical form (dirs as given) or the resolved one; also the NVRTC words. */
static char *join(const parsed *p, char *const *dirs)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; i < p->define_count; i++)
        pj_sb_appendf(&sb, "%s%s", sb.length ? " " : "", p->defines[i]);
    for (int i = 0; i < p->include_count; i++)
        pj_sb_appendf(&sb, "%s-I%s", sb.length ? " " : "", dirs[i]);
    for (int f = 0; f < FLAG_COUNT; f++)
        if (p->flag_set[f])
            pj_sb_appendf(&sb, "%s%s", sb.length ? " " : "", flags[f].word);
    return pj_sb_take(&sb); /* "" when nothing is given */
}

static ptxjit_status fill(pj_compile_options *out, parsed *p)
{
    int total = p->define_count + p->include_count + FLAG_COUNT;
    out->words = calloc((size_t)total, sizeof *out->words);
    out->include_dirs = calloc((size_t)p->include_count + 1, sizeof *out->include_dirs);
    out->canonical = join(p, p->given);
    out->resolved = join(p, p->resolved);
    if (!out->words || !out->include_dirs || !out->canonical || !out->resolved)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < p->define_count; i++)
        if (!(out->words[out->word_count++] = pj_strdup(p->defines[i])))
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < p->include_count; i++) {
        pj_strbuf sb;
        pj_sb_init(&sb);
        pj_sb_appendf(&sb, "-I%s", p->resolved[i]);
        if (!(out->words[out->word_count++] = pj_sb_take(&sb)))
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
        out->include_dirs[out->include_dir_count++] = p->resolved[i];
        p->resolved[i] = NULL; /* now out's */
    }
    for (int f = 0; f < FLAG_COUNT; f++)
        if (p->flag_set[f] && !(out->words[out->word_count++] = pj_strdup(flags[f].word)))
            return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    return PTXJIT_OK;
}

ptxjit_status pj_compile_options_parse(pj_compile_options *out, const char *defaults,
                                       const char *request)
{
    memset(out, 0, sizeof *out);
    parsed p;
    memset(&p, 0, sizeof p);
    char *copies[2] = {pj_strdup(defaults ? defaults : ""), pj_strdup(request ? request : "")};
    ptxjit_status status = copies[0] && copies[1]
                               ? PTXJIT_OK
                               : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    for (int i = 0; i < 2 && status == PTXJIT_OK; i++)
        status = take_text(&p, copies[i]);
    if (status == PTXJIT_OK)
        status = fill(out, &p); /* the defines still point into copies */
    parsed_free(&p);
    free(copies[0]);
    free(copies[1]);
    if (status != PTXJIT_OK)
        pj_compile_options_free(out);
    return status;
}

void pj_compile_options_free(pj_compile_options *options)
{
    for (int i = 0; i < options->word_count; i++)
        free(options->words[i]);
    for (int i = 0; i < options->include_dir_count; i++)
        free(options->include_dirs[i]);
    free(options->words);
    free(options->include_dirs);
    free(options->canonical);
    free(options->resolved);
    memset(options, 0, sizeof *options);
}

int pj_compile_options_empty(const pj_compile_options *options)
{
    return !options->canonical || !options->canonical[0];
}

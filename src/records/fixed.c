/* fixed.c — a tuning's fixed parameters, read against the schema and made canonical. */
#include <stdlib.h>
#include <string.h>

#include "records/fixed.h"

ptxjit_status pj_tune_each_word(const char *text, const char *separators, pj_tune_word_fn *visit,
                                void *user)
{
    ptxjit_status status = PTXJIT_OK;
    for (const char *s = text ? text : ""; *s && status == PTXJIT_OK;) {
        s += strspn(s, separators);
        size_t length = strcspn(s, separators);
        if (length)
            status = visit(user, s, length);
        s += length;
    }
    return status;
}

static ptxjit_status unknown_param(const pj_schema *schema, const char *name, size_t n,
                                   const char *where)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; i < schema->param_count; i++)
        pj_sb_appendf(&sb, "%s%s", i ? ", " : "", schema->params[i].name);
    ptxjit_status status =
        pj_error(PTXJIT_ERR_PARAM, "%s: %s names unknown parameter '%.*s'; %s takes: %s",
                 schema->family, where, (int)n, name, schema->family, sb.data ? sb.data : "?");
    pj_sb_free(&sb);
    return status;
}

ptxjit_status pj_tune_param_named(int *index, const pj_schema *schema, const char *word, size_t n,
                                  const char *where)
{
    *index = -1;
    for (int i = 0; i < schema->param_count; i++)
        if (strlen(schema->params[i].name) == n && strncmp(schema->params[i].name, word, n) == 0)
            *index = i;
    return *index < 0 ? unknown_param(schema, word, n, where) : PTXJIT_OK;
}

static ptxjit_status take_fixed(void *user, const char *word, size_t length)
{
    pj_tune_fixed *set = user;
    const char *equals = memchr(word, '=', length);
    if (!equals || equals == word || equals == word + length - 1)
        return pj_error(PTXJIT_ERR_PARAM, "%s: fixed parameter '%.*s' is not key=value",
                        set->schema->family, (int)length, word);
    size_t n = (size_t)(equals - word);
    if (n == 7 && strncmp(word, "backend", 7) == 0)
        return PTXJIT_OK; /* the backend is a field of its own */
    int index;
    ptxjit_status status = pj_tune_param_named(&index, set->schema, word, n, "a fixed parameter");
    if (status != PTXJIT_OK)
        return status;
    if (set->seen[index])
        return pj_error(PTXJIT_ERR_PARAM, "%s: parameter '%.*s' is given twice",
                        set->schema->family, (int)n, word);
    int is_auto = length - n - 1 == 4 && strncmp(equals + 1, "auto", 4) == 0;
    set->seen[index] = is_auto ? 2 : 1;
    if (is_auto)
        return PTXJIT_OK;
    char *copy = pj_strndup(word, length);
    char **grown = copy ? realloc(set->words, (size_t)(set->count + 1) * sizeof *grown) : NULL;
    if (!grown) {
        free(copy);
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    }
    set->words = grown;
    grown[set->count++] = copy;
    return PTXJIT_OK;
}

static int compare_words(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void pj_tune_fixed_free(pj_tune_fixed *set)
{
    for (int i = 0; i < set->count; i++)
        free(set->words[i]);
    free(set->words);
    free(set->seen);
    memset(set, 0, sizeof *set);
}

ptxjit_status pj_tune_fixed_read(pj_tune_fixed *set, const pj_schema *schema, const char *fixed)
{
    memset(set, 0, sizeof *set);
    set->schema = schema;
    set->seen = calloc((size_t)schema->param_count + 1, sizeof *set->seen);
    if (!set->seen)
        return pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    ptxjit_status status = pj_tune_each_word(fixed, " \t\n,", take_fixed, set);
    if (status == PTXJIT_OK && set->count > 1) /* no words: words is NULL, which qsort may
                                                  not be given */
        qsort(set->words, (size_t)set->count, sizeof *set->words, compare_words);
    return status;
}

char *pj_tune_fixed_text(const pj_tune_fixed *set)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, "");
    for (int i = 0; i < set->count; i++)
        pj_sb_appendf(&sb, "%s%s", i ? " " : "", set->words[i]);
    return pj_sb_take(&sb);
}

ptxjit_status pj_tune_fixed_canonical(char **out, const pj_schema *schema, const char *fixed)
{
    pj_tune_fixed set;
    ptxjit_status status = pj_tune_fixed_read(&set, schema, fixed);
    if (status == PTXJIT_OK && !(*out = pj_tune_fixed_text(&set)))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    pj_tune_fixed_free(&set);
    return status;
}

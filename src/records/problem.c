/* problem.c — a built-in family's tuning problem, from the words a caller writes to the
 * canonical text that records are keyed by. */
#include <string.h>

#include "records/problem.h"
#include "util/count.h"

static ptxjit_status problem_error(const char *family, const char *const *names, const char *why,
                                   const char *text)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    for (int i = 0; names[i]; i++)
        pj_sb_appendf(&sb, "%s%s=N", i ? " " : "", names[i]);
    ptxjit_status status =
        pj_error(PTXJIT_ERR_PARAM, "%s: problem '%s': %s; a %s problem is written \"%s\" (each a "
                 "count from 1 to 2^48; 2^30 is accepted)", family, text, why, family,
                 sb.data ? sb.data : "");
    pj_sb_free(&sb);
    return status;
}

ptxjit_status pj_tune_problem_words(uint64_t *values, const char *text, const char *family,
                                    const char *const *names)
{
    int count = 0, seen[PJ_TUNE_MAX_SIZES] = {0};
    while (names[count])
        count++;
    for (const char *s = text; *s;) {
        s += strspn(s, " \t\n,");
        size_t length = strcspn(s, " \t\n,");
        if (!length)
            break;
        const char *equals = memchr(s, '=', length);
        int index = -1;
        for (int i = 0; equals && i < count; i++)
            if (strlen(names[i]) == (size_t)(equals - s) && !strncmp(names[i], s, (size_t)(equals - s)))
                index = i;
        if (index < 0 || seen[index] ||
            !pj_count_parse(&values[index], equals + 1, length - (size_t)(equals - s) - 1,
                            PJ_COUNT_MAX))
            return problem_error(family, names,
                                 index < 0 ? "an unknown word" : seen[index] ? "a word given twice"
                                                                : "not a count from 1 to 2^48",
                                 text);
        seen[index] = 1;
        s += length;
    }
    for (int i = 0; i < count; i++)
        if (!seen[i])
            return problem_error(family, names, "a size is missing", text);
    return PTXJIT_OK;
}

char *pj_tune_problem_text(const char *const *names, const uint64_t *values)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, "");
    for (int i = 0; names[i]; i++) {
        char number[24];
        pj_sb_appendf(&sb, "%s%s=%s", i ? " " : "", names[i],
                      pj_format_int(number, (long long)values[i]));
    }
    return pj_sb_take(&sb);
}

ptxjit_status pj_tune_problem_canonical(char **out, uint64_t *values, const char *text,
                                        const char *family, const char *const *names)
{
    ptxjit_status status = pj_tune_problem_words(values, text, family, names);
    if (status == PTXJIT_OK && !(*out = pj_tune_problem_text(names, values)))
        status = pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
    return status;
}

/* bucket.c — problem buckets: a tuning record kept for a range of shapes instead of one.
 * "pow2:" buckets round each integer of the problem up to a power of two, so that one tuning
 * at rows=3000 cols=1000 serves every problem in 2049..4096 x 513..1024. */
#include <stdlib.h>
#include <string.h>

#include "records/bucket.h"

#define POW2_PREFIX "pow2:"

/* value as a decimal integer >= 1, or 0 when the word's value is something else. */
static unsigned long long integer_value(const char *value, size_t length)
{
    if (!length || length > 19)
        return 0;
    unsigned long long n = 0;
    for (size_t i = 0; i < length; i++) {
        if (value[i] < '0' || value[i] > '9')
            return 0;
        n = n * 10 + (unsigned long long)(value[i] - '0');
    }
    return n;
}

static unsigned long long round_up_pow2(unsigned long long n)
{
    unsigned long long p = 1;
    while (p < n && p <= (1ULL << 62))
        p <<= 1;
    return p < n ? n : p;
}

ptxjit_status pj_tune_bucket(char **out, const char *problem)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, POW2_PREFIX);
    for (const char *s = problem; *s;) {
        s += strspn(s, " \t");
        size_t length = strcspn(s, " \t");
        if (!length)
            break;
        const char *equals = memchr(s, '=', length);
        size_t name = equals ? (size_t)(equals - s) : length;
        unsigned long long n = equals ? integer_value(equals + 1, length - name - 1) : 0;
        if (n)
            pj_sb_appendf(&sb, " %.*s=%llu", (int)name, s, round_up_pow2(n));
        else
            pj_sb_appendf(&sb, " %.*s", (int)length, s);
        s += length;
    }
    *out = pj_sb_take(&sb);
    return *out ? PTXJIT_OK : pj_error(PTXJIT_ERR_OUT_OF_MEMORY, "out of memory");
}

/* count.c — see count.h. */
#include "count.h"

#include <string.h>
#include <strings.h>

/* Decimal digits at *at (at least one) into *value, which stays at most limit; 0 when none or
 * more. */
static int digits(uint64_t *value, const char **at, const char *end, uint64_t limit)
{
    const char *s = *at;
    uint64_t v = 0;
    for (; s < end && *s >= '0' && *s <= '9'; s++) {
        v = v * 10 + (uint64_t)(*s - '0');
        if (v > limit)
            return 0;
    }
    if (s == *at)
        return 0;
    *value = v;
    *at = s;
    return 1;
}

int pj_count_parse(uint64_t *out, const char *text, size_t length, uint64_t max)
{
    const char *at = text, *end = text + length;
    uint64_t value, power, add = 0;
    max = max < PJ_COUNT_MAX ? max : PJ_COUNT_MAX; /* and so no digit overflows */
    if (!text || !digits(&value, &at, end, max > 63 ? max : 63))
        return 0;
    if (at < end && *at == '^' && value == 2) { /* 2^P, 2^P+N */
        at++;
        if (!digits(&power, &at, end, 63) || (1ull << power) > max)
            return 0;
        value = 1ull << power;
        if (at < end && *at == '+') {
            at++;
            if (!digits(&add, &at, end, max))
                return 0;
        }
        if (add > max - value)
            return 0;
        value += add;
    }
    if (at != end || value == 0 || value > max)
        return 0;
    *out = value;
    return 1;
}

int pj_switch_parse(const char *text)
{
    if (!text || !*text || !strcmp(text, "0") || !strcasecmp(text, "no") ||
        !strcasecmp(text, "false"))
        return 0;
    if (!strcmp(text, "1") || !strcasecmp(text, "yes") || !strcasecmp(text, "true"))
        return 1;
    return -1;
}

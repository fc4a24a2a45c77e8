/* strbuf.c — growable strings and small string helpers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void pj_sb_init(pj_strbuf *sb)
{
    memset(sb, 0, sizeof *sb);
}

static int sb_reserve(pj_strbuf *sb, size_t extra)
{
    if (sb->failed)
        return 0;
    size_t need = sb->length + extra + 1;
    if (need <= sb->capacity)
        return 1;
    size_t capacity = sb->capacity ? sb->capacity : 64;
    while (capacity < need)
        capacity *= 2;
    char *data = realloc(sb->data, capacity);
    if (!data) {
        sb->failed = 1;
        return 0;
    }
    sb->data = data;
    sb->capacity = capacity;
    return 1;
}

void pj_sb_append_n(pj_strbuf *sb, const char *text, size_t n)
{
    if (!sb_reserve(sb, n))
        return;
    memcpy(sb->data + sb->length, text, n);
    sb->length += n;
    sb->data[sb->length] = '\0';
}

void pj_sb_append(pj_strbuf *sb, const char *text)
{
    pj_sb_append_n(sb, text, strlen(text));
}

void pj_sb_vappendf(pj_strbuf *sb, const char *format, va_list args)
{
    va_list copy;
    va_copy(copy, args);
    int n = vsnprintf(NULL, 0, format, copy);
    va_end(copy);
    if (n < 0 || !sb_reserve(sb, (size_t)n))
        return;
    vsnprintf(sb->data + sb->length, (size_t)n + 1, format, args);
    sb->length += (size_t)n;
}

void pj_sb_appendf(pj_strbuf *sb, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    pj_sb_vappendf(sb, format, args);
    va_end(args);
}

char *pj_format_int(char out[24], long long value)
{
    char digits[24];
    int n = 0;
    unsigned long long magnitude = value < 0 ? 0ull - (unsigned long long)value
                                             : (unsigned long long)value;
    do
        digits[n++] = (char)('0' + magnitude % 10);
    while (magnitude /= 10);
    char *at = out;
    if (value < 0)
        *at++ = '-';
    while (n)
        *at++ = digits[--n];
    *at = '\0';
    return out;
}

void pj_copy_string(char *out, size_t size, const char *text)
{
    if (!size)
        return;
    size_t n = strnlen(text, size - 1);
    memcpy(out, text, n);
    out[n] = '\0';
}

char *pj_sb_take(pj_strbuf *sb)
{
    char *data = NULL;
    if (!sb->failed) {
        data = sb->data ? sb->data : calloc(1, 1);
        sb->data = NULL;
    }
    pj_sb_free(sb);
    return data;
}

void pj_sb_free(pj_strbuf *sb)
{
    free(sb->data);
    pj_sb_init(sb);
}

char *pj_strndup(const char *text, size_t n)
{
    char *copy = malloc(n + 1);
    if (!copy)
        return NULL;
    memcpy(copy, text, n);
    copy[n] = '\0';
    return copy;
}

char *pj_strdup(const char *text)
{
    return text ? pj_strndup(text, strlen(text)) : NULL;
}

/* xml_check.c — see xml_check.h. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "xml_check.h"

#define DEPTH_MAX 64

static char fault[160];

static const char *fail(const char *what, const char *text, const char *at)
{
    snprintf(fault, sizeof fault, "%s at offset %zu", what, (size_t)(at - text));
    return fault;
}

/* An entity reference at p ("&amp;" ...): its length, or 0. */
static size_t entity(const char *p)
{
    static const char *const named[] = {"&amp;", "&lt;", "&gt;", "&quot;", "&apos;"};
    for (size_t i = 0; i < sizeof named / sizeof *named; i++)
        if (strncmp(p, named[i], strlen(named[i])) == 0)
            return strlen(named[i]);
    if (p[1] == '#') {
        size_t n = 2;
        while (isalnum((unsigned char)p[n]))
            n++;
        return p[n] == ';' && n > 2 ? n + 1 : 0;
    }
    return 0;
}

/* Character data from p up to the next '<' (or the end): '&' only as an entity. */
static const char *text_run(const char *p, const char **fault_out, const char *text)
{
    for (; *p && *p != '<'; p++)
        if (*p == '&') {
            size_t n = entity(p);
            if (!n) {
                *fault_out = fail("a bare '&' in text", text, p);
                return NULL;
            }
            p += n - 1;
        }
    return p;
}

static size_t name_length(const char *p)
{
    size_t n = 0;
    while (isalnum((unsigned char)p[n]) || p[n] == '-' || p[n] == '_' || p[n] == ':' ||
           p[n] == '.')
        n++;
    return n;
}

/* A start tag's attributes after its name: each name="value" (or '...'); *p ends at '>' or
 * "/>". */
static const char *attributes(const char *p, const char *text, const char **fault_out)
{
    for (;;) {
        while (isspace((unsigned char)*p))
            p++;
        if (*p == '>' || (p[0] == '/' && p[1] == '>'))
            return p;
        size_t n = name_length(p);
        if (!n || p[n] != '=' || (p[n + 1] != '"' && p[n + 1] != '\'')) {
            *fault_out = fail("an attribute not written name=\"value\"", text, p);
            return NULL;
        }
        char quote = p[n + 1];
        for (p += n + 2; *p != quote; p++) {
            if (!*p || *p == '<') {
                *fault_out = fail("an attribute value left open or holding '<'", text, p);
                return NULL;
            }
            if (*p == '&' && !entity(p)) {
                *fault_out = fail("a bare '&' in an attribute value", text, p);
                return NULL;
            }
        }
        p++;
    }
}

const char *xml_check(const char *text)
{
    const char *open[DEPTH_MAX];
    size_t open_length[DEPTH_MAX];
    int depth = 0, roots = 0;
    const char *p = text, *why = NULL;
    if (strncmp(p, "<?xml", 5) == 0) {
        const char *end = strstr(p, "?>");
        if (!end)
            return fail("the XML declaration is not closed", text, p);
        p = end + 2;
    }
    while (*p) {
        if (*p != '<') {
            const char *start = p;
            if (!(p = text_run(p, &why, text)))
                return why;
            if (depth == 0)
                for (const char *c = start; c < p; c++)
                    if (!isspace((unsigned char)*c))
                        return fail("text outside the root element", text, c);
            continue;
        }
        if (p[1] == '/') {
            size_t n = name_length(p + 2);
            if (depth == 0 || n != open_length[depth - 1] ||
                strncmp(p + 2, open[depth - 1], n) != 0 || p[2 + n] != '>')
                return fail("an end tag that does not close the open element", text, p);
            depth--;
            p += 3 + n;
            continue;
        }
        if (strncmp(p, "<!--", 4) == 0) {
            const char *end = strstr(p, "-->");
            if (!end)
                return fail("a comment left open", text, p);
            p = end + 3;
            continue;
        }
        size_t n = name_length(p + 1);
        if (!n)
            return fail("a '<' that starts no tag", text, p);
        if (depth == 0 && roots++)
            return fail("a second root element", text, p);
        const char *name = p + 1;
        if (!(p = attributes(p + 1 + n, text, &why)))
            return why;
        if (*p == '/') {
            p += 2;
            continue;
        }
        if (depth == DEPTH_MAX)
            return fail("elements nested too deep", text, p);
        open[depth] = name;
        open_length[depth++] = n;
        p++;
    }
    if (depth)
        return fail("an element left open at the end", text, p);
    return roots == 1 ? NULL : fail("no root element", text, p);
}

size_t xml_count(const char *text, const char *needle)
{
    size_t count = 0;
    for (const char *p = text; (p = strstr(p, needle)); p += strlen(needle))
        count++;
    return count;
}

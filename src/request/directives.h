/* directives.h — where a C++ text names files for the preprocessor to read: #include and its
 * kin, and __has_include, found the way the compiler's preprocessor reads them (backslash-
 * newlines spliced, comments dropped, string, character and raw string literals skipped,
 * `%:` read as `#`), together with every line that merely looks like an include (in a
 * comment too). The include scan (includes.c) follows, hashes and, when confined, checks
 * what it finds. */
#ifndef PTXJIT_DIRECTIVES_H
#define PTXJIT_DIRECTIVES_H

#include <stddef.h>

typedef enum {
    PJ_DIRECTIVE_INCLUDE,          /* #include */
    PJ_DIRECTIVE_INCLUDE_NEXT,     /* #include_next (GNU; NVRTC reads it) */
    PJ_DIRECTIVE_IMPORT,           /* #import */
    PJ_DIRECTIVE_EMBED,            /* #embed (C23) */
    PJ_DIRECTIVE_HAS_INCLUDE,      /* __has_include(...) */
    PJ_DIRECTIVE_HAS_INCLUDE_NEXT, /* __has_include_next(...) */
    PJ_DIRECTIVE_HAS_EMBED         /* __has_embed(...) */
} pj_directive_kind;

typedef enum {
    PJ_NAME_QUOTED,  /* "x" */
    PJ_NAME_ANGLED,  /* <x> */
    PJ_NAME_COMPUTED /* anything else: a macro, or a name left unclosed */
} pj_name_form;

typedef struct {
    pj_directive_kind kind;
    pj_name_form form;
    char *name; /* spliced, without its quotes or brackets; NULL when computed */
    int line;   /* the physical line (from 1) it starts on */
} pj_directive;

typedef struct {
    pj_directive *items; /* in the order of their lines */
    int count, capacity;
    int nul_line;        /* the first line holding a NUL byte (0: none): the compiler reads
                            on past one, a C string stops there */
    int raw_splice_line; /* the first raw string literal holding a backslash-newline, or
                            whose opening cannot be read (0: none): compilers differ on where
                            such a literal ends */
    int *line_marks;     /* #line N: pairs (the physical line after it, N) */
    int mark_count, mark_capacity;
} pj_directives;

/* Every directive of text[0..size) that names a file: those the preprocessor reads, then
 * (merged in line order, a line's own duplicate dropped) each physical line that reads as
 * `#include "x"` or `#include <x>` where the preprocessor sees none (a comment, a raw string).
 * 0, or -1 when out of memory (*out then empty). */
int pj_directives_find(pj_directives *out, const char *text, size_t size);
/* The line the compiler's messages give for physical line (after #line directives). */
int pj_directives_line(const pj_directives *directives, int physical);
void pj_directives_free(pj_directives *directives);

#endif

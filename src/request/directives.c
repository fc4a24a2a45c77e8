/* directives.c — the directives that name files, as NVRTC's preprocessor reads a text. Tried
 * against NVRTC 13.0: it splices a backslash, any carriage returns and a newline (not a
 * backslash and a space), reads `%:include`, a comment between `#` and `include`, and a
 * directive after a block comment that ends on its line; it follows #include_next and
 * __has_include, and reads on past a NUL byte in a header. What the lexer cannot read the
 * way every compiler surely does (a NUL byte, a raw string across a splice) is reported, for
 * a confined scan to refuse. Most bytes start nothing it looks for: skip_quiet runs over
 * those at about the speed of a plain loop, the slower path takes one token at a time. */
#include <stdlib.h>
#include <string.h>

#include "directives.h"
#include "internal.h"

/* A place in the text as the preprocessor reads it: every splice is skipped wherever it
 * stands. */
typedef struct {
    const char *text;
    size_t size, at;
    int line;    /* the physical line of text[at] */
    int spliced; /* a splice was skipped since it was last cleared */
} cursor;

enum { END = -1 };

/* Where the splice at i ends (i itself when there is none). */
static size_t splice_end(const cursor *c, size_t i)
{
    if (i >= c->size || c->text[i] != '\\')
        return i;
    size_t j = i + 1;
    while (j < c->size && c->text[j] == '\r')
        j++;
    return j < c->size && c->text[j] == '\n' ? j + 1 : i;
}

static int peek_spliced(cursor *c)
{
    for (size_t next; (next = splice_end(c, c->at)) != c->at; c->at = next) {
        c->line++;
        c->spliced = 1;
    }
    return c->at < c->size ? (unsigned char)c->text[c->at] : END;
}

/* The character at the cursor; only a backslash may start a splice (the fast way). */
static inline int peek(cursor *c)
{
    if (c->at < c->size && c->text[c->at] != '\\')
        return (unsigned char)c->text[c->at];
    return peek_spliced(c);
}

static inline int take(cursor *c)
{
    int ch = peek(c);
    if (ch != END) {
        c->at++;
        c->line += ch == '\n';
    }
    return ch;
}

/* Moves the cursor to at (a place the text's own bytes reach), counting lines. */
static void advance(cursor *c, size_t at)
{
    for (const char *s = c->text + c->at, *end = c->text + at;
         (s = memchr(s, '\n', (size_t)(end - s))) != NULL; s++)
        c->line++;
    c->at = at;
}

static int peek_second(const cursor *c)
{
    cursor ahead = *c;
    take(&ahead);
    return peek(&ahead);
}

/* Blanks within a line: NVRTC takes a carriage return, a form feed or a vertical tab for a
 * space there. */
static int is_blank(int ch)
{
    return ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v';
}

static int is_digit(int ch)
{
    return ch >= '0' && ch <= '9';
}

/* Letters, digits, _, $ and every byte of a UTF-8 sequence. */
static int is_identifier_char(int ch)
{
    return ch == '_' || ch == '$' || is_digit(ch) || (ch >= 'a' && ch <= 'z') ||
           (ch >= 'A' && ch <= 'Z') || ch >= 0x80;
}

static void skip_block_comment(cursor *c)
{
    take(c);
    take(c);
    for (;;) {
        const char *star = memchr(c->text + c->at, '*', c->size - c->at);
        advance(c, star ? (size_t)(star - c->text) + 1 : c->size);
        if (!star || peek(c) == '/') { /* a splice may stand between the star and the slash */
            take(c);
            return;
        }
    }
}

/* To the line's end: the first newline no splice takes (a backslash, any carriage returns). */
static void skip_line_comment(cursor *c)
{
    for (;;) {
        const char *newline = memchr(c->text + c->at, '\n', c->size - c->at);
        size_t at = newline ? (size_t)(newline - c->text) : c->size, back = at;
        while (back > c->at && c->text[back - 1] == '\r')
            back--;
        int spliced = newline && back > c->at && c->text[back - 1] == '\\';
        advance(c, at + spliced);
        if (!spliced)
            return;
        c->spliced = 1;
    }
}

/* Blanks and block comments (one space each, even across lines), not a newline. */
static void skip_blanks(cursor *c)
{
    for (int ch; (ch = peek(c)) != END;) {
        if (is_blank(ch))
            take(c);
        else if (ch == '/' && peek_second(c) == '*')
            skip_block_comment(c);
        else
            return;
    }
}

/* A string or character literal: to its closing quote, or to the line's end if unclosed. */
static void skip_quoted(cursor *c)
{
    int quote = take(c);
    for (int ch; (ch = peek(c)) != END && ch != '\n';) {
        take(c);
        if (ch == quote)
            return;
        if (ch == '\\' && peek(c) != '\n')
            take(c);
        else /* on to the next byte that matters; none before it is a newline or a splice */
            while (c->at < c->size && !strchr("\"'\\\n", c->text[c->at]))
                c->at++;
    }
}

/* A preprocessing number: digit separators (1'000) and exponent signs belong to it, so that
 * neither is read as the start of a literal. */
static void skip_number(cursor *c)
{
    int previous = take(c);
    for (int ch; (ch = peek(c)) != END; previous = take(c)) {
        int exponent = previous == 'e' || previous == 'E' || previous == 'p' || previous == 'P';
        int sign = (ch == '+' || ch == '-') && exponent;
        int separator = ch == '\'' && is_identifier_char(peek_second(c));
        if (!is_identifier_char(ch) && ch != '.' && !sign && !separator)
            return;
    }
}

/* The identifier at the cursor into word, NUL-terminated; "" when it is too long to be a
 * word of ours, or spelled with a universal character name (NVRTC does not take
 * #\u0069nclude for #include). */
static void read_identifier(cursor *c, char *word, size_t size)
{
    size_t length = 0;
    int plain = 1;
    for (;;) {
        /* Byte by byte while no backslash (a splice, or a universal character name) comes. */
        while (c->at < c->size && is_identifier_char((unsigned char)c->text[c->at])) {
            if (length + 1 < size)
                word[length] = c->text[c->at];
            length++;
            c->at++;
        }
        int ch = peek(c);
        if (ch == '\\' && (peek_second(c) == 'u' || peek_second(c) == 'U')) {
            take(c);
            take(c);
            plain = 0;
            length++;
        } else if (!is_identifier_char(ch)) {
            break;
        }
    }
    word[plain && length < size ? length : 0] = '\0';
}

static int add(pj_directives *out, pj_directive_kind kind, pj_name_form form, char *name,
               int line)
{
    if (out->count == out->capacity) {
        int capacity = out->capacity ? 2 * out->capacity : 16;
        pj_directive *grown = realloc(out->items, (size_t)capacity * sizeof *grown);
        if (!grown) {
            free(name);
            return -1;
        }
        out->items = grown;
        out->capacity = capacity;
    }
    out->items[out->count++] = (pj_directive){kind, form, name, line};
    return 0;
}

/* The header name at the cursor, "x" or <x>, closed on its line (read as one token: a / * in
 * it starts no comment); anything else is computed. */
static int add_named(pj_directives *out, pj_directive_kind kind, cursor *c, int line)
{
    int open = peek(c), close = open == '"' ? '"' : open == '<' ? '>' : 0;
    if (!close)
        return add(out, kind, PJ_NAME_COMPUTED, NULL, line);
    take(c);
    pj_strbuf name;
    pj_sb_init(&name);
    int ch;
    while ((ch = peek(c)) != END && ch != '\n' && ch != close) {
        char byte = (char)take(c);
        pj_sb_append_n(&name, &byte, 1);
    }
    if (ch != close) {
        pj_sb_free(&name);
        return add(out, kind, PJ_NAME_COMPUTED, NULL, line);
    }
    take(c);
    char *text = pj_sb_take(&name);
    if (!text)
        return -1;
    return add(out, kind, close == '"' ? PJ_NAME_QUOTED : PJ_NAME_ANGLED, text, line);
}

static int add_line_mark(pj_directives *out, int physical, int line)
{
    if (out->mark_count == out->mark_capacity) {
        int capacity = out->mark_capacity ? 2 * out->mark_capacity : 8;
        int *grown = realloc(out->line_marks, (size_t)capacity * 2 * sizeof *grown);
        if (!grown)
            return -1;
        out->line_marks = grown;
        out->mark_capacity = capacity;
    }
    out->line_marks[2 * out->mark_count] = physical;
    out->line_marks[2 * out->mark_count + 1] = line;
    out->mark_count++;
    return 0;
}

/* #line N ["file"]: the line after the directive is line N (the specialized source starts
 * the template with one, so that messages give the template's own lines). */
static int read_line_directive(cursor *c, pj_directives *out)
{
    skip_blanks(c);
    long number = 0;
    int digits = 0;
    while (is_digit(peek(c)) && number < 100000000) {
        number = 10 * number + (take(c) - '0');
        digits++;
    }
    if (!digits)
        return 0;
    cursor end = *c; /* the directive's end, not taken: the lexer reads the rest as usual */
    for (int ch; (ch = peek(&end)) != END && ch != '\n';) {
        if (ch == '"')
            skip_quoted(&end);
        else if (ch == '/' && peek_second(&end) == '*')
            skip_block_comment(&end);
        else
            take(&end);
    }
    return add_line_mark(out, end.line + 1, (int)number);
}

static const struct {
    const char *word;
    pj_directive_kind kind;
} directive_words[] = {
    {"include", PJ_DIRECTIVE_INCLUDE},
    {"include_next", PJ_DIRECTIVE_INCLUDE_NEXT},
    {"import", PJ_DIRECTIVE_IMPORT},
    {"embed", PJ_DIRECTIVE_EMBED},
}, probe_words[] = {
    {"__has_include", PJ_DIRECTIVE_HAS_INCLUDE},
    {"__has_include_next", PJ_DIRECTIVE_HAS_INCLUDE_NEXT},
    {"__has_embed", PJ_DIRECTIVE_HAS_EMBED},
};

/* After a '#' (or "%:") at line: a directive that names a file, or #line. A '#' that is no
 * directive (one mid-line, in a macro's body) is taken for one all the same: a spare find,
 * never a missed one. */
static int read_directive(cursor *c, pj_directives *out, int line)
{
    skip_blanks(c);
    char word[24];
    if (!is_identifier_char(peek(c)) || is_digit(peek(c)))
        return 0;
    read_identifier(c, word, sizeof word);
    if (strcmp(word, "line") == 0)
        return read_line_directive(c, out);
    for (size_t i = 0; i < PJ_ARRAY_SIZE(directive_words); i++)
        if (strcmp(word, directive_words[i].word) == 0) {
            skip_blanks(c);
            return add_named(out, directive_words[i].kind, c, line);
        }
    return 0;
}

/* Whether the word before text[at] (blanks and '(' between) is one that only asks whether
 * the compiler knows an operator: `defined(__has_include)`, `#ifdef __has_include`. Looked
 * for as plain text: spelled with a comment or a splice between, the probe reads as one. */
static int asks_for_operator(const char *text, size_t at)
{
    size_t end = at;
    while (end > 0 && (is_blank((unsigned char)text[end - 1]) || text[end - 1] == '('))
        end--;
    size_t start = end;
    while (start > 0 && is_identifier_char((unsigned char)text[start - 1]))
        start--;
    static const char *const words[] = {"defined", "ifdef", "ifndef"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(words); i++)
        if (end - start == strlen(words[i]) && memcmp(text + start, words[i], end - start) == 0)
            return 1;
    return 0;
}

/* __has_include and its kin at line (the word starting at text[start]): with a header name in
 * parentheses, or computed, unless it only asks for the operator. */
static int read_probe(cursor *c, pj_directives *out, pj_directive_kind kind, int line,
                      size_t start)
{
    skip_blanks(c);
    if (peek(c) != '(')
        return asks_for_operator(c->text, start) ? 0
                                                  : add(out, kind, PJ_NAME_COMPUTED, NULL, line);
    take(c);
    skip_blanks(c);
    return add_named(out, kind, c, line);
}

static int is_raw_prefix(const char *word)
{
    return strcmp(word, "R") == 0 || strcmp(word, "u8R") == 0 || strcmp(word, "uR") == 0 ||
           strcmp(word, "UR") == 0 || strcmp(word, "LR") == 0;
}

/* A raw string literal R"d(...)d", its prefix read: to its closing )d". NVRTC 13.0 splices
 * lines inside one, where the standard undoes the splice; so a splice inside (or an opening
 * that cannot be read) is reported. */
static void skip_raw_string(cursor *c, pj_directives *out)
{
    int line = c->line;
    c->spliced = 0;
    take(c);
    char delimiter[17];
    size_t length = 0;
    int ch;
    while ((ch = peek(c)) != END && ch != '(' && length < sizeof delimiter &&
           ch > ' ' && ch != ')' && ch != '\\' && ch != '"' && ch < 0x7f)
        delimiter[length++] = (char)take(c);
    if (ch != '(' || length > 16) {
        out->raw_splice_line = out->raw_splice_line ? out->raw_splice_line : line;
        return;
    }
    take(c);
    while ((ch = take(c)) != END) {
        if (ch != ')')
            continue;
        cursor close = *c;
        size_t matched = 0;
        while (matched < length && take(&close) == (unsigned char)delimiter[matched])
            matched++;
        if (matched == length && take(&close) == '"') {
            *c = close;
            break;
        }
    }
    if (c->spliced && !out->raw_splice_line)
        out->raw_splice_line = line;
}

/* Whether ch starts nothing the lexer looks for: a blank, a newline, an operator. */
static int is_quiet(int ch)
{
    switch (ch) {
    case '/':
    case '"':
    case '\'':
    case '#':
    case '%':
    case '.':
    case '\\':
        return 0;
    default:
        return !is_identifier_char(ch);
    }
}

/* Each byte's class, for skip_quiet (made per scan: a table of 256 is cheap to fill and
 * leaves nothing shared between threads). */
enum { QUIET = 1, IDENTIFIER = 2 };

static void classify(unsigned char classes[256])
{
    for (int ch = 0; ch < 256; ch++)
        classes[ch] = (unsigned char)(is_quiet(ch)             ? QUIET
                                      : is_identifier_char(ch) ? IDENTIFIER
                                                               : 0);
}

/* Where the run of bytes from at that starts nothing ends: blanks, newlines (counted into
 * *line), operators, and identifiers that can start nothing either (one followed by a quote
 * may be a raw string's prefix, one followed by a backslash may go on past a splice, and one
 * starting "__" may be __has_include: each of those is left to the lexer's slower path). */
static size_t skip_quiet(const unsigned char classes[256], const char *text, size_t size,
                         size_t at, int *line)
{
    while (at < size) {
        unsigned char ch = (unsigned char)text[at];
        if (classes[ch] == QUIET) {
            *line += ch == '\n';
            at++;
            continue;
        }
        if (is_digit(ch) || classes[ch] != IDENTIFIER ||
            (ch == '_' && at + 1 < size && text[at + 1] == '_'))
            return at;
        size_t end = at + 1;
        while (end < size && classes[(unsigned char)text[end]] == IDENTIFIER)
            end++;
        if (end < size && (text[end] == '"' || text[end] == '\\'))
            return at;
        at = end;
    }
    return at;
}

/* An identifier, and what it may start: a raw string, or __has_include and its kin. */
static int read_word(cursor *c, pj_directives *out)
{
    int line = c->line;
    size_t start = c->at;
    char word[24];
    read_identifier(c, word, sizeof word);
    if (peek(c) == '"' && is_raw_prefix(word))
        skip_raw_string(c, out);
    else if (word[0] == '_' && word[1] == '_')
        for (size_t i = 0; i < PJ_ARRAY_SIZE(probe_words); i++)
            if (strcmp(word, probe_words[i].word) == 0)
                return read_probe(c, out, probe_words[i].kind, line, start);
    return 0;
}

/* The directives the preprocessor reads, in order: the slow path takes one token at a time,
 * after skip_quiet ran over what starts none. */
static int lex(pj_directives *out, const char *text, size_t size)
{
    cursor c = {text, size, 0, 1, 0};
    unsigned char classes[256];
    classify(classes);
    for (;;) {
        c.at = skip_quiet(classes, text, size, c.at, &c.line);
        int ch = peek(&c);
        if (ch == END)
            return 0;
        int status = 0, second = peek_second(&c);
        if (ch == '/' && second == '*')
            skip_block_comment(&c);
        else if (ch == '/' && second == '/')
            skip_line_comment(&c);
        else if (ch == '"' || ch == '\'')
            skip_quoted(&c);
        else if (ch == '#' || (ch == '%' && second == ':')) {
            int line = c.line;
            take(&c);
            if (ch == '%')
                take(&c);
            status = read_directive(&c, out, line);
        } else if (is_digit(ch) || (ch == '.' && is_digit(second)))
            skip_number(&c);
        else if (is_identifier_char(ch) || (ch == '\\' && (second == 'u' || second == 'U')))
            status = read_word(&c, out);
        else
            take(&c);
        if (status < 0)
            return -1;
    }
}

/* The header a physical line names as `#include "x"` or `#include <x>`, read as text; 0 when
 * it names none. */
static int include_on_line(const char *line, size_t length, const char **name,
                           size_t *name_length, int *quoted)
{
    size_t i = 0;
    while (i < length && is_blank((unsigned char)line[i]))
        i++;
    if (i == length || line[i++] != '#')
        return 0;
    while (i < length && is_blank((unsigned char)line[i]))
        i++;
    if (length - i < 8 || strncmp(line + i, "include", 7) != 0)
        return 0;
    i += 7;
    while (i < length && is_blank((unsigned char)line[i]))
        i++;
    if (i == length || (line[i] != '"' && line[i] != '<'))
        return 0;
    *quoted = line[i] == '"';
    const char *close = memchr(line + i + 1, *quoted ? '"' : '>', length - i - 1);
    if (!close || close == line + i + 1)
        return 0;
    *name = line + i + 1;
    *name_length = (size_t)(close - *name);
    return 1;
}

/* Whether the lexer found the include that line states. */
static int lexed(const pj_directives *lexer, int *from, int line, pj_name_form form,
                 const char *name, size_t length)
{
    while (*from < lexer->count && lexer->items[*from].line < line)
        (*from)++;
    for (int i = *from; i < lexer->count && lexer->items[i].line == line; i++) {
        const pj_directive *d = &lexer->items[i];
        if (d->kind == PJ_DIRECTIVE_INCLUDE && d->form == form && strlen(d->name) == length &&
            memcmp(d->name, name, length) == 0)
            return 1;
    }
    return 0;
}

/* The lines that read as includes where the lexer saw none (in a comment, a raw string):
 * followed too, as the scan always did, so that a lexer mistaken about a comment cannot hide
 * a header. */
static int find_by_line(pj_directives *out, const pj_directives *lexer, const char *text,
                        size_t size)
{
    int from = 0, number = 1;
    for (size_t at = 0; at < size; number++) {
        const char *line = text + at, *end = memchr(line, '\n', size - at);
        size_t length = end ? (size_t)(end - line) : size - at;
        const char *name;
        size_t name_length;
        int quoted;
        if (include_on_line(line, length, &name, &name_length, &quoted)) {
            pj_name_form form = quoted ? PJ_NAME_QUOTED : PJ_NAME_ANGLED;
            char *copy = lexed(lexer, &from, number, form, name, name_length)
                             ? NULL
                             : pj_strndup(name, name_length);
            if (copy && add(out, PJ_DIRECTIVE_INCLUDE, form, copy, number) < 0)
                return -1;
        }
        at += length + 1;
    }
    return 0;
}

/* a's and b's items in line order (a's first on a line), moved into out. */
static int merge(pj_directives *out, pj_directives *a, pj_directives *b)
{
    int total = a->count + b->count, i = 0, j = 0;
    out->items = calloc((size_t)total + 1, sizeof *out->items);
    if (!out->items)
        return -1;
    while (i < a->count || j < b->count) {
        int from_a = j == b->count || (i < a->count && a->items[i].line <= b->items[j].line);
        out->items[out->count++] = from_a ? a->items[i++] : b->items[j++];
    }
    out->capacity = total + 1;
    a->count = b->count = 0;
    return 0;
}

int pj_directives_find(pj_directives *out, const char *text, size_t size)
{
    memset(out, 0, sizeof *out);
    pj_directives lexer = {0}, lines = {0};
    int status = lex(&lexer, text, size);
    if (status == 0)
        status = find_by_line(&lines, &lexer, text, size);
    if (status == 0)
        status = merge(out, &lexer, &lines);
    out->raw_splice_line = lexer.raw_splice_line;
    out->line_marks = lexer.line_marks;
    out->mark_count = lexer.mark_count;
    out->mark_capacity = lexer.mark_capacity;
    lexer.line_marks = NULL;
    const char *nul = memchr(text, '\0', size);
    for (const char *s = text; nul && s < nul; s++)
        out->nul_line += *s == '\n';
    out->nul_line += nul != NULL;
    pj_directives_free(&lexer);
    pj_directives_free(&lines);
    if (status < 0)
        pj_directives_free(out);
    return status;
}

int pj_directives_line(const pj_directives *directives, int physical)
{
    int line = physical;
    for (int i = 0; i < directives->mark_count; i++) {
        int at = directives->line_marks[2 * i], number = directives->line_marks[2 * i + 1];
        if (at <= physical)
            line = number + (physical - at);
    }
    return line;
}

void pj_directives_free(pj_directives *directives)
{
    for (int i = 0; i < directives->count; i++)
        free(directives->items[i].name);
    free(directives->items);
    free(directives->line_marks);
    memset(directives, 0, sizeof *directives);
}

/* resp.c — RESP2 framed and read (resp.h). The reader is a small state machine fed bytes as
 * they come: a line at a time (headers, status, errors, integers, into a fixed buffer) or
 * a bulk string's body (straight into the buffer allocated once its header passed the caps).
 * Numbers are read strictly, as Redis writes them, so that a reply read is exactly the bytes
 * taken (tests/fuzz/fuzz_resp.c holds it to that). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "remote/resp.h"

void pj_resp_value_free(pj_resp_value *value)
{
    for (int i = 0; i < value->count && value->elements; i++)
        pj_resp_value_free(&value->elements[i]);
    free(value->elements);
    free(value->str);
    memset(value, 0, sizeof *value);
}

void pj_resp_reader_init(pj_resp_reader *reader, size_t bulk_max)
{
    memset(reader, 0, sizeof *reader);
    reader->bulk_max = bulk_max;
    reader->budget = bulk_max;
}

void pj_resp_reader_free(pj_resp_reader *reader)
{
    pj_resp_value_free(&reader->root);
    pj_resp_reader_init(reader, reader->bulk_max);
}

void pj_resp_take(pj_resp_reader *reader, pj_resp_value *out)
{
    *out = reader->root;
    memset(&reader->root, 0, sizeof reader->root);
    pj_resp_reader_init(reader, reader->bulk_max);
}

static pj_resp_status bad(pj_resp_reader *reader, const char *why)
{
    reader->why = why;
    return PJ_RESP_BAD;
}

/* Where the next value goes: the reply itself, or the next element of the innermost array. */
static pj_resp_value *next_slot(pj_resp_reader *reader)
{
    if (reader->depth == 0)
        return &reader->root;
    int d = reader->depth - 1;
    return &reader->open[d]->elements[reader->filled[d]];
}

/* A value was finished: it fills its array's next element, which may finish that array, and
 * so on outwards. DONE when the reply is whole. */
static pj_resp_status finished(pj_resp_reader *reader)
{
    while (reader->depth > 0) {
        int d = reader->depth - 1;
        if (++reader->filled[d] < reader->open[d]->count)
            return PJ_RESP_MORE;
        reader->depth--;
    }
    return PJ_RESP_DONE;
}

/* text as a decimal integer written as Redis writes one: "0", or an optional '-' and up to
 * 19 digits without a leading zero, within long long. */
static int parse_number(const char *text, size_t length, long long *out)
{
    size_t i = length && text[0] == '-';
    int negative = (int)i;
    if (i == length || length - i > 19 || (text[i] == '0' && (length - i > 1 || negative)))
        return 0;
    unsigned long long value = 0; /* 19 digits fit */
    for (; i < length; i++) {
        if (text[i] < '0' || text[i] > '9')
            return 0;
        value = value * 10 + (unsigned)(text[i] - '0');
    }
    if (value > (unsigned long long)LLONG_MAX + (unsigned)negative)
        return 0;
    if (negative)
        *out = value == (unsigned long long)LLONG_MAX + 1 ? LLONG_MIN : -(long long)value;
    else
        *out = (long long)value;
    return 1;
}

static pj_resp_status simple_string(pj_resp_reader *reader, pj_resp_value *slot,
                                    pj_resp_type type, const char *text, size_t length)
{
    slot->type = type;
    if (!(slot->str = pj_strndup(text, length)))
        return PJ_RESP_NO_MEMORY;
    slot->length = length;
    return finished(reader);
}

static pj_resp_status integer(pj_resp_reader *reader, pj_resp_value *slot, const char *text,
                              size_t length)
{
    slot->type = PJ_RESP_INTEGER;
    if (!parse_number(text, length, &slot->integer))
        return bad(reader, "an integer reply that is not a number");
    return finished(reader);
}

/* "$<length>": the length checked against the caps before its buffer is allocated. */
static pj_resp_status bulk_header(pj_resp_reader *reader, pj_resp_value *slot,
                                  const char *text, size_t length)
{
    long long size;
    if (!parse_number(text, length, &size) || size < -1)
        return bad(reader, "a bulk string length that is not a length");
    if (size == -1) {
        slot->type = PJ_RESP_NIL;
        return finished(reader);
    }
    if ((unsigned long long)size > reader->budget) {
        reader->why = "a value larger than the remote cache's size limit";
        return PJ_RESP_TOO_BIG;
    }
    slot->type = PJ_RESP_BULK;
    if (!(slot->str = malloc((size_t)size + 1)))
        return PJ_RESP_NO_MEMORY;
    slot->length = (size_t)size;
    reader->budget -= (size_t)size;
    reader->bulk = slot;
    reader->bulk_read = 0;
    return PJ_RESP_MORE;
}

/* "*<count>": the count and the nesting checked before the elements are allocated. */
static pj_resp_status array_header(pj_resp_reader *reader, pj_resp_value *slot,
                                   const char *text, size_t length)
{
    long long count;
    if (!parse_number(text, length, &count) || count < -1)
        return bad(reader, "an array length that is not a length");
    if (count == -1) {
        slot->type = PJ_RESP_NIL;
        return finished(reader);
    }
    if (count > PJ_RESP_ELEMENTS_MAX)
        return bad(reader, "a reply array longer than any ptxjit asks for");
    if (reader->depth == PJ_RESP_DEPTH_MAX)
        return bad(reader, "reply arrays nested deeper than any ptxjit asks for");
    slot->type = PJ_RESP_ARRAY;
    if (count == 0)
        return finished(reader);
    if (!(slot->elements = calloc((size_t)count, sizeof *slot->elements)))
        return PJ_RESP_NO_MEMORY;
    slot->count = (int)count;
    reader->open[reader->depth] = slot;
    reader->filled[reader->depth] = 0;
    reader->depth++;
    return PJ_RESP_MORE;
}

/* A whole line (its "\r\n" taken off): what its first byte says it is. */
static pj_resp_status line_done(pj_resp_reader *reader)
{
    size_t length = reader->line_length;
    reader->line_length = 0;
    reader->line_cr = 0;
    if (length == 0)
        return bad(reader, "an empty reply line");
    const char *rest = reader->line + 1;
    pj_resp_value *slot = next_slot(reader);
    switch (reader->line[0]) {
    case '+':
        return simple_string(reader, slot, PJ_RESP_STATUS, rest, length - 1);
    case '-':
        return simple_string(reader, slot, PJ_RESP_ERROR, rest, length - 1);
    case ':':
        return integer(reader, slot, rest, length - 1);
    case '$':
        return bulk_header(reader, slot, rest, length - 1);
    case '*':
        return array_header(reader, slot, rest, length - 1);
    }
    return bad(reader, "a reply of no RESP2 type");
}

/* Bytes of a line, up to its "\r\n"; a line over PJ_RESP_LINE_MAX is refused as it grows. */
static pj_resp_status read_line(pj_resp_reader *reader, const char *data, size_t size,
                                size_t *at)
{
    while (*at < size) {
        char c = data[(*at)++];
        if (reader->line_cr)
            return c == '\n' ? line_done(reader) : bad(reader, "a '\\r' inside a reply line");
        if (c == '\r') {
            reader->line_cr = 1;
        } else if (c == '\n') {
            return bad(reader, "a reply line that ends without '\\r'");
        } else if (reader->line_length == PJ_RESP_LINE_MAX) {
            return bad(reader, "a reply line longer than any ptxjit asks for");
        } else {
            reader->line[reader->line_length++] = c;
        }
    }
    return PJ_RESP_MORE;
}

/* Bytes of a bulk string's body, then its "\r\n". */
static pj_resp_status read_bulk(pj_resp_reader *reader, const char *data, size_t size,
                                size_t *at)
{
    pj_resp_value *bulk = reader->bulk;
    while (*at < size && reader->bulk_read < bulk->length + 2) {
        if (reader->bulk_read < bulk->length) {
            size_t n = bulk->length - reader->bulk_read;
            n = n < size - *at ? n : size - *at;
            memcpy(bulk->str + reader->bulk_read, data + *at, n);
            reader->bulk_read += n;
            *at += n;
        } else {
            char want = reader->bulk_read == bulk->length ? '\r' : '\n';
            if (data[(*at)++] != want)
                return bad(reader, "a bulk string longer than its length");
            reader->bulk_read++;
        }
    }
    if (reader->bulk_read < bulk->length + 2)
        return PJ_RESP_MORE;
    bulk->str[bulk->length] = '\0';
    reader->bulk = NULL;
    return finished(reader);
}

pj_resp_status pj_resp_feed(pj_resp_reader *reader, const char *data, size_t size,
                            size_t *taken)
{
    size_t at = 0;
    pj_resp_status status = PJ_RESP_MORE;
    while (status == PJ_RESP_MORE && at < size)
        status = reader->bulk ? read_bulk(reader, data, size, &at)
                              : read_line(reader, data, size, &at);
    *taken = at;
    return status;
}

/* ---- the writer ---- */

static const char crlf[] = "\r\n";

void pj_resp_out_init(pj_resp_out *out)
{
    out->iov_count = 0;
    out->heads_used = 0;
    out->total = 0;
}

static void add(pj_resp_out *out, const void *base, size_t length)
{
    out->iov[out->iov_count++] = (struct iovec){(void *)base, length};
    out->total += length;
}

/* "<kind><number>\r\n" into heads, and into iov. */
static void head(pj_resp_out *out, char kind, size_t number)
{
    char digits[24], *at = out->heads + out->heads_used;
    pj_format_int(digits, (long long)number);
    size_t length = strlen(digits);
    at[0] = kind;
    memcpy(at + 1, digits, length);
    memcpy(at + 1 + length, crlf, 2);
    out->heads_used += length + 3;
    add(out, at, length + 3);
}

int pj_resp_out_command(pj_resp_out *out, int argc, const char *const *argv,
                        const size_t *lengths)
{
    if (argc < 1 || argc > PJ_RESP_WORDS_MAX ||
        out->iov_count + 1 + 3 * argc > PJ_RESP_IOV_MAX ||
        out->heads_used + (size_t)(1 + argc) * 24 > PJ_RESP_HEADS_MAX)
        return -1;
    head(out, '*', (size_t)argc);
    for (int i = 0; i < argc; i++) {
        head(out, '$', lengths[i]);
        if (lengths[i])
            add(out, argv[i], lengths[i]);
        add(out, crlf, 2);
    }
    return 0;
}

/* fuzz_resp.c — the remote tier's RESP2 reply reader (src/remote/resp.c), fed what a hostile
 * server might send. The first byte is for the harness: its low 3 bits pick the bulk cap
 * (0 bytes to 1 MiB), the other 5 a piece size; the rest is the byte stream, read as replies
 * back to back (a pipeline) until it ends or the reader refuses it. Properties: no crash, no
 * read out of bounds, no undefined behaviour, no leak; the stream read whole, a byte at a
 * time and in pieces gives the same replies and stops at the same byte with the same status;
 * every reply read is exactly the bytes taken for it, as Redis writes them; no bulk string,
 * nor a reply's bulk strings together, exceed the cap, no array holds more than
 * PJ_RESP_ELEMENTS_MAX elements nor nests deeper than PJ_RESP_DEPTH_MAX; a refusal says why.
 * Then the writer: the stream cut into words at each '\n', framed as one command, reads back
 * as an array of exactly those words. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "remote/resp.h"

#define REPLIES_MAX 64

static const size_t caps[8] = {0, 1, 3, 16, 64, 1024, 65536, 1 << 20};

/* What reading a stream gave: its replies, the bytes each took, how it stopped. */
typedef struct {
    pj_resp_value replies[REPLIES_MAX];
    size_t ends[REPLIES_MAX]; /* where each reply's bytes end */
    int count;
    pj_resp_status last;      /* MORE: the stream ended (mid-reply or between replies) */
    size_t taken;             /* bytes read in all */
} reading;

/* Reads data in pieces of piece bytes (the last may be shorter). */
static void read_stream(reading *out, const char *data, size_t size, size_t cap, size_t piece)
{
    pj_resp_reader reader;
    pj_resp_reader_init(&reader, cap);
    memset(out, 0, sizeof *out);
    out->last = PJ_RESP_MORE;
    size_t at = 0;
    while (at < size && out->count < REPLIES_MAX) {
        size_t end = at + piece < size ? at + piece : size, taken = 0;
        pj_resp_status status = pj_resp_feed(&reader, data + at, end - at, &taken);
        fuzz_require(taken <= end - at, "the reader takes no more than it is given");
        fuzz_require(status == PJ_RESP_DONE || status == PJ_RESP_MORE ||
                         status == PJ_RESP_NO_MEMORY || reader.why != NULL,
                     "a refusal says why");
        fuzz_require(status != PJ_RESP_MORE || taken == end - at,
                     "MORE means every byte was taken");
        at += taken;
        if (status == PJ_RESP_DONE) {
            out->ends[out->count] = at;
            pj_resp_take(&reader, &out->replies[out->count++]);
        } else if (status != PJ_RESP_MORE) {
            out->last = status;
            break;
        }
    }
    out->taken = at;
    pj_resp_reader_free(&reader);
}

static void reading_free(reading *r)
{
    for (int i = 0; i < r->count; i++)
        pj_resp_value_free(&r->replies[i]);
}

static int same_value(const pj_resp_value *a, const pj_resp_value *b)
{
    if (a->type != b->type || a->integer != b->integer || a->length != b->length ||
        a->count != b->count || (a->str == NULL) != (b->str == NULL))
        return 0;
    if (a->str && memcmp(a->str, b->str, a->length + 1) != 0)
        return 0;
    for (int i = 0; i < a->count; i++)
        if (!same_value(&a->elements[i], &b->elements[i]))
            return 0;
    return 1;
}

static void require_same(const reading *a, const reading *b)
{
    fuzz_require(a->count == b->count && a->last == b->last && a->taken == b->taken,
                 "read in pieces, the stream stops at the same byte with the same status");
    for (int i = 0; i < a->count; i++)
        fuzz_require(a->ends[i] == b->ends[i] && same_value(&a->replies[i], &b->replies[i]),
                     "read in pieces, the stream gives the same replies");
}

/* Whether the bytes at *at are text; advances past them. */
static int expect(const char *data, size_t end, size_t *at, const char *text, size_t length)
{
    if (end - *at < length || memcmp(data + *at, text, length) != 0)
        return 0;
    *at += length;
    return 1;
}

/* Whether value is exactly data[*at..end) as Redis writes it; advances *at. Checks the caps
 * on the way: bulk bytes against *budget, elements, depth. */
static int written_as(const pj_resp_value *value, const char *data, size_t end, size_t *at,
                      size_t *budget, int depth)
{
    char head[64];
    switch (value->type) {
    case PJ_RESP_STATUS:
    case PJ_RESP_ERROR:
        return expect(data, end, at, value->type == PJ_RESP_STATUS ? "+" : "-", 1) &&
               expect(data, end, at, value->str, value->length) &&
               !memchr(value->str, '\r', value->length) &&
               !memchr(value->str, '\n', value->length) && expect(data, end, at, "\r\n", 2);
    case PJ_RESP_INTEGER:
        snprintf(head, sizeof head, ":%lld\r\n", value->integer);
        return expect(data, end, at, head, strlen(head));
    case PJ_RESP_NIL:
        return expect(data, end, at, "$-1\r\n", 5) || expect(data, end, at, "*-1\r\n", 5);
    case PJ_RESP_BULK:
        fuzz_require(value->length <= *budget, "bulk strings stay within the cap");
        fuzz_require(value->str[value->length] == '\0', "a bulk string is NUL-terminated");
        *budget -= value->length;
        snprintf(head, sizeof head, "$%zu\r\n", value->length);
        return expect(data, end, at, head, strlen(head)) &&
               expect(data, end, at, value->str, value->length) &&
               expect(data, end, at, "\r\n", 2);
    case PJ_RESP_ARRAY:
        fuzz_require(value->count <= PJ_RESP_ELEMENTS_MAX, "arrays stay within the cap");
        fuzz_require(depth < PJ_RESP_DEPTH_MAX, "arrays nest no deeper than the cap");
        snprintf(head, sizeof head, "*%d\r\n", value->count);
        if (!expect(data, end, at, head, strlen(head)))
            return 0;
        for (int i = 0; i < value->count; i++)
            if (!written_as(&value->elements[i], data, end, at, budget, depth + 1))
                return 0;
        return 1;
    }
    return 0;
}

/* The words of data (cut at '\n', at most PJ_RESP_WORDS_MAX: the last keeps the rest) framed
 * as one command and read back. */
static void writer_round_trip(const char *data, size_t size)
{
    const char *words[PJ_RESP_WORDS_MAX];
    size_t lengths[PJ_RESP_WORDS_MAX];
    int count = 0;
    for (size_t at = 0;;) {
        const char *newline = count + 1 < PJ_RESP_WORDS_MAX ? memchr(data + at, '\n', size - at)
                                                            : NULL;
        size_t end = newline ? (size_t)(newline - data) : size;
        words[count] = data + at;
        lengths[count++] = end - at;
        if (!newline)
            break;
        at = end + 1;
    }
    pj_resp_out out;
    pj_resp_out_init(&out);
    fuzz_require(pj_resp_out_command(&out, count, words, lengths) == 0, "a command is framed");
    char *flat = malloc(out.total ? out.total : 1);
    fuzz_require(flat != NULL, "malloc");
    size_t flat_size = 0;
    for (int i = 0; i < out.iov_count; i++) {
        memcpy(flat + flat_size, out.iov[i].iov_base, out.iov[i].iov_len);
        flat_size += out.iov[i].iov_len;
    }
    fuzz_require(flat_size == out.total, "the iov adds up");
    reading back;
    read_stream(&back, flat, flat_size, size, flat_size);
    fuzz_require(back.count == 1 && back.taken == flat_size,
                 "a framed command reads back as one reply, whole");
    const pj_resp_value *array = &back.replies[0];
    fuzz_require(array->type == PJ_RESP_ARRAY && array->count == count,
                 "a command is an array of its words");
    for (int i = 0; i < count; i++)
        fuzz_require(array->elements[i].type == PJ_RESP_BULK &&
                         array->elements[i].length == lengths[i] &&
                         memcmp(array->elements[i].str, words[i], lengths[i]) == 0,
                     "each word reads back as itself");
    reading_free(&back);
    free(flat);
}

int fuzz_resp(const uint8_t *input, size_t input_size)
{
    if (input_size < 1)
        return 0;
    const char *data = (const char *)input + 1;
    size_t size = input_size - 1, cap = caps[input[0] & 7], piece = 1 + (input[0] >> 3);
    reading whole, bytes, pieces;
    read_stream(&whole, data, size, cap, size ? size : 1);
    read_stream(&bytes, data, size, cap, 1);
    read_stream(&pieces, data, size, cap, piece);
    require_same(&whole, &bytes);
    require_same(&whole, &pieces);
    size_t start = 0;
    for (int i = 0; i < whole.count; i++) {
        size_t budget = cap;
        fuzz_require(written_as(&whole.replies[i], data, whole.ends[i], &start, &budget, 0) &&
                         start == whole.ends[i],
                     "a reply is exactly the bytes taken for it");
    }
    reading_free(&whole);
    reading_free(&bytes);
    reading_free(&pieces);
    writer_round_trip(data, size);
    return 0;
}

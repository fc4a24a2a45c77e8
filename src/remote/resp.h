/* resp.h — RESP2, the protocol Redis speaks, without any I/O: commands framed for sending
 * (arrays of bulk strings, the words pointed at where they lie: a 64 MB value is not copied),
 * and a reader that is fed a reply's bytes as they arrive. The reader holds every reply to
 * hard caps and refuses one the moment a header breaks them, before allocating anything for
 * it: a bulk string at most bulk_max bytes, and a reply's bulk strings together at most that
 * too; an array at most PJ_RESP_ELEMENTS_MAX elements, nested at most PJ_RESP_DEPTH_MAX deep;
 * a line (status, error, integer, header) at most PJ_RESP_LINE_MAX bytes. A reply thus
 * allocates at most bulk_max bytes plus a few KiB, whatever the server sends. */
#ifndef PTXJIT_REMOTE_RESP_H
#define PTXJIT_REMOTE_RESP_H

#include <stddef.h>
#include <sys/uio.h>

#define PJ_RESP_LINE_MAX 1024   /* Redis's longest error messages are a few hundred bytes */
#define PJ_RESP_ELEMENTS_MAX 8  /* ptxjit asks nothing that answers an array: room to spare */
#define PJ_RESP_DEPTH_MAX 2     /* an array may hold arrays, those only scalars */

typedef enum {
    PJ_RESP_STATUS,  /* +OK */
    PJ_RESP_ERROR,   /* -ERR why */
    PJ_RESP_INTEGER, /* :42 */
    PJ_RESP_BULK,    /* $3 abc */
    PJ_RESP_NIL,     /* $-1 or *-1 */
    PJ_RESP_ARRAY    /* *2 ... */
} pj_resp_type;

typedef struct pj_resp_value {
    pj_resp_type type;
    long long integer;              /* INTEGER */
    char *str;                      /* STATUS, ERROR, BULK: NUL-terminated (a bulk string
                                       may hold NULs: length says how long it is) */
    size_t length;
    struct pj_resp_value *elements; /* ARRAY */
    int count;
} pj_resp_value;

/* Frees what value holds (not value itself) and zeroes it. */
void pj_resp_value_free(pj_resp_value *value);

/* ---- the reader ---- */

typedef enum {
    PJ_RESP_MORE,     /* every byte taken; the reply goes on */
    PJ_RESP_DONE,     /* a whole reply: pj_resp_take it; the bytes after it were not taken */
    PJ_RESP_BAD,      /* not RESP, or over a cap other than the bulk size: reader->why */
    PJ_RESP_TOO_BIG,  /* a bulk string over bulk_max (or the reply's budget), refused at its
                         header: nothing of it read */
    PJ_RESP_NO_MEMORY
} pj_resp_status;

typedef struct {
    size_t bulk_max;                             /* the caller's cap */
    size_t budget;                               /* bulk bytes this reply may still have */
    pj_resp_value root;                          /* the reply being read */
    pj_resp_value *open[PJ_RESP_DEPTH_MAX];      /* the arrays being filled, outermost first */
    int filled[PJ_RESP_DEPTH_MAX];               /* how many elements each has so far */
    int depth;
    char line[PJ_RESP_LINE_MAX];                 /* the line read so far (without "\r\n") */
    size_t line_length;
    int line_cr;                                 /* its last byte read was '\r' */
    pj_resp_value *bulk;                         /* the bulk string being read, or NULL */
    size_t bulk_read;                            /* of its bytes and their "\r\n" */
    const char *why;                             /* after BAD, TOO_BIG: a constant string */
} pj_resp_reader;

void pj_resp_reader_init(pj_resp_reader *reader, size_t bulk_max);
/* Reads from data until a reply is whole (DONE), size bytes are taken (MORE), or the reply
 * breaks a rule (BAD, TOO_BIG, NO_MEMORY: the reader is then done with; free it). *taken:
 * the bytes read. */
pj_resp_status pj_resp_feed(pj_resp_reader *reader, const char *data, size_t size,
                            size_t *taken);
/* After DONE: the reply becomes the caller's (pj_resp_value_free), and the reader is ready for
 * the next one. */
void pj_resp_take(pj_resp_reader *reader, pj_resp_value *out);
/* Frees a reply left half read. */
void pj_resp_reader_free(pj_resp_reader *reader);

/* ---- the writer ---- */

#define PJ_RESP_WORDS_MAX 8     /* of one command */
#define PJ_RESP_COMMANDS_MAX 8  /* framed together: one write, one round trip */
#define PJ_RESP_IOV_MAX (PJ_RESP_COMMANDS_MAX * (1 + 3 * PJ_RESP_WORDS_MAX))
#define PJ_RESP_HEADS_MAX (PJ_RESP_COMMANDS_MAX * (1 + PJ_RESP_WORDS_MAX) * 24)

/* Commands framed for one write: the headers ("*3\r\n", "$5\r\n") in heads, the words where
 * the caller keeps them; iov names both, in order. Not to be copied once framed into (iov
 * points into heads). */
typedef struct {
    struct iovec iov[PJ_RESP_IOV_MAX];
    int iov_count;
    char heads[PJ_RESP_HEADS_MAX];
    size_t heads_used;
    size_t total;                                /* bytes named by iov */
} pj_resp_out;

void pj_resp_out_init(pj_resp_out *out);
/* Frames one command of argc words (lengths[i] bytes at argv[i]); the words must stay where
 * they are until sent. 0, or -1 when out is full or argc is out of 1..PJ_RESP_WORDS_MAX. */
int pj_resp_out_command(pj_resp_out *out, int argc, const char *const *argv,
                        const size_t *lengths);

#endif

/* test_remote_hostile.c — a server that answers with hostile replies costs a request neither
 * memory nor time beyond the remote tier's bounds (docs/FLEET.md, "Bounded waits"): a bulk
 * string larger than the size limit (a 2 GiB header, a 100 MB value) is refused at its header,
 * unread; an array of 2^31-1 elements, or a line that never ends, is refused as broken before
 * anything is allocated for it; a reply trickled a byte every 150 ms ends at the exchange's
 * deadline. Each case runs in a child bounded in time and memory (test_bounded_child), against
 * tests/hostile_server.c on 127.0.0.1. Then the RESP reader on its own. */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "hostile_server.h"
#include "remote/remote.h"
#include "remote/resp.h"
#include "test_util.h"

#define KEY "0123456789abcdef0123456789abcdef"
#define CAP (1 << 20)       /* PTXJIT_REMOTE_CACHE_MAX_BYTES in these tests */
#define DEADLINE_MS 500     /* connect 200 + operation 300 */
#define SLACK_MS 1500       /* a loaded machine, a sanitizer, valgrind */
#define HUNDRED_MB (100u << 20)

typedef struct {
    const char *reply;
    size_t junk;
    int trickle_ms;
    int too_big;     /* refused as over the size limit (a rejected entry), not as broken */
    const char *why; /* what the warning says */
} hostile_case;

static int64_t now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static void capture(void *user, ptxjit_log_level level, const char *message)
{
    (void)level;
    char *log = user;
    size_t used = strlen(log);
    snprintf(log + used, 4096 - used, "%s\n", message);
}

/* broken(): says why on stderr (the child cannot use Check's asserts), and the exit code. */
static int broken(int code, const char *what, long long value)
{
    fprintf(stderr, "hostile reply: %s (%lld)\n", what, value);
    return code;
}

/* Three lookups against the hostile server (three: the third failure in a row logs why); each
 * must end at once, or at the deadline for a trickle, having allocated nothing near the
 * reply's size and read nothing of its junk. */
static int three_lookups(void *arg)
{
    const hostile_case *c = arg;
    hostile_server server = {.reply = c->reply, .junk = c->junk, .trickle_ms = c->trickle_ms};
    hostile_start(&server);
    unsetenv("PTXJIT_REMOTE_CACHE_KEY_FILE");
    setenv("PTXJIT_REMOTE_CACHE_UNSIGNED", "1", 1);
    setenv("PTXJIT_REMOTE_CACHE_MAX_BYTES", "1048576", 1);
    setenv("PTXJIT_REMOTE_CACHE_CONNECT_TIMEOUT_MS", "200", 1);
    setenv("PTXJIT_REMOTE_CACHE_TIMEOUT_MS", "300", 1);
    setenv("PTXJIT_REMOTE_CACHE_BACKOFF_MS", "0", 1);
    static char log[4096];
    pj_logger logger = {.fn = capture, .user = log};
    pj_remote *remote = NULL;
    if (pj_remote_open(&remote, server.url, 0, NULL, &logger) != PTXJIT_OK || !remote)
        return broken(2, "the tier did not open", 0);
    test_largest_allocation();
    int64_t longest = 0;
    for (int i = 0; i < 3; i++) {
        pj_artifact artifact;
        int found = 1;
        int64_t started = now_ms();
        pj_remote_fetch(remote, PJ_REMOTE_KERNEL, KEY, &artifact, &found);
        int64_t took = now_ms() - started;
        longest = took > longest ? took : longest;
        if (found)
            return broken(3, "a hostile reply was taken for an entry", i);
    }
    size_t largest = test_largest_allocation();
    ptxjit_cache_stats stats = {0};
    pj_remote_stats_fill(remote, &stats);
    pj_remote_close(remote);
    hostile_stop(&server);
    if ((size_t)largest >= CAP)
        return broken(4, "a reply made the process allocate its size", (long long)largest);
    if (c->junk && server.sent >= HUNDRED_MB / 2)
        return broken(5, "the reply's junk was read", (long long)server.sent);
    if (longest > (c->trickle_ms ? DEADLINE_MS : 0) + SLACK_MS)
        return broken(6, "a lookup outlasted its bound (ms)", longest);
    if (c->trickle_ms && longest < DEADLINE_MS - 100)
        return broken(7, "a trickled lookup ended before the deadline (ms)", longest);
    if (stats.remote_rejected != (c->too_big ? 3 : 0) ||
        stats.remote_errors != (c->too_big ? 0 : 3))
        return broken(8, "rejected, errors counted wrong", (long long)stats.remote_errors);
    if (!strstr(log, c->why)) {
        fprintf(stderr, "the log: %s", log);
        return broken(9, "the log does not say why", 0);
    }
    return 0;
}

static void expect_bounded(const char *what, const hostile_case *c)
{
    /* 20 s: ten times the slowest case's bound; the old client took 12 to 40 s or more */
    test_bounded_child(what, three_lookups, (void *)c, 20);
}

START_TEST(a_bulk_header_of_2_gib_is_refused_unread)
{
    hostile_case c = {"$2147483648\r\n", HUNDRED_MB, 0, 1, "refused before it was read"};
    expect_bounded("$2147483648", &c);
}
END_TEST

START_TEST(a_100_mb_value_is_refused_at_its_header)
{
    hostile_case c = {"$104857600\r\n", HUNDRED_MB, 0, 1, "refused before it was read"};
    expect_bounded("a 100 MB value", &c);
}
END_TEST

START_TEST(an_array_of_2_billion_elements_is_refused_before_allocation)
{
    hostile_case c = {"*2147483647\r\n", 0, 0, 0, "array longer than any"};
    expect_bounded("*2147483647", &c);
}
END_TEST

START_TEST(a_line_without_end_is_refused_at_the_line_cap)
{
    hostile_case c = {"+OK", HUNDRED_MB, 0, 0, "line longer than any"};
    expect_bounded("an endless status line", &c);
}
END_TEST

START_TEST(a_trickled_reply_ends_at_the_deadline)
{
    hostile_case c = {"$1000\r\n", 1000, 150, 0, "did not answer in time"};
    expect_bounded("a byte every 150 ms", &c);
}
END_TEST

/* ---- the reader on its own ---- */

/* Replies pipelined back to back, fed whole and a byte at a time: the same values. */
START_TEST(reader_reads_pipelined_replies_fed_in_any_pieces)
{
    static const char input[] = "+OK\r\n$5\r\nab\0cd\r\n:-42\r\n$-1\r\n*2\r\n$1\r\nx\r\n*-1\r\n"
                                "-ERR no\r\n$0\r\n\r\n";
    const size_t size = sizeof input - 1;
    for (size_t piece = 1; piece <= size; piece += size - 1) {
        pj_resp_reader reader;
        pj_resp_value values[8];
        int count = 0;
        pj_resp_reader_init(&reader, 16);
        for (size_t at = 0; at < size;) {
            size_t end = at + piece < size ? at + piece : size, taken = 0;
            pj_resp_status status = pj_resp_feed(&reader, input + at, end - at, &taken);
            at += taken;
            ck_assert(status == PJ_RESP_MORE || status == PJ_RESP_DONE);
            if (status == PJ_RESP_DONE)
                pj_resp_take(&reader, &values[count++]);
        }
        ck_assert_int_eq(count, 7);
        ck_assert_int_eq(values[0].type, PJ_RESP_STATUS);
        ck_assert_str_eq(values[0].str, "OK");
        ck_assert_int_eq(values[1].type, PJ_RESP_BULK);
        ck_assert_uint_eq(values[1].length, 5);
        ck_assert_int_eq(memcmp(values[1].str, "ab\0cd", 5), 0);
        ck_assert_int_eq(values[2].integer, -42);
        ck_assert_int_eq(values[3].type, PJ_RESP_NIL);
        ck_assert_int_eq(values[4].type, PJ_RESP_ARRAY);
        ck_assert_int_eq(values[4].count, 2);
        ck_assert_str_eq(values[4].elements[0].str, "x");
        ck_assert_int_eq(values[4].elements[1].type, PJ_RESP_NIL);
        ck_assert_int_eq(values[5].type, PJ_RESP_ERROR);
        ck_assert_int_eq(values[6].type, PJ_RESP_BULK);
        ck_assert_uint_eq(values[6].length, 0);
        for (int i = 0; i < count; i++)
            pj_resp_value_free(&values[i]);
        pj_resp_reader_free(&reader);
    }
}
END_TEST

/* feeds input to a reader of cap 16 (after first, read whole); the status. Asserts that a
 * refusal says why and allocated nothing for what it refused. */
static pj_resp_status refusal(const char *first, const char *input)
{
    pj_resp_reader reader;
    size_t taken = 0;
    pj_resp_reader_init(&reader, 16);
    if (first)
        ck_assert_int_eq(pj_resp_feed(&reader, first, strlen(first), &taken), PJ_RESP_MORE);
    test_largest_allocation();
    pj_resp_status status = pj_resp_feed(&reader, input, strlen(input), &taken);
    size_t largest = test_largest_allocation();
    /* over the cap: nothing of the value's size; broken: at most the arrays read before */
    ck_assert(status != PJ_RESP_TOO_BIG || largest < 16);
    ck_assert(status != PJ_RESP_BAD || largest <= sizeof(pj_resp_value));
    ck_assert(status == PJ_RESP_DONE || reader.why);
    pj_resp_reader_free(&reader);
    return status;
}

/* Each cap refuses the reply at the header that breaks it, having allocated nothing for it. */
START_TEST(reader_refuses_each_cap_at_its_header)
{
    static const struct {
        const char *input;
        pj_resp_status status;
    } cases[] = {
        {"$17\r\n", PJ_RESP_TOO_BIG},               /* one byte over the cap */
        {"$9223372036854775808\r\n", PJ_RESP_BAD},  /* past long long */
        {"$-2\r\n", PJ_RESP_BAD},
        {"*9\r\n", PJ_RESP_BAD},                    /* over PJ_RESP_ELEMENTS_MAX */
        {"*1\r\n*1\r\n*1\r\n", PJ_RESP_BAD},        /* over PJ_RESP_DEPTH_MAX */
        {":12x\r\n", PJ_RESP_BAD},
        {":012\r\n", PJ_RESP_BAD},                  /* not as Redis writes numbers */
        {"+a\nb\r\n", PJ_RESP_BAD},
        {"$3\r\nabcd\r\n", PJ_RESP_BAD},            /* longer than its length */
        {"?\r\n", PJ_RESP_BAD},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++)
        ck_assert_msg(refusal(NULL, cases[i].input) == cases[i].status, "case %zu: %s", i,
                      cases[i].input);
    /* The cap holds for a reply's bulk strings together: 9 bytes, then 9 more are too many. */
    ck_assert_int_eq(refusal("*2\r\n$9\r\n123456789\r\n", "$9\r\n"), PJ_RESP_TOO_BIG);
    ck_assert_int_eq(refusal("*2\r\n$9\r\n123456789\r\n", "$7\r\n1234567\r\n"), PJ_RESP_DONE);
    /* A line of PJ_RESP_LINE_MAX bytes is read; one byte more is refused. */
    char line[PJ_RESP_LINE_MAX + 4];
    for (size_t over = 0; over < 2; over++) {
        memset(line, 'a', sizeof line);
        line[0] = '+';
        memcpy(line + PJ_RESP_LINE_MAX + over, "\r\n", 3);
        ck_assert_int_eq(refusal(NULL, line), over ? PJ_RESP_BAD : PJ_RESP_DONE);
    }
}
END_TEST

/* A command framed by the writer is what the reader reads back: an array of its words. */
START_TEST(writer_frames_what_the_reader_reads)
{
    static const char big[] = "a value with \r\n and \0 inside";
    const char *argv[] = {"SET", "name", big, ""};
    const size_t lengths[] = {3, 4, sizeof big, 0};
    pj_resp_out out;
    pj_resp_out_init(&out);
    ck_assert_int_eq(pj_resp_out_command(&out, 4, argv, lengths), 0);
    ck_assert_int_eq(pj_resp_out_command(&out, 0, argv, lengths), -1);
    char flat[256];
    size_t size = 0;
    for (int i = 0; i < out.iov_count; i++) {
        memcpy(flat + size, out.iov[i].iov_base, out.iov[i].iov_len);
        size += out.iov[i].iov_len;
    }
    ck_assert_uint_eq(size, out.total);
    pj_resp_reader reader;
    pj_resp_value value;
    size_t taken;
    pj_resp_reader_init(&reader, 1024);
    ck_assert_int_eq(pj_resp_feed(&reader, flat, size, &taken), PJ_RESP_DONE);
    ck_assert_uint_eq(taken, size);
    pj_resp_take(&reader, &value);
    ck_assert_int_eq(value.type, PJ_RESP_ARRAY);
    ck_assert_int_eq(value.count, 4);
    for (int i = 0; i < 4; i++) {
        ck_assert_uint_eq(value.elements[i].length, lengths[i]);
        ck_assert_int_eq(memcmp(value.elements[i].str, argv[i], lengths[i]), 0);
    }
    pj_resp_value_free(&value);
}
END_TEST

Suite *suite_remote_hostile(void)
{
    Suite *s = suite_create("remote_hostile");
    TCase *tc = tcase_create("remote_hostile");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, a_bulk_header_of_2_gib_is_refused_unread);
    tcase_add_test(tc, a_100_mb_value_is_refused_at_its_header);
    tcase_add_test(tc, an_array_of_2_billion_elements_is_refused_before_allocation);
    tcase_add_test(tc, a_line_without_end_is_refused_at_the_line_cap);
    tcase_add_test(tc, a_trickled_reply_ends_at_the_deadline);
    tcase_add_test(tc, reader_reads_pipelined_replies_fed_in_any_pieces);
    tcase_add_test(tc, reader_refuses_each_cap_at_its_header);
    tcase_add_test(tc, writer_frames_what_the_reader_reads);
    suite_add_tcase(s, tc);
    return s;
}

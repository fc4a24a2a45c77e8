/* json.c — the CLI's streaming JSON writer (json.h). */
#include <assert.h>
#include <inttypes.h>

#include "cli/json.h"

void cli_json_init(cli_json *json, FILE *out)
{
    *json = (cli_json){.out = out};
}

void cli_json_finish(cli_json *json)
{
    assert(json->depth == 0);
    fputc('\n', json->out);
}

static void indent(cli_json *json, int depth)
{
    fputc('\n', json->out);
    for (int i = 0; i < depth; i++)
        fputs("  ", json->out);
}

/* What goes before a value or a key: nothing right after a key, else the comma that
 * separates it from the one before and its own indented line. */
static void separate(cli_json *json)
{
    if (json->after_key) {
        json->after_key = 0;
        return;
    }
    if (json->depth == 0)
        return;
    int first = json->count[json->depth]++ == 0;
    if (json->flat[json->depth]) {
        fputs(first ? "" : ", ", json->out);
        return;
    }
    fputs(first ? "" : ",", json->out);
    indent(json, json->depth);
}

static void open_container(cli_json *json, char bracket, int flat)
{
    assert(!json->flat[json->depth] && json->depth < CLI_JSON_MAX_DEPTH);
    separate(json);
    fputc(bracket, json->out);
    json->depth++;
    json->count[json->depth] = 0;
    json->flat[json->depth] = flat;
}

/* An empty container stays on one line: {} or []. */
static void close_container(cli_json *json, char bracket)
{
    assert(json->depth > 0 && !json->after_key);
    int items = json->count[json->depth], flat = json->flat[json->depth];
    json->depth--;
    if (items && !flat)
        indent(json, json->depth);
    fputc(bracket, json->out);
}

void cli_json_object_begin(cli_json *json) { open_container(json, '{', 0); }
void cli_json_object_end(cli_json *json) { close_container(json, '}'); }
void cli_json_array_begin(cli_json *json) { open_container(json, '[', 0); }
void cli_json_flat_array_begin(cli_json *json) { open_container(json, '[', 1); }
void cli_json_array_end(cli_json *json) { close_container(json, ']'); }

/* The length of the valid UTF-8 sequence at s (2 to 4 bytes), or 0: stray continuation
 * bytes, overlong forms, surrogates and code points above U+10FFFF are all invalid JSON
 * text. A NUL ends the check early, so this never reads past the string. */
static int utf8_sequence(const unsigned char *s)
{
    unsigned char lead = s[0], low = 0x80, high = 0xBF;
    int length;
    if (lead >= 0xC2 && lead <= 0xDF)
        length = 2;
    else if (lead >= 0xE0 && lead <= 0xEF)
        length = 3, low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
    else if (lead >= 0xF0 && lead <= 0xF4)
        length = 4, low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
    else
        return 0;
    if (s[1] < low || s[1] > high)
        return 0;
    for (int i = 2; i < length; i++)
        if ((s[i] & 0xC0) != 0x80)
            return 0;
    return length;
}

static void write_escaped(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        if (*s == '"' || *s == '\\') {
            fputc('\\', out);
            fputc(*s++, out);
        } else if (*s < 0x20 || *s == 0x7F) {
            fprintf(out, "\\u%04x", *s++);
        } else if (*s < 0x80) {
            fputc(*s++, out);
        } else {
            int length = utf8_sequence(s);
            if (length) {
                fwrite(s, 1, (size_t)length, out);
                s += length;
            } else {
                fputs("\\ufffd", out);
                s++;
            }
        }
    }
    fputc('"', out);
}

void cli_json_key(cli_json *json, const char *key)
{
    assert(!json->after_key);
    separate(json);
    write_escaped(json->out, key);
    fputs(": ", json->out);
    json->after_key = 1;
}

void cli_json_string(cli_json *json, const char *text)
{
    if (!text) {
        cli_json_null(json);
        return;
    }
    separate(json);
    write_escaped(json->out, text);
}

void cli_json_int(cli_json *json, int64_t value)
{
    separate(json);
    fprintf(json->out, "%" PRId64, value);
}

void cli_json_uint(cli_json *json, uint64_t value)
{
    separate(json);
    fprintf(json->out, "%" PRIu64, value);
}

void cli_json_double(cli_json *json, double value)
{
    separate(json);
    if (value != value || value - value != 0) /* NaN or infinite: JSON has no such number */
        fputs("null", json->out);
    else
        fprintf(json->out, "%.6g", value);
}

void cli_json_bool(cli_json *json, int value)
{
    separate(json);
    fputs(value ? "true" : "false", json->out);
}

void cli_json_null(cli_json *json)
{
    separate(json);
    fputs("null", json->out);
}

void cli_json_member_string(cli_json *json, const char *key, const char *text)
{
    cli_json_key(json, key);
    cli_json_string(json, text);
}

void cli_json_member_int(cli_json *json, const char *key, int64_t value)
{
    cli_json_key(json, key);
    cli_json_int(json, value);
}

void cli_json_member_uint(cli_json *json, const char *key, uint64_t value)
{
    cli_json_key(json, key);
    cli_json_uint(json, value);
}

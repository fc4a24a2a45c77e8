/* json.h — a small streaming JSON writer for the CLI's --json output: one value per call, the
 * writer puts the commas, newlines and two-space indentation. Strings are escaped (quotes,
 * backslashes, every control character as \u00XX) and kept valid UTF-8 (a byte that is not
 * part of a valid sequence becomes U+FFFD), so a compiler log or a path can never break the
 * document. Write errors are left to the stream: check ferror() once at the end. */
#ifndef PTXJIT_CLI_JSON_H
#define PTXJIT_CLI_JSON_H

#include <stdint.h>
#include <stdio.h>

#define CLI_JSON_MAX_DEPTH 16

typedef struct {
    FILE *out;
    int depth;
    int count[CLI_JSON_MAX_DEPTH + 1]; /* values written so far in each open container */
    int flat[CLI_JSON_MAX_DEPTH + 1];  /* the container keeps its values on one line */
    int after_key;                     /* a key was written; its value comes next */
} cli_json;

void cli_json_init(cli_json *json, FILE *out);
/* The newline that ends the document, once the outermost container is closed. */
void cli_json_finish(cli_json *json);

void cli_json_object_begin(cli_json *json);
void cli_json_object_end(cli_json *json);
void cli_json_array_begin(cli_json *json);
/* An array of scalars on one line, ["a", "b"], where a list of short names reads best. */
void cli_json_flat_array_begin(cli_json *json);
void cli_json_array_end(cli_json *json);
/* A member's name inside an object; the next call writes its value. */
void cli_json_key(cli_json *json, const char *key);

void cli_json_string(cli_json *json, const char *text); /* NULL: null */
void cli_json_int(cli_json *json, int64_t value);
void cli_json_uint(cli_json *json, uint64_t value);
/* Six significant digits; null for a NaN or an infinity. */
void cli_json_double(cli_json *json, double value);
void cli_json_bool(cli_json *json, int value);
void cli_json_null(cli_json *json);

/* Key and value in one call, for the common members of an object. */
void cli_json_member_string(cli_json *json, const char *key, const char *text);
void cli_json_member_int(cli_json *json, const char *key, int64_t value);
void cli_json_member_uint(cli_json *json, const char *key, uint64_t value);

#endif

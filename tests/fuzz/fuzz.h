/* fuzz.h — the fuzz harnesses: each takes arbitrary bytes, runs one parser over them and
 * aborts when a property that must hold for every input does not. libFuzzer drives them
 * (libfuzzer_main.c, `make fuzz`); the Check suite replays the corpus and the regression
 * inputs through the same functions (test_fuzz_replay.c). */
#ifndef PTXJIT_FUZZ_H
#define PTXJIT_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* The bytes as a request ("key=value ...") against every built-in family. */
int fuzz_params(const uint8_t *data, size_t size);
/* The bytes as a template: its //@ptxjit schema, then a request with the defaults. */
int fuzz_schema(const uint8_t *data, size_t size);
/* The bytes as a disk-cache entry file (first byte: harness flags, see fuzz_entry.c). */
int fuzz_entry(const uint8_t *data, size_t size);
/* The bytes as a *.cu file of a template directory (first byte: the size cap, see
 * fuzz_template.c), read by an open and a reload. */
int fuzz_template(const uint8_t *data, size_t size);
/* The bytes as a Redis server's replies to the remote tier (first byte: the bulk cap and a
 * piece size, see fuzz_resp.c), and as the words of a command it sends. */
int fuzz_resp(const uint8_t *data, size_t size);

/* Aborts with a message when a harness property fails: a bug, not a bad input. */
void fuzz_require(int condition, const char *what);
/* The bytes as a NUL-terminated string (NUL bytes inside end it early); caller frees. */
char *fuzz_text(const uint8_t *data, size_t size);

#endif

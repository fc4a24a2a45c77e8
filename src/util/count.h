/* count.h — a count as people write one (1000003, 2^30, 2^28+37), strictly: decimal digits,
 * no sign, nothing after, no overflow, from 1 to a maximum. Shared by the tuner's problems and
 * the CLI's sizes, runs and devices. */
#ifndef PTXJIT_COUNT_H
#define PTXJIT_COUNT_H

#include <stddef.h>
#include <stdint.h>

/* The largest size a problem or a CLI size word takes: no GPU holds more elements, and two
 * such sizes and an element's bytes multiply without wrapping only when checked. */
#define PJ_COUNT_MAX (1ull << 48)

/* 1 and *out set when text's first length bytes are a count from 1 to max (at most
 * PJ_COUNT_MAX); else 0. */
int pj_count_parse(uint64_t *out, const char *text, size_t length, uint64_t max);

/* An on/off setting as people write one (an environment variable): 0 for unset, empty, 0, no
 * or false; 1 for 1, yes or true (either case); -1 for anything else, which the caller reads
 * the safe way and warns about. */
int pj_switch_parse(const char *text);

#endif

/* fuzz_util.c — what the harnesses share. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"

void fuzz_require(int condition, const char *what)
{
    if (condition)
        return;
    fprintf(stderr, "fuzz property failed: %s\n", what);
    abort();
}

char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    fuzz_require(text != NULL, "malloc");
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

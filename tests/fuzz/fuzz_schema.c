/* fuzz_schema.c — the template schema parser (//@ptxjit directives and the expression
 * language), then a request with every default, which evaluates each `when` and constraint.
 * Properties: no crash or undefined behaviour; an accepted request's canonical form parses
 * again to itself. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "params/schema.h"

int fuzz_schema(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    pj_schema *schema = NULL;
    if (pj_schema_parse(&schema, text, "fuzz.cu") == PTXJIT_OK) {
        char *description = pj_schema_describe(schema);
        fuzz_require(description != NULL, "a parsed schema describes itself");
        free(description);
        pj_request request, again;
        if (pj_request_parse(&request, schema, "", 90) == PTXJIT_OK) {
            char *canonical = pj_request_canonical(&request);
            fuzz_require(canonical != NULL, "canonical form");
            fuzz_require(pj_request_parse(&again, schema, canonical, 90) == PTXJIT_OK,
                         "the canonical form of the defaults is accepted");
            char *twice = pj_request_canonical(&again);
            fuzz_require(twice && strcmp(canonical, twice) == 0,
                         "canonical form is a fixed point");
            free(twice);
            free(canonical);
            pj_request_free(&again);
            pj_request_free(&request);
        }
        pj_schema_free(schema);
    }
    free(text);
    return 0;
}

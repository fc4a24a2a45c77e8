/* fuzz_params.c — the request parser: any text against every built-in family's schema, at
 * two targets. Properties: no crash or undefined behaviour; an accepted request's canonical
 * form parses again to the same canonical form. */
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "params/schema.h"
#include "request/templates.h"


enum { MAX_SCHEMAS = 16 };
static pj_schema *schemas[MAX_SCHEMAS];
static int schema_count = -1;

/* Parsed once: the fuzzer calls the harness millions of times. */
static void load_schemas(void)
{
    if (schema_count >= 0)
        return;
    schema_count = 0;
    for (int i = 0; pj_embedded_templates[i].path && schema_count < MAX_SCHEMAS; i++) {
        ptxjit_status status = pj_schema_parse(&schemas[schema_count],
                                            pj_embedded_templates[i].text,
                                            pj_embedded_templates[i].path);
        fuzz_require(status == PTXJIT_OK, "a built-in template parses");
        schema_count++;
    }
}

/* Parses text; when accepted, its canonical form must be a fixed point. */
static void check_request(const pj_schema *schema, const char *text, int sm)
{
    pj_request request, again;
    if (pj_request_parse(&request, schema, text, sm) != PTXJIT_OK)
        return;
    char *canonical = pj_request_canonical(&request);
    fuzz_require(canonical != NULL, "canonical form");
    fuzz_require(pj_request_parse(&again, schema, canonical, sm) == PTXJIT_OK,
                 "the canonical form of an accepted request is accepted");
    char *twice = pj_request_canonical(&again);
    fuzz_require(twice && strcmp(canonical, twice) == 0, "canonical form is a fixed point");
    free(twice);
    free(canonical);
    pj_request_free(&again);
    pj_request_free(&request);
}

int fuzz_params(const uint8_t *data, size_t size)
{
    load_schemas();
    char *text = fuzz_text(data, size);
    for (int i = 0; i < schema_count; i++) {
        check_request(schemas[i], text, 90);
        check_request(schemas[i], text, 80);
    }
    free(text);
    return 0;
}

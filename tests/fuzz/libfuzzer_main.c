/* libfuzzer_main.c — libFuzzer's entry point for one harness, chosen at build time with
 * -DPJ_FUZZ_TARGET=fuzz_params (or fuzz_schema, fuzz_entry, fuzz_template, fuzz_resp). */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return PJ_FUZZ_TARGET(data, size);
}

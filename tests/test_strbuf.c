/* test_strbuf.c — string buffers and hashing helpers. */
#include <string.h>

#include "test_util.h"

START_TEST(strbuf_appends_and_formats)
{
    pj_strbuf sb;
    sb_init(&sb);
    sb_append(&sb, "tpb=");
    sb_appendf(&sb, "%d %s", 256, "x");
    char *text = sb_take(&sb);
    ck_assert_str_eq(text, "tpb=256 x");
    free(text);
}
END_TEST

START_TEST(hash_fields_are_unambiguous)
{
    pj_hasher *a = hasher_new(), *b = hasher_new();
    hasher_field_str(a, "x", "ab");
    hasher_field_str(a, "y", "c");
    hasher_field_str(b, "x", "a");
    hasher_field_str(b, "y", "bc");
    pj_hash128 ha = hasher_digest(a), hb = hasher_digest(b);
    ck_assert(ha.low != hb.low || ha.high != hb.high);
    char hex[33];
    pj_hash_hex(&ha, hex);
    ck_assert_uint_eq(strlen(hex), 32);
    hasher_free(a);
    hasher_free(b);
}
END_TEST

Suite *suite_strbuf(void)
{
    Suite *suite = suite_create("strbuf");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, strbuf_appends_and_formats);
    tcase_add_test(tc, hash_fields_are_unambiguous);
    suite_add_tcase(suite, tc);
    return suite;
}

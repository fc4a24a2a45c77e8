/* test_strbuf.c — string buffers and hashing helpers. */
#include <string.h>

#include "test_util.h"

START_TEST(strbuf_appends_and_formats)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, "tpb=");
    pj_sb_appendf(&sb, "%d %s", 256, "x");
    char *text = pj_sb_take(&sb);
    ck_assert_str_eq(text, "tpb=256 x");
    free(text);
}
END_TEST

START_TEST(hash_fields_are_unambiguous)
{
    pj_hasher *a = pj_hasher_new(), *b = pj_hasher_new();
    pj_hasher_field_str(a, "x", "ab");
    pj_hasher_field_str(a, "y", "c");
    pj_hasher_field_str(b, "x", "a");
    pj_hasher_field_str(b, "y", "bc");
    pj_hash128 ha = pj_hasher_digest(a), hb = pj_hasher_digest(b);
    ck_assert(ha.low != hb.low || ha.high != hb.high);
    char hex[33];
    pj_hash_hex(&ha, hex);
    ck_assert_uint_eq(strlen(hex), 32);
    pj_hasher_free(a);
    pj_hasher_free(b);
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

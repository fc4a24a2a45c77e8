/* test_fuzz_replay.c — every committed fuzz input, seed corpus and regressions alike, through
 * the fuzz harnesses (tests/fuzz/) in the ordinary build: an input that once crashed stays a
 * test, and the sanitizer builds (make asan, ubsan, tsan, valgrind) check it again. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "cache/entry.h"
#include "fuzz/fuzz.h"
#include "test_util.h"

#include <unistd.h>

#ifndef PJ_SOURCE_DIR
#define PJ_SOURCE_DIR "."
#endif

/* The inputs: in the tree the runner was built from, else (binaries carried to another
 * machine) in the current directory's tests/fuzz. */
static void input_path(char *out, size_t size, const char *dir)
{
    snprintf(out, size, "%s/tests/fuzz/%s", PJ_SOURCE_DIR, dir);
    if (access(out, R_OK) != 0)
        snprintf(out, size, "tests/fuzz/%s", dir);
}

/* Runs harness over every file of dir (under tests/fuzz); returns the count, or -1 when
 * there is no such directory. */
static int replay(int (*harness)(const uint8_t *, size_t), const char *dir)
{
    char path[4096];
    input_path(path, sizeof path, dir);
    DIR *handle = opendir(path);
    if (!handle)
        return -1;
    int count = 0;
    for (struct dirent *e; (e = readdir(handle));) {
        if (e->d_name[0] == '.')
            continue;
        char file[4400];
        snprintf(file, sizeof file, "%s/%s", path, e->d_name);
        char *data = NULL;
        size_t size = 0;
        ck_assert_int_eq(pj_read_file(&data, &size, file), PTXJIT_OK);
        harness((const uint8_t *)data, size); /* a broken property aborts the test */
        free(data);
        count++;
    }
    closedir(handle);
    return count;
}

/* The target's seed corpus (which must exist and hold inputs) and its regressions. */
static void replay_target(int (*harness)(const uint8_t *, size_t), const char *target)
{
    char dir[64];
    snprintf(dir, sizeof dir, "corpus/%s", target);
    ck_assert_msg(replay(harness, dir) > 0, "no seed corpus in tests/fuzz/%s", dir);
    snprintf(dir, sizeof dir, "regressions/%s", target);
    replay(harness, dir);
}

START_TEST(params_corpus_and_regressions_replay_cleanly)
{
    replay_target(fuzz_params, "params");
}
END_TEST

START_TEST(schema_corpus_and_regressions_replay_cleanly)
{
    replay_target(fuzz_schema, "schema");
    ck_assert_int_ge(replay(fuzz_schema, "regressions/schema"), 6);
}
END_TEST

START_TEST(entry_corpus_and_regressions_replay_cleanly)
{
    replay_target(fuzz_entry, "entry");
}
END_TEST

START_TEST(template_corpus_replays_cleanly)
{
    replay_target(fuzz_template, "template");
}
END_TEST

START_TEST(resp_corpus_replays_cleanly)
{
    replay_target(fuzz_resp, "resp");
}
END_TEST

/* The committed real entries must decode: otherwise the corpus would only test refusals. */
START_TEST(entry_corpus_holds_accepted_entries)
{
    char path[4096], *data = NULL;
    size_t size = 0;
    input_path(path, sizeof path, "corpus/entry/real_reduce_entry");
    ck_assert_int_eq(pj_read_file(&data, &size, path), PTXJIT_OK);
    char key[33];
    memcpy(key, data + 1 + 16, 32);
    key[32] = '\0';
    pj_artifact artifact;
    const char *why = NULL;
    ck_assert_int_eq(pj_entry_decode(&artifact, &why, data + 1, size - 1, key), PTXJIT_OK);
    ck_assert_str_eq(artifact.family, "reduce");
    pj_artifact_free(&artifact);
    free(data);
}
END_TEST

Suite *suite_fuzz_replay(void)
{
    Suite *suite = suite_create("fuzz_replay");
    TCase *tc = tcase_create("replay");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, params_corpus_and_regressions_replay_cleanly);
    tcase_add_test(tc, schema_corpus_and_regressions_replay_cleanly);
    tcase_add_test(tc, entry_corpus_and_regressions_replay_cleanly);
    tcase_add_test(tc, entry_corpus_holds_accepted_entries);
    tcase_add_test(tc, template_corpus_replays_cleanly);
    tcase_add_test(tc, resp_corpus_replays_cleanly);
    suite_add_tcase(suite, tc);
    return suite;
}

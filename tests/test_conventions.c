/* test_conventions.c — promises about the whole of ptxjit rather than one part: of the API,
 * that the last error stays until the next failure, that NULL arguments are refused and that
 * a second ptxjit_close is caught; of the sources, that library messages point embedders at
 * the API (not at the CLI) and that every environment variable read is documented in
 * `ptxjit --help` and README.md. */
#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

/* Runs the CLI ($PTXJIT_CLI) with args, stdout and stderr together into *out; exit status. */
static int run_cli(char **out, const char *args)
{
    return test_run_cli(out, NULL, "", args, NULL);
}

START_TEST(the_last_error_stays_until_the_next_failure)
{
    ptxjit_context *context = test_open_offline(NULL);
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "reduce", "tpb=100"),
                     PTXJIT_ERR_PARAM);
    char kept[4096];
    snprintf(kept, sizeof kept, "%s", ptxjit_last_error());
    /* The message names the API that describes the parameters, not a command to run. */
    ck_assert_msg(strstr(kept, "ptxjit_family_describe(\"reduce\")") && !strstr(kept, "'ptxjit "),
                  "%s", kept);
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "reduce", "tpb=128"),
                     PTXJIT_OK);
    free(canonical);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "tpb=128", NULL), PTXJIT_OK);
    ck_assert_int_gt(ptxjit_family_count(context), 0);
    ck_assert_str_eq(ptxjit_last_error(), kept);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "colour=red", NULL),
                     PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "unknown parameter 'colour'"));
    ptxjit_close(context);
}
END_TEST

/* Closing a context twice is undefined, as free() twice is (ptxjit.h); the second close is
 * caught cheaply: a warning on stderr (the default logger) and nothing freed, so the asan run
 * sees no use after free. Another context opened meanwhile stays open and usable. */
START_TEST(a_second_close_warns_and_frees_nothing)
{
    ptxjit_context *context = test_open_offline(NULL);
    ptxjit_context *other = test_open_offline(NULL);
    char *dir = test_mkdtemp();
    char path[4096];
    snprintf(path, sizeof path, "%s/stderr", dir);
    fflush(stderr);
    int saved = dup(2);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    ck_assert_int_ge(fd, 0);
    dup2(fd, 2);
    close(fd);
    ptxjit_close(context);
    ptxjit_close(context); /* the mistake */
    ptxjit_close(NULL);    /* ignored, silently */
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    char *text;
    ck_assert_int_eq(pj_read_file(&text, NULL, path), PTXJIT_OK);
    ck_assert_msg(strstr(text, "ptxjit: warning: ptxjit_close(") &&
                      strstr(text, "not an open context (closed already?); ignored"),
                  "%s", text);
    ck_assert_ptr_null(strstr(strstr(text, "ignored") + 1, "ignored")); /* once */
    free(text);
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, other, "reduce", "tpb=128"), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(canonical, "tpb=128"));
    free(canonical);
    ptxjit_close(other);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- The sources, read as text ---- */

static pj_strbuf sources_found; /* "path\n" for each .c and .h file under src/ */

static int add_source(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)ftw;
    size_t length = strlen(path);
    if (flag == FTW_F && length > 2 &&
        (strcmp(path + length - 2, ".c") == 0 || strcmp(path + length - 2, ".h") == 0))
        pj_sb_appendf(&sources_found, "%s\n", path);
    return 0;
}

/* Every source file's path under src/, one a line (the caller frees). */
static char *source_files(void)
{
    pj_sb_init(&sources_found);
    ck_assert_int_eq(nftw(PJ_SOURCE_DIR "/src", add_source, 16, FTW_PHYS), 0);
    return pj_sb_take(&sources_found);
}

/* The CLI's own files may name its commands; the library's must not. */
static int is_cli_file(const char *path)
{
    const char *name = strrchr(path, '/');
    return strstr(path, "/src/cli/") || (strstr(path, "/src/families/") && name &&
                                         strcmp(name, "/cli.c") == 0);
}

START_TEST(library_messages_name_no_cli_command)
{
    char *files = source_files();
    pj_strbuf found;
    pj_sb_init(&found);
    for (char *path = strtok(files, "\n"); path; path = strtok(NULL, "\n")) {
        if (is_cli_file(path))
            continue;
        char *text;
        ck_assert_int_eq(pj_read_file(&text, NULL, path), PTXJIT_OK);
        for (const char *at = strstr(text, "'ptxjit "); at; at = strstr(at + 1, "'ptxjit "))
            if (at[8] >= 'a' && at[8] <= 'z')
                pj_sb_appendf(&found, "\n  %s: %.40s", path, at);
        free(text);
    }
    ck_assert_msg(!found.data || !*found.data,
                  "library messages tell embedders to run the CLI; name the API or the fix:%s",
                  found.data);
    pj_sb_free(&found);
    free(files);
}
END_TEST

/* Appends to names each NAME of getenv("NAME") and `.override = "NAME"` in text. */
static void environment_names(pj_strbuf *names, const char *text)
{
    static const char *const markers[] = {"getenv(\"", ".override = \""};
    for (size_t m = 0; m < PJ_ARRAY_SIZE(markers); m++)
        for (const char *at = strstr(text, markers[m]); at; at = strstr(at + 1, markers[m])) {
            const char *name = at + strlen(markers[m]);
            size_t length = strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
            if (length && name[length] == '"')
                pj_sb_appendf(names, "%.*s\n", (int)length, name);
        }
}

START_TEST(every_environment_variable_read_is_documented)
{
    char *files = source_files(), *help, *readme;
    pj_strbuf names;
    pj_sb_init(&names);
    for (char *path = strtok(files, "\n"); path; path = strtok(NULL, "\n")) {
        char *text;
        ck_assert_int_eq(pj_read_file(&text, NULL, path), PTXJIT_OK);
        environment_names(&names, text);
        free(text);
    }
    ck_assert_int_eq(run_cli(&help, "--help"), 0);
    ck_assert_int_eq(pj_read_file(&readme, NULL, PJ_SOURCE_DIR "/README.md"), PTXJIT_OK);
    int count = 0;
    for (char *name = strtok(names.data, "\n"); name; name = strtok(NULL, "\n"), count++) {
        char quoted[128];
        snprintf(quoted, sizeof quoted, "`%s`", name);
        ck_assert_msg(strstr(help, name), "ptxjit --help does not name %s, which is read", name);
        ck_assert_msg(strstr(readme, quoted), "README.md's table does not name %s", name);
    }
    ck_assert_int_ge(count, 12); /* the scan found them: PTXJIT_CACHE_DIR, CUDA_HOME, ... */
    pj_sb_free(&names);
    free(readme), free(help), free(files);
}
END_TEST

/* A NULL out parameter, context or family is refused naming it, never dereferenced; an out
 * pointer is NULL after an error. */
START_TEST(null_arguments_are_refused)
{
    ptxjit_context *context = test_open_offline(NULL);
    char *text = (char *)"unchanged";
    ck_assert_int_eq(ptxjit_canonical_params(NULL, context, "reduce", ""),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_canonical_params(&text, NULL, "reduce", ""),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(text);
    text = (char *)"unchanged";
    ck_assert_int_eq(ptxjit_canonical_params(&text, context, NULL, ""),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(text);
    ck_assert_int_eq(ptxjit_canonical_params(&text, context, "reduce", "tpb=3"), PTXJIT_ERR_PARAM);
    ck_assert_ptr_null(text);
    ck_assert_int_eq(ptxjit_canonical_params(&text, context, "reduce", NULL), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(text, "tpb="));
    free(text);
    ck_assert_int_eq(ptxjit_cache_stats_get(NULL, context), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "out is NULL"));
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

Suite *suite_conventions(void)
{
    Suite *s = suite_create("conventions");
    TCase *api = tcase_create("api");
    tcase_set_timeout(api, 120);
    tcase_add_test(api, the_last_error_stays_until_the_next_failure);
    tcase_add_test(api, null_arguments_are_refused);
    tcase_add_test(api, a_second_close_warns_and_frees_nothing);
    suite_add_tcase(s, api);
    /* The sources read as text; the environment case also runs `ptxjit --help`. */
    TCase *sources = tcase_create("sources");
    tcase_set_timeout(sources, 120);
    tcase_add_test(sources, library_messages_name_no_cli_command);
    tcase_add_test(sources, every_environment_variable_read_is_documented);
    suite_add_tcase(s, sources);
    return s;
}

/* test_dynlib.c — the one library loader (src/dynlib.h): the order of its candidates, what its
 * error says it tried and why, the override that stands alone, refusals, symbol tables. Uses
 * only libraries every test machine has (libm, libc) and files the test makes. */
#include <dlfcn.h>
#include <libgen.h>
#include <stdio.h>
#include <string.h>

#include "util/dynlib.h"
#include "test_util.h"

#define OVERRIDE "PTXJIT_TEST_DYNLIB_LIBRARY"
#define FIX "do what the fix says"

static const char *const no_such_soname[] = {"libpjtest_no_such_library.so.1", NULL};
static const char *const libm[] = {"libm.so.6", NULL};

static void assert_contains(const char *text, const char *needle)
{
    ck_assert_msg(strstr(text, needle), "'%s' lacks '%s'", text, needle);
}

/* A file named like a library that is no ELF file: found, and failing to load. */
static void write_not_a_library(char *path, size_t size, const char *dir, const char *name)
{
    snprintf(path, size, "%s/%s", dir, name);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("not a shared library\n", file);
    fclose(file);
}

START_TEST(dynlib_error_lists_each_candidate_in_order_then_the_fix)
{
    char *dir = test_mkdtemp(), broken[4200], expected[9000];
    write_not_a_library(broken, sizeof broken, dir, "broken.so");
    setenv(OVERRIDE, broken, 1);
    setenv("CUDA_HOME", dir, 1);
    const pj_dynlib_spec spec = {.what = "the test library", .override = OVERRIDE,
                                 .sonames = no_such_soname, .file = "libpjtest.so",
                                 .places = PJ_DYNLIB_CUDA_HOME, .fix = FIX};
    pj_dynlib lib;
    ck_assert_int_eq(pj_dynlib_open(&lib, &spec), 0);
    ck_assert_ptr_null(lib.handle);
    /* The override exists but is no library: its reason is given, without its path again. */
    snprintf(expected, sizeof expected, "cannot load the test library (tried %s (", broken);
    ck_assert_msg(strncmp(lib.error, expected, strlen(expected)) == 0, "'%s'", lib.error);
    ck_assert_ptr_null(strstr(lib.error + strlen(expected), broken));
    /* The missing ones are listed bare, in order, and the fix ends the message. */
    snprintf(expected, sizeof expected, "), libpjtest_no_such_library.so.1, %s/lib64/libpjtest.so, "
             "%s/lib/libpjtest.so); " FIX, dir, dir);
    assert_contains(lib.error, expected);
    unsetenv(OVERRIDE);
    unsetenv("CUDA_HOME");
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(dynlib_override_goes_first_and_alone_only_when_asked)
{
    setenv(OVERRIDE, "/nonexistent/libpjtest.so", 1);
    pj_dynlib_spec spec = {.what = "libm", .override = OVERRIDE, .sonames = libm,
                           .places = PJ_DYNLIB_OVERRIDE_ALONE, .fix = FIX};
    pj_dynlib lib;
    ck_assert_int_eq(pj_dynlib_open(&lib, &spec), 0);
    ck_assert_str_eq(lib.error, "cannot load libm (tried /nonexistent/libpjtest.so); " FIX);
    spec.places = 0; /* the override missing, the sonames are tried next */
    ck_assert_int_eq(pj_dynlib_open(&lib, &spec), 1);
    /* The file the soname resolved to, as the dynamic linker names it. */
    ck_assert_msg(lib.path[0] == '/' && strstr(lib.path, "libm"), "path '%s'", lib.path);
    pj_dynlib_close(&lib);
    ck_assert_ptr_null(lib.handle);
    setenv(OVERRIDE, "", 1); /* empty: as if unset */
    spec.places = PJ_DYNLIB_OVERRIDE_ALONE;
    ck_assert_int_eq(pj_dynlib_open(&lib, &spec), 1);
    pj_dynlib_close(&lib);
    unsetenv(OVERRIDE);
}
END_TEST

static const char *refuse(void *handle, void *user)
{
    ck_assert_ptr_nonnull(handle);
    ++*(int *)user;
    return "it holds another LLVM version";
}

START_TEST(dynlib_check_refuses_a_candidate_with_its_reason)
{
    int asked = 0;
    const pj_dynlib_spec spec = {.what = "libm", .sonames = libm, .check = refuse,
                                 .check_user = &asked, .fix = FIX};
    pj_dynlib lib;
    ck_assert_int_eq(pj_dynlib_open(&lib, &spec), 0);
    ck_assert_int_eq(asked, 1);
    ck_assert_str_eq(lib.error, "cannot load libm (tried libm.so.6 (refused: it holds another "
                                "LLVM version)); " FIX);
}
END_TEST

/* The test runner is linked with libptxjit.a, so the file holding its code is the runner,
 * and so is /proc/self/exe: its folder is looked in once, then its ../lib. (dladdr names the
 * runner as it was started, "build/ptxjit_tests", and that is the name tried.) */
START_TEST(dynlib_looks_next_to_its_own_code_once)
{
    char self[4096], expected[9000];
    Dl_info info;
    ck_assert(dladdr((const void *)pj_dynlib_open, &info) && info.dli_fname);
    snprintf(self, sizeof self, "%s", info.dli_fname);
    const char *folder = dirname(self);
    const pj_dynlib_spec spec = {.what = "it", .file = "libpjtest_absent.so",
                                 .places = PJ_DYNLIB_NEXT_TO_SELF | PJ_DYNLIB_NEXT_TO_EXE,
                                 .self = (const void *)pj_dynlib_open, .fix = FIX};
    pj_dynlib lib;
    ck_assert_int_eq(pj_dynlib_open(&lib, &spec), 0);
    snprintf(expected, sizeof expected,
             "cannot load it (tried %s/libpjtest_absent.so, %s/../lib/libpjtest_absent.so); " FIX,
             folder, folder);
    ck_assert_str_eq(lib.error, expected);
}
END_TEST

START_TEST(dynlib_resolve_names_the_first_symbol_missing)
{
    pj_dynlib lib;
    const pj_dynlib_spec spec = {.what = "libm", .sonames = libm, .fix = FIX};
    ck_assert_int_eq(pj_dynlib_open(&lib, &spec), 1);
    void *cos_slot = NULL, *missing_slot = &lib, *sin_slot = &lib;
    const pj_dynlib_symbol symbols[] = {
        {"cos", &cos_slot}, {"pjtest_no_such_symbol", &missing_slot}, {"sin", &sin_slot}};
    ck_assert_str_eq(pj_dynlib_resolve(lib.handle, symbols, 3), "pjtest_no_such_symbol");
    ck_assert_ptr_nonnull(cos_slot);
    ck_assert_ptr_null(missing_slot);
    ck_assert_ptr_eq(sin_slot, &lib); /* not reached */
    ck_assert_ptr_null(pj_dynlib_resolve(lib.handle, symbols, 1));
    pj_dynlib_close(&lib);
}
END_TEST

/* nvJitLink's form is __NAME_SUFFIX; libc has a symbol of that shape in every version:
 * __libc_start_main. */
START_TEST(dynlib_versioned_lookup_takes_the_first_suffix_present)
{
    void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_LOCAL);
    ck_assert_ptr_nonnull(libc);
    static const char *const suffixes[] = {"13_0", "start_main", NULL};
    static const char *const none[] = {"13_0", "12_0", NULL};
    ck_assert_ptr_eq(pj_dynlib_versioned_symbol(libc, "libc", suffixes),
                     dlsym(libc, "__libc_start_main"));
    ck_assert_ptr_null(pj_dynlib_versioned_symbol(libc, "libc", none));
    void *slot = NULL;
    const pj_dynlib_symbol symbol = {"libc", &slot};
    ck_assert_ptr_null(pj_dynlib_resolve_versioned(libc, &symbol, 1, suffixes));
    ck_assert_ptr_nonnull(slot);
    ck_assert_str_eq(pj_dynlib_resolve_versioned(libc, &symbol, 1, none), "libc");
    dlclose(libc);
}
END_TEST

Suite *suite_dynlib(void)
{
    Suite *suite = suite_create("dynlib");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, dynlib_error_lists_each_candidate_in_order_then_the_fix);
    tcase_add_test(tc, dynlib_override_goes_first_and_alone_only_when_asked);
    tcase_add_test(tc, dynlib_check_refuses_a_candidate_with_its_reason);
    tcase_add_test(tc, dynlib_looks_next_to_its_own_code_once);
    tcase_add_test(tc, dynlib_resolve_names_the_first_symbol_missing);
    tcase_add_test(tc, dynlib_versioned_lookup_takes_the_first_suffix_present);
    suite_add_tcase(suite, tc);
    return suite;
}

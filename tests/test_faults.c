/* test_faults.c — the disk cache's faults seen from a request: a damaged or foreign entry, a
 * directory or link in its place, a read-only or missing cache directory, a full disk. Each
 * gives a warning naming the problem, and the kernel still comes back, equal to a fresh
 * compile. (test_cache_disk.c pins the same faults at the cache's own interface.) */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request/context.h"
#include "fileio_faults.h"
#include "test_util.h"

#define PARAMS "variant=batched batch=5 dtype=f32"

typedef struct {
    char *dir;
    char *ptx;           /* the kernel as a fresh compile makes it */
    void *cubin;
    size_t cubin_size;
    char *entry;         /* its entry file */
    int warnings;
    char warning[8][1024];
} fault_fixture;

static void on_log(void *user, ptxjit_log_level level, const char *message)
{
    fault_fixture *f = user;
    if (level == PTXJIT_LOG_WARNING && f->warnings < 8)
        snprintf(f->warning[f->warnings++], sizeof f->warning[0], "%s", message);
}

static ptxjit_context *open_context(fault_fixture *f, const char *cache_dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = cache_dir;
    options.use_gpu = 0;
    options.log = on_log;
    options.log_user = f;
    ptxjit_context *context;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

/* A cache holding the kernel, which is kept as the reference. */
static void setup(fault_fixture *f)
{
    memset(f, 0, sizeof *f);
    f->dir = test_mkdtemp();
    ptxjit_context *context = open_context(f, f->dir);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", PARAMS, NULL), PTXJIT_OK);
    f->ptx = pj_strdup(ptxjit_kernel_ptx(kernel));
    const void *cubin = ptxjit_kernel_cubin(kernel, &f->cubin_size);
    f->cubin = malloc(f->cubin_size);
    memcpy(f->cubin, cubin, f->cubin_size);
    f->entry = pj_disk_cache_entry_path(context->disk, ptxjit_kernel_key(kernel));
    ck_assert_int_eq(access(f->entry, R_OK), 0);
    ptxjit_close(context);
    ck_assert_int_eq(f->warnings, 0);
}

static void teardown(fault_fixture *f)
{
    pj_fileio_clear_faults();
    chmod(f->dir, 0700);
    test_rmtree(f->dir);
    free(f->dir);
    free(f->ptx);
    free(f->cubin);
    free(f->entry);
}

/* In a fresh context on cache_dir: the kernel comes from `want`, equals the reference, and
 * some warning of this request contains needle (NULL: no warning). */
static void expect_right_kernel(fault_fixture *f, const char *cache_dir, ptxjit_origin want,
                                const char *needle)
{
    f->warnings = 0;
    ptxjit_context *context = open_context(f, cache_dir);
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "reduce", PARAMS, &origin) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    ck_assert_int_eq(origin, want);
    ck_assert_str_eq(ptxjit_kernel_ptx(kernel), f->ptx);
    size_t size;
    const void *cubin = ptxjit_kernel_cubin(kernel, &size);
    ck_assert_uint_eq(size, f->cubin_size);
    ck_assert_mem_eq(cubin, f->cubin, size);
    int seen = needle == NULL && f->warnings == 0;
    for (int i = 0; needle && i < f->warnings; i++)
        seen |= strstr(f->warning[i], needle) != NULL;
    ck_assert_msg(seen, "no warning with '%s' (%d warnings, first: '%s')",
                  needle ? needle : "(none)", f->warnings, f->warnings ? f->warning[0] : "");
    ptxjit_close(context);
}

static void rewrite_entry(fault_fixture *f, size_t keep, long flip_at, uint32_t version)
{
    char *data = NULL;
    size_t size = 0;
    ck_assert_int_eq(pj_read_file(&data, &size, f->entry), PTXJIT_OK);
    if (flip_at >= 0)
        data[flip_at] ^= 0x04;
    if (version)
        memcpy(data + 8, &version, 4);
    FILE *file = fopen(f->entry, "wb");
    ck_assert_ptr_nonnull(file);
    fwrite(data, 1, keep < size ? keep : size, file);
    fclose(file);
    free(data);
}

/* A damaged entry is a warning, removed and rebuilt: the next context gets it from disk. */
static void expect_rebuilt(fault_fixture *f, const char *why)
{
    expect_right_kernel(f, f->dir, PTXJIT_ORIGIN_COMPILED, why);
    expect_right_kernel(f, f->dir, PTXJIT_ORIGIN_DISK, NULL);
}

START_TEST(fault_truncated_entry)
{
    fault_fixture f;
    setup(&f);
    rewrite_entry(&f, 5000, -1, 0);
    expect_rebuilt(&f, "is corrupt (checksum mismatch)");
    rewrite_entry(&f, 40, -1, 0);
    expect_rebuilt(&f, "is corrupt (truncated)");
    teardown(&f);
}
END_TEST

START_TEST(fault_zero_length_entry)
{
    fault_fixture f;
    setup(&f);
    rewrite_entry(&f, 0, -1, 0);
    expect_rebuilt(&f, "is corrupt (truncated)");
    teardown(&f);
}
END_TEST

START_TEST(fault_flipped_bit)
{
    fault_fixture f;
    setup(&f);
    rewrite_entry(&f, SIZE_MAX, 3000, 0); /* inside the PTX */
    expect_rebuilt(&f, "is corrupt (checksum mismatch)");
    teardown(&f);
}
END_TEST

START_TEST(fault_foreign_version_header)
{
    fault_fixture f;
    setup(&f);
    rewrite_entry(&f, SIZE_MAX, -1, PJ_ENTRY_FORMAT_VERSION + 1);
    expect_rebuilt(&f, "written by another cache format version");
    teardown(&f);
}
END_TEST

START_TEST(fault_entry_replaced_by_a_directory)
{
    fault_fixture f;
    setup(&f);
    ck_assert_int_eq(unlink(f.entry), 0);
    ck_assert_int_eq(mkdir(f.entry, 0700), 0);
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, "not a regular file");
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, "kernel not saved to the disk cache");
    struct stat st;
    ck_assert_int_eq(lstat(f.entry, &st), 0); /* left alone: not ours to remove */
    ck_assert(S_ISDIR(st.st_mode));
    teardown(&f);
}
END_TEST

START_TEST(fault_entry_replaced_by_a_symbolic_link)
{
    fault_fixture f;
    setup(&f);
    char elsewhere[4200];
    snprintf(elsewhere, sizeof elsewhere, "%s/elsewhere", f.dir);
    ck_assert_int_eq(rename(f.entry, elsewhere), 0);
    ck_assert_int_eq(symlink(elsewhere, f.entry), 0);
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, "a symbolic link");
    struct stat st;
    ck_assert_int_eq(lstat(f.entry, &st), 0);
    ck_assert(S_ISREG(st.st_mode)); /* the store put a real entry over the link */
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_DISK, NULL);
    teardown(&f);
}
END_TEST

/* Read-only at open: the writability check fails as a read-only file system makes it fail
 * (injected: root writes through permissions); as an ordinary user, also for real. */
START_TEST(fault_cache_dir_read_only)
{
    fault_fixture f;
    setup(&f);
    pj_fileio_inject_fault(FILEIO_ACCESS, 0, EROFS);
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, strerror(EROFS));
    ck_assert_ptr_nonnull(strstr(f.warning[0], "disk cache disabled"));
    if (geteuid() != 0) {
        ck_assert_int_eq(chmod(f.dir, 0500), 0);
        expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, strerror(EACCES));
    }
    teardown(&f);
}
END_TEST

/* Read-only after open: the store fails, is reported, and leaves nothing behind. */
START_TEST(fault_cache_dir_becomes_read_only)
{
    fault_fixture f;
    setup(&f);
    ck_assert_int_eq(unlink(f.entry), 0);
    pj_fileio_inject_fault(FILEIO_CREATE, 0, EROFS);
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, "cannot create a temporary file");
    ck_assert_ptr_nonnull(strstr(f.warning[0], strerror(EROFS)));
    ck_assert_int_eq(access(f.entry, F_OK), -1);
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, NULL); /* writable again: stored */
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_DISK, NULL);
    teardown(&f);
}
END_TEST

static int temp_files(const char *dir)
{
    char command[4300];
    snprintf(command, sizeof command, "find '%s' -name '*.tmp.*' | wc -l", dir);
    FILE *pipe = popen(command, "r");
    int count = -1;
    ck_assert_int_eq(fscanf(pipe, "%d", &count), 1);
    pclose(pipe);
    return count;
}

START_TEST(fault_disk_full)
{
    fault_fixture f;
    setup(&f);
    ck_assert_int_eq(unlink(f.entry), 0);
    pj_fileio_limit_writes(1000);
    pj_fileio_inject_fault(FILEIO_WRITE, 3, ENOSPC); /* 3000 bytes in */
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, strerror(ENOSPC));
    ck_assert_ptr_nonnull(strstr(f.warning[0], "kernel not saved to the disk cache"));
    ck_assert_int_eq(access(f.entry, F_OK), -1);
    ck_assert_int_eq(temp_files(f.dir), 0);
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_COMPILED, NULL);
    expect_right_kernel(&f, f.dir, PTXJIT_ORIGIN_DISK, NULL);
    teardown(&f);
}
END_TEST

START_TEST(fault_cache_dir_missing_and_not_creatable)
{
    fault_fixture f;
    setup(&f);
    char blocked[4300];
    snprintf(blocked, sizeof blocked, "%s/file", f.dir);
    FILE *file = fopen(blocked, "w");
    fclose(file);
    strcat(blocked, "/cache"); /* under a regular file: ENOTDIR, even for root */
    expect_right_kernel(&f, blocked, PTXJIT_ORIGIN_COMPILED, strerror(ENOTDIR));
    ck_assert_ptr_nonnull(strstr(f.warning[0], "disk cache disabled"));
    ck_assert_ptr_nonnull(strstr(f.warning[0], "PTXJIT_CACHE_DIR"));
    /* A parent without write permission (injected: root has it): the last level fails. */
    snprintf(blocked, sizeof blocked, "%s/new", f.dir);
    int levels = 0;
    for (const char *s = blocked; *s; s++)
        levels += *s == '/';
    pj_fileio_inject_fault(FILEIO_MKDIR, levels - 1, EACCES);
    expect_right_kernel(&f, blocked, PTXJIT_ORIGIN_COMPILED, strerror(EACCES));
    teardown(&f);
}
END_TEST

Suite *suite_faults(void)
{
    Suite *suite = suite_create("faults");
    TCase *tc = tcase_create("faults");
    tcase_set_timeout(tc, 300); /* several compiles per test, slow under valgrind */
    tcase_add_test(tc, fault_truncated_entry);
    tcase_add_test(tc, fault_zero_length_entry);
    tcase_add_test(tc, fault_flipped_bit);
    tcase_add_test(tc, fault_foreign_version_header);
    tcase_add_test(tc, fault_entry_replaced_by_a_directory);
    tcase_add_test(tc, fault_entry_replaced_by_a_symbolic_link);
    tcase_add_test(tc, fault_cache_dir_read_only);
    tcase_add_test(tc, fault_cache_dir_becomes_read_only);
    tcase_add_test(tc, fault_disk_full);
    tcase_add_test(tc, fault_cache_dir_missing_and_not_creatable);
    suite_add_tcase(suite, tc);
    return suite;
}

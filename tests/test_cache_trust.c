/* test_cache_trust.c — the cache directory's trust model: created private; one that another
 * user owns, or that its group or every user can write, is refused with a warning and the
 * context runs without a disk cache; a cache shared with a group is opt-in
 * (PTXJIT_CACHE_SHARED) and then made group-writable, but never trusted world-writable. */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cache/directory.h"
#include "cache/disk.h"
#include "test_util.h"

/* Another user's id: as root, nobody's (a directory is handed over with chown). */
#define OTHER_UID 65534

/* A directory owned by another user and writable by nobody else: made with chown as root;
 * for an ordinary user, "/" (root's) is one. */
static char *foreign_directory(char **base)
{
    *base = NULL;
    if (geteuid() != 0)
        return pj_strdup("/");
    *base = test_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/theirs", *base);
    ck_assert_int_eq(mkdir(path, 0755), 0);
    ck_assert_int_eq(chown(path, OTHER_UID, OTHER_UID), 0);
    return pj_strdup(path);
}

START_TEST(directory_of_another_user_is_not_trusted)
{
    char *base, *theirs = foreign_directory(&base);
    ck_assert_int_eq(pj_directory_check_trust(theirs, 0), PTXJIT_ERR_CACHE);
    const char *message = ptxjit_last_error();
    ck_assert_ptr_nonnull(strstr(message, theirs));
    ck_assert_ptr_nonnull(strstr(message, "not to you"));
    ck_assert_ptr_nonnull(strstr(message, "PTXJIT_CACHE_DIR"));
    ck_assert_ptr_nonnull(strstr(message, "PTXJIT_CACHE_SHARED=1"));
    ck_assert_int_eq(pj_directory_check_trust(theirs, 1), PTXJIT_OK); /* shared: on purpose */
    free(theirs);
    test_rmtree(base);
    free(base);
}
END_TEST

/* chmod's mode, then the trust check private and shared. */
static void expect_mode_trust(const char *dir, mode_t mode, ptxjit_status private_status,
                              ptxjit_status shared_status, const char *needle)
{
    ck_assert_int_eq(chmod(dir, mode), 0);
    ck_assert_int_eq(pj_directory_check_trust(dir, 0), private_status);
    if (needle)
        ck_assert_msg(strstr(ptxjit_last_error(), needle), "'%s' lacks '%s'",
                      ptxjit_last_error(), needle);
    ck_assert_int_eq(pj_directory_check_trust(dir, 1), shared_status);
}

START_TEST(directory_writable_by_others_is_not_trusted)
{
    char *dir = test_mkdtemp();
    expect_mode_trust(dir, 0700, PTXJIT_OK, PTXJIT_OK, NULL);
    expect_mode_trust(dir, 0755, PTXJIT_OK, PTXJIT_OK, NULL);
    expect_mode_trust(dir, 0770, PTXJIT_ERR_CACHE, PTXJIT_OK, "writable by its group");
    expect_mode_trust(dir, 02770, PTXJIT_ERR_CACHE, PTXJIT_OK, "chmod g-w");
    /* Writable by every user: never, not even shared, sticky bit or not. */
    expect_mode_trust(dir, 0777, PTXJIT_ERR_CACHE, PTXJIT_ERR_CACHE, "writable by every user");
    expect_mode_trust(dir, 01777, PTXJIT_ERR_CACHE, PTXJIT_ERR_CACHE, "chmod o-w");
    ck_assert_int_eq(chmod(dir, 0700), 0);
    test_rmtree(dir);
    free(dir);
}
END_TEST

typedef struct {
    int warnings;
    char last[2048];
} log_capture;

static void capture(void *user, ptxjit_log_level level, const char *message)
{
    log_capture *c = user;
    if (level == PTXJIT_LOG_WARNING) {
        c->warnings++;
        snprintf(c->last, sizeof c->last, "%s", message);
    }
}

/* A context on root: the disk cache must be off with one warning holding needle, and the
 * kernel must still come back (compiled in memory). */
static void expect_context_without_disk_cache(const char *root, int shared, const char *needle)
{
    log_capture log = {0, ""};
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = root;
    options.cache_shared = shared;
    options.use_gpu = 0;
    options.log = capture;
    options.log_user = &log;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(log.warnings, 1);
    ck_assert_ptr_nonnull(strstr(log.last, "disk cache disabled"));
    ck_assert_msg(strstr(log.last, needle), "'%s' lacks '%s'", log.last, needle);
    ck_assert_ptr_null(ptxjit_cache_dir(context));
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "tpb=128", &origin),
                     PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), ".entry reduce_kernel("));
    ptxjit_close(context);
}

START_TEST(untrusted_cache_dir_warns_and_kernels_still_compile)
{
    char *base, *theirs = foreign_directory(&base);
    expect_context_without_disk_cache(theirs, 0, "not to you");
    free(theirs);
    test_rmtree(base);
    free(base);
    char *dir = test_mkdtemp();
    ck_assert_int_eq(chmod(dir, 0775), 0);
    expect_context_without_disk_cache(dir, 0, "writable by its group");
    ck_assert_int_eq(chmod(dir, 0777), 0);
    expect_context_without_disk_cache(dir, 1, "writable by every user");
    char v1[4200];
    snprintf(v1, sizeof v1, "%s/v%d", dir, PJ_DISK_FORMAT_VERSION);
    ck_assert_int_eq(access(v1, F_OK), -1); /* nothing made inside an untrusted directory */
    ck_assert_int_eq(chmod(dir, 0700), 0);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Below an untrusted root, a versioned directory that others can write is refused too. */
START_TEST(untrusted_versioned_directory_is_refused)
{
    char *root = test_mkdtemp(), v1[4200];
    snprintf(v1, sizeof v1, "%s/v%d", root, PJ_DISK_FORMAT_VERSION);
    ck_assert_int_eq(mkdir(v1, 0700), 0);
    ck_assert_int_eq(chmod(v1, 0722), 0);
    pj_disk_cache *cache;
    ck_assert_int_eq(pj_disk_cache_open(&cache, &(pj_disk_options){root, 0, 0}, NULL),
                     PTXJIT_ERR_CACHE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), v1));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "writable by every user"));
    test_rmtree(root);
    free(root);
}
END_TEST

static void expect_mode(const char *path, mode_t mode)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_msg((st.st_mode & 07777) == mode, "%s has mode %04o, not %04o", path,
                  (unsigned)(st.st_mode & 07777), (unsigned)mode);
}

/* A shared cache: group-writable directories that pass their group on, group-writable
 * files, whatever the umask. */
START_TEST(shared_cache_is_made_group_writable_whatever_the_umask)
{
    char *base = test_mkdtemp(), root[4200], path[4400];
    snprintf(root, sizeof root, "%s/team/ptxjit", base);
    mode_t old_umask = umask(022);
    setenv("PTXJIT_CACHE_SHARED", "1", 1);
    pj_disk_cache *cache;
    ck_assert_int_eq(pj_disk_cache_open(&cache, &(pj_disk_options){root, 0, 0}, NULL), PTXJIT_OK);
    unsetenv("PTXJIT_CACHE_SHARED");
    expect_mode(root, PJ_SHARED_DIR_MODE);
    expect_mode(pj_disk_cache_dir(cache), PJ_SHARED_DIR_MODE);
    pj_artifact a = {0};
    char *entries[] = {"k"};
    a.family = "f", a.params = "", a.ptx = ".entry k(", a.log = "", a.entries = entries;
    a.entry_count = 1;
    const char *key = "ab000000000000000000000000000000";
    ck_assert_int_eq(pj_disk_cache_store(cache, key, &a), PTXJIT_OK);
    snprintf(path, sizeof path, "%s/ab", pj_disk_cache_dir(cache));
    expect_mode(path, PJ_SHARED_DIR_MODE);
    char *entry = pj_disk_cache_entry_path(cache, key);
    expect_mode(entry, PJ_SHARED_FILE_MODE);
    snprintf(path, sizeof path, "%s/stats", pj_disk_cache_dir(cache));
    expect_mode(path, PJ_SHARED_FILE_MODE); /* every process of the group counts in it */
    free(entry);
    pj_disk_cache_close(cache);
    umask(old_umask);
    test_rmtree(base);
    free(base);
}
END_TEST

enum { AS_USER_NO_DISK = 5, AS_USER_FAILED = 6 };

/* In a child running as uid (group OTHER_UID): a context on root, shared or not, asks for
 * a kernel. Returns its origin, AS_USER_NO_DISK when the disk cache was refused, or
 * AS_USER_FAILED. */
static int request_as_user(uid_t uid, const char *root, int shared)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        if (setgroups(0, NULL) != 0 || setgid(OTHER_UID) != 0 || setuid(uid) != 0)
            _exit(AS_USER_FAILED);
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.cache_dir = root;
        options.cache_shared = shared;
        options.use_gpu = 0;
        options.log = capture; /* quiet: the parent checks the outcome */
        options.log_user = &(log_capture){0, ""};
        ptxjit_context *context;
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        if (ptxjit_open(&context, &options) != PTXJIT_OK)
            _exit(AS_USER_FAILED);
        int code = !ptxjit_cache_dir(context) ? AS_USER_NO_DISK
                   : ptxjit_get_kernel(&kernel, context, "reduce", "tpb=64", &origin)
                       ? AS_USER_FAILED
                       : (int)origin;
        ptxjit_close(context);
        _exit(code);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : AS_USER_FAILED;
}

/* Two users of one group share a cache they opted into: what one compiled, the other loads;
 * without the opt-in the second refuses the directory. Needs root, to be two users. */
START_TEST(shared_cache_serves_two_users_of_its_group)
{
    if (geteuid() != 0) {
        printf("SKIP shared_cache_serves_two_users_of_its_group: needs root to act as two "
               "users\n");
        return;
    }
    char *base = test_mkdtemp(), root[4200], path[4400];
    ck_assert_int_eq(chmod(base, 0755), 0);
    snprintf(root, sizeof root, "%s/team", base);
    ck_assert_int_eq(mkdir(root, 0700), 0);
    ck_assert_int_eq(chown(root, 0, OTHER_UID), 0);
    ck_assert_int_eq(chmod(root, 02770), 0);
    ck_assert_int_eq(request_as_user(OTHER_UID, root, 1), PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(request_as_user(OTHER_UID - 1, root, 1), PTXJIT_ORIGIN_DISK);
    ck_assert_int_eq(request_as_user(OTHER_UID - 1, root, 0), AS_USER_NO_DISK);
    snprintf(path, sizeof path, "%s/v%d", root, PJ_DISK_FORMAT_VERSION);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_gid, OTHER_UID); /* the group passed on by set-group-ID */
    ck_assert_int_eq(st.st_mode & 07777, PJ_SHARED_DIR_MODE);
    test_rmtree(base);
    free(base);
}
END_TEST

static int shared_from_environment(const char *text, int *warnings)
{
    char *dir = test_mkdtemp();
    ck_assert_int_eq(chmod(dir, 0770), 0); /* trusted only when shared */
    log_capture log = {0, ""};
    pj_logger logger = {.fn = capture, .user = &log};
    setenv("PTXJIT_CACHE_SHARED", text, 1);
    pj_disk_cache *cache = NULL;
    ptxjit_status status = pj_disk_cache_open(&cache, &(pj_disk_options){dir, 0, 0}, &logger);
    unsetenv("PTXJIT_CACHE_SHARED");
    *warnings = log.warnings;
    if (log.warnings)
        ck_assert_ptr_nonnull(strstr(log.last, "PTXJIT_CACHE_SHARED"));
    pj_disk_cache_close(cache);
    test_rmtree(dir);
    free(dir);
    return status == PTXJIT_OK;
}

START_TEST(shared_cache_is_opt_in_and_its_variable_is_checked)
{
    int warnings;
    static const char *const on[] = {"1", "yes", "TRUE"};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(on); i++) {
        ck_assert(shared_from_environment(on[i], &warnings));
        ck_assert_int_eq(warnings, 0);
    }
    static const char *const off[] = {"0", "no", "false", ""};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(off); i++) {
        ck_assert(!shared_from_environment(off[i], &warnings));
        ck_assert_int_eq(warnings, 0);
    }
    ck_assert(!shared_from_environment("sometimes", &warnings)); /* private, and said so */
    ck_assert_int_eq(warnings, 1);
}
END_TEST

/* Counts the warnings that name an untrusted entry. */
static void count_untrusted(void *user, ptxjit_log_level level, const char *message)
{
    log_capture *c = user;
    if (level == PTXJIT_LOG_WARNING && strstr(message, "not trusted")) {
        c->warnings++;
        snprintf(c->last, sizeof c->last, "%s", message);
    }
}

static ptxjit_origin request_counting_untrusted(const char *dir, log_capture *log)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    options.remote_cache = "";
    options.process_cache = 0;
    options.log = count_untrusted;
    options.log_user = log;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "reduce", "tpb=128", &origin) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    ptxjit_close(context);
    return origin;
}

/* An entry the load refuses as untrusted is warned about once per request: the look for an
 * entry another process finished, after the compile lock, applies the load's trust rule and
 * so does not read (and refuse, and warn about) the same file again. The compile replaces it. */
START_TEST(untrusted_entry_is_warned_about_once_per_request)
{
    char *dir = test_mkdtemp();
    log_capture log = {0, ""};
    ck_assert_int_eq(request_counting_untrusted(dir, &log), PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_eq(log.warnings, 0);
    /* The one entry of the cache: its shard and file. */
    char v1[4200], shard_path[4400], entry[4700];
    snprintf(v1, sizeof v1, "%s/v%d", dir, PJ_DISK_FORMAT_VERSION);
    entry[0] = '\0';
    DIR *top = opendir(v1);
    ck_assert_ptr_nonnull(top);
    for (struct dirent *e; !entry[0] && (e = readdir(top));) {
        if (strlen(e->d_name) != 2)
            continue;
        snprintf(shard_path, sizeof shard_path, "%s/%.2s", v1, e->d_name);
        DIR *shard = opendir(shard_path);
        for (struct dirent *f; shard && (f = readdir(shard));)
            if (strlen(f->d_name) == 32)
                snprintf(entry, sizeof entry, "%s/%.32s", shard_path, f->d_name);
        if (shard)
            closedir(shard);
    }
    closedir(top);
    ck_assert_msg(entry[0], "no entry under %s", v1);
    ck_assert_int_eq(chmod(entry, 0660), 0);
    ck_assert_int_eq(request_counting_untrusted(dir, &log), PTXJIT_ORIGIN_COMPILED);
    ck_assert_msg(log.warnings == 1, "%d warnings of an untrusted entry in one request; last: %s",
                  log.warnings, log.last);
    ck_assert_ptr_nonnull(strstr(log.last, "writable by its group: not trusted"));
    struct stat st;
    ck_assert_int_eq(stat(entry, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600); /* replaced by the compile's store */
    log.warnings = 0;
    ck_assert_int_eq(request_counting_untrusted(dir, &log), PTXJIT_ORIGIN_DISK);
    ck_assert_int_eq(log.warnings, 0);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_cache_trust(void)
{
    Suite *suite = suite_create("cache_trust");
    TCase *tc = tcase_create("trust");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, directory_of_another_user_is_not_trusted);
    tcase_add_test(tc, directory_writable_by_others_is_not_trusted);
    tcase_add_test(tc, untrusted_cache_dir_warns_and_kernels_still_compile);
    tcase_add_test(tc, untrusted_versioned_directory_is_refused);
    tcase_add_test(tc, shared_cache_is_made_group_writable_whatever_the_umask);
    tcase_add_test(tc, shared_cache_is_opt_in_and_its_variable_is_checked);
    tcase_add_test(tc, shared_cache_serves_two_users_of_its_group);
    tcase_add_test(tc, untrusted_entry_is_warned_about_once_per_request);
    suite_add_tcase(suite, tc);
    return suite;
}

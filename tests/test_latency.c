/* test_latency.c — the hit side of issue 15: hit and miss counts kept in memory and merged
 * so that stats stay truthful across processes; an entry's time renewed only when it is a
 * minute old; built-in templates (their schemas made at build time) listed while user
 * templates' problems are still reported at open; memory hits from many threads (lock-free table) returning one kernel,
 * also while the table is forgotten by reloads (`make tsan` runs this suite). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "request/context.h"
#include "request/templates.h"
#include "test_util.h"

#define SMALL_TEMPLATE                                                                     \
    "//@ptxjit family small\n"                                                             \
    "//@ptxjit entry small_kernel\n"                                                       \
    "//@ptxjit param factor int(1..100) default=3 doc=\"the factor\"\n"                   \
    "extern \"C\" __global__ void small_kernel(int *x) { x[0] = FACTOR; }\n"

static ptxjit_context *open_cached(const char *dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = dir;
    options.process_cache = 0; /* each context reads the disk itself, as a process would */
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_ptr_nonnull(context->disk);
    ck_assert_int_eq(ptxjit_add_template(context, "small.cu", SMALL_TEMPLATE), PTXJIT_OK);
    return context;
}

static ptxjit_kernel *get(ptxjit_context *context, ptxjit_origin expected)
{
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "small", "factor=7", &origin),
                     PTXJIT_OK);
    ck_assert_int_eq(origin, expected);
    return kernel;
}

/* A process of its own: one disk hit, then ptxjit_close (which merges the count). */
static void hit_in_child(const char *dir)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.use_gpu = 0;
        options.cache_dir = dir;
        options.process_cache = 0; /* not the kernels of the parent's memory */
        ptxjit_context *context = NULL;
        ptxjit_kernel *kernel = NULL;
        ptxjit_origin origin = PTXJIT_ORIGIN_COMPILED;
        int ok = ptxjit_open(&context, &options) == PTXJIT_OK &&
                 ptxjit_add_template(context, "small.cu", SMALL_TEMPLATE) == PTXJIT_OK &&
                 ptxjit_get_kernel(&kernel, context, "small", "factor=7", &origin) == PTXJIT_OK &&
                 origin == PTXJIT_ORIGIN_DISK;
        ptxjit_close(context);
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

START_TEST(stats_count_hits_of_two_processes)
{
    char *dir = test_mkdtemp();
    ptxjit_context *context = open_cached(dir);
    get(context, PTXJIT_ORIGIN_COMPILED); /* a miss and a store */
    hit_in_child(dir);
    hit_in_child(dir);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 2);
    ck_assert_uint_eq(stats.misses, 1);
    ck_assert_uint_eq(stats.stores, 1);
    ck_assert_uint_eq(stats.entries, 1);
    /* A live context's hits reach the shared file when it merges them: at its stats, a
     * store or its close. */
    ptxjit_context *other = open_cached(dir);
    get(other, PTXJIT_ORIGIN_DISK);
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 2);
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, other), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 3);
    get(other, PTXJIT_ORIGIN_MEMORY); /* a memory hit is no disk hit */
    ptxjit_close(other);
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, context), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 3);
    ck_assert_uint_eq(stats.misses, 1);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

static void set_age(const char *path, time_t seconds)
{
    struct timespec times[2];
    clock_gettime(CLOCK_REALTIME, &times[0]);
    times[0].tv_sec -= seconds;
    times[1] = times[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, path, times, 0), 0);
}

static time_t age_of(const char *path)
{
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    return time(NULL) - st.st_mtime;
}

START_TEST(disk_hit_renews_time_only_when_a_minute_old)
{
    char *dir = test_mkdtemp();
    ptxjit_context *context = open_cached(dir);
    char *path = pj_disk_cache_entry_path(context->disk, ptxjit_kernel_key(get(
                                                             context, PTXJIT_ORIGIN_COMPILED)));
    ck_assert_ptr_nonnull(path);
    ptxjit_close(context);
    set_age(path, 30); /* read within the minute: its time stays */
    context = open_cached(dir);
    get(context, PTXJIT_ORIGIN_DISK);
    ptxjit_close(context);
    ck_assert_int_ge(age_of(path), 29);
    set_age(path, 120); /* older: the hit makes it the most recently used */
    context = open_cached(dir);
    get(context, PTXJIT_ORIGIN_DISK);
    ptxjit_close(context);
    ck_assert_int_le(age_of(path), 5);
    set_age(path, -3600); /* from the future (a clock set back): renewed too */
    context = open_cached(dir);
    get(context, PTXJIT_ORIGIN_DISK);
    ptxjit_close(context);
    ck_assert_int_ge(age_of(path), -5);
    free(path);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(lazy_builtins_still_report_user_template_problems)
{
    char *dir = test_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/broken.cu", dir);
    FILE *file = fopen(path, "w");
    ck_assert_ptr_nonnull(file);
    fputs("//@ptxjit family broken\n//@ptxjit param f int(1..4)\n", file);
    ck_assert_int_eq(fclose(file), 0);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = dir;
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    /* At open, before any request: the problem, and every built-in family listed. */
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    ck_assert_ptr_nonnull(strstr(ptxjit_template_problem(context, 0), "broken.cu"));
    int builtins = 0;
    for (int i = 0; i < ptxjit_family_count(context); i++)
        builtins += strncmp(ptxjit_family_origin(context, i), "built-in:", 9) == 0;
    int embedded = 0;
    while (pj_embedded_templates[embedded].path)
        embedded++;
    ck_assert_int_eq(builtins, embedded);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "broken", "", NULL), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "broken.cu"));
    /* A built-in family's schema, made at build time, is the same for a second context. */
    const pj_schema *first = NULL, *second = NULL;
    ck_assert_int_eq(pj_context_schema(&first, context, "reduce"), PTXJIT_OK);
    ptxjit_context *another = test_open_offline(NULL);
    ck_assert_int_eq(pj_context_schema(&second, another, "reduce"), PTXJIT_OK);
    ck_assert_ptr_eq(first, second);
    ck_assert_str_eq(first->family, "reduce");
    ck_assert_str_eq(first->origin, "built-in:reduce.cu");
    const char *description = NULL;
    ck_assert_int_eq(ptxjit_family_describe(&description, another, "reduce"), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(description, "reduce"));
    ptxjit_close(another);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

typedef struct {
    ptxjit_context *context;
    ptxjit_kernel *expected;
    int reload; /* this thread reloads the templates (forgetting the fast path) meanwhile */
    int failures;
} hitter;

static void *hit_many(void *arg)
{
    hitter *h = arg;
    for (int i = 0; i < 2000; i++) {
        if (h->reload && i % 100 == 0) {
            h->failures += ptxjit_reload_templates(h->context) != PTXJIT_OK;
            continue;
        }
        ptxjit_kernel *kernel = NULL;
        h->failures += ptxjit_get_kernel(&kernel, h->context, "small", "factor=7", NULL) !=
                           PTXJIT_OK ||
                       kernel != h->expected;
    }
    return NULL;
}

START_TEST(eight_threads_hit_one_kernel)
{
    ptxjit_context *context = test_open_offline(NULL);
    ck_assert_int_eq(ptxjit_add_template(context, "small.cu", SMALL_TEMPLATE), PTXJIT_OK);
    ptxjit_kernel *kernel = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "small", "factor=7", NULL), PTXJIT_OK);
    enum { THREADS = 8 };
    pthread_t ids[THREADS + 1];
    hitter hitters[THREADS + 1];
    for (int i = 0; i <= THREADS; i++) {
        hitters[i] = (hitter){context, kernel, i == THREADS, 0};
        ck_assert_int_eq(pthread_create(&ids[i], NULL, hit_many, &hitters[i]), 0);
    }
    for (int i = 0; i <= THREADS; i++) {
        pthread_join(ids[i], NULL);
        ck_assert_int_eq(hitters[i].failures, 0);
    }
    ptxjit_close(context);
}
END_TEST

Suite *suite_latency(void)
{
    Suite *s = suite_create("latency");
    TCase *tc = tcase_create("hits");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, stats_count_hits_of_two_processes);
    tcase_add_test(tc, disk_hit_renews_time_only_when_a_minute_old);
    tcase_add_test(tc, lazy_builtins_still_report_user_template_problems);
    tcase_add_test(tc, eight_threads_hit_one_kernel);
    suite_add_tcase(s, tc);
    return s;
}

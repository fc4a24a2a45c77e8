/* test_pool.c — the compile pool's worker processes and ptxjit_warm: workers compile into the
 * disk cache exactly what this process would (same keys, same cubins), a worker that cannot
 * start, dies, lies or is of another version changes nothing but the speed, and warm-up
 * reports each request (compiled, cached, refused with the reason); `ptxjit warm`. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "pool/pool.h"
#include "test_util.h"

static const char *const requests[] = {
    "reduce variant=vectorized tpb=128 batch=2",
    "reduce variant=vectorized tpb=256 batch=4",
    "reduce variant=warp_shuffle tpb=512",
    "transpose block=64 rows=32 batch=16",
    "softmax dtype=bf16 tpb=128",
    "reduce variant=vectorized tpb=1024 batch=8",
};
enum { REQUEST_COUNT = sizeof requests / sizeof requests[0] };

static const char *cli_or_skip(void)
{
    const char *cli = getenv("PTXJIT_CLI");
    if (!cli)
        fprintf(stderr, "SKIP: PTXJIT_CLI is not set (make test sets it): no compile worker "
                        "program to test\n");
    return cli;
}

static ptxjit_context *open_cached(const char *dir, const char *worker)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.arch = "sm_90a";
    options.cache_dir = dir;
    options.disk_cache = dir != NULL;
    options.compile_worker = worker;
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static ptxjit_warm_result *warm(ptxjit_context *context, const char *const *list, int count,
                                int threads)
{
    ptxjit_warm_options options = {threads, NULL, NULL};
    ptxjit_warm_result *result = NULL;
    ck_assert_msg(ptxjit_warm(&result, context, list, count, &options) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    ck_assert_int_eq(result->count, count);
    return result;
}

/* The request's cubin from a context of its own (in this process, no disk cache). */
static void expect_same_cubin(ptxjit_kernel *kernel, const char *request)
{
    ptxjit_context *plain = open_cached(NULL, "none");
    char family[64];
    size_t length = strcspn(request, " ");
    snprintf(family, sizeof family, "%.*s", (int)length, request);
    ptxjit_kernel *reference;
    ck_assert_int_eq(ptxjit_get_kernel(&reference, plain, family, request + length + 1, NULL),
                     PTXJIT_OK);
    ck_assert_str_eq(ptxjit_kernel_key(kernel), ptxjit_kernel_key(reference));
    size_t a, b;
    const void *cubin = ptxjit_kernel_cubin(kernel, &a);
    const void *expected = ptxjit_kernel_cubin(reference, &b);
    ck_assert(a == b && a > 0 && memcmp(cubin, expected, a) == 0);
    ptxjit_close(plain);
}

START_TEST(workers_compile_into_the_disk_cache_what_this_process_would)
{
    const char *cli = cli_or_skip();
    if (!cli)
        return;
    char *dir = test_mkdtemp();
    ptxjit_context *context = open_cached(dir, cli);
    ptxjit_warm_result *result = warm(context, requests, REQUEST_COUNT, 2);
    ck_assert_int_eq(result->compile_processes, 2);
    ck_assert_int_eq(result->compiled, REQUEST_COUNT);
    ck_assert_int_eq(result->refused, 0);
    ptxjit_warm_result_free(result);
    ptxjit_close(context);
    /* A fresh context finds every kernel on disk, the same bytes as a compile here. */
    context = open_cached(dir, "none");
    for (int i = 0; i < REQUEST_COUNT; i++) {
        char family[64];
        size_t length = strcspn(requests[i], " ");
        snprintf(family, sizeof family, "%.*s", (int)length, requests[i]);
        ptxjit_kernel *kernel;
        ptxjit_origin origin;
        ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, family, requests[i] + length + 1,
                                           &origin),
                         PTXJIT_OK);
        ck_assert_int_eq(origin, PTXJIT_ORIGIN_DISK);
        expect_same_cubin(kernel, requests[i]);
    }
    /* Warming again: everything already cached. */
    result = warm(context, requests, REQUEST_COUNT, 2);
    ck_assert_int_eq(result->cached, REQUEST_COUNT);
    ck_assert_int_eq(result->compiled, 0);
    ptxjit_warm_result_free(result);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A script standing for a worker: body runs after its greeting (VERSION and ARCH are ours
 * unless greeting is given). */
static char *fake_worker(const char *dir, const char *name, const char *greeting,
                         const char *body)
{
    char *path = malloc(4200);
    snprintf(path, 4200, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "#!/bin/sh\n");
    if (greeting)
        fprintf(f, "echo '%s'\n", greeting);
    else
        fprintf(f, "echo 'ptxjit-compile-worker 1 %s sm_90a'\n", PTXJIT_VERSION);
    fprintf(f, "%s\n", body);
    fclose(f);
    chmod(path, 0700);
    return path;
}

/* With worker program: every request compiles right and the processes that answered are
 * counted; the kernels are the ones this process compiles. */
static void expect_warm_through(const char *worker, int processes)
{
    char *dir = test_mkdtemp();
    ptxjit_context *context = open_cached(dir, worker);
    ptxjit_warm_result *result = warm(context, requests, 4, 2);
    ck_assert_msg(result->compile_processes == processes, "%s: %d processes", worker,
                  result->compile_processes);
    ck_assert_int_eq(result->refused, 0);
    ck_assert_int_eq(result->compiled, 4);
    ptxjit_warm_result_free(result);
    for (int i = 0; i < 4; i++) {
        char family[64];
        size_t length = strcspn(requests[i], " ");
        snprintf(family, sizeof family, "%.*s", (int)length, requests[i]);
        ptxjit_kernel *kernel;
        ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, family, requests[i] + length + 1,
                                           NULL),
                         PTXJIT_OK);
        expect_same_cubin(kernel, requests[i]);
    }
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}

START_TEST(a_worker_that_fails_changes_nothing_but_the_speed)
{
    char *scripts = test_mkdtemp();
    char *silent = fake_worker(scripts, "silent", "", "exit 0");
    char *other = fake_worker(scripts, "other", "ptxjit-compile-worker 1 0.0.0 sm_90a",
                              "cat >/dev/null");
    char *dies = fake_worker(scripts, "dies", NULL, "exit 3");
    char *lies = fake_worker(scripts, "lies", NULL,
                             "while read -r line; do "
                             "echo 'ok 0123456789abcdef0123456789abcdef compiled'; done");
    char *garbles = fake_worker(scripts, "garbles", NULL,
                                "while read -r line; do echo 'what?'; done");
    expect_warm_through(silent, 0);       /* no greeting */
    expect_warm_through(other, 0);        /* another version */
    expect_warm_through("/nonexistent/ptxjit", 0);
    expect_warm_through(dies, 2);         /* greets, then is gone at the first request */
    expect_warm_through(lies, 2);         /* says it stored what it did not */
    expect_warm_through(garbles, 2);      /* answers nonsense: refused, compiled here */
    free(silent), free(other), free(dies), free(lies), free(garbles);
    test_rmtree(scripts);
    free(scripts);
}
END_TEST

START_TEST(workers_leave_a_caller_that_ignores_sigchld_alone)
{
    const char *cli = cli_or_skip();
    if (!cli)
        return;
    struct sigaction ignore = {0}, saved;
    ignore.sa_handler = SIG_IGN;
    sigaction(SIGCHLD, &ignore, &saved);
    expect_warm_through(cli, 2);
    sigaction(SIGCHLD, &saved, NULL);
}
END_TEST

START_TEST(no_workers_without_a_disk_cache_or_for_memory_templates)
{
    const char *cli = cli_or_skip();
    if (!cli)
        return;
    ptxjit_context *context = open_cached(NULL, cli);
    ptxjit_warm_result *result = warm(context, requests, 3, 2);
    ck_assert_int_eq(result->compile_processes, 0); /* nowhere to hand the kernels over */
    ck_assert_int_eq(result->compiled, 3);
    ptxjit_warm_result_free(result);
    ptxjit_close(context);
    /* A family added from memory exists in this process only: compiled here, right. */
    char *dir = test_mkdtemp();
    context = open_cached(dir, cli);
    ck_assert_int_eq(ptxjit_add_template(context, "scale.cu",
                                         "//@ptxjit family scale\n"
                                         "//@ptxjit entry scale\n"
                                         "//@ptxjit param factor int(1..8) default=2\n"
                                         "extern \"C\" __global__ void scale(float *x) {\n"
                                         "  x[threadIdx.x] *= FACTOR;\n}\n"),
                     PTXJIT_OK);
    const char *const mixed[] = {"scale factor=3", "scale factor=5", "reduce tpb=64"};
    result = warm(context, mixed, 3, 2);
    ck_assert_int_eq(result->refused, 0);
    ck_assert_int_eq(result->compiled, 3);
    ptxjit_warm_result_free(result);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(warm_reports_each_request)
{
    ptxjit_context *context = open_cached(NULL, "none");
    const char *const list[] = {
        "reduce tpb=256",   "reduce tpb=7",       "nosuch x=1",   "",
        "reduce tpb=auto",  "  reduce   tpb=256", "transpose",
    };
    ptxjit_warm_result *result = warm(context, list, 7, 2);
    ck_assert_int_eq(result->compiled, 2);
    ck_assert_int_eq(result->cached, 1); /* the same request twice */
    ck_assert_int_eq(result->refused, 4);
    ck_assert_int_eq(result->items[0].status, PTXJIT_OK);
    ck_assert_str_eq(result->items[0].message, "");
    ck_assert_int_eq(result->items[1].status, PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(result->items[1].message, "tpb=7"));
    ck_assert_int_eq(result->items[2].status, PTXJIT_ERR_UNKNOWN_FAMILY);
    ck_assert_ptr_nonnull(strstr(result->items[3].message, "names no family"));
    ck_assert_ptr_nonnull(strstr(result->items[4].message, "auto"));
    ck_assert_int_eq(result->items[5].status, PTXJIT_OK);
    /* one of the two compiled it, the other (on another thread) found it in memory */
    ck_assert_int_eq(result->items[0].origin + result->items[5].origin,
                     PTXJIT_ORIGIN_COMPILED + PTXJIT_ORIGIN_MEMORY);
    ck_assert_int_eq(result->items[6].status, PTXJIT_OK); /* the family's defaults */
    ck_assert_str_eq(result->items[1].request, "reduce tpb=7");
    ptxjit_warm_result_free(result);
    /* nothing to do is fine; bad arguments are refused */
    ck_assert_int_eq(ptxjit_warm(&result, context, NULL, 0, NULL), PTXJIT_OK);
    ck_assert_int_eq(result->count, 0);
    ptxjit_warm_result_free(result);
    ck_assert_int_eq(ptxjit_warm(NULL, context, list, 1, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_warm(&result, NULL, list, 1, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_warm(&result, context, NULL, 2, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_int_eq(ptxjit_warm(&result, context, list, -1, NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

START_TEST(cli_warm_compiles_a_file_and_says_what_it_refused)
{
    if (!cli_or_skip())
        return;
    char *dir = test_mkdtemp(), file[4200], args[8600], *out = NULL;
    snprintf(file, sizeof file, "%s/requests.txt", dir);
    FILE *f = fopen(file, "w");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "# kernels of the service\nreduce tpb=128   # the small one\n\n"
               "transpose block=64\nreduce tpb=9\n");
    fclose(f);
    snprintf(args, sizeof args, "--no-gpu --arch sm_90a warm '%s'", file);
    ck_assert_int_eq(test_run_cli(&out, dir, "", args, NULL), 1);
    ck_assert_ptr_nonnull(strstr(out, "refused: reduce tpb=9"));
    ck_assert_ptr_nonnull(strstr(out, "3 requests: 2 compiled, 0 already cached, 1 refused"));
    free(out);
    snprintf(args, sizeof args, "--no-gpu --arch sm_90a --json warm - < '%s'", file);
    char err[4300];
    snprintf(err, sizeof err, "%s/stderr", dir);
    ck_assert_int_eq(test_run_cli(&out, dir, "", args, err), 1);
    ck_assert_ptr_nonnull(strstr(out, "\"cached\": 2"));
    ck_assert_ptr_nonnull(strstr(out, "\"status\": \"PTXJIT_ERR_PARAM\""));
    free(out);
    ck_assert_int_eq(test_run_cli(&out, dir, "", "--no-gpu warm", NULL), 2);
    ck_assert_ptr_nonnull(strstr(out, "usage: ptxjit warm"));
    free(out);
    ck_assert_int_eq(test_run_cli(&out, dir, "", "--no-gpu list --from-records", NULL), 2);
    ck_assert_ptr_nonnull(strstr(out, "warm's option"));
    free(out);
    ck_assert_int_eq(test_run_cli(&out, dir, "", "--no-gpu tune reduce --bucket pow3", NULL),
                     2);
    ck_assert_ptr_nonnull(strstr(out, "--bucket takes pow2 or exact"));
    free(out);
    ck_assert_int_eq(test_run_cli(&out, dir, "", "--no-gpu list --bucket pow2", NULL), 2);
    ck_assert_ptr_nonnull(strstr(out, "tune's options"));
    free(out);
    ck_assert_int_eq(test_run_cli(&out, dir, "", "--no-gpu --arch sm_90a warm --from-records",
                                  NULL),
                     0);
    ck_assert_ptr_nonnull(strstr(out, "0 requests"));
    free(out);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A context confined by its option alone (the environment says nothing) has its workers
 * confined too: they refuse what it refuses and store nothing, so an unconfined context of
 * the same cache later compiles the kernel itself. */
START_TEST(workers_are_confined_as_their_context_is)
{
    const char *cli = cli_or_skip();
    if (!cli)
        return;
    unsetenv("PTXJIT_CONFINE_INCLUDES");
    char *cache = test_mkdtemp(), *templates = test_mkdtemp(), *outside = test_mkdtemp();
    char path[4200], text[8400];
    snprintf(path, sizeof path, "%s/value.cuh", outside);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("enum { VALUE = 7 };\n", f);
    fclose(f);
    snprintf(path, sizeof path, "%s/outside.cu", templates);
    snprintf(text, sizeof text,
             "//@ptxjit family outside\n//@ptxjit entry k\n"
             "//@ptxjit param factor int(1..9) default=1\n#include \"%s/value.cuh\"\n"
             "extern \"C\" __global__ void k(int *x) { x[0] = VALUE * FACTOR; }\n",
             outside);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.arch = "sm_90a";
    options.cache_dir = cache;
    options.template_path = templates;
    options.compile_worker = cli;
    options.confine_includes = 1;
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    const char *const list[] = {"outside factor=2", "outside factor=3"};
    ptxjit_warm_result *result = warm(context, list, 2, 2);
    ck_assert_int_ge(result->compile_processes, 1); /* a worker may take both */
    ck_assert_int_eq(result->refused, 2);
    ck_assert_ptr_nonnull(strstr(result->items[0].message, "an absolute path"));
    ptxjit_warm_result_free(result);
    ptxjit_close(context);
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    options.compile_worker = "none";
    options.confine_includes = 0;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "outside", "factor=2", &origin),
                     PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED); /* no worker stored it */
    ptxjit_close(context);
    test_rmtree(cache);
    test_rmtree(templates);
    test_rmtree(outside);
    free(cache), free(templates), free(outside);
}
END_TEST

/* A header over the template cap is a template problem, in the context and in its compile
 * workers, which get the cap its options field set (no variable says it). */
START_TEST(headers_over_the_template_cap_are_refused_by_workers_too)
{
    const char *cli = cli_or_skip();
    if (!cli)
        return;
    unsetenv("PTXJIT_TEMPLATE_MAX_BYTES");
    char *cache = test_mkdtemp(), *templates = test_mkdtemp();
    char path[4200];
    snprintf(path, sizeof path, "%s/big.cuh", templates);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i < 200; i++) /* about 6 KiB, over the 4 KiB cap below */
        fprintf(f, "enum { VALUE_%03d = %d };\n", i, i);
    fclose(f);
    snprintf(path, sizeof path, "%s/capped.cu", templates);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs("//@ptxjit family capped\n//@ptxjit entry k\n"
          "//@ptxjit param factor int(1..9) default=1\n#include \"big.cuh\"\n"
          "extern \"C\" __global__ void k(int *x) { x[0] = VALUE_007 * FACTOR; }\n",
          f);
    fclose(f);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.arch = "sm_90a";
    options.cache_dir = cache;
    options.template_path = templates;
    options.compile_worker = cli;
    options.template_max_bytes = 4096;
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "capped", "factor=1", NULL),
                     PTXJIT_ERR_TEMPLATE);
    ck_assert_msg(strstr(ptxjit_last_error(), "big.cuh") &&
                      strstr(ptxjit_last_error(), "over the template cap of 4096"),
                  "%s", ptxjit_last_error());
    const char *const list[] = {"capped factor=2", "capped factor=3"};
    ptxjit_warm_result *result = warm(context, list, 2, 2);
    ck_assert_int_ge(result->compile_processes, 1); /* a worker may take both */
    ck_assert_int_eq(result->refused, 2);
    for (int i = 0; i < 2; i++)
        ck_assert_msg(strstr(result->items[i].message, "over the template cap of 4096"), "%s",
                      result->items[i].message);
    ptxjit_warm_result_free(result);
    ptxjit_close(context);
    test_rmtree(cache);
    test_rmtree(templates);
    free(cache), free(templates);
}
END_TEST

/* The tuner takes requests as they finish: every request once, the lowest finished first, a
 * failed compile with its message, and nothing after the last. A second pool over requests
 * the context already holds starts no worker. */
START_TEST(wait_next_hands_out_every_request_once)
{
    const char *cli = cli_or_skip();
    char *dir = test_mkdtemp();
    ptxjit_context *context = open_cached(dir, cli ? cli : "none");
    const pj_compile_request list[] = {{"reduce", "tpb=128 batch=2"},
                                       {"reduce", "tpb=256 batch=99"}, /* refused */
                                       {"reduce", "tpb=512 batch=4"},
                                       {"transpose", "block=64 rows=32 batch=16"}};
    for (int round = 0; round < 2; round++) {
        pj_compile_pool *pool;
        ck_assert_int_eq(pj_compile_pool_start(&pool, context, list, 4, 2), PTXJIT_OK);
        int seen[4] = {0};
        for (int i = 0; i < 4; i++) {
            int index = -1;
            ptxjit_kernel *kernel = NULL;
            const char *message;
            ptxjit_status status = pj_compile_pool_wait_next(pool, &index, &kernel, NULL, &message);
            ck_assert(index >= 0 && index < 4);
            ck_assert_int_eq(seen[index]++, 0);
            if (index == 1) {
                ck_assert_int_eq(status, PTXJIT_ERR_PARAM);
                ck_assert_ptr_nonnull(strstr(message, "batch"));
            } else {
                ck_assert_msg(status == PTXJIT_OK, "%s", message);
                ck_assert_ptr_nonnull(kernel);
            }
        }
        int index = 0;
        ptxjit_kernel *kernel;
        const char *message;
        ck_assert_int_ne(pj_compile_pool_wait_next(pool, &index, &kernel, NULL, &message),
                         PTXJIT_OK);
        ck_assert_int_eq(index, -1);
        /* the second round's requests are held (but the refused one): one worker at most */
        if (round == 1 && cli)
            ck_assert_int_le(pj_compile_pool_processes(pool), 1);
        pj_compile_pool_free(pool);
    }
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_pool(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, workers_compile_into_the_disk_cache_what_this_process_would);
    tcase_add_test(tc, workers_leave_a_caller_that_ignores_sigchld_alone);
    tcase_add_test(tc, cli_warm_compiles_a_file_and_says_what_it_refused);
    tcase_add_test(tc, workers_are_confined_as_their_context_is);
    tcase_add_test(tc, headers_over_the_template_cap_are_refused_by_workers_too);
    tcase_add_test(tc, wait_next_hands_out_every_request_once);
    suite_add_tcase(s, tc);
    TCase *many = test_many_compiles_case(s, 600);
    tcase_add_test(many, a_worker_that_fails_changes_nothing_but_the_speed);
    tcase_add_test(many, no_workers_without_a_disk_cache_or_for_memory_templates);
    tcase_add_test(many, warm_reports_each_request);
    return s;
}

/* test_out_of_memory.c — every allocation of an operation made to fail in turn, as SQLite
 * tests its allocation failures: the operation must fail cleanly (PTXJIT_ERR_OUT_OF_MEMORY,
 * or success where the allocation was optional) and never crash. `make asan` and `make
 * valgrind` run the same tests and fail any that leaks on one of those error paths.
 *
 * The test runner is linked with --wrap for malloc, calloc and realloc (see the Makefile), so
 * that every allocation ptxjit makes passes through here; libc's own do not. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cache/disk.h"
#include "cache/entry.h"
#include "params/schema.h"
#include "request/templates.h"
#include "test_util.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *pointer, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *pointer, size_t size);

/* Allocations left before the one that fails; -1: none fails. Each test is its own process
 * and single-threaded while armed. */
static long countdown = -1;
static int failed_one, paused;

static int this_one_fails(void)
{
    if (countdown < 0 || paused || countdown-- > 0)
        return 0;
    failed_one = 1;
    return 1;
}

/* The largest allocation asked for since test_largest_allocation() read it (test_util.h):
 * what a hostile reply made ptxjit allocate, failed or not. */
static size_t largest;

static void note(size_t size)
{
    size_t seen = __atomic_load_n(&largest, __ATOMIC_RELAXED);
    while (size > seen && !__atomic_compare_exchange_n(&largest, &seen, size, 1,
                                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

size_t test_largest_allocation(void)
{
    return __atomic_exchange_n(&largest, 0, __ATOMIC_RELAXED);
}

void *__wrap_malloc(size_t size)
{
    note(size);
    return this_one_fails() ? NULL : __real_malloc(size);
}

void *__wrap_calloc(size_t count, size_t size)
{
    note(size && count > SIZE_MAX / size ? SIZE_MAX : count * size);
    return this_one_fails() ? NULL : __real_calloc(count, size);
}

void *__wrap_realloc(void *pointer, size_t size)
{
    note(size);
    return this_one_fails() ? NULL : __real_realloc(pointer, size);
}

typedef ptxjit_status operation(void *user);

/* A context opened with no allocation failing: for operations on an open context, whose
 * opening the user-templates test already fails in every way. */
static ptxjit_context *open_unfailing(ptxjit_options *options)
{
    ptxjit_context *context = NULL;
    paused = 1; /* Check's asserts allocate too */
    ck_assert_int_eq(ptxjit_open(&context, options), PTXJIT_OK);
    paused = 0;
    return context;
}

/* Every allocation (1), or every Nth from $PTXJIT_TEST_OOM_STRIDE: memcheck samples them
 * (a run that compiles costs seconds there), the sanitizers and the plain suite take all. */
static long oom_stride(void)
{
    const char *text = getenv("PTXJIT_TEST_OOM_STRIDE");
    long stride = text ? strtol(text, NULL, 10) : 1;
    return stride >= 1 && stride <= 100 ? stride : 1;
}

/* Runs op with allocation 0, 1, 2, ... (or every stride-th) failing, until a run needs fewer
 * allocations than that; each run must end in success or PTXJIT_ERR_OUT_OF_MEMORY. Returns
 * the number of allocations the operation makes (to within the stride). */
static long fail_each_allocation(operation *op, void *user, const char *name)
{
    const long stride = oom_stride();
    for (long n = 0;; n += stride) {
        failed_one = 0;
        countdown = n;
        ptxjit_status status = op(user);
        countdown = -1;
        ck_assert_msg(status == PTXJIT_OK || status == PTXJIT_ERR_OUT_OF_MEMORY,
                      "%s with allocation %ld failing: %s (%s)", name, n,
                      ptxjit_status_name(status), ptxjit_last_error());
        if (!failed_one) {
            ck_assert_int_eq(status, PTXJIT_OK);
            printf("out of memory: %s: each of %ld allocations failed in turn%s\n", name, n,
                   stride > 1 ? " (every few: PTXJIT_TEST_OOM_STRIDE)" : "");
            return n;
        }
    }
}


static ptxjit_status parse_templates(void *user)
{
    (void)user;
    for (int i = 0; pj_embedded_templates[i].path; i++) {
        pj_schema *schema = NULL;
        ptxjit_status status = pj_schema_parse(&schema, pj_embedded_templates[i].text, "t.cu");
        if (status != PTXJIT_OK)
            return status;
        char *description = pj_schema_describe(schema);
        pj_schema_free(schema);
        if (!description)
            return PTXJIT_ERR_OUT_OF_MEMORY;
        free(description);
    }
    return PTXJIT_OK;
}

START_TEST(schema_parse_survives_every_allocation_failure)
{
    ck_assert_int_gt(fail_each_allocation(parse_templates, NULL, "pj_schema_parse"), 50);
}
END_TEST

static ptxjit_status parse_request(void *user)
{
    const pj_schema *schema = user;
    pj_request request;
    ptxjit_status status =
        pj_request_parse(&request, schema, "variant=tma_batched dtype=bf16 group=4 xpose=scalar", 90);
    if (status != PTXJIT_OK)
        return status;
    char *canonical = pj_request_canonical(&request);
    pj_request_free(&request);
    free(canonical);
    return canonical ? PTXJIT_OK : PTXJIT_ERR_OUT_OF_MEMORY;
}

START_TEST(request_parse_survives_every_allocation_failure)
{
    pj_schema *schema = NULL;
    for (int i = 0; pj_embedded_templates[i].path && !schema; i++)
        if (strstr(pj_embedded_templates[i].path, "transpose"))
            ck_assert_int_eq(pj_schema_parse(&schema, pj_embedded_templates[i].text, "t.cu"),
                             PTXJIT_OK);
    ck_assert_ptr_nonnull(schema);
    ck_assert_int_gt(fail_each_allocation(parse_request, schema, "pj_request_parse"), 3);
    pj_schema_free(schema);
}
END_TEST

static void ignore(void *user, ptxjit_log_level level, const char *message)
{
    (void)user, (void)level, (void)message;
}

typedef struct {
    char *root;
    pj_artifact artifact;
} disk_job;

#define KEY "0123456789abcdef0123456789abcdef"

/* Open, store, load (a hit), stats, trim, clear, close: the disk cache's every call. */
static ptxjit_status use_disk_cache(void *user)
{
    disk_job *job = user;
    pj_disk_cache *cache = NULL;
    pj_logger quiet = {.fn = ignore, .user = NULL}; /* "cannot be used (out of memory)" */
    ptxjit_status status = pj_disk_cache_open(&cache, &(pj_disk_options){job->root, 0, 0}, &quiet);
    pj_artifact got = {0};
    int found = 0;
    if (status == PTXJIT_OK)
        status = pj_disk_cache_store(cache, KEY, &job->artifact);
    if (status == PTXJIT_OK)
        status = pj_disk_cache_load(cache, KEY, &got, &found);
    if (status == PTXJIT_OK && !found)
        status = PTXJIT_ERR_OUT_OF_MEMORY; /* a hit is only lost to a failed allocation */
    pj_artifact_free(&got);
    ptxjit_cache_stats stats;
    evict_report report;
    if (status == PTXJIT_OK)
        status = pj_disk_cache_stats(cache, &stats);
    if (status == PTXJIT_OK)
        status = pj_disk_cache_trim(cache, &report);
    if (status == PTXJIT_OK)
        status = pj_disk_cache_clear(cache, NULL);
    pj_disk_cache_close(cache);
    return status;
}

START_TEST(disk_cache_survives_every_allocation_failure)
{
    disk_job job;
    job.root = test_mkdtemp();
    pj_artifact *a = &job.artifact;
    memset(a, 0, sizeof *a);
    a->family = pj_strdup("reduce");
    a->params = pj_strdup("tpb=64");
    a->ptx = pj_strdup(".entry reduce_kernel(");
    a->log = pj_strdup("");
    a->cubin_size = 100;
    a->cubin = calloc(1, 100);
    a->entries = calloc(2, sizeof *a->entries);
    a->entries[0] = pj_strdup("reduce_kernel");
    a->entries[1] = pj_strdup("reduce_finish");
    a->entry_count = 2;
    ck_assert_int_gt(fail_each_allocation(use_disk_cache, &job, "disk cache"), 10);
    pj_artifact_free(a);
    test_rmtree(job.root);
    free(job.root);
}
END_TEST

static ptxjit_status decode_entry(void *user)
{
    const pj_artifact *a = user;
    size_t size = 0;
    char *data = pj_entry_encode(&size, KEY, a);
    if (!data)
        return PTXJIT_ERR_OUT_OF_MEMORY;
    pj_artifact got;
    const char *why = NULL;
    ptxjit_status status = pj_entry_decode(&got, &why, data, size, KEY);
    free(data);
    pj_artifact_free(&got);
    return status;
}

START_TEST(entry_codec_survives_every_allocation_failure)
{
    pj_artifact a = {0};
    char *entries[] = {"a", "bb", "ccc"};
    a.family = "f", a.params = "p=1", a.ptx = "ptx", a.log = "log", a.entries = entries;
    a.entry_count = 3;
    ck_assert_int_gt(fail_each_allocation(decode_entry, &a, "entry encode and decode"), 8);
}
END_TEST

/* A request served from the disk cache in a fresh context: key, disk hit, kernel record,
 * close. (A failed allocation in the disk lookup makes it compile instead.) */
static ptxjit_status request_from_disk(void *user)
{
    const char *dir = user;
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    options.log = ignore; /* "cannot be used (out of memory)", and the like */
    ptxjit_context *context = open_unfailing(&options);
    ptxjit_kernel *kernel;
    ptxjit_status status = ptxjit_get_kernel(&kernel, context, "reduce", "tpb=64", NULL);
    if (status == PTXJIT_OK && !strstr(ptxjit_kernel_ptx(kernel), ".entry reduce_kernel("))
        status = PTXJIT_ERR_CACHE;
    ptxjit_close(context);
    return status;
}

START_TEST(request_from_disk_survives_every_allocation_failure)
{
    char *dir = test_mkdtemp();
    ck_assert_int_eq(request_from_disk(dir), PTXJIT_OK); /* compiles once and stores */
    ck_assert_int_gt(fail_each_allocation(request_from_disk, dir, "request from disk"), 10);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* Compiles a reduce kernel through backend (NULL: the default) in a fresh context with no
 * disk cache, opened with no allocation failing; a kernel that did not come from the
 * compiler or lacks its entry is PTXJIT_ERR_COMPILE. The caller closes *context. */
static ptxjit_status compile_fresh(ptxjit_context **context, ptxjit_kernel **kernel,
                                   const char *backend, const char *params)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.backend = backend;
    *context = open_unfailing(&options);
    ptxjit_origin origin = PTXJIT_ORIGIN_MEMORY;
    ptxjit_status status = ptxjit_get_kernel(kernel, *context, "reduce", params, &origin);
    if (status == PTXJIT_OK && (origin != PTXJIT_ORIGIN_COMPILED ||
                                !strstr(ptxjit_kernel_ptx(*kernel), ".entry reduce_kernel(")))
        status = PTXJIT_ERR_COMPILE;
    return status;
}

/* A request compiled in memory in a fresh context: specialize, NVRTC, the artifact, the
 * kernel record, close. */
static ptxjit_status request_compiled(void *user)
{
    (void)user;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_status status = compile_fresh(&context, &kernel, NULL, "variant=one_pass");
    ptxjit_close(context);
    return status;
}

START_TEST(request_compiled_survives_every_allocation_failure)
{
    ck_assert_int_gt(fail_each_allocation(request_compiled, NULL, "request compiled"), 10);
}
END_TEST

/* The llvm route in a fresh context: the request handed to the plugin, its PTX copied back,
 * nvJitLink's cubin and log, the kernel record, then the IR built again on request (NULL when
 * that runs out of memory). The plugin's own allocations (LLVM's) are not ptxjit's and are
 * not failed: --wrap reaches the objects linked into the runner. */
static ptxjit_status request_compiled_through_llvm(void *user)
{
    (void)user;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_status status =
        compile_fresh(&context, &kernel, "llvm", "variant=vectorized tpb=128");
    size_t cubin_size = 0;
    if (status == PTXJIT_OK && !ptxjit_kernel_cubin(kernel, &cubin_size))
        status = PTXJIT_ERR_COMPILE;
    const char *ir = status == PTXJIT_OK ? ptxjit_kernel_source(kernel) : NULL;
    if (status == PTXJIT_OK && !ir)
        status = strstr(ptxjit_last_error(), "out of memory") ? PTXJIT_ERR_OUT_OF_MEMORY
                                                               : PTXJIT_ERR_COMPILE;
    else if (status == PTXJIT_OK && !strstr(ir, "define ptx_kernel void @reduce_kernel"))
        status = PTXJIT_ERR_COMPILE;
    ptxjit_close(context);
    return status;
}

START_TEST(request_compiled_through_llvm_survives_every_allocation_failure)
{
    if (!test_llvm_or_skip("request_compiled_through_llvm_survives_every_allocation_failure"))
        return;
    ck_assert_int_gt(fail_each_allocation(request_compiled_through_llvm, NULL,
                                          "request compiled through llvm"), 10);
}
END_TEST

/* An entry's parameters read (the PTX, then the cubin's records) with each allocation failing
 * in turn: a failure is never kept, and the layout kept is the cubin's (the first tensor map
 * at 48, where the PTX alone would say 64). */
static ptxjit_status parameter_layout(void *user)
{
    ptxjit_param_layout layout;
    ptxjit_status status = ptxjit_kernel_param_layout(&layout, user, NULL, 4);
    return status == PTXJIT_OK && layout.offset != 48 ? PTXJIT_ERR_INVALID_ARGUMENT : status;
}

START_TEST(parameter_layouts_survive_every_allocation_failure)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.arch = "sm_90a";
    ptxjit_context *context = open_unfailing(&options);
    ptxjit_kernel *kernel = NULL;
    paused = 1;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "transpose", "variant=tma", NULL),
                     PTXJIT_OK);
    paused = 0;
    ck_assert_int_ge(fail_each_allocation(parameter_layout, kernel, "parameter layouts"), 3);
    paused = 1;
    ptxjit_close(context);
    paused = 0;
}
END_TEST

/* Opening a context with a directory of user templates, and describing their family. */
static ptxjit_status open_with_user_templates(void *user)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = user;
    ptxjit_context *context = NULL;
    const char *text;
    ptxjit_status status = ptxjit_open(&context, &options);
    if (status == PTXJIT_OK)
        status = ptxjit_family_describe(&text, context, "scale");
    ptxjit_close(context);
    return status;
}

START_TEST(user_templates_survive_every_allocation_failure)
{
    char *dir = test_mkdtemp(), path[4200];
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/scale%d.cu", dir, i);
        FILE *file = fopen(path, "w");
        ck_assert_ptr_nonnull(file);
        fprintf(file, "//@ptxjit family scale%s\n//@ptxjit entry k\n"
                      "//@ptxjit param f int(1..9) default=2 when=\"f > 1\"\n",
                i ? (i == 1 ? "_b" : "_c") : "");
        fclose(file);
    }
    ck_assert_int_gt(fail_each_allocation(open_with_user_templates, dir, "user templates"), 20);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* In a context opened with nothing failing: a template added from memory, replaced by
 * another of its family, the directory (a template, a broken one, a helper) read again, and
 * both families described. */
static void quiet(void *user, ptxjit_log_level level, const char *message)
{
    (void)user, (void)level, (void)message; /* broken.cu's warning, once a run */
}

static ptxjit_status add_and_reload(void *user)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.log = quiet;
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = user;
    ptxjit_context *context = open_unfailing(&options);
    const char *text;
    ptxjit_status status = ptxjit_add_template(
        context, "mem.cu", "//@ptxjit family mem\r\n//@ptxjit entry k\r\n"
                           "//@ptxjit param f int(1..9) default=2\r\n");
    if (status == PTXJIT_OK)
        status = ptxjit_add_template(context, "mem2.cu",
                                     "\xEF\xBB\xBF//@ptxjit family mem\n//@ptxjit entry k\n");
    if (status == PTXJIT_OK)
        status = ptxjit_reload_templates(context);
    if (status == PTXJIT_OK)
        status = ptxjit_family_describe(&text, context, "mem");
    if (status == PTXJIT_OK)
        status = ptxjit_family_describe(&text, context, "scale");
    ptxjit_close(context);
    return status;
}

START_TEST(template_add_and_reload_survive_every_allocation_failure)
{
    char *dir = test_mkdtemp(), path[4200];
    static const char *const files[][2] = {
        {"scale.cu", "//@ptxjit family scale\n//@ptxjit entry k\n"},
        {"broken.cu", "//@ptxjit family broken\n//@ptxjit entry k\n//@ptxjit param f int(1..9)\n"},
        {"helper.cu", "__device__ int twice(int x) { return 2 * x; }\n"},
    };
    for (int i = 0; i < 3; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        FILE *file = fopen(path, "w");
        ck_assert_ptr_nonnull(file);
        fputs(files[i][1], file);
        fclose(file);
    }
    ck_assert_int_gt(fail_each_allocation(add_and_reload, dir, "template add and reload"), 20);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A user template that includes a header from its directory and one from an -I dir, with
 * compile options: the options parsed, the headers scanned and hashed, NVRTC's arguments, the
 * compile, the headers hashed again (a failure there keeps the kernel off the disk, a
 * warning), the kernel record. */
static ptxjit_status request_with_headers(const char *dir, int confine)
{
    char include[4200], options_text[4400];
    snprintf(include, sizeof include, "%s/include", dir);
    snprintf(options_text, sizeof options_text, "-DPJ_SCALE=3 -I %s -lineinfo", include);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = dir;
    options.log = ignore;
    options.confine_includes = confine;
    ptxjit_context *context = open_unfailing(&options);
    ptxjit_kernel *kernel;
    ptxjit_status status =
        ptxjit_get_kernel_ex(&kernel, context, "headed", "", options_text, NULL);
    if (status == PTXJIT_OK && !strstr(ptxjit_kernel_ptx(kernel), ".entry headed_kernel("))
        status = PTXJIT_ERR_COMPILE;
    ptxjit_close(context);
    return status;
}

static ptxjit_status request_with_headers_and_options(void *dir)
{
    return request_with_headers(dir, 0);
}

/* The same with includes confined: the allowed directories and each include's check too. */
static ptxjit_status request_with_confined_headers(void *dir)
{
    return request_with_headers(dir, 1);
}

START_TEST(request_with_headers_and_options_survives_every_allocation_failure)
{
    char *dir = test_mkdtemp(), path[4200];
    snprintf(path, sizeof path, "%s/include", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    const char *files[][2] = {
        {"headed.cu", "//@ptxjit family headed\n//@ptxjit entry headed_kernel\n"
                      "#include \"near.cuh\"\n#include <far.cuh>\n"
                      "extern \"C\" __global__ void headed_kernel(int *x) "
                      "{ x[0] = NEAR * FAR * PJ_SCALE; }\n"},
        {"near.cuh", "enum { NEAR = 2 };\n"},
        {"include/far.cuh", "enum { FAR = 5 };\n"},
    };
    for (size_t i = 0; i < PJ_ARRAY_SIZE(files); i++) {
        snprintf(path, sizeof path, "%s/%s", dir, files[i][0]);
        FILE *file = fopen(path, "w");
        ck_assert_ptr_nonnull(file);
        fputs(files[i][1], file);
        fclose(file);
    }
    ck_assert_int_gt(fail_each_allocation(request_with_headers_and_options, dir,
                                          "request with headers and options"),
                     20);
    ck_assert_int_gt(fail_each_allocation(request_with_confined_headers, dir,
                                          "request with confined headers"),
                     20);
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_out_of_memory(void)
{
    Suite *suite = suite_create("out_of_memory");
    TCase *tc = tcase_create("allocations");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, schema_parse_survives_every_allocation_failure);
    tcase_add_test(tc, request_parse_survives_every_allocation_failure);
    tcase_add_test(tc, entry_codec_survives_every_allocation_failure);
    tcase_add_test(tc, disk_cache_survives_every_allocation_failure);
    tcase_add_test(tc, request_from_disk_survives_every_allocation_failure);
    tcase_add_test(tc, user_templates_survive_every_allocation_failure);
    tcase_add_test(tc, template_add_and_reload_survive_every_allocation_failure);
    tcase_add_test(tc, request_compiled_survives_every_allocation_failure);
    tcase_add_test(tc, request_with_headers_and_options_survives_every_allocation_failure);
    tcase_add_test(tc, request_compiled_through_llvm_survives_every_allocation_failure);
    tcase_add_test(tc, parameter_layouts_survive_every_allocation_failure);
    suite_add_tcase(suite, tc);
    return suite;
}

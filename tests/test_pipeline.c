/* test_pipeline.c — requests end to end without a GPU: specialize, NVRTC to PTX and cubin,
 * memory and disk caches, keys, user templates, errors, threads, and no-driver behaviour. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "compilers/nvrtc.h"
#include "request/key.h"
#include "request/context.h"
#include "request/specialize.h"
#include "request/route_llvm.h"
#include "test_util.h"

typedef struct {
    char *dir;
    ptxjit_context *context;
    int warnings;
    char last_warning[1024];
} fixture;

static void count_warning(void *user, ptxjit_log_level level, const char *message)
{
    fixture *f = user;
    if (level == PTXJIT_LOG_WARNING) {
        f->warnings++;
        snprintf(f->last_warning, sizeof f->last_warning, "%s", message);
    }
}

/* A context with its own cache dir, no GPU, and warnings counted. */
static void open_fixture(fixture *f, const char *arch)
{
    memset(f, 0, sizeof *f);
    f->dir = test_mkdtemp();
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = f->dir;
    options.use_gpu = 0;
    options.arch = arch;
    options.log = count_warning;
    options.log_user = f;
    ck_assert_msg(ptxjit_open(&f->context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
}

static void close_fixture(fixture *f)
{
    ptxjit_close(f->context);
    test_rmtree(f->dir);
    free(f->dir);
}

static ptxjit_kernel *get(fixture *f, const char *params, ptxjit_origin expected)
{
    ptxjit_kernel *kernel = NULL;
    ptxjit_origin origin;
    ptxjit_status status = ptxjit_get_kernel(&kernel, f->context, "reduce", params, &origin);
    ck_assert_msg(status == PTXJIT_OK, "%s", ptxjit_last_error());
    ck_assert_int_eq(origin, expected);
    return kernel;
}

START_TEST(specializer_defines_parameters_as_constants)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *kernel = get(&f, "variant=batched tpb=128 batch=4 dtype=f32",
                                PTXJIT_ORIGIN_COMPILED);
    const char *source = ptxjit_kernel_source(kernel);
    ck_assert_ptr_nonnull(strstr(source, "enum : long long { TPB = 128 };"));
    ck_assert_ptr_nonnull(strstr(source, "enum : long long { BATCH = 4 };"));
    ck_assert_ptr_nonnull(strstr(source, "VARIANT = VARIANT_BATCHED };"));
    ck_assert_ptr_nonnull(strstr(source, "using DTYPE = float;"));
    ck_assert_ptr_nonnull(strstr(source, "//@ptxjit family reduce"));
    close_fixture(&f);
}
END_TEST

START_TEST(specializer_excerpt_numbers_lines)
{
    char *excerpt = pj_specialize_excerpt("a\nb\nc\nd\n", 2, 3);
    ck_assert_str_eq(excerpt, "    2 | b\n    3 | c\n");
    free(excerpt);
}
END_TEST

START_TEST(vectorized_ptx_has_entry_and_128_bit_loads)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *kernel = get(&f, "variant=vectorized tpb=256 batch=8", PTXJIT_ORIGIN_COMPILED);
    const char *ptx = ptxjit_kernel_ptx(kernel);
    ck_assert_ptr_nonnull(strstr(ptx, ".entry reduce_kernel("));
    ck_assert_ptr_nonnull(strstr(ptx, ".target sm_90a"));
    ck_assert_ptr_nonnull(strstr(ptx, ".v4.u32"));
    ck_assert_ptr_nonnull(strstr(ptx, "ld.global.nc.v4"));
    ck_assert_ptr_nonnull(strstr(ptx, "shfl.sync.down"));
    ck_assert_ptr_nonnull(strstr(ptx, "atom.global.add"));
    size_t size;
    const unsigned char *cubin = ptxjit_kernel_cubin(kernel, &size);
    ck_assert_uint_gt(size, 64);
    ck_assert_mem_eq(cubin, "\177ELF", 4);
    ck_assert_str_eq(ptxjit_kernel_entry_name(kernel, 0), "reduce_kernel");
    close_fixture(&f);
}
END_TEST

START_TEST(every_variant_and_dtype_compiles_for_sm_90a)
{
    static const char *const variants[] = {"two_pass", "warp_shuffle", "one_pass", "batched",
                                           "vectorized"};
    static const char *const dtypes[] = {"i32", "f32"};
    fixture f;
    open_fixture(&f, NULL);
    for (int v = 0; v < 5; v++)
        for (int d = 0; d < 2; d++) {
            char params[128];
            snprintf(params, sizeof params, "variant=%s dtype=%s tpb=%d", variants[v], dtypes[d],
                     32 << (v + d));
            ptxjit_kernel *kernel = get(&f, params, PTXJIT_ORIGIN_COMPILED);
            size_t size;
            ck_assert_ptr_nonnull(ptxjit_kernel_cubin(kernel, &size));
            ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), ".entry reduce_kernel("));
            /* Only the atomic variants need atomics; the two-pass ones must not use them. */
            int atomic = strstr(ptxjit_kernel_ptx(kernel), "atom.global") != NULL;
            ck_assert_int_eq(atomic, v >= 2);
        }
    close_fixture(&f);
}
END_TEST

START_TEST(second_request_is_a_memory_hit_with_the_same_kernel)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *a = get(&f, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    ptxjit_kernel *b = get(&f, "variant=one_pass", PTXJIT_ORIGIN_MEMORY);
    /* Another spelling of the same request finds the same kernel through its key. */
    ptxjit_kernel *c = get(&f, "dtype=i32,tpb=512 variant=one_pass", PTXJIT_ORIGIN_MEMORY);
    ck_assert_ptr_eq(a, b);
    ck_assert_ptr_eq(a, c);
    close_fixture(&f);
}
END_TEST

static ptxjit_kernel *get_in_new_context(fixture *f, const char *params, ptxjit_origin want)
{
    ptxjit_close(f->context);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = f->dir;
    options.use_gpu = 0;
    options.log = count_warning;
    options.log_user = f;
    ck_assert_int_eq(ptxjit_open(&f->context, &options), PTXJIT_OK);
    return get(f, params, want);
}

START_TEST(new_context_is_served_from_disk)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *first = get(&f, "variant=batched batch=4", PTXJIT_ORIGIN_COMPILED);
    char *ptx = pj_strdup(ptxjit_kernel_ptx(first));
    char key[33];
    snprintf(key, sizeof key, "%s", ptxjit_kernel_key(first));
    ptxjit_kernel *again = get_in_new_context(&f, "variant=batched batch=4", PTXJIT_ORIGIN_DISK);
    ck_assert_str_eq(ptxjit_kernel_ptx(again), ptx);
    ck_assert_str_eq(ptxjit_kernel_key(again), key);
    ck_assert_str_eq(ptxjit_kernel_params(again), "batch=4 dtype=i32 tpb=512 variant=batched");
    /* The source is specialized again on request: no compile, and the same text. */
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_source(again), "VARIANT_BATCHED"));
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, f.context), PTXJIT_OK);
    ck_assert_uint_eq(stats.hits, 1);
    ck_assert_uint_eq(stats.stores, 1);
    ck_assert_uint_eq(stats.entries, 1);
    free(ptx);
    close_fixture(&f);
}
END_TEST

START_TEST(corrupt_disk_entry_is_reported_and_rebuilt)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *kernel = get(&f, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    char *path = pj_disk_cache_entry_path(f.context->disk, ptxjit_kernel_key(kernel));
    FILE *file = fopen(path, "r+b");
    ck_assert_ptr_nonnull(file);
    fseek(file, 200, SEEK_SET);
    fputc('#', file);
    fclose(file);
    get_in_new_context(&f, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    ck_assert_int_ge(f.warnings, 1);
    ck_assert_ptr_nonnull(strstr(f.last_warning, "corrupt"));
    /* The rebuilt entry is whole again. */
    get_in_new_context(&f, "variant=one_pass", PTXJIT_ORIGIN_DISK);
    free(path);
    close_fixture(&f);
}
END_TEST

static pj_hash128 key_with(int field, const char *value)
{
    const char *options[] = {"-arch=sm_90a", "-std=c++17"};
    pj_key_inputs in = {"reduce", "tpb=512", "template text", "nvrtc", "nvrtc 13.0", "sm_90a",
                        options, 2, 1, NULL, NULL, NULL};
    const char **fields[] = {&in.family, &in.canonical_params, &in.template_source, &in.backend,
                             &in.compiler_version, &in.arch, &options[1]};
    if (field >= 0 && field < 7)
        *fields[field] = value;
    if (field == 7)
        in.specializer_version = 2;
    if (field == 8)
        in.option_count = 1;
    pj_hash128 key;
    ck_assert_int_eq(pj_cache_key(&key, &in), PTXJIT_OK);
    return key;
}

START_TEST(key_is_stable_for_the_same_inputs)
{
    pj_hash128 a = key_with(-1, NULL), b = key_with(-1, NULL);
    ck_assert(a.low == b.low && a.high == b.high);
    /* Known value: the key must not drift between builds, or every cache goes cold. */
    char hex[33];
    pj_hash_hex(&a, hex);
    ck_assert_uint_eq(strlen(hex), 32);
    ck_assert_str_eq(hex, "4793334fbe6953f2d7e139abb0b233d4");
}
END_TEST

START_TEST(key_changes_with_every_input)
{
    pj_hash128 base = key_with(-1, NULL);
    for (int field = 0; field < 9; field++) {
        pj_hash128 changed = key_with(field, "something else");
        ck_assert_msg(changed.low != base.low || changed.high != base.high,
                      "field %d does not change the key", field);
    }
}
END_TEST

START_TEST(template_text_not_name_is_in_the_key)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *builtin = get(&f, "", PTXJIT_ORIGIN_COMPILED);
    char builtin_key[33];
    snprintf(builtin_key, sizeof builtin_key, "%s", ptxjit_kernel_key(builtin));
    /* The same family from a user directory, one comment line longer: a different key. */
    char *templates = test_mkdtemp(), path[4096];
    snprintf(path, sizeof path, "%s/reduce.cu", templates);
    const pj_schema *schema = pj_context_find_schema(f.context, "reduce");
    FILE *file = fopen(path, "w");
    fprintf(file, "%s// a user's copy\n", schema->source);
    fclose(file);
    ptxjit_close(f.context);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = f.dir;
    options.use_gpu = 0;
    options.template_path = templates;
    ck_assert_int_eq(ptxjit_open(&f.context, &options), PTXJIT_OK);
    ptxjit_kernel *user = get(&f, "", PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_ne(ptxjit_kernel_key(user), builtin_key);
    test_rmtree(templates);
    free(templates);
    close_fixture(&f);
}
END_TEST

START_TEST(arch_override_reaches_key_and_ptx)
{
    fixture a, b;
    open_fixture(&a, NULL);
    open_fixture(&b, "sm_80");
    ptxjit_kernel *hopper = get(&a, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    ptxjit_kernel *ampere = get(&b, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    ck_assert_str_ne(ptxjit_kernel_key(hopper), ptxjit_kernel_key(ampere));
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(ampere), ".target sm_80"));
    ck_assert_str_eq(ptxjit_arch(b.context), "sm_80");
    close_fixture(&a);
    close_fixture(&b);
}
END_TEST

START_TEST(open_rejects_bad_arch_and_unknown_backend)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    ptxjit_context *context = (ptxjit_context *)1;
    options.arch = "hopper";
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(context);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "sm_NN"));
    options.arch = NULL;
    options.backend = "gcc";
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_UNSUPPORTED);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "available: nvrtc, llvm"));
}
END_TEST

START_TEST(unknown_family_lists_known_ones)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, f.context, "sort", "", NULL),
                     PTXJIT_ERR_UNKNOWN_FAMILY);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "unknown kernel family 'sort'"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "reduce"));
    close_fixture(&f);
}
END_TEST

START_TEST(bad_parameters_fail_before_any_compile)
{
    fixture f;
    open_fixture(&f, NULL);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, f.context, "reduce", "tpb=100", NULL),
                     PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "tpb=100"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "power of two in 32..1024"));
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, f.context, "reduce",
                                       "variant=vectorized batch=32", NULL),
                     PTXJIT_ERR_PARAM);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "batch <= 16"));
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, f.context), PTXJIT_OK);
    ck_assert_uint_eq(stats.entries, 0);
    close_fixture(&f);
}
END_TEST

static char *write_user_template(const char *body)
{
    char *dir = test_mkdtemp(), path[4096];
    snprintf(path, sizeof path, "%s/scale.cu", dir);
    FILE *file = fopen(path, "w");
    fputs(body, file);
    fclose(file);
    return dir;
}

static ptxjit_status open_with_templates(ptxjit_context **context, const char *dir)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = dir;
    return ptxjit_open(context, &options);
}

START_TEST(user_template_directory_adds_a_family)
{
    char *dir = write_user_template(
        "//@ptxjit family scale\n//@ptxjit entry scale_kernel\n"
        "//@ptxjit param factor int(1..100) default=3\n"
        "extern \"C\" __global__ void scale_kernel(int *x) { x[threadIdx.x] *= FACTOR; }\n");
    ptxjit_context *context;
    ck_assert_int_eq(open_with_templates(&context, dir), PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "scale", "factor=7", NULL), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), ".entry scale_kernel("));
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), "7"));
    int found = 0;
    for (int i = 0; i < ptxjit_family_count(context); i++)
        found += strcmp(ptxjit_family_name(context, i), "scale") == 0;
    ck_assert_int_eq(found, 1);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A bad template or directory is a problem of the registry (tests/test_templates.c has the
 * rest): the context opens, the family is refused naming file and line. */
START_TEST(bad_user_template_is_a_problem_naming_file_and_line)
{
    char *dir = write_user_template("//@ptxjit family scale\n//@ptxjit entry k\n"
                                    "//@ptxjit param factor int(1..100)\n");
    ptxjit_context *context;
    ck_assert_int_eq(open_with_templates(&context, dir), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    ck_assert_ptr_nonnull(strstr(ptxjit_template_problem(context, 0), "scale.cu:3"));
    const char *text;
    ck_assert_int_eq(ptxjit_family_describe(&text, context, "scale"), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "scale.cu:3"));
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
    ck_assert_int_eq(open_with_templates(&context, "/nonexistent/templates"), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(ptxjit_template_problem(context, 0), "/nonexistent/templates"));
    ptxjit_close(context);
}
END_TEST

START_TEST(compile_error_returns_log_params_and_source_lines)
{
    char *dir = write_user_template(
        "//@ptxjit family scale\n//@ptxjit entry scale_kernel\n"
        "//@ptxjit param factor int(1..100) default=3\n"
        "extern \"C\" __global__ void scale_kernel(int *x) { x[0] = FACTOR + undefined_name; }\n");
    ptxjit_context *context;
    ck_assert_int_eq(open_with_templates(&context, dir), PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "scale", "factor=5", NULL),
                     PTXJIT_ERR_COMPILE);
    const char *message = ptxjit_last_error();
    ck_assert_ptr_nonnull(strstr(message, "factor=5"));
    ck_assert_ptr_nonnull(strstr(message, "undefined_name"));
    /* Cited and shown as the template's own line 4 (#line), not the generated source's. */
    ck_assert_ptr_nonnull(strstr(message, "scale.cu(4)"));
    ck_assert_ptr_nonnull(strstr(message, "scale.cu around line 4"));
    ck_assert_ptr_nonnull(strstr(message, "    4 | extern \"C\""));
    /* The summary points at the whole log and the source, which are kept. */
    ck_assert_ptr_nonnull(strstr(message, "ptxjit_last_compile_log()"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_compile_log(), "undefined_name"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_compile_source(), "FACTOR = 5"));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_compile_source(), "scale_kernel"));
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* ptxjit_specialize: what ptxjit_kernel_source shows, without a compile; bad input refused. */
START_TEST(specialize_gives_the_source_without_compiling)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.disk_cache = 0;
    options.use_gpu = 0;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    char *source = NULL;
    ck_assert_int_eq(ptxjit_specialize(&source, context, "reduce", "variant=batched batch=3"),
                     PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "batch=3 variant=batched",
                                       NULL),
                     PTXJIT_OK);
    ck_assert_str_eq(source, ptxjit_kernel_source(kernel));
    free(source);
    ck_assert_int_eq(ptxjit_specialize(&source, context, "reduce", "tpb=3"), PTXJIT_ERR_PARAM);
    ck_assert_ptr_null(source);
    ck_assert_int_eq(ptxjit_specialize(&source, context, "nope", ""),
                     PTXJIT_ERR_UNKNOWN_FAMILY);
    ck_assert_int_eq(ptxjit_specialize(NULL, context, "reduce", ""),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    if (pj_llvm_built()) {
        ck_assert_int_eq(ptxjit_specialize(&source, context, "reduce", "backend=llvm"), PTXJIT_OK);
        ck_assert_ptr_nonnull(strstr(source, "@reduce_kernel("));
        free(source);
    }
    ptxjit_close(context);
}
END_TEST

START_TEST(declared_entry_missing_from_ptx_is_an_error)
{
    char *dir = write_user_template("//@ptxjit family scale\n//@ptxjit entry other\n"
                                    "extern \"C\" __global__ void k(int *x) { x[0] = 1; }\n");
    ptxjit_context *context;
    ck_assert_int_eq(open_with_templates(&context, dir), PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "scale", "", NULL), PTXJIT_ERR_TEMPLATE);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "entry 'other'"));
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

typedef struct {
    ptxjit_context *context;
    const char *params;
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ptxjit_status status;
} request_thread;

static void *request_in_thread(void *arg)
{
    request_thread *t = arg;
    t->status = ptxjit_get_kernel(&t->kernel, t->context, "reduce", t->params, &t->origin);
    return NULL;
}

START_TEST(threads_asking_for_one_key_compile_it_once)
{
    enum { THREADS = 8 };
    fixture f;
    open_fixture(&f, NULL);
    pthread_t threads[THREADS];
    request_thread work[THREADS];
    for (int i = 0; i < THREADS; i++) {
        work[i] = (request_thread){f.context, i % 2 ? "variant=batched" : "variant=batched dtype=i32",
                                   NULL, 0, PTXJIT_OK};
        pthread_create(&threads[i], NULL, request_in_thread, &work[i]);
    }
    int compiled = 0;
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        ck_assert_int_eq(work[i].status, PTXJIT_OK);
        ck_assert_ptr_eq(work[i].kernel, work[0].kernel);
        compiled += work[i].origin == PTXJIT_ORIGIN_COMPILED;
    }
    ck_assert_int_eq(compiled, 1);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, f.context), PTXJIT_OK);
    ck_assert_uint_eq(stats.stores, 1);
    close_fixture(&f);
}
END_TEST

START_TEST(threads_asking_for_distinct_keys_all_get_theirs)
{
    enum { THREADS = 6 };
    static const char *const params[THREADS] = {"tpb=32", "tpb=64", "tpb=128",
                                                "tpb=256", "tpb=512", "tpb=1024"};
    fixture f;
    open_fixture(&f, NULL);
    pthread_t threads[THREADS];
    request_thread work[THREADS];
    for (int i = 0; i < THREADS; i++) {
        work[i] = (request_thread){f.context, params[i], NULL, 0, PTXJIT_OK};
        pthread_create(&threads[i], NULL, request_in_thread, &work[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(threads[i], NULL);
        ck_assert_int_eq(work[i].status, PTXJIT_OK);
        ck_assert_int_eq(work[i].origin, PTXJIT_ORIGIN_COMPILED);
        char expected[64];
        snprintf(expected, sizeof expected, "batch=4 dtype=i32 %s variant=vectorized",
                 params[i]);
        ck_assert_str_eq(ptxjit_kernel_params(work[i].kernel), expected);
    }
    close_fixture(&f);
}
END_TEST

START_TEST(unusable_cache_dir_warns_and_still_compiles)
{
    fixture f;
    memset(&f, 0, sizeof f);
    char *dir = test_mkdtemp(), blocker[4096];
    snprintf(blocker, sizeof blocker, "%s/file", dir);
    FILE *file = fopen(blocker, "w");
    fclose(file);
    strcat(blocker, "/cache"); /* under a regular file: cannot be created, even by root */
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.cache_dir = blocker;
    options.log = count_warning;
    options.log_user = &f;
    ck_assert_int_eq(ptxjit_open(&f.context, &options), PTXJIT_OK);
    ck_assert_int_eq(f.warnings, 1);
    ck_assert_ptr_nonnull(strstr(f.last_warning, "disk cache disabled"));
    ck_assert_ptr_null(ptxjit_cache_dir(f.context));
    get(&f, "variant=one_pass", PTXJIT_ORIGIN_COMPILED);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, f.context), PTXJIT_ERR_CACHE);
    ptxjit_close(f.context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(without_a_driver_compiling_works_and_gpu_calls_fail_clearly)
{
    /* Each Check test runs in its own process, so the driver has not been loaded yet. */
    setenv("PTXJIT_CUDA_LIBRARY", "/nonexistent/libcuda.so.1", 1);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.disk_cache = 0;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_gpu_status(context), PTXJIT_ERR_NO_DRIVER);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "cannot load the CUDA driver"));
    ck_assert_str_eq(ptxjit_arch(context), "sm_90a");
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "", NULL), PTXJIT_OK);
    ptxjit_devptr pointer;
    ck_assert_int_eq(ptxjit_alloc(&pointer, context, 16), PTXJIT_ERR_NO_DRIVER);
    ptxjit_dim3 one = {1, 1, 1};
    ck_assert_int_eq(ptxjit_launch(kernel, NULL, one, one, 0, NULL, NULL), PTXJIT_ERR_NO_DRIVER);
    int sum;
    ck_assert_int_eq(ptxjit_reduce(context, "", 0x1000, 10, &sum), PTXJIT_ERR_NO_DRIVER);
    ptxjit_kernel_resources resources;
    ck_assert_int_eq(ptxjit_kernel_resources_get(&resources, kernel, NULL),
                     PTXJIT_ERR_NO_DRIVER);
    ptxjit_close(context);
    unsetenv("PTXJIT_CUDA_LIBRARY");
}
END_TEST

START_TEST(api_rejects_null_arguments)
{
    ck_assert_int_eq(ptxjit_open(NULL, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_kernel *kernel;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, NULL, "reduce", "", NULL),
                     PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(ptxjit_kernel_ptx(NULL));
    ck_assert_str_eq(ptxjit_status_name(PTXJIT_ERR_PARAM), "PTXJIT_ERR_PARAM");
    ptxjit_close(NULL);
}
END_TEST


/* Fills dir's cache with the default reduce kernel in a child process. */
static void fill_cache_in_child(const char *dir)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        ptxjit_options options;
        ptxjit_options_init(&options);
        options.cache_dir = dir;
        options.use_gpu = 0;
        ptxjit_context *context = NULL;
        ptxjit_kernel *kernel;
        int ok = ptxjit_open(&context, &options) == PTXJIT_OK &&
                 ptxjit_get_kernel(&kernel, context, "reduce", "", NULL) == PTXJIT_OK;
        ptxjit_close(context);
        _exit(ok ? 0 : 1);
    }
    int status;
    waitpid(child, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

START_TEST(disk_hit_does_not_load_the_compiler)
{
    char *dir = test_mkdtemp();
    fill_cache_in_child(dir);
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.cache_dir = dir;
    options.use_gpu = 0;
    ptxjit_context *context;
    ptxjit_kernel *kernel;
    ptxjit_origin origin;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "reduce", "", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_DISK);
    /* This process never loaded NVRTC: the version came from the cache's memo. */
    ck_assert_ptr_null(pj_nvrtc_library_path());
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(stale_compiler_memo_keeps_new_kernels_off_the_disk)
{
    fixture f;
    open_fixture(&f, NULL);
    fill_cache_in_child(f.dir);
    char memo[4200];
    snprintf(memo, sizeof memo, "%s/compiler", pj_disk_cache_dir(f.context->disk));
    char *text = NULL;
    ck_assert_int_eq(pj_read_file(&text, NULL, memo), PTXJIT_OK);
    char *version = strstr(text, "version nvrtc ");
    ck_assert_ptr_nonnull(version);
    strcpy(version, "version nvrtc 0.1\n");
    FILE *file = fopen(memo, "w");
    fputs(text, file);
    fclose(file);
    free(text);
    /* The memo now names another compiler: its keys miss, the compile notices, and the
     * kernel stays in memory only; the memo is dropped for the next process. */
    get(&f, "", PTXJIT_ORIGIN_COMPILED);
    ck_assert_ptr_nonnull(strstr(f.last_warning, "NVRTC changed"));
    ck_assert_int_ne(access(memo, F_OK), 0);
    ptxjit_cache_stats stats;
    ck_assert_int_eq(ptxjit_cache_stats_get(&stats, f.context), PTXJIT_OK);
    ck_assert_uint_eq(stats.entries, 1);
    close_fixture(&f);
}
END_TEST

Suite *suite_pipeline(void)
{
    Suite *suite = suite_create("pipeline");
    TCase *tc = tcase_create("compile");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, specializer_defines_parameters_as_constants);
    tcase_add_test(tc, specializer_excerpt_numbers_lines);
    tcase_add_test(tc, vectorized_ptx_has_entry_and_128_bit_loads);
    tcase_add_test(tc, arch_override_reaches_key_and_ptx);
    tcase_add_test(tc, compile_error_returns_log_params_and_source_lines);
    tcase_add_test(tc, specialize_gives_the_source_without_compiling);
    tcase_add_test(tc, declared_entry_missing_from_ptx_is_an_error);
    suite_add_tcase(suite, tc);
    tc = tcase_create("cache");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, second_request_is_a_memory_hit_with_the_same_kernel);
    tcase_add_test(tc, new_context_is_served_from_disk);
    tcase_add_test(tc, corrupt_disk_entry_is_reported_and_rebuilt);
    tcase_add_test(tc, key_is_stable_for_the_same_inputs);
    tcase_add_test(tc, key_changes_with_every_input);
    tcase_add_test(tc, template_text_not_name_is_in_the_key);
    tcase_add_test(tc, threads_asking_for_one_key_compile_it_once);
    tcase_add_test(tc, unusable_cache_dir_warns_and_still_compiles);
    tcase_add_test(tc, disk_hit_does_not_load_the_compiler);
    suite_add_tcase(suite, tc);
    tc = tcase_create("errors");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, open_rejects_bad_arch_and_unknown_backend);
    tcase_add_test(tc, unknown_family_lists_known_ones);
    tcase_add_test(tc, bad_parameters_fail_before_any_compile);
    tcase_add_test(tc, user_template_directory_adds_a_family);
    tcase_add_test(tc, bad_user_template_is_a_problem_naming_file_and_line);
    tcase_add_test(tc, without_a_driver_compiling_works_and_gpu_calls_fail_clearly);
    tcase_add_test(tc, api_rejects_null_arguments);
    suite_add_tcase(suite, tc);
    TCase *many = test_many_compiles_case(suite, 120);
    tcase_add_test(many, every_variant_and_dtype_compiles_for_sm_90a);
    tcase_add_test(many, threads_asking_for_distinct_keys_all_get_theirs);
    tcase_add_test(many, stale_compiler_memo_keeps_new_kernels_off_the_disk);
    return suite;
}

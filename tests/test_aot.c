/* test_aot.c — ahead-of-time tables (request/aot.c, cli/cmd_aot.c, examples/aot): a
 * registered table answers its requests as memory hits with the JIT's own bytes, for the
 * right architecture; an entry of another template text is never served; PARAM=auto takes a
 * registered record; a malformed table is refused; `ptxjit aot` writes the same bytes twice,
 * lists them, and refuses bad lists, outputs and architectures naming the fix; the example
 * program, linked with its generated table, serves every kernel with no compiler at all. */
#include <libgen.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "request/context.h"
#include "test_util.h"

static const char axpy_v1[] =
    "//@ptxjit family axpy\n"
    "//@ptxjit entry axpy_kernel\n"
    "//@ptxjit param items int(1..16) default=4\n"
    "//@ptxjit param tpb int(32..1024) pow2 default=256\n"
    "extern \"C\" __global__ void axpy_kernel(float a, const float *x, float *y, long long n)\n"
    "{\n"
    "    long long i = ((long long)blockIdx.x * TPB + threadIdx.x) * ITEMS;\n"
    "    for (int k = 0; k < ITEMS; k++)\n"
    "        if (i + k < n) y[i + k] += a * x[i + k];\n"
    "}\n";

/* The same kernel, another text: a table built from v1 must not serve it. */
static const char axpy_v2[] =
    "//@ptxjit family axpy\n"
    "//@ptxjit entry axpy_kernel\n"
    "//@ptxjit param items int(1..16) default=4\n"
    "//@ptxjit param tpb int(32..1024) pow2 default=256\n"
    "// edited since the table was made\n"
    "extern \"C\" __global__ void axpy_kernel(float a, const float *x, float *y, long long n)\n"
    "{\n"
    "    long long i = ((long long)blockIdx.x * TPB + threadIdx.x) * ITEMS;\n"
    "    for (int k = 0; k < ITEMS; k++)\n"
    "        if (i + k < n) y[i + k] += a * x[i + k];\n"
    "}\n";

/* One compiled kernel as a table entry would hold it (the bytes copied: the table outlives
 * the context that compiled them). */
typedef struct {
    char params[256], key[33], hash[33], compiler[64];
    unsigned char *cubin;
    size_t cubin_size;
    char *ptx;
    const char *entries[1];
} compiled;

static void compile_axpy(compiled *out, const char *params)
{
    ptxjit_context *context = test_open_offline(NULL);
    ck_assert_int_eq(ptxjit_add_template(context, "axpy.cu", axpy_v1), PTXJIT_OK);
    ptxjit_kernel *kernel;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, "axpy", params, NULL) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    snprintf(out->params, sizeof out->params, "%s", ptxjit_kernel_params(kernel));
    snprintf(out->key, sizeof out->key, "%s", ptxjit_kernel_key(kernel));
    pj_hash_hex(&kernel->schema->source_hash, out->hash);
    snprintf(out->compiler, sizeof out->compiler, "%s", kernel->compiler_version);
    const void *cubin = ptxjit_kernel_cubin(kernel, &out->cubin_size);
    out->cubin = malloc(out->cubin_size);
    memcpy(out->cubin, cubin, out->cubin_size);
    out->ptx = strdup(ptxjit_kernel_ptx(kernel));
    out->entries[0] = "axpy_kernel";
    ptxjit_close(context);
}

static ptxjit_aot_kernel entry_of(const compiled *c, const char *arch)
{
    return (ptxjit_aot_kernel){"axpy", "axpy", c->params, "", arch, "nvrtc", c->key, c->hash,
                               c->compiler, 1, c->entries, c->cubin, c->cubin_size, c->ptx};
}

/* A context for arch with axpy of text and the table registered after it. */
static ptxjit_context *open_with(const char *arch, const char *text, const ptxjit_aot_table *table,
                                 ptxjit_log_fn log, void *user)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.arch = arch;
    options.log = log;
    options.log_user = user;
    ptxjit_context *context;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_add_template(context, "axpy.cu", text), PTXJIT_OK);
    ck_assert_msg(ptxjit_register_aot(context, table) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static void keep_warnings(void *user, ptxjit_log_level level, const char *message)
{
    if (level == PTXJIT_LOG_WARNING)
        pj_sb_appendf(user, "%s\n", message);
}

START_TEST(a_registered_table_serves_its_kernel_for_each_arch_without_compiling)
{
    compiled c;
    compile_axpy(&c, "items=8");
    /* The same bytes under two archs, at two addresses, to tell which entry served. */
    unsigned char *copy = malloc(c.cubin_size);
    memcpy(copy, c.cubin, c.cubin_size);
    ptxjit_aot_kernel kernels[2] = {entry_of(&c, "sm_90a"), entry_of(&c, "sm_80")};
    kernels[1].cubin = copy;
    kernels[1].ptx = NULL;
    ptxjit_aot_table table = {PTXJIT_AOT_FORMAT, "axpy_table", 2, kernels, 0, NULL};
    const struct {
        const char *arch;
        const unsigned char *cubin;
    } cases[] = {{"sm_90a", c.cubin}, {"sm_80", copy}, {"sm_86", copy}, {"sm_89", copy}};
    for (size_t i = 0; i < PJ_ARRAY_SIZE(cases); i++) {
        ptxjit_context *context = open_with(cases[i].arch, axpy_v1, &table, NULL, NULL);
        ptxjit_kernel *kernel;
        ptxjit_origin origin = PTXJIT_ORIGIN_COMPILED;
        ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "axpy", "items=8", &origin),
                         PTXJIT_OK);
        ck_assert_int_eq(origin, PTXJIT_ORIGIN_MEMORY);
        size_t size = 0;
        ck_assert_msg(ptxjit_kernel_cubin(kernel, &size) == (const void *)cases[i].cubin,
                      "%s took the wrong entry", cases[i].arch);
        ck_assert_uint_eq(size, c.cubin_size);
        ck_assert_str_eq(ptxjit_kernel_key(kernel), c.key);
        ck_assert_str_eq(ptxjit_kernel_params(kernel), c.params);
        ck_assert_str_eq(ptxjit_kernel_entry_name(kernel, 0), "axpy_kernel");
        ck_assert_str_eq(ptxjit_kernel_ptx(kernel), cases[i].cubin == copy ? "" : c.ptx);
        ptxjit_kernel_resources r; /* the table's cubin reads as any other */
        ck_assert_int_eq(ptxjit_kernel_resources_static(&r, kernel, NULL), PTXJIT_OK);
        ck_assert_int_gt(r.registers, 0);
        ptxjit_kernel *again; /* the exact request's fast path afterwards */
        ck_assert_int_eq(ptxjit_get_kernel(&again, context, "axpy", "items=8", &origin),
                         PTXJIT_OK);
        ck_assert_ptr_eq(again, kernel);
        ptxjit_close(context);
    }
    free(copy);
    free(c.cubin);
    free(c.ptx);
}
END_TEST

START_TEST(an_entry_built_from_another_template_text_is_never_served)
{
    compiled c;
    compile_axpy(&c, "items=8");
    ptxjit_aot_kernel kernels[1] = {entry_of(&c, "sm_90a")};
    ptxjit_aot_table table = {PTXJIT_AOT_FORMAT, "axpy_table", 1, kernels, 0, NULL};
    pj_strbuf warnings;
    pj_sb_init(&warnings);
    pj_sb_append(&warnings, "");
    ptxjit_context *context = open_with("sm_90a", axpy_v2, &table, keep_warnings, &warnings);
    ck_assert_msg(strstr(warnings.data, "AOT table 'axpy_table': axpy was built from another "
                                        "text of its template") &&
                      strstr(warnings.data, c.hash),
                  "%s", warnings.data);
    ptxjit_kernel *kernel;
    ptxjit_origin origin = PTXJIT_ORIGIN_MEMORY;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "axpy", "items=8", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED); /* the new text, compiled */
    ck_assert_str_ne(ptxjit_kernel_key(kernel), c.key);
    ck_assert_msg(strstr(warnings.data, "holds axpy (items=8 tpb=256) for sm_90a built from "
                                        "another text") &&
                      strstr(warnings.data, "not served"),
                  "%s", warnings.data);
    ptxjit_close(context);
    pj_sb_free(&warnings);
    free(c.cubin);
    free(c.ptx);
}
END_TEST

START_TEST(auto_takes_the_winner_of_a_registered_record)
{
    compiled c;
    compile_axpy(&c, "items=8 tpb=128");
    ptxjit_aot_kernel kernels[1] = {entry_of(&c, "sm_90a")};
    ptxjit_aot_record records[1] = {
        {"axpy", "nvrtc", "sm_90a", "n=1000", "tpb=128", c.params, c.hash}};
    ptxjit_aot_table table = {PTXJIT_AOT_FORMAT, "tuned", 1, kernels, 1, records};
    ptxjit_context *context = open_with("sm_90a", axpy_v1, &table, NULL, NULL);
    ptxjit_kernel *kernel;
    ptxjit_origin origin = PTXJIT_ORIGIN_COMPILED;
    ck_assert_msg(ptxjit_get_kernel_tuned(&kernel, context, "axpy", "items=auto tpb=128",
                                          "n=1000", &origin) == PTXJIT_OK,
                  "%s", ptxjit_last_error());
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_MEMORY);
    ck_assert_str_eq(ptxjit_kernel_params(kernel), "items=8 tpb=128");
    ck_assert_str_eq(ptxjit_kernel_key(kernel), c.key);
    ptxjit_close(context);
    free(c.cubin);
    free(c.ptx);
}
END_TEST

static void quiet(void *user, ptxjit_log_level level, const char *message)
{
    (void)user, (void)level, (void)message;
}

START_TEST(a_malformed_table_is_refused_naming_the_field)
{
    static const unsigned char cubin[4] = {0x7f, 'E', 'L', 'F'};
    static const char *const entries[] = {"reduce_kernel"};
    ptxjit_aot_kernel kernel = {"reduce", "reduce", "p", "", "sm_90a", "nvrtc",
                                "0123456789abcdef0123456789abcdef",
                                "0123456789abcdef0123456789abcdef", "nvrtc 12.8", 1, entries,
                                cubin, sizeof cubin, NULL};
    ptxjit_aot_table table = {PTXJIT_AOT_FORMAT + 1, "bad", 1, &kernel, 0, NULL};
    const ptxjit_aot_table *tables[] = {&table, NULL};
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.aot_tables = tables;
    options.log = quiet; /* the last table is of a made-up template: warned about, unused */
    ptxjit_context *context = NULL;
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_ptr_null(context);
    ck_assert_msg(strstr(ptxjit_last_error(), "AOT table 'bad' has format 2"), "%s",
                  ptxjit_last_error());
    table.format = PTXJIT_AOT_FORMAT;
    kernel.key = "not a key";
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_ERR_INVALID_ARGUMENT);
    ck_assert_msg(strstr(ptxjit_last_error(), "AOT table 'bad': kernel 0: key"), "%s",
                  ptxjit_last_error());
    kernel.key = "0123456789abcdef0123456789abcdef";
    ck_assert_int_eq(ptxjit_open(&context, &options), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_register_aot(context, NULL), PTXJIT_ERR_INVALID_ARGUMENT);
    ptxjit_close(context);
}
END_TEST

/* ---- the command ---- */

static char *write_file(const char *dir, const char *name, const char *text)
{
    char *path;
    ck_assert_int_gt(asprintf(&path, "%s/%s", dir, name), 0);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static char *read_whole(const char *path)
{
    size_t size = 0;
    char *text = NULL;
    ck_assert_msg(pj_read_file(&text, &size, path) == PTXJIT_OK, "%s", ptxjit_last_error());
    return text;
}

START_TEST(aot_writes_the_same_bytes_twice_and_lists_them)
{
    char *dir = test_mkdtemp(), *cache, *out, *args, *errors;
    ck_assert_int_gt(asprintf(&cache, "%s/cache", dir), 0);
    ck_assert_int_gt(asprintf(&errors, "%s/errors", dir), 0);
    char *list = write_file(dir, "list.txt", "# two archs\nreduce variant=one_pass  # note\n");
    ck_assert_int_gt(asprintf(&args, "aot '%s' -o '%s/a.c' --arch sm_90a,sm_80 --name t1", list,
                              dir), 0);
    ck_assert_int_eq(test_run_cli(&out, cache, "", args, errors), 0); /* compiled */
    free(out);
    free(args);
    /* Again, from the disk cache now, to stdout: the same bytes. */
    ck_assert_int_gt(asprintf(&args, "aot - --arch sm_90a,sm_80 --name t1 < '%s'", list), 0);
    char *second;
    ck_assert_int_eq(test_run_cli(&second, cache, "", args, errors), 0);
    char *first_path, *first;
    ck_assert_int_gt(asprintf(&first_path, "%s/a.c", dir), 0);
    first = read_whole(first_path);
    ck_assert_msg(strcmp(first, second) == 0, "two generations differ");
    ck_assert_ptr_null(strstr(first, dir)); /* no path of this machine in it */
    ck_assert_ptr_nonnull(strstr(first, "const ptxjit_aot_table t1 = {1, \"t1\", 2, kernels"));
    free(args);
    ck_assert_int_gt(asprintf(&args, "aot --list '%s'", first_path), 0);
    ck_assert_int_eq(test_run_cli(&out, cache, "", args, errors), 0);
    ck_assert_msg(strstr(out, "kernel 0 sm_90a reduce dtype=i32 tpb=512 variant=one_pass | key ") &&
                      strstr(out, "kernel 1 sm_80 reduce dtype=i32 tpb=512 variant=one_pass"),
                  "%s", out);
    free(out);
    free(args);
    /* An arch that refuses a request of the list: an error naming the arch and the fix, or,
     * with --where-supported, left out for that arch alone. */
    char *tma = write_file(dir, "tma.txt", "reduce variant=one_pass\ntranspose variant=tma\n");
    ck_assert_int_gt(asprintf(&args, "aot '%s' -o '%s/b.c' --arch sm_90a,sm_80", tma, dir), 0);
    ck_assert_int_eq(test_run_cli(&out, cache, "", args, NULL), 1);
    ck_assert_msg(strstr(out, "tma.txt:2: 'transpose variant=tma' was refused for sm_80: ") &&
                      strstr(out, "--where-supported"),
                  "%s", out);
    free(out);
    struct stat st;
    ck_assert_int_ne(stat(first_path, &st), -1);
    free(args);
    ck_assert_int_gt(asprintf(&args, "aot '%s' --arch sm_90a,sm_80 --where-supported", tma), 0);
    ck_assert_int_eq(test_run_cli(&out, cache, "", args, errors), 0);
    ck_assert_ptr_nonnull(strstr(out, "kernels[] = {"));
    ck_assert_ptr_nonnull(strstr(out, "const ptxjit_aot_table ptxjit_aot_kernels = {1, "
                                      "\"ptxjit_aot_kernels\", 3, kernels"));
    free(out);
    free(args);
    free(first);
    free(second);
    free(first_path);
    free(list);
    free(tma);
    free(errors);
    free(cache);
    test_rmtree(dir);
    free(dir);
}
END_TEST

START_TEST(aot_refuses_bad_inputs_naming_the_problem_and_the_fix)
{
    char *dir = test_mkdtemp(), *out, *args;
    char *list = write_file(dir, "list.txt", "reduce\nfrobnicate size=3\n");
    /* An unknown request: nothing written. */
    ck_assert_int_gt(asprintf(&args, "--no-disk-cache aot '%s' -o '%s/k.c' --arch sm_90a", list,
                              dir), 0);
    ck_assert_int_eq(test_run_cli(&out, NULL, "PTXJIT_NVRTC_LIBRARY=none", args, NULL), 1);
    ck_assert_msg(strstr(out, "list.txt:2: 'frobnicate size=3' was refused for sm_90a: ") &&
                      strstr(out, "fix: correct or remove the line"),
                  "%s", out);
    free(out);
    free(args);
    char *written;
    ck_assert_int_gt(asprintf(&written, "%s/k.c", dir), 0);
    struct stat st;
    ck_assert_int_eq(stat(written, &st), -1);
    /* An output that cannot be written: said before anything compiles. */
    ck_assert_int_gt(asprintf(&args, "aot '%s' -o /nonexistent/dir/k.c", list), 0);
    ck_assert_int_eq(test_run_cli(&out, NULL, "PTXJIT_NVRTC_LIBRARY=none", args, NULL), 1);
    ck_assert_msg(strstr(out, "cannot write /nonexistent/dir/k.c") && strstr(out, "fix: -o"),
                  "%s", out);
    free(out);
    free(args);
    /* A file ptxjit aot did not write; a name that is no C identifier. */
    ck_assert_int_gt(asprintf(&args, "aot --list '%s'", list), 0);
    ck_assert_int_eq(test_run_cli(&out, NULL, "", args, NULL), 1);
    ck_assert_msg(strstr(out, "holds no index of ptxjit aot"), "%s", out);
    free(out);
    free(args);
    ck_assert_int_gt(asprintf(&args, "aot '%s' --name 9lives", list), 0);
    ck_assert_int_eq(test_run_cli(&out, NULL, "", args, NULL), 2);
    ck_assert_msg(strstr(out, "--name takes a C identifier"), "%s", out);
    free(out);
    free(args);
    free(written);
    free(list);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- the example, linked with its generated table ---- */

static int run_example(char **output, const char *example)
{
    char command[8192];
    snprintf(command, sizeof command,
             "PTXJIT_NVRTC_LIBRARY=none PTXJIT_NVJITLINK_LIBRARY=none PTXJIT_LLVM_LIBRARY=none "
             "'%s' 2>&1", example);
    FILE *pipe = popen(command, "r");
    ck_assert_ptr_nonnull(pipe);
    pj_strbuf sb;
    pj_sb_init(&sb);
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, pipe)) > 0)
        pj_sb_append_n(&sb, chunk, n);
    int status = pclose(pipe);
    *output = pj_sb_take(&sb);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static uint64_t fnv1a(const void *data, size_t size)
{
    uint64_t hash = 14695981039346656037ull;
    for (size_t i = 0; i < size; i++)
        hash = (hash ^ ((const unsigned char *)data)[i]) * 1099511628211ull;
    return hash;
}

/* Each "from the table:" line against a JIT compile of its request for its arch. */
static int compare_with_jit(const char *output)
{
    int compared = 0;
    for (const char *line = strstr(output, "from the table: "); line;
         line = strstr(line + 1, "from the table: ")) {
        char family[64], params[1024], arch[32], key[33];
        size_t size;
        unsigned long long hash;
        const char *open = strchr(line, '('), *close = open ? strchr(open, ')') : NULL;
        ck_assert_ptr_nonnull(close);
        ck_assert_int_eq(sscanf(line, "from the table: %63s", family), 1);
        size_t start = strlen("from the table: ") + strlen(family) + 1;
        snprintf(params, sizeof params, "%.*s", (int)(open - 1 - (line + start)), line + start);
        snprintf(arch, sizeof arch, "%.*s", (int)(close - open - 1), open + 1);
        ck_assert_int_eq(sscanf(close, ") key %32s cubin %zu bytes fnv1a %llx", key, &size,
                                &hash), 3);
        ptxjit_context *context = test_open_offline(arch);
        ptxjit_kernel *kernel;
        ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK,
                      "%s", ptxjit_last_error());
        size_t jit_size = 0;
        const void *cubin = ptxjit_kernel_cubin(kernel, &jit_size);
        ck_assert_str_eq(ptxjit_kernel_key(kernel), key);
        ck_assert_msg(jit_size == size && fnv1a(cubin, jit_size) == hash,
                      "%s %s: the table's cubin differs from the JIT's", family, params);
        ptxjit_close(context);
        compared++;
    }
    return compared;
}

START_TEST(the_example_serves_every_kernel_of_its_table_with_no_compiler)
{
    const char *tool = getenv("PTXJIT_EXAMPLE_TOOL");
    if (!tool || !*tool) {
        printf("the_example_serves_every_kernel_of_its_table_with_no_compiler: skipped, "
               "PTXJIT_EXAMPLE_TOOL is not set (make test builds the examples and sets it)\n");
        return;
    }
    char *copy = strdup(tool), *example;
    ck_assert_int_gt(asprintf(&example, "%s/aot_example", dirname(copy)), 0);
    char *output;
    int status = run_example(&output, example);
    ck_assert_msg(status == 0, "the example failed (%d):\n%s", status, output);
    ck_assert_msg(strstr(output, "3 kernels for ") && strstr(output, "every one from the table"),
                  "%s", output);
    ck_assert_msg(strstr(output, "refused as expected (PTXJIT_ERR_NO_COMPILER): reduce ") &&
                      strstr(output, "'example_kernels' (6 kernels: sm_90a, sm_80)") &&
                      strstr(output, "fix: add 'reduce "),
                  "%s", output);
    ck_assert_int_eq(compare_with_jit(output), 3);
    ck_assert_msg(strstr(output, "results match the CPU") || strstr(output, "nothing run"), "%s",
                  output);
    free(output);
    free(example);
    free(copy);
}
END_TEST

Suite *suite_aot(void)
{
    Suite *suite = suite_create("aot");
    TCase *fast = tcase_create("tables");
    tcase_set_timeout(fast, 120);
    tcase_add_test(fast, a_registered_table_serves_its_kernel_for_each_arch_without_compiling);
    tcase_add_test(fast, a_malformed_table_is_refused_naming_the_field);
    tcase_add_test(fast, aot_refuses_bad_inputs_naming_the_problem_and_the_fix);
    suite_add_tcase(suite, fast);
    /* Memcheck checks the tables' code on the first case's one compile; these compile more. */
    TCase *compiles = test_many_compiles_case(suite, 300);
    tcase_add_test(compiles, an_entry_built_from_another_template_text_is_never_served);
    tcase_add_test(compiles, auto_takes_the_winner_of_a_registered_record);
    tcase_add_test(compiles, aot_writes_the_same_bytes_twice_and_lists_them);
    tcase_add_test(compiles, the_example_serves_every_kernel_of_its_table_with_no_compiler);
    return suite;
}

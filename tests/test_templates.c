/* test_templates.c — the template registry (src/templates.c): which files are templates,
 * CRLF and byte-order-mark texts, broken templates and unreadable directories as problems
 * that leave the other families working, duplicate families, templates from memory (added,
 * replaced, refused), reloading edited files, and adds and reloads while other threads ask
 * for kernels (`make tsan` runs this suite under ThreadSanitizer). */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request/context.h"
#include "request/templates.h"
#include "test_util.h"

/* A small template of family NAME whose kernel stores FACTOR * 1000 + mark: the mark tells
 * the versions of one family apart in the PTX. Caller frees. */
static char *template_text(const char *family, int mark)
{
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_appendf(&sb,
                  "//@ptxjit family %s\n"
                  "//@ptxjit doc stores a constant\n"
                  "//@ptxjit entry %s_kernel\n"
                  "//@ptxjit param factor int(1..100) default=3 doc=\"the factor\"\n"
                  "extern \"C\" __global__ void %s_kernel(int *x) { x[0] = FACTOR * 1000 + %d; }\n",
                  family, family, family, mark);
    return pj_sb_take(&sb);
}

static void write_file(const char *dir, const char *name, const char *text)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    fputs(text, file);
    ck_assert_int_eq(fclose(file), 0);
}

static void write_template(const char *dir, const char *name, const char *family, int mark)
{
    char *text = template_text(family, mark);
    write_file(dir, name, text);
    free(text);
}

/* What the context logged, for the tests that count warnings. */
typedef struct {
    int warnings;
    char text[8192];
} log_record;

static void record(void *user, ptxjit_log_level level, const char *message)
{
    log_record *log = user;
    log->warnings += level == PTXJIT_LOG_WARNING;
    size_t used = strlen(log->text);
    snprintf(log->text + used, sizeof log->text - used, "%s: %s\n",
             level == PTXJIT_LOG_WARNING ? "warning" : "info", message);
}

/* An offline context (no GPU, no disk cache) reading the templates of path. */
static ptxjit_context *open_path(const char *path, log_record *log)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = path;
    if (log) {
        options.log = record;
        options.log_user = log;
    }
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

static const char *origin_of(ptxjit_context *context, const char *family)
{
    for (int i = 0; i < ptxjit_family_count(context); i++)
        if (strcmp(ptxjit_family_name(context, i), family) == 0)
            return ptxjit_family_origin(context, i);
    return NULL;
}

static ptxjit_kernel *kernel_of(ptxjit_context *context, const char *family, const char *params)
{
    ptxjit_kernel *kernel = NULL;
    ck_assert_msg(ptxjit_get_kernel(&kernel, context, family, params, NULL) == PTXJIT_OK, "%s",
                  ptxjit_last_error());
    return kernel;
}

/* The PTX stores FACTOR * 1000 + mark as an immediate. */
static int ptx_has_constant(const ptxjit_kernel *kernel, int value)
{
    char text[32];
    snprintf(text, sizeof text, " %d;", value);
    return strstr(ptxjit_kernel_ptx(kernel), text) != NULL;
}

static void expect_failure(ptxjit_status got, ptxjit_status want, const char *needle)
{
    ck_assert_msg(got == want, "%s instead of %s: %s", ptxjit_status_name(got),
                  ptxjit_status_name(want), ptxjit_last_error());
    ck_assert_msg(strstr(ptxjit_last_error(), needle), "no '%s' in: %s", needle,
                  ptxjit_last_error());
}

START_TEST(helper_files_are_not_templates)
{
    char *dir = test_mkdtemp();
    write_template(dir, "scale.cu", "scale", 1);
    write_file(dir, "helper.cu", "__device__ int twice(int x) { return 2 * x; }\n");
    write_file(dir, "vec.cuh", "//@ptxjit family vec\n//@ptxjit entry k\n");
    write_file(dir, "notes.h", "//@ptxjit family notes\n");
    log_record log = {0};
    ptxjit_context *context = open_path(dir, &log);
    ck_assert_msg(ptxjit_template_problem_count(context) == 0, "%s",
                  ptxjit_template_problem(context, 0));
    ck_assert_int_eq(log.warnings, 0);
    ck_assert_msg(strstr(log.text, "helper.cu: no //@ptxjit line"), "%s", log.text);
    ck_assert_ptr_nonnull(origin_of(context, "scale"));
    ck_assert_ptr_nonnull(origin_of(context, "reduce"));
    ck_assert_ptr_null(origin_of(context, "vec"));
    ck_assert_ptr_null(origin_of(context, "notes"));
#define PJ_COUNT_ONE(name) +1
    ck_assert_int_eq(ptxjit_family_count(context), 1 PJ_FAMILY_LIST(PJ_COUNT_ONE));
#undef PJ_COUNT_ONE
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* CRLF line ends and a UTF-8 byte order mark: the schema, the specialized source and the
 * PTX see plain LF text, and a parse error's line number is the file's. */
START_TEST(crlf_and_bom_templates_compile)
{
    char *dir = test_mkdtemp();
    static const char *const families[] = {"crlf", "bom", "both"};
    for (int i = 0; i < 3; i++) {
        char *text = template_text(families[i], i), name[32];
        pj_strbuf sb;
        pj_sb_init(&sb);
        pj_sb_append(&sb, i ? "\xEF\xBB\xBF" : "");
        for (const char *s = text; *s; s++)
            pj_sb_append(&sb, *s == '\n' && i != 1 ? "\r\n" : (char[]){*s, 0});
        snprintf(name, sizeof name, "%s.cu", families[i]);
        write_file(dir, name, sb.data);
        pj_sb_free(&sb);
        free(text);
    }
    write_file(dir, "broken.cu", "//@ptxjit family broken\r\n//@ptxjit entry k\r\n"
                                 "//@ptxjit param f int(1..9)\r\n");
    ptxjit_context *context = open_path(dir, NULL);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    ck_assert_ptr_nonnull(strstr(ptxjit_template_problem(context, 0), "broken.cu:3: "));
    for (int i = 0; i < 3; i++) {
        const char *doc;
        ck_assert_int_eq(ptxjit_family_doc(&doc, context, families[i]), PTXJIT_OK);
        ck_assert_str_eq(doc, "stores a constant");
        ptxjit_param_info param;
        ck_assert_int_eq(ptxjit_family_param(&param, context, families[i], 0), PTXJIT_OK);
        ck_assert_str_eq(param.name, "factor");
        ck_assert_str_eq(param.default_text, "3");
        ck_assert_str_eq(param.doc, "the factor");
        ptxjit_kernel *kernel = kernel_of(context, families[i], "factor=7");
        ck_assert_str_eq(ptxjit_kernel_params(kernel), "factor=7");
        ck_assert_str_eq(ptxjit_kernel_entry_name(kernel, 0),
                         i == 0 ? "crlf_kernel" : i == 1 ? "bom_kernel" : "both_kernel");
        ck_assert(ptx_has_constant(kernel, 7000 + i));
        const char *source = ptxjit_kernel_source(kernel);
        ck_assert_ptr_nonnull(source);
        ck_assert_ptr_null(strchr(source, '\r'));
        ck_assert_ptr_null(strstr(source, "\xEF\xBB\xBF"));
    }
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A template that does not parse: the context opens, one warning and one problem name the
 * file and the error, every request for its family fails with that error, and the other
 * families (built-in too) work. */
START_TEST(broken_template_leaves_the_other_families_working)
{
    char *dir = test_mkdtemp();
    write_template(dir, "good.cu", "good", 1);
    write_file(dir, "bad.cu", "//@ptxjit family bad\n//@ptxjit entry k\n"
                              "//@ptxjit param f int(1..9) default=12\n");
    log_record log = {0};
    ptxjit_context *context = open_path(dir, &log);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    const char *problem = ptxjit_template_problem(context, 0);
    ck_assert_msg(strncmp(problem, dir, strlen(dir)) == 0 && strstr(problem, "/bad.cu:3: "),
                  "%s", problem);
    ck_assert_ptr_null(ptxjit_template_problem(context, 1));
    ck_assert_ptr_null(ptxjit_template_problem(context, -1));
    ck_assert_int_eq(log.warnings, 1);
    ck_assert_msg(strstr(log.text, problem) && strstr(log.text, "family 'bad' is unavailable"),
                  "%s", log.text);
    ck_assert_ptr_null(origin_of(context, "bad"));
    ck_assert(ptx_has_constant(kernel_of(context, "good", "factor=2"), 2001));
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "reduce", "tpb=64"), PTXJIT_OK);
    free(canonical);
    ptxjit_kernel *kernel;
    expect_failure(ptxjit_get_kernel(&kernel, context, "bad", "", NULL), PTXJIT_ERR_TEMPLATE,
                   "bad.cu:3: ");
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "family 'bad' is unavailable"));
    const char *text;
    expect_failure(ptxjit_family_describe(&text, context, "bad"), PTXJIT_ERR_TEMPLATE,
                   "bad.cu:3: ");
    expect_failure(ptxjit_canonical_params(&canonical, context, "bad", ""), PTXJIT_ERR_TEMPLATE,
                   "bad.cu:3: ");
    expect_failure(ptxjit_specialize(&canonical, context, "bad", ""), PTXJIT_ERR_TEMPLATE,
                   "bad.cu:3: ");
    int count;
    expect_failure(ptxjit_family_param_count(&count, context, "bad"), PTXJIT_ERR_TEMPLATE,
                   "bad.cu:3: ");
    expect_failure(ptxjit_family_entry(&text, context, "bad", 0), PTXJIT_ERR_TEMPLATE,
                   "bad.cu:3: ");
    /* Reloading the same files reports nothing new. */
    ck_assert_int_eq(ptxjit_reload_templates(context), PTXJIT_OK);
    ck_assert_int_eq(log.warnings, 1);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A directory that is not there and a file that cannot be read are problems, not failures;
 * an unknown family's message names the files whose family could not be read. */
START_TEST(missing_directory_and_unreadable_file_are_problems)
{
    char *dir = test_mkdtemp(), path[4400], link[4400];
    snprintf(link, sizeof link, "%s/gone.cu", dir);
    ck_assert_int_eq(symlink("/nonexistent/target.cu", link), 0);
    snprintf(path, sizeof path, "%s/missing:%s", dir, dir);
    ptxjit_context *context = open_path(path, NULL);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 2);
    ck_assert_ptr_nonnull(strstr(ptxjit_template_problem(context, 0), "/missing: "));
    ck_assert_ptr_nonnull(
        strstr(ptxjit_template_problem(context, 0), "fix the path in PTXJIT_TEMPLATE_PATH"));
    ck_assert_ptr_nonnull(strstr(ptxjit_template_problem(context, 1), "/gone.cu: "));
    ck_assert_ptr_nonnull(origin_of(context, "reduce"));
    ptxjit_kernel *kernel;
    expect_failure(ptxjit_get_kernel(&kernel, context, "gone", "", NULL),
                   PTXJIT_ERR_UNKNOWN_FAMILY, "could not be read: ");
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "/gone.cu: "));
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "known: "));
    ck_assert_ptr_null(strstr(ptxjit_last_error(), "ptxjit list"));
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A template whose file holds a NUL byte is a problem naming the offset (its text would end
 * there, silently); a file name with a newline and a backslash cannot become code in the
 * specialized source (it is escaped in the first comment as in #line). */
START_TEST(nul_bytes_and_odd_file_names_are_handled)
{
    char *dir = test_mkdtemp(), path[4400];
    snprintf(path, sizeof path, "%s/nul.cu", dir);
    FILE *file = fopen(path, "wb");
    ck_assert_ptr_nonnull(file);
    static const char head[] = "//@ptxjit family nul\n//@ptxjit entry k\n";
    fwrite(head, 1, sizeof head - 1, file);
    fputc('\0', file);
    fputs("//@ptxjit param p int(1..8) default=1\nextern \"C\" __global__ void k() {}\n", file);
    ck_assert_int_eq(fclose(file), 0);
    write_template(dir, "odd\n#define EVIL 1\n\\.cu", "odd", 7);
    ptxjit_context *context = open_path(dir, NULL);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    ck_assert_msg(strstr(ptxjit_template_problem(context, 0), "a NUL byte at offset 39"), "%s",
                  ptxjit_template_problem(context, 0));
    char *source = NULL;
    ck_assert_int_eq(ptxjit_specialize(&source, context, "odd", ""), PTXJIT_OK);
    for (const char *line = source; line; line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        ck_assert_msg(strncmp(line, "#define EVIL", 12) != 0, "code from the file name:\n%s",
                      source);
    ck_assert_ptr_nonnull(strstr(source, "odd\\012#define EVIL 1\\012\\\\.cu"));
    free(source);
    ck_assert_int_eq(ptx_has_constant(kernel_of(context, "odd", ""), 3007), 1);
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* One family in two files: neither is used, the problem and the refusal name both; a memory
 * template of a family a file declares is refused, naming both too. */
START_TEST(duplicate_families_are_unavailable_naming_both)
{
    char *dir = test_mkdtemp(), *other = test_mkdtemp(), path[8400];
    write_template(dir, "a.cu", "twin", 1);
    write_template(other, "b.cu", "twin", 2);
    write_template(dir, "single.cu", "single", 3);
    snprintf(path, sizeof path, "%s:%s:%s", dir, other, dir); /* dir twice: read once */
    ptxjit_context *context = open_path(path, NULL);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    const char *problem = ptxjit_template_problem(context, 0);
    ck_assert_msg(strstr(problem, "/a.cu: family 'twin' is also declared by ") &&
                      strstr(problem, "/b.cu; rename the family in one of them or remove one"),
                  "%s", problem);
    ck_assert_ptr_null(origin_of(context, "twin"));
    ptxjit_kernel *kernel;
    expect_failure(ptxjit_get_kernel(&kernel, context, "twin", "", NULL), PTXJIT_ERR_TEMPLATE,
                   "/b.cu; rename the family");
    ck_assert(ptx_has_constant(kernel_of(context, "single", ""), 3003));
    char *text = template_text("single", 4);
    expect_failure(ptxjit_add_template(context, "single.cu", text), PTXJIT_ERR_TEMPLATE,
                   "memory:single.cu: family 'single' is already declared by ");
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "/single.cu; rename the family"));
    free(text);
    ck_assert_str_eq(origin_of(context, "single") + strlen(dir), "/single.cu");
    ptxjit_close(context);
    test_rmtree(dir);
    test_rmtree(other);
    free(dir);
    free(other);
}
END_TEST

/* A template from memory compiles; adding its family again replaces it, and the next request
 * with the same parameter text gets the new kernel while the old one stays valid. */
START_TEST(memory_template_is_added_and_replaced)
{
    ptxjit_context *context = test_open_offline(NULL);
    int families = ptxjit_family_count(context);
    char *first = template_text("mem", 1), *second = template_text("mem", 2);
    ck_assert_int_eq(ptxjit_add_template(context, "mem.cu", first), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_family_count(context), families + 1);
    ck_assert_str_eq(origin_of(context, "mem"), "memory:mem.cu");
    ptxjit_kernel *old = kernel_of(context, "mem", "factor=5");
    ck_assert(ptx_has_constant(old, 5001));
    ck_assert_ptr_eq(kernel_of(context, "mem", "factor=5"), old);
    const char *description;
    ck_assert_int_eq(ptxjit_family_describe(&description, context, "mem"), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_add_template(context, "mem-v2.cu", second), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_family_count(context), families + 1);
    ck_assert_str_eq(origin_of(context, "mem"), "memory:mem-v2.cu");
    ptxjit_origin origin;
    ptxjit_kernel *fresh = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&fresh, context, "mem", "factor=5", &origin), PTXJIT_OK);
    ck_assert_int_eq(origin, PTXJIT_ORIGIN_COMPILED);
    ck_assert(ptx_has_constant(fresh, 5002));
    ck_assert_str_ne(ptxjit_kernel_key(fresh), ptxjit_kernel_key(old));
    ck_assert(ptx_has_constant(old, 5001)); /* handed out before: still valid */
    ck_assert_str_eq(ptxjit_kernel_family(old), "mem");
    ck_assert_ptr_nonnull(strstr(description, "memory:mem.cu")); /* still valid too */
    /* A memory template replaces a built-in family, as a file does. */
    char *reduce = template_text("reduce", 9);
    ck_assert_int_eq(ptxjit_add_template(context, "reduce.cu", reduce), PTXJIT_OK);
    ck_assert_str_eq(origin_of(context, "reduce"), "memory:reduce.cu");
    ck_assert_int_eq(ptxjit_family_count(context), families + 1);
    free(reduce);
    free(first);
    free(second);
    ptxjit_close(context);
}
END_TEST

/* A text that does not parse is refused with the parse error and not registered. */
START_TEST(broken_memory_template_is_refused)
{
    ptxjit_context *context = test_open_offline(NULL);
    int families = ptxjit_family_count(context);
    expect_failure(ptxjit_add_template(context, "plain.cu", "__global__ void k() {}\n"),
                   PTXJIT_ERR_TEMPLATE, "memory:plain.cu: no '//@ptxjit family NAME' line");
    expect_failure(ptxjit_add_template(context, "bad.cu",
                                       "//@ptxjit family bad\r\n//@ptxjit entry k\r\n"
                                       "//@ptxjit param f enum(a,b) default=c\r\n"),
                   PTXJIT_ERR_TEMPLATE, "memory:bad.cu:3: ");
    ck_assert_int_eq(ptxjit_family_count(context), families);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 0);
    ptxjit_kernel *kernel;
    expect_failure(ptxjit_get_kernel(&kernel, context, "bad", "", NULL),
                   PTXJIT_ERR_UNKNOWN_FAMILY, "unknown kernel family 'bad'");
    expect_failure(ptxjit_add_template(NULL, "x.cu", "x"), PTXJIT_ERR_INVALID_ARGUMENT, "name");
    expect_failure(ptxjit_add_template(context, NULL, "x"), PTXJIT_ERR_INVALID_ARGUMENT, "name");
    expect_failure(ptxjit_add_template(context, "x.cu", NULL), PTXJIT_ERR_INVALID_ARGUMENT,
                   "text");
    expect_failure(ptxjit_reload_templates(NULL), PTXJIT_ERR_INVALID_ARGUMENT, "NULL");
    ck_assert_int_eq(ptxjit_template_problem_count(NULL), 0);
    ck_assert_ptr_null(ptxjit_template_problem(NULL, 0));
    ptxjit_close(context);
}
END_TEST

/* How a directive may be spelled: a tab after //@ptxjit is a blank like a space (the param
 * takes effect, rather than the line being passed over); a line that starts with //@ptxjit
 * and is not spelled as a directive is refused naming its line, not ignored; a file of lone
 * CR line ends is read line by line, as compilers read it. */
START_TEST(directive_spelling_tabs_marks_and_lone_crs)
{
    ptxjit_context *context = test_open_offline(NULL);
    ck_assert_int_eq(ptxjit_add_template(context, "tabs.cu",
                                         "//@ptxjit\tfamily tabs\n"
                                         "\t//@ptxjit \t entry tabs_kernel\n"
                                         "//@ptxjit\tdoc\tstores a constant\n"
                                         "//@ptxjit\tparam factor\tint(1..100) default=3\n"
                                         "extern \"C\" __global__ void tabs_kernel(int *x) "
                                         "{ x[0] = FACTOR; }\n"),
                     PTXJIT_OK);
    char *canonical = NULL;
    ck_assert_int_eq(ptxjit_canonical_params(&canonical, context, "tabs", "factor=7"),
                     PTXJIT_OK);
    ck_assert_str_eq(canonical, "factor=7");
    free(canonical);
    const char *description;
    ck_assert_int_eq(ptxjit_family_describe(&description, context, "tabs"), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(description, "stores a constant"));
    expect_failure(ptxjit_add_template(context, "glued.cu",
                                       "//@ptxjit family glued\n//@ptxjit entry k\n"
                                       "//@ptxjitparam f int(1..4)\n"),
                   PTXJIT_ERR_TEMPLATE, "memory:glued.cu:3: a line that starts with //@ptxjit");
    expect_failure(ptxjit_add_template(context, "bare.cu",
                                       "//@ptxjit family bare\n//@ptxjit   \n//@ptxjit entry k\n"),
                   PTXJIT_ERR_TEMPLATE, "memory:bare.cu:2: ");
    ck_assert_int_eq(ptxjit_add_template(context, "mac.cu",
                                         "//@ptxjit family mac\r//@ptxjit entry mac_kernel\r"
                                         "//@ptxjit param factor int(1..100) default=3\r"
                                         "extern \"C\" __global__ void mac_kernel(int *x) "
                                         "{ x[0] = FACTOR; }\r"),
                     PTXJIT_OK);
    ptxjit_kernel *kernel = NULL;
    ck_assert_int_eq(ptxjit_get_kernel(&kernel, context, "mac", "factor=9", NULL), PTXJIT_OK);
    ck_assert_ptr_nonnull(strstr(ptxjit_kernel_ptx(kernel), "9;"));
    ptxjit_close(context);
}
END_TEST

/* Reload: an edited file takes effect (same parameter text, new kernel), a removed one goes,
 * memory templates stay; a memory template and a file of one family are then duplicates. */
START_TEST(reload_reads_edited_files)
{
    char *dir = test_mkdtemp(), path[4400];
    write_template(dir, "edit.cu", "edit", 1);
    write_template(dir, "gone.cu", "gone", 1);
    ptxjit_context *context = open_path(dir, NULL);
    char *memory = template_text("mem", 1);
    ck_assert_int_eq(ptxjit_add_template(context, "mem.cu", memory), PTXJIT_OK);
    free(memory);
    ptxjit_kernel *old = kernel_of(context, "edit", "factor=4");
    ck_assert(ptx_has_constant(old, 4001));
    write_template(dir, "edit.cu", "edit", 2);
    snprintf(path, sizeof path, "%s/gone.cu", dir);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_ptr_eq(kernel_of(context, "edit", "factor=4"), old); /* not reloaded yet */
    ck_assert_int_eq(ptxjit_reload_templates(context), PTXJIT_OK);
    ptxjit_kernel *fresh = kernel_of(context, "edit", "factor=4");
    ck_assert(ptx_has_constant(fresh, 4002));
    ck_assert(ptx_has_constant(old, 4001));
    ck_assert_ptr_null(origin_of(context, "gone"));
    ck_assert_str_eq(origin_of(context, "mem"), "memory:mem.cu");
    write_template(dir, "mem.cu", "mem", 3);
    ck_assert_int_eq(ptxjit_reload_templates(context), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    ck_assert_ptr_nonnull(strstr(ptxjit_template_problem(context, 0),
                                 "/mem.cu: family 'mem' is also declared by memory:mem.cu"));
    ptxjit_kernel *kernel;
    expect_failure(ptxjit_get_kernel(&kernel, context, "mem", "", NULL), PTXJIT_ERR_TEMPLATE,
                   "memory:mem.cu; rename the family");
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A leading BOM goes; CRLF and a lone CR each become LF (the text NVRTC gets has the lines
 * the parser counted); a BOM elsewhere stays. */
START_TEST(normalize_drops_bom_and_makes_line_ends_lf)
{
    char *text = pj_template_normalize("\xEF\xBB\xBF" "a\r\nb\rc\n\r\n\r\r\n");
    ck_assert_str_eq(text, "a\nb\nc\n\n\n\n");
    free(text);
    text = pj_template_normalize("x\xEF\xBB\xBF");
    ck_assert_str_eq(text, "x\xEF\xBB\xBF");
    free(text);
}
END_TEST

/* ---- Adds and reloads while other threads request kernels ---- */
enum { READERS = 4, VERSIONS = 6 };

typedef struct {
    ptxjit_context *context;
    const char *dir;
    volatile int done; /* set by the writer when its last version is published */
    pthread_mutex_t lock;
    int failures;
    char failure[512];
} race;

static void race_fail(race *r, const char *what, const char *detail)
{
    pthread_mutex_lock(&r->lock);
    if (!r->failures++)
        snprintf(r->failure, sizeof r->failure, "%s: %s", what, detail);
    pthread_mutex_unlock(&r->lock);
}

static int race_done(race *r)
{
    pthread_mutex_lock(&r->lock);
    int done = r->done;
    pthread_mutex_unlock(&r->lock);
    return done;
}

/* Every kernel is one of the versions; every listing and description is whole. */
static void *reader(void *user)
{
    race *r = user;
    while (!race_done(r)) {
        static const char *const families[] = {"mem", "disk"};
        for (int f = 0; f < 2; f++) {
            ptxjit_kernel *kernel = NULL;
            if (ptxjit_get_kernel(&kernel, r->context, families[f], "factor=3", NULL)) {
                race_fail(r, families[f], ptxjit_last_error());
                continue;
            }
            int version = 0;
            for (int v = 1; v <= VERSIONS; v++)
                version = ptx_has_constant(kernel, 3000 + (f ? 100 : 0) + v) ? v : version;
            if (!version)
                race_fail(r, "a kernel of no version", ptxjit_kernel_ptx(kernel));
            const char *description;
            if (ptxjit_family_describe(&description, r->context, families[f]) ||
                !strstr(description, "factor"))
                race_fail(r, "describe", ptxjit_last_error());
        }
        for (int i = 0; i < ptxjit_family_count(r->context); i++) {
            const char *name = ptxjit_family_name(r->context, i);
            const char *origin = ptxjit_family_origin(r->context, i);
            if (name && (!origin || !*name))
                race_fail(r, "family without origin", name);
        }
        ptxjit_template_problem(r->context, ptxjit_template_problem_count(r->context) - 1);
    }
    return NULL;
}

/* Each version replaces the memory template and rewrites the file, then reloads. */
static void *writer(void *user)
{
    race *r = user;
    for (int v = 2; v <= VERSIONS; v++) {
        char *text = template_text("mem", v);
        if (ptxjit_add_template(r->context, "mem.cu", text))
            race_fail(r, "add", ptxjit_last_error());
        free(text);
        write_template(r->dir, "disk.cu", "disk", 100 + v);
        if (ptxjit_reload_templates(r->context))
            race_fail(r, "reload", ptxjit_last_error());
        usleep(20000);
    }
    pthread_mutex_lock(&r->lock);
    r->done = 1;
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

START_TEST(add_and_reload_race_requests)
{
    char *dir = test_mkdtemp();
    write_template(dir, "disk.cu", "disk", 101);
    race r = {.context = open_path(dir, NULL), .dir = dir};
    pthread_mutex_init(&r.lock, NULL);
    char *text = template_text("mem", 1);
    ck_assert_int_eq(ptxjit_add_template(r.context, "mem.cu", text), PTXJIT_OK);
    free(text);
    pthread_t threads[READERS + 1];
    for (int i = 0; i < READERS; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, reader, &r), 0);
    ck_assert_int_eq(pthread_create(&threads[READERS], NULL, writer, &r), 0);
    for (int i = 0; i <= READERS; i++)
        pthread_join(threads[i], NULL);
    ck_assert_msg(r.failures == 0, "%d failures; first: %s", r.failures, r.failure);
    /* After the last add and reload, the same request text gets the last version. */
    ck_assert(ptx_has_constant(kernel_of(r.context, "mem", "factor=3"), 3000 + VERSIONS));
    ck_assert(ptx_has_constant(kernel_of(r.context, "disk", "factor=3"), 3100 + VERSIONS));
    ptxjit_close(r.context);
    pthread_mutex_destroy(&r.lock);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* ---- hostile template directories (issue #29, round three) ---- */

/* A child's open and reload of the templates at path; 0 when both return (what they found is
 * checked by the parent, once it is known that they return at all). */
static int open_and_reload(void *path)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = path;
    options.log = record; /* quiet */
    log_record log = {0, ""};
    options.log_user = &log;
    ptxjit_context *context = NULL;
    if (ptxjit_open(&context, &options) != PTXJIT_OK)
        return 2;
    int status = ptxjit_reload_templates(context) == PTXJIT_OK ? 0 : 3;
    ptxjit_close(context);
    return status;
}

/* The problem of the file name ends with, or NULL. */
static const char *problem_of(ptxjit_context *context, const char *name)
{
    for (int i = 0; i < ptxjit_template_problem_count(context); i++) {
        const char *problem = ptxjit_template_problem(context, i);
        const char *at = strstr(problem, name);
        if (at && at[strlen(name)] == ':')
            return problem;
    }
    return NULL;
}

static void expect_problem(ptxjit_context *context, const char *name, const char *needle)
{
    const char *problem = problem_of(context, name);
    ck_assert_msg(problem && strstr(problem, needle), "no problem of %s with '%s'; problems: %s",
                  name, needle, problem ? problem : "(none)");
}

/* A FIFO named x.cu (whose blocking open waits for a writer for ever), a link to /dev/zero
 * (which never ends) and a directory named d.cu are problems that name what they are; the
 * open and a reload return (bounded: a child with an alarm and a memory cap), and the other
 * families work. */
START_TEST(fifo_device_and_directory_templates_are_problems)
{
    char *dir = test_mkdtemp(), path[4400];
    snprintf(path, sizeof path, "%s/x.cu", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    snprintf(path, sizeof path, "%s/zero.cu", dir);
    ck_assert_int_eq(symlink("/dev/zero", path), 0);
    snprintf(path, sizeof path, "%s/d.cu", dir);
    ck_assert_int_eq(mkdir(path, 0700), 0);
    write_template(dir, "fine.cu", "fine", 4);
    test_bounded_child("open and reload of a hostile template directory", open_and_reload, dir,
                       30);
    log_record log = {0, ""};
    ptxjit_context *context = open_path(dir, &log);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 3);
    expect_problem(context, "/x.cu", "a FIFO, not a regular file");
    expect_problem(context, "/zero.cu", "a character device, not a regular file");
    expect_problem(context, "/d.cu", "a directory, not a regular file");
    expect_problem(context, "/x.cu", "make it a readable regular file or move it out");
    ck_assert_int_eq(log.warnings, 3);
    ck_assert_int_eq(ptxjit_reload_templates(context), PTXJIT_OK);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 3);
    ck_assert_int_eq(log.warnings, 3); /* the same problems: not logged again */
    ck_assert_str_eq(origin_of(context, "fine") + strlen(dir), "/fine.cu");
    ck_assert_ptr_nonnull(origin_of(context, "reduce"));
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* A sparse 3 GB file (no disk used) that would have been read whole to report its first NUL
 * byte: refused from its size before any read, naming the size, the cap and the fix. */
START_TEST(oversized_template_is_refused_before_it_is_read)
{
    char *dir = test_mkdtemp(), path[4400];
    snprintf(path, sizeof path, "%s/huge.cu", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(ftruncate(fd, (off_t)3 << 30), 0);
    ck_assert_int_eq(close(fd), 0);
    test_bounded_child("open of a directory with a 3 GB template", open_and_reload, dir, 30);
    ptxjit_context *context = open_path(dir, NULL);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    expect_problem(context, "/huge.cu", "3221225472 bytes, more than the 16777216 bytes allowed");
    expect_problem(context, "/huge.cu", "raise PTXJIT_TEMPLATE_MAX_BYTES (the "
                                        "template_max_bytes option)");
    ptxjit_close(context);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* An ordinary context with the option's cap (0: the variable's, else the default). */
static ptxjit_context *open_capped(const char *dir, uint64_t max_bytes, log_record *log)
{
    ptxjit_options options;
    ptxjit_options_init(&options);
    options.use_gpu = 0;
    options.disk_cache = 0;
    options.template_path = dir;
    options.template_max_bytes = max_bytes;
    options.log = record;
    options.log_user = log;
    ptxjit_context *context = NULL;
    ck_assert_msg(ptxjit_open(&context, &options) == PTXJIT_OK, "%s", ptxjit_last_error());
    return context;
}

/* The cap is the option's, else $PTXJIT_TEMPLATE_MAX_BYTES's, else 16 MiB; a template over
 * it is a problem of its own (the other families stay), a malformed variable a warning. */
START_TEST(template_size_cap_is_settable)
{
    char *dir = test_mkdtemp();
    char *text = template_text("sized", 5);
    pj_strbuf sb;
    pj_sb_init(&sb);
    pj_sb_append(&sb, text);
    while (sb.length < 5000)
        pj_sb_append(&sb, "// padding to pass 4096 bytes\n");
    size_t size = sb.length;
    char *padded = pj_sb_take(&sb);
    write_file(dir, "sized.cu", padded);
    write_template(dir, "small.cu", "small", 6);
    const char *inherited = getenv("PTXJIT_TEMPLATE_MAX_BYTES");
    char *saved = inherited ? pj_strdup(inherited) : NULL;
    unsetenv("PTXJIT_TEMPLATE_MAX_BYTES");
    log_record log = {0, ""};
    ptxjit_context *context = open_capped(dir, 4096, &log);
    char needle[128];
    snprintf(needle, sizeof needle, "%zu bytes, more than the 4096 bytes allowed", size);
    expect_problem(context, "/sized.cu", needle);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 1);
    ck_assert_ptr_null(origin_of(context, "sized"));
    ck_assert_ptr_nonnull(origin_of(context, "small"));
    ptxjit_close(context);
    setenv("PTXJIT_TEMPLATE_MAX_BYTES", "4096", 1);
    context = open_capped(dir, 0, &log);
    expect_problem(context, "/sized.cu", needle);
    ptxjit_close(context);
    context = open_capped(dir, 8192, &log); /* the option before the variable */
    ck_assert_int_eq(ptxjit_template_problem_count(context), 0);
    ck_assert_ptr_nonnull(origin_of(context, "sized"));
    ptxjit_close(context);
    setenv("PTXJIT_TEMPLATE_MAX_BYTES", "4k", 1);
    log = (log_record){0, ""};
    context = open_capped(dir, 0, &log);
    ck_assert_int_eq(ptxjit_template_problem_count(context), 0); /* the default: 16 MiB */
    ck_assert_int_eq(log.warnings, 1);
    ck_assert_ptr_nonnull(strstr(log.text, "PTXJIT_TEMPLATE_MAX_BYTES='4k' is not a number"));
    ptxjit_close(context);
    if (saved)
        setenv("PTXJIT_TEMPLATE_MAX_BYTES", saved, 1);
    else
        unsetenv("PTXJIT_TEMPLATE_MAX_BYTES");
    free(saved);
    free(padded);
    free(text);
    test_rmtree(dir);
    free(dir);
}
END_TEST

/* The reader under the registry: a file that is exactly the cap is read, one byte more is
 * refused with the size seen in *size; not a regular file, nothing is read. */
START_TEST(read_file_at_most_bounds_what_it_reads)
{
    char *dir = test_mkdtemp(), path[4400];
    write_file(dir, "ten", "0123456789");
    snprintf(path, sizeof path, "%s/ten", dir);
    char *data = (char *)1;
    size_t size = 0;
    ck_assert_int_eq(pj_read_file_at_most(&data, &size, path, 10), PTXJIT_OK);
    ck_assert_uint_eq(size, 10);
    ck_assert_str_eq(data, "0123456789");
    free(data);
    size = 0;
    ck_assert_int_eq(pj_read_file_at_most(&data, &size, path, 9), PTXJIT_ERR_IO);
    ck_assert_ptr_null(data);
    ck_assert_uint_eq(size, 10);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "10 bytes, more than the 9 bytes allowed"));
    size = 0;
    ck_assert_int_eq(pj_read_file_at_most(&data, &size, "/dev/zero", 1 << 20), PTXJIT_ERR_IO);
    ck_assert_uint_eq(size, 0);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "/dev/zero: a character device"));
    ck_assert_int_eq(pj_read_file(&data, &size, dir), PTXJIT_ERR_IO);
    ck_assert_ptr_nonnull(strstr(ptxjit_last_error(), "a directory, not a regular file"));
    test_rmtree(dir);
    free(dir);
}
END_TEST

Suite *suite_templates(void)
{
    Suite *suite = suite_create("templates");
    TCase *tc = tcase_create("registry");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, helper_files_are_not_templates);
    tcase_add_test(tc, crlf_and_bom_templates_compile);
    tcase_add_test(tc, broken_template_leaves_the_other_families_working);
    tcase_add_test(tc, missing_directory_and_unreadable_file_are_problems);
    tcase_add_test(tc, duplicate_families_are_unavailable_naming_both);
    tcase_add_test(tc, nul_bytes_and_odd_file_names_are_handled);
    tcase_add_test(tc, memory_template_is_added_and_replaced);
    tcase_add_test(tc, directive_spelling_tabs_marks_and_lone_crs);
    tcase_add_test(tc, broken_memory_template_is_refused);
    tcase_add_test(tc, reload_reads_edited_files);
    tcase_add_test(tc, normalize_drops_bom_and_makes_line_ends_lf);
    tcase_add_test(tc, add_and_reload_race_requests);
    tcase_add_test(tc, fifo_device_and_directory_templates_are_problems);
    tcase_add_test(tc, oversized_template_is_refused_before_it_is_read);
    tcase_add_test(tc, template_size_cap_is_settable);
    tcase_add_test(tc, read_file_at_most_bounds_what_it_reads);
    suite_add_tcase(suite, tc);
    return suite;
}
